//! SQL on our tables. Every function takes `impl PgExecutor`, so it runs on a pool or inside the
//! caller's transaction.
pub mod steps;
pub mod tasks;
pub mod users;
