//! Items of the planner and how clients see them.

use std::{fmt, str::FromStr};

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::domain::task::UnknownName;

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// Open or done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// An item row.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemRecord {
    pub id: Uuid,
    pub user_id: Uuid,
    pub kind: String,
    pub title: String,
    pub description: Option<String>,
    pub date: NaiveDate,
    pub start_time: Option<NaiveTime>,
    pub end_time: Option<NaiveTime>,
    pub segment: Option<String>,
    pub priority: Option<i16>,
    pub item_group: Option<String>,
    pub status: String,
    pub completed_at: Option<DateTime<Utc>>,
    pub recurrence: Option<String>,
    pub created_by_task: Option<Uuid>,
    pub updated_by_task: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// `HH:MM`.
pub fn format_time(time: NaiveTime) -> String {
    time.format("%H:%M").to_string()
}

impl ItemRecord {
    /// The item as clients (and the verdict's `items` / `options`) see it. Optional fields that are
    /// empty are left out.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "date": self.date.format("%Y-%m-%d").to_string(),
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        });
        let map = v.as_object_mut().expect("an object");
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                map.insert(key.to_owned(), value);
            }
        };
        put("description", self.description.clone().map(Value::String));
        put("start_time", self.start_time.map(|t| Value::String(format_time(t))));
        put("end_time", self.end_time.map(|t| Value::String(format_time(t))));
        put("segment", self.segment.clone().map(Value::String));
        put("priority", self.priority.map(|p| json!(p)));
        put("group", self.item_group.clone().map(Value::String));
        put("completed_at", self.completed_at.map(|t| json!(t)));
        put("recurrence", self.recurrence.clone().map(Value::String));
        v
    }

    /// One line for lists shown to people and models: `[todo] 2026-02-08 15:00-16:00 title`.
    pub fn summary(&self) -> String {
        let mut line = format!("[{}] {}", self.kind, self.date.format("%Y-%m-%d"));
        match (self.start_time, self.end_time, &self.segment) {
            (Some(start), Some(end), _) => line.push_str(&format!(" {}-{}", format_time(start), format_time(end))),
            (Some(start), None, _) => line.push_str(&format!(" {}", format_time(start))),
            (None, _, Some(segment)) => line.push_str(&format!(" ({segment})")),
            _ => {}
        }
        line.push(' ');
        line.push_str(&self.title);
        if self.status == "completed" {
            line.push_str(" (done)");
        }
        line
    }
}
