//! Items of the planner and how clients see them.

use std::{fmt, str::FromStr};

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use quickact_time::Segment;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::domain::task::UnknownName;

/// What an item is (a `text` column holding the snake_case name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum ItemKind {
    /// Something at a time: a concrete range, or a fuzzy part of a day.
    Event,
    /// Something to do by a date (and maybe a deadline time).
    Todo,
    /// Something to be reminded of at a time.
    Reminder,
}

impl ItemKind {
    pub const ALL: [ItemKind; 3] = [ItemKind::Event, ItemKind::Todo, ItemKind::Reminder];

    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Event => "event",
            ItemKind::Todo => "todo",
            ItemKind::Reminder => "reminder",
        }
    }
}

impl FromStr for ItemKind {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ItemKind::ALL.into_iter().find(|k| k.as_str() == s.trim()).ok_or_else(|| UnknownName(s.to_owned()))
    }
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Open or done (a `text` column holding the snake_case name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum ItemStatus {
    Open,
    Completed,
}

impl ItemStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Open => "open",
            ItemStatus::Completed => "completed",
        }
    }
}

impl FromStr for ItemStatus {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "open" => Ok(ItemStatus::Open),
            "completed" => Ok(ItemStatus::Completed),
            other => Err(UnknownName(other.to_owned())),
        }
    }
}

/// An item row (every column but the soft-deletion mark and the generated range columns).
#[derive(Debug, Clone, PartialEq)]
pub struct ItemRecord {
    pub id: Uuid,
    pub user_id: Uuid,
    pub kind: ItemKind,
    pub title: String,
    pub description: Option<String>,
    pub date: NaiveDate,
    pub start_time: Option<NaiveTime>,
    pub end_time: Option<NaiveTime>,
    pub segment: Option<Segment>,
    pub priority: Option<i16>,
    pub item_group: Option<String>,
    pub status: ItemStatus,
    pub completed_at: Option<DateTime<Utc>>,
    pub recurrence: Option<String>,
    pub created_by_task: Option<Uuid>,
    pub updated_by_task: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Every field of an item a writer sets (creation, or the merged result of an update). Built and
/// checked by [`super::patch::ItemPatch`], so whatever reaches the store obeys the planner's rules.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemFields {
    pub kind: ItemKind,
    pub title: String,
    pub description: Option<String>,
    pub date: NaiveDate,
    pub start_time: Option<NaiveTime>,
    pub end_time: Option<NaiveTime>,
    pub segment: Option<Segment>,
    pub priority: Option<i16>,
    pub item_group: Option<String>,
    pub status: ItemStatus,
    pub recurrence: Option<String>,
}

impl ItemFields {
    /// The fields an item has now.
    pub fn of(item: &ItemRecord) -> Self {
        ItemFields {
            kind: item.kind,
            title: item.title.clone(),
            description: item.description.clone(),
            date: item.date,
            start_time: item.start_time,
            end_time: item.end_time,
            segment: item.segment,
            priority: item.priority,
            item_group: item.item_group.clone(),
            status: item.status,
            recurrence: item.recurrence.clone(),
        }
    }
}

/// `HH:MM`.
pub fn format_time(time: NaiveTime) -> String {
    time.format("%H:%M").to_string()
}

/// An item as clients (and the verdict's `items` / `options`) see it: the contract's item shape.
/// Optional fields that are empty are left out.
#[derive(Debug, Serialize)]
struct ItemView<'a> {
    id: Uuid,
    kind: ItemKind,
    title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(serialize_with = "serialize_date")]
    date: NaiveDate,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "serialize_time")]
    start_time: Option<NaiveTime>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "serialize_time")]
    end_time: Option<NaiveTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    segment: Option<Segment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority: Option<i16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<&'a str>,
    status: ItemStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    completed_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recurrence: Option<&'a str>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

fn serialize_date<S: serde::Serializer>(date: &NaiveDate, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&date.format("%Y-%m-%d"))
}

fn serialize_time<S: serde::Serializer>(time: &Option<NaiveTime>, s: S) -> Result<S::Ok, S::Error> {
    match time {
        Some(time) => s.collect_str(&time.format("%H:%M")),
        None => s.serialize_none(),
    }
}

impl ItemRecord {
    /// The item as clients (and the verdict's `items` / `options`) see it.
    pub fn to_json(&self) -> Value {
        let view = ItemView {
            id: self.id,
            kind: self.kind,
            title: &self.title,
            description: self.description.as_deref(),
            date: self.date,
            start_time: self.start_time,
            end_time: self.end_time,
            segment: self.segment,
            priority: self.priority,
            group: self.item_group.as_deref(),
            status: self.status,
            completed_at: self.completed_at,
            recurrence: self.recurrence.as_deref(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        };
        serde_json::to_value(view).expect("an item serialises")
    }

    /// One line for lists shown to people and models: `[todo] 2026-02-08 15:00-16:00 title`.
    pub fn summary(&self) -> String {
        let mut line = format!("[{}] {}", self.kind, self.date.format("%Y-%m-%d"));
        match (self.start_time, self.end_time, self.segment) {
            (Some(start), Some(end), _) => line.push_str(&format!(" {}-{}", format_time(start), format_time(end))),
            (Some(start), None, _) => line.push_str(&format!(" {}", format_time(start))),
            (None, _, Some(segment)) => line.push_str(&format!(" ({})", segment.as_str())),
            _ => {}
        }
        line.push(' ');
        line.push_str(&self.title);
        if self.status == ItemStatus::Completed {
            line.push_str(" (done)");
        }
        line
    }
}
