//! The fleet's limits of a model, the pauses a model asks for, and the fallback chain, with real
//! worker processes sharing one Postgres (issue 32, points 4 and 5).

use std::time::{Duration, Instant};

use quickact_testkit::{Reply, TestApp, TestAppOptions, processes::spawn_worker};
use reqwest::Method;
use serde_json::{Value, json};

const WORKER_BINARY: &str = env!("CARGO_BIN_EXE_quickact-worker");

/// Submits `text` with a timeout of `timeout_secs`; returns the task id.
async fn submit(app: &TestApp, key: &str, text: &str, timeout_secs: u64) -> String {
    let answer = app.call(key, Method::POST, "/api/quick-action", Some(json!({ "text": text, "timeout": timeout_secs }))).await;
    answer.body["task_id"].as_str().unwrap_or_else(|| panic!("submitted: {:?}", answer.body)).to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_model_limit_holds_across_worker_processes_and_slows_tasks_without_failing_them() {
    // 20 requests a minute in bursts of 20: the 21st waits 3 s, the 22nd 6 s, ...
    let options = TestAppOptions::default()
        .workers(0)
        .env("QUICKACT_MODEL_LIMITS", r#"{"fake-model": {"requests_per_minute": 20}}"#)
        .env("QUICKACT_WORKER_CONCURRENCY", "8");
    let (app, key) = TestApp::start_with_options_and_user(options, "lim").await;
    app.fake.fallback(|_| Reply::look_up_and_finish("done within the limit"));
    let _workers: Vec<_> = (0..3).map(|_| spawn_worker(&app, WORKER_BINARY, &[])).collect();

    let mut ids = Vec::new();
    for i in 0..26 {
        ids.push(submit(&app, &key, &format!("limited task {i}"), 90).await);
    }
    for id in &ids {
        let task = app.wait_final(&key, id, 90).await;
        assert_eq!(task["status"], "success", "a limit slows a task, never fails it: {task:#}");
    }

    let mut arrivals: Vec<Instant> = app.fake.received().iter().map(|received| received.at).collect();
    arrivals.sort();
    assert_eq!(arrivals.len(), 26, "one request per task");
    let first = arrivals[0];
    for (n, at) in arrivals.iter().enumerate() {
        // The budget allows the burst, then one request every 3 s (a little slack for clocks).
        let allowed = 20 + ((*at - first).as_secs_f64() + 0.3) as usize / 3;
        assert!(n < allowed, "request {} arrived {:?} after the first: more than the limit allows", n + 1, *at - first);
    }
    let waits: i64 = sqlx::query_scalar("SELECT sum(provider_waits)::int8 FROM quick_action_tasks").fetch_one(&app.pool).await.unwrap();
    assert!(waits > 0, "tasks beyond the burst were handed back to wait, holding no run slot");
    let failures: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE last_error IS NOT NULL").fetch_one(&app.pool).await.unwrap();
    assert_eq!(failures, 0, "a wait for the model is not a failed attempt");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_models_pause_stops_every_worker_with_one_probe_per_pause_and_no_task_fails() {
    let options = TestAppOptions::default().workers(0).env("QUICKACT_WORKER_CONCURRENCY", "4");
    let (app, key) = TestApp::start_with_options_and_user(options, "pau").await;
    app.fake.fallback(|_| Reply::look_up_and_finish("done after the storm"));
    let storm = Duration::from_secs(6);
    app.fake.rate_limit_everything(storm, 2);
    let storm_began = Instant::now();
    let _workers: Vec<_> = (0..3).map(|_| spawn_worker(&app, WORKER_BINARY, &[])).collect();

    let mut ids = Vec::new();
    for i in 0..12 {
        ids.push(submit(&app, &key, &format!("paused task {i}"), 60).await);
    }
    for id in &ids {
        let task = app.wait_final(&key, id, 60).await;
        assert_eq!(task["status"], "success", "{task:#}");
    }

    let received = app.fake.received();
    let refused: Vec<Instant> = received.iter().map(|r| r.at).filter(|at| *at < storm_began + storm).collect();
    let first_refusal = *refused.iter().min().expect("the storm refused requests");
    // Requests already on their way when the first 429 arrived are let be; after that, each 2 s
    // pause lets one probe through for the whole fleet (one per worker at most, the goal says).
    let after_the_pause_began = refused.iter().filter(|at| **at > first_refusal + Duration::from_millis(500)).count();
    let pauses = (storm.as_secs_f64() / 2.0).ceil() as usize + 1;
    assert!(after_the_pause_began <= pauses * 3, "{after_the_pause_began} requests reached the paused model (at most {} probes)", pauses * 3);
    let waits: i64 = sqlx::query_scalar("SELECT sum(provider_waits)::int8 FROM quick_action_tasks").fetch_one(&app.pool).await.unwrap();
    assert!(waits > 0, "tasks waited for the model handed back, holding no run slot");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_requests_waiting_for_a_pauses_probe_go_when_it_answers_in_every_worker() {
    use quickact_shared::store::providers::pause_provider;

    let options = TestAppOptions::default().workers(0).env("QUICKACT_WORKER_CONCURRENCY", "4");
    let (app, key) = TestApp::start_with_options_and_user(options, "prb").await;
    app.fake.fallback(|_| Reply::look_up_and_finish("done after the probe"));
    // The probe's answer takes a while: the others ask while it is out.
    app.fake.model_latency("fake-model", Duration::from_millis(500));
    pause_provider(&app.pool, "fake-model", Duration::from_secs(3)).await.unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        ids.push(submit(&app, &key, &format!("after the probe {i}"), 60).await);
    }
    let _workers: Vec<_> = (0..2).map(|_| spawn_worker(&app, WORKER_BINARY, &[])).collect();
    for id in &ids {
        let task = app.wait_final(&key, id, 60).await;
        assert_eq!(task["status"], "success", "{task:#}");
    }

    // The first request after the pause is the probe; the others, in both workers, went when it
    // answered (its end is announced), not when the 5 s probe window ran out.
    let arrivals: Vec<Instant> = app.fake.received().iter().map(|r| r.at).collect();
    let probe = *arrivals.iter().min().expect("the model was asked");
    let last = *arrivals.iter().max().expect("the model was asked");
    assert!(last - probe < Duration::from_secs(4), "the last request came {:?} after the probe", last - probe);
    // And they waited for it in their worker: the pause alone handed tasks back, once at most.
    let waits: Vec<i32> = sqlx::query_scalar("SELECT provider_waits FROM quick_action_tasks").fetch_all(&app.pool).await.unwrap();
    assert!(waits.iter().all(|w| *w <= 1), "a task was handed back for the probe's answer: {waits:?}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_model_whose_retries_are_spent_hands_the_run_to_the_next_model_of_the_chain() {
    let options = TestAppOptions::default()
        .workers(0)
        .env("QUICKACT_MODEL_FALLBACK", "backup-model")
        .env(
            "QUICKACT_MODEL_PRICES",
            r#"{"fake-model": {"input": 2.0, "output": 8.0}, "backup-model": {"input": 1.0, "output": 1.0}}"#,
        );
    let (app, key) = TestApp::start_with_options_and_user(options, "fal").await;
    let mut script = vec![Reply::tool("search_items", json!({}))];
    script.extend(std::iter::repeat_n(Reply::Status(503, "overloaded".into()), 6));
    script.push(Reply::finish("action_completed", "found it with the backup"));
    app.fake.script("fall back", script);
    let _worker = spawn_worker(&app, WORKER_BINARY, &[]);

    let id = submit(&app, &key, "fall back please", 90).await;
    let task = app.wait_final(&key, &id, 90).await;
    assert_eq!(task["status"], "success", "{task:#}");

    let asked: Vec<Value> = app.fake.requests_for("fall back").iter().map(|r| r["model"].clone()).collect();
    assert_eq!(asked.len(), 8, "{asked:?}");
    assert!(asked[..7].iter().all(|m| m == "fake-model") && asked[7] == "backup-model", "{asked:?}");

    // The verdict says which model answered each turn, and where the run fell back.
    let turns = task["result"]["model_turns"].as_array().unwrap();
    assert_eq!(turns.len(), 8, "{turns:#?}");
    assert_eq!((turns[0]["model"].as_str(), turns[0]["ok"].as_bool()), (Some("fake-model"), Some(true)));
    assert_eq!(turns[6]["fallback_to"], "backup-model", "{turns:#?}");
    assert_eq!((turns[7]["model"].as_str(), turns[7]["ok"].as_bool()), (Some("backup-model"), Some(true)));
    // The journal too.
    let answered: Vec<&str> =
        task["steps"].as_array().unwrap().iter().filter(|s| s["kind"] == "model_turn" && s["ok"] == true).map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(answered, ["fake-model", "backup-model"]);
    // Each turn is priced by its model: 100 in, 20 out at 2/8 and at 1/1 per million.
    let amount = task["cost"]["amount"].as_f64().unwrap();
    assert!((amount - (0.000_36 + 0.000_12)).abs() < 1e-9, "cost {amount}");
    assert_eq!(task["model_used"], "backup-model", "the model that finished the task");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_token_limit_is_debited_with_each_turns_usage_and_holds_the_turns_after_a_debt() {
    // 1,200 tokens a minute and 120 a turn (the fake's usage: 100 in, 20 out): each turn puts the
    // budget 6 s ahead, and a minute's worth may be spent at once, so 11 turns go, then one per 6 s.
    let options = TestAppOptions::default().workers(0).env("QUICKACT_MODEL_LIMITS", r#"{"fake-model": {"tokens_per_minute": 1200}}"#);
    let (app, key) = TestApp::start_with_options_and_user(options, "tok").await;
    app.fake.fallback(|_| Reply::look_up_and_finish("done within the tokens"));
    let _worker = spawn_worker(&app, WORKER_BINARY, &[]);

    for i in 0..13 {
        let id = submit(&app, &key, &format!("token task {i}"), 60).await;
        let task = app.wait_final(&key, &id, 60).await;
        assert_eq!(task["status"], "success", "{task:#}");
    }
    let arrivals: Vec<Instant> = app.fake.received().iter().map(|r| r.at).collect();
    assert_eq!(arrivals.len(), 13);
    // After n turns the budget runs 6n s ahead, and a turn goes when it is at most 60 s ahead:
    // the 12th no sooner than 6 s after the first, the 13th 12 s (a little slack for clocks).
    assert!(arrivals[11] - arrivals[0] >= Duration::from_millis(5_800), "the 12th turn waited for the debt: {:?}", arrivals[11] - arrivals[0]);
    assert!(arrivals[12] - arrivals[0] >= Duration::from_millis(11_800), "and the 13th: {:?}", arrivals[12] - arrivals[0]);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_task_whose_deadline_passes_while_its_model_is_paused_times_out_without_asking_it() {
    use quickact_shared::store::providers::pause_provider;

    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "dl").await;
    app.fake.fallback(|_| Reply::look_up_and_finish("never asked"));
    // Another worker met a 429 asking for a minute.
    pause_provider(&app.pool, "fake-model", Duration::from_secs(60)).await.unwrap();
    let _worker = spawn_worker(&app, WORKER_BINARY, &[]);

    let id = submit(&app, &key, "paused for too long", 3).await;
    let task = app.wait_final(&key, &id, 30).await;
    assert_eq!(task["status"], "timeout", "{task:#}");
    assert!(app.fake.requests().is_empty(), "the paused model was not asked");
    let (attempts, waits): (i32, i32) =
        sqlx::query_as("SELECT attempts, provider_waits FROM quick_action_tasks").fetch_one(&app.pool).await.unwrap();
    assert!(waits >= 1 && attempts >= waits, "the run handed its task back to wait: {attempts} claims, {waits} waits");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_model_paused_past_the_tasks_deadline_leaves_the_run_to_the_next_model() {
    use quickact_shared::store::providers::pause_provider;

    let options = TestAppOptions::default().workers(0).env("QUICKACT_MODEL_FALLBACK", "backup-model");
    let (app, key) = TestApp::start_with_options_and_user(options, "pfb").await;
    app.fake.fallback(|_| Reply::look_up_and_finish("done by the backup"));
    // The backup answers slower (per-model latency): still well within the task's time.
    app.fake.model_latency("backup-model", Duration::from_millis(300));
    pause_provider(&app.pool, "fake-model", Duration::from_secs(120)).await.unwrap();
    let _worker = spawn_worker(&app, WORKER_BINARY, &[]);

    let id = submit(&app, &key, "paused primary", 20).await;
    let task = app.wait_final(&key, &id, 30).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert!(app.fake.requests_of_model("fake-model").is_empty(), "the paused model was not asked");
    assert_eq!(app.fake.requests_of_model("backup-model").len(), 1);
    let turns = task["result"]["model_turns"].as_array().unwrap();
    assert_eq!(turns[0]["fallback_to"], "backup-model", "{turns:#?}");
    assert_eq!(turns[1]["model"], "backup-model", "{turns:#?}");
    app.shutdown().await;
}
