//! An upgrade with work in flight (docs/architecture.md, "Upgrades"): the previous commit's API and
//! workers serve a deployment from an empty database; a client submits all along; this build's
//! API starts (applying its migrations and functions while the old processes run), then its
//! workers, and the old processes are stopped one by one, the old API last. Every task ends once,
//! with its one item created once, and none is left hanging.
//!
//! Run by `scripts/upgrade-test.sh`, which builds the previous commit's binaries and names their
//! folder in `QUICKACT_PREVIOUS_BIN_DIR` (ignored otherwise: a plain `cargo test` has no previous
//! build to run).

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use quickact_testkit::{
    FakeModel, Reply,
    chaos::api_binary_beside,
    fake_model::last_tool_result,
    postgres::{server_url, with_database},
    processes::{spawn_api_with, spawn_worker_with},
};
use serde_json::{Value, json};
use sqlx::{AssertSqlSafe, Connection, PgConnection, PgPool};
use tokio::process::Child;

const WORKER_BINARY: &str = env!("CARGO_BIN_EXE_quickact-worker");

/// How long each model turn takes: long enough that runs are in flight whenever a process stops.
const TURN: Duration = Duration::from_millis(300);

/// Each process applies its own migrations at startup, as a deployment's do (the spawners skip
/// them by default: their tests' databases are migrated already).
const MIGRATING: &[(&str, &str)] = &[("QUICKACT_SKIP_MIGRATIONS", "false")];

struct Binaries {
    api: PathBuf,
    worker: PathBuf,
}

fn previous() -> Binaries {
    let dir = std::env::var("QUICKACT_PREVIOUS_BIN_DIR").expect("QUICKACT_PREVIOUS_BIN_DIR names the previous commit's binaries");
    let dir = Path::new(&dir);
    let binaries = Binaries { api: dir.join("quickact-api"), worker: dir.join("quickact-worker") };
    assert!(binaries.api.exists() && binaries.worker.exists(), "no previous binaries in {}", dir.display());
    binaries
}

fn current() -> Binaries {
    Binaries { api: api_binary_beside(Path::new(WORKER_BINARY)), worker: PathBuf::from(WORKER_BINARY) }
}

/// Sends SIGTERM (a deployment's way of stopping a process) and waits for the process to exit.
async fn stop(mut process: Child) {
    let pid = process.id().expect("the process runs").to_string();
    let _ = std::process::Command::new("kill").args(["-TERM", &pid]).status();
    let status = tokio::time::timeout(Duration::from_secs(30), process.wait()).await.expect("it stops within its grace").unwrap();
    assert!(status.success(), "a stopped process exits cleanly: {status}");
}

/// The JSON body of the answer to `request`.
async fn answer(request: reqwest::RequestBuilder) -> Value {
    request.send().await.expect("the API answers").json().await.expect("a JSON answer")
}

