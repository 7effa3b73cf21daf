//! The benchmark scenarios that need a program of their own, run on demand (never as part of the
//! tests); `scripts/bench.sh` runs them, with pgbench, `riverqueue bench` and wrk, on one durable
//! cluster and prints the table. Each scenario runs against the database `DATABASE_URL` names
//! (migrated; `pg_stat_statements` preloaded), starts the release `quickact-api` and
//! `quickact-worker` binaries as real processes, prints its progress on stderr and one JSON line on
//! stdout:
//!
//! ```sh
//! quickact-bench burst   [--n 10000] [--concurrency 64] [--hold 15] [--users 100]
//! quickact-bench latency [--samples 500] [--warmup 20]
//! quickact-bench slow    [--concurrency 4,64,256,512,1024,2048] [--delay-ms 1000] [--warmup 5] [--window 20] [--users 64]
//! quickact-bench fairness [--heavy-users 100] [--per-user 50] [--light 20] [--concurrency 64] [--delay-ms 0]
//!                         [--baseline-api-binary B --baseline-worker-binary B]
//! quickact-bench provider-limit [--rpm 600] [--secs 120] [--workers 3] [--clients 96] [--delay-ms 200]
//! quickact-bench provider-pause [--storm 10] [--retry-after 2] [--secs 20] [--workers 3] [--clients 48]
//! quickact-bench webhooks [--samples 200] [--warmup 10]
//! quickact-bench tracing [--n 3000] [--users 100] [--concurrency 64] [--rounds 3]
//! quickact-bench preview [--samples 2000] [--warmup 200]
//! quickact-bench stock [--workers 3] [--clients 600] [--secs 30] [--delay-ms 200]
//! # common: [--api-binary target/release/quickact-api] [--worker-binary target/release/quickact-worker]
//! ```
//!
//! - **burst**: N tasks of `--users` users POSTed (64 clients, no worker running), N long-polls
//!   held (API RSS and statements per second while they wait), then one worker process (local provider, no model key)
//!   drains them while every waiter hears its verdict: tasks per second, the count of final statuses,
//!   and the database work per task over the whole burst (statements from pg_stat_statements,
//!   commits from pg_stat_database, WAL bytes from the WAL position), the processes stopped before
//!   the counters are read so every backend has flushed its statistics.
//! - **latency**: a fake model that answers at once (a search and `finish` in one turn), one worker
//!   process; one client POSTs a sentence and long-polls `GET ?wait=true` for its verdict, one task
//!   after another: p50 and p99 of POST-to-verdict.
//! - **slow**: a fake model that answers after `--delay-ms`, two turns per task (a `search_items`
//!   call, then `finish`), one worker process per concurrency value; clients keep submitting (a
//!   POST, then a long-poll for the verdict, then the next task; 1.5 x concurrency + 32 clients
//!   acting for `--users` users, so the queue never runs dry) and the verdicts that arrive in a
//!   window after a warm-up give the sustained tasks per second.
//! - **fairness**: `--heavy-users` users each submit `--per-user` tasks at once (no worker running),
//!   then one worker process (`--concurrency`; the local provider, or with `--delay-ms` a fake model
//!   answering after that long, two turns a task) drains them; once its first runs ended, a light
//!   user submits `--light` sentences one after another with `wait: true`: their POST-to-verdict
//!   (p50, max) and how many heavy tasks still waited at each, and the heavy drain's tasks per
//!   second. With the baseline binaries (a build of the engine before fair turns), the same drain
//!   without the light user runs again on a database of its own (migrated by the baseline's API):
//!   the throughput ratio of one run.
//! - **provider-limit**: `--workers` worker processes share a limit of `--rpm` model requests a
//!   minute (`QUICKACT_MODEL_LIMITS`); clients keep submitting two-turn tasks (far more than the
//!   limit allows) for `--secs`, then wait for every verdict: the requests the fake model counted
//!   (in the whole run and in the busiest minute) against what the limit allows (a minute's worth
//!   a minute, plus one minute's burst), and the tasks' final statuses.
//! - **provider-pause**: the fake model answers every request `429` with `Retry-After:
//!   --retry-after` for the first `--storm` seconds; `--workers` worker processes, clients always
//!   submitting one-turn tasks for `--secs`: the requests that reached the model while a pause was
//!   on (after the first refusal, beyond the probes), the probes, and the final statuses.
//! - **webhooks**: as **latency** (a fake model that answers at once, one worker process, one task
//!   after another), with one webhook endpoint registered and a receiver on loopback that verifies
//!   each signature: p50 and p99 from the verdict (the task's `completed_at`, stamped in the
//!   ending's transaction just before it commits) to the receiver having the delivery.
//! - **tracing**: the cost of exporting traces (docs/tracing.md) on a drain: `--rounds` rounds, each
//!   a drain with tracing off and one with it on (in turn first), within one run: `--n` tasks of
//!   `--users` users POSTed (64 clients, no worker), then one worker process (local provider,
//!   `--concurrency`) drains them. On, the API and the worker export to an OTLP receiver in this
//!   process (`OTEL_EXPORTER_OTLP_ENDPOINT`). Per drain: POSTs per second and drain tasks per
//!   second (from the worker's start to the last verdict, read from the database); the medians, off
//!   and on, their ratio, and the spans the receiver got per task.
//! - **preview**: the API alone (no worker, no model); one client POSTs `/api/quick-action/preview`
//!   for a mix of sentences ([`PREVIEW_SENTENCES`]: Chinese and English, certain, vague and
//!   unread, one clause and several), one request after another on a kept-alive connection: p50
//!   and p99 of the round trip, and how many answers were not 200.
//! - **stock**: the service at its default connection budgets (`QUICKACT_DATABASE_CONNECTIONS`
//!   unset, which the scenario checks) on the connections of a stock Postgres: an API and
//!   `--workers` worker processes (their default concurrency) log in as a role of their own limited
//!   to 97 connections (`max_connections` 100 less the 3 reserved for superusers), on a database of
//!   their own that the API migrates. `--clients` clients (one user each) keep submitting two-turn
//!   tasks to a fake model answering after `--delay-ms`, for `--secs`: the tasks per second, their
//!   final statuses (a connection the server refused shows as a 503 or a failed task), and the most
//!   connections the fleet held at once (sampled every 20 ms).

use std::{
    collections::BTreeMap,
    process::Stdio,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use clap::{Args, Parser, Subcommand};
use futures::StreamExt;
use quickact_testkit::{FakeModel, Reply, wait_until};
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};
use tokio::process::{Child, Command};

/// `quickact-bench SCENARIO [flags]`: every flag has the default the module documentation gives.
#[derive(Parser)]
#[command(name = "quickact-bench", about = "The bench scenarios that need a program of their own (see scripts/bench.sh)")]
struct Cli {
    #[command(subcommand)]
    scenario: Scenario,
}

#[derive(Subcommand)]
enum Scenario {
    /// N tasks POSTed, N long-polls held, then one worker drains them.
    Burst(BurstFlags),
    /// POST-to-verdict latency, one task after another, with a model that answers at once.
    Latency(LatencyFlags),
    /// Sustained tasks/s with a slow model, one worker per concurrency value.
    Slow(SlowFlags),
    /// A light user's latency behind 100 users' bursts, and the drain's throughput.
    Fairness(FairnessFlags),
    /// A model limit shared by several worker processes, under more demand than it allows.
    ProviderLimit(ProviderLimitFlags),
    /// A model that answers 429 with Retry-After to everything for a while.
    ProviderPause(ProviderPauseFlags),
    /// Verdict-to-receiver latency of webhook deliveries, one task after another.
    Webhooks(LatencyFlags),
    /// The drain with trace export off and on, within one run.
    Tracing(TracingFlags),
    /// Round trips of `POST /api/quick-action/preview`, one after another, over a mix of sentences.
    Preview(PreviewFlags),
    /// An API and three workers at their default connection budgets within a stock Postgres's 97.
    Stock(StockFlags),
}

#[derive(Args)]
struct StockFlags {
    /// Worker processes, each at its default concurrency and connection budget.
    #[arg(long, default_value_t = 3)]
    workers: usize,
    /// Clients, one user each, each submitting a task and waiting for its verdict, then the next.
    #[arg(long, default_value_t = 600)]
    clients: usize,
    /// Seconds the clients keep submitting.
    #[arg(long, default_value_t = 30.0)]
    secs: f64,
    /// How long the fake model takes to answer a turn, in milliseconds.
    #[arg(long, default_value_t = 200)]
    delay_ms: u64,
    #[command(flatten)]
    binaries: Binaries,
}

#[derive(Args)]
struct PreviewFlags {
    /// Requests measured.
    #[arg(long, default_value_t = 2000)]
    samples: usize,
    /// Requests sent first and not measured (the connection, the reader's lexicon, the caches).
    #[arg(long, default_value_t = 200)]
    warmup: usize,
    #[arg(long, default_value = "target/release/quickact-api")]
    api_binary: String,
}

