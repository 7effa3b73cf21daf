//! Several actions in one sentence: the agent runs each, and the verdict states each one's outcome.

use quickact_testkit::{Reply, TestApp};
use serde_json::{Value, json};

const NOW: &str = "2026-02-07T09:00:00+08:00";

fn actions(task: &Value) -> &Vec<Value> {
    task["result"]["actions"].as_array().unwrap_or_else(|| panic!("no actions in {task:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_action_of_a_sentence_is_done_and_stated() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let yoga = app.create_item(&key, json!({"kind": "event", "title": "yoga", "date": "2026-02-08", "start_time": "18:00"})).await;
    let dentist = app.create_item(&key, json!({"kind": "event", "title": "dentist", "date": "2026-02-09", "start_time": "10:00"})).await;
    let sentence = "cancel yoga and move the dentist to friday";
    app.fake.script(
        sentence,
        vec![
            Reply::tool("delete_item", json!({"id": yoga["id"]})),
            Reply::tool("update_item", json!({"id": dentist["id"], "when": "friday"})),
            Reply::tool(
                "finish",
                json!({"result_type": "action_completed", "message": "Done: yoga cancelled, dentist on Friday.", "actions": [
                    {"action": "cancel yoga", "result_type": "action_completed", "message": "Yoga is cancelled.", "item_ids": [yoga["id"]]},
                    {"action": "move the dentist to friday", "result_type": "action_completed", "message": "Dentist moved to Friday.", "item_ids": [dentist["id"]]},
                ]}),
            ),
        ],
    );
    let task = app.act(&key, sentence, NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let actions = actions(&task);
    assert_eq!(actions.len(), 2);
    assert_eq!((actions[0]["action"].as_str(), actions[0]["type"].as_str()), (Some("cancel yoga"), Some("action_completed")));
    assert_eq!(actions[0]["items"][0]["title"], "yoga");
    // Each action's items are the backend's rendering, as they are now.
    assert_eq!(actions[1]["items"][0]["date"], "2026-02-13");
    assert_eq!(task["result"]["items"].as_array().unwrap().len(), 2);
    let moved = app.item_now(&key, &dentist).await;
    assert_eq!(moved["date"], "2026-02-13");
    app.shutdown().await;
}

/// `finish` for "create a meeting, push the weekly meeting back": the first done (its item, or
/// `created` if given), the second unclear between the last search's candidates.
fn finish_both(request: &Value, created: Option<&str>) -> Reply {
    let messages = request["messages"].as_array().unwrap();
    let tool_results: Vec<Value> =
        messages.iter().filter(|m| m["role"] == "tool").filter_map(|m| serde_json::from_str(m["content"].as_str()?).ok()).collect();
    let created = created.map(str::to_owned).unwrap_or_else(|| tool_results[0]["id"].as_str().unwrap().to_owned());
    let candidates: Vec<Value> = tool_results[1]["items"].as_array().unwrap().iter().map(|i| i["id"].clone()).collect();
    Reply::tool("finish", json!({"result_type": "need_clarification", "message": "会议已建；哪个周会？", "actions": [
        {"action": "明天下午3点开会", "result_type": "action_completed", "message": "已创建", "item_ids": [created]},
        {"action": "周会推迟半小时", "result_type": "need_clarification", "message": "有两个周会", "options": candidates},
    ]}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_unclear_action_leaves_the_others_done_and_each_outcome_stated() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.create_item(&key, json!({"kind": "event", "title": "周会", "date": "2026-02-09", "start_time": "10:00"})).await;
    app.create_item(&key, json!({"kind": "event", "title": "周会", "date": "2026-02-10", "start_time": "10:00"})).await;
    let sentence = "明天下午3点开会，周会推迟半小时";
    app.fake.script(
        sentence,
        vec![
            Reply::tool("create_item", json!({"kind": "event", "title": "开会", "when": "明天下午3点"})),
            Reply::tool("search_items", json!({"query": "周会"})),
            // First an id the run never saw: refused, and the model tries again.
            Reply::dynamic(|request| finish_both(request, Some("0199aaaa-0000-7000-8000-000000000000"))),
            Reply::dynamic(|request| finish_both(request, None)),
        ],
    );
    let task = app.act(&key, sentence, NOW).await;
    assert_eq!(task["status"], "failed", "{task:#}");
    assert_eq!(task["result"]["type"], "need_clarification");
    let actions = actions(&task);
    assert_eq!(actions[0]["type"], "action_completed");
    assert_eq!(actions[0]["items"][0]["title"], "开会");
    assert_eq!(actions[1]["type"], "need_clarification");
    assert_eq!(actions[1]["options"].as_array().unwrap().len(), 2);
    assert!(actions[1]["suggestion"].as_str().is_some(), "{task:#}");
    let refused = &quickact_testkit::tool_steps(&task, "finish")[0];
    assert!(refused["error"].as_str().unwrap().contains("is not an item this run changed or found"), "{refused:#}");
    // The meeting was created even though the other action needs the user.
    assert!(app.items(&key).await.iter().any(|i| i["title"] == "开会"));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_local_provider_runs_each_clause_it_reads() {
    let (app, key) = TestApp::start_with_options_and_user(quickact_testkit::TestAppOptions::default().env("OPENAI_API_KEY", ""), "alice").await;
    let gym = app.create_item(&key, json!({"kind": "event", "title": "健身", "date": "2026-02-08", "start_time": "19:00"})).await;
    let weekly = app.create_item(&key, json!({"kind": "event", "title": "周会", "date": "2026-02-09", "start_time": "10:00", "end_time": "11:00"})).await;

    let task = app.act(&key, "删除明天的健身，然后把周会推迟半小时", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let done = actions(&task);
    assert_eq!(done.len(), 2);
    assert!(done.iter().all(|a| a["type"] == "action_completed"), "{task:#}");
    assert_eq!((done[0]["action"].as_str(), done[0]["items"][0]["id"].as_str()), (Some("删除明天的健身"), gym["id"].as_str()));
    assert_eq!(done[1]["items"][0]["start_time"], "10:30");
    let items = app.items(&key).await;
    assert!(items.iter().all(|i| i["id"] != gym["id"]), "the gym is deleted");
    assert!(items.iter().any(|i| i["id"] == weekly["id"] && i["start_time"] == "10:30"));

    // The second clause takes the first one's day and part of day.
    let task = app.act(&key, "明天下午3点开会，6点提醒我去接孩子", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let created = actions(&task);
    assert_eq!((created[0]["items"][0]["title"].as_str(), created[0]["items"][0]["start_time"].as_str()), (Some("开会"), Some("15:00")));
    let reminder = &created[1]["items"][0];
    assert_eq!((reminder["kind"].as_str(), reminder["title"].as_str()), (Some("reminder"), Some("去接孩子")));
    assert_eq!((reminder["date"].as_str(), reminder["start_time"].as_str()), (Some("2026-02-08"), Some("18:00")));

    // One clause fails, the other is done: both are stated.
    let task = app.act(&key, "cancel yoga and move the dentist to friday", NOW).await;
    assert_eq!(task["status"], "failed", "{task:#}");
    let mixed = actions(&task);
    assert_eq!((mixed[0]["type"].as_str(), mixed[1]["type"].as_str()), (Some("error"), Some("error")), "{task:#}");
    assert!(mixed[0]["suggestion"].as_str().is_some());
    app.shutdown().await;
}
