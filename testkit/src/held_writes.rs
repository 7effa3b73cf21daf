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

impl HeldWrites {
    /// Holds back every write to `table` until [`release`](Self::release).
    pub async fn hold(pool: &PgPool, table: &str) -> Self {
        let mut lock = pool.begin().await.expect("begin the lock's transaction");
        assert!(table.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "a plain table name, got {table:?}");
        let statement = sqlx::AssertSqlSafe(format!("LOCK TABLE {table} IN SHARE MODE"));
        sqlx::query(statement).execute(&mut *lock).await.expect("lock the table");
        HeldWrites { lock, pool: pool.clone() }
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

    /// Lets the held writes go.
    pub async fn release(self) {
        self.lock.commit().await.expect("release the table");
    }
}
