//! Webhooks when a task ends, end to end: a real receiver on loopback verifies each signature with
//! the `standardwebhooks` crate; the API registers endpoints, the workers deliver.

use std::time::Duration;

use quickact_testkit::{
    Reply, TestApp, TestAppOptions, WebhookReceiver,
    processes::spawn_worker,
    wait_for,
    webhook_receiver::Answer,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const WORKER_BINARY: &str = env!("CARGO_BIN_EXE_quickact-worker");
const WAIT: Duration = Duration::from_secs(30);

/// A deployment whose endpoints may be on loopback, retrying after 100 ms (then 200, 400, ...).
fn options() -> TestAppOptions {
    TestAppOptions::default().env("QUICKACT_WEBHOOK_ALLOW_PRIVATE", "true").env("QUICKACT_WEBHOOK_RETRY_BASE_MS", "100")
}

/// Registers an endpoint of `key`'s user at `receiver` and gives the receiver its secret.
async fn register(app: &TestApp, key: &str, receiver: &WebhookReceiver, extra: Value) -> Value {
    let mut body = json!({ "url": receiver.url });
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let answer = app.call(key, Method::POST, "/api/webhooks", Some(body)).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
    let secret = answer.body["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"), "{secret}");
    receiver.set_secret(secret);
    answer.body
}

/// Submits `sentence`, which the fake model finishes with `result_type`, and waits for its verdict.
async fn run_task(app: &TestApp, key: &str, sentence: &str, result_type: &str) -> Value {
    let reply = match result_type {
        "action_completed" => Reply::look_up_and_finish("done"),
        other => Reply::finish(other, "done"),
    };
    app.fake.script(sentence, vec![reply]);
    let id = app.submit_id(key, sentence).await;
    let task = app.wait_final(key, &id, 30).await;
    assert_eq!(task["result"]["type"], result_type, "{task}");
    task
}

/// The endpoint's deliveries as the API lists them.
async fn deliveries(app: &TestApp, key: &str, endpoint_id: &str) -> Vec<Value> {
    let answer = app.call(key, Method::GET, &format!("/api/webhooks/{endpoint_id}/deliveries"), None).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body["deliveries"].as_array().unwrap().clone()
}

/// Waits until the endpoint's newest delivery has `status`; returns it.
async fn wait_delivery_status(app: &TestApp, key: &str, endpoint_id: &str, status: &str) -> Value {
    wait_for(&format!("a delivery {status}"), WAIT, || async {
        let list = deliveries(app, key, endpoint_id).await;
        match list.first() {
            Some(delivery) if delivery["status"] == status => Ok(delivery.clone()),
            _ => Err(list),
        }
    })
    .await
}

