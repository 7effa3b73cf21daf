//! A deployment for one chaos scenario: its own Postgres cluster (commits durable, as in
//! production), the API and three workers as processes, a fake model, and a few users.

use std::time::Duration;

use serde_json::Value;
use sqlx::{Connection, PgConnection};
use tokio::process::Child;

use super::ChaosOptions;
use crate::{
    TestApp, TestAppOptions,
    postgres::PgCluster,
    processes::{rss_mib, spawn_api, spawn_worker},
};

/// Users the load is spread over (each user's runs serialise on the user's items).
const USERS: usize = 6;

/// The database's name on the scenario's cluster.
const DATABASE: &str = "chaos";

pub struct Worker {
    pub child: Child,
    /// Its `QUICKACT_WORKER_NAME`: the prefix of the leases it holds.
    pub name: String,
    env: Vec<(String, String)>,
}

pub struct Fleet {
    pub cluster: PgCluster,
    /// The harness's side: fake model, a pool to the database, the admin key, the environment.
    pub app: TestApp,
    pub base: String,
    pub api: Child,
    pub workers: Vec<Worker>,
    /// The load users' keys, then the probes' user's.
    pub keys: Vec<String>,
    pub client: reqwest::Client,
    worker_binary: String,
}

/// Settings of a fleet beyond the defaults.
#[derive(Default, Clone)]
pub struct FleetSettings {
    /// Environment of every process (API and workers).
    pub env: Vec<(&'static str, String)>,
    /// Extra environment per worker (e.g. a faked clock), by index; three workers in all.
    pub worker_env: Vec<Vec<(String, String)>>,
    /// Extra server options of the cluster.
    pub server_options: String,
}

impl Fleet {
    pub async fn start(options: &ChaosOptions, settings: FleetSettings) -> Fleet {
        // Durable commits (the server's default), as in production: a crash loses what was
        // committed without waiting for the disk and nothing else. fsync stays off: a Postgres
        // crash is not an OS crash, written pages survive it in the page cache either way.
        let cluster = PgCluster::start_with_options(&format!("-c fsync=off -c full_page_writes=off {}", settings.server_options))
            .expect("start the scenario's Postgres cluster");
        let mut admin = PgConnection::connect(&cluster.url("postgres")).await.expect("connect to the cluster");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {DATABASE}"))).execute(&mut admin).await.expect("create the database");
        admin.close().await.ok();

        let mut app_options = TestAppOptions::default()
            .workers(0)
            .database_url(cluster.url(DATABASE))
            .env("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "100000")
            .env("QUICKACT_SUBMIT_RATE_PER_MINUTE", "0")
            .env("QUICKACT_MAX_LONG_POLLS_PER_USER", "1000")
            .env("QUICKACT_FAST_PATH", "true")
            .env("QUICKACT_WORKER_CONCURRENCY", "64")
            // A lease of 6 s: short enough for takeovers to happen inside a scenario, long enough
            // that a busy machine does not lapse leases of live workers.
            .env("QUICKACT_HEARTBEAT_SECS", "2")
            .env("QUICKACT_MISSED_HEARTBEATS", "3")
            .env("QUICKACT_MODEL_TIMEOUT_SECS", "10")
            .env("QUICKACT_REFERENCE_TIME_WINDOW_SECS", "600");
        for (name, value) in &settings.env {
            app_options = app_options.env(name, value);
        }
        let app = TestApp::start_with(app_options).await;
        let mut keys = Vec::new();
        for i in 0..USERS {
            keys.push(app.create_user(&format!("chaos{i}")).await.1);
        }
        // The probes' user, last: a probe times the service's recovery, not a load user's own
        // backlog, which fair turns rightly serve in arrival order.
        keys.push(app.create_user("chaos-probe").await.1);
        let worker_binary = options.worker_binary.to_string_lossy().into_owned();
        let (api, base) = spawn_api(&app, &options.api_binary.to_string_lossy(), &[]).await;
        let mut fleet = Fleet {
            cluster,
            app,
            base,
            api,
            workers: Vec::new(),
            keys,
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(90))
                .pool_max_idle_per_host(64)
                .build()
                .expect("an HTTP client"),
            worker_binary,
        };
        for i in 0..3 {
            let env = settings.worker_env.get(i).cloned().unwrap_or_default();
            let worker = fleet.spawn_worker(i, env);
            fleet.workers.push(worker);
        }
        fleet
    }

    fn spawn_worker(&self, i: usize, mut env: Vec<(String, String)>) -> Worker {
        let name = format!("chaos-w{i}-{}", &uuid::Uuid::new_v4().simple().to_string()[..6]);
        env.push(("QUICKACT_WORKER_NAME".into(), name.clone()));
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let child = spawn_worker(&self.app, &self.worker_binary, &pairs);
        Worker { child, name, env }
    }

    /// Kills worker `i` and starts a fresh one in its place (with the same settings).
    pub async fn replace_worker(&mut self, i: usize) {
        let old = &mut self.workers[i];
        old.child.start_kill().ok();
        let _ = old.child.wait().await;
        let env = old.env.iter().filter(|(k, _)| k != "QUICKACT_WORKER_NAME").cloned().collect();
        self.workers[i] = self.spawn_worker(i, env);
    }

    /// Resident memory of the API and the workers, MiB.
    pub fn memory(&self) -> Vec<f64> {
        std::iter::once(rss_mib(&self.api)).chain(self.workers.iter().map(|w| rss_mib(&w.child))).collect()
    }

    /// Connections to the scenario's database, other than the harness's own pool and this query's.
    pub async fn connections(&self) -> Option<i64> {
        let mut conn = PgConnection::connect(&self.cluster.url("postgres")).await.ok()?;
        let total: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = $1")
            .bind(DATABASE)
            .fetch_one(&mut conn)
            .await
            .ok()?;
        conn.close().await.ok();
        Some(total - i64::from(self.app.pool.size()))
    }

    /// Runs a statement as a fresh superuser session on the database (not through any pool), e.g.
    /// to terminate backends; retries while the server is down.
    pub async fn admin(&self) -> PgConnection {
        loop {
            match PgConnection::connect(&self.cluster.url(DATABASE)).await {
                Ok(conn) => return conn,
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    /// The URL of the scenario's database.
    pub fn database_url(&self) -> String {
        self.cluster.url(DATABASE)
    }

    /// Stops every process; the cluster goes with the fleet.
    pub async fn stop(mut self) {
        for worker in &mut self.workers {
            worker.child.start_kill().ok();
            let _ = worker.child.wait().await;
        }
        self.api.start_kill().ok();
        let _ = self.api.wait().await;
        self.app.shutdown().await;
    }
}

/// A task's JSON is final when its status is one no run changes any more.
pub fn is_final(task: &Value) -> bool {
    !matches!(task["status"].as_str(), Some("pending" | "processing") | None)
}
