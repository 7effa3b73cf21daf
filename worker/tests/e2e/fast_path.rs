//! The fast path's hand-over: with a model configured, a sentence the local provider reads runs
//! locally, and when its search finds nothing or several items the run goes on with the model
//! instead of ending in a clarification or an error.

use quickact_testkit::{Reply, TestApp, TestAppOptions, tool_steps};
use serde_json::{Value, json};

const NOW: &str = "2026-02-07T09:00:00+08:00";

async fn fast_path_app() -> TestApp {
    TestApp::start_with(TestAppOptions::default().env("QUICKACT_FAST_PATH", "true")).await
}

/// The hand-over step of a task's journal: the local turn's `finish`, answered and not run.
fn hand_over(task: &Value) -> &Value {
    let finishes = tool_steps(task, "finish");
    finishes.into_iter().find(|step| step["result"].get("handed_over_to").is_some()).unwrap_or_else(|| panic!("no hand-over in {task:#}"))
}

fn model_turns(task: &Value) -> Vec<&str> {
    task["steps"].as_array().unwrap().iter().filter(|s| s["kind"] == "model_turn").map(|s| s["name"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_local_search_that_finds_nothing_hands_the_run_to_the_model() {
    let app = fast_path_app().await;
    let (_, key) = app.create_user("alice").await;
    // Plain text search cannot connect "周报" to this title; a model can.
    let report = app.create_item(&key, json!({"kind": "todo", "title": "weekly report", "date": "2026-02-07"})).await;
    let sentence = "完成周报";
    app.fake.script(
        sentence,
        vec![Reply::tool("complete_todo", json!({"id": report["id"]})), Reply::finish("action_completed", "已完成 weekly report")],
    );

    let task = app.act(&key, sentence, NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    // The local reading searched, then would have ended; the model took over from there.
    assert_eq!(model_turns(&task), ["local", "local", "fake-model", "fake-model"], "{task:#}");
    assert_eq!(task["model_used"], "fake-model");
    let step = hand_over(&task);
    assert_eq!((step["ok"].as_bool(), step["result"]["handed_over_to"].as_str()), (Some(false), Some("fake-model")));
    assert_eq!(step["result"]["reason"], "the search found nothing");
    let listed = task["result"]["tool_calls"].as_array().unwrap().iter().any(|call| {
        call["name"] == "finish" && call["error"].as_str().is_some_and(|e| e.contains("handed over to you (fake-model)"))
    });
    assert!(listed, "the verdict lists the hand-over");

    // The model read the run so far: the local search and the hand-over.
    let request = &app.fake.requests_for(sentence)[0];
    let tool_messages: Vec<&str> =
        request["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(tool_messages.len(), 2, "{request:#}");
    assert!(tool_messages[1].contains("handed over to you (fake-model) because the search found nothing"), "{tool_messages:?}");
    let done = app.item_now(&key, &report).await;
    assert_eq!(done["status"], "completed");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn several_candidates_hand_over_and_one_match_stays_local() {
    let app = fast_path_app().await;
    let (_, key) = app.create_user("alice").await;
    let first = app.create_item(&key, json!({"kind": "todo", "title": "报告提交", "date": "2026-02-07", "description": "给老板"})).await;
    app.create_item(&key, json!({"kind": "todo", "title": "报告提交", "date": "2026-02-07", "description": "给客户"})).await;
    let sentence = "完成报告提交";
    app.fake.script(sentence, vec![Reply::tool("complete_todo", json!({"id": first["id"]})), Reply::finish("action_completed", "已完成")]);

    let task = app.act(&key, sentence, NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(hand_over(&task)["result"]["reason"], "the search found 2 candidates");
    assert_eq!(app.fake.requests_for(sentence).len(), 2);

    // One match: the local reading acts on it, and the model is not asked.
    app.create_item(&key, json!({"kind": "todo", "title": "交房租", "date": "2026-02-07"})).await;
    let task = app.act(&key, "完成交房租", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(model_turns(&task).iter().filter(|m| **m != "local").count(), 0, "{task:#}");
    assert!(app.fake.requests_for("完成交房租").is_empty());
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_a_model_the_local_reading_answers_itself() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().env("OPENAI_API_KEY", ""), "alice").await;
    let task = app.act(&key, "完成周报", NOW).await;
    assert_eq!(task["status"], "failed", "{task:#}");
    assert!(tool_steps(&task, "finish").iter().all(|s| s["result"].get("handed_over_to").is_none()));
    assert_eq!(model_turns(&task).iter().filter(|m| **m != "local").count(), 0);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sentence_read_in_part_goes_to_the_model_with_what_was_read_as_a_hint() {
    let app = fast_path_app().await;
    let (_, key) = app.create_user("alice").await;
    let sentence = "asdfgh, move the standup to 4";
    app.fake.script(sentence, vec![Reply::look_up_and_finish("ok")]);
    let task = app.act(&key, sentence, NOW).await;
    assert_eq!(task["model_used"], "fake-model", "{task:#}");
    let request = &app.fake.requests_for(sentence)[0];
    let user = request["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap().to_owned();
    assert!(user.contains("A rule-based reader read part of it") && user.contains("\"act\":\"move\""), "{user}");
    assert!(user.contains("could not read: [\"asdfgh\"]"), "{user}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_local_run_is_stored_as_one_row_per_turn_with_its_calls() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().env("OPENAI_API_KEY", ""), "alice").await;
    let task = app.act(&key, "明天下午3点到4点开会", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let steps: Vec<(i64, &str)> = task["steps"].as_array().unwrap().iter().map(|s| (s["seq"].as_i64().unwrap(), s["kind"].as_str().unwrap())).collect();
    assert_eq!(steps, [(0, "model_turn"), (1, "tool_call"), (2, "model_turn"), (3, "tool_call")], "{task:#}");
    // Written with the verdict, in one statement: each turn's row carries its call.
    let rows: Vec<(i32, String, Option<i32>)> =
        sqlx::query_as("SELECT seq, kind, jsonb_array_length(calls) FROM quick_action_steps WHERE task_id = $1::uuid ORDER BY seq")
            .bind(task["task_id"].as_str().unwrap())
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert_eq!(rows, [(0, "model_turn".to_owned(), Some(1)), (2, "model_turn".to_owned(), Some(1))]);
    let create = &task["steps"][1];
    assert_eq!((&create["name"], &create["result"]["item"]["title"]), (&json!("create_item"), &json!("开会")), "{create:#}");
    assert_eq!(task["result"]["tool_calls"].as_array().unwrap().len(), 2, "{task:#}");
    app.shutdown().await;
}
