//! `POST /api/quick-action/{id}/undo`: a task's item changes reverted exactly, as a task of its own.

use quickact_testkit::{Reply, TestApp, tool_step};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const NOW: &str = "2026-02-07T09:00:00+08:00";



/// An item without the fields an undo is allowed to change (updated_at).
fn content(item: &Value) -> Value {
    let mut item = item.clone();
    item.as_object_mut().unwrap().remove("updated_at");
    item
}

fn by_title<'a>(items: &'a [Value], title: &str) -> Option<&'a Value> {
    items.iter().find(|item| item["title"] == title)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn undo_reverts_a_creation_a_change_a_completion_and_a_deletion() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let meeting = app.create_item(&key, json!({"kind": "event", "title": "周会", "date": "2026-02-09", "start_time": "10:00", "end_time": "11:00"})).await;
    let report = app.create_item(&key, json!({"kind": "todo", "title": "交报告", "date": "2026-02-08", "priority": 2})).await;
    let gym = app.create_item(&key, json!({"kind": "event", "title": "健身", "date": "2026-02-08", "segment": "evening"})).await;
    let before = app.items(&key).await;

    let text = "新建评审，周会改到周二下午3点，报告做完了，健身取消";
    app.fake.script(
        text,
        vec![
            Reply::tool("create_item", json!({"kind": "event", "title": "评审", "when": "明天下午2点"})),
            Reply::tool("update_item", json!({"id": meeting["id"], "title": "周会（改）", "when": "周二下午3点"})),
            Reply::tool("complete_todo", json!({"id": report["id"]})),
            Reply::tool("delete_item", json!({"id": gym["id"]})),
            Reply::finish("action_completed", "都办好了"),
        ],
    );
    let task = app.act(&key, text, NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let after = app.items(&key).await;
    assert!(by_title(&after, "评审").is_some() && by_title(&after, "健身").is_none(), "{after:#?}");
    assert_eq!(by_title(&after, "交报告").unwrap()["status"], "completed");

    let id = task["task_id"].as_str().unwrap();
    let undo = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/undo"), None).await;
    assert_eq!(undo.status, StatusCode::CREATED, "{:#}", undo.body);
    assert_eq!(undo.body["status"], "success", "{:#}", undo.body);
    assert_eq!(undo.body["undoes"], id);
    assert_eq!(undo.body["result"]["type"], "action_completed");
    assert_eq!(undo.body["result"]["items"].as_array().unwrap().len(), 4, "{:#}", undo.body);
    let undo_id = undo.body["task_id"].as_str().unwrap();
    assert_eq!(undo.headers["location"], format!("/api/quick-action/{undo_id}"));

    // Every item is as it was before the task, and the task's new item is gone.
    let restored = app.items(&key).await;
    assert_eq!(restored.len(), before.len(), "{restored:#?}");
    for item in &before {
        let now = restored.iter().find(|r| r["id"] == item["id"]).unwrap_or_else(|| panic!("{item} is back"));
        assert_eq!(content(now), content(item));
    }
    assert!(by_title(&restored, "评审").is_none());

    // The undo is a task in the history, with its journal step and verdict.
    let shown = app.call(&key, Method::GET, &format!("/api/quick-action/{undo_id}"), None).await.body;
    let step = tool_step(&shown, "undo");
    assert_eq!(step["arguments"]["task_id"], id);
    assert_eq!(shown["result"]["tool_calls"][0]["name"], "undo");
    let history = app.call(&key, Method::GET, "/api/quick-action", None).await.body;
    assert_eq!(history["tasks"][0]["task_id"], undo_id);

    // Twice is refused; undoing the undo puts the task's changes back.
    let again = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/undo"), None).await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(again.body["error"]["code"], "already_undone");
    let redo = app.call(&key, Method::POST, &format!("/api/quick-action/{undo_id}/undo"), None).await;
    assert_eq!(redo.status, StatusCode::CREATED, "{:#}", redo.body);
    let redone = app.items(&key).await;
    assert_eq!(redone.len(), after.len());
    for item in &after {
        let now = redone.iter().find(|r| r["id"] == item["id"]).unwrap();
        assert_eq!(content(now), content(item));
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn undo_is_refused_when_an_item_changed_again_and_for_tasks_it_cannot_undo() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let (_, bob) = app.create_user("bob").await;
    let meeting = app.create_item(&key, json!({"kind": "event", "title": "周会", "date": "2026-02-09", "start_time": "10:00"})).await;

    app.fake.script(
        "周会改到下午",
        vec![Reply::tool("update_item", json!({"id": meeting["id"], "when": "周一下午3点"})), Reply::finish("action_completed", "改好了")],
    );
    let task = app.act(&key, "周会改到下午", NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let id = task["task_id"].as_str().unwrap();

    // Someone edits the item by hand afterwards: undoing would overwrite that edit.
    let item_path = format!("/api/items/{}", meeting["id"].as_str().unwrap());
    let edited = app.call(&key, Method::PATCH, &item_path, Some(json!({"title": "周会（手改）"}))).await;
    assert_eq!(edited.status, StatusCode::OK, "{:#}", edited.body);
    let refused = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/undo"), None).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{:#}", refused.body);
    assert_eq!(refused.body["error"]["code"], "changed_since");
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("周会（手改）"), "{:#}", refused.body);
    // The sentence was Chinese: so is the refusal.
    assert!(message.starts_with("无法撤销") && !message.contains("undo"), "{message}");
    let untouched = app.call(&key, Method::GET, &item_path, None).await.body;
    assert_eq!((untouched["title"].as_str(), untouched["start_time"].as_str()), (Some("周会（手改）"), Some("15:00")));

    // A task that changed nothing.
    app.fake.script("周一有什么", vec![Reply::tool("search_items", json!({"date": "周一"})), Reply::finish("action_completed", "周一：周会")]);
    let search = app.act(&key, "周一有什么", NOW).await;
    let search_id = search["task_id"].as_str().unwrap();
    let nothing = app.call(&key, Method::POST, &format!("/api/quick-action/{search_id}/undo"), None).await;
    assert_eq!((nothing.status, nothing.body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("nothing_to_undo")));

    // Another user's task and unknown ids are 404, like everywhere else.
    for path in [format!("/api/quick-action/{id}/undo"), format!("/api/quick-action/{}/undo", uuid::Uuid::now_v7()), "/api/quick-action/nope/undo".into()] {
        let answer = app.call(&bob, Method::POST, &path, None).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unfinished_task_cannot_be_undone() {
    let app = quickact_testkit::TestApp::start_with(quickact_testkit::TestAppOptions::default().workers(0)).await;
    let (_, key) = app.create_user("alice").await;
    let id = app.submit_id(&key, "明天下午3点开会").await;
    let answer = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/undo"), None).await;
    assert_eq!(answer.status, StatusCode::CONFLICT, "{:#}", answer.body);
    assert_eq!(answer.body["error"]["code"], "task_not_finished");
    app.shutdown().await;
}
