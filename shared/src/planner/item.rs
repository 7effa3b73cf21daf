//! Items of the planner and how clients see them.

use std::{fmt, str::FromStr};

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use quickact_time::Segment;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::domain::names::UnknownName;

/// What an item is (a `text` column holding the snake_case name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type, utoipa::ToSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type, utoipa::ToSchema)]
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

/// An item's state as clients see it in a verdict: open, completed, or deleted (an item a delete
/// or an undo just took away: the verdict about it says so, though the row keeps its last status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ItemState {
    Open,
    Completed,
    Deleted,
}

impl From<ItemStatus> for ItemState {
    fn from(status: ItemStatus) -> Self {
        match status {
            ItemStatus::Open => ItemState::Open,
            ItemStatus::Completed => ItemState::Completed,
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
    /// The IANA zone its date and times were written in.
    pub time_zone: String,
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
    /// The zone the date and times were stated in (set by [`super::patch::ItemPatch`]).
    pub time_zone: String,
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
            time_zone: item.time_zone.clone(),
        }
    }
}

/// `HH:MM`.
pub fn format_time(time: NaiveTime) -> String {
    time.format("%H:%M").to_string()
}

/// An item as clients (and the verdict's `items` / `options`) see it: the contract's item shape.
/// Optional fields that are empty are left out. Dates are `YYYY-MM-DD` and times `HH:MM`, wall-clock
/// in the item's zone (`tz`).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Item)]
pub struct ItemView<'a> {
    id: Uuid,
    kind: ItemKind,
    title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(serialize_with = "serialize_date")]
    date: NaiveDate,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "serialize_time")]
    #[schema(value_type = Option<String>, pattern = "^[0-2][0-9]:[0-5][0-9]$")]
    start_time: Option<NaiveTime>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "serialize_time")]
    #[schema(value_type = Option<String>, pattern = "^[0-2][0-9]:[0-5][0-9]$")]
    end_time: Option<NaiveTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = segment_schema)]
    segment: Option<Segment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 4)]
    priority: Option<i16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<&'a str>,
    /// `deleted` only in the verdict of the task (or undo) that deleted it.
    status: ItemState,
    #[serde(skip_serializing_if = "Option::is_none")]
    completed_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recurrence: Option<&'a str>,
    tz: &'a str,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

/// A part of the day, by the names the contract gives them.
pub fn segment_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(Segment::ALL.map(|s| s.as_str())))
        .description(Some("A part of the day instead of clock times"))
        .build()
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
        self.view_as(self.status.into())
    }

    /// The item as the verdict of the task that deleted it shows it: `status: deleted` (and
    /// `deleted: true`, which clients read before the status said so).
    pub fn to_json_deleted(&self) -> Value {
        let mut view = self.view_as(ItemState::Deleted);
        view["deleted"] = Value::Bool(true);
        view
    }

    fn view_as(&self, status: ItemState) -> Value {
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
            status,
            completed_at: self.completed_at,
            recurrence: self.recurrence.as_deref(),
            tz: &self.time_zone,
            created_at: self.created_at,
            updated_at: self.updated_at,
        };
        serde_json::to_value(view).expect("an item serialises")
    }

    /// Where the item starts when it occurs on `date` (its own date, or an occurrence of its
    /// recurrence): the clock time, else the start of its part of day, else the day's start. The
    /// same as the table's generated `starts_at` for its own date.
    pub fn starts_on(&self, date: NaiveDate) -> NaiveDateTime {
        date.and_time(self.start_time.or(self.segment.map(|s| s.bounds().0)).unwrap_or(NaiveTime::MIN))
    }

    /// Where the item ends when it occurs on `date` (like the generated `ends_at`): its end time (the
    /// next day when not after the start), its start for a bare time, else the end of its part of
    /// day or of the day.
    pub fn ends_on(&self, date: NaiveDate) -> NaiveDateTime {
        match (self.start_time, self.end_time) {
            (Some(start), Some(end)) => super::rules::range_end(date, start, end),
            (Some(start), None) => date.and_time(start),
            (None, _) => {
                let (_, last_minute) = self.segment.unwrap_or(Segment::AllDay).bounds();
                date.and_time(last_minute) + chrono::Duration::seconds(59)
            }
        }
    }

    /// One line for lists shown to people and models: `[todo] 2026-02-08 15:00-16:00 title`.
    pub fn summary(&self) -> String {
        self.summary_on(self.date)
    }

    /// [`ItemRecord::summary`] with another date (an occurrence's).
    pub fn summary_on(&self, date: NaiveDate) -> String {
        let mut line = format!("[{}] {}", self.kind, date.format("%Y-%m-%d"));
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

/// An item as a search or a conflict check found it: on its own date, or on an occurrence of its
/// recurrence (`occurrence`, shown to clients as `"occurrence": "YYYY-MM-DD"`).
#[derive(Debug, Clone, PartialEq)]
pub struct FoundItem {
    pub item: ItemRecord,
    pub occurrence: Option<NaiveDate>,
}

impl FoundItem {
    pub fn on_its_date(item: ItemRecord) -> Self {
        FoundItem { item, occurrence: None }
    }

    /// Found on `date`: an occurrence, unless it is the item's own date.
    pub fn on(item: ItemRecord, date: NaiveDate) -> Self {
        let occurrence = (date != item.date).then_some(date);
        FoundItem { item, occurrence }
    }

    /// The date it was found on.
    pub fn date(&self) -> NaiveDate {
        self.occurrence.unwrap_or(self.item.date)
    }

    /// Where it starts on that date.
    pub fn starts(&self) -> NaiveDateTime {
        self.item.starts_on(self.date())
    }

    pub fn to_json(&self) -> Value {
        let mut v = self.item.to_json();
        if let Some(date) = self.occurrence {
            v["occurrence"] = Value::String(date.format("%Y-%m-%d").to_string());
        }
        v
    }

    /// The item's line, on the date it was found on: `[event] 2026-02-16 10:00-11:00 周会 (repeats)`.
    pub fn summary(&self) -> String {
        let line = self.item.summary_on(self.date());
        if self.item.recurrence.is_some() { format!("{line} (repeats)") } else { line }
    }
}
