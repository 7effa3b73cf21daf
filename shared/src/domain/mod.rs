//! The service's vocabulary.
pub mod names;
pub mod task;
pub mod user;
