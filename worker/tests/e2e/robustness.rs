//! Failures the backbone must survive: concurrent workers, a killed worker process, a database
//! restart under a waiting client, a panicking run, graceful shutdown, and a worker machine whose
//! clock is minutes off.

use std::{
    process::Command,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use futures::future::BoxFuture;
use quickact_testkit::{GateHeldOpen, Reply, TestApp, TestAppOptions, postgres::PgCluster, wait_for};
use quickact_worker::{
    provider::{ChatRequest, ModelProvider, ModelReply, ProviderError, choice::ProviderChoice, openai::OpenAiProvider},
    runner::Runner,
    tools::ToolRegistry,
};
use reqwest::{Method, StatusCode};
use serde_json::json;
use sqlx::{Connection, PgConnection};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::backbone::wait_for_status;

const WORKER_BINARY: &str = env!("CARGO_BIN_EXE_quickact-worker");

async fn attempts_of(app: &TestApp, id: &str) -> i32 {
    sqlx::query_scalar("SELECT attempts FROM quick_action_tasks WHERE id = $1::uuid").bind(id).fetch_one(&app.pool).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_workers_never_run_one_task_at_once() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(2), "alice").await;
    // Every run waits at its model turn until both workers hold runs at once: the proof that both
    // take part (finished tasks keep no trace of their worker).
    let gate = Arc::new(Notify::new());
    let gated = gate.clone();
    app.fake.fallback(move |_| Reply::Gated(gated.clone(), Box::new(Reply::look_up_and_finish("ok"))));
    let mut ids = Vec::new();
    for i in 0..40 {
        ids.push(app.submit_id(&key, &format!("concurrent task {i}.")).await);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let owners: i64 =
            // A lease's holder is the worker's name and its fetch's number (`queue::lease_holder`).
            sqlx::query_scalar("SELECT count(DISTINCT regexp_replace(lease_owner, '\\.[0-9a-f]{8}$', '')) FROM quick_action_tasks WHERE status = 'processing'")
                .fetch_one(&app.pool)
                .await
                .unwrap();
        if owners == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "the two workers never held runs at the same time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Open the gate for every turn, those waiting and those still to come.
    let opened = GateHeldOpen::new(gate);
    for id in &ids {
        let task = app.wait_final(&key, id, 60).await;
        assert_eq!(task["status"], "success", "{task:#}");
        assert_eq!(task["attempts"], 1, "a task was started twice: {task:#}");
        let kinds: Vec<&str> = task["steps"].as_array().unwrap().iter().map(|s| s["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["model_turn", "tool_call", "tool_call"], "one turn, its search and its finish, once");
    }
    for i in 0..40 {
        assert_eq!(app.fake.requests_for(&format!("concurrent task {i}.")).len(), 1, "task {i} asked the model twice");
    }
    drop(opened);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_worker_process_leaves_its_task_to_another_worker() {
    let (mut app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let never = Arc::new(Notify::new());
    app.fake.script(
        "crash test",
        vec![
            Reply::tool("no_such_tool", json!({"x": 1})),
            Reply::Gated(never, Box::new(Reply::look_up_and_finish("unreachable"))),
            Reply::look_up_and_finish("finished by the survivor"),
        ],
    );
    let mut process = app.spawn_worker_process(WORKER_BINARY);
    let id = app.submit_id(&key, "crash test").await;
    // The process journaled turn 1 and its tool call, and now waits on turn 2.
    app.fake.wait_for_requests("crash test", 2, Duration::from_secs(20)).await;
    process.kill().expect("SIGKILL the worker");
    process.wait().unwrap();
    let killed_at = Instant::now();

    app.start_worker().await;
    let task = app.wait_final(&key, &id, 60).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["result"]["message"], "finished by the survivor");
    assert!(killed_at.elapsed() < Duration::from_secs(30), "took {:?}", killed_at.elapsed());
    assert_eq!(attempts_of(&app, &id).await, 2);

    // Turn 1 was not requested again: the survivor's only request continues the journal.
    let requests = app.fake.requests_for("crash test");
    assert_eq!(requests.len(), 3);
    let resumed = requests[2]["messages"].as_array().unwrap();
    assert!(resumed.iter().any(|m| m["role"] == "tool"), "the survivor replayed the recorded tool result");
    let steps = task["steps"].as_array().unwrap();
    assert_eq!(steps.iter().filter(|s| s["name"] == "no_such_tool").count(), 1, "the tool call was not executed again");
    assert_eq!(steps.last().unwrap()["attempt"], 2);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_lets_a_short_task_finish_and_hands_a_long_one_back() {
    let (mut app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0).env("QUICKACT_SHUTDOWN_GRACE_SECS", "1"), "alice").await;
    let gate = Arc::new(Notify::new());
    app.fake.script("short one", vec![Reply::look_up_and_finish("done in time").delayed(Duration::from_millis(300))]);
    app.fake.script(
        "long one",
        vec![Reply::Gated(gate.clone(), Box::new(Reply::look_up_and_finish("late"))), Reply::look_up_and_finish("finished elsewhere")],
    );
    let mut process = app.spawn_worker_process(WORKER_BINARY);
    let short = app.submit_id(&key, "short one").await;
    let long = app.submit_id(&key, "long one").await;
    app.fake.wait_for_requests("short one", 1, Duration::from_secs(20)).await;
    app.fake.wait_for_requests("long one", 1, Duration::from_secs(20)).await;

    let status = Command::new("kill").args(["-TERM", &process.id().to_string()]).status().unwrap();
    assert!(status.success());
    let exited = process.wait().unwrap();
    assert!(exited.success(), "the worker exits cleanly on SIGTERM: {exited:?}");

    let task = app.wait_final(&key, &short, 5).await;
    assert_eq!(task["status"], "success", "the in-flight task finished during the grace period: {task:#}");
    // The long task went back to the queue at once (no lease to wait out), and another worker resumes it.
    let handed_back = app.call(&key, Method::GET, &format!("/api/quick-action/{long}"), None).await;
    assert_eq!(handed_back.body["status"], "processing");
    let lease: Option<String> = sqlx::query_scalar("SELECT lease_owner FROM quick_action_tasks WHERE id = $1::uuid")
        .bind(&long)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(lease, None, "the lease was released");
    let started = Instant::now();
    app.start_worker().await;
    let task = app.wait_final(&key, &long, 20).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["result"]["message"], "finished elsewhere");
    assert!(started.elapsed() < Duration::from_secs(3), "picked up at once, took {:?}", started.elapsed());
    app.shutdown().await;
}

/// A provider that panics on its first request, then delegates.
struct PanicsOnce {
    inner: OpenAiProvider,
    calls: AtomicUsize,
}

impl ModelProvider for PanicsOnce {
    fn default_model(&self) -> &str {
        self.inner.default_model()
    }

    fn complete<'a>(&'a self, request: &'a ChatRequest) -> BoxFuture<'a, Result<ModelReply, ProviderError>> {
        if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("injected fault");
        }
        self.inner.complete(request)
    }
}

struct Fixed(Arc<dyn ModelProvider>);

impl ProviderChoice for Fixed {
    fn choose(&self, _: Option<&str>, _: &str) -> (Arc<dyn ModelProvider>, String) {
        (self.0.clone(), "fake-model".into())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_panicking_run_is_a_failed_attempt_not_a_dead_worker() {
    let (mut app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    app.fake.script("panic test", vec![Reply::look_up_and_finish("survived")]);
    let config = app.config();
    quickact_worker::install_crypto_provider();
    let inner = OpenAiProvider::new(&app.fake.base_url(), &"sk-test".to_owned().into(), "fake-model", Duration::from_secs(10)).unwrap();
    let provider = Arc::new(PanicsOnce { inner, calls: AtomicUsize::new(0) });
    let stop = CancellationToken::new();
    let runner = Runner::new(
        app.pool.clone(),
        quickact_shared::notify::Notifications::start(app.pool.clone(), stop.clone()),
        "panic-test-worker".into(),
        config.worker.clone(),
        config.model.clone(),
        Arc::new(Fixed(provider)),
        ToolRegistry::standard(config.planner),
    );
    app.start_worker_with(runner, stop).await;

    let id = app.submit_id(&key, "panic test").await;
    let task = app.wait_final(&key, &id, 20).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(attempts_of(&app, &id).await, 2, "the panic counted as one attempt");
    // The same worker goes on taking tasks.
    app.fake.script("after the panic", vec![Reply::look_up_and_finish("still alive")]);
    let next = app.submit_id(&key, "after the panic").await;
    assert_eq!(app.wait_final(&key, &next, 20).await["status"], "success");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_task_that_keeps_killing_its_worker_is_given_up() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let never = Arc::new(Notify::new());
    app.fake.script("poison", (0..5).map(|_| Reply::Gated(never.clone(), Box::new(Reply::finish("error", "x")))).collect());
    let id = app.submit_id(&key, "poison pill").await;
    // Three worker processes die on it, one after the other.
    for attempt in 1..=3 {
        let mut process = app.spawn_worker_process(WORKER_BINARY);
        app.fake.wait_for_requests("poison pill", attempt, Duration::from_secs(20)).await;
        process.kill().unwrap();
        process.wait().unwrap();
    }
    let mut app = app;
    app.start_worker().await;
    let task = app.wait_final(&key, &id, 60).await;
    assert_eq!(task["status"], "failed", "{task:#}");
    assert!(task["result"]["message"].as_str().unwrap().contains("attempted 3 times"), "{task:#}");
    assert_eq!(app.fake.requests_for("poison pill").len(), 3, "no fourth run");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_restart_while_a_client_waits_still_delivers_the_verdict() {
    let cluster = PgCluster::start().expect("a throwaway cluster");
    let mut admin = PgConnection::connect(&cluster.url("postgres")).await.unwrap();
    sqlx::query("CREATE DATABASE restart_test").execute(&mut admin).await.unwrap();
    admin.close().await.unwrap();
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().database_url(cluster.url("restart_test")), "alice").await;
    let gate = Arc::new(Notify::new());
    app.fake.script("restart test", vec![Reply::Gated(gate.clone(), Box::new(Reply::look_up_and_finish("survived the restart")))]);
    let id = app.submit_id(&key, "restart test").await;
    wait_for_status(&app, &key, &id, "processing").await;

    // The database goes down only once the waiter is surely in the server.
    let waiter = app.long_poll_in_server(&key, &id).await;
    cluster.stop().unwrap();
    // While the database is down, requests get a clear 503 (and readiness says so).
    let down = app.call(&key, Method::GET, "/api/quick-action", None).await;
    assert_eq!(down.status, StatusCode::SERVICE_UNAVAILABLE, "{:?}", down.body);
    assert_eq!(down.body["error"]["code"], "unavailable");
    assert!(down.headers.get("retry-after").is_some());
    let ready = app.client.get(format!("{}/ready", app.base_url)).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
    cluster.restart_server().unwrap();
    // The model answers only now: the worker writes the verdict on the restarted database.
    gate.notify_one();

    let (status, task, waited) = waiter.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["result"]["message"], "survived the restart");
    assert!(waited < Duration::from_secs(30), "the waiter was not woken: {waited:?}");

    // The queue consumer recovered too: a new task goes through.
    app.fake.script("after restart", vec![Reply::look_up_and_finish("ok")]);
    let next = app.submit_id(&key, "after restart").await;
    assert_eq!(app.wait_final(&key, &next, 30).await["status"], "success");
    app.shutdown().await;
}

/// Checkouts are not tested with a round trip each: once the process has seen the database go
/// away, the pooled connections opened before that are replaced instead of failing a query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_opened_before_an_outage_are_replaced_at_checkout() {
    use quickact_shared::db;

    let url = quickact_testkit::postgres::create_test_database().await;
    let pool = db::connect(&secrecy::SecretString::from(url.clone()), 2, Duration::from_secs(10)).await.unwrap();
    let backend = "SELECT pg_backend_pid()";
    let (mut a, mut b) = (pool.acquire().await.unwrap(), pool.acquire().await.unwrap());
    let mut before = Vec::new();
    for conn in [&mut a, &mut b] {
        before.push(sqlx::query_scalar::<_, i32>(backend).fetch_one(&mut **conn).await.unwrap());
    }
    drop((a, b));
    // Given back in the background (each is tested on its way back).
    let waited = Instant::now();
    while pool.num_idle() < 2 {
        assert!(waited.elapsed() < Duration::from_secs(10), "the connections never came back to the pool");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // The server drops both, as a restart does, and the process hears of it.
    let mut admin = PgConnection::connect(&url).await.unwrap();
    for pid in &before {
        assert!(sqlx::query_scalar::<_, bool>("SELECT pg_terminate_backend($1)").bind(pid).fetch_one(&mut admin).await.unwrap());
    }
    db::database_went_away();

    // Both checkouts get working connections of new server processes.
    let (mut a, mut b) = (pool.acquire().await.unwrap(), pool.acquire().await.unwrap());
    for conn in [&mut a, &mut b] {
        let pid = sqlx::query_scalar::<_, i32>(backend).fetch_one(&mut **conn).await.unwrap();
        assert!(!before.contains(&pid), "a connection the server had dropped was used");
    }
}

/// A batching loop's kept connection serves batch after batch on one server process, and is
/// replaced, not used, once the process has seen the database go away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_connection_is_kept_between_batches_and_replaced_after_an_outage() {
    use quickact_shared::db;

    let url = quickact_testkit::postgres::create_test_database().await;
    let pool = db::connect(&secrecy::SecretString::from(url.clone()), 2, Duration::from_secs(10)).await.unwrap();
    let backend = "SELECT pg_backend_pid()";
    let mut kept = db::KeptConnection::new(pool.clone());
    let first = sqlx::query_scalar::<_, i32>(backend).fetch_one(kept.get().await.unwrap()).await.unwrap();
    let second = sqlx::query_scalar::<_, i32>(backend).fetch_one(kept.get().await.unwrap()).await.unwrap();
    assert_eq!(first, second, "the second batch ran on another connection");
    assert_eq!(pool.size() as usize - pool.num_idle(), 1, "the kept connection is out of the pool");

    // The server drops it, as a restart does, and the process hears of it.
    let mut admin = PgConnection::connect(&url).await.unwrap();
    assert!(sqlx::query_scalar::<_, bool>("SELECT pg_terminate_backend($1)").bind(first).fetch_one(&mut admin).await.unwrap());
    db::database_went_away();

    let next = sqlx::query_scalar::<_, i32>(backend).fetch_one(kept.get().await.unwrap()).await.unwrap();
    assert_ne!(next, first, "a connection the server had dropped was used");
}

/// A run's steps commit without waiting for the disk, so a database crash may take back the last
/// of them. A run that the crash did not stop (it was waiting on the model) must not go on from
/// what it remembers: once the process saw the database go away, the run checks its journal
/// before it writes again, and goes on from what the journal kept. Here the crash is played by
/// removing the run's committed steps and telling the process the database went away.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_run_whose_steps_a_crash_took_back_goes_on_from_the_journal() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let gate = Arc::new(Notify::new());
    app.fake.script(
        "lost steps",
        vec![
            Reply::tool("search_items", json!({})),
            Reply::Gated(gate.clone(), Box::new(Reply::finish("action_completed", "finished from what was remembered"))),
            Reply::tool("search_items", json!({})),
            Reply::finish("action_completed", "finished from the journal"),
        ],
    );
    let id = app.submit_id(&key, "lost steps").await;
    app.fake.wait_for_requests("lost steps", 2, Duration::from_secs(20)).await;
    let committed: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_journal WHERE task_id = $1::uuid")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(committed, 2, "the first turn and its search are committed");
    // The crash: the database lost them, and every connection of the process dropped.
    sqlx::query("DELETE FROM quick_action_steps WHERE task_id = $1::uuid").bind(&id).execute(&app.pool).await.unwrap();
    quickact_shared::db::database_went_away();
    gate.notify_one();

    let task = app.wait_final(&key, &id, 30).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["result"]["message"], "finished from the journal", "the remembered turn was not acted on: {task:#}");
    let seqs: Vec<i64> = task["steps"].as_array().unwrap().iter().map(|s| s["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, [0, 1, 2, 3], "one whole journal, no gap: {task:#}");
    assert_eq!(app.fake.requests_for("lost steps").len(), 4, "the lost turn was asked again");
    app.shutdown().await;
}

/// A step of a run waiting on a remote model commits without waiting for the disk; its verdict
/// waits (see `quickact_worker::agent::ledger`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_runs_checkpoints_do_not_wait_for_the_disk_and_its_verdict_does() {
    let (app, key) = TestApp::start_with_user("alice").await;
    // The test server does not wait for the disk by default; this database does, for connections
    // opened from now on (the process replaces its older ones, as after an outage).
    let database: String = sqlx::query_scalar("SELECT current_database()").fetch_one(&app.pool).await.unwrap();
    let durable = format!("ALTER DATABASE \"{database}\" SET synchronous_commit = on");
    sqlx::raw_sql(sqlx::AssertSqlSafe(durable)).execute(&app.pool).await.unwrap();
    quickact_shared::db::database_went_away();
    // Items report, from inside the transaction that writes them, how it commits.
    sqlx::query(
        "CREATE FUNCTION record_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
             INSERT INTO commit_modes VALUES (NEW.title, current_setting('synchronous_commit'));
             RETURN NEW;
         END $$",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    sqlx::query("CREATE TABLE commit_modes (title text, mode text)").execute(&app.pool).await.unwrap();
    sqlx::query(
        "CREATE CONSTRAINT TRIGGER record_commit_mode AFTER INSERT ON items DEFERRABLE INITIALLY DEFERRED
         FOR EACH ROW EXECUTE FUNCTION record_commit_mode()",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    app.fake.script(
        "two writes",
        vec![
            Reply::tool("create_item", json!({ "kind": "todo", "title": "at a checkpoint" })),
            Reply::RawTools(vec![
                ("create_item".into(), json!({ "kind": "todo", "title": "with the verdict" }).to_string()),
                ("finish".into(), json!({ "result_type": "action_completed", "message": "done" }).to_string()),
            ]),
        ],
    );
    let id = app.submit_id(&key, "two writes").await;
    assert_eq!(app.wait_final(&key, &id, 30).await["status"], "success");
    let modes: Vec<(String, String)> =
        sqlx::query_as("SELECT title, mode FROM commit_modes ORDER BY title").fetch_all(&app.pool).await.unwrap();
    assert_eq!(
        modes,
        [("at a checkpoint".to_owned(), "off".to_owned()), ("with the verdict".to_owned(), "on".to_owned())],
        "the deferred trigger runs at commit, under the transaction's own setting"
    );
    app.shutdown().await;
}

/// What a client is shown of a running task is first made durable (`db::flush_commits`): once the
/// flush returns, a commit made earlier without waiting for the disk is on it. A commit that only
/// took a transaction id did not wait (Postgres flushes a commit only when its transaction wrote
/// to the log), and the chaos suite's crashes took back a step an event stream had shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_puts_the_commits_made_before_it_on_disk() {
    // The log writer flushes commits that did not wait at most every 10 s here, not within the test.
    let cluster = PgCluster::start_with_options("-c wal_writer_delay=10000").expect("a throwaway cluster");
    let mut writer = PgConnection::connect(&cluster.url("postgres")).await.unwrap();
    let mut reader = PgConnection::connect(&cluster.url("postgres")).await.unwrap();
    sqlx::raw_sql("CREATE TABLE written (x int); SET synchronous_commit = off").execute(&mut writer).await.unwrap();
    for round in 0..20 {
        sqlx::query("INSERT INTO written VALUES (1)").execute(&mut writer).await.unwrap();
        let written: String = sqlx::query_scalar("SELECT pg_current_wal_insert_lsn()::text").fetch_one(&mut writer).await.unwrap();
        quickact_shared::db::flush_commits(&mut reader).await.unwrap();
        let on_disk: bool =
            sqlx::query_scalar("SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn").bind(&written).fetch_one(&mut reader).await.unwrap();
        assert!(on_disk, "round {round}: the flush returned before the earlier commit (log position {written}) was on disk");
    }
}

/// A frozen process (SIGSTOP, a paused VM) inside a transaction would hold its row locks and pin
/// the snapshot until it woke: every session of ours, in every pool, is ended by the server once it
/// sits idle in a transaction past a limit (the chaos suite's paused workers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_ends_a_session_of_ours_left_idle_in_a_transaction() {
    use quickact_shared::db;

    let url = quickact_testkit::postgres::create_test_database().await;
    let pool = db::connect(&secrecy::SecretString::from(url), 2, Duration::from_secs(10)).await.unwrap();
    for pool in [pool.clone(), db::bookkeeping_pool(&pool, 1), db::planning_once(&pool, 1)] {
        let limit: String = sqlx::query_scalar("SHOW idle_in_transaction_session_timeout").fetch_one(&pool).await.unwrap();
        assert_eq!(limit, "15s");
    }
}

/// The library that fakes a process's clock: Debian's libfaketime, which `scripts/test.sh`
/// installs and names in `QUICKACT_LIBFAKETIME`.
fn libfaketime() -> String {
    let library = std::env::var("QUICKACT_LIBFAKETIME").unwrap_or_else(|_| "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1".into());
    assert!(
        std::path::Path::new(&library).is_file(),
        "libfaketime is not at {library}: run the tests with scripts/test.sh (it installs Debian's faketime), or set QUICKACT_LIBFAKETIME"
    );
    library
}

/// A worker process whose machine's clock is `skew_minutes` off the database's (libfaketime; its
/// monotonic clock runs true) runs tasks on the database's time: a task with a minute to go
/// succeeds rather than ending as out of time at once (a clock ahead), a task whose model never
/// answers is ended by the worker at its deadline rather than minutes later (a clock behind), and
/// every step is stamped between its task's creation and its verdict.
async fn a_worker_off_by(skew_minutes: i64) {
    let library = libfaketime();
    // No sweeper round during the test: a task out of time is ended by its worker or not at all.
    let options = TestAppOptions::default().workers(0).env("QUICKACT_SWEEP_SECS", "3600");
    let (app, key) = TestApp::start_with_options_and_user(options, "alice").await;
    app.fake.script("skewed first", vec![Reply::look_up_and_finish("first done")]);
    app.fake.script("skewed second", vec![Reply::look_up_and_finish("second done")]);
    let never = Arc::new(Notify::new());
    app.fake.script("skewed unanswered", vec![Reply::Gated(never, Box::new(Reply::look_up_and_finish("unreachable")))]);
    let faketime = format!("{skew_minutes:+}m");
    let mut process = app.spawn_logged_worker_process(
        WORKER_BINARY,
        &[
            ("QUICKACT_LOG_FORMAT", "json"),
            ("LD_PRELOAD", library.as_str()),
            ("FAKETIME", faketime.as_str()),
            // Timers and deadlines run on the monotonic clock, which a wrong wall clock leaves alone.
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
            ("FAKETIME_NO_CACHE", "1"),
        ],
    );

    // The fake clock is in effect in the worker: its log lines are stamped `skew_minutes` off.
    let stamped = wait_for("the worker's first log line", Duration::from_secs(20), || {
        let first = process.lines().first().cloned();
        async move {
            let line: serde_json::Value = serde_json::from_str(first.as_deref().ok_or("no line yet")?).map_err(|_| "not JSON")?;
            let stamp = line["timestamp"].as_str().ok_or("no timestamp")?;
            chrono::DateTime::parse_from_rfc3339(stamp).map_err(|_| "not a timestamp")
        }
    })
    .await;
    let off_by = (stamped.to_utc() - chrono::Utc::now()).num_seconds();
    assert!((off_by - skew_minutes * 60).abs() < 60, "the worker's clock is {off_by} s off, not {skew_minutes} minutes");

    let submit = |text: &'static str, timeout: u32| {
        let app = &app;
        let key = &key;
        async move {
            let answer = app.call(key, Method::POST, "/api/quick-action", Some(json!({ "text": text, "timeout": timeout }))).await;
            assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
            answer.body["task_id"].as_str().unwrap().to_owned()
        }
    };
    let first = submit("skewed first", 60).await;
    let second = submit("skewed second", 60).await;
    let unanswered = submit("skewed unanswered", 10).await;

    let mut tasks = Vec::new();
    for id in [&first, &second] {
        let task = app.wait_final(&key, id, 60).await;
        assert_eq!(task["status"], "success", "{task:#}");
        assert!(task["steps"].as_array().is_some_and(|steps| steps.len() >= 3), "{task:#}");
        tasks.push(task);
    }
    let task = app.wait_final(&key, &unanswered, 60).await;
    assert_eq!(task["status"], "timeout", "the worker ended it at its deadline: {task:#}");
    assert_eq!(app.fake.requests_for("skewed unanswered").len(), 1, "its run started and waited on the model");
    let at = |task: &serde_json::Value, field: &str| {
        chrono::DateTime::parse_from_rfc3339(task[field].as_str().unwrap_or_else(|| panic!("{field} of {task:#}"))).unwrap().to_utc()
    };
    assert!(at(&task, "completed_at") >= at(&task, "created_at") + chrono::Duration::seconds(10), "not before its deadline: {task:#}");
    tasks.push(task);

    // Every step lies within its task, on the database's clock (which stamps creation and verdict).
    let slack = chrono::Duration::seconds(1);
    for task in &tasks {
        let (created, completed) = (at(task, "created_at"), at(task, "completed_at"));
        for step in task["steps"].as_array().unwrap() {
            for field in ["started_at", "finished_at"] {
                let stamp = at(step, field);
                assert!(
                    created - slack <= stamp && stamp <= completed + slack,
                    "step {} {field} {stamp} is outside its task ({created} to {completed})",
                    step["seq"]
                );
            }
        }
    }
    assert!(process.terminate().success());
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_whose_clock_is_five_minutes_ahead_runs_tasks_on_the_databases_time() {
    a_worker_off_by(5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_whose_clock_is_five_minutes_behind_runs_tasks_on_the_databases_time() {
    a_worker_off_by(-5).await;
}