#[derive(Args)]
struct TracingFlags {
    /// Tasks of each drain.
    #[arg(long, default_value_t = 3000)]
    n: usize,
    /// Users the tasks are spread over.
    #[arg(long, default_value_t = 100)]
    users: usize,
    /// The draining worker's concurrency.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Rounds, each one drain off and one on.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    #[command(flatten)]
    binaries: Binaries,
}

#[derive(Args)]
struct ProviderLimitFlags {
    /// The fleet's limit of model requests a minute.
    #[arg(long, default_value_t = 600)]
    rpm: u32,
    /// Seconds the clients keep submitting.
    #[arg(long, default_value_t = 120.0)]
    secs: f64,
    /// Worker processes sharing the limit.
    #[arg(long, default_value_t = 3)]
    workers: usize,
    /// Each worker's concurrency.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Clients, each submitting a task and waiting for its verdict, then the next.
    #[arg(long, default_value_t = 96)]
    clients: usize,
    /// How long the fake model takes to answer a turn, in milliseconds.
    #[arg(long, default_value_t = 200)]
    delay_ms: u64,
    #[command(flatten)]
    binaries: Binaries,
}

#[derive(Args)]
struct ProviderPauseFlags {
    /// Seconds the fake model answers every request 429.
    #[arg(long, default_value_t = 10.0)]
    storm: f64,
    /// The Retry-After of its 429s, in seconds.
    #[arg(long, default_value_t = 2)]
    retry_after: u64,
    /// Seconds the clients keep submitting.
    #[arg(long, default_value_t = 20.0)]
    secs: f64,
    /// Worker processes.
    #[arg(long, default_value_t = 3)]
    workers: usize,
    /// Each worker's concurrency.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Clients, each submitting a task and waiting for its verdict, then the next.
    #[arg(long, default_value_t = 48)]
    clients: usize,
    #[command(flatten)]
    binaries: Binaries,
}

/// The release binaries a scenario starts.
#[derive(Args)]
struct Binaries {
    #[arg(long, default_value = "target/release/quickact-api")]
    api_binary: String,
    #[arg(long, default_value = "target/release/quickact-worker")]
    worker_binary: String,
}

#[derive(Args)]
struct BurstFlags {
    /// Tasks to submit.
    #[arg(long, default_value_t = 10_000)]
    n: usize,
    /// The draining worker's concurrency.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Seconds the long-polls are held before the worker starts.
    #[arg(long, default_value_t = 15.0)]
    hold: f64,
    /// Users the tasks are spread over (at least 1).
    #[arg(long, default_value_t = 100)]
    users: usize,
    #[command(flatten)]
    binaries: Binaries,
}

#[derive(Args)]
struct LatencyFlags {
    /// Tasks measured.
    #[arg(long, default_value_t = 500)]
    samples: usize,
    /// Tasks run first and not measured.
    #[arg(long, default_value_t = 20)]
    warmup: usize,
    #[command(flatten)]
    binaries: Binaries,
}

#[derive(Args)]
struct SlowFlags {
    /// Worker concurrencies to measure, one worker process each.
    #[arg(long, value_delimiter = ',', default_value = "4,64,256,512,1024,2048")]
    concurrency: Vec<usize>,
    /// How long the fake model takes to answer a turn, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    delay_ms: u64,
    /// Seconds before the measuring window opens.
    #[arg(long, default_value_t = 5.0)]
    warmup: f64,
    /// Seconds the verdicts are counted over.
    #[arg(long, default_value_t = 20.0)]
    window: f64,
    /// Users the clients act for.
    #[arg(long, default_value_t = 64)]
    users: usize,
    #[command(flatten)]
    binaries: Binaries,
}

#[derive(Args)]
struct FairnessFlags {
    /// Users who each submit a burst at once.
    #[arg(long, default_value_t = 100)]
    heavy_users: usize,
    /// Tasks each of them submits.
    #[arg(long, default_value_t = 50)]
    per_user: usize,
    /// Sentences the light user submits, one after another, each waited for.
    #[arg(long, default_value_t = 20)]
    light: usize,
    /// The worker's concurrency.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// 0: the local provider runs the tasks; else a fake model answering after this many
    /// milliseconds, two turns a task.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// The API binary of the engine before fair turns, for the throughput ratio.
    #[arg(long, requires = "baseline_worker_binary")]
    baseline_api_binary: Option<String>,
    /// Its worker binary.
    #[arg(long, requires = "baseline_api_binary")]
    baseline_worker_binary: Option<String>,
    #[command(flatten)]
    binaries: Binaries,
}

fn usage(problem: &str) -> ! {
    eprintln!("{problem}\nusage: quickact-bench SCENARIO [--flag value ...] (see --help)");
    std::process::exit(2)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    quickact_worker::install_crypto_provider();
    let result = match Cli::parse().scenario {
        Scenario::Burst(flags) => burst(&flags).await,
        Scenario::Latency(flags) => latency(&flags).await,
        Scenario::Slow(flags) => slow(&flags).await,
        Scenario::Fairness(flags) => fairness(&flags).await,
        Scenario::ProviderLimit(flags) => provider_limit(&flags).await,
        Scenario::ProviderPause(flags) => provider_pause(&flags).await,
        Scenario::Webhooks(flags) => webhooks(&flags).await,
        Scenario::Tracing(flags) => tracing_cost(&flags).await,
        Scenario::Preview(flags) => preview(&flags).await,
        Scenario::Stock(flags) => stock(&flags).await,
    };
    println!("{result}");
}

// ---------------------------------------------------------------------------------------------
// Processes

