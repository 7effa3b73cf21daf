//! A corpus case as data: the row's sentence, the items it starts with and what it must do.

use chrono::{NaiveDateTime, TimeZone};
use chrono_tz::Tz;
use serde_json::{Value, json};

/// One row of a corpus file.
#[derive(Debug, Clone)]
pub struct Case {
    /// The file the row is in (empty for text parsed directly).
    pub file: String,
    /// The row's line in its file (from 1), to find it again.
    pub line: usize,
    /// `family/kind`, e.g. `create/range of hours`.
    pub kind: String,
    /// The sentence, exactly as the user types it.
    pub text: String,
    pub expect: Expect,
    /// The user's items before the sentence, numbered from `#0` in this order.
    pub setup: Vec<Item>,
    /// The local wall time the sentence was written at, in `time_zone`.
    pub now: NaiveDateTime,
    pub time_zone: Tz,
    /// The `expect` and `setup` columns as written, for reports.
    pub expect_text: String,
    pub setup_text: String,
}

impl Case {
    /// The family: the kind up to its first `/` (`create` of `create/range of hours`).
    pub fn family(&self) -> &str {
        self.kind.split('/').next().unwrap_or_default()
    }

    /// A Chinese sentence: it has a Han character (as the reader decides its language).
    pub fn is_chinese(&self) -> bool {
        quickact_time::is_chinese(&self.text)
    }

    /// `now` in its zone as RFC 3339 (`2026-02-07T09:00:00+08:00`), what `POST /api/quick-action`
    /// takes. The parser has checked the wall time exists in the zone; an ambiguous one (a clock
    /// turned back) is its first occurrence.
    pub fn now_rfc3339(&self) -> String {
        self.time_zone.from_local_datetime(&self.now).earliest().map(|t| t.to_rfc3339()).unwrap_or_default()
    }

    /// Every setup index the expectation names (the parser has checked each is in the setup).
    pub fn indexes(&self) -> Vec<usize> {
        self.expect.indexes()
    }

    /// Where the row is: `FILE:LINE`, or `line LINE` for text parsed directly.
    pub fn location(&self) -> String {
        if self.file.is_empty() { format!("line {}", self.line) } else { format!("{}:{}", self.file, self.line) }
    }
}

/// An item's time: an event's range, a start alone, or a part of the day.
#[derive(Debug, Clone, PartialEq)]
pub enum When {
    /// `HH:MM-HH:MM`.
    Range(String, String),
    /// `HH:MM`: a reminder's or to-do's time (an event's start, with no end written).
    At(String),
    /// `early_morning`, `morning`, `forenoon`, `noon`, `afternoon`, `evening` or `all_day`.
    Segment(String),
}

impl When {
    /// `(start_time, end_time, segment)` as the API writes them (`None`: absent).
    pub fn fields(when: Option<&When>) -> (Option<&str>, Option<&str>, Option<&str>) {
        match when {
            Some(When::Range(start, end)) => (Some(start), Some(end), None),
            Some(When::At(start)) => (Some(start), None, None),
            Some(When::Segment(segment)) => (None, None, Some(segment)),
            None => (None, None, None),
        }
    }
}

/// An item a case starts with, created through `POST /api/items`.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// `event`, `todo` or `reminder`.
    pub kind: String,
    pub title: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    pub when: Option<When>,
    pub priority: Option<u8>,
    /// Already completed.
    pub done: bool,
    /// An RRULE (`FREQ=WEEKLY;BYDAY=MO`).
    pub recurrence: Option<String>,
}

impl Item {
    /// The body of `POST /api/items` that creates it.
    pub fn json(&self) -> Value {
        let mut body = json!({ "kind": self.kind, "title": self.title, "date": self.date });
        let (start, end, segment) = When::fields(self.when.as_ref());
        for (field, value) in [("start_time", start), ("end_time", end), ("segment", segment), ("recurrence", self.recurrence.as_deref())] {
            if let Some(value) = value {
                body[field] = json!(value);
            }
        }
        if let Some(priority) = self.priority {
            body["priority"] = json!(priority);
        }
        if self.done {
            body["status"] = json!("completed");
        }
        body
    }
}

/// The one item a `creates` must add, field by field (`None`: the field must be absent).
#[derive(Debug, Clone, PartialEq)]
pub struct NewItem {
    pub kind: String,
    /// The acceptable titles (`"开周会"|"周会"`), at least one.
    pub titles: Vec<String>,
    pub date: String,
    pub when: Option<When>,
    pub priority: Option<u8>,
    pub recurrence: Option<String>,
    /// The item's description.
    pub note: Option<String>,
}

/// Where a `moves` must leave its item.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    pub date: String,
    pub when: Option<When>,
}

/// One change a sentence must make.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Creates(NewItem),
    Completes(Vec<usize>),
    Deletes(Vec<usize>),
    Moves(usize, Slot),
}

/// What a sentence must do (indexes point into the case's setup).
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// One or more changes (` && `), and nothing else changed.
    Effects(Vec<Effect>),
    /// A listing of exactly these items (in this order when `ordered`); nothing changed.
    Lists { items: Vec<usize>, ordered: bool },
    /// A question offering exactly these items; nothing changed.
    AsksWhich(Vec<usize>),
    /// A question asking what to add, without options; nothing changed.
    AsksWhat,
    /// A question because the time has passed; nothing changed.
    AsksTimePassed,
    /// A question naming exactly these overlapping events; nothing changed.
    AsksConflict(Vec<usize>),
    /// An error saying nothing matches; nothing changed.
    NotFound,
    /// An error saying the sentence was not understood; nothing changed.
    Declines,
}

impl Expect {
    /// The kind of question (`result.question`) an `asks` expects.
    pub fn question(&self) -> Option<&'static str> {
        match self {
            Expect::AsksWhich(_) => Some("which_item"),
            Expect::AsksWhat => Some("details"),
            Expect::AsksTimePassed => Some("time_passed"),
            Expect::AsksConflict(_) => Some("conflict"),
            _ => None,
        }
    }

    /// Every setup index named.
    pub fn indexes(&self) -> Vec<usize> {
        match self {
            Expect::Effects(effects) => effects
                .iter()
                .flat_map(|effect| match effect {
                    Effect::Creates(_) => vec![],
                    Effect::Completes(v) | Effect::Deletes(v) => v.clone(),
                    Effect::Moves(i, _) => vec![*i],
                })
                .collect(),
            Expect::Lists { items, .. } => items.clone(),
            Expect::AsksWhich(v) | Expect::AsksConflict(v) => v.clone(),
            Expect::AsksWhat | Expect::AsksTimePassed | Expect::NotFound | Expect::Declines => vec![],
        }
    }
}
