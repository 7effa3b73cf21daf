//! The planner: each user's events, to-dos and reminders.
//!
//! - [`item`]: items, their kinds and statuses, and how clients see them.
//! - [`patch`]: every rule of an item's fields, checked once for the HTTP routes and the tools.
//! - [`store`]: SQL on items, always scoped to one user.
//! - [`recurrence`]: occurrences of recurring items within a window, bounded.
//! - [`rules`]: search normalisation, counts stated in a sentence, conflicts.
//! - [`schedule`]: turning time arguments into an item's date, times and part of day.
//! - [`selector`]: the time of day that picks items out ("the 3pm meeting", "上午的会").
//! - [`undo`]: putting back exactly the item changes one task made.
//! - [`history`]: which tasks created and changed an item, and what a task left to undo.

pub mod history;
pub mod item;
pub mod patch;
pub mod query;
pub mod recurrence;
pub mod rules;
pub mod schedule;
pub mod selector;
pub mod store;
pub mod undo;