fn database_url() -> String {
    std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| usage("DATABASE_URL must name the bench database"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// A `quickact-api` process on a free port, ready; it serves any number of one user's tasks and
/// long-polls (the per-user limits are lifted: the load here is one client's).
struct Api {
    child: Child,
    port: u16,
    base: String,
    admin_key: String,
}

impl Api {
    async fn start(binary: &str) -> Api {
        Api::start_on(binary, &database_url()).await
    }

    /// The API on the database `url` names (its migrations run at start).
    async fn start_on(binary: &str, url: &str) -> Api {
        Api::start_with(binary, url, &[]).await
    }

    /// [`Api::start_on`] with more environment variables.
    async fn start_with(binary: &str, url: &str, env: &[(&str, &str)]) -> Api {
        let port = free_port();
        let admin_key = format!("qa_bench_admin_{}", uuid::Uuid::new_v4().simple());
        let child = Command::new(binary)
            .env("DATABASE_URL", url)
            .env("QUICKACT_BIND", format!("127.0.0.1:{port}"))
            .env("QUICKACT_ADMIN_KEY", &admin_key)
            .env("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "100000000")
            .env("QUICKACT_MAX_LONG_POLLS_PER_USER", "100000000")
            .env("QUICKACT_SUBMIT_RATE_PER_MINUTE", "0")
            // The webhooks scenario's receiver is on loopback.
            .env("QUICKACT_WEBHOOK_ALLOW_PRIVATE", "true")
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {binary}: {e} (cargo build --release first)"));
        let base = format!("http://127.0.0.1:{port}");
        let client = reqwest::Client::new();
        wait_until("the API to answer /ready", Duration::from_secs(60), || async {
            client.get(format!("{base}/ready")).send().await.is_ok_and(|r| r.status().is_success())
        })
        .await;
        Api { child, port, base, admin_key }
    }

    /// Creates a user; returns its API key.
    async fn user(&self, client: &reqwest::Client, name: &str) -> String {
        let answer = post_json(client, &format!("{}/api/admin/users", self.base), &self.admin_key, json!({ "name": name })).await;
        answer["api_key"].as_str().unwrap_or_else(|| panic!("create user: {answer}")).to_owned()
    }

    fn rss_mb(&self) -> f64 {
        rss_mb(&self.child)
    }

    /// Connections to the API that the kernel has established (accepted or waiting to be).
    fn connections(&self) -> usize {
        let local = format!(":{:04X}", self.port);
        std::fs::read_to_string("/proc/net/tcp")
            .unwrap_or_default()
            .lines()
            .skip(1)
            .filter(|line| {
                let mut fields = line.split_whitespace();
                let address = fields.nth(1).unwrap_or_default();
                let state = fields.nth(1).unwrap_or_default();
                address.ends_with(&local) && state == "01"
            })
            .count()
    }
}

/// How a worker process reaches a model: none (the local provider), or the fake one.
enum Model<'a> {
    Local,
    Fake(&'a FakeModel),
}

/// A worker process with no cap on one user's running tasks: the scenarios but `fairness`
/// measure the drain of a worker (or a fleet), often of one user's burst. (Not the worker's
/// concurrency: a user whose held tasks may reach the cap has them counted at every fetch, from
/// all their unfinished rows, which a burst of 10,000 makes the bench's own cost.)
fn spawn_worker(binary: &str, concurrency: usize, model: Model) -> Child {
    spawn_worker_with(binary, concurrency, model, &[])
}

/// [`spawn_worker`] with more environment variables.
fn spawn_worker_with(binary: &str, concurrency: usize, model: Model, env: &[(&str, &str)]) -> Child {
    spawn_worker_on(binary, concurrency, model, &database_url(), Some(100_000_000), env)
}

/// A worker process on the database `url` names; `max_running_per_user`: its cap on one user's
/// running tasks (None: the worker's default).
fn spawn_worker_on(binary: &str, concurrency: usize, model: Model, url: &str, max_running_per_user: Option<usize>, env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(binary);
    if let Some(cap) = max_running_per_user {
        command.env("QUICKACT_MAX_RUNNING_PER_USER", cap.to_string());
    }
    command
        .env("DATABASE_URL", url)
        .env("QUICKACT_SKIP_MIGRATIONS", "1")
        .env("QUICKACT_WORKER_CONCURRENCY", concurrency.to_string())
        .env("QUICKACT_WORKER_NAME", "bench")
        // QUICKACT_BENCH_WORKER_LOG: the worker's log filter, for looking into a run (default `warn`).
        .env("RUST_LOG", std::env::var("QUICKACT_BENCH_WORKER_LOG").unwrap_or_else(|_| "warn".into()))
        .env_remove("OPENAI_API_KEY")
        .stdout(Stdio::null())
        .kill_on_drop(true);
    if let Model::Fake(fake) = model {
        command
            .env("OPENAI_BASE_URL", fake.base_url())
            .env("OPENAI_API_KEY", "sk-bench")
            .env("QUICKACT_MODEL", "fake-model")
            .env("QUICKACT_MODEL_TIMEOUT_SECS", "30")
            // Every task goes to the model, none to the local rules.
            .env("QUICKACT_FAST_PATH", "false");
    }
    command.envs(env.iter().copied());
    command.spawn().unwrap_or_else(|e| panic!("start {binary}: {e} (cargo build --release first)"))
}

/// Runs `work` while watching `child`: if the process exits first, the scenario stops with its exit
/// status (a dead worker would otherwise leave every client waiting for verdicts that never come).
async fn watching<T>(child: &mut Child, what: &str, work: impl std::future::Future<Output = T>) -> T {
    tokio::select! {
        result = work => result,
        status = child.wait() => {
            let status = status.map_or_else(|err| err.to_string(), |status| status.to_string());
            eprintln!("{what} exited during the scenario: {status}");
            std::process::exit(1)
        }
    }
}

/// SIGTERM, then waits (SIGKILL after 30 s).
async fn stop(mut child: Child) {
    if let Some(pid) = child.id() {
        let _ = Command::new("kill").arg("-TERM").arg(pid.to_string()).status().await;
        if tokio::time::timeout(Duration::from_secs(30), child.wait()).await.is_ok() {
            return;
        }
    }
    let _ = child.kill().await;
}

fn rss_mb(child: &Child) -> f64 {
    let Some(pid) = child.id() else { return 0.0 };
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: f64 = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse().ok()).unwrap_or(0.0);
    kib / 1024.0
}

/// This process's resident memory (the fake model keeps every request it answered), in MiB.
fn own_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse().ok()).unwrap_or(0.0);
    kib / 1024.0
}

fn http_client(max_idle: usize) -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(150)).pool_max_idle_per_host(max_idle).build().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Database counters (every query here names pg_stat, so the statement count leaves it out)

const STATEMENTS: &str = "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements WHERE query NOT ILIKE '%pg_stat%'";

struct Counters {
    commits: i64,
    wal: i64,
}

async fn counters(db: &mut PgConnection) -> Counters {
    let (commits, wal): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT sum(xact_commit) FROM pg_stat_database)::bigint, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint /* pg_stat */",
    )
    .fetch_one(db)
    .await
    .expect("read pg_stat_database");
    Counters { commits, wal }
}

async fn statements(db: &mut PgConnection) -> i64 {
    sqlx::query_scalar(STATEMENTS).fetch_one(db).await.expect("read pg_stat_statements (is it preloaded?)")
}

async fn stats_connection() -> PgConnection {
    let mut db = PgConnection::connect(&database_url()).await.expect("connect to DATABASE_URL");
    sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").execute(&mut db).await.expect("create pg_stat_statements");
    db
}

// ---------------------------------------------------------------------------------------------
// Small helpers

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

/// A distinct lower-case tag for task `i` (letters only, so no rule reads it as a number).
fn tag(i: usize) -> String {
    (0..5).map(|k| char::from(b'a' + ((i / 26usize.pow(k)) % 26) as u8)).collect()
}

fn is_final(task: &Value) -> bool {
    !matches!(task["status"].as_str(), Some("pending" | "processing"))
}

/// Transport errors (connection refused, reset or closed early) seen by any client, retried or not.
static TRANSPORT_ERRORS: AtomicUsize = AtomicUsize::new(0);

/// Counts a transport error and prints the first few.
fn transport_error(what: &str, error: &reqwest::Error) {
    let seen = TRANSPORT_ERRORS.fetch_add(1, Ordering::Relaxed);
    if seen < 5 {
        eprintln!("{what}: {error:?}");
    }
}

