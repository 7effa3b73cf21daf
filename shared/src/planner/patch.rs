//! The one place an item's fields are checked and inferred, for the HTTP item routes and the agent's
//! tools alike. An [`ItemPatch`] says what to set; [`ItemPatch::create`] and [`ItemPatch::apply`]
//! enforce every rule of an item once and answer a typed [`ItemError`], which each caller turns into
//! its own kind of error (a 422 for a client, a tool result for the model).

use chrono::NaiveDate;
use chrono::NaiveTime;
use quickact_time::{Segment, TimeContext};

use super::{
    item::{ItemFields, ItemKind, ItemStatus},
    schedule::read_recurrence,
};

/// Longest title, in characters (the column's CHECK says the same).
pub const MAX_TITLE_CHARS: usize = 500;
/// Longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 5000;
/// Longest group name, in characters.
pub const MAX_GROUP_CHARS: usize = 100;

/// Why a patch cannot be applied. The messages say what a valid value looks like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ItemError {
    #[error("title must be 1 to {MAX_TITLE_CHARS} characters")]
    Title,
    #[error("description is longer than {MAX_DESCRIPTION_CHARS} characters")]
    DescriptionTooLong,
    #[error("group is longer than {MAX_GROUP_CHARS} characters")]
    GroupTooLong,
    #[error("kind must be event, todo or reminder, got {0:?}")]
    Kind(String),
    #[error("status must be open or completed, got {0:?}")]
    Status(String),
    #[error("priority must be 1 (important and urgent), 2 (important), 3 (urgent) or 4 (neither)")]
    Priority,
    #[error("segment must be one of all_day, early_morning, morning, forenoon, noon, afternoon, evening, got {0:?}")]
    Segment(String),
    /// The recurrence is neither an RRULE nor a repetition the resolver reads; says which.
    #[error("{0}")]
    Recurrence(String),
    #[error("end_time needs a start_time")]
    EndWithoutStart,
    #[error("an item has either clock times or a segment, not both")]
    TimesAndSegment,
    #[error("the limit of {0} items is reached; delete items that are no longer needed to add new ones")]
    TooManyItems(u32),
}

/// What to set on an item. `None` leaves a field as it is; for an optional field `Some(None)`
/// clears it. Text is taken as written: it is trimmed here, and empty text clears an optional field.
/// Names of kinds, statuses and segments are read with [`parse_kind`], [`parse_status`] and
/// [`parse_segment`]; the recurrence is an RRULE or a repetition in words ("每周一", "every weekday").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemPatch {
    pub kind: Option<ItemKind>,
    pub title: Option<String>,
    pub description: Option<Option<String>>,
    pub date: Option<NaiveDate>,
    pub start_time: Option<Option<NaiveTime>>,
    pub end_time: Option<Option<NaiveTime>>,
    pub segment: Option<Option<Segment>>,
    pub priority: Option<Option<i64>>,
    pub group: Option<Option<String>>,
    pub status: Option<ItemStatus>,
    pub recurrence: Option<Option<String>>,
}

impl ItemPatch {
    /// The fields of a new item. A missing date is `today` and a missing status open; a missing
    /// kind is [`inferred_kind`]. The title is required.
    pub fn create(self, today: NaiveDate, time: &TimeContext) -> Result<ItemFields, ItemError> {
        let kind = self.kind;
        let mut fields = ItemFields {
            kind: ItemKind::Todo,
            title: check_title(self.title.as_deref().unwrap_or_default())?,
            description: None,
            date: today,
            start_time: None,
            end_time: None,
            segment: None,
            priority: None,
            item_group: None,
            status: ItemStatus::Open,
            recurrence: None,
            time_zone: time.tz().name().to_owned(),
        };
        self.apply(&mut fields, time)?;
        fields.kind = kind.unwrap_or_else(|| inferred_kind(fields.start_time, fields.segment));
        Ok(fields)
    }

