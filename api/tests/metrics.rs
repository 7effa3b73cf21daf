//! `GET /metrics` of an API process (with its in-process worker) after real tasks: exact counter
//! values, histograms, gauges of open waits and the queue, and route labels without ids.
//!
//! A test binary of its own with a single test: the metrics recorder is global to a process, so
//! other tests running beside it would add to the counts asserted here.

use std::{sync::Arc, time::Duration};

use quickact_testkit::{Reply, TestApp, prometheus::scrape};
use reqwest::{Method, StatusCode};
use serde_json::json;
use tokio::sync::Notify;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_api_exports_what_tasks_did_cost_and_waited_with_fixed_labels() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let metrics_url = format!("{}/metrics", app.base_url);
    app.fake.script("metric one", vec![Reply::tool("no_such_tool", json!({})), Reply::look_up_and_finish("done")]);
    app.fake.script("metric two", vec![Reply::finish("error", "cannot")]);
    // A model that never answers: the run is cancelled while it waits.
    let never = Arc::new(Notify::new());
    app.fake.script("metric slow", vec![Reply::Gated(never, Box::new(Reply::finish("error", "late")))]);

    let before = scrape(&app.client, &metrics_url).await;
    assert_eq!(before.get("quickact_tasks_submitted_total", &[]), None, "nothing submitted yet");
    assert_eq!(before.value("quickact_queue_pending", &[]), 0.0);

    for text in ["metric one", "metric two"] {
        let id = app.submit_id(&key, text).await;
        app.wait_final(&key, &id, 30).await;
    }
    let slow = app.submit_id(&key, "metric slow").await;
    app.fake.wait_for_requests("metric slow", 1, Duration::from_secs(20)).await;
    // One long-poll and one event stream held open on the running task.
    let long_poll = app.long_poll_in_server(&key, &slow).await;
    let stream = app.client.get(format!("{}/api/quick-action/{slow}/events", app.base_url)).bearer_auth(&key).send().await.unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let during = scrape(&app.client, &metrics_url).await;
    assert_eq!(during.value("quickact_long_polls_open", &[]), 1.0);
    assert_eq!(during.value("quickact_sse_streams_open", &[]), 1.0);
    assert_eq!(during.value("quickact_queue_processing", &[]), 1.0);
    assert_eq!(during.value("quickact_queue_pending", &[]), 0.0);
    assert_eq!(during.value("quickact_queue_oldest_pending_seconds", &[]), 0.0);

    let cancel = app.call(&key, Method::POST, &format!("/api/quick-action/{slow}/cancel"), None).await;
    assert_eq!(cancel.status, StatusCode::OK);
    let (status, body, _) = long_poll.await.unwrap();
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("cancelled")));
    let events = stream.text().await.unwrap();
    assert!(events.contains("event: verdict"), "{events}");
    let unknown = app.client.get(format!("{}/no/such/path", app.base_url)).send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);

    let after = scrape(&app.client, &metrics_url).await;
    let value = |name: &str, labels: &[(&str, &str)]| after.value(name, labels);
    assert_eq!(value("quickact_tasks_submitted_total", &[]), 3.0);
    assert_eq!(value("quickact_tasks_finished_total", &[("status", "success"), ("verdict", "action_completed")]), 1.0);
    assert_eq!(value("quickact_tasks_finished_total", &[("status", "failed"), ("verdict", "error")]), 1.0);
    assert_eq!(value("quickact_tasks_finished_total", &[("status", "cancelled"), ("verdict", "error")]), 1.0);
    assert_eq!(value("quickact_task_post_to_verdict_seconds_count", &[("status", "success")]), 1.0);
    assert_eq!(value("quickact_task_run_seconds_count", &[("status", "cancelled")]), 1.0);
    let slowest_bucket = value("quickact_task_post_to_verdict_seconds_bucket", &[("status", "failed"), ("le", "+Inf")]);
    assert_eq!(slowest_bucket, 1.0);
    // Three answered turns of 100 input and 20 output tokens, at 2 and 8 per million: 360,000
    // billionths each. The cancelled task's turn never answered.
    let model = ("model", "fake-model");
    assert_eq!(value("quickact_model_tokens_total", &[model, ("kind", "input")]), 300.0);
    assert_eq!(value("quickact_model_tokens_total", &[model, ("kind", "output")]), 60.0);
    assert_eq!(value("quickact_model_tokens_total", &[model, ("kind", "cached")]), 0.0);
    assert_eq!(value("quickact_model_cost_nanos_total", &[model, ("currency", "CNY")]), 1_080_000.0);
    assert_eq!(value("quickact_model_turn_seconds_count", &[model, ("outcome", "ok")]), 3.0);
    assert_eq!(value("quickact_tool_calls_total", &[("tool", "unknown"), ("outcome", "error")]), 1.0);
    assert_eq!(value("quickact_tool_calls_total", &[("tool", "search_items"), ("outcome", "ok")]), 1.0);
    assert_eq!(value("quickact_tool_calls_total", &[("tool", "finish"), ("outcome", "ok")]), 2.0);
    assert_eq!(value("quickact_http_requests_total", &[("method", "POST"), ("route", "/api/quick-action"), ("status", "201")]), 3.0);
    assert_eq!(value("quickact_http_requests_total", &[("method", "POST"), ("route", "/api/quick-action/{id}/cancel"), ("status", "200")]), 1.0);
    assert_eq!(value("quickact_http_requests_total", &[("method", "GET"), ("route", "unmatched"), ("status", "404")]), 1.0);
    assert_eq!(value("quickact_http_request_seconds_count", &[("method", "POST"), ("route", "/api/quick-action")]), 3.0);
    assert_eq!(value("quickact_long_polls_open", &[]), 0.0);
    assert_eq!(value("quickact_sse_streams_open", &[]), 0.0);
    assert_eq!(value("quickact_queue_processing", &[]), 0.0);
    assert_eq!(after.get("quickact_database_errors_total", &[("kind", "unavailable")]), None);
    // Routes are patterns: no task id ever becomes a label.
    for labels in after.label_sets("quickact_http_requests_total") {
        assert!(!labels["route"].contains(&slow), "{labels:?}");
    }
    assert!(after.text.contains("# HELP quickact_tasks_finished_total"), "metrics are described");
    app.shutdown().await;
}
