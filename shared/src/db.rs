//! The connection pool and the classification of database failures.

use std::{
    sync::{
        LazyLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use secrecy::{ExposeSecret, SecretString};
use sqlx::{
    PgConnection, PgPool, Postgres,
    pool::{PoolConnection, PoolConnectionMetadata},
    postgres::{PgConnectOptions, PgPoolOptions},
};

pub use crate::unavailable::is_unavailable;

/// How long a session of ours may sit idle inside a transaction before the server ends it (every
/// pool of ours, and the listeners, connect with it).
///
/// No transaction of ours waits on anything but its own statements (never a model, a client or a
/// timer), so one idle this long belongs to a process that is frozen (a SIGSTOP, a paused VM) or
/// stuck. Ended, it releases its row locks (a frozen worker's open transaction would otherwise hold
/// its users' items and its tasks' rows, which the fetch skips, until it wakes) and the snapshot it
/// pins; its tasks are taken over after their lease, as a dead worker's are. Equal to the default
/// lease: the takeover and the release come together.
const IDLE_IN_TRANSACTION_LIMIT: &str = "15s";

/// What this build's connections say they read of the journal (`quickact.journal`): a turn's row
/// with the calls written with it (`shared/src/store/steps.rs`). The claim never hands a task
/// whose journal has such rows to a connection that does not say so, a build from before them
/// (`migrations/functions/claim.sql`).
const JOURNAL_FORM: (&str, &str) = ("quickact.journal", "turn_rows");

/// Opens a pool, retrying for `patience` while the server is not reachable yet (a container
/// starting beside the database, or a database restarting).
pub async fn connect(url: &SecretString, max_connections: u32, patience: Duration) -> Result<PgPool, sqlx::Error> {
    let options: PgConnectOptions = url.expose_secret().parse()?;
    let options = options.application_name("quickact").options([("idle_in_transaction_session_timeout", IDLE_IN_TRANSACTION_LIMIT), JOURNAL_FORM]);
    let started = tokio::time::Instant::now();
    let mut delay = Duration::from_millis(100);
    loop {
        let attempt = pool_options(max_connections).connect_with(options.clone()).await;
        match attempt {
            Ok(pool) => return Ok(pool),
            Err(err) if is_unavailable(&err) && started.elapsed() < patience => {
                tracing::warn!(error = %err, "database not reachable yet, retrying");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
            Err(err) => return Err(err),
        }
    }
}

/// A worker's connections (`QUICKACT_DATABASE_CONNECTIONS`), split among its pools: the listener
/// takes one, the bookkeeping pool up to 5, and the main pool (the tools' statements, groups of
/// local runs), the journal's and the lazily written journal's share the rest. A fleet's processes
/// together must fit the server's `max_connections` (docs/configuration.md): pools that together
/// may open more than the server has fill it after a burst (a reconnect storm after an outage, every
/// waiting run opening one) and keep what they took, since steady use keeps every pooled connection
/// busy, while another pool cannot open one (the chaos suite's exhausted-connections scenario).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerPools {
    pub main: u32,
    pub journal: u32,
    pub lazy_journal: u32,
    pub bookkeeping: u32,
}

impl WorkerPools {
    /// A worker's budget unless configured: three workers and an API at their defaults (75 + 16)
    /// fit a stock Postgres (`max_connections` 100, 3 of them reserved) with room for a few
    /// sessions beside them. The bench's slow model (2,048 runs at once) and the local drain are
    /// served as well as with the 102 it was before (docs/performance.md).
    pub const DEFAULT: u32 = 25;
    /// The least a worker runs with: its listener, and two connections for each pool.
    pub const FEWEST: u32 = 9;

    pub fn within(total: u32) -> WorkerPools {
        let total = total.max(Self::FEWEST);
        let bookkeeping = ((total - 1) / 8).clamp(2, 5);
        let rest = total - 1 - bookkeeping;
        let third = rest / 3;
        WorkerPools { main: third, journal: third, lazy_journal: rest - 2 * third, bookkeeping }
    }
}

/// Warns, at a worker's start, when the live workers (this one included) with this one's budget and
/// an API with its default may together open more connections than the server takes
/// (`max_connections` less its reserved slots): the fleet must fit (see [`WorkerPools`]). Other
/// workers' budgets are not recorded, so it is an estimate; a failed read only says so.
pub async fn warn_if_the_fleet_may_not_fit(pool: &PgPool, budget: u32) {
    let read: Result<(i32, i32, i64), sqlx::Error> = sqlx::query_as(
        "SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int,
                (SELECT count(*) FROM quickact_workers WHERE last_seen > now() - interval '1 minute')",
    )
    .fetch_one(pool)
    .await;
    match read {
        Ok((max, reserved, workers)) => {
            let workers = workers.max(1) as u32;
            let fleet = workers * budget + ApiPools::DEFAULT;
            let room = (max - reserved).max(0) as u32;
            if fleet > room {
                tracing::warn!(
                    workers,
                    budget,
                    fleet,
                    max_connections = max,
                    "{workers} worker(s) with QUICKACT_DATABASE_CONNECTIONS={budget} and an API may open {fleet} connections, \
                     more than the server takes ({room}); after a burst some pools could open none: lower \
                     QUICKACT_DATABASE_CONNECTIONS or raise max_connections (docs/configuration.md)"
                );
            }
        }
        Err(err) => tracing::warn!(error = %err, "could not compare the fleet's connections with the server's max_connections"),
    }
}

// An API and three workers at their defaults fit a stock Postgres: 100 connections, 3 reserved for
// superusers.
const _: () = assert!(ApiPools::DEFAULT + 3 * WorkerPools::DEFAULT <= 100 - 3);

/// The API's connections (`QUICKACT_DATABASE_CONNECTIONS`), split among its pools: the listener
/// takes one, the hot path (submissions and the long-polls' batched reads: one batch of each kind
/// at a time) up to 8, the main pool the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiPools {
    pub main: u32,
    pub hot_path: u32,
}

impl ApiPools {
    /// The API's budget unless configured (see [`WorkerPools::DEFAULT`]).
    pub const DEFAULT: u32 = 16;
    /// The least the API runs with: its listener, two for the hot path, two for the rest.
    pub const FEWEST: u32 = 5;

    pub fn within(total: u32) -> ApiPools {
        let total = total.max(Self::FEWEST);
        let hot_path = (total / 5).clamp(2, 8);
        ApiPools { main: total - 1 - hot_path, hot_path }
    }
}

/// A pool beside `pool`, to the same database, whose commits do not wait for the disk
/// (`synchronous_commit = off`): for writes that a database crash may lose without losing anything.
///
/// A worker's fetch (which claims the tasks it takes), its heartbeat, lease renewals and hand-backs
/// go through it; each of them otherwise waits for a flush of the write-ahead log. What a crash can
/// lose is the last fraction of a second of them, never anything after them: Postgres replays the
/// log in order, and every later durable commit (a verdict) flushes them first. Lost, they are
/// redone: a claim lost leaves the task waiting to be fetched again (the run's next write, which
/// checks the lease in its own transaction, finds the task not its own and stops); a renewal lost
/// lets the lease lapse early, and the task is taken again and resumed from its journal.
///
/// Its statements find their rows by key, and are planned once per connection (see
/// [`planning_once`]).
pub fn bookkeeping_pool(pool: &PgPool, max_connections: u32) -> PgPool {
    beside(pool, max_connections, &[&[("synchronous_commit", "off")][..], &PLAN_ONCE].concat())
}

/// A pool beside `pool`, to the same database, whose statements are planned once per connection
/// (`plan_cache_mode = force_generic_plan`): for the statements on a task's way to its verdict.
///
/// Postgres plans a prepared statement again at every execution (a custom plan, for the values
/// given) unless the plan it would keep (the generic one) looks about as cheap, and for statements
/// that take arrays (`UNNEST`, `= ANY`) or JSON record sets it never does: its estimate for an
/// array of unknown length is larger. So a worker's claims and journal writes, a submission's
/// inserts and the long-polls' batched reads were planned afresh every time, on every task's way.
/// They find their rows by key, with one right plan whatever the values. Not for statements whose
/// best plan depends on the values: listings and reports with optional filters (`$1 IS NULL OR
/// user_id = $1`), and the tools' searches, whose rows per user vary from none to thousands (with
/// one plan for all users, a search of a user with no items took hundreds of milliseconds once
/// another user had thousands).
///
/// The one plan is made at a connection's first use of the statement, from the statistics of that
/// moment, and kept until they change: on a new database, with tables nearly empty, that plan
/// scanned the whole table (cheapest for a few rows) and kept doing so as the tables grew, until
/// autovacuum next analysed them (a claim took many times longer under load than with its index). So
/// these connections also plan with sequential scans disabled (`enable_seqscan = off`): a key
/// lookup uses its index whatever the table's size when it was planned.
pub fn planning_once(pool: &PgPool, max_connections: u32) -> PgPool {
    beside(pool, max_connections, &PLAN_ONCE)
}

/// A lazily connected pool to `pool`'s database, whose connections start with `settings`.
fn beside(pool: &PgPool, max_connections: u32, settings: &[(&str, &str)]) -> PgPool {
    let options = (*pool.connect_options()).clone().options(settings.iter().copied());
    pool_options(max_connections).connect_lazy_with(options)
}

/// The settings of [`planning_once`].
const PLAN_ONCE: [(&str, &str); 2] = [("plan_cache_mode", "force_generic_plan"), ("enable_seqscan", "off")];

/// How every pool of ours behaves, whatever it connects to.
///
/// A connection the server dropped (a restart) is found out before a query uses it, without
/// testing every connection on every checkout: sqlx's test is a round trip to the server, as many
/// as the statements of a typical use, and each connection is tested anyway when it is given back.
/// A restart disconnects every client, so the process's listening connection sees it the moment it
/// happens ([`database_went_away`]); connections opened before that are replaced instead of used,
/// and one idle long enough for the server, or something between, to have dropped it quietly is
/// tested first.
///
/// A connection idle for [`GIVE_BACK_WHEN_IDLE_FOR`] is closed, so a pool that grew in a burst (a
/// reconnect storm after an outage, every waiting run opening one) gives the server its slots back
/// once the load drops, instead of after sqlx's default of ten minutes. Under steady load every
/// pooled connection stays in use: what keeps a fleet's pools from filling the server is its
/// budget ([`WorkerPools`], [`ApiPools`]).
fn pool_options(max_connections: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .min_connections(0)
        .idle_timeout(GIVE_BACK_WHEN_IDLE_FOR)
        .acquire_timeout(Duration::from_secs(5))
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if opened_before_last_outage(&meta) {
                    return Ok(false);
                }
                if meta.idle_for >= TEST_WHEN_IDLE_FOR {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
}

/// How long a pooled connection may sit unused before it is closed (given back to the server).
const GIVE_BACK_WHEN_IDLE_FOR: Duration = Duration::from_secs(30);

/// How long a connection may sit in a pool before it is tested on checkout.
const TEST_WHEN_IDLE_FOR: Duration = Duration::from_secs(10);

/// When this process last saw the database go away, in nanoseconds after [`SINCE`] (0: never).
static LAST_OUTAGE: AtomicU64 = AtomicU64::new(0);
static SINCE: LazyLock<Instant> = LazyLock::new(Instant::now);
/// How many times this process saw the database go away.
static OUTAGES: AtomicU64 = AtomicU64::new(0);

/// Says the database went away (the process's listening connection was dropped): every pooled
/// connection opened before now is replaced at its next checkout instead of failing a query, and
/// [`outages_seen`] counts one more.
pub fn database_went_away() {
    let since = SINCE.elapsed().as_nanos().min(u64::MAX as u128) as u64;
    LAST_OUTAGE.store(since.max(1), Ordering::Relaxed);
    OUTAGES.fetch_add(1, Ordering::SeqCst);
}

/// How many times this process saw the database go away (a restart drops every connection, the
/// listening one too). A write that did not wait for the disk may have been lost in one: whoever
/// relies on such writes checks them again when this number moved.
pub fn outages_seen() -> u64 {
    OUTAGES.load(Ordering::SeqCst)
}

/// Waits until every commit made before this call is on disk: one commit that waits for the disk,
/// which the write-ahead log flushes after everything before it. For readers that show what a
/// crash must not take back, on the connection that read it: that connection answering proves the
/// server did not restart in between (a crash drops every connection), where a fresh one would
/// flush a restarted server's log, without what the crash took.
///
/// The commit must write to the log, or Postgres does not wait for the disk whatever
/// `synchronous_commit` says: a transaction that only took a transaction id
/// (`pg_current_xact_id()`, what this did first) commits without a flush, and the chaos suite
/// caught a step that a client had been shown lost in a crash. A transactional logical message
/// is the smallest write to the log there is (no table, no lock, nothing to vacuum); it needs no
/// privilege and any `wal_level`.
pub async fn flush_commits(db: impl sqlx::PgExecutor<'_>) -> Result<(), sqlx::Error> {
    // One implicit transaction for both statements, whatever the session's own setting.
    sqlx::raw_sql("SET LOCAL synchronous_commit = on; SELECT pg_logical_emit_message(true, 'quickact.flush', '')").execute(db).await?;
    Ok(())
}

/// Whether the connection `meta` describes was opened before the last outage this process saw.
fn opened_before_last_outage(meta: &PoolConnectionMetadata) -> bool {
    Instant::now().checked_sub(meta.age).is_some_and(outage_since)
}

/// Whether this process saw the database go away at or after `instant`.
fn outage_since(instant: Instant) -> bool {
    let outage = LAST_OUTAGE.load(Ordering::Relaxed);
    outage != 0 && instant <= *SINCE + Duration::from_nanos(outage)
}

/// A connection of a pool that one batching loop keeps from one batch to the next (the loops
/// write or read one batch at a time, see [`crate::batch`]).
///
/// Taking a connection from the pool for each batch and giving it back after costs a busy loop
/// more than its batches' own statements: sqlx tests every connection given back with a round
/// trip to the server, in a task of its own, so each batch woke the server and the process twice
/// (2 cores shared by the server, the API and its clients). The API's submission and read loops
/// keep one (their gains are in docs/performance.md); a worker's loops gained nothing measurable
/// from it, and take a connection per batch still.
///
/// It is kept at most [`KEEP_FOR`], then given back and another taken, so the pool's own care
/// (replacing connections opened before an outage, testing idle ones, the lifetime limit) reaches
/// it within that; it is given back at once when this process sees the database go away, and by
/// [`KeptConnection::run`] when a statement on it failed (the pool's test closes it if it is
/// broken).
pub struct KeptConnection {
    pool: PgPool,
    kept: Option<(PoolConnection<Postgres>, Instant)>,
}

/// Longest a [`KeptConnection`] keeps one connection.
pub const KEEP_FOR: Duration = Duration::from_secs(1);

impl KeptConnection {
    pub fn new(pool: PgPool) -> Self {
        KeptConnection { pool, kept: None }
    }

    /// The kept connection, or one taken from the pool when none is kept, or it was kept for
    /// [`KEEP_FOR`], or the database went away since it was taken.
    pub async fn get(&mut self) -> Result<&mut PgConnection, sqlx::Error> {
        if self.kept.as_ref().is_some_and(|&(_, taken)| taken.elapsed() >= KEEP_FOR || outage_since(taken)) {
            self.kept = None;
        }
        if self.kept.is_none() {
            self.kept = Some((self.pool.acquire().await?, Instant::now()));
        }
        let (conn, _) = self.kept.as_mut().expect("a connection was just kept");
        Ok(&mut **conn)
    }

    /// Runs `op` on the kept connection, and gives the connection back when it failed.
    pub async fn run<T>(&mut self, op: impl AsyncFnOnce(&mut PgConnection) -> Result<T, sqlx::Error>) -> Result<T, sqlx::Error> {
        let result = match self.get().await {
            Ok(conn) => op(conn).await,
            Err(err) => Err(err),
        };
        if result.is_err() {
            // Back to the pool, whose test on its return closes it if it is broken.
            self.kept = None;
        }
        result
    }
}

/// Runs `op` until it succeeds, fails for a reason other than an unreachable database, or
/// `patience` runs out; backs off exponentially in between. `op` must be safe to repeat: a
/// transaction that failed midway was rolled back.
pub async fn retry_unavailable<T, F, Fut>(patience: Duration, mut op: F) -> Result<T, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, sqlx::Error>>,
{
    let started = tokio::time::Instant::now();
    let mut delay = Duration::from_millis(50);
    loop {
        match op().await {
            Err(err) if is_unavailable(&err) && started.elapsed() + delay < patience => {
                crate::metrics::database_error(&err);
                tracing::warn!(error = %err, retry_in_ms = delay.as_millis() as u64, "database unavailable, retrying");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}

/// `%text%` for `ILIKE`, with LIKE's wildcards in `text` taken literally (a search for "50%" finds
/// "50%", not everything that starts with 50).
pub fn like_pattern(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_connections_are_split_among_its_pools_within_its_budget() {
        assert_eq!(WorkerPools::within(WorkerPools::DEFAULT), WorkerPools { main: 7, journal: 7, lazy_journal: 7, bookkeeping: 3 });
        assert_eq!(ApiPools::within(ApiPools::DEFAULT), ApiPools { main: 12, hot_path: 3 });
        for total in [WorkerPools::FEWEST, 10, 20, 33, 64, 102, 300] {
            let p = WorkerPools::within(total);
            assert_eq!(1 + p.main + p.journal + p.lazy_journal + p.bookkeeping, total, "{total}: {p:?}");
            assert!(p.main >= 2 && p.journal >= 2 && p.lazy_journal >= 2 && p.bookkeeping >= 2, "{total}: {p:?}");
        }
        for total in [ApiPools::FEWEST, 10, 16, 41, 100] {
            let p = ApiPools::within(total);
            assert_eq!(1 + p.main + p.hot_path, total, "{total}: {p:?}");
            assert!(p.main >= 2 && p.hot_path >= 2, "{total}: {p:?}");
        }
    }
}