    /// Applies the patch to an item's fields, checking each value and then the item as a whole.
    /// New dates or times are wall-clock times of `time`'s zone, which the item then remembers.
    /// On error `fields` may be partly changed: callers discard them.
    pub fn apply(self, fields: &mut ItemFields, time: &TimeContext) -> Result<(), ItemError> {
        if self.date.is_some() || self.start_time.is_some() || self.end_time.is_some() || self.segment.is_some() {
            fields.time_zone = time.tz().name().to_owned();
        }
        if let Some(kind) = self.kind {
            fields.kind = kind;
        }
        if let Some(title) = self.title {
            fields.title = check_title(&title)?;
        }
        if let Some(description) = self.description {
            fields.description = optional_text(description, MAX_DESCRIPTION_CHARS, ItemError::DescriptionTooLong)?;
        }
        if let Some(group) = self.group {
            fields.item_group = optional_text(group, MAX_GROUP_CHARS, ItemError::GroupTooLong)?;
        }
        if let Some(priority) = self.priority {
            fields.priority = priority.map(check_priority).transpose()?;
        }
        if let Some(status) = self.status {
            fields.status = status;
        }
        if let Some(date) = self.date {
            fields.date = date;
        }
        if let Some(start_time) = self.start_time {
            fields.start_time = start_time;
        }
        if let Some(end_time) = self.end_time {
            fields.end_time = end_time;
        }
        if let Some(segment) = self.segment {
            fields.segment = segment;
        }
        if let Some(recurrence) = self.recurrence {
            fields.recurrence = match recurrence.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
                Some(text) => Some(read_recurrence(text, time).map_err(ItemError::Recurrence)?),
                None => None,
            };
        }
        if fields.end_time.is_some() && fields.start_time.is_none() {
            return Err(ItemError::EndWithoutStart);
        }
        if fields.segment.is_some() && fields.start_time.is_some() {
            return Err(ItemError::TimesAndSegment);
        }
        Ok(())
    }
}

/// The kind of a new item whose kind was not stated: something at a clock time or part of day is
/// an event, anything else a to-do.
pub fn inferred_kind(start_time: Option<NaiveTime>, segment: Option<Segment>) -> ItemKind {
    if start_time.is_some() || segment.is_some() { ItemKind::Event } else { ItemKind::Todo }
}

/// A kind by name.
pub fn parse_kind(text: &str) -> Result<ItemKind, ItemError> {
    text.parse().map_err(|_| ItemError::Kind(text.trim().to_owned()))
}

/// A status by name.
pub fn parse_status(text: &str) -> Result<ItemStatus, ItemError> {
    text.parse().map_err(|_| ItemError::Status(text.trim().to_owned()))
}

/// A part of the day by name.
pub fn parse_segment(text: &str) -> Result<Segment, ItemError> {
    text.trim().parse().map_err(|_| ItemError::Segment(text.trim().to_owned()))
}

/// A priority quadrant, 1 to 4.
pub fn check_priority(priority: i64) -> Result<i16, ItemError> {
    if (1..=4).contains(&priority) { Ok(priority as i16) } else { Err(ItemError::Priority) }
}

fn check_title(title: &str) -> Result<String, ItemError> {
    let title = title.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
        return Err(ItemError::Title);
    }
    Ok(title.to_owned())
}