#[tokio::test]
async fn a_verdict_is_delivered_once_with_a_valid_signature_and_the_task_as_get_returns_it() {
    let (app, key) = TestApp::start_with_options_and_user(options().workers(1), "hooked").await;
    let receiver = WebhookReceiver::start().await;
    let endpoint = register(&app, &key, &receiver, json!({})).await;
    let endpoint_id = endpoint["id"].as_str().unwrap();

    let task = run_task(&app, &key, "明天下午3点开会", "action_completed").await;
    let got = receiver.wait_for_accepted(1, WAIT).await;
    let delivery = wait_delivery_status(&app, &key, endpoint_id, "delivered").await;

    assert_eq!(got.len(), 1, "delivered once: {got:?}");
    assert!(got[0].verified, "{:?}", got[0].verify_error);
    assert_eq!(got[0].event_id, delivery["event_id"].as_str().unwrap());
    assert!(got[0].event_id.starts_with("msg_"), "{}", got[0].event_id);
    let now = app.call(&key, Method::GET, &format!("/api/quick-action/{}", task["task_id"].as_str().unwrap()), None).await;
    assert_eq!(got[0].body, now.body, "the body is the task as GET returns it");
    let attempts = delivery["attempt_log"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{delivery}");
    assert_eq!(attempts[0]["status_code"], 200);
    assert!(attempts[0]["latency_ms"].is_number());

    // The worker counted it (one recorder serves the test process: other tests' counts add up).
    let text = app.request(&app.admin_key, Method::GET, "/metrics").send().await.unwrap().text().await.unwrap();
    let scrape = quickact_testkit::prometheus::Scrape::parse(&text);
    assert!(scrape.value("quickact_webhook_attempts_total", &[("outcome", "delivered")]) >= 1.0, "{text}");
    assert!(scrape.has("quickact_webhook_verdict_to_delivery_seconds_count"), "{text}");
    assert!(scrape.has("quickact_webhook_deliveries_pending"), "{text}");
}

#[tokio::test]
async fn a_receiver_that_is_down_for_a_while_gets_the_verdict_later_once() {
    let (app, key) = TestApp::start_with_options_and_user(options().workers(1), "patient").await;
    let receiver = WebhookReceiver::start().await;
    receiver.answer(Answer::Status(503));
    let endpoint = register(&app, &key, &receiver, json!({})).await;
    let endpoint_id = endpoint["id"].as_str().unwrap();

    run_task(&app, &key, "完成报告提交", "action_completed").await;
    receiver.wait_for_received(3, WAIT).await;
    receiver.answer(Answer::Status(204));
    let accepted = receiver.wait_for_accepted(1, WAIT).await;
    let delivery = wait_delivery_status(&app, &key, endpoint_id, "delivered").await;

    let got = receiver.received();
    assert_eq!(receiver.accepted().len(), 1, "accepted once: {got:?}");
    assert!(got.iter().all(|d| d.verified && d.event_id == got[0].event_id), "one event id at every attempt: {got:?}");
    assert!(got.iter().all(|d| d.body == got[0].body), "the same body at every attempt");
    assert_eq!(accepted.iter().filter(|d| d.answered == Some(204)).count(), 1);
    let attempts = delivery["attempt_log"].as_array().unwrap();
    assert_eq!(attempts.len(), got.len(), "each attempt recorded: {delivery}");
    assert!(attempts[..attempts.len() - 1].iter().all(|a| a["status_code"] == 503 && a["error"].is_string()), "{delivery}");
    assert_eq!(attempts.last().unwrap()["status_code"], 204);
}

#[tokio::test]
async fn a_receiver_answering_410_disables_its_endpoint() {
    let (app, key) = TestApp::start_with_options_and_user(options().workers(1), "gone").await;
    let receiver = WebhookReceiver::start().await;
    receiver.answer(Answer::Status(410));
    let endpoint = register(&app, &key, &receiver, json!({})).await;
    let endpoint_id = endpoint["id"].as_str().unwrap();

    run_task(&app, &key, "删除明天的会议", "action_completed").await;
    let delivery = wait_delivery_status(&app, &key, endpoint_id, "failed").await;
    assert_eq!(delivery["attempt_log"][0]["status_code"], 410);
    let now = app.call(&key, Method::GET, &format!("/api/webhooks/{endpoint_id}"), None).await;
    assert_eq!(now.body["enabled"], false, "{:?}", now.body);
    assert!(now.body["disabled_reason"].as_str().unwrap().contains("410"), "{:?}", now.body);

    // A later ending writes nothing for it (the outbox is written with the verdict).
    run_task(&app, &key, "把会议改到晚上8点", "error").await;
    assert_eq!(deliveries(&app, &key, endpoint_id).await.len(), 1);
    assert_eq!(receiver.received().len(), 1);
}

#[tokio::test]
async fn an_endpoint_hears_only_its_verdict_types_and_a_disabled_one_nothing() {
    let (app, key) = TestApp::start_with_options_and_user(options().workers(1), "picky").await;
    let errors_only = WebhookReceiver::start().await;
    let disabled = WebhookReceiver::start().await;
    let everything = WebhookReceiver::start().await;
    let errors_endpoint = register(&app, &key, &errors_only, json!({ "verdicts": ["error"] })).await;
    let disabled_endpoint = register(&app, &key, &disabled, json!({ "enabled": false })).await;
    register(&app, &key, &everything, json!({})).await;

    let completed = run_task(&app, &key, "明天上午10点看牙医", "action_completed").await;
    let failed = run_task(&app, &key, "帮我订机票", "error").await;
    let all = everything.wait_for_accepted(2, WAIT).await;
    let errors = errors_only.wait_for_accepted(1, WAIT).await;

    let ids = |got: &[quickact_testkit::webhook_receiver::Delivered]| got.iter().map(|d| d.body["task_id"].clone()).collect::<Vec<_>>();
    assert_eq!(ids(&errors), vec![failed["task_id"].clone()]);
    let mut both = ids(&all);
    both.sort_by_key(|id| id.to_string());
    let mut expected = vec![completed["task_id"].clone(), failed["task_id"].clone()];
    expected.sort_by_key(|id| id.to_string());
    assert_eq!(both, expected);
    assert_eq!(deliveries(&app, &key, errors_endpoint["id"].as_str().unwrap()).await.len(), 1);
    assert!(deliveries(&app, &key, disabled_endpoint["id"].as_str().unwrap()).await.is_empty());
    assert!(disabled.received().is_empty());
}

#[tokio::test]
async fn a_worker_killed_between_the_verdict_and_the_delivery_leaves_it_to_another_that_delivers_it() {
    // Attempts may take 5 s, so a claim lasts 10 s: the worker is killed well inside its attempt.
    let app = TestApp::start_with(options().workers(0).env("QUICKACT_WEBHOOK_TIMEOUT_SECS", "5")).await;
    let (_, key) = app.create_user("crashy").await;
    let receiver = WebhookReceiver::start().await;
    receiver.answer(Answer::Hold);
    let endpoint = register(&app, &key, &receiver, json!({})).await;
    let endpoint_id = endpoint["id"].as_str().unwrap();

    let mut first = spawn_worker(&app, WORKER_BINARY, &[("QUICKACT_WORKER_NAME", "first")]);
    run_task(&app, &key, "明天下午3点开会", "action_completed").await;
    // The verdict committed; the first worker's attempt is in flight, held by the receiver.
    receiver.wait_for_received(1, WAIT).await;
    first.kill().await.expect("SIGKILL the worker");
    // Later requests are answered at once; the killed worker's stays held (never a 2xx).
    receiver.answer(Answer::Status(200));

    let _second = spawn_worker(&app, WORKER_BINARY, &[("QUICKACT_WORKER_NAME", "second")]);
    receiver.wait_for_accepted(1, WAIT).await;
    let delivery = wait_delivery_status(&app, &key, endpoint_id, "delivered").await;
    let got = receiver.received();
    assert!(got.iter().all(|d| d.verified && d.event_id == got[0].event_id), "{got:?}");
    assert_eq!(receiver.accepted().len(), 1, "{got:?}");
    // The killed worker's attempt was never recorded; the second worker's is attempt 2.
    let attempts = delivery["attempt_log"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{delivery}");
    assert_eq!(attempts[0]["attempt"], 2);
    assert_eq!(attempts[0]["status_code"], 200);
    let worker: String = sqlx::query_scalar("SELECT worker FROM webhook_attempts").fetch_one(&app.pool).await.unwrap();
    assert!(worker.starts_with("second"), "{worker}");
}

#[tokio::test]
async fn a_deployment_endpoint_from_the_configuration_hears_every_users_endings() {
    let receiver = WebhookReceiver::start().await;
    let secret = quickact_shared::webhooks::generate_secret();
    receiver.set_secret(&secret);
    let configured = json!([{ "url": receiver.url, "secret": secret, "verdicts": ["action_completed"] }]).to_string();
    let app = TestApp::start_with(options().workers(1).env("QUICKACT_WEBHOOKS", &configured)).await;
    let (_, alice) = app.create_user("alice").await;
    let (_, bob) = app.create_user("bob").await;
    // The worker stores the configured endpoints as it starts.
    quickact_testkit::wait_until("the configured endpoint stored", WAIT, || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM webhook_endpoints").fetch_one(&app.pool).await.unwrap() == 1
    })
    .await;

    let first = run_task(&app, &alice, "明天下午3点开会", "action_completed").await;
    let second = run_task(&app, &bob, "完成报告提交", "action_completed").await;
    run_task(&app, &bob, "帮我订机票", "error").await;
    let got = receiver.wait_for_accepted(2, WAIT).await;

    let mut ids: Vec<String> = got.iter().map(|d| d.body["task_id"].as_str().unwrap().to_owned()).collect();
    ids.sort();
    let mut expected = vec![first["task_id"].as_str().unwrap().to_owned(), second["task_id"].as_str().unwrap().to_owned()];
    expected.sort();
    assert_eq!(ids, expected, "both users' completed tasks, not the error");
    assert!(got.iter().all(|d| d.verified), "{got:?}");
    // Stored once, for no user; a user does not see it among their endpoints.
    let stored: Vec<(Option<uuid::Uuid>, Vec<String>)> =
        sqlx::query_as("SELECT user_id, verdicts FROM webhook_endpoints").fetch_all(&app.pool).await.unwrap();
    assert_eq!(stored, vec![(None, vec!["action_completed".to_owned()])]);
    assert!(app.call(&alice, Method::GET, "/api/webhooks", None).await.body["endpoints"].as_array().unwrap().is_empty());
    // The error ending wrote no delivery for it (its filter), so nothing more will come.
    let deliveries: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries").fetch_one(&app.pool).await.unwrap();
    assert_eq!(deliveries, 2);
}

/// The deliverer sleeps until the next delivery is due: with none pending it is told so (`None`,
/// it sleeps its poll interval), not "due now", which had it claim twice a statement every 10 ms
/// in every idle worker.
#[tokio::test]
async fn with_no_delivery_pending_nothing_is_due() {
    use quickact_shared::store::webhooks::next_due_in_secs;
    let (app, key) = TestApp::start_with_options_and_user(options().workers(0), "idle").await;
    assert_eq!(next_due_in_secs(&app.pool).await.unwrap(), None, "no endpoint, no delivery: nothing is due");

    let receiver = WebhookReceiver::start().await;
    let endpoint = register(&app, &key, &receiver, json!({})).await;
    let endpoint_id: uuid::Uuid = endpoint["id"].as_str().unwrap().parse().unwrap();
    let task_id = app.submit_id(&key, "明天下午3点开会").await;
    sqlx::query(
        "INSERT INTO webhook_deliveries (id, endpoint_id, task_id, result_type, ended_at, next_attempt_at)
         VALUES (gen_random_uuid(), $1, $2::uuid, 'action_completed', now(), now() + interval '30 seconds')",
    )
    .bind(endpoint_id)
    .bind(&task_id)
    .execute(&app.pool)
    .await
    .unwrap();
    let due = next_due_in_secs(&app.pool).await.unwrap().expect("a pending delivery is due some time");
    assert!((20.0..=30.0).contains(&due), "due in about 30 s: {due}");
    app.shutdown().await;
}
