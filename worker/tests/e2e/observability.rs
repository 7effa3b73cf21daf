//! What an operator sees of a worker process: its JSON logs and its Prometheus metrics.

use std::time::Duration;

use quickact_testkit::{LoggedProcess, Reply, TestApp, TestAppOptions, wait_for};
use serde_json::Value;

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
