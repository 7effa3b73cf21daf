//! The soak run, on demand (never in CI): `scripts/soak.sh [minutes] [tasks per second]`.
//!
//! Real processes against one database: the `quickact-api` binary and three `quickact-worker`
//! binaries, fed by a fake model that answers after a random 0-2 s, fails 5% of requests with a 500
//! and answers 1% with something that is not a usable reply (a body that is no chat completion, or a
//! tool call with broken JSON). Every `--kill-every` seconds one worker is SIGKILLed (in turn) and a
//! fresh one started. Sentences are submitted at a steady rate, each asking for one to-do with a
//! unique title and carrying an idempotency key.
//!
//! At the end it waits for every task to be final and checks what must hold whatever failed on the
//! way: every task final, no item written twice, and memory flat (RSS of the API and the workers at
//! the start and at the end). It prints a summary and exits non-zero when a check fails.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use quickact_testkit::{
    Reply, TestApp, TestAppOptions,
    processes::{rss_mib, spawn_api, spawn_worker},
};
use rand::Rng;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::process::Child;

struct Settings {
    minutes: f64,
    rate: f64,
    kill_every: Duration,
    worker_binary: String,
    api_binary: String,
}

fn settings() -> Settings {
    let mut args = std::env::args().skip(1);
    let mut s = Settings {
        minutes: 30.0,
        rate: 5.0,
        kill_every: Duration::from_secs(120),
        worker_binary: "target/release/quickact-worker".into(),
        api_binary: "target/release/quickact-api".into(),
    };
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--minutes" => s.minutes = value.parse().expect("--minutes: a number"),
            "--rate" => s.rate = value.parse().expect("--rate: tasks per second"),
            "--kill-every" => s.kill_every = Duration::from_secs(value.parse().expect("--kill-every: seconds")),
            "--worker-binary" => s.worker_binary = value,
            "--api-binary" => s.api_binary = value,
            other => panic!("unknown argument {other}"),
        }
    }
    s
}

