//! Listing the caller's items (`GET /api/items`, MCP's `list_items`): open and completed ones, by
//! date and time. Deleted items are never listed.

use chrono::NaiveDate;
use quickact_shared::{
    domain::user::User,
    planner::{
        item::{FoundItem, ItemKind, ItemStatus},
        rules::{widen_from, widen_to},
        store::{self, ItemQuery, SortKey},
    },
};
use serde::Serialize;
use serde_json::Value;

use crate::{error::ApiError, state::AppState};

const DEFAULT_LIST_LIMIT: i64 = 50;
const MAX_LIST_LIMIT: i64 = 200;

/// Which items to list, as a client writes it (each absent or blank field is no filter).
#[derive(Debug, Default)]
pub struct ItemFilter {
    /// `event`, `todo` or `reminder`.
    pub kind: Option<String>,
    /// `open`, `completed` or `all`; default both open and completed.
    pub status: Option<String>,
    /// First date (`YYYY-MM-DD`), inclusive.
    pub date_from: Option<String>,
    /// Last date (`YYYY-MM-DD`), inclusive.
    pub date_to: Option<String>,
    /// Words that must appear in the title or description.
    pub q: Option<String>,
    /// Most items listed: default 50, at most 200 (more is cut to it).
    pub limit: Option<i64>,
}

/// The items listed, each as `GET /api/items/{id}` shows it.
#[derive(Debug, Serialize)]
pub struct ItemList {
    pub items: Vec<Value>,
}

/// The caller's items that `filter` asks for, by date and time; 400 (`invalid_query`) for a filter
/// that does not read.
pub async fn list_items(state: &AppState, user: &User, filter: ItemFilter) -> Result<ItemList, ApiError> {
    let bad = |m: String| ApiError::bad_request("invalid_query", m);
    let present = |v: &Option<String>| v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let kind = match present(&filter.kind) {
        Some(k) => Some(k.parse::<ItemKind>().map_err(|_| bad(format!("unknown kind {k:?}")))?),
        None => None,
    };
    let status = match present(&filter.status) {
        Some(s) if s == "all" => None,
        Some(s) => Some(s.parse::<ItemStatus>().map_err(|_| bad(format!("unknown status {s:?}")))?),
        None => None,
    };
    let date = |v: &Option<String>, name: &str| -> Result<Option<NaiveDate>, ApiError> {
        present(v).map(|d| NaiveDate::parse_from_str(&d, "%Y-%m-%d").map_err(|_| bad(format!("{name} must be YYYY-MM-DD")))).transpose()
    };
    let limit = filter.limit.unwrap_or(DEFAULT_LIST_LIMIT);
    if limit < 1 {
        return Err(bad("limit must be at least 1".into()));
    }
    let query = ItemQuery {
        kind,
        status,
        from: date(&filter.date_from, "date_from")?.map(widen_from),
        to: date(&filter.date_to, "date_to")?.map(widen_to),
        terms: present(&filter.q).map(|q| q.split_whitespace().map(str::to_owned).collect()).unwrap_or_default(),
        synonyms: Vec::new(),
        endings: Vec::new(),
        sort: SortKey::Deadline,
        descending: false,
        limit: limit.min(MAX_LIST_LIMIT),
        relaxed: false,
        at: None,
    };
    let mut connection = state.pool.acquire().await?;
    let (items, _) = store::search_items(&mut connection, user.id, &query).await?;
    Ok(ItemList { items: items.iter().map(FoundItem::to_json).collect() })
}
