//! What an operator sees of a worker process: its JSON logs and its Prometheus metrics.

use std::{sync::Arc, time::Duration};

use quickact_testkit::{LoggedProcess, Reply, TestApp, TestAppOptions, prometheus::scrape, wait_for};
use serde_json::Value;
use tokio::sync::Notify;

const WORKER_BINARY: &str = env!("CARGO_BIN_EXE_quickact-worker");

/// The process's log lines, each parsed as JSON (a line that is not JSON fails the test).
fn json_lines(process: &LoggedProcess) -> Vec<Value> {
    process
        .lines()
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {line}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_json_log_line_of_a_run_names_its_task_user_and_worker() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let (user, key) = app.create_user("alice").await;
    app.fake.script("logged run", vec![Reply::tool("no_such_tool", serde_json::json!({})), Reply::look_up_and_finish("done")]);
    let mut process = app.spawn_logged_worker_process(WORKER_BINARY, &[("QUICKACT_LOG_FORMAT", "json"), ("QUICKACT_WORKER_NAME", "logtest")]);
    let id = app.submit_id(&key, "logged run").await;
    let task = app.wait_final(&key, &id, 30).await;
    assert_eq!(task["status"], "success", "{task:#}");
    // The worker logs "task finished" after the commit the long-poll woke on: wait for that line.
    wait_for("the run's last log line", Duration::from_secs(10), || {
        let lines = json_lines(&process);
        async move { lines.iter().any(|l| l["fields"]["message"] == "task finished").then_some(()).ok_or(lines) }
    })
    .await;
    let status = process.terminate();
    assert!(status.success(), "{status:?}");

    let lines = json_lines(&process);
    let run_lines: Vec<&Value> = lines.iter().filter(|l| l["span"]["name"] == "run").collect();
    let messages: Vec<&str> = run_lines.iter().filter_map(|l| l["fields"]["message"].as_str()).collect();
    assert!(messages.contains(&"task claimed") && messages.contains(&"task finished"), "{messages:?}");
    for line in &run_lines {
        assert_eq!(line["span"]["task_id"], id.as_str(), "{line}");
        assert_eq!(line["span"]["user_id"], user["id"], "{line}");
        assert!(line["span"]["worker"].as_str().is_some_and(|w| w.starts_with("logtest-")), "{line}");
        assert!(line["level"].is_string() && line["timestamp"].is_string(), "{line}");
    }
    // Nothing the worker logged about this task escaped the run's span.
    let stray: Vec<&Value> = lines.iter().filter(|l| l["fields"]["task_id"] == id.as_str() && l["span"]["name"] != "run").collect();
    assert!(stray.is_empty(), "lines about the task outside its run: {stray:#?}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_process_serves_metrics_of_the_tasks_it_ran() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    app.fake.script("process one", vec![Reply::look_up_and_finish("done")]);
    app.fake.script("process two", vec![Reply::finish("error", "cannot")]);
    let gate = Arc::new(Notify::new());
    app.fake.script("process slow", vec![Reply::Gated(gate.clone(), Box::new(Reply::look_up_and_finish("slow but done")))]);
    let mut process = app.spawn_logged_worker_process(
        WORKER_BINARY,
        &[("QUICKACT_LOG_FORMAT", "json"), ("QUICKACT_WORKER_METRICS_BIND", "127.0.0.1:0")],
    );
    // Port 0: the worker says in its log where it listens.
    let address = wait_for("the worker's metrics address", Duration::from_secs(20), || {
        let lines = json_lines(&process);
        async move {
            lines
                .iter()
                .find(|l| l["fields"]["message"] == "worker metrics listening")
                .and_then(|l| l["fields"]["address"].as_str().map(str::to_owned))
                .ok_or(lines.len())
        }
    })
    .await;
    let url = format!("http://{address}/metrics");

    for text in ["process one", "process two"] {
        let id = app.submit_id(&key, text).await;
        app.wait_final(&key, &id, 30).await;
    }
    let slow = app.submit_id(&key, "process slow").await;
    app.fake.wait_for_requests("process slow", 1, Duration::from_secs(20)).await;
    let during = scrape(&app.client, &url).await;
    assert_eq!(during.value("quickact_worker_running_tasks", &[]), 1.0);
    assert_eq!(during.value("quickact_queue_processing", &[]), 1.0);
    gate.notify_one();
    assert_eq!(app.wait_final(&key, &slow, 30).await["status"], "success");

    // The task's verdict commits before the worker counts it, and the run leaves the worker's
    // running set after that: wait for both, then read it all.
    let after = wait_for("the third finished task in the worker's metrics", Duration::from_secs(10), || {
        let (client, url) = (app.client.clone(), url.clone());
        async move {
            let scraped = scrape(&client, &url).await;
            let success = scraped.get("quickact_tasks_finished_total", &[("status", "success"), ("verdict", "action_completed")]);
            let running = scraped.get("quickact_worker_running_tasks", &[]);
            if success == Some(2.0) && running == Some(0.0) { Ok(scraped) } else { Err((success, running)) }
        }
    })
    .await;
    assert_eq!(after.value("quickact_tasks_finished_total", &[("status", "failed"), ("verdict", "error")]), 1.0);
    assert_eq!(after.value("quickact_task_post_to_verdict_seconds_count", &[("status", "success")]), 2.0);
    let model = ("model", "fake-model");
    assert_eq!(after.value("quickact_model_tokens_total", &[model, ("kind", "input")]), 300.0);
    assert_eq!(after.value("quickact_model_turn_seconds_count", &[model, ("outcome", "ok")]), 3.0);
    assert_eq!(after.value("quickact_tool_calls_total", &[("tool", "search_items"), ("outcome", "ok")]), 2.0);
    assert_eq!(after.value("quickact_tool_calls_total", &[("tool", "finish"), ("outcome", "ok")]), 3.0);
    assert_eq!(after.value("quickact_worker_running_tasks", &[]), 0.0);
    assert_eq!(after.value("quickact_queue_pending", &[]), 0.0);
    // A process of its own: what only the API counts is not here.
    assert!(!after.has("quickact_tasks_submitted_total") && !after.has("quickact_http_requests_total"), "{}", after.text);
    assert!(process.terminate().success());
    app.shutdown().await;
}

/// A worker whose connections, with the other live workers' and an API's, may not fit the server's
/// `max_connections` says so at start (the chaos suite saw such a fleet starve its own pools).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_may_not_fit_the_servers_connections_says_so() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let max: String = sqlx::query_scalar("SHOW max_connections").fetch_one(&app.pool).await.unwrap();
    let too_many = (max.parse::<u32>().unwrap() + 1).to_string();
    let mut fits = app.spawn_logged_worker_process(WORKER_BINARY, &[("QUICKACT_DATABASE_CONNECTIONS", "20")]);
    let mut does_not = app.spawn_logged_worker_process(WORKER_BINARY, &[("QUICKACT_DATABASE_CONNECTIONS", too_many.as_str())]);
    let warned = |process: &LoggedProcess| process.lines().iter().any(|l| l.contains("more than the server takes"));
    wait_for("the warning", Duration::from_secs(20), || {
        let lines = does_not.lines();
        async move { lines.iter().any(|l| l.contains("more than the server takes")).then_some(()).ok_or(lines.len()) }
    })
    .await;
    // The one that fits started as far (it answers a task) and said nothing of it.
    let (_, key) = app.create_user("alice").await;
    app.fake.script("fits", vec![Reply::look_up_and_finish("done")]);
    does_not.terminate();
    let id = app.submit_id(&key, "fits").await;
    assert_eq!(app.wait_final(&key, &id, 30).await["status"], "success");
    fits.terminate();
    assert!(!warned(&fits), "{:?}", fits.lines());
    app.shutdown().await;
}