/// Trimmed optional text; empty text is no text.
fn optional_text(text: Option<String>, max_chars: usize, too_long: ItemError) -> Result<Option<String>, ItemError> {
    let Some(text) = text.as_deref().map(str::trim).filter(|t| !t.is_empty()) else { return Ok(None) };
    if text.chars().count() > max_chars {
        return Err(too_long);
    }
    Ok(Some(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn time() -> TimeContext {
        TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 8, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai)
    }

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 2, 8).unwrap()
    }

    fn at(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).unwrap()
    }

    #[test]
    fn a_new_item_without_a_kind_is_an_event_when_timed_and_a_todo_otherwise() {
        let timed = ItemPatch { title: Some("开会".into()), start_time: Some(Some(at(15, 0))), ..Default::default() };
        assert_eq!(timed.create(today(), &time()).unwrap().kind, ItemKind::Event);
        let part_of_day = ItemPatch { title: Some("跑步".into()), segment: Some(Some(Segment::Evening)), ..Default::default() };
        assert_eq!(part_of_day.create(today(), &time()).unwrap().kind, ItemKind::Event);
        let untimed = ItemPatch { title: Some("buy milk".into()), ..Default::default() };
        let fields = untimed.create(today(), &time()).unwrap();
        assert_eq!((fields.kind, fields.status, fields.date), (ItemKind::Todo, ItemStatus::Open, today()));
    }

    #[test]
    fn text_is_trimmed_and_empty_optional_text_is_none() {
        let patch = ItemPatch {
            kind: Some(parse_kind(" reminder ").unwrap()),
            title: Some("  call mom ".into()),
            description: Some(Some("   ".into())),
            group: Some(Some(" family ".into())),
            ..Default::default()
        };
        let fields = patch.create(today(), &time()).unwrap();
        assert_eq!(fields.kind, ItemKind::Reminder);
        assert_eq!(fields.title, "call mom");
        assert_eq!(fields.description, None);
        assert_eq!(fields.item_group.as_deref(), Some("family"));
    }

    #[test]
    fn every_rule_answers_its_own_error() {
        let new = |patch: ItemPatch| ItemPatch { title: patch.title.clone().or(Some("x".into())), ..patch }.create(today(), &time());
        assert_eq!(new(ItemPatch { title: Some("  ".into()), ..Default::default() }), Err(ItemError::Title));
        assert_eq!(new(ItemPatch { title: Some("长".repeat(501)), ..Default::default() }), Err(ItemError::Title));
        assert!(new(ItemPatch { title: Some("长".repeat(500)), ..Default::default() }).is_ok());
        assert_eq!(parse_kind("meeting"), Err(ItemError::Kind("meeting".into())));
        assert_eq!(parse_kind(""), Err(ItemError::Kind("".into())));
        assert_eq!(parse_status("done"), Err(ItemError::Status("done".into())));
        assert_eq!(parse_segment("tea time"), Err(ItemError::Segment("tea time".into())));
        assert_eq!(new(ItemPatch { priority: Some(Some(5)), ..Default::default() }), Err(ItemError::Priority));
        assert_eq!(new(ItemPatch { priority: Some(Some(0)), ..Default::default() }), Err(ItemError::Priority));
        assert_eq!(new(ItemPatch { end_time: Some(Some(at(10, 0))), ..Default::default() }), Err(ItemError::EndWithoutStart));
        let both = ItemPatch { start_time: Some(Some(at(10, 0))), segment: Some(Some(Segment::Evening)), ..Default::default() };
        assert_eq!(new(both), Err(ItemError::TimesAndSegment));
        assert!(matches!(new(ItemPatch { recurrence: Some(Some("sometimes".into())), ..Default::default() }), Err(ItemError::Recurrence(_))));
        let long = ItemPatch { description: Some(Some("x".repeat(5001))), ..Default::default() };
        assert_eq!(new(long), Err(ItemError::DescriptionTooLong));
        assert_eq!(new(ItemPatch { group: Some(Some("g".repeat(101))), ..Default::default() }), Err(ItemError::GroupTooLong));
    }

    #[test]
    fn recurrences_are_read_the_same_for_every_writer() {
        let weekly = ItemPatch { title: Some("周会".into()), recurrence: Some(Some("每周一".into())), ..Default::default() };
        assert_eq!(weekly.create(today(), &time()).unwrap().recurrence.as_deref(), Some("FREQ=WEEKLY;BYDAY=MO"));
        let rrule = ItemPatch { title: Some("standup".into()), recurrence: Some(Some("RRULE:freq=daily".into())), ..Default::default() };
        assert_eq!(rrule.create(today(), &time()).unwrap().recurrence.as_deref(), Some("FREQ=DAILY"));
    }

    #[test]
    fn a_patch_changes_only_what_it_names_and_clears_with_some_none() {
        let mut fields = ItemPatch {
            title: Some("牙医".into()),
            priority: Some(Some(2)),
            start_time: Some(Some(at(10, 0))),
            end_time: Some(Some(at(11, 0))),
            ..Default::default()
        }
        .create(today(), &time())
        .unwrap();
        let before = fields.clone();
        ItemPatch { priority: Some(None), status: Some(ItemStatus::Completed), ..Default::default() }.apply(&mut fields, &time()).unwrap();
        assert_eq!(fields.priority, None);
        assert_eq!(fields.status, ItemStatus::Completed);
        assert_eq!((fields.title.as_str(), fields.start_time, fields.end_time), (before.title.as_str(), before.start_time, before.end_time));
        let clear_start = ItemPatch { start_time: Some(None), ..Default::default() };
        assert_eq!(clear_start.apply(&mut fields, &time()), Err(ItemError::EndWithoutStart), "the end is still set");
    }
}
