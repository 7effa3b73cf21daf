//! The backbone: API -> queue -> worker -> agent -> verdict -> long-poll, and its bookkeeping.

use std::time::{Duration, Instant};

use quickact_testkit::{Reply, TestApp, TestAppOptions, wait_for, wait_until};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_verdict_reaches_a_long_polling_client() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.fake.script("开会", vec![Reply::look_up_and_finish("已创建会议").delayed(Duration::from_millis(300))]);

    let created = app.submit(&key, "明天下午3点到4点开会").await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.body["status"], "pending");
    let id = created.body["task_id"].as_str().unwrap().to_owned();
    assert_eq!(created.body["status_url"], format!("/api/quick-action/{id}"));
    assert!(created.body["created_at"].is_string());

    // The client is already waiting when the worker finishes (the model answers after 300 ms).
    let task = app.wait_final(&key, &id, 20).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["result"]["type"], "action_completed");
    assert_eq!(task["result"]["message"], "已创建会议");
    assert_eq!(task["input_text"], "明天下午3点到4点开会");
    assert!(task["started_at"].is_string() && task["completed_at"].is_string());
    assert!(task["duration"].as_f64().unwrap() >= 0.3, "{task:#}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wait_true_answers_with_the_verdict() {
    let (app, key) = TestApp::start_with_user("bob").await;
    app.fake.script("buy milk", vec![Reply::finish("error", "nothing to do")]);
    let keyed = || async {
        let request = app.request(&key, Method::POST, "/api/quick-action").header("Idempotency-Key", "milk-1");
        let response = request.json(&json!({"text": "buy milk", "wait": true})).send().await.unwrap();
        (response.status(), response.json::<Value>().await.unwrap())
    };
    let (status, answer) = keyed().await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(answer["status"], "failed");
    assert_eq!(answer["result"]["type"], "error");
    assert!(answer["result"]["suggestion"].is_string(), "an error verdict always carries a suggestion");
    assert_eq!(answer["result"]["tool_calls"][0]["name"], "finish", "the verdict lists its run: {answer:#}");
    // A replay of the key answers the same verdict, listing the same run.
    let (_, replayed) = keyed().await;
    assert_eq!((&replayed["task_id"], &replayed["result"]), (&answer["task_id"], &answer["result"]));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tokens_cost_and_steps_are_recorded() {
    let (app, key) = TestApp::start_with_user("carol").await;
    app.fake.script(
        "record me",
        vec![
            Reply::RawTools(vec![("no_such_tool".into(), "{}".into())]).with_usage(1000, 50, 400),
            Reply::look_up_and_finish("done").with_usage(1200, 30, 1000),
        ],
    );
    let id = app.submit_id(&key, "record me").await;
    let task = app.wait_final(&key, &id, 20).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["tokens_used"], json!({"input": 2200, "output": 80, "cached": 1400, "total": 2280}));
    // Prices per million: input 2.0, output 8.0, cached input 0.5.
    // Turn 1: 600 fresh + 400 cached in, 50 out; turn 2: 200 fresh + 1000 cached in, 30 out.
    let expected = (600.0 * 2.0 + 400.0 * 0.5 + 50.0 * 8.0 + 200.0 * 2.0 + 1000.0 * 0.5 + 30.0 * 8.0) / 1e6;
    let amount = task["cost"]["amount"].as_f64().unwrap();
    assert!((amount - expected).abs() < 1e-9, "cost {amount} != {expected}");
    assert_eq!(task["cost"]["currency"], "CNY");
    assert_eq!(task["model_used"], "fake-model");

    let steps = task["steps"].as_array().unwrap();
    let kinds: Vec<(&str, &str, bool)> =
        steps.iter().map(|s| (s["kind"].as_str().unwrap(), s["name"].as_str().unwrap(), s["ok"].as_bool().unwrap())).collect();
    assert_eq!(
        kinds,
        vec![
            ("model_turn", "fake-model", true),
            ("tool_call", "no_such_tool", false),
            ("model_turn", "fake-model", true),
            ("tool_call", "search_items", true),
            ("tool_call", "finish", true)
        ]
    );
    assert_eq!(steps[0]["tokens"], json!({"input": 1000, "output": 50, "cached": 400}));
    assert!(steps[1]["error"].as_str().unwrap().contains("unknown tool"), "{:#}", steps[1]);
    let seqs: Vec<i64> = steps.iter().map(|s| s["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, vec![0, 1, 2, 3, 4]);
    assert_eq!(task["result"]["tool_calls"].as_array().unwrap().len(), 3);
    assert_eq!(task["result"]["model_turns"].as_array().unwrap().len(), 2);

    // The verdict's row does not repeat the journal: the calls and turns are built from it when
    // read, in a listing as in GET.
    let id: uuid::Uuid = task["task_id"].as_str().unwrap().parse().unwrap();
    let stored: Value = sqlx::query_scalar("SELECT result FROM quick_action_tasks WHERE id = $1").bind(id).fetch_one(&app.pool).await.unwrap();
    assert!(stored.get("tool_calls").is_none() && stored.get("model_turns").is_none(), "{stored:#}");
    assert_eq!(stored["message"], task["result"]["message"]);
    let listed = app.call(&key, Method::GET, "/api/quick-action", None).await.body;
    let listed = listed["tasks"].as_array().unwrap().iter().find(|t| t["task_id"] == task["task_id"]).expect("listed").clone();
    assert_eq!(listed["result"], task["result"], "a listing shows the verdict as GET does");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unknown_tools_and_malformed_arguments_go_back_to_the_model() {
    let (app, key) = TestApp::start_with_user("dave").await;
    app.fake.script(
        "malformed",
        vec![
            // Two calls in one turn: broken JSON, and a schema violation (unknown result_type).
            Reply::RawTools(vec![
                ("finish".into(), "{\"result_type\": \"action_completed\", \"message\": ".into()),
                ("finish".into(), "{\"result_type\": \"done\", \"message\": \"ok\"}".into()),
            ]),
            Reply::tool("teleport", json!({"where": "mars"})),
            Reply::look_up_and_finish("recovered"),
        ],
    );
    let id = app.submit_id(&key, "malformed arguments please").await;
    let task = app.wait_final(&key, &id, 20).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["result"]["message"], "recovered");

    let requests = app.fake.requests_for("malformed arguments");
    assert_eq!(requests.len(), 3);
    // Every tool call id was answered, with what was wrong.
    let second_turn = requests[1]["messages"].as_array().unwrap();
    let tool_answers: Vec<&Value> = second_turn.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_answers.len(), 2);
    assert!(tool_answers[0]["content"].as_str().unwrap().contains("not valid JSON"), "{:#}", tool_answers[0]);
    assert!(tool_answers[1]["content"].as_str().unwrap().contains("must be one of"), "{:#}", tool_answers[1]);
    let third_turn = requests[2]["messages"].as_array().unwrap();
    let last = third_turn.last().unwrap();
    assert_eq!(last["role"], "tool");
    assert!(last["content"].as_str().unwrap().contains("unknown tool \\\"teleport\\\""), "{last:#}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_plain_text_answer_gets_one_corrective_turn() {
    let (app, key) = TestApp::start_with_user("erin").await;
    app.fake.script("corrected", vec![Reply::Text("Sure, done!".into()), Reply::look_up_and_finish("ok")]);
    app.fake.script("stubborn", vec![Reply::Text("Sure, done!".into()), Reply::Text("Really done.".into())]);

    let first = app.submit_id(&key, "corrected").await;
    let task = app.wait_final(&key, &first, 20).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let second_request = &app.fake.requests_for("corrected")[1];
    assert_eq!(second_request["messages"].as_array().unwrap().last().unwrap()["role"], "user");

    let second = app.submit_id(&key, "stubborn").await;
    let task = app.wait_final(&key, &second, 20).await;
    assert_eq!(task["status"], "failed", "{task:#}");
    assert_eq!(task["result"]["type"], "error");
    assert!(task["result"]["message"].as_str().unwrap().contains("Really done."));
    assert_eq!(app.fake.requests_for("stubborn").len(), 2, "exactly one corrective turn");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_model_500_is_retried_with_backoff_then_succeeds() {
    let (app, key) = TestApp::start_with_user("frank").await;
    app.fake.script(
        "flaky",
        vec![
            Reply::Status(500, "upstream exploded".into()),
            Reply::Status(429, "slow down".into()),
            Reply::Garbage("<html>bad gateway</html>".into()),
            Reply::look_up_and_finish("third time lucky"),
        ],
    );
    let id = app.submit_id(&key, "flaky model").await;
    let task = app.wait_final(&key, &id, 30).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let steps = task["steps"].as_array().unwrap();
    let failed: Vec<&Value> = steps.iter().filter(|s| s["kind"] == "model_turn" && s["ok"] == false).collect();
    assert_eq!(failed.len(), 3, "{steps:#?}");
    assert!(failed[0]["error"].as_str().unwrap().contains("500"));
    assert!(failed[1]["error"].as_str().unwrap().contains("429"));
    // Backoff: 0.5 s, 1 s, 2 s between the four attempts.
    let first = chrono_of(&failed[0]["started_at"]);
    let last_turn = steps.iter().rfind(|s| s["kind"] == "model_turn").unwrap();
    let gap = chrono_of(&last_turn["started_at"]) - first;
    assert!(gap >= chrono::Duration::milliseconds(3000), "retries were not spaced out: {gap}");
    // Only the successful turn is paid for.
    assert_eq!(task["tokens_used"]["input"], 100);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_model_that_keeps_failing_ends_with_an_error_verdict() {
    let (app, key) = TestApp::start_with_user("gina").await;
    app.fake.script("rejected", vec![Reply::Status(401, "invalid api key".into())]);
    let id = app.submit_id(&key, "rejected request").await;
    let task = app.wait_final(&key, &id, 20).await;
    assert_eq!(task["status"], "failed", "{task:#}");
    assert_eq!(task["result"]["type"], "error");
    let message = task["result"]["message"].as_str().unwrap();
    assert!(!message.contains("401") && !message.contains("invalid api key"), "the provider's words stay out of the verdict: {message}");
    let failed_turn = task["steps"].as_array().unwrap().iter().find(|s| s["kind"] == "model_turn" && s["ok"] == false).unwrap();
    assert!(failed_turn["error"].as_str().unwrap().contains("401"), "they are kept in the journal: {failed_turn:#}");
    assert_eq!(app.fake.requests_for("rejected request").len(), 1, "a 401 is not retried");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_turns_without_finish_end_the_run() {
    let (app, key) = TestApp::start_with_user("hank").await;
    app.fake.script("endless", (0..12).map(|_| Reply::tool("nothing", json!({}))).collect());
    let id = app.submit_id(&key, "endless loop").await;
    let task = app.wait_final(&key, &id, 30).await;
    assert_eq!(task["status"], "failed", "{task:#}");
    assert!(task["result"]["message"].as_str().unwrap().contains("10 model turns"));
    assert_eq!(app.fake.requests_for("endless loop").len(), 10);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_task_past_its_timeout_ends_as_timeout() {
    let (app, key) = TestApp::start_with_user("ivy").await;
    app.fake.script("slow", vec![Reply::look_up_and_finish("too late").delayed(Duration::from_secs(5))]);
    let answer = app.call(&key, Method::POST, "/api/quick-action", Some(json!({"text": "slow model", "timeout": 1}))).await;
    let id = answer.body["task_id"].as_str().unwrap().to_owned();
    let started = Instant::now();
    let task = app.wait_final(&key, &id, 20).await;
    assert!(started.elapsed() < Duration::from_secs(4), "the timeout was not enforced");
    assert_eq!(task["status"], "timeout", "{task:#}");
    assert_eq!(task["result"]["type"], "error");
    assert!(task["result"]["suggestion"].is_string());
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_stops_a_processing_task_and_refuses_a_finished_one() {
    let (app, key) = TestApp::start_with_user("jack").await;
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    app.fake.script("cancel me", vec![Reply::Gated(gate.clone(), Box::new(Reply::look_up_and_finish("should not happen")))]);
    let id = app.submit_id(&key, "cancel me").await;
    wait_for_status(&app, &key, &id, "processing").await;

    let cancelled = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/cancel"), None).await;
    assert_eq!(cancelled.status, StatusCode::OK, "{:?}", cancelled.body);
    assert_eq!(cancelled.body["status"], "cancelled");
    assert_eq!(cancelled.body["result"]["type"], "error");
    gate.notify_waiters();

    // The worker stops and never overwrites the cancellation.
    let worker = &app.workers[0].runner;
    wait_until("the worker to end its run of the cancelled task", Duration::from_secs(10), || async move { worker.running_count() == 0 }).await;
    let task = app.wait_final(&key, &id, 5).await;
    assert_eq!(task["status"], "cancelled");
    // The turn that answered after the cancel was not recorded, nor were its tokens counted.
    assert_eq!(task["steps"].as_array().map(Vec::len), Some(0), "{task:#}");
    assert_eq!(task["tokens_used"]["total"], 0, "{task:#}");
    let again = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/cancel"), None).await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(again.body["error"]["code"], "task_finished");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pending_task_can_be_cancelled_before_any_worker_sees_it() {
    let (app, key) = TestApp::start_with_options_and_user(quickact_testkit::TestAppOptions::default().workers(0), "kim").await;
    let id = app.submit_id(&key, "never mind").await;
    let cancelled = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/cancel/"), None).await;
    assert_eq!(cancelled.status, StatusCode::OK);
    assert_eq!(cancelled.body["status"], "cancelled");
    // A worker arriving later never takes it: a final task is no longer in the queue.
    let mut app = app;
    app.start_worker().await;
    app.fake.fallback(|_| Reply::look_up_and_finish("ok"));
    let later = app.submit_id(&key, "a later task").await;
    assert_eq!(app.wait_final(&key, &later, 30).await["status"], "success", "the worker is taking tasks");
    assert!(app.fake.requests_for("never mind").is_empty());
    let attempts: i32 = sqlx::query_scalar("SELECT attempts FROM quick_action_tasks WHERE id = $1::uuid")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(attempts, 0, "no worker claimed the cancelled task");
    app.shutdown().await;
}

/// A worker's fetch finds the tasks it takes through the unfinished-tasks index, however many
/// finished tasks the table keeps, and takes the oldest waiting ones first, skipping tasks another
/// worker holds a live lease on (see `quickact_shared::queue::fetch_tasks`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fetch_reads_the_tasks_it_takes_not_every_task_kept() {
    use quickact_shared::queue::fetch_tasks;

    let (app, key) = TestApp::start_with_options_and_user(quickact_testkit::TestAppOptions::default().workers(0), "kim").await;
    let held = app.submit_id(&key, "held by another worker").await;
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(app.submit_id(&key, &format!("fetch me {i}")).await);
    }
    let newest = app.submit_id(&key, "the newest").await;
    let mut tx = app.pool.begin().await.unwrap();
    sqlx::query("UPDATE quick_action_tasks SET status = 'processing', lease_owner = 'other', lease_expires_at = now() + interval '1 minute' WHERE id = $1::uuid")
        .bind(&held)
        .execute(&mut *tx)
        .await
        .unwrap();
    // Finished tasks kept for the history: the fetch must not read them.
    sqlx::query(
        "INSERT INTO quick_action_tasks (id, user_id, input_text, status, result_type, result, timeout_seconds,
                                         reference_time, time_zone, created_at, completed_at)
         SELECT gen_random_uuid(), user_id, 'old', 'success', 'action_completed', '{}', 30, now(), 'UTC',
                now() - interval '1 day', now() - interval '1 day'
         FROM quick_action_tasks t CROSS JOIN generate_series(1, 5000) WHERE t.id = $1::uuid",
    )
    .bind(&held)
    .execute(&mut *tx)
    .await
    .unwrap();
    sqlx::query("ANALYZE quick_action_tasks").execute(&mut *tx).await.unwrap();
    let taken: Vec<String> = fetch_tasks(&mut *tx, "fetch-test", 1, 3, 30.0, crate::turns::TURNS).await.unwrap().iter().map(|claimed| claimed.task.id.to_string()).collect();
    let (sequential, read): (i64, i64) = sqlx::query_as(
        "SELECT seq_scan, seq_tup_read FROM pg_stat_xact_all_tables WHERE relid = 'quick_action_tasks'::regclass",
    )
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    tx.rollback().await.unwrap();

    assert_eq!(taken, ids, "the fetch takes the three oldest waiting tasks, in order");
    assert!(!taken.contains(&newest) && !taken.contains(&held));
    assert_eq!((sequential, read), (0, 0), "the fetch scanned the task table sequentially");
    app.shutdown().await;
}

/// The queue is the task table: no job rows exist beside the tasks, and a verdict is the task's
/// acknowledgement (nothing stays leased).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_task_row_is_the_job_and_its_verdict_acknowledges_it() {
    let (app, key) = TestApp::start_with_user("lee").await;
    app.fake.fallback(|_| Reply::look_up_and_finish("ok"));
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(app.submit_id(&key, &format!("let go {i}")).await);
    }
    for id in &ids {
        assert_eq!(app.wait_final(&key, id, 30).await["status"], "success");
    }
    let apalis: Option<String> = sqlx::query_scalar("SELECT to_regnamespace('apalis')::text").fetch_one(&app.pool).await.unwrap();
    assert_eq!(apalis, None, "the apalis schema is gone");
    let (leased, attempts): (i64, i64) = sqlx::query_as(
        "SELECT count(lease_owner), sum(attempts)::int8 FROM quick_action_tasks WHERE id = ANY($1::uuid[])",
    )
    .bind(&ids)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!((leased, attempts), (0, 5), "each task claimed once and let go by its verdict");
    app.shutdown().await;
}

/// New tasks are announced once per inserting statement: a batch of submissions sends one
/// notification, not one per task (see `quickact_shared::queue`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn new_tasks_are_announced_once_per_statement() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "mo").await;
    let template = app.submit_id(&key, "template").await;
    let mut listener = sqlx::postgres::PgListener::connect_with(&app.pool).await.unwrap();
    listener.listen(quickact_shared::queue::TASKS_WAITING_CHANNEL).await.unwrap();
    sqlx::query(
        "INSERT INTO quick_action_tasks (id, user_id, input_text, timeout_seconds, reference_time, time_zone)
         SELECT gen_random_uuid(), user_id, 'batch ' || n, 30, now(), 'UTC'
         FROM quick_action_tasks t CROSS JOIN generate_series(1, 5) AS n WHERE t.id = $1::uuid",
    )
    .bind(&template)
    .execute(&app.pool)
    .await
    .unwrap();
    let mut heard = 0;
    while let Ok(notification) = tokio::time::timeout(Duration::from_millis(500), listener.recv()).await {
        notification.unwrap();
        heard += 1;
    }
    assert_eq!(heard, 1, "five tasks in one statement, one announcement");
    app.shutdown().await;
}

/// A worker's fetch (its claims) and bookkeeping commit without waiting for the disk; its verdicts
/// (the main pool) wait (see `quickact_shared::db::bookkeeping_pool`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_the_bookkeeping_pool_commits_without_waiting_for_the_disk() {
    let (app, key) = TestApp::start_with_user("noor").await;
    app.fake.fallback(|_| Reply::look_up_and_finish("ok"));
    let id = app.submit_id(&key, "bookkeeping").await;
    assert_eq!(app.wait_final(&key, &id, 30).await["status"], "success");
    let runner = &app.workers[0].runner;
    // The test server may itself run without synchronous commits; what matters is who asked.
    let setting = |pool: &sqlx::PgPool| {
        let pool = pool.clone();
        async move {
            sqlx::query_as::<_, (String, String)>("SELECT setting, source FROM pg_settings WHERE name = 'synchronous_commit'")
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(setting(&runner.bookkeeping).await, ("off".to_owned(), "client".to_owned()));
    assert_ne!(setting(&runner.pool).await.1, "client", "the main pool keeps the server's durable commits");
    app.shutdown().await;
}

/// Polls (test-side only) until the task shows `status`.
pub async fn wait_for_status(app: &TestApp, key: &str, id: &str, status: &str) {
    let path = format!("/api/quick-action/{id}");
    wait_for(&format!("task {id} to be {status}"), Duration::from_secs(20), || async {
        let answer = app.call(key, Method::GET, &path, None).await;
        if answer.body["status"] == status { Ok(()) } else { Err(answer.body) }
    })
    .await
}

fn chrono_of(value: &Value) -> chrono::DateTime<chrono::Utc> {
    value.as_str().unwrap().parse().unwrap()
}

/// The worker keeps users it has read (their model choice) and hears of every change to them: a
/// user's next task asks the model the user chose since.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_users_new_model_choice_is_used_by_their_next_task() {
    let (app, key) = TestApp::start_with_user("mia").await;
    app.fake.script("first choice", vec![Reply::look_up_and_finish("done")]);
    let first = app.submit_id(&key, "first choice").await;
    assert_eq!(app.wait_final(&key, &first, 20).await["model_used"], "fake-model");

    sqlx::query("UPDATE users SET model = 'fake-model-large' WHERE name = 'mia'").execute(&app.pool).await.unwrap();
    app.fake.script("second choice", vec![Reply::look_up_and_finish("done")]);
    let second = app.submit_id(&key, "second choice").await;
    let task = app.wait_final(&key, &second, 20).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["model_used"], "fake-model-large");
    assert_eq!(app.fake.requests_for("second choice")[0]["model"], "fake-model-large");
}

