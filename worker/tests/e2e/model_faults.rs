//! Faults of the model endpoint that say how to ride them out: a rate limit with `Retry-After` is
//! asked again no sooner than the provider said, and not at all when the wait outlasts the task.

use std::time::{Duration, Instant};

use quickact_testkit::{Reply, TestApp};
use reqwest::Method;
use serde_json::{Value, json};

/// The task's failed model turns (journaled with their error).
fn failed_turns(task: &Value) -> Vec<&Value> {
    task["steps"].as_array().unwrap().iter().filter(|s| s["kind"] == "model_turn" && s["ok"] == false).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rate_limited_turn_is_asked_again_after_the_wait_the_provider_named() {
    let (app, key) = TestApp::start_with_user("rita").await;
    app.fake.script("throttled", vec![Reply::RateLimited { retry_after_secs: 2 }, Reply::look_up_and_finish("done after the wait")]);
    let id = app.submit_id(&key, "throttled model").await;
    let task = app.wait_final(&key, &id, 30).await;
    assert_eq!(task["status"], "success", "{task:#}");

    let received = app.fake.received_for("throttled model");
    assert_eq!(received.len(), 2, "one refusal, one answer");
    let gap = received[1].at - received[0].at;
    // The agent's own first backoff is 0.5 s: only the header explains 2 s.
    assert!(gap >= Duration::from_secs(2), "asked again {gap:?} after a Retry-After of 2 s");

    let failed = failed_turns(&task);
    assert_eq!(failed.len(), 1, "{task:#}");
    let error = failed[0]["error"].as_str().unwrap();
    assert!(error.contains("429") && error.contains("Rate limit reached"), "the journal keeps the provider's words: {error}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_wait_longer_than_the_task_has_left_ends_it_at_once_with_an_error() {
    let (app, key) = TestApp::start_with_user("walt").await;
    app.fake.script("patience", vec![Reply::RateLimited { retry_after_secs: 30 }, Reply::look_up_and_finish("too late")]);
    let answer = app.call(&key, Method::POST, "/api/quick-action", Some(json!({ "text": "patience model", "timeout": 5 }))).await;
    let id = answer.body["task_id"].as_str().unwrap().to_owned();
    let started = Instant::now();
    let task = app.wait_final(&key, &id, 60).await;
    let took = started.elapsed();

    assert_eq!(task["status"], "failed", "an error verdict, not a timeout after waiting: {task:#}");
    assert_eq!(task["result"]["type"], "error");
    assert!(took < Duration::from_secs(5), "the run gave up only after {took:?}, its whole timeout or more");
    assert_eq!(app.fake.requests_for("patience model").len(), 1, "not asked again");
    let failed = failed_turns(&task);
    assert_eq!(failed.len(), 1, "{task:#}");
    assert!(failed[0]["error"].as_str().unwrap().contains("429"), "{:#}", failed[0]);
    app.shutdown().await;
}
