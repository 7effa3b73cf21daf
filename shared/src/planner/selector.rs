//! The time of day that picks items out: "the 3pm meeting", "上午的那个会", "tonight's dinner". A
//! person who names an item by its time means the item at that time, not every item of its day.

use chrono::{NaiveTime, Timelike};
use quickact_time::{Confidence, Resolution, Segment};

/// A time of day an item is picked out by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeOfDay {
    /// Items starting at this clock time. With `either_half`, also the one twelve hours apart: a
    /// bare "3点" or "at 3" is 03:00 or 15:00, and the person knows which their item is.
    Clock { time: NaiveTime, either_half: bool },
    /// Items in this part of the day: a start inside it, or the part of day itself.
    Part(Segment),
    /// Items without a time of day (a to-do due that day, an all-day event): what a time names
    /// when no item of its day is at it ("完成今天下午的报告" of a to-do due today).
    Untimed,
}

impl TimeOfDay {
    /// The time of day a resolution names, if it names one (a clock time, else a part of day).
    pub fn of(resolution: &Resolution) -> Option<TimeOfDay> {
        match (resolution.start_time, resolution.segment) {
            (Some(time), _) => Some(TimeOfDay::Clock { time, either_half: resolution.confidence == Confidence::Inferred }),
            (None, Some(segment)) => Some(TimeOfDay::Part(segment)),
            _ => None,
        }
    }

    /// Whether an item that starts at `start` (or lies in `segment`, without a clock time) is at
    /// this time of day.
    pub fn selects(&self, start: Option<NaiveTime>, segment: Option<Segment>) -> bool {
        match (*self, start) {
            (TimeOfDay::Clock { time, either_half }, Some(start)) => {
                start == time || (either_half && start == other_half(time))
            }
            (TimeOfDay::Clock { .. }, None) => false,
            (TimeOfDay::Part(part), Some(start)) => {
                let (from, to) = selection_hours(part);
                let minutes = start.hour() * 60 + start.minute();
                (from..=to).contains(&minutes)
            }
            (TimeOfDay::Part(part), None) => segment.is_some_and(|s| same_part(part, s)),
            (TimeOfDay::Untimed, start) => start.is_none() && segment.is_none_or(|s| s == Segment::AllDay),
        }
    }
}

/// The same clock time in the other half of the day (03:00 <-> 15:00).
pub fn other_half(time: NaiveTime) -> NaiveTime {
    time.overflowing_add_signed(chrono::Duration::hours(12)).0
}

/// The minutes of the day (inclusive) whose starts a part of day picks out. Wider than the
/// segment's own bounds, as people speak: "morning" (早上) and "上午" are both the morning up to
/// noon, the afternoon starts at noon ("下午1点"), the evening at five.
fn selection_hours(part: Segment) -> (u32, u32) {
    const H: u32 = 60;
    match part {
        Segment::AllDay => (0, 24 * H - 1),
        Segment::EarlyMorning => (0, 6 * H - 1),
        Segment::Morning | Segment::Forenoon => (5 * H, 12 * H - 1),
        Segment::Noon => (11 * H, 14 * H - 1),
        Segment::Afternoon => (12 * H, 18 * H - 1),
        Segment::Evening => (17 * H, 24 * H - 1),
    }
}

/// Whether an item in part of day `item` is in the part a person named: the morning words name
/// both morning parts.
fn same_part(named: Segment, item: Segment) -> bool {
    let morning = |s: Segment| matches!(s, Segment::Morning | Segment::Forenoon);
    named == item || (morning(named) && morning(item))
}

/// Of a clock time and the one twelve hours apart, the one nearer `reference` (the time of day an
/// item is at now): a bare "改到4点" of a 15:00 item means 16:00, "move it to 10" of a 09:00 item
/// 10:00, whichever half the resolver guessed. A tie keeps `time`.
pub fn nearer_half(time: NaiveTime, reference: NaiveTime) -> NaiveTime {
    let other = other_half(time);
    let distance = |t: NaiveTime| (t.num_seconds_from_midnight() as i64 - reference.num_seconds_from_midnight() as i64).abs();
    if distance(other) < distance(time) { other } else { time }
}