/// A remote turn whose calls only read is written with what they read, in one statement; a turn
/// that may change items is committed on its own before the run acts on it; a turn that only
/// finishes is written with the verdict. Every turn's tokens reach the task's totals.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_read_only_turn_is_written_with_its_reads() {
    let (app, key) = TestApp::start_with_user("nia").await;
    app.fake.script(
        "read then write",
        vec![
            Reply::Tools(vec![
                ("search_items".to_owned(), json!({ "query": "dentist" })),
                ("search_items".to_owned(), json!({ "query": "report" })),
            ])
            .with_usage(100, 10, 0),
            Reply::Tools(vec![
                ("search_items".to_owned(), json!({ "query": "review" })),
                ("create_item".to_owned(), json!({ "kind": "event", "title": "评审", "when": "明天下午2点" })),
            ])
            .with_usage(200, 20, 0),
            Reply::finish("action_completed", "done").with_usage(400, 40, 0),
        ],
    );
    let id = app.submit_id(&key, "read then write").await;
    let task = app.wait_final(&key, &id, 20).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["tokens_used"], json!({"input": 700, "output": 70, "cached": 0, "total": 770}));
    let steps: Vec<(&str, bool, Option<&str>)> = task["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["ok"].as_bool().unwrap(), s["arguments"]["query"].as_str()))
        .collect();
    assert_eq!(
        steps,
        vec![
            ("fake-model", true, None),
            ("search_items", true, Some("dentist")),
            ("search_items", true, Some("report")),
            ("fake-model", true, None),
            ("search_items", true, Some("review")),
            ("create_item", true, None),
            ("fake-model", true, None),
            ("finish", true, None),
        ]
    );

    // Which transaction wrote each step, and the task's final state.
    let (ending, writers) = app.writers(&id).await;
    assert!(writers[0] == writers[1] && writers[1] == writers[2], "the read-only turn and its reads in one statement: {writers:?}");
    assert!(writers[3] != writers[2] && writers[3] != writers[4], "a turn that may write commits alone, first: {writers:?}");
    assert_eq!(writers[4], writers[5], "its calls commit together");
    assert!(writers[5] != ending && writers[6] == ending && writers[7] == ending, "the last turn with the verdict: {writers:?}");
    assert_eq!(app.fake.requests_for("read then write").len(), 3, "each turn was asked for once");
    app.shutdown().await;
}

