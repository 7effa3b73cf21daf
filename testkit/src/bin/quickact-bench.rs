//! The benchmark harness, run on demand (never as part of the tests):
//!
//! ```sh
//! SQLX_OFFLINE=true cargo run --release -p quickact-testkit --bin quickact-bench -- [rounds]
//! ```
//!
//! It starts the API and one worker in process on a fresh database (DATABASE_URL's server, or a
//! throwaway cluster), with a fake model that answers `finish` instantly, and measures:
//! - **latency**: POST a sentence, then long-poll `GET ?wait=true`; the time from the POST to the
//!   verdict in the client's hands, sequentially, so it is pure pipeline latency;
//! - **throughput**: tasks queued while no worker runs, then one worker process (default
//!   concurrency) drains them; tasks per second from the worker's start to the last verdict.
//!
//! Each is repeated `rounds` times (default 5) and the median round is reported.

use std::time::{Duration, Instant};

use quickact_testkit::{Reply, TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::json;

const LATENCY_TASKS: usize = 100;
const THROUGHPUT_TASKS: usize = 400;

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let mut latency_medians = Vec::new();
    let mut latency_p90s = Vec::new();
    let mut throughputs = Vec::new();
    for round in 1..=rounds {
        let (median, p90) = latency_round().await;
        let rate = throughput_round().await;
        println!("round {round}: latency median {:.2} ms, p90 {:.2} ms; throughput {rate:.0} tasks/s", ms(median), ms(p90));
        latency_medians.push(median);
        latency_p90s.push(p90);
        throughputs.push(rate);
    }
    latency_medians.sort();
    latency_p90s.sort();
    throughputs.sort_by(f64::total_cmp);
    println!(
        "\nmedian of {rounds} rounds: POST-to-verdict latency {:.2} ms (p90 {:.2} ms, {LATENCY_TASKS} sequential tasks per round); \
         throughput {:.0} tasks/s through one worker ({THROUGHPUT_TASKS} tasks per round)",
        ms(latency_medians[rounds / 2]),
        ms(latency_p90s[rounds / 2]),
        throughputs[rounds / 2]
    );
}

async fn latency_round() -> (Duration, Duration) {
    let app = TestApp::start_with(TestAppOptions::default().workers(1)).await;
    app.fake.fallback(|_| Reply::finish("action_completed", "ok"));
    let (_, key) = app.create_user("bench").await;
    let mut samples = Vec::with_capacity(LATENCY_TASKS);
    for i in 0..LATENCY_TASKS + 5 {
        let started = Instant::now();
        let created = app.submit(&key, &format!("latency task {i}")).await;
        assert_eq!(created.status, StatusCode::CREATED);
        let id = created.body["task_id"].as_str().unwrap();
        let task = app.wait_final(&key, id, 30).await;
        let elapsed = started.elapsed();
        assert_eq!(task["status"], "success");
        if i >= 5 {
            samples.push(elapsed); // the first few warm up connections and caches
        }
    }
    samples.sort();
    let result = (samples[samples.len() / 2], samples[samples.len() * 9 / 10]);
    app.shutdown().await;
    result
}

async fn throughput_round() -> f64 {
    // All tasks belong to one user: lift the per-user limit on unfinished tasks.
    let mut app = TestApp::start_with(TestAppOptions::default().workers(0).env("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "100000")).await;
    app.fake.fallback(|_| Reply::finish("action_completed", "ok"));
    let (_, key) = app.create_user("bench").await;
    let mut ids = Vec::with_capacity(THROUGHPUT_TASKS);
    for i in 0..THROUGHPUT_TASKS {
        let created = app.call(&key, Method::POST, "/api/quick-action", Some(json!({"text": format!("throughput task {i}"), "timeout": 120}))).await;
        assert_eq!(created.status, StatusCode::CREATED);
        ids.push(created.body["task_id"].as_str().unwrap().to_owned());
    }
    let started = Instant::now();
    app.start_worker().await;
    loop {
        let done: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE status = 'success'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
        if done as usize == THROUGHPUT_TASKS {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "the worker stalled at {done} tasks");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = started.elapsed();
    app.shutdown().await;
    THROUGHPUT_TASKS as f64 / elapsed.as_secs_f64()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
