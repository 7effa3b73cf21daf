//! Catching a request at the moment it reads a task.
//!
//! The API offers no event for "this long-poll is waiting now": its waiters live in memory and hold
//! no database connection. The nearest moment a test can observe is the request reading its task.
//! [`HeldTaskReads`] locks `quick_action_tasks` against reads; the test sends its request;
//! [`HeldTaskReads::release_after_a_read`] waits until `pg_locks` shows a read queued behind the
//! lock, lets it through and returns once that read is done. By then the request has passed
//! authentication and read the task: it is past everything that could refuse it, and what it does
//! before it waits (take its long-poll slot, register in memory) holds up when the server stops or
//! the database goes away, so whatever the test does next happens while the client waits.
//!
//! Only reads are counted: a worker renewing its lease writes (another lock mode) and is merely
//! delayed. A test using this must have no other request reading tasks at the same time.

use std::time::Duration;

use sqlx::{PgPool, Postgres, Transaction};

use crate::wait::{wait_for, wait_until};

/// A transaction holding `quick_action_tasks` locked against reads (rolled back if dropped).
pub struct HeldTaskReads {
    lock: Transaction<'static, Postgres>,
    pool: PgPool,
}

/// A read (`AccessShareLock`) of `quick_action_tasks` waiting for a lock in this database. Every
/// test database is a copy of one template, so table oids repeat across databases: the database
/// has to be named too.
const WAITING_READER: &str = "SELECT pid FROM pg_locks
    WHERE locktype = 'relation' AND NOT granted AND mode = 'AccessShareLock'
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND relation = 'quick_action_tasks'::regclass
    LIMIT 1";

impl HeldTaskReads {
    /// Holds back every read of `quick_action_tasks` until [`release_after_a_read`](Self::release_after_a_read).
    pub async fn hold(pool: &PgPool) -> Self {
        let mut lock = pool.begin().await.expect("begin the lock's transaction");
        sqlx::query("LOCK TABLE quick_action_tasks IN ACCESS EXCLUSIVE MODE").execute(&mut *lock).await.expect("lock the task table");
        HeldTaskReads { lock, pool: pool.clone() }
    }

    /// Waits until a read of the table waits behind the lock (panics after `timeout`): the pid of
    /// its backend.
    pub async fn wait_for_a_read(&self, timeout: Duration) -> i32 {
        wait_for("a read of quick_action_tasks waiting behind the test's lock", timeout, || async {
            sqlx::query_scalar(WAITING_READER).fetch_optional(&self.pool).await.expect("read pg_locks").ok_or("no reader waiting")
        })
        .await
    }

    /// Waits until a read of the table waits behind the lock, lets every read through, and returns
    /// once that read has finished. Panics after `timeout` at either step.
    pub async fn release_after_a_read(self, timeout: Duration) {
        let reader = self.wait_for_a_read(timeout).await;
        let HeldTaskReads { lock, pool } = self;
        lock.commit().await.expect("release quick_action_tasks");
        // The backend is `active` until its query has answered; then `idle` until the pool uses it again.
        wait_until("the held read of quick_action_tasks to finish", timeout, || async {
            let state: Option<Option<String>> = sqlx::query_scalar("SELECT state FROM pg_stat_activity WHERE pid = $1")
                .bind(reader)
                .fetch_optional(&pool)
                .await
                .expect("read pg_stat_activity");
            state.flatten().as_deref() != Some("active")
        })
        .await;
    }
}