/// Pools that keep one plan per connection plan key lookups with their index even when the table
/// was empty at planning time: the one plan for any array of ids would otherwise scan the whole
/// table, for as long as the connection keeps it (see `quickact_shared::db::planning_once`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kept_plans_use_the_index_even_when_made_on_an_empty_table() {
    let (app, _key) = TestApp::start_with_user("olga").await;
    let runner = &app.workers[0].runner;
    let plan = |pool: &sqlx::PgPool| {
        let pool = pool.clone();
        async move {
            let mut conn = pool.acquire().await.unwrap();
            sqlx::query("PREPARE by_ids(uuid[]) AS SELECT id FROM quick_action_tasks WHERE id = ANY($1)").execute(&mut *conn).await.unwrap();
            let lines: Vec<String> =
                sqlx::query_scalar("EXPLAIN EXECUTE by_ids(ARRAY[gen_random_uuid()])").fetch_all(&mut *conn).await.unwrap();
            sqlx::query("DEALLOCATE by_ids").execute(&mut *conn).await.unwrap();
            lines.join("\n")
        }
    };
    let tasks: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks").fetch_one(&app.pool).await.unwrap();
    assert_eq!(tasks, 0, "the table is empty");
    let kept = plan(&runner.bookkeeping).await;
    assert!(kept.contains("Index") && !kept.contains("Seq Scan"), "{kept}");
    app.shutdown().await;
}

