//! The planner through the agent: a scripted model creates, moves, completes, deletes and lists
//! items; the rules (clarification only between candidates, passed times, conflicts, locked counts,
//! tool scope) hold in code whatever the model does.

use quickact_testkit::{Reply, TestApp, assert_step_refused, tool_step, tool_steps};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Saturday 2026-02-07, 09:00 in Shanghai: every sentence is written at this moment.
const NOW: &str = "2026-02-07T09:00:00+08:00";





/// A reply that calls `tool` on the first item the last search returned.
fn act_on_first_found(tool: &'static str, extra: Value) -> Reply {
    Reply::on_tool_result(move |found| {
        let id = found["items"][0]["id"].as_str().unwrap_or("no-item-found").to_owned();
        let mut arguments = extra.clone();
        arguments["id"] = json!(id);
        Reply::tool(tool, arguments)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scripted_model_creates_an_event_from_a_range() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.fake.script(
        "明天下午3点到4点开会",
        vec![
            Reply::tool("create_item", json!({"kind": "event", "title": "开会", "when": "明天下午3点到4点"})),
            Reply::finish("action_completed", "已创建明天下午3点到4点的会议"),
        ],
    );
    let task = app.act(&key, "明天下午3点到4点开会", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let stored = app.items(&key).await;
    assert_eq!(stored.len(), 1);
    let item = &stored[0];
    assert_eq!((item["kind"].as_str(), item["title"].as_str(), item["date"].as_str()), (Some("event"), Some("开会"), Some("2026-02-08")));
    assert_eq!((item["start_time"].as_str(), item["end_time"].as_str()), (Some("15:00"), Some("16:00")));
    // The verdict's items are the backend's rendering of what changed.
    assert_eq!(task["result"]["items"][0]["id"], item["id"]);
    assert_eq!(task["result"]["items"][0]["start_time"], "15:00");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_start_without_an_end_gets_the_default_hour_and_says_so() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.fake.script(
        "明天下午3点开会",
        vec![
            Reply::tool("create_item", json!({"title": "开会", "when": "明天下午3点"})),
            Reply::on_tool_result(|result| {
                assert!(result["notes"][0].as_str().unwrap().contains("default duration"), "{result}");
                Reply::finish("action_completed", "ok")
            }),
        ],
    );
    let task = app.act(&key, "明天下午3点开会", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let item = &app.items(&key).await[0];
    assert_eq!((item["start_time"].as_str(), item["end_time"].as_str()), (Some("15:00"), Some("16:00")));
    assert_eq!(item["kind"], "event", "a timed item without a kind is an event");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scripted_model_moves_completes_and_deletes_items() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let meeting = app.create_item(&key, json!({"kind": "event", "title": "项目会议", "date": "2026-02-08", "start_time": "14:00", "end_time": "15:30"})).await;
    let report = app.create_item(&key, json!({"kind": "todo", "title": "报告提交", "date": "2026-02-09"})).await;
    let gym = app.create_item(&key, json!({"kind": "event", "title": "健身", "date": "2026-02-08", "segment": "evening"})).await;

    app.fake.script(
        "把2月8日的会议改到晚上8点",
        vec![
            Reply::tool("search_items", json!({"query": "会议", "date": "2月8日"})),
            act_on_first_found("update_item", json!({"when": "晚上8点"})),
            Reply::finish("action_completed", "已改到晚上8点"),
        ],
    );
    let task = app.act(&key, "把2月8日的会议改到晚上8点", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let moved = app.item_now(&key, &meeting).await;
    // The day is kept, the 90-minute length too.
    assert_eq!((moved["date"].as_str(), moved["start_time"].as_str(), moved["end_time"].as_str()), (Some("2026-02-08"), Some("20:00"), Some("21:30")));

    app.fake.script(
        "推迟半小时",
        vec![
            Reply::tool("search_items", json!({"query": "会议"})),
            act_on_first_found("update_item", json!({"shift": "半小时"})),
            Reply::finish("action_completed", "已推迟半小时"),
        ],
    );
    let task = app.act(&key, "项目会议推迟半小时", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let moved = app.item_now(&key, &meeting).await;
    assert_eq!((moved["start_time"].as_str(), moved["end_time"].as_str()), (Some("20:30"), Some("22:00")));

    app.fake.script(
        "完成报告提交",
        vec![Reply::tool("search_items", json!({"query": "报告提交"})), act_on_first_found("complete_todo", json!({})), Reply::finish("action_completed", "已完成")],
    );
    let task = app.act(&key, "完成报告提交", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let done = app.item_now(&key, &report).await;
    assert_eq!(done["status"], "completed");
    assert!(done["completed_at"].is_string());
    assert_eq!(task["result"]["items"][0]["status"], "completed");

    app.fake.script(
        "删除明天的健身",
        vec![
            Reply::tool("search_items", json!({"query": "健身", "date": "明天"})),
            act_on_first_found("delete_item", json!({})),
            Reply::finish("action_completed", "已删除"),
        ],
    );
    let task = app.act(&key, "删除明天的健身", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let gone = app.call(&key, Method::GET, &format!("/api/items/{}", gym["id"].as_str().unwrap()), None).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    let titles: Vec<String> = app.items(&key).await.iter().map(|i| i["title"].as_str().unwrap().to_owned()).collect();
    assert_eq!(titles, vec!["项目会议", "报告提交"], "the deleted item is never listed");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn listing_shows_backend_rendered_items_and_keeps_the_stated_count() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.create_item(&key, json!({"kind": "event", "title": "早会", "date": "2026-02-08", "start_time": "09:00", "end_time": "09:30"})).await;
    app.create_item(&key, json!({"kind": "todo", "title": "买菜", "date": "2026-02-08"})).await;
    app.create_item(&key, json!({"kind": "todo", "title": "周一的事", "date": "2026-02-09"})).await;
    for (title, priority) in [("a", 4), ("b", 1), ("c", 2), ("d", 1), ("e", 3)] {
        app.create_item(&key, json!({"kind": "todo", "title": format!("任务{title}"), "date": "2026-02-10", "priority": priority})).await;
    }

    app.fake.script("明天有什么安排", vec![Reply::tool("search_items", json!({"date": "明天", "status": "all"})), Reply::finish("action_completed", "明天有2项安排")]);
    let task = app.act(&key, "明天有什么安排", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let listed: Vec<&str> = task["result"]["items"].as_array().unwrap().iter().map(|i| i["title"].as_str().unwrap()).collect();
    // Ordered by date and time: the to-do (no time) before the 09:00 event; Monday's item is not listed.
    assert_eq!(listed, vec!["买菜", "早会"]);

    // "前3个": the model asks for 10, then relaxes its search and asks for 20; both return 3.
    app.fake.script(
        "前3个最紧急的任务",
        vec![
            Reply::tool("search_items", json!({"kind": "todo", "sort": "priority", "limit": 10, "query": "不存在"})),
            Reply::tool("search_items", json!({"kind": "todo", "sort": "priority", "limit": 20})),
            Reply::finish("action_completed", "这是最紧急的3个任务"),
        ],
    );
    let task = app.act(&key, "前3个最紧急的任务", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let searches = tool_steps(&task, "search_items");
    assert_eq!(searches[0]["result"]["limit"], 3);
    assert_eq!(searches[1]["result"]["limit"], 3, "the stated count survives the relaxed retry");
    let listed: Vec<(i64, &str)> = task["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["priority"].as_i64().unwrap_or(9), i["title"].as_str().unwrap()))
        .collect();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[0].0, 1);
    assert_eq!(listed[1].0, 1);
    assert_eq!(listed[2].0, 2);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clarification_is_refused_when_search_found_one_match() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let meeting = app.create_item(&key, json!({"kind": "event", "title": "周会", "date": "2026-02-09", "start_time": "10:00", "end_time": "11:00"})).await;
    app.fake.script(
        "把周会改到下午3点",
        vec![
            Reply::tool("search_items", json!({"query": "周会"})),
            Reply::tool("finish", json!({"result_type": "need_clarification", "message": "哪个周会？"})),
            Reply::dynamic(|request| {
                let refusal = request["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
                assert!(refusal.contains("exactly one match"), "{refusal}");
                let search = request["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
                let found: Value = serde_json::from_str(search["content"].as_str().unwrap()).unwrap();
                Reply::tool("update_item", json!({"id": found["items"][0]["id"], "when": "下午3点"}))
            }),
            Reply::finish("action_completed", "已改到下午3点"),
        ],
    );
    let task = app.act(&key, "把周会改到下午3点", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let finishes = tool_steps(&task, "finish");
    assert_eq!(finishes.len(), 2);
    assert_eq!(finishes[0]["ok"], false);
    let moved = app.item_now(&key, &meeting).await;
    assert_eq!(moved["start_time"], "15:00");
    assert_eq!(moved["date"], "2026-02-09");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn several_indistinguishable_candidates_give_a_clarification_with_options() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.create_item(&key, json!({"kind": "event", "title": "客户会议", "date": "2026-02-09", "start_time": "10:00", "end_time": "11:00"})).await;
    app.create_item(&key, json!({"kind": "event", "title": "部门会议", "date": "2026-02-10", "start_time": "10:00", "end_time": "11:00"})).await;
    app.fake.script(
        "取消会议",
        vec![
            Reply::tool("search_items", json!({"query": "会议"})),
            Reply::on_tool_result(|found| {
                let ids: Vec<Value> = found["items"].as_array().unwrap().iter().map(|i| i["id"].clone()).collect();
                Reply::tool("finish", json!({"result_type": "need_clarification", "message": "有两个会议", "options": ids, "suggestion": "说明是哪天的会议"}))
            }),
        ],
    );
    let task = app.act(&key, "取消会议", NOW).await;
    assert_eq!(task["status"], "failed", "{task:#}");
    assert_eq!(task["result"]["type"], "need_clarification");
    let options: Vec<&str> = task["result"]["options"].as_array().unwrap().iter().map(|o| o["title"].as_str().unwrap()).collect();
    assert_eq!(options, vec!["客户会议", "部门会议"]);
    assert_eq!(task["result"]["suggestion"], "说明是哪天的会议");
    assert_eq!(app.items(&key).await.len(), 2, "nothing was deleted");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_time_that_has_passed_today_is_not_created_and_the_next_occurrence_is_suggested() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.fake.script(
        "今天下午3点开会",
        vec![
            Reply::tool("create_item", json!({"title": "开会", "when": "今天下午3点"})),
            Reply::on_tool_result(|result| {
                assert_eq!(result["outcome"], "time_passed", "{result}");
                Reply::tool("finish", json!({"result_type": "need_clarification", "message": "今天下午3点已经过了"}))
            }),
        ],
    );
    // Written at 16:00: 15:00 today has passed.
    let task = app.act(&key, "今天下午3点开会", "2026-02-07T16:00:00+08:00").await;
    assert_eq!(task["status"], "failed", "{task:#}");
    assert_eq!(task["result"]["type"], "need_clarification");
    assert!(task["result"]["suggestion"].as_str().unwrap().contains("明天"), "{task:#}");
    let step = &tool_step(&task, "create_item")["result"];
    assert_eq!(step["next_occurrence"]["date"], "2026-02-08");
    assert!(app.items(&key).await.is_empty());
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_conflicting_event_is_reported_and_only_written_when_the_request_says_so() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let existing = app.create_item(&key, json!({"kind": "event", "title": "面试", "date": "2026-02-08", "start_time": "15:00", "end_time": "16:00"})).await;
    app.fake.script(
        "明天下午3点半开会",
        vec![
            Reply::tool("create_item", json!({"kind": "event", "title": "开会", "when": "明天下午3点半"})),
            Reply::tool("finish", json!({"result_type": "need_clarification", "message": "和面试冲突"})),
        ],
    );
    let task = app.act(&key, "明天下午3点半开会", NOW).await;
    assert_eq!(task["result"]["type"], "need_clarification", "{task:#}");
    assert_eq!(task["result"]["options"][0]["id"], existing["id"], "the conflicting item is listed");
    let outcome = &tool_step(&task, "create_item")["result"];
    assert_eq!(outcome["outcome"], "conflict");
    assert_eq!(app.items(&key).await.len(), 1);

    // Back-to-back is not a conflict; an explicit "anyway" writes the overlap.
    app.fake.script(
        "明天下午4点开会",
        vec![Reply::tool("create_item", json!({"kind": "event", "title": "开会", "when": "明天下午4点到5点"})), Reply::finish("action_completed", "ok")],
    );
    assert_eq!(app.act(&key, "明天下午4点开会", NOW).await["status"], "success");
    app.fake.script(
        "冲突也要加",
        vec![
            Reply::tool("create_item", json!({"kind": "event", "title": "电话", "when": "明天下午3点半", "allow_conflict": true})),
            Reply::finish("action_completed", "ok"),
        ],
    );
    assert_eq!(app.act(&key, "明天下午3点半打电话，冲突也要加", NOW).await["status"], "success");
    assert_eq!(app.items(&key).await.len(), 3);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tools_only_see_the_task_owners_items() {
    let (app, alice) = TestApp::start_with_user("alice").await;
    let (_, bob) = app.create_user("bob").await;
    let secret = app.create_item(&bob, json!({"kind": "todo", "title": "bob's secret", "date": "2026-02-09"})).await;
    let bob_id = secret["id"].as_str().unwrap().to_owned();
    app.fake.script(
        "steal",
        vec![
            Reply::tool("search_items", json!({"query": "secret", "status": "all"})),
            Reply::tool("delete_item", json!({"id": bob_id})),
            Reply::tool("update_item", json!({"id": bob_id, "title": "pwned"})),
            Reply::finish("error", "not found"),
        ],
    );
    let task = app.act(&alice, "steal bob's secret", NOW).await;
    let search = &tool_step(&task, "search_items")["result"];
    assert_eq!(search["count"], 0, "{search}");
    for name in ["delete_item", "update_item"] {
        let step = tool_step(&task, name);
        assert_step_refused(step, "no item with id");
    }
    let untouched = app.call(&bob, Method::GET, &format!("/api/items/{bob_id}"), None).await.body;
    assert_eq!(untouched["title"], "bob's secret");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resolve_time_answers_from_the_reference_moment_in_the_users_zone() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.fake.script(
        "大后天晚上8点半",
        vec![
            Reply::tool("resolve_time", json!({"text": "大后天晚上8点半"})),
            Reply::on_tool_result(|result| {
                assert_eq!(result["matches"][0]["resolution"]["date"], "2026-02-10", "{result}");
                assert_eq!(result["matches"][0]["resolution"]["start_time"], "20:30", "{result}");
                Reply::finish("action_completed", "ok")
            }),
        ],
    );
    assert_eq!(app.act(&key, "大后天晚上8点半提醒我", NOW).await["status"], "success");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_a_model_configured_clear_sentences_take_the_zero_token_fast_path() {
    let (app, key) = TestApp::start_with_options_and_user(quickact_testkit::TestAppOptions::default().env("QUICKACT_FAST_PATH", "true"), "alice").await;
    let task = app.act(&key, "明天下午3点到4点开会", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["model_used"], "local");
    assert_eq!(task["result"]["message"], "已创建：明天（周日，2月8日）15:00-16:00 开会。");
    assert_eq!(task["tokens_used"]["total"], 0);
    assert!(app.fake.requests().is_empty(), "the model was not asked");
    let item = &app.items(&key).await[0];
    assert_eq!((item["title"].as_str(), item["start_time"].as_str()), (Some("开会"), Some("15:00")));

    // What the rules cannot read goes to the model.
    let sentence = "帮我把这周的会议整理一下然后发给老板";
    app.fake.script(sentence, vec![Reply::finish("error", "I cannot send e-mail")]);
    let task = app.act(&key, sentence, NOW).await;
    assert_eq!(task["model_used"], "fake-model", "{task:#}");
    assert_eq!(app.fake.requests_for(sentence).len(), 1);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_fast_path_can_be_switched_off() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.fake.script("明天下午3点到4点开会", vec![Reply::look_up_and_finish("ok")]);
    let task = app.act(&key, "明天下午3点到4点开会", NOW).await;
    assert_eq!(task["model_used"], "fake-model");
    assert_eq!(app.fake.requests().len(), 1);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_search_without_exact_words_falls_back_to_shared_characters() {
    let (app, key) = TestApp::start_with_options_and_user(quickact_testkit::TestAppOptions::default().env("OPENAI_API_KEY", ""), "alice").await;
    let meeting = app.create_item(&key, json!({"kind": "event", "title": "羽毛球训练", "date": "2026-02-08", "start_time": "15:00", "end_time": "16:00"})).await;
    app.create_item(&key, json!({"kind": "todo", "title": "健身", "date": "2026-02-08"})).await;
    // "羽毛球课" is not in "羽毛球训练", nor a synonym of it, but most of its characters are: the
    // relaxed search finds it.
    let task = app.act(&key, "把明天的羽毛球课改到晚上8点", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let search = &tool_step(&task, "search_items")["result"];
    assert_eq!(search["filters"]["relaxed"], true);
    let moved = app.item_now(&key, &meeting).await;
    assert_eq!((moved["start_time"].as_str(), moved["end_time"].as_str()), (Some("20:00"), Some("21:00")));
    app.shutdown().await;
}

/// Issue 34: a model that names the item by its time of day (`time` of search_items) gets the one
/// item at that time, where the day alone finds every item of the day; and a move to a bare hour or
/// a part of day keeps the item's date and its half of the day.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn search_items_time_narrows_to_the_item_at_that_time_of_day() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let event = |title: &str, date: &str, start: &str, end: &str| json!({"kind": "event", "title": title, "date": date, "start_time": start, "end_time": end});
    let _morning = app.create_item(&key, event("晨会", "2026-02-08", "09:00", "09:30")).await;
    let afternoon = app.create_item(&key, event("客户会", "2026-02-08", "15:00", "16:00")).await;
    let _evening = app.create_item(&key, event("复盘会", "2026-02-08", "20:00", "21:00")).await;
    let _other_day = app.create_item(&key, event("客户会", "2026-02-09", "15:00", "16:00")).await;

    let sentence = "明天下午三点那个会挪到四点";
    app.fake.script(
        sentence,
        vec![
            Reply::tool("search_items", json!({"query": "会", "date": "明天"})),
            Reply::tool("search_items", json!({"query": "会", "time": "明天下午三点"})),
            act_on_first_found("update_item", json!({"when": "四点"})),
            Reply::finish("action_completed", "已改到16:00"),
        ],
    );
    let task = app.act(&key, sentence, NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let searches = tool_steps(&task, "search_items");
    let titles = |step: &Value| -> Vec<String> { step["result"]["items"].as_array().unwrap().iter().map(|i| i["title"].as_str().unwrap().to_owned()).collect() };
    assert_eq!(titles(searches[0]), ["晨会", "客户会", "复盘会"], "the day alone: every meeting of the day");
    assert_eq!(titles(searches[1]), ["客户会"], "{:#}", searches[1]);
    assert_eq!(searches[1]["result"]["items"][0]["id"], afternoon["id"]);
    assert_eq!(searches[1]["result"]["filters"]["time"], "15:00");
    let moved = app.item_now(&key, &afternoon).await;
    // A bare 四点 of a 15:00 item is 16:00, on the item's own day.
    assert_eq!((moved["date"].as_str(), moved["start_time"].as_str(), moved["end_time"].as_str()), (Some("2026-02-08"), Some("16:00"), Some("17:00")));

    // A part of the day without a day: the item in it, whatever its day; a move to a part of day
    // keeps that day.
    let sentence = "move the evening review to the afternoon";
    app.fake.script(
        sentence,
        vec![
            Reply::tool("search_items", json!({"query": "复盘", "time": "evening"})),
            act_on_first_found("update_item", json!({"when": "the afternoon"})),
            Reply::finish("action_completed", "moved"),
        ],
    );
    let task = app.act(&key, sentence, NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let search = tool_step(&task, "search_items");
    assert_eq!(titles(search), ["复盘会"]);
    let moved = app.item_now(&key, &search["result"]["items"][0]).await;
    assert_eq!((moved["date"].as_str(), moved["segment"].as_str(), moved["start_time"].as_str()), (Some("2026-02-08"), Some("afternoon"), None));

    // A time no item starts at finds nothing, and says so.
    let sentence = "cancel the 11am meeting tomorrow";
    app.fake.script(
        sentence,
        vec![Reply::tool("search_items", json!({"query": "会", "time": "tomorrow 11am"})), Reply::finish("error", "no such meeting")],
    );
    let task = app.act(&key, sentence, NOW).await;
    assert_eq!(tool_step(&task, "search_items")["result"]["count"], 0, "{task:#}");
    app.shutdown().await;
}
