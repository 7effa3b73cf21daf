//! The service's vocabulary.
pub mod task;
pub mod user;