/// A running task's row is updated in place: its claim and each model turn's usage change no
/// indexed column and find room on the row's page, so Postgres writes them as heap-only updates,
/// with no new index entries (the fillfactor of `quick_action_tasks` in `migrations/20261130000001_schema.sql`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_running_tasks_claim_and_usage_are_updated_in_place() {
    use quickact_shared::{
        queue::fetch_tasks,
        store::tasks::{HolderCheck, Usage, record_if_holder},
    };

    let (app, key) = TestApp::start_with_options_and_user(quickact_testkit::TestAppOptions::default().workers(0), "hana").await;
    let created = app.submit(&key, "明天下午3点开会").await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let id: uuid::Uuid = created.body["task_id"].as_str().unwrap().parse().unwrap();

    let mut tx = app.pool.begin().await.unwrap();
    assert_eq!(fetch_tasks(&mut *tx, "in-place", 1, 1, 30.0, crate::turns::TURNS).await.unwrap().len(), 1);
    let holder = quickact_shared::queue::lease_holder("in-place", 1);
    let usage = Usage { model: "gpt-test".into(), input: 120, output: 30, cached: 0, cost_nanos: 4_500 };
    assert_eq!(record_if_holder(&mut *tx, id, &holder, &[], Some(&usage)).await.unwrap(), HolderCheck::Owned);
    assert_eq!(record_if_holder(&mut *tx, id, &holder, &[], Some(&usage)).await.unwrap(), HolderCheck::Owned);
    let (updated, in_place): (i64, i64) = sqlx::query_as(
        "SELECT pg_stat_get_xact_tuples_updated('quick_action_tasks'::regclass),
                pg_stat_get_xact_tuples_hot_updated('quick_action_tasks'::regclass)",
    )
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    assert_eq!((updated, in_place), (3, 3), "the claim and two turns' usage, all heap-only");
    tx.rollback().await.unwrap();
    app.shutdown().await;
}

