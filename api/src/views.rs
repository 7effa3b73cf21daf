//! Tasks and journal steps as clients see them. The documents themselves live in
//! [`quickact_shared::views`] (webhook deliveries carry them too); listings are the API's own.

use serde::Serialize;

pub use quickact_shared::views::*;

/// One page of a task listing: `count` is this page's size, `total` how many tasks match across all
/// pages.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TaskPage {
    pub count: usize,
    pub total: i64,
    pub next_cursor: Option<String>,
    pub tasks: Vec<TaskView>,
}
