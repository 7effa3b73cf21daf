//! Occurrences of recurring items: an item stores its first occurrence (`date`) and an RFC 5545
//! RRULE; searches and conflict checks expand it (with the `rrule` crate) over the window they look
//! at, so a weekly meeting shows on every week and conflicts with what is booked over it.

use chrono::{NaiveDate, NaiveTime, TimeZone};

/// Most occurrences one expansion yields. A window a person looks at or a conflict check never needs
/// more, and a rule such as FREQ=MINUTELY cannot turn one item into an unbounded list (the crate
/// also stops a rule that iterates too long without a match).
pub const MAX_OCCURRENCES: u16 = 366;

/// The dates in `[from, to]` on which an item first due on `first` recurs by `rrule`, the first
/// date included, at most [`MAX_OCCURRENCES`]. Expansion runs on whole dates (midnight UTC), so no
/// time zone or DST change can move an occurrence to another day. A rule the crate cannot read
/// yields only `first` itself (when it is in the window): the item still shows on its own date.
pub fn occurrence_dates(rrule: &str, first: NaiveDate, from: NaiveDate, to: NaiveDate) -> Vec<NaiveDate> {
    let from = from.max(first);
    if to < from {
        return Vec::new();
    }
    let at = |date: NaiveDate| rrule::Tz::UTC.from_utc_datetime(&date.and_time(NaiveTime::MIN));
    let rule = match rrule.parse::<rrule::RRule<rrule::Unvalidated>>().and_then(|rule| rule.build(at(first))) {
        Ok(rule) => rule,
        Err(err) => {
            tracing::warn!(rrule, error = %err, "a stored recurrence cannot be expanded");
            return if first >= from && first <= to { vec![first] } else { Vec::new() };
        }
    };
    rule.after(at(from)).before(at(to)).all(MAX_OCCURRENCES).dates.iter().map(|d| d.date_naive()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, m, d).unwrap()
    }

    #[test]
    fn a_weekly_rule_recurs_on_its_weekdays_inside_the_window() {
        // 2026-02-02 is a Monday.
        let dates = occurrence_dates("FREQ=WEEKLY;BYDAY=MO,WE", date(2, 2), date(2, 9), date(2, 15));
        assert_eq!(dates, [date(2, 9), date(2, 11)]);
        assert_eq!(occurrence_dates("FREQ=DAILY", date(2, 2), date(2, 2), date(2, 2)), [date(2, 2)], "the first date counts");
    }

    #[test]
    fn nothing_recurs_before_the_first_date_or_after_the_rule_ends() {
        assert!(occurrence_dates("FREQ=DAILY", date(3, 1), date(2, 1), date(2, 28)).is_empty());
        let until = occurrence_dates("FREQ=DAILY;COUNT=3", date(2, 1), date(2, 1), date(2, 28));
        assert_eq!(until, [date(2, 1), date(2, 2), date(2, 3)]);
    }

    #[test]
    fn expansion_is_bounded_and_unreadable_rules_fall_back_to_the_first_date() {
        let far = occurrence_dates("FREQ=DAILY", date(1, 1), date(1, 1), NaiveDate::from_ymd_opt(2030, 1, 1).unwrap());
        assert_eq!(far.len(), MAX_OCCURRENCES as usize);
        assert_eq!(occurrence_dates("FREQ=SOMETIMES", date(2, 2), date(2, 1), date(2, 28)), [date(2, 2)]);
        assert!(occurrence_dates("FREQ=SOMETIMES", date(2, 2), date(2, 3), date(2, 28)).is_empty());
    }
}
