//! `POST /api/quick-action/{id}/reply`: who may reply, to what, with which option; idempotency.
//! (What a reply does is tested in `worker/tests/e2e/replies.rs`.)

use quickact_testkit::{Reply, TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const NOW: &str = "2026-02-07T09:00:00+08:00";

/// A task of `key`'s user that ended asking which of two syncs: its id and its option ids.
async fn asked(app: &TestApp, key: &str, sentence: &str) -> (String, Vec<String>) {
    let a = app.create_item(key, json!({ "kind": "event", "title": "sync", "date": "2026-02-08", "start_time": "10:00", "end_time": "11:00" })).await;
    let b = app.create_item(key, json!({ "kind": "event", "title": "sync", "date": "2026-02-09", "start_time": "10:00", "end_time": "11:00" })).await;
    app.fake.script(
        sentence,
        vec![
            Reply::tool("search_items", json!({ "query": "sync" })),
            Reply::tool("finish", json!({ "result_type": "need_clarification", "message": "Which sync?", "options": [a["id"], b["id"]] })),
        ],
    );
    let task = app.act(key, sentence, NOW).await;
    assert_eq!(task["result"]["type"], "need_clarification", "{task:#}");
    (task["task_id"].as_str().unwrap().to_owned(), vec![a["id"].as_str().unwrap().to_owned(), b["id"].as_str().unwrap().to_owned()])
}

async fn post_reply(app: &TestApp, key: &str, id: &str, body: Value) -> (StatusCode, Value) {
    let answer = app.call(key, Method::POST, &format!("/api/quick-action/{id}/reply"), Some(body)).await;
    (answer.status, answer.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reply_is_refused_for_tasks_that_asked_nothing_and_options_they_did_not_list() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let (id, options) = asked(&app, &key, "cancel the sync").await;

    // Another user's task, or none at all: 404, as if it did not exist.
    let (_, mallory) = app.create_user("mallory").await;
    let (status, body) = post_reply(&app, &mallory, &id, json!({ "option": 1 })).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")), "{body:#}");
    let (status, _) = post_reply(&app, &key, "0190f0a8-0000-7000-8000-000000000000", json!({ "option": 1 })).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = post_reply(&app, &key, "not-a-uuid", json!({ "option": 1 })).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Options that are not the question's: 422.
    for option in [json!(0), json!(3), json!(-1), json!("7"), json!("0190f0a8-0000-7000-8000-000000000000"), json!("the first")] {
        let (status, body) = post_reply(&app, &key, &id, json!({ "option": option })).await;
        assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_option")), "{option}: {body:#}");
    }
    // Nothing said, an empty or a huge text: as on POST /api/quick-action.
    for (body, want) in [
        (json!({}), StatusCode::BAD_REQUEST),
        (json!({ "text": "  " }), StatusCode::BAD_REQUEST),
        (json!({ "text": "x".repeat(2001) }), StatusCode::PAYLOAD_TOO_LARGE),
        (json!({ "option": 1, "timeout": 0 }), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({ "option": 1, "colour": "red" }), StatusCode::BAD_REQUEST),
    ] {
        let (status, answer) = post_reply(&app, &key, &id, body.clone()).await;
        assert_eq!(status, want, "{body}: {answer:#}");
    }

    // A task that did not end with a question: 409 not_a_question.
    app.fake.script("what is on tomorrow", vec![Reply::finish("action_completed", "Nothing.")]);
    let done = app.act(&key, "what is on tomorrow", NOW).await;
    let (status, body) = post_reply(&app, &key, done["task_id"].as_str().unwrap(), json!({ "text": "the first" })).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("not_a_question")), "{body:#}");

    // The option's id works as its number does, and the reply is stored as "#N".
    let (status, body) = post_reply(&app, &key, &id, json!({ "option": options[1], "text": "that one" })).await;
    assert_eq!(status, StatusCode::CREATED, "{body:#}");
    assert_eq!((body["input_text"].as_str(), body["reply_to"].as_str()), (Some("#2 that one"), Some(id.as_str())), "{body:#}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reply_to_an_unfinished_task_is_a_conflict() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let (_, key) = app.create_user("bob").await;
    let id = app.submit_id(&key, "cancel the sync").await;
    let (status, body) = post_reply(&app, &key, &id, json!({ "text": "the first" })).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("task_not_finished")), "{body:#}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_same_idempotency_key_replays_the_same_reply() {
    let (app, key) = TestApp::start_with_user("carol").await;
    let (id, _) = asked(&app, &key, "cancel the sync").await;
    app.fake.fallback(|_| Reply::finish("error", "not scripted"));
    let send = |body: Value| {
        app.request(&key, Method::POST, &format!("/api/quick-action/{id}/reply")).header("idempotency-key", "reply-1").json(&body).send()
    };
    let first = send(json!({ "option": 2 })).await.unwrap();
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.unwrap();
    let again = send(json!({ "option": 2 })).await.unwrap();
    assert_eq!(again.status(), StatusCode::CREATED);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["task_id"], first["task_id"]);
    let other = send(json!({ "option": 1 })).await.unwrap();
    assert_eq!(other.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // The reply is in the history with its link.
    let history = app.call(&key, Method::GET, "/api/quick-action", None).await.body;
    let listed = history["tasks"].as_array().unwrap().iter().find(|t| t["task_id"] == first["task_id"]).cloned().unwrap();
    assert_eq!(listed["reply_to"], json!(id));
    // And the asked task names its replies.
    let asked = app.call(&key, Method::GET, &format!("/api/quick-action/{id}"), None).await.body;
    assert_eq!(asked["replies"], json!([first["task_id"]]), "{asked:#}");
    app.shutdown().await;
}
