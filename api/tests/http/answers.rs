//! The engine's own answers through the API: a cancel (and the time limit the sweeper enforces)
//! answers in the language of the task's sentence.

use quickact_testkit::{TestApp, TestAppOptions};
use reqwest::Method;
use serde_json::Value;

fn words(task: &Value) -> String {
    format!("{} {}", task["result"]["message"].as_str().unwrap_or_default(), task["result"]["suggestion"].as_str().unwrap_or_default())
}

fn latin_words(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| w.len() >= 2).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_answers_in_the_sentences_language() {
    // No worker: the tasks wait until cancelled.
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    for sentence in ["下周二上午十点和房东看房", "pick up the dry cleaning on Thursday"] {
        let id = app.submit_id(&key, sentence).await;
        let cancel = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/cancel"), None).await;
        assert_eq!(cancel.body["status"], "cancelled", "{:#}", cancel.body);
        let task = app.call(&key, Method::GET, &format!("/api/quick-action/{id}"), None).await.body;
        let text = words(&task);
        if quickact_time::is_chinese(sentence) {
            assert!(quickact_time::is_chinese(&text) && latin_words(&text).is_empty(), "{text}");
        } else {
            assert!(!quickact_time::is_chinese(&text) && text.contains("cancelled"), "{text}");
        }
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_time_limit_answers_in_the_sentences_language() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0).env("QUICKACT_SWEEP_SECS", "1"), "alice").await;
    let body = serde_json::json!({ "text": "明早八点提醒我给妈妈打电话", "timeout": 1 });
    let answer = app.call(&key, Method::POST, "/api/quick-action", Some(body)).await;
    let id = answer.body["task_id"].as_str().unwrap();
    let task = app.wait_final(&key, id, 30).await;
    assert_eq!(task["status"], "timeout", "{task:#}");
    let text = words(&task);
    assert!(quickact_time::is_chinese(&text) && latin_words(&text).is_empty(), "{text}");
    app.shutdown().await;
}