/// Long-polls a task until it is final; returns its final status (or what went wrong). A wait that
/// times out is asked again, and so, up to 5 times in a row, is one that fails in transport (as a
/// client would; every such failure is counted in `TRANSPORT_ERRORS`).
async fn wait_verdict(client: &reqwest::Client, base: &str, key: &str, id: &str) -> String {
    let mut failures = 0;
    loop {
        let answer = client.get(format!("{base}/api/quick-action/{id}?wait=true&timeout=60")).bearer_auth(key).send().await;
        match answer {
            Ok(response) if response.status().is_success() => match response.json::<Value>().await {
                Ok(task) if is_final(&task) => return task["status"].as_str().unwrap_or("?").to_owned(),
                Ok(_) => failures = 0,
                Err(_) => return "bad_body".into(),
            },
            Ok(response) => return format!("http_{}", response.status().as_u16()),
            Err(error) => {
                transport_error("long-poll", &error);
                failures += 1;
                if failures > 5 {
                    return "http_error".into();
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

fn count(statuses: &[String]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for status in statuses {
        *counts.entry(status.clone()).or_default() += 1;
    }
    counts
}

// ---------------------------------------------------------------------------------------------
// burst

async fn burst(flags: &BurstFlags) -> Value {
    let (n, concurrency) = (flags.n, flags.concurrency);
    let hold = Duration::from_secs_f64(flags.hold);
    let users = flags.users.max(1);
    let (api_binary, worker_binary) = (&flags.binaries.api_binary, &flags.binaries.worker_binary);

    let mut db = stats_connection().await;
    sqlx::query("SELECT pg_stat_statements_reset()").execute(&mut db).await.unwrap();
    let before = counters(&mut db).await;

    let api = Api::start(api_binary).await;
    let client = http_client(usize::MAX);
    // The tasks belong to many users, as a real burst's do (one user's submissions queue on a lock).
    let mut keys = Vec::with_capacity(users);
    for u in 0..users {
        keys.push(api.user(&client, &format!("burst-{u}-{}", uuid::Uuid::new_v4().simple())).await);
    }

    // 1. N tasks, 64 clients, no worker running.
    eprintln!("burst: posting {n} tasks of {users} users");
    let posting = Instant::now();
    let posted = post_burst(&client, &api.base, &keys, n).await;
    let post_secs = posting.elapsed().as_secs_f64();
    let (ids, refused): (Vec<_>, Vec<_>) = posted.into_iter().partition(Result::is_ok);
    let ids: Vec<(String, String)> = ids.into_iter().filter_map(Result::ok).collect();
    let refused: Vec<String> = refused.into_iter().filter_map(Result::err).collect();
    if let Some(first) = refused.first() {
        eprintln!("burst: {} submissions refused, e.g. {first}", refused.len());
    }
    eprintln!("burst: posted {} tasks in {post_secs:.1} s ({:.0}/s)", ids.len(), ids.len() as f64 / post_secs);

    // 2. N long-polls, held while no worker runs.
    let rss_before = api.rss_mb();
    let opening = Instant::now();
    let mut waiters = Vec::with_capacity(ids.len());
    for (i, (id, key)) in ids.iter().enumerate() {
        // 100 new connections every 25 ms (4,000 a second), not all in one SYN flood.
        if i % 100 == 99 {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let (client, base, key, id) = (client.clone(), api.base.clone(), key.clone(), id.clone());
        waiters.push(tokio::spawn(async move {
            let status = wait_verdict(&client, &base, &key, &id).await;
            (status, Instant::now())
        }));
    }
    // Every waiter's connection is established, and once the API has read every waiter's task its
    // statements settle: wait for both.
    let mut last = statements(&mut db).await;
    loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let now = statements(&mut db).await;
        let settled = now - last < 40 && api.connections() >= ids.len();
        if settled || opening.elapsed() > Duration::from_secs(90) {
            break;
        }
        last = now;
    }
    let took_in = opening.elapsed().as_secs_f64();
    eprintln!("burst: {} long-polls taken in after {took_in:.1} s; holding them {} s", ids.len(), hold.as_secs_f64());
    let held_from = statements(&mut db).await;
    tokio::time::sleep(hold).await;
    let held_to = statements(&mut db).await;
    let rss_waiting = api.rss_mb();
    let still_waiting = waiters.iter().filter(|w| !w.is_finished()).count();
    let statements_per_s = (held_to - held_from) as f64 / hold.as_secs_f64();
    eprintln!(
        "burst: API RSS {rss_before:.0} MB before, {rss_waiting:.0} MB with {still_waiting} waiting; {statements_per_s:.1} statements/s while waiting"
    );

    // 3. One worker drains them.
    let draining = Instant::now();
    let mut worker = spawn_worker(worker_binary, concurrency, Model::Local);
    let mut statuses = Vec::with_capacity(ids.len());
    let (mut last_verdict, mut last_success) = (draining, draining);
    for waiter in waiters {
        let (status, at) = watching(&mut worker, "the worker", waiter).await.expect("a waiter");
        if status == "success" {
            last_success = last_success.max(at);
        }
        statuses.push(status);
        last_verdict = last_verdict.max(at);
    }
    // The drain rate counts the tasks the worker completed (not those the sweeper timed out).
    let successes = statuses.iter().filter(|s| *s == "success").count();
    let drain_secs = last_success.duration_since(draining).as_secs_f64();
    let all_secs = last_verdict.duration_since(draining).as_secs_f64();
    let statuses = count(&statuses);
    eprintln!(
        "burst: one worker (concurrency {concurrency}) completed {successes} tasks in {drain_secs:.1} s ({:.0} tasks/s); all {} verdicts heard after {all_secs:.1} s; statuses {statuses:?}",
        successes as f64 / drain_secs,
        ids.len()
    );
    stop(worker).await;
    let Api { child, .. } = api;
    stop(child).await;

    // 4. The database work of the whole burst (both processes have exited: their counters are in).
    let statement_count = statements(&mut db).await;
    let after = counters(&mut db).await;
    let per_task = |x: i64| round(x as f64 / ids.len().max(1) as f64, 2);
    let result = json!({
        "scenario": "burst",
        "n": n,
        "users": users,
        "posted": ids.len(),
        "refused": refused.len(),
        "concurrency": concurrency,
        "post_per_s": round(ids.len() as f64 / post_secs, 1),
        "long_polls_taken_in_s": round(took_in, 1),
        "api_rss_mb_before": round(rss_before, 1),
        "api_rss_mb_waiting": round(rss_waiting, 1),
        "statements_per_s_waiting": round(statements_per_s, 1),
        "still_waiting_before_worker": still_waiting,
        "drain_s": round(drain_secs, 2),
        "drain_tasks_per_s": round(successes as f64 / drain_secs, 1),
        "all_verdicts_s": round(all_secs, 2),
        "statuses": statuses,
        "transport_errors": TRANSPORT_ERRORS.load(Ordering::Relaxed),
        "statements_per_task": per_task(statement_count),
        "commits_per_task": per_task(after.commits - before.commits),
        "wal_bytes_per_task": per_task(after.wal - before.wal),
    });
    eprintln!(
        "burst: per task {} statements, {} commits, {} WAL bytes",
        result["statements_per_task"], result["commits_per_task"], result["wal_bytes_per_task"]
    );
    result
}

// ---------------------------------------------------------------------------------------------
// latency

async fn latency(flags: &LatencyFlags) -> Value {
    let (samples, warmup) = (flags.samples, flags.warmup);
    let (api_binary, worker_binary) = (&flags.binaries.api_binary, &flags.binaries.worker_binary);

    let fake = FakeModel::start().await;
    fake.fallback(|_| Reply::look_up_and_finish("done"));
    let api = Api::start(api_binary).await;
    let mut worker = spawn_worker(worker_binary, 4, Model::Fake(&fake));
    let client = http_client(8);
    let key = api.user(&client, &format!("latency-{}", uuid::Uuid::new_v4().simple())).await;

    let mut times = Vec::with_capacity(samples);
    let mut post_times = Vec::with_capacity(samples);
    let mut statuses = Vec::new();
    for i in 0..warmup + samples {
        let started = Instant::now();
        let created = post_json(&client, &format!("{}/api/quick-action", api.base), &key, json!({ "text": format!("latency task {}", tag(i)), "timeout": 30 })).await;
        let posted = started.elapsed();
        let id = created["task_id"].as_str().unwrap_or_else(|| panic!("submission refused: {created}"));
        let status = watching(&mut worker, "the worker", wait_verdict(&client, &api.base, &key, id)).await;
        let elapsed = started.elapsed();
        if i >= warmup {
            times.push(ms(elapsed));
            post_times.push(ms(posted));
            statuses.push(status);
        }
    }
    stop(worker).await;
    let Api { child, .. } = api;
    stop(child).await;
    times.sort_by(f64::total_cmp);
    post_times.sort_by(f64::total_cmp);
    let statuses = count(&statuses);
    let result = json!({
        "scenario": "latency",
        "samples": times.len(),
        "p50_ms": round(percentile(&times, 50.0), 2),
        "p90_ms": round(percentile(&times, 90.0), 2),
        "p99_ms": round(percentile(&times, 99.0), 2),
        "max_ms": round(times.last().copied().unwrap_or(f64::NAN), 2),
        "over_100_ms": times.iter().filter(|t| **t > 100.0).count(),
        "transport_errors": TRANSPORT_ERRORS.load(Ordering::Relaxed),
        "post_p50_ms": round(percentile(&post_times, 50.0), 2),
        "post_p99_ms": round(percentile(&post_times, 99.0), 2),
        "statuses": statuses,
    });
    eprintln!(
        "latency: POST-to-verdict p50 {} ms, p99 {} ms, max {} ms, {} over 100 ms, of {} tasks (the POST alone: p50 {} ms, p99 {} ms); {statuses:?}",
        result["p50_ms"],
        result["p99_ms"],
        result["max_ms"],
        result["over_100_ms"],
        times.len(),
        result["post_p50_ms"],
        result["post_p99_ms"]
    );
    result
}

// ---------------------------------------------------------------------------------------------
// slow

async fn slow(flags: &SlowFlags) -> Value {
    let levels = &flags.concurrency;
    let delay = Duration::from_millis(flags.delay_ms);
    let warmup = Duration::from_secs_f64(flags.warmup);
    let window = Duration::from_secs_f64(flags.window);
    let users = flags.users;
    let (api_binary, worker_binary) = (&flags.binaries.api_binary, &flags.binaries.worker_binary);

    let fake = two_turn_model(delay).await;
    let api = Api::start(api_binary).await;
    let client = http_client(usize::MAX);
    // The clients act for many users, as real traffic does (one user's submissions queue on a lock).
    let mut keys = Vec::with_capacity(users);
    for u in 0..users {
        keys.push(api.user(&client, &format!("slow-{u}-{}", uuid::Uuid::new_v4().simple())).await);
    }
    let serial = Arc::new(AtomicUsize::new(0));

    let mut results = Vec::new();
    for &concurrency in levels {
        let clients = concurrency * 3 / 2 + 32;
        let mut worker = spawn_worker(worker_binary, concurrency, Model::Fake(&fake));
        let started = Instant::now();
        let (window_from, window_to) = (started + warmup, started + warmup + window);
        let in_window: Arc<Mutex<Vec<String>>> = Arc::default();
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let (client, base, key, serial, in_window) = (client.clone(), api.base.clone(), keys[c % users].clone(), serial.clone(), in_window.clone());
                // The clients start spread over the first half of the warm-up, not all at once.
                let start_at = started + warmup.mul_f64(c as f64 / clients as f64 / 2.0);
                tokio::spawn(async move {
                    tokio::time::sleep_until(start_at.into()).await;
                    while Instant::now() < window_to {
                        let i = serial.fetch_add(1, Ordering::Relaxed);
                        let status = submit_and_wait(&client, &base, &key, &format!("slow task {}", tag(i))).await;
                        let now = Instant::now();
                        if now >= window_from && now < window_to {
                            in_window.lock().unwrap().push(status);
                        }
                    }
                })
            })
            .collect();
        for handle in handles {
            let _ = watching(&mut worker, "the worker", handle).await;
        }
        let worker_rss = rss_mb(&worker);
        stop(worker).await;
        let statuses = in_window.lock().unwrap().clone();
        let successes = statuses.iter().filter(|s| *s == "success").count();
        let statuses = count(&statuses);
        let rate = successes as f64 / window.as_secs_f64();
        eprintln!(
            "slow: concurrency {concurrency} ({clients} clients): {rate:.1} tasks/s sustained over {} s (model answers after {} ms, 2 turns); {statuses:?}",
            window.as_secs_f64(),
            delay.as_millis()
        );
        results.push(json!({
            "concurrency": concurrency,
            "clients": clients,
            "users": users,
            "tasks_per_s": round(rate, 1),
            "ceiling_tasks_per_s": round(concurrency as f64 / (2.0 * delay.as_secs_f64()), 1),
            "statuses": statuses,
            "worker_rss_mb": round(worker_rss, 1),
        }));
    }
    let Api { child, .. } = api;
    stop(child).await;
    let best = results.iter().max_by(|a, b| a["tasks_per_s"].as_f64().unwrap_or(0.0).total_cmp(&b["tasks_per_s"].as_f64().unwrap_or(0.0))).cloned();
    json!({
        "scenario": "slow",
        "bench_rss_mb": round(own_rss_mb(), 1),
        "transport_errors": TRANSPORT_ERRORS.load(Ordering::Relaxed),
        "delay_ms": delay.as_millis() as u64,
        "turns": 2,
        "warmup_s": warmup.as_secs_f64(),
        "window_s": window.as_secs_f64(),
        "results": results,
        "best": best,
    })
}

// ---------------------------------------------------------------------------------------------
// fairness

async fn fairness(flags: &FairnessFlags) -> Value {
    let fake = two_turn_model(Duration::from_millis(flags.delay_ms)).await;
    let model = || if flags.delay_ms == 0 { Model::Local } else { Model::Fake(&fake) };
    let url = database_url();
    let fair = heavy_drain(flags, &flags.binaries.api_binary, &flags.binaries.worker_binary, &url, model(), true).await;
    let mut result = json!({ "scenario": "fairness", "model": if flags.delay_ms == 0 { "local".to_owned() } else { format!("fake, {} ms a turn, 2 turns", flags.delay_ms) }, "fair": fair });
    if let (Some(api), Some(worker)) = (&flags.baseline_api_binary, &flags.baseline_worker_binary) {
        // A database of its own on the same server, migrated by the baseline's API.
        let mut server = PgConnection::connect(&url).await.expect("connect to DATABASE_URL");
        let name = format!("quickact_fairness_baseline_{}", uuid::Uuid::new_v4().simple());
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut server).await.expect("create the baseline database");
        let (base, _) = url.rsplit_once('/').expect("DATABASE_URL ends with the database's name");
        let baseline_url = format!("{base}/{name}");
        if let Ok(mut baseline_db) = PgConnection::connect(&baseline_url).await {
            // Statement statistics where the server keeps them (for the fetch's cost); else none.
            let _ = sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").execute(&mut baseline_db).await;
        }
        let baseline = heavy_drain(flags, api, worker, &baseline_url, model(), false).await;
        let ratio = fair["drain_tasks_per_s"].as_f64().unwrap_or(0.0) / baseline["drain_tasks_per_s"].as_f64().unwrap_or(f64::NAN);
        eprintln!("fairness: drain with fair turns / before them: {ratio:.3}");
        result["baseline"] = baseline;
        result["drain_ratio"] = json!(round(ratio, 3));
        let _ = sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE {name} WITH (FORCE)"))).execute(&mut server).await;
    }
    result
}

/// The heavy users' bursts drained by one worker of `worker_binary` on the database `url` names;
/// with `light`, a light user's sentences in the middle of it.
async fn heavy_drain(flags: &FairnessFlags, api_binary: &str, worker_binary: &str, url: &str, model: Model<'_>, light: bool) -> Value {
    let api = Api::start_on(api_binary, url).await;
    let client = http_client(usize::MAX);
    let mut heavy = Vec::with_capacity(flags.heavy_users);
    for u in 0..flags.heavy_users {
        heavy.push(api.user(&client, &format!("heavy-{u}-{}", uuid::Uuid::new_v4().simple())).await);
    }
    let light_key = api.user(&client, &format!("light-{}", uuid::Uuid::new_v4().simple())).await;
    let local = matches!(model, Model::Local);
    let sentence = |i: usize| if local { format!("add todo buy milk {}", tag(i)) } else { format!("slow task {}", tag(i)) };

    // Every heavy user's burst at once, interleaved as their scripts' requests would be.
    let n = flags.heavy_users * flags.per_user;
    eprintln!("fairness: {} users post {} tasks each ({n} in all)", flags.heavy_users, flags.per_user);
    let posted: Vec<bool> = futures::stream::iter(0..n)
        .map(|i| {
            let (client, base, key, text) = (client.clone(), api.base.clone(), heavy[i % heavy.len()].clone(), sentence(i));
            async move {
                let response = client.post(format!("{base}/api/quick-action")).bearer_auth(&key).json(&json!({ "text": text, "timeout": 120 })).send().await;
                response.is_ok_and(|r| r.status().is_success())
            }
        })
        .buffer_unordered(64)
        .collect()
        .await;
    let accepted = posted.iter().filter(|ok| **ok).count();

    let mut db = PgConnection::connect(url).await.expect("connect to the bench database");
    let mut worker = spawn_worker_on(worker_binary, flags.concurrency, model, url, None, &[]);
    // The drain under way: its first runs ended.
    let under_way = "SELECT count(*) FROM quick_action_tasks WHERE completed_at IS NOT NULL";
    watching(&mut worker, "the worker", async {
        while sqlx::query_scalar::<_, i64>(under_way).fetch_one(&mut db).await.unwrap() < flags.concurrency as i64 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;

    let (mut times, mut waiting, mut statuses) = (Vec::new(), Vec::new(), Vec::new());
    // Each light task with the wall clock at its POST and at its answer (this machine's clock,
    // which the database's shares), to split its time between the API and the worker.
    let mut light_tasks: Vec<(String, f64, f64)> = Vec::new();
    let unix_now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    if light {
        let waiting_now = "SELECT count(*) FROM quick_action_tasks WHERE status = 'pending'";
        for i in 0..flags.light {
            let started = Instant::now();
            let sent = unix_now();
            let body = json!({ "text": sentence(1_000_000 + i), "wait": true, "timeout": 120 });
            let posted = watching(&mut worker, "the worker", client.post(format!("{}/api/quick-action", api.base)).bearer_auth(&light_key).json(&body).send()).await;
            let status = match posted {
                Ok(response) => {
                    let task = response.json::<Value>().await.unwrap_or_default();
                    if let Some(id) = task["task_id"].as_str() {
                        light_tasks.push((id.to_owned(), sent, unix_now()));
                    }
                    task["status"].as_str().unwrap_or("bad_body").to_owned()
                }
                Err(error) => {
                    transport_error("light submission", &error);
                    "http_error".into()
                }
            };
            times.push(ms(started.elapsed()));
            statuses.push(status);
            waiting.push(sqlx::query_scalar::<_, i64>(waiting_now).fetch_one(&mut db).await.unwrap());
        }
    }

    let unfinished = "SELECT count(*) FROM quick_action_tasks WHERE completed_at IS NULL";
    watching(&mut worker, "the worker", async {
        while sqlx::query_scalar::<_, i64>(unfinished).fetch_one(&mut db).await.unwrap() > 0 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let (drained, drain_secs): (i64, f64) = sqlx::query_as(
        "SELECT count(*), extract(epoch FROM max(completed_at) - min(started_at))::float8
         FROM quick_action_tasks t JOIN users u ON u.id = t.user_id WHERE u.name LIKE 'heavy-%' AND t.status = 'success'",
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    let by_status: Vec<(String, i64)> = sqlx::query_as("SELECT status, count(*) FROM quick_action_tasks GROUP BY 1 ORDER BY 1").fetch_all(&mut db).await.unwrap();
    // Where the light user's time went: waiting for a worker, then running.
    let (light_wait_ms, light_run_ms): (Option<f64>, Option<f64>) = sqlx::query_as(
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM t.started_at - t.created_at) * 1000)::float8,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM t.completed_at - t.started_at) * 1000)::float8
         FROM quick_action_tasks t JOIN users u ON u.id = t.user_id WHERE u.name LIKE 'light-%'",
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    // The API's part: from the POST to the row's creation, and from the verdict to the answer.
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for (id, sent, answered) in &light_tasks {
        let row: Option<(f64, f64)> = sqlx::query_as(
            "SELECT extract(epoch FROM created_at)::float8, extract(epoch FROM completed_at)::float8 FROM quick_action_tasks WHERE id = $1::uuid",
        )
        .bind(id)
        .fetch_optional(&mut db)
        .await
        .unwrap();
        if let Some((created, completed)) = row {
            before.push((created - sent) * 1000.0);
            after.push((answered - completed) * 1000.0);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| round(percentile(v, 50.0), 1))
    };
    let (api_before_ms, api_after_ms) = (median(&mut before), median(&mut after));
    // The fetch's own cost, when the server keeps statement statistics (scripts/fairness.sh's does).
    let fetches: Option<(i64, f64)> = sqlx::query_as(
        "SELECT sum(calls)::bigint, (sum(total_exec_time) / greatest(sum(calls), 1))::float8 FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND (query LIKE '%quickact_claim_tasks(%' OR query LIKE '%WITH claimed AS (%ORDER BY w.created_at%') HAVING sum(calls) > 0",
    )
    .fetch_optional(&mut db)
    .await
    .ok()
    .flatten();
    stop(worker).await;
    let Api { child, .. } = api;
    stop(child).await;

    let drain_rate = drained as f64 / drain_secs;
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let result = json!({
        "heavy_tasks": accepted,
        "drain_tasks_per_s": round(drain_rate, 1),
        "statuses": by_status.into_iter().collect::<BTreeMap<_, _>>(),
        "light_p50_ms": round(percentile(&sorted, 50.0), 1),
        "light_max_ms": round(sorted.last().copied().unwrap_or(f64::NAN), 1),
        "light_statuses": count(&statuses),
        "heavy_waiting_at_light_verdicts_min": waiting.iter().min(),
        "heavy_waiting_at_light_verdicts_max": waiting.iter().max(),
        "light_wait_ms_p50": light_wait_ms.map(|v| round(v, 1)),
        "light_run_ms_p50": light_run_ms.map(|v| round(v, 1)),
        "light_post_to_created_ms_p50": api_before_ms,
        "light_verdict_to_answer_ms_p50": api_after_ms,
        "fetches": fetches.map(|f| f.0),
        "fetch_mean_ms": fetches.map(|f| round(f.1, 3)),
        "light_ms": times.iter().map(|t| round(*t, 1)).collect::<Vec<_>>(),
    });
    eprintln!("fairness: {result}");
    result
}

/// Submits a sentence, long-polls for its verdict and returns the task's final status.
async fn submit_and_wait(client: &reqwest::Client, base: &str, key: &str, text: &str) -> String {
    let response = client.post(format!("{base}/api/quick-action")).bearer_auth(key).json(&json!({ "text": text, "timeout": 120 })).send().await;
    let task: Value = match response {
        Ok(response) if response.status().is_success() => match response.json().await {
            Ok(task) => task,
            Err(_) => return "bad_body".into(),
        },
        Ok(response) => return format!("http_{}", response.status().as_u16()),
        Err(error) => {
            transport_error("submission", &error);
            return "http_error".into();
        }
    };
    if is_final(&task) {
        return task["status"].as_str().unwrap_or("?").to_owned();
    }
    match task["task_id"].as_str() {
        Some(id) => wait_verdict(client, base, key, id).await,
        None => "no_task_id".into(),
    }
}

/// A fake model answering every turn after `delay`, two turns a task: turn one searches the user's
/// items, the turn that reads its result finishes.
async fn two_turn_model(delay: Duration) -> FakeModel {
    let fake = FakeModel::start().await;
    fake.fallback(move |request| {
        let answered_a_tool = request["messages"].as_array().and_then(|m| m.last()).is_some_and(|m| m["role"] == "tool");
        let reply = if answered_a_tool { Reply::finish("action_completed", "done") } else { Reply::tool("search_items", json!({})) };
        reply.delayed(delay)
    });
    fake
}

/// POSTs `body` with a bearer key and returns the JSON answer.
async fn post_json(client: &reqwest::Client, url: &str, key: &str, body: Value) -> Value {
    client.post(url).bearer_auth(key).json(&body).send().await.expect("the API answers").json().await.expect("a JSON answer")
}

// ---------------------------------------------------------------------------------------------
// Provider limits and pauses (issue 32)

/// Clients that keep submitting `text`-tasks (a POST, then a long-poll for the verdict, then the
/// next) until `until`; returns every final status. Users are one per client: the per-user limits
/// are not what is measured.
async fn keep_submitting(api: &Api, clients: usize, until: Instant, text: &'static str) -> Vec<String> {
    let client = http_client(usize::MAX);
    let mut keys = Vec::with_capacity(clients);
    for c in 0..clients {
        keys.push(api.user(&client, &format!("{text}-{c}-{}", uuid::Uuid::new_v4().simple())).await);
    }
    let serial = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = keys
        .into_iter()
        .map(|key| {
            let (client, base, serial) = (client.clone(), api.base.clone(), serial.clone());
            tokio::spawn(async move {
                let mut statuses = Vec::new();
                while Instant::now() < until {
                    let i = serial.fetch_add(1, Ordering::Relaxed);
                    statuses.push(submit_and_wait(&client, &base, &key, &format!("{text} {}", tag(i))).await);
                }
                statuses
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for handle in handles {
        statuses.extend(handle.await.unwrap_or_default());
    }
    statuses
}

async fn provider_limit(flags: &ProviderLimitFlags) -> Value {
    let fake = two_turn_model(Duration::from_millis(flags.delay_ms)).await;
    let api = Api::start(&flags.binaries.api_binary).await;
    let limits = format!(r#"{{"fake-model": {{"requests_per_minute": {}}}}}"#, flags.rpm);
    let workers: Vec<Child> = (0..flags.workers)
        .map(|_| spawn_worker_with(&flags.binaries.worker_binary, flags.concurrency, Model::Fake(&fake), &[("QUICKACT_MODEL_LIMITS", limits.as_str())]))
        .collect();
    let started = Instant::now();
    let statuses = keep_submitting(&api, flags.clients, started + Duration::from_secs_f64(flags.secs), "limited task").await;
    let took = started.elapsed();
    for worker in workers {
        stop(worker).await;
    }
    let Api { child, .. } = api;
    stop(child).await;

    let mut arrivals: Vec<f64> = fake.received().iter().map(|r| r.at.saturating_duration_since(started).as_secs_f64()).collect();
    arrivals.sort_by(f64::total_cmp);
    let in_window = arrivals.iter().filter(|at| **at <= flags.secs).count();
    // The busiest minute: most requests in any 60 s that starts at a request.
    let busiest_minute = (0..arrivals.len()).map(|i| arrivals[i..].partition_point(|at| *at < arrivals[i] + 60.0)).max().unwrap_or(0);
    let allowed = (f64::from(flags.rpm) * flags.secs / 60.0) as usize + flags.rpm as usize;
    let statuses = count(&statuses);
    eprintln!(
        "provider-limit: {} requests in {} s (allowed {allowed}: {} a minute plus a minute's burst), busiest minute {busiest_minute}, {} in all over {:.0} s; {statuses:?}",
        in_window,
        flags.secs,
        flags.rpm,
        arrivals.len(),
        took.as_secs_f64()
    );
    json!({
        "scenario": "provider-limit",
        "rpm": flags.rpm,
        "workers": flags.workers,
        "secs": flags.secs,
        "requests_in_window": in_window,
        "allowed": allowed,
        "busiest_minute": busiest_minute,
        "requests_total": arrivals.len(),
        "run_s": round(took.as_secs_f64(), 1),
        "statuses": statuses,
        "transport_errors": TRANSPORT_ERRORS.load(Ordering::Relaxed),
    })
}

async fn provider_pause(flags: &ProviderPauseFlags) -> Value {
    let fake = FakeModel::start().await;
    fake.fallback(|_| Reply::look_up_and_finish("done after the storm").delayed(Duration::from_millis(100)));
    let api = Api::start(&flags.binaries.api_binary).await;
    let workers: Vec<Child> = (0..flags.workers).map(|_| spawn_worker(&flags.binaries.worker_binary, flags.concurrency, Model::Fake(&fake))).collect();
    let storm = Duration::from_secs_f64(flags.storm);
    let pause = Duration::from_secs(flags.retry_after);
    fake.rate_limit_everything(storm, flags.retry_after);
    let started = Instant::now();
    let statuses = keep_submitting(&api, flags.clients, started + Duration::from_secs_f64(flags.secs), "paused task").await;
    for worker in workers {
        stop(worker).await;
    }
    let Api { child, .. } = api;
    stop(child).await;

    let refused: Vec<Instant> = {
        let mut at: Vec<Instant> = fake.received().iter().map(|r| r.at).filter(|at| *at < started + storm).collect();
        at.sort();
        at
    };
    // A request arriving while an earlier refusal's pause is on (that refusal at least 100 ms
    // before it, time for it to be recorded as a pause) reached a paused model; the first to
    // arrive after a pause ended is its probe.
    let grace = Duration::from_millis(100);
    let during_pauses = refused
        .iter()
        .enumerate()
        .filter(|(i, at)| refused[..*i].iter().any(|earlier| **at > *earlier + grace && **at < *earlier + pause))
        .count();
    let pauses_seen = refused.windows(2).filter(|w| w[1] >= w[0] + pause).count() + usize::from(!refused.is_empty());
    let statuses = count(&statuses);
    eprintln!(
        "provider-pause: {} requests during the {} s storm ({} pauses), {during_pauses} of them while a pause was on (allowed: one probe per worker per pause); {statuses:?}",
        refused.len(),
        flags.storm,
        pauses_seen
    );
    json!({
        "scenario": "provider-pause",
        "workers": flags.workers,
        "storm_s": flags.storm,
        "retry_after_s": flags.retry_after,
        "requests_in_storm": refused.len(),
        "pauses": pauses_seen,
        "requests_while_paused": during_pauses,
        "allowed_while_paused": pauses_seen * flags.workers,
        "statuses": statuses,
        "transport_errors": TRANSPORT_ERRORS.load(Ordering::Relaxed),
    })
}

// ---------------------------------------------------------------------------------------------
// webhooks

async fn webhooks(flags: &LatencyFlags) -> Value {
    let (samples, warmup) = (flags.samples, flags.warmup);
    let (api_binary, worker_binary) = (&flags.binaries.api_binary, &flags.binaries.worker_binary);

    let fake = FakeModel::start().await;
    fake.fallback(|_| Reply::look_up_and_finish("done"));
    let receiver = quickact_testkit::WebhookReceiver::start().await;
    let api = Api::start(api_binary).await;
    let mut worker = spawn_worker_with(worker_binary, 4, Model::Fake(&fake), &[("QUICKACT_WEBHOOK_ALLOW_PRIVATE", "true")]);
    let client = http_client(8);
    let key = api.user(&client, &format!("webhooks-{}", uuid::Uuid::new_v4().simple())).await;
    let endpoint = post_json(&client, &format!("{}/api/webhooks", api.base), &key, json!({ "url": receiver.url })).await;
    receiver.set_secret(endpoint["secret"].as_str().unwrap_or_else(|| panic!("register the endpoint: {endpoint}")));

    let mut times = Vec::with_capacity(samples);
    let mut unverified = 0;
    for i in 0..warmup + samples {
        let created = post_json(&client, &format!("{}/api/quick-action", api.base), &key, json!({ "text": format!("webhook task {}", tag(i)), "timeout": 30 })).await;
        let id = created["task_id"].as_str().unwrap_or_else(|| panic!("submission refused: {created}"));
        watching(&mut worker, "the worker", wait_verdict(&client, &api.base, &key, id)).await;
        let got = watching(&mut worker, "the worker", receiver.wait_for_accepted(i + 1, Duration::from_secs(60))).await;
        let delivery = got.iter().rev().find(|d| d.body["task_id"] == id).unwrap_or_else(|| panic!("no delivery of {id}"));
        let completed_at: chrono::DateTime<chrono::Utc> = delivery.body["completed_at"].as_str().and_then(|t| t.parse().ok()).expect("completed_at");
        let received_at: chrono::DateTime<chrono::Utc> = delivery.received_at.into();
        if i >= warmup {
            times.push((received_at - completed_at).num_microseconds().unwrap_or(i64::MAX) as f64 / 1000.0);
            unverified += usize::from(!delivery.verified);
        }
    }
    let accepted = receiver.accepted().len();
    stop(worker).await;
    let Api { child, .. } = api;
    stop(child).await;
    times.sort_by(f64::total_cmp);
    let result = json!({
        "scenario": "webhooks",
        "samples": times.len(),
        "p50_ms": round(percentile(&times, 50.0), 2),
        "p90_ms": round(percentile(&times, 90.0), 2),
        "p99_ms": round(percentile(&times, 99.0), 2),
        "max_ms": round(times.last().copied().unwrap_or(f64::NAN), 2),
        "deliveries_accepted": accepted,
        "unverified": unverified,
    });
    eprintln!(
        "webhooks: verdict-to-receiver p50 {} ms, p99 {} ms, max {} ms of {} deliveries ({} accepted in all, {} unverified)",
        result["p50_ms"], result["p99_ms"], result["max_ms"], times.len(), accepted, unverified
    );
    result
}

/// POSTs `n` sentences ("add todo buy milk <tag>", 120 s to run) of `keys`' users in turn, 64 at
/// a time: each task's id with its user's key, or why it was refused.
async fn post_burst(client: &reqwest::Client, base: &str, keys: &[String], n: usize) -> Vec<Result<(String, String), String>> {
    futures::stream::iter(0..n)
        .map(|i| {
            let (client, base, key) = (client.clone(), base.to_owned(), keys[i % keys.len()].clone());
            async move {
                let response = client
                    .post(format!("{base}/api/quick-action"))
                    .bearer_auth(&key)
                    .json(&json!({ "text": format!("add todo buy milk {}", tag(i)), "timeout": 120 }))
                    .send()
                    .await
                    .map_err(|e| {
                        transport_error("submission", &e);
                        e.to_string()
                    })?;
                let status = response.status();
                let body: Value = response.json().await.map_err(|e| e.to_string())?;
                body["task_id"].as_str().map(|id| (id.to_owned(), key)).ok_or_else(|| format!("{status}: {body}"))
            }
        })
        .buffer_unordered(64)
        .collect()
        .await
}

// tracing: the cost of trace export on a drain (issue 33)

/// One drain of the `tracing` scenario.
struct TracedDrain {
    posts_per_s: f64,
    drain_tasks_per_s: f64,
    /// Spans the receiver got from this drain's API and worker (both stopped, so flushed).
    spans: usize,
}

async fn tracing_cost(flags: &TracingFlags) -> Value {
    let receiver = quickact_testkit::OtlpReceiver::start().await;
    let mut rounds = Vec::with_capacity(flags.rounds);
    for round in 0..flags.rounds {
        // Off first in even rounds, on first in odd ones: neither gets the warmer database always.
        let order = if round % 2 == 0 { [false, true] } else { [true, false] };
        let mut off_on = [None, None];
        for traced in order {
            eprintln!("tracing: round {} of {}, tracing {}", round + 1, flags.rounds, if traced { "on" } else { "off" });
            let drain = traced_drain(flags, traced.then_some(&receiver)).await;
            eprintln!(
                "tracing:   {:.0} POSTs/s, drain {:.0} tasks/s, {} spans",
                drain.posts_per_s, drain.drain_tasks_per_s, drain.spans
            );
            off_on[usize::from(traced)] = Some(drain);
        }
        let [off, on] = off_on.map(|drain| drain.expect("both drains ran"));
        rounds.push((off, on));
    }
    let median = |values: Vec<f64>| {
        let mut values = values;
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let drain_off = median(rounds.iter().map(|(off, _)| off.drain_tasks_per_s).collect());
    let drain_on = median(rounds.iter().map(|(_, on)| on.drain_tasks_per_s).collect());
    let posts_off = median(rounds.iter().map(|(off, _)| off.posts_per_s).collect());
    let posts_on = median(rounds.iter().map(|(_, on)| on.posts_per_s).collect());
    let ratios = rounds.iter().map(|(off, on)| on.drain_tasks_per_s / off.drain_tasks_per_s).collect::<Vec<_>>();
    let per_round: Vec<Value> = rounds
        .iter()
        .map(|(off, on)| {
            json!({
                "off": { "posts_per_s": round(off.posts_per_s, 1), "drain_tasks_per_s": round(off.drain_tasks_per_s, 1), "spans": off.spans },
                "on": { "posts_per_s": round(on.posts_per_s, 1), "drain_tasks_per_s": round(on.drain_tasks_per_s, 1), "spans": on.spans },
            })
        })
        .collect();
    json!({
        "scenario": "tracing",
        "n": flags.n,
        "users": flags.users,
        "concurrency": flags.concurrency,
        "rounds": per_round,
        "drain_tasks_per_s_off": round(drain_off, 1),
        "drain_tasks_per_s_on": round(drain_on, 1),
        "drain_ratio_on_off": round(drain_on / drain_off, 3),
        "drain_ratio_per_round_median": round(median(ratios), 3),
        "posts_per_s_off": round(posts_off, 1),
        "posts_per_s_on": round(posts_on, 1),
        "spans_per_task_on": round(rounds.iter().map(|(_, on)| on.spans).sum::<usize>() as f64 / (flags.n * flags.rounds) as f64, 2),
    })
}

/// One drain: the API (exporting to `receiver` when given), `--n` tasks POSTed, one worker
/// (exporting too) until every task is final, both stopped (their last spans flushed).
async fn traced_drain(flags: &TracingFlags, receiver: Option<&quickact_testkit::OtlpReceiver>) -> TracedDrain {
    let endpoint = receiver.map(quickact_testkit::OtlpReceiver::endpoint);
    let env: Vec<(&str, &str)> = match &endpoint {
        Some(endpoint) => vec![("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())],
        None => Vec::new(),
    };
    let spans_before = receiver.map_or(0, quickact_testkit::OtlpReceiver::span_count);
    let url = database_url();
    let mut db = PgConnection::connect(&url).await.expect("connect to DATABASE_URL");
    let api = Api::start_with(&flags.binaries.api_binary, &url, &env).await;
    let client = http_client(usize::MAX);
    let users = flags.users.max(1);
    let mut keys = Vec::with_capacity(users);
    for u in 0..users {
        keys.push(api.user(&client, &format!("traced-{u}-{}", uuid::Uuid::new_v4().simple())).await);
    }
    let posting = Instant::now();
    let accepted = post_burst(&client, &api.base, &keys, flags.n).await.iter().filter(|posted| posted.is_ok()).count();
    let posts_per_s = accepted as f64 / posting.elapsed().as_secs_f64();
    if accepted < flags.n {
        eprintln!("tracing: {} submissions refused", flags.n - accepted);
    }

    let draining = Instant::now();
    let mut worker = spawn_worker_with(&flags.binaries.worker_binary, flags.concurrency, Model::Local, &env);
    watching(&mut worker, "the worker", async {
        loop {
            let unfinished: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE completed_at IS NULL")
                .fetch_one(&mut db)
                .await
                .expect("count unfinished tasks");
            if unfinished == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let drain_tasks_per_s = accepted as f64 / draining.elapsed().as_secs_f64();
    stop(worker).await;
    stop(api.child).await;
    let spans = receiver.map_or(0, |receiver| receiver.span_count() - spans_before);
    TracedDrain { posts_per_s, drain_tasks_per_s, spans }
}

// ---------------------------------------------------------------------------------------------
// preview

/// What the preview scenario sends, in turn: what people type into a quick-add box, in both
/// languages, read with certainty or not, one request or several (with the `tz` a client sends).
const PREVIEW_SENTENCES: [&str; 14] = [
    "明天下午3点到4点开会",
    "move my dentist appointment to Friday 10am",
    "把2月8日的会议改到晚上8点",
    "完成报告提交",
    "remind me to call mom tomorrow at 5pm",
    "明天下午3点开会，后天上午10点看牙医",
    "push team meeting back 30 minutes",
    "每周一早上9点开周会",
    "asdfgh tomorrow",
    "add a task",
    "what do I have on friday",
    "删除明天的健身",
    "明天下午3点开会，记得带电脑；周五交报告 p1",
    "dinner with Sam on friday at 8, bring the wine, and cancel tomorrow's yoga",
];

async fn preview(flags: &PreviewFlags) -> Value {
    let api = Api::start(&flags.api_binary).await;
    // One connection, kept alive, as a client typing into one box holds.
    let client = http_client(1);
    let key = api.user(&client, &format!("preview-{}", uuid::Uuid::new_v4().simple())).await;
    let url = format!("{}/api/quick-action/preview", api.base);
    let mut times = Vec::with_capacity(flags.samples);
    let (mut not_ok, mut certain) = (0, 0);
    for i in 0..flags.warmup + flags.samples {
        let text = PREVIEW_SENTENCES[i % PREVIEW_SENTENCES.len()];
        let started = Instant::now();
        let response = client.post(&url).bearer_auth(&key).json(&json!({ "text": text, "tz": "Asia/Shanghai" })).send().await;
        let answer = match response {
            Ok(response) if response.status().is_success() => response.json::<Value>().await.ok(),
            Ok(_) => None,
            Err(error) => {
                transport_error("preview", &error);
                None
            }
        };
        let elapsed = started.elapsed();
        if i >= flags.warmup {
            times.push(ms(elapsed));
            match answer {
                Some(reading) => certain += usize::from(reading["certain"] == true),
                None => not_ok += 1,
            }
        }
    }
    let Api { child, .. } = api;
    stop(child).await;
    times.sort_by(f64::total_cmp);
    let result = json!({
        "scenario": "preview",
        "samples": times.len(),
        "sentences": PREVIEW_SENTENCES.len(),
        "p50_ms": round(percentile(&times, 50.0), 3),
        "p90_ms": round(percentile(&times, 90.0), 3),
        "p99_ms": round(percentile(&times, 99.0), 3),
        "max_ms": round(times.last().copied().unwrap_or(f64::NAN), 3),
        "certain": certain,
        "not_ok": not_ok,
        "transport_errors": TRANSPORT_ERRORS.load(Ordering::Relaxed),
    });
    eprintln!(
        "preview: p50 {} ms, p90 {} ms, p99 {} ms, max {} ms of {} requests over {} sentences ({} read as certain, {} not 200)",
        result["p50_ms"],
        result["p90_ms"],
        result["p99_ms"],
        result["max_ms"],
        times.len(),
        PREVIEW_SENTENCES.len(),
        certain,
        not_ok
    );
    result
}

// ---------------------------------------------------------------------------------------------
// The default connection budgets on a stock Postgres (issue 44)

/// Connections a stock Postgres takes from anyone but a superuser: `max_connections` 100 less
/// `superuser_reserved_connections` 3.
const STOCK_CONNECTIONS: i64 = 97;

async fn stock(flags: &StockFlags) -> Value {
    if std::env::var_os("QUICKACT_DATABASE_CONNECTIONS").is_some() {
        usage("stock measures the default connection budgets: unset QUICKACT_DATABASE_CONNECTIONS");
    }
    // A role limited as a stock server limits everyone but its superusers, owning a database of its
    // own (the API migrates it); the bench's own connections (the sampler's) are a superuser's.
    let server = database_url();
    let mut admin = PgConnection::connect(&server).await.expect("connect to the bench database");
    let role = format!("quickact_stock_{}", uuid::Uuid::new_v4().simple());
    for statement in [
        format!("CREATE ROLE {role} LOGIN CONNECTION LIMIT {STOCK_CONNECTIONS}"),
        format!("CREATE DATABASE {role} OWNER {role}"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement)).execute(&mut admin).await.expect("create the stock role and its database");
    }
    let options: sqlx::postgres::PgConnectOptions = server.parse().expect("a valid DATABASE_URL");
    let url = format!("postgres://{role}@{}:{}/{role}", options.get_host(), options.get_port());

    let fake = two_turn_model(Duration::from_millis(flags.delay_ms)).await;
    let api = Api::start_on(&flags.binaries.api_binary, &url).await;
    let workers: Vec<Child> = (0..flags.workers)
        .map(|_| spawn_worker_on(&flags.binaries.worker_binary, 256, Model::Fake(&fake), &url, None, &[]))
        .collect();

    // The most connections the fleet held at once, sampled until the clients are done.
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let (sampling, role) = (sampling.clone(), role.clone());
        tokio::spawn(async move {
            let mut most = 0i64;
            while sampling.load(Ordering::Relaxed) {
                let held: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE usename = $1")
                    .bind(&role)
                    .fetch_one(&mut admin)
                    .await
                    .unwrap_or(0);
                most = most.max(held);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (most, admin)
        })
    };
    let started = Instant::now();
    let statuses = keep_submitting(&api, flags.clients, started + Duration::from_secs_f64(flags.secs), "stock task").await;
    let took = started.elapsed().as_secs_f64();
    sampling.store(false, Ordering::Relaxed);
    let (most_held, mut admin) = sampler.await.expect("the sampler ends");
    for worker in workers {
        stop(worker).await;
    }
    let Api { child, .. } = api;
    stop(child).await;
    for statement in [format!("DROP DATABASE {role} WITH (FORCE)"), format!("DROP ROLE {role}")] {
        sqlx::query(sqlx::AssertSqlSafe(statement)).execute(&mut admin).await.expect("drop the stock role and its database");
    }

    let done = statuses.len();
    let statuses = count(&statuses);
    eprintln!(
        "stock: an API and {} workers at their default budgets, {} clients: {done} tasks in {took:.1} s ({:.0}/s); {statuses:?}; \
         at most {most_held} of {STOCK_CONNECTIONS} connections held",
        flags.workers,
        flags.clients,
        done as f64 / took
    );
    json!({
        "scenario": "stock",
        "workers": flags.workers,
        "clients": flags.clients,
        "tasks_per_s": round(done as f64 / took, 1),
        "statuses": statuses,
        "most_connections": most_held,
        "connection_limit": STOCK_CONNECTIONS,
        "transport_errors": TRANSPORT_ERRORS.load(Ordering::Relaxed),
    })
}