/// A model reply that only calls `finish` is written by the statement that ends the task, with the
/// verdict: one commit, and the turn's tokens in the task's totals. A `finish` that is refused
/// (malformed) is written with its turn before the model is asked again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reply_that_only_finishes_is_written_with_the_verdict() {
    let (app, key) = TestApp::start_with_user("ines").await;
    app.fake.script(
        "finish twice",
        vec![
            Reply::RawTools(vec![("finish".into(), "{\"result_type\": \"action_completed\", \"message\": ".into())]).with_usage(300, 10, 0),
            Reply::finish("error", "nothing to do").with_usage(500, 20, 100),
        ],
    );
    let id = app.submit_id(&key, "finish twice").await;
    let task = app.wait_final(&key, &id, 20).await;
    assert_eq!((&task["status"], &task["result"]["message"]), (&json!("failed"), &json!("nothing to do")), "{task:#}");
    assert_eq!(task["tokens_used"], json!({"input": 800, "output": 30, "cached": 100, "total": 830}));
    let kinds: Vec<(String, String, bool)> = task["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["kind"].as_str().unwrap().to_owned(), s["name"].as_str().unwrap().to_owned(), s["ok"].as_bool().unwrap()))
        .collect();
    let expected = [("model_turn", "fake-model", true), ("tool_call", "finish", false), ("model_turn", "fake-model", true), ("tool_call", "finish", true)];
    assert_eq!(kinds, expected.map(|(k, n, ok)| (k.to_owned(), n.to_owned(), ok)));

    // Which transaction wrote each step, and the task's final state.
    let (ending, writers) = app.writers(&id).await;
    assert_eq!(writers[0], writers[1], "the refused finish is written with its turn");
    assert_ne!(writers[1], ending);
    assert_eq!((&writers[2], &writers[3]), (&ending, &ending), "the last turn and its finish are written by the ending");
    app.shutdown().await;
}

