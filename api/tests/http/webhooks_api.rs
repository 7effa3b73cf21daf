//! `/api/webhooks`: a user registers, lists, changes and removes their own endpoints (another
//! user's are 404); bad URLs, private addresses and unknown verdict types are refused; a task the
//! user cancels is delivered too (an ending outside any worker run); an admin sends a delivery again.

use std::time::Duration;

use quickact_testkit::{TestApp, TestAppOptions, WebhookReceiver};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

fn allowing_private() -> TestAppOptions {
    TestAppOptions::default().env("QUICKACT_WEBHOOK_ALLOW_PRIVATE", "true")
}

async fn create(app: &TestApp, key: &str, body: Value) -> (StatusCode, Value) {
    let answer = app.call(key, Method::POST, "/api/webhooks", Some(body)).await;
    (answer.status, answer.body)
}

#[tokio::test]
async fn an_endpoint_is_registered_listed_changed_and_removed_by_its_owner_only() {
    let (app, key) = TestApp::start_with_options_and_user(allowing_private().workers(0), "owner").await;
    let (_, other) = app.create_user("other").await;

    let (status, created) = create(&app, &key, json!({ "url": "http://127.0.0.1:9/hook", "verdicts": ["error"] })).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"), "{created}");
    assert_eq!(created["verdicts"], json!(["error"]));
    assert_eq!(created["enabled"], true);
    let id = created["id"].as_str().unwrap();
    let path = format!("/api/webhooks/{id}");

    let listed = app.call(&key, Method::GET, "/api/webhooks", None).await;
    assert_eq!(listed.body["endpoints"].as_array().unwrap().len(), 1, "{:?}", listed.body);
    assert!(listed.body["endpoints"][0].get("secret").is_none(), "the secret is shown once");
    let (status, _) = create(&app, &key, json!({ "url": "http://127.0.0.1:9/other" })).await;
    assert_eq!(status, StatusCode::CREATED);
    let defaulted = app.call(&key, Method::GET, "/api/webhooks", None).await.body["endpoints"][1].clone();
    assert_eq!(defaulted["verdicts"], json!(["action_completed", "need_clarification", "error"]));

    let changed = app.call(&key, Method::PATCH, &path, Some(json!({ "enabled": false, "verdicts": ["action_completed", "error"] }))).await;
    assert_eq!(changed.status, StatusCode::OK, "{:?}", changed.body);
    assert_eq!(changed.body["enabled"], false);
    assert_eq!(changed.body["verdicts"], json!(["action_completed", "error"]));
    assert_eq!(app.call(&key, Method::GET, &path, None).await.body["enabled"], false);

    // Another user's endpoint is unknown to them, however asked.
    assert!(app.call(&other, Method::GET, "/api/webhooks", None).await.body["endpoints"].as_array().unwrap().is_empty());
    for (method, path, body) in [
        (Method::GET, path.clone(), None),
        (Method::PATCH, path.clone(), Some(json!({ "enabled": true }))),
        (Method::DELETE, path.clone(), None),
        (Method::GET, format!("{path}/deliveries"), None),
    ] {
        let answer = app.call(&other, method.clone(), &path, body).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method} {path}: {:?}", answer.body);
    }
    assert_eq!(app.call(&key, Method::GET, &path, None).await.body["enabled"], false, "untouched by the other user");

    assert_eq!(app.call(&key, Method::DELETE, &path, None).await.status, StatusCode::NO_CONTENT);
    assert_eq!(app.call(&key, Method::GET, &path, None).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.call(&key, Method::GET, "/api/webhooks/not-a-uuid", None).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_urls_private_addresses_and_unknown_verdict_types_are_refused() {
    // The default deployment: private addresses are not allowed.
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "careless").await;
    for (body, code) in [
        (json!({ "url": "http://127.0.0.1:8080/hook" }), "private_address"),
        (json!({ "url": "http://localhost/hook" }), "private_address"),
        (json!({ "url": "http://[::1]/hook" }), "private_address"),
        (json!({ "url": "http://169.254.169.254/latest/meta-data" }), "private_address"),
        (json!({ "url": "http://10.0.0.7/hook" }), "private_address"),
        (json!({ "url": "ftp://example.com/hook" }), "invalid_url"),
        (json!({ "url": "not a url" }), "invalid_url"),
        (json!({ "url": "http://user:pass@example.com/hook" }), "invalid_url"),
        (json!({ "url": "https://example.com/hook", "verdicts": ["maybe"] }), "invalid_verdicts"),
        (json!({ "url": "https://example.com/hook", "verdicts": [] }), "invalid_verdicts"),
    ] {
        let (status, answer) = create(&app, &key, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
    }
    let (status, answer) = create(&app, &key, json!({ "verdicts": ["error"] })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a missing URL: {answer}");
    assert!(app.call(&key, Method::GET, "/api/webhooks", None).await.body["endpoints"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn a_cancelled_task_is_delivered_and_an_admin_can_send_it_again() {
    let (mut app, key) = TestApp::start_with_options_and_user(allowing_private().workers(0), "canceller").await;
    let receiver = WebhookReceiver::start().await;
    let (_, created) = create(&app, &key, json!({ "url": receiver.url })).await;
    receiver.set_secret(created["secret"].as_str().unwrap());
    let endpoint_id = created["id"].as_str().unwrap().to_owned();

    // Ended by the API, with no worker running: the outbox row is written with the cancel.
    let task_id = app.submit_id(&key, "明天下午3点开会").await;
    let cancelled = app.call(&key, Method::POST, &format!("/api/quick-action/{task_id}/cancel"), None).await;
    assert_eq!(cancelled.status, StatusCode::OK, "{:?}", cancelled.body);
    let listed = app.call(&key, Method::GET, &format!("/api/webhooks/{endpoint_id}/deliveries"), None).await;
    let delivery = listed.body["deliveries"][0].clone();
    assert_eq!(delivery["status"], "pending", "{:?}", listed.body);
    assert_eq!(delivery["task_id"], task_id.as_str());

    app.start_worker().await;
    let got = receiver.wait_for_accepted(1, WAIT).await;
    assert!(got[0].verified, "{:?}", got[0].verify_error);
    assert_eq!(got[0].body["status"], "cancelled");
    assert_eq!(got[0].event_id, delivery["event_id"].as_str().unwrap());

    let resend_path = format!("/api/admin/webhook-deliveries/{}/resend", delivery["id"].as_str().unwrap());
    assert_eq!(app.call(&key, Method::POST, &resend_path, None).await.status, StatusCode::FORBIDDEN);
    let unknown = format!("/api/admin/webhook-deliveries/{}/resend", uuid::Uuid::now_v7());
    assert_eq!(app.call(&app.admin_key, Method::POST, &unknown, None).await.status, StatusCode::NOT_FOUND);
    let resent = app.call(&app.admin_key, Method::POST, &resend_path, None).await;
    assert_eq!(resent.status, StatusCode::ACCEPTED, "{:?}", resent.body);
    let got = receiver.wait_for_accepted(2, WAIT).await;
    assert!(got[1].verified);
    assert_eq!(got[1].event_id, got[0].event_id, "sent again as the same event");
    assert_eq!(got[1].body, got[0].body);
}