/// The time of day an item is at, for [`nearer_half`]: its start, else the middle of its part of
/// day (none for an all-day item or one without a time).
pub fn reference_time(start: Option<NaiveTime>, segment: Option<Segment>) -> Option<NaiveTime> {
    match (start, segment) {
        (Some(start), _) => Some(start),
        (None, Some(Segment::AllDay)) | (None, None) => None,
        (None, Some(segment)) => {
            let (from, to) = segment.bounds();
            let middle = (from.num_seconds_from_midnight() + to.num_seconds_from_midnight()) / 2;
            NaiveTime::from_num_seconds_from_midnight_opt(middle, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::*;

    fn at(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).unwrap()
    }

    fn resolution(start: Option<NaiveTime>, segment: Option<Segment>, confidence: Confidence) -> Resolution {
        Resolution {
            start_time: start,
            segment,
            confidence,
            ..Resolution::date_only(NaiveDate::from_ymd_opt(2026, 2, 8).unwrap(), quickact_time::Grain::Hour)
        }
    }

    #[test]
    fn a_clock_time_picks_only_items_starting_then() {
        let three_pm = TimeOfDay::of(&resolution(Some(at(15, 0)), None, Confidence::Read)).unwrap();
        assert!(three_pm.selects(Some(at(15, 0)), None));
        for other in [at(14, 0), at(16, 0), at(20, 0), at(3, 0), at(15, 30)] {
            assert!(!three_pm.selects(Some(other), None), "{other}");
        }
        assert!(!three_pm.selects(None, Some(Segment::Afternoon)), "a part of day is not a clock time");
    }

    #[test]
    fn a_bare_hour_picks_either_half_of_the_day() {
        let three = TimeOfDay::of(&resolution(Some(at(15, 0)), None, Confidence::Inferred)).unwrap();
        assert!(three.selects(Some(at(15, 0)), None));
        assert!(three.selects(Some(at(3, 0)), None));
        assert!(!three.selects(Some(at(16, 0)), None));
    }

    #[test]
    fn a_part_of_day_picks_starts_inside_it_and_items_in_it() {
        let afternoon = TimeOfDay::of(&resolution(None, Some(Segment::Afternoon), Confidence::Read)).unwrap();
        assert!(afternoon.selects(Some(at(13, 30)), None));
        assert!(afternoon.selects(Some(at(15, 0)), None));
        assert!(!afternoon.selects(Some(at(10, 0)), None));
        assert!(!afternoon.selects(Some(at(20, 0)), None));
        assert!(afternoon.selects(None, Some(Segment::Afternoon)));
        assert!(!afternoon.selects(None, Some(Segment::Evening)));
        let morning = TimeOfDay::Part(Segment::Morning);
        assert!(morning.selects(Some(at(10, 30)), None), "the English morning runs to noon");
        assert!(morning.selects(None, Some(Segment::Forenoon)));
        let evening = TimeOfDay::Part(Segment::Evening);
        assert!(evening.selects(Some(at(19, 0)), None));
        assert!(!evening.selects(Some(at(15, 0)), None));
        assert!(!evening.selects(None, None), "an item without a time is in no part of the day");
        assert!(TimeOfDay::Untimed.selects(None, None));
        assert!(TimeOfDay::Untimed.selects(None, Some(Segment::AllDay)));
        assert!(!TimeOfDay::Untimed.selects(None, Some(Segment::Evening)));
        assert!(!TimeOfDay::Untimed.selects(Some(at(9, 0)), None));
    }

    #[test]
    fn a_bare_hour_moves_to_the_half_of_the_day_nearer_the_item() {
        assert_eq!(nearer_half(at(4, 0), at(15, 0)), at(16, 0));
        assert_eq!(nearer_half(at(16, 0), at(15, 0)), at(16, 0));
        assert_eq!(nearer_half(at(22, 0), at(9, 0)), at(10, 0));
        assert_eq!(nearer_half(at(21, 0), at(20, 0)), at(21, 0));
        assert_eq!(nearer_half(at(15, 0), at(9, 0)), at(15, 0), "a tie keeps the resolver's reading");
        assert_eq!(reference_time(None, Some(Segment::Afternoon)), Some(at(15, 59) + chrono::Duration::seconds(30)));
        assert_eq!(reference_time(None, Some(Segment::AllDay)), None);
    }
}
