//! Which database failures mean "not reachable right now": a leaf, so both the pools
//! ([`crate::db`]) and the metrics ([`crate::metrics`]) classify errors without importing each other.

/// True when the error means "the database cannot be reached right now" (down, restarting,
/// network) rather than "this query is wrong": such failures are worth retrying, and the API
/// answers them with 503.
pub fn is_unavailable(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Protocol(_) => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            // 08: connection exceptions; 57P01-57P03: admin shutdown, crash shutdown, cannot
            // connect now (starting up); 53300: too many connections.
            code.starts_with("08") || matches!(&*code, "57P01" | "57P02" | "57P03" | "53300")
        }),
        _ => false,
    }
}
