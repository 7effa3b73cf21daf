//! The planner: each user's events, to-dos and reminders.
//!
//! - [`item`]: items, their kinds and statuses, and how clients see them.
//! - [`store`]: SQL on items, always scoped to one user.
//! - [`rules`]: search normalisation, counts stated in a sentence, conflicts.
//! - [`schedule`]: turning time arguments into an item's date, times and part of day.

pub mod item;
pub mod rules;
pub mod schedule;
pub mod store;