/// The fake model's behaviour: slow, failing and garbled by chance, otherwise one create_item and
/// then finish.
fn misbehaving_model(request: &Value) -> Reply {
    let mut rng = rand::rng();
    let delay = Duration::from_millis(rng.random_range(0..=2000));
    let roll: f64 = rng.random();
    let reply = if roll < 0.05 {
        Reply::Status(500, "the fake model failed on purpose".into())
    } else if roll < 0.055 {
        Reply::Garbage("<html>not a chat completion</html>".into())
    } else if roll < 0.06 {
        Reply::RawTools(vec![("create_item".into(), "{\"title\": \"unterminated".into())])
    } else {
        let answered_a_tool = request["messages"].as_array().and_then(|m| m.last()).is_some_and(|m| m["role"] == "tool");
        if answered_a_tool {
            Reply::finish("action_completed", "done")
        } else {
            let sentence = quickact_testkit::fake_model::user_text(request);
            let title = sentence.split_whitespace().find(|w| w.starts_with("soak-")).unwrap_or("soak-unknown").to_owned();
            Reply::tool("create_item", json!({ "kind": "todo", "title": title }))
        }
    };
    Reply::Delayed(delay, Box::new(reply))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let settings = settings();
    let options = TestAppOptions::default()
        .workers(0)
        .env("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "100000")
        .env("QUICKACT_SUBMIT_RATE_PER_MINUTE", "0")
        .env("QUICKACT_MODEL_TIMEOUT_SECS", "10");
    let app = TestApp::start_with(options).await;
    app.fake.fallback(misbehaving_model);
    let (_, key) = app.create_user("soak").await;
    let (mut api, base) = spawn_api(&app, &settings.api_binary, &[]).await;
    let mut workers: Vec<Child> = (0..3).map(|_| spawn_worker(&app, &settings.worker_binary, &[])).collect();
    let client = reqwest::Client::builder().timeout(Duration::from_secs(150)).build().unwrap();

    let started = Instant::now();
    let run_for = Duration::from_secs_f64(settings.minutes * 60.0);
    let interval = Duration::from_secs_f64(1.0 / settings.rate);
    let mut next_kill = started + settings.kill_every;
    let (mut kills, mut submitted, mut refused) = (0usize, Vec::new(), 0usize);
    let mut rss_start = None;
    let mut ticker = tokio::time::interval(interval);
    println!("soak: {} min, {} tasks/s, a worker killed every {} s", settings.minutes, settings.rate, settings.kill_every.as_secs());
    while started.elapsed() < run_for {
        ticker.tick().await;
        let n = submitted.len() + refused;
        let sentence = format!("add soak-{n:06} to my list");
        let answer = client
            .post(format!("{base}/api/quick-action"))
            .bearer_auth(&key)
            .header("Idempotency-Key", format!("soak-{n}"))
            .json(&json!({ "text": sentence, "timeout": 120 }))
            .send()
            .await;
        match answer {
            Ok(answer) if answer.status() == StatusCode::CREATED => {
                let body: Value = answer.json().await.expect("a JSON answer");
                submitted.push(body["task_id"].as_str().expect("a task id").to_owned());
            }
            Ok(answer) => {
                refused += 1;
                eprintln!("submission {n} answered {}", answer.status());
            }
            Err(err) => {
                refused += 1;
                eprintln!("submission {n} failed: {err}");
            }
        }
        if rss_start.is_none() && started.elapsed() > Duration::from_secs(20) {
            rss_start = Some((rss_mib(&api), workers.iter().map(rss_mib).collect::<Vec<_>>()));
        }
        // No kill in the last seconds, so the end's memory reading sees processes that have run.
        if Instant::now() >= next_kill && started.elapsed() + Duration::from_secs(15) < run_for {
            let victim = kills % workers.len();
            workers[victim].start_kill().ok();
            let _ = workers[victim].wait().await;
            workers[victim] = spawn_worker(&app, &settings.worker_binary, &[]);
            kills += 1;
            next_kill += settings.kill_every;
            println!("{:>6.0} s: killed worker {victim} (kill {kills}), {} tasks submitted", started.elapsed().as_secs_f64(), submitted.len());
        }
    }
    let rss_end = (rss_mib(&api), workers.iter().map(rss_mib).collect::<Vec<_>>());

    // Every task must reach a final state; wait for each (the longest timeout is 120 s).
    println!("submission over after {:.0} s; waiting for every task to be final", started.elapsed().as_secs_f64());
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    let mut unfinished = Vec::new();
    for id in &submitted {
        let task: Value = client
            .get(format!("{base}/api/quick-action/{id}?wait=true&timeout=60"))
            .bearer_auth(&key)
            .send()
            .await
            .expect("the API answers")
            .json()
            .await
            .expect("a task");
        let status = task["status"].as_str().unwrap_or("?").to_owned();
        if status == "pending" || status == "processing" {
            unfinished.push(id.clone());
        }
        *statuses.entry(status).or_default() += 1;
    }
    let duplicates: Vec<(String, i64)> = sqlx::query_as("SELECT title, count(*) FROM items WHERE deleted_at IS NULL GROUP BY title HAVING count(*) > 1")
        .fetch_all(&app.pool)
        .await
        .expect("count items");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("count items");

    println!("tasks submitted: {} (refused at submission: {refused}); by status: {statuses:?}", submitted.len());
    println!("items written: {items}; titles written more than once: {}", duplicates.len());
    println!("workers killed: {kills}");
    if let Some((api_start, workers_start)) = &rss_start {
        println!("RSS MiB at 20 s: api {api_start:.1}, workers {workers_start:.1?}");
    }
    println!("RSS MiB at the end: api {:.1}, workers {:.1?}", rss_end.0, rss_end.1);
    let mut failed = false;
    if !unfinished.is_empty() {
        failed = true;
        println!("FAIL: {} tasks not final, e.g. {:?}", unfinished.len(), &unfinished[..unfinished.len().min(5)]);
    }
    if !duplicates.is_empty() {
        failed = true;
        println!("FAIL: items written twice: {:?}", &duplicates[..duplicates.len().min(5)]);
    }
    for child in workers.iter_mut().chain(std::iter::once(&mut api)) {
        child.start_kill().ok();
    }
    app.shutdown().await;
    println!("{}", if failed { "soak FAILED" } else { "soak passed" });
    std::process::exit(i32::from(failed));
}
