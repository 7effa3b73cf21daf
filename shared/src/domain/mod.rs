//! The service's vocabulary.
pub mod cost_budget;
pub mod names;
pub mod task;
pub mod user;