/// Every sentence creates a to-do named after itself, then finishes: each turn takes [`TURN`].
fn model() -> Reply {
    Reply::dynamic(|request: &Value| {
        let reply = if last_tool_result(request).is_null() {
            let text = quickact_testkit::fake_model::user_text(request);
            Reply::tool("create_item", json!({ "kind": "todo", "title": text }))
        } else {
            Reply::finish("action_completed", "created")
        };
        reply.delayed(TURN)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs the previous commit's binaries: run scripts/upgrade-test.sh"]
async fn processes_replaced_one_by_one_lose_no_task_and_run_none_twice() {
    quickact_worker::install_crypto_provider();
    let (old, new) = (previous(), current());
    let server = server_url().await;
    let name = format!("quickact_upgrade_{}", uuid::Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(&with_database(&server, "postgres")).await.unwrap();
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut admin).await.unwrap();
    let database_url = with_database(&server, &name);

    let fake = FakeModel::start().await;
    fake.fallback(|_| model());
    let admin_key = format!("qa_upgrade_admin_{}", uuid::Uuid::new_v4().simple());
    let deployment: HashMap<String, String> = [
        ("DATABASE_URL", database_url.as_str()),
        ("QUICKACT_ADMIN_KEY", admin_key.as_str()),
        ("OPENAI_BASE_URL", &fake.base_url()),
        ("OPENAI_API_KEY", "sk-test"),
        ("QUICKACT_MODEL", "fake-model"),
        ("QUICKACT_FAST_PATH", "false"),
        ("QUICKACT_HEARTBEAT_SECS", "1"),
        ("QUICKACT_MISSED_HEARTBEATS", "3"),
        ("QUICKACT_SHUTDOWN_GRACE_SECS", "5"),
        ("QUICKACT_WORKER_CONCURRENCY", "8"),
        ("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "10000"),
        ("QUICKACT_SUBMIT_RATE_PER_MINUTE", "0"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();

    // The previous build: its API migrates the empty database; two of its workers.
    let (old_api, old_url) = spawn_api_with(&deployment, old.api.to_str().unwrap(), MIGRATING).await;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(90)).build().unwrap();
    let user = answer(client.post(format!("{old_url}/api/admin/users")).bearer_auth(&admin_key).json(&json!({ "name": "upgrader" }))).await;
    let key = user["api_key"].as_str().expect("the old API made a user").to_owned();
    let old_workers: Vec<Child> = (0..2).map(|_| spawn_worker_with(&deployment, old.worker.to_str().unwrap(), MIGRATING)).collect();

    // A client submits all along, to whichever API is the deployment's now.
    let api_url = Arc::new(Mutex::new(old_url.clone()));
    let submitted = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let submitting = tokio_util::sync::CancellationToken::new();
    let submitter = {
        let (client, key, api_url, submitted, submitting) = (client.clone(), key.clone(), api_url.clone(), submitted.clone(), submitting.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !submitting.is_cancelled() {
                let url = api_url.lock().unwrap().clone();
                let text = format!("upgrade errand {n}");
                let answer = client.post(format!("{url}/api/quick-action")).bearer_auth(&key).json(&json!({ "text": text })).send().await;
                let answer = answer.expect("the deployment's API answers");
                assert_eq!(answer.status(), reqwest::StatusCode::CREATED, "every submission is taken");
                let body: Value = answer.json().await.unwrap();
                submitted.lock().unwrap().push((body["task_id"].as_str().unwrap().to_owned(), text));
                n += 1;
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(2)).await;

    // This build: its API applies its migrations and functions beside the old processes, then its
    // workers join; the old workers stop one by one, runs in flight, then the old API.
    let new_started = chrono::Utc::now();
    let (new_api, new_url) = spawn_api_with(&deployment, new.api.to_str().unwrap(), MIGRATING).await;
    let new_workers: Vec<Child> = (0..2).map(|_| spawn_worker_with(&deployment, new.worker.to_str().unwrap(), MIGRATING)).collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    for worker in old_workers {
        stop(worker).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let old_gone = chrono::Utc::now();
    *api_url.lock().unwrap() = new_url.clone();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop(old_api).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    submitting.cancel();
    submitter.await.expect("the client submitted throughout");

    let submitted = submitted.lock().unwrap().clone();
    assert!(submitted.len() >= 50, "tasks were submitted throughout: {}", submitted.len());
    for (id, text) in &submitted {
        let task = answer(client.get(format!("{new_url}/api/quick-action/{id}?wait=true&timeout=60")).bearer_auth(&key)).await;
        assert_eq!(task["status"], "success", "{text}: {task:#}");
    }
    let pool = PgPool::connect(&database_url).await.unwrap();
    let unfinished: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE completed_at IS NULL").fetch_one(&pool).await.unwrap();
    assert_eq!(unfinished, 0, "no task is left hanging");
    // Each task's one create ran once: one item per task, titled by its sentence.
    let items: Vec<(uuid::Uuid, i64)> =
        sqlx::query_as("SELECT created_by_task, count(*) FROM items GROUP BY created_by_task").fetch_all(&pool).await.unwrap();
    let per_task: HashMap<String, i64> = items.into_iter().map(|(task, n)| (task.to_string(), n)).collect();
    for (id, text) in &submitted {
        assert_eq!(per_task.get(id), Some(&1), "{text} created its item exactly once");
    }
    assert_eq!(per_task.len(), submitted.len(), "no item without its task");
    // Both builds ran tasks: the old one before this build's API started, this one after the old
    // workers were gone (the upgrade had work in flight, not an idle queue).
    let by_old: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE completed_at < $1")
        .bind(new_started)
        .fetch_one(&pool)
        .await
        .unwrap();
    let by_new: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE started_at > $1")
        .bind(old_gone)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(by_old > 0 && by_new > 0, "the old build ran {by_old} tasks, this one {by_new}");
    pool.close().await;

    stop(new_api).await;
    for worker in new_workers {
        stop(worker).await;
    }
}
