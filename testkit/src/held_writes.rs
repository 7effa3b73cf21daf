//! Lining concurrent writers up, so a race is tested deterministically instead of hoped for.
//!
//! [`HeldWrites`] holds a table in SHARE mode: reads pass, writes wait. A test starts two
//! writers, waits with [`HeldWrites::wait_for_blocked`] until both are blocked in Postgres (on
//! this lock, or on a lock the code itself takes, such as the per-user planner lock), and then
//! [`HeldWrites::release`]s them together: without serialisation in the code both have read
//! the same state by then, which is exactly the race a lost update or a double booking needs.

use std::time::Duration;

use sqlx::{PgPool, Postgres, Transaction};

use crate::wait::wait_for;

/// A transaction holding a table against writes (rolled back if dropped).
pub struct HeldWrites {
    lock: Transaction<'static, Postgres>,
    pool: PgPool,
}

/// Sessions of this database waiting on a lock of any kind.
const BLOCKED_SESSIONS: &str =
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";

/// The tables of this database sessions wait to lock, and in which mode. Every test database is a
/// copy of one template, so table oids repeat across databases: the database has to be named too.
const WAITED_LOCKS: &str = "SELECT DISTINCT relation::regclass::text, mode FROM pg_locks
    WHERE locktype = 'relation' AND NOT granted
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

impl HeldWrites {
    /// Holds back every write to `table` until [`release`](Self::release).
    pub async fn hold(pool: &PgPool, table: &str) -> Self {
        let mut held = HeldWrites { lock: pool.begin().await.expect("begin the lock's transaction"), pool: pool.clone() };
        held.lock_table(table, "SHARE").await;
        held
    }

    /// Holds back reads of `table` too (and its writes), until [`release`](Self::release).
    pub async fn and_reads_of(mut self, table: &str) -> Self {
        self.lock_table(table, "ACCESS EXCLUSIVE").await;
        self
    }

    /// Locks `table` in `mode` in the held transaction.
    async fn lock_table(&mut self, table: &str, mode: &str) {
        assert!(table.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "a plain table name, got {table:?}");
        let statement = sqlx::AssertSqlSafe(format!("LOCK TABLE {table} IN {mode} MODE"));
        sqlx::query(statement).execute(&mut *self.lock).await.expect("lock the table");
    }

    /// Waits until `n` sessions are blocked on locks (panics after 20 s, naming how many were).
    /// Polls from the pool, not from the lock's transaction: activity statistics are a snapshot
    /// held until the transaction that read them ends.
    pub async fn wait_for_blocked(&self, n: i64) {
        let what = format!("{n} writers blocked on locks");
        let pool = &self.pool;
        wait_for(&what, Duration::from_secs(20), || async move {
            let blocked: i64 = sqlx::query_scalar(BLOCKED_SESSIONS).fetch_one(pool).await.expect("read pg_stat_activity");
            if blocked >= n { Ok(()) } else { Err(blocked) }
        })
        .await
    }

    /// Waits until, for each `(table, mode)` of `locks`, a session waits to lock `table` in `mode`
    /// (`AccessShareLock` for a read, `RowExclusiveLock` for a write); panics after 20 s.
    pub async fn wait_for_waiting(&self, locks: &[(&str, &str)]) {
        let what = format!("sessions waiting for {locks:?}");
        let pool = &self.pool;
        wait_for(&what, Duration::from_secs(20), || async move {
            let waiting: Vec<(String, String)> = sqlx::query_as(WAITED_LOCKS).fetch_all(pool).await.expect("read pg_locks");
            let all = locks.iter().all(|(table, mode)| waiting.iter().any(|(t, m)| t == table && m == mode));
            if all { Ok(()) } else { Err(waiting) }
        })
        .await
    }

    /// Lets the held writes go.
    pub async fn release(self) {
        self.lock.commit().await.expect("release the table");
    }
}