/// The fetch skips running tasks by their leases alone: a task whose lease is live is not taken
/// again, by its own worker either; once the lease lapses (a stalled worker), the same worker's next
/// fetch takes it under a new holder, and the earlier claim's writes are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lapsed_lease_is_claimed_again_by_its_own_worker_and_fences_the_earlier_claim() {
    use quickact_shared::{
        queue::{fetch_tasks, lease_holder},
        store::tasks::{HolderCheck, record_if_holder},
    };

    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "lapse").await;
    let id: uuid::Uuid = app.submit_id(&key, "明天下午3点开会").await.parse().unwrap();
    let first = fetch_tasks(&app.pool, "stalled", 1, 1, 30.0, crate::turns::TURNS).await.unwrap();
    assert_eq!(first.len(), 1);
    assert!(fetch_tasks(&app.pool, "stalled", 2, 1, 30.0, crate::turns::TURNS).await.unwrap().is_empty(), "a live lease keeps the task");

    sqlx::query("UPDATE quick_action_tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1").bind(id).execute(&app.pool).await.unwrap();
    let again = fetch_tasks(&app.pool, "stalled", 3, 1, 30.0, crate::turns::TURNS).await.unwrap();
    assert_eq!(again.iter().map(|claimed| claimed.task.id).collect::<Vec<_>>(), vec![id], "a lapsed lease is taken again");
    assert_eq!(again[0].task.attempts, 2);
    let earlier = record_if_holder(&app.pool, id, &lease_holder("stalled", 1), &[], None).await.unwrap();
    assert_eq!(earlier, HolderCheck::TakenOver, "the earlier claim is fenced out");
    assert_eq!(record_if_holder(&app.pool, id, &lease_holder("stalled", 3), &[], None).await.unwrap(), HolderCheck::Owned);
    app.shutdown().await;
}
