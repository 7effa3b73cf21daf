//! Turning the time arguments of a tool call ("明天下午3点到4点", or structured fields) into an
//! item's date, times and part of day, with the planner's rules: no date means today, a part of
//! day without a clock time is that part, a start without an end gets the default duration (and
//! says so).

use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime};

use quickact_time::{Confidence, Grain, Resolution, Segment, TimeContext, find_all, resolve, unread_numbers};

use super::selector::{nearer_half, other_half, reference_time};

/// Time arguments as a tool receives them; every field is optional.
#[derive(Debug, Clone, Default)]
pub struct TimeArguments<'a> {
    /// Free text for the whole schedule: "明天下午3点到4点", "next friday 3pm", "每周一早上9点".
    pub when: Option<&'a str>,
    /// A date as text or ISO: "2月8日", "明天", "2026-02-08".
    pub date: Option<&'a str>,
    /// Clock times as text or HH:MM: "下午3点", "15:00".
    pub start_time: Option<&'a str>,
    pub end_time: Option<&'a str>,
    /// A part of day: "afternoon", "下午".
    pub segment: Option<&'a str>,
    pub duration_minutes: Option<i64>,
    /// Recurrence as text ("每周一", "every weekday") or an RRULE.
    pub recurrence: Option<&'a str>,
}

impl TimeArguments<'_> {
    pub fn is_empty(&self) -> bool {
        self.when.is_none()
            && self.date.is_none()
            && self.start_time.is_none()
            && self.end_time.is_none()
            && self.segment.is_none()
            && self.duration_minutes.is_none()
            && self.recurrence.is_none()
    }
}

/// What the arguments say, before defaults are applied.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatedTime {
    /// `Some` only when the arguments name a day (a time alone leaves the day open).
    pub date: Option<NaiveDate>,
    pub start_time: Option<NaiveTime>,
    pub end_time: Option<NaiveTime>,
    pub segment: Option<Segment>,
    pub duration_minutes: Option<u32>,
    pub recurrence: Option<String>,
    /// The start is a bare hour ("4点", "at 4") whose half of the day the resolver guessed: a move
    /// takes the half nearer the item's own time.
    pub either_half: bool,
}

/// A complete schedule for an item.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub date: NaiveDate,
    pub start_time: Option<NaiveTime>,
    pub end_time: Option<NaiveTime>,
    pub segment: Option<Segment>,
    pub recurrence: Option<String>,
    /// What was assumed, for the tool result ("no end time given: 1 hour").
    pub notes: Vec<String>,
}

impl Schedule {
    /// A concrete time range (what conflicts are checked for).
    pub fn range(&self) -> Option<(NaiveDateTime, NaiveDateTime)> {
        match (self.start_time, self.end_time) {
            (Some(start), Some(end)) => Some((self.date.and_time(start), super::rules::range_end(self.date, start, end))),
            _ => None,
        }
    }
}

/// Refuses a time argument with a number the resolver did not read: "99999年1月1日" resolves to
/// "1月1日" alone, and acting on that would write another date than the one given.
fn check_fully_read(text: &str, ctx: &TimeContext, argument: &str) -> Result<(), String> {
    match unread_numbers(text, &find_all(text, ctx)).first() {
        Some(&(start, end)) => {
            let piece: String = text.chars().skip(start).take(end - start).collect();
            Err(format!("could not read {piece:?} in {argument} {text:?}: a date or time out of range? (years 1900-9999, months 1-12, days 1-31)"))
        }
        None => Ok(()),
    }
}

/// A number next to a date or time in the user's sentence that the resolver could not read (see
/// [`quickact_time::unread_numbers`]): the tools refuse to act on the rest of that date, since the
/// model (or the local reader) may have passed only the part that was read ("1月1日" of
/// "99999年1月1日").
pub fn unread_date_part(sentence: &str, ctx: &TimeContext) -> Option<String> {
    let matches = find_all(sentence, ctx);
    let chars: Vec<char> = sentence.chars().collect();
    let touching = |(start, end): (usize, usize)| {
        let gap = |a: usize, b: usize| (a..b).all(|i| chars[i].is_whitespace());
        matches.iter().any(|m| (end <= m.span.0 && gap(end, m.span.0)) || (m.span.1 <= start && gap(m.span.1, start)))
    };
    // "1:1 tomorrow": numbers joined by a colon that the resolver read as no time are a name.
    let joined = |(start, end): (usize, usize)| start > 0 && chars[start - 1] == ':' || chars.get(end) == Some(&':');
    let (start, end) = unread_numbers(sentence, &matches).into_iter().find(|&span| touching(span) && !joined(span))?;
    Some(chars[start..end].iter().collect())
}

/// Reads time arguments. Errors name the argument that could not be read.
pub fn read_time_arguments(args: &TimeArguments<'_>, ctx: &TimeContext) -> Result<StatedTime, String> {
    let mut stated = StatedTime::default();
    if let Some(text) = non_empty(args.when) {
        check_fully_read(text, ctx, "when")?;
        let resolution = resolve(text, ctx).ok_or_else(|| format!("could not read {text:?} as a time"))?;
        apply(&mut stated, &resolution, resolution.day_stated);
    }
    if let Some(text) = non_empty(args.date) {
        let resolution = match NaiveDate::parse_from_str(text, "%Y-%m-%d") {
            Ok(date) => Resolution::date_only(date, Grain::Day),
            Err(_) => {
                check_fully_read(text, ctx, "date")?;
                resolve(text, ctx).ok_or_else(|| format!("could not read {text:?} as a date"))?
            }
        };
        // A `date` argument always states the day, even "today".
        apply(&mut stated, &resolution, true);
    }
    if let Some(text) = non_empty(args.start_time) {
        let (time, date, either_half) = read_clock(text, ctx).ok_or_else(|| format!("could not read start_time {text:?} as a time"))?;
        stated.start_time = Some(time);
        stated.either_half = either_half;
        stated.segment = None;
        if stated.date.is_none() {
            stated.date = date;
        }
    }
    if let Some(text) = non_empty(args.end_time) {
        let (time, _, _) = read_clock(text, ctx).ok_or_else(|| format!("could not read end_time {text:?} as a time"))?;
        stated.end_time = Some(time);
    }
    if let Some(text) = non_empty(args.segment) {
        let segment: Segment = text.parse().map_err(|_| {
            format!("unknown segment {text:?}; use all_day, early_morning, morning, forenoon, noon, afternoon or evening")
        })?;
        if stated.start_time.is_none() {
            stated.segment = Some(segment);
        }
    }
    if let Some(minutes) = args.duration_minutes {
        if !(1..=7 * 24 * 60).contains(&minutes) {
            return Err(format!("duration_minutes must be between 1 and 10080, got {minutes}"));
        }
        stated.duration_minutes = Some(minutes as u32);
    }
    if let Some(text) = non_empty(args.recurrence) {
        stated.recurrence = Some(read_recurrence(text, ctx)?);
    }
    if stated.end_time.is_some() && stated.start_time.is_none() {
        return Err("an end time needs a start time".into());
    }
    Ok(stated)
}

fn apply(stated: &mut StatedTime, resolution: &Resolution, date_is_stated: bool) {
    let day_or_coarser = matches!(resolution.grain, Grain::Day | Grain::Week | Grain::Month | Grain::Year);
    // A part of day alone ("上午", "the afternoon") is read at day grain, but names no day: a move
    // to it keeps the item's date.
    let time_of_day_only = resolution.segment.is_some() || resolution.start_time.is_some();
    if date_is_stated || (day_or_coarser && resolution.duration_minutes.is_none() && !time_of_day_only) {
        stated.date = Some(resolution.date);
    }
    if resolution.start_time.is_some() {
        stated.start_time = resolution.start_time;
        stated.end_time = resolution.end_time;
        stated.either_half = resolution.confidence == Confidence::Inferred;
        stated.segment = None;
    } else if resolution.segment.is_some() {
        stated.segment = resolution.segment;
        stated.start_time = None;
        stated.end_time = None;
        stated.either_half = false;
    }
    if resolution.duration_minutes.is_some() {
        stated.duration_minutes = resolution.duration_minutes;
    }
    if resolution.rrule.is_some() {
        stated.recurrence = resolution.rrule.clone();
    }
}

/// Completes a stated time into a schedule for a new item: no date means today; a start without an
/// end lasts `duration` (stated, or `default_minutes` for events) and the notes say so.
pub fn schedule_for_new_item(stated: &StatedTime, ctx: &TimeContext, is_event: bool, default_minutes: u32) -> Schedule {
    let mut notes = Vec::new();
    let date = stated.date.unwrap_or_else(|| {
        if stated.start_time.is_some() || stated.segment.is_some() {
            notes.push("no date was given: today".to_owned());
        }
        ctx.today()
    });
    let mut schedule = Schedule {
        date,
        start_time: stated.start_time,
        end_time: stated.end_time,
        segment: stated.segment,
        recurrence: stated.recurrence.clone(),
        notes,
    };
    if is_event && date == ctx.today() && schedule.start_time.is_none() {
        settle_todays_part_of_day(&mut schedule, ctx);
    }
    if let (Some(start), None) = (schedule.start_time, schedule.end_time) {
        match stated.duration_minutes {
            Some(minutes) => schedule.end_time = Some(add_minutes(start, minutes)),
            None if is_event => {
                let end = add_minutes(start, default_minutes);
                schedule.end_time = Some(end);
                schedule.notes.push(format!(
                    "no end time was given: the default duration of {} applies (until {})",
                    describe_minutes(default_minutes),
                    end.format("%H:%M")
                ));
            }
            None => {}
        }
    }
    schedule
}

/// An event today without a clock time takes the part of the day that is left: all day, or the
/// evening once it is evening (18:00), when the rest of today is the evening. An earlier part of
/// day today is left alone: it has passed, and the caller reports that.
fn settle_todays_part_of_day(schedule: &mut Schedule, ctx: &TimeContext) {
    let evening_already = ctx.now().time() >= Segment::Evening.bounds().0;
    match (schedule.segment, evening_already) {
        (None, false) => {
            schedule.segment = Some(Segment::AllDay);
            schedule.notes.push("no time was given: all day".to_owned());
        }
        (None | Some(Segment::AllDay), true) => {
            schedule.segment = Some(Segment::Evening);
            schedule.notes.push("it is already evening: the rest of today is the evening".to_owned());
        }
        _ => {}
    }
}

/// Applies a stated time to an existing item's schedule: a time alone (a clock time or a part of
/// day) keeps the item's date; a bare hour takes the half of the day nearer the item's own time
/// ("改到4点" of a 15:00 item is 16:00); a new start without an end keeps the item's duration (a
/// point in time, such as a reminder, stays a point); a part of day replaces clock times.
pub fn reschedule(current: &Schedule, stated: &StatedTime, default_minutes: u32) -> Schedule {
    let stated = &in_the_items_half(current, stated);
    let mut next = current.clone();
    next.notes.clear();
    if let Some(date) = stated.date {
        next.date = date;
    }
    if let Some(segment) = stated.segment {
        next.segment = Some(segment);
        next.start_time = None;
        next.end_time = None;
    }
    if let Some(start) = stated.start_time {
        next.segment = None;
        next.start_time = Some(start);
        next.end_time = match (stated.end_time, stated.duration_minutes, current.start_time, current.end_time) {
            (Some(end), _, _, _) => Some(end),
            (None, Some(minutes), _, _) => Some(add_minutes(start, minutes)),
            (None, None, Some(old_start), Some(old_end)) => {
                let old_minutes = (super::rules::range_end(current.date, old_start, old_end) - current.date.and_time(old_start)).num_minutes();
                Some(add_minutes(start, old_minutes.max(1) as u32))
            }
            // A point in time (a reminder, a to-do's deadline) stays a point.
            (None, None, Some(_), None) => None,
            (None, None, _, _) => {
                let end = add_minutes(start, default_minutes);
                next.notes.push(format!(
                    "no end time was given: the default duration of {} applies (until {})",
                    describe_minutes(default_minutes),
                    end.format("%H:%M")
                ));
                Some(end)
            }
        };
    } else if let (Some(minutes), Some(start)) = (stated.duration_minutes, next.start_time) {
        next.end_time = Some(add_minutes(start, minutes));
    }
    if stated.recurrence.is_some() {
        next.recurrence = stated.recurrence.clone();
    }
    next
}

/// `stated` with a bare hour moved to the half of the day nearer the item's time (its end too).
fn in_the_items_half(current: &Schedule, stated: &StatedTime) -> StatedTime {
    let mut stated = stated.clone();
    let (Some(start), true) = (stated.start_time, stated.either_half) else { return stated };
    let Some(reference) = reference_time(current.start_time, current.segment) else { return stated };
    let nearer = nearer_half(start, reference);
    if nearer != start {
        stated.start_time = Some(nearer);
        stated.end_time = stated.end_time.map(other_half);
    }
    stated
}

/// Longest move [`shift`] makes, either way: ten years. A larger one is a typo or an attack, and
/// would overflow the calendar.
pub const MAX_SHIFT_MINUTES: i64 = 10 * 366 * 24 * 60;

/// Moves a schedule by `minutes` (negative: earlier), carrying the date across midnight.
pub fn shift(current: &Schedule, minutes: i64) -> Result<Schedule, String> {
    if minutes.unsigned_abs() > MAX_SHIFT_MINUTES as u64 {
        return Err(format!("a shift of {minutes} minutes is out of range: at most 10 years either way"));
    }
    let mut next = current.clone();
    next.notes.clear();
    match current.start_time {
        Some(start) => {
            let moved = current.date.and_time(start) + Duration::minutes(minutes);
            next.date = moved.date();
            next.start_time = Some(moved.time());
            next.end_time = current.end_time.map(|end| (current.date.and_time(end) + Duration::minutes(minutes)).time());
        }
        None if minutes % (24 * 60) == 0 => next.date = current.date + Duration::minutes(minutes),
        None => return Err("the item has no clock time to move; give a new time instead".into()),
    }
    Ok(next)
}

/// Reads a duration ("半小时", "1个小时", "90 minutes", "2 days") in minutes; a leading "提前",
/// "早", "earlier" or "-" makes it negative.
pub fn read_duration(text: &str, ctx: &TimeContext) -> Option<i64> {
    let trimmed = text.trim();
    let lower = trimmed.to_lowercase();
    let negative = trimmed.starts_with('-') || trimmed.starts_with("提前") || trimmed.starts_with('早') || lower.contains("earlier") || lower.contains("before");
    let body = trimmed.trim_start_matches(['-', '+']);
    if let Ok(minutes) = body.parse::<i64>() {
        return Some(if negative { -minutes } else { minutes });
    }
    check_fully_read(body, ctx, "shift").ok()?;
    // "a week", "an hour": alone, "a week" may be "once a week"; as a shift it is a length
    let lower_body = body.to_lowercase();
    let resolution = if lower_body.starts_with("a ") || lower_body.starts_with("an ") {
        resolve(&format!("for {body}"), ctx)?
    } else {
        resolve(body, ctx)?
    };
    let minutes = match resolution.duration_minutes {
        Some(minutes) => i64::from(minutes),
        // "2天" / "3 days" read as offsets: the distance from today.
        None if resolution.grain == Grain::Day && resolution.start_time.is_none() => (resolution.date - ctx.today()).num_minutes(),
        None => return None,
    };
    (minutes != 0).then_some(if negative { -minutes.abs() } else { minutes })
}

/// A clock time from `HH:MM` or text ("下午3点", "3pm"), the date the text states, if any, and
/// whether its half of the day was guessed (a bare "4点").
fn read_clock(text: &str, ctx: &TimeContext) -> Option<(NaiveTime, Option<NaiveDate>, bool)> {
    if let Ok(time) = NaiveTime::parse_from_str(text, "%H:%M") {
        return Some((time, None, false));
    }
    check_fully_read(text, ctx, "time").ok()?;
    let resolution = resolve(text, ctx)?;
    let time = resolution.start_time?;
    Some((time, resolution.day_stated.then_some(resolution.date), resolution.confidence == Confidence::Inferred))
}

/// A recurrence as an RRULE (upper case, without the "RRULE:" prefix) from an RRULE or from a
/// repetition in words ("每周一", "every weekday").
pub fn read_recurrence(text: &str, ctx: &TimeContext) -> Result<String, String> {
    let upper = text.trim().trim_start_matches("RRULE:").to_ascii_uppercase();
    if upper.starts_with("FREQ=") {
        let valid = upper.split(';').all(|part| {
            part.split_once('=').is_some_and(|(k, v)| !v.is_empty() && k.chars().all(|c| c.is_ascii_uppercase()))
        });
        return if valid { Ok(upper) } else { Err(format!("{text:?} is not a valid RRULE")) };
    }
    resolve(text, ctx)
        .and_then(|r| r.rrule)
        .ok_or_else(|| format!("could not read {text:?} as a recurrence (e.g. 每周一, every weekday, FREQ=WEEKLY;BYDAY=MO)"))
}

fn non_empty(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

fn add_minutes(time: NaiveTime, minutes: u32) -> NaiveTime {
    time.overflowing_add_signed(Duration::minutes(i64::from(minutes))).0
}

fn describe_minutes(minutes: u32) -> String {
    match minutes {
        60 => "1 hour".to_owned(),
        m if m % 60 == 0 => format!("{} hours", m / 60),
        m => format!("{m} minutes"),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn ctx() -> TimeContext {
        // Saturday 2026-11-21 10:00 in Shanghai.
        TimeContext::new(Utc.with_ymd_and_hms(2026, 11, 21, 2, 0, 0).unwrap(), chrono_tz::Asia::Shanghai)
    }

    fn time(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).unwrap()
    }

    fn date(m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, m, d).unwrap()
    }

    #[test]
    fn a_range_in_free_text_becomes_an_event_schedule() {
        let stated = read_time_arguments(&TimeArguments { when: Some("明天下午3点到4点"), ..Default::default() }, &ctx()).unwrap();
        let schedule = schedule_for_new_item(&stated, &ctx(), true, 60);
        assert_eq!((schedule.date, schedule.start_time, schedule.end_time), (date(11, 22), Some(time(15, 0)), Some(time(16, 0))));
        assert!(schedule.notes.is_empty());
    }

    #[test]
    fn a_start_without_an_end_gets_the_default_duration_and_says_so() {
        let stated = read_time_arguments(&TimeArguments { when: Some("明天下午3点"), ..Default::default() }, &ctx()).unwrap();
        let schedule = schedule_for_new_item(&stated, &ctx(), true, 60);
        assert_eq!(schedule.end_time, Some(time(16, 0)));
        assert!(schedule.notes[0].contains("1 hour"), "{:?}", schedule.notes);
    }

    #[test]
    fn a_part_of_day_without_a_clock_is_the_segment() {
        let stated = read_time_arguments(&TimeArguments { when: Some("明天下午"), ..Default::default() }, &ctx()).unwrap();
        let schedule = schedule_for_new_item(&stated, &ctx(), true, 60);
        assert_eq!(schedule.segment, Some(Segment::Afternoon));
        assert_eq!(schedule.start_time, None);
        assert_eq!(schedule.date, date(11, 22));
    }

    #[test]
    fn no_date_means_today() {
        let stated = read_time_arguments(&TimeArguments { start_time: Some("15:00"), ..Default::default() }, &ctx()).unwrap();
        let schedule = schedule_for_new_item(&stated, &ctx(), false, 60);
        assert_eq!(schedule.date, date(11, 21));
        assert_eq!(schedule.end_time, None, "to-dos do not get a default duration");
    }

    #[test]
    fn a_time_alone_keeps_the_items_date_when_rescheduling() {
        let current = Schedule { date: date(2, 8), start_time: Some(time(14, 0)), end_time: Some(time(15, 30)), segment: None, recurrence: None, notes: vec![] };
        let stated = read_time_arguments(&TimeArguments { when: Some("晚上8点"), ..Default::default() }, &ctx()).unwrap();
        assert_eq!(stated.date, None);
        let next = reschedule(&current, &stated, 60);
        assert_eq!((next.date, next.start_time, next.end_time), (date(2, 8), Some(time(20, 0)), Some(time(21, 30))));

        let stated = read_time_arguments(&TimeArguments { when: Some("明天晚上8点"), ..Default::default() }, &ctx()).unwrap();
        let next = reschedule(&current, &stated, 60);
        assert_eq!(next.date, date(11, 22));
    }

    #[test]
    fn a_part_of_day_alone_keeps_the_items_date_and_a_stated_day_moves_it() {
        let current = Schedule { date: date(11, 22), start_time: Some(time(15, 0)), end_time: Some(time(16, 0)), segment: None, recurrence: None, notes: vec![] };
        for text in ["上午", "晚上", "the morning", "evening"] {
            let stated = read_time_arguments(&TimeArguments { when: Some(text), ..Default::default() }, &ctx()).unwrap();
            assert_eq!(stated.date, None, "{text}");
            let next = reschedule(&current, &stated, 60);
            assert_eq!((next.date, next.start_time, next.end_time), (date(11, 22), None, None), "{text}");
            assert!(next.segment.is_some(), "{text}");
        }
        for (text, day) in [("今晚", date(11, 21)), ("this afternoon", date(11, 21)), ("后天上午", date(11, 23))] {
            let stated = read_time_arguments(&TimeArguments { when: Some(text), ..Default::default() }, &ctx()).unwrap();
            assert_eq!(reschedule(&current, &stated, 60).date, day, "{text}");
        }
    }

    #[test]
    fn a_bare_hour_takes_the_half_of_the_day_nearer_the_item() {
        let at = |start: NaiveTime, end: NaiveTime| Schedule { date: date(11, 22), start_time: Some(start), end_time: Some(end), segment: None, recurrence: None, notes: vec![] };
        let moved = |current: &Schedule, when: &str| {
            let stated = read_time_arguments(&TimeArguments { when: Some(when), ..Default::default() }, &ctx()).unwrap();
            let next = reschedule(current, &stated, 60);
            (next.date, next.start_time, next.end_time)
        };
        let afternoon = at(time(15, 0), time(16, 0));
        assert_eq!(moved(&afternoon, "4点"), (date(11, 22), Some(time(16, 0)), Some(time(17, 0))));
        assert_eq!(moved(&afternoon, "at 4"), (date(11, 22), Some(time(16, 0)), Some(time(17, 0))));
        let evening = at(time(20, 0), time(21, 0));
        assert_eq!(moved(&evening, "9点"), (date(11, 22), Some(time(21, 0)), Some(time(22, 0))));
        let morning = at(time(9, 0), time(10, 0));
        assert_eq!(moved(&morning, "11点"), (date(11, 22), Some(time(11, 0)), Some(time(12, 0))));
        assert_eq!(moved(&morning, "下午4点"), (date(11, 22), Some(time(16, 0)), Some(time(17, 0))), "a stated half is kept");
        let in_the_evening = Schedule { start_time: None, end_time: None, segment: Some(Segment::Evening), ..afternoon.clone() };
        assert_eq!(moved(&in_the_evening, "8点").1, Some(time(20, 0)));
    }

    #[test]
    fn shifting_moves_both_ends_across_midnight() {
        let current = Schedule { date: date(2, 8), start_time: Some(time(23, 30)), end_time: Some(time(23, 50)), segment: None, recurrence: None, notes: vec![] };
        let next = shift(&current, 30).unwrap();
        assert_eq!((next.date, next.start_time, next.end_time), (date(2, 9), Some(time(0, 0)), Some(time(0, 20))));
    }

    #[test]
    fn durations_read_with_their_sign() {
        assert_eq!(read_duration("半小时", &ctx()), Some(30));
        assert_eq!(read_duration("提前1个小时", &ctx()), Some(-60));
        assert_eq!(read_duration("45", &ctx()), Some(45));
        assert_eq!(read_duration("-15", &ctx()), Some(-15));
        // days and weeks are lengths too: "把周会推迟3天", "postpone it by a week"
        assert_eq!(read_duration("3天", &ctx()), Some(3 * 24 * 60));
        assert_eq!(read_duration("提前一周", &ctx()), Some(-7 * 24 * 60));
        assert_eq!(read_duration("a week", &ctx()), Some(7 * 24 * 60));
        assert_eq!(read_duration("2 days", &ctx()), Some(2 * 24 * 60));
        assert_eq!(read_duration("3天12小时", &ctx()), Some(3 * 24 * 60 + 12 * 60));
    }

    #[test]
    fn an_untimed_event_today_takes_all_day_or_the_evening_once_it_is_evening() {
        let at = |h: u32| TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, h - 8, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
        let today = StatedTime { date: Some(date(2, 7)), ..Default::default() };
        let all_day = StatedTime { segment: Some(Segment::AllDay), ..today.clone() };
        let segment_of = |stated: &StatedTime, ctx: &TimeContext, is_event: bool| schedule_for_new_item(stated, ctx, is_event, 60).segment;
        assert_eq!(segment_of(&today, &at(10), true), Some(Segment::AllDay));
        assert_eq!(segment_of(&today, &at(19), true), Some(Segment::Evening));
        assert_eq!(segment_of(&all_day, &at(19), true), Some(Segment::Evening));
        assert_eq!(segment_of(&all_day, &at(10), true), Some(Segment::AllDay));
        let afternoon = StatedTime { segment: Some(Segment::Afternoon), ..today.clone() };
        assert_eq!(segment_of(&afternoon, &at(19), true), Some(Segment::Afternoon), "left for the passed-time rule");
        assert_eq!(segment_of(&today, &at(19), false), None, "a to-do today is due today, without a part of day");
        let tomorrow = StatedTime { date: Some(date(2, 8)), ..Default::default() };
        assert_eq!(segment_of(&tomorrow, &at(19), true), None);
    }

    #[test]
    fn shifts_beyond_ten_years_are_refused_not_overflowed() {
        let current = Schedule { date: date(2, 8), start_time: Some(time(14, 0)), end_time: Some(time(15, 0)), segment: None, recurrence: None, notes: vec![] };
        for minutes in [99_999_999_999_999, -99_999_999_999_999, i64::MAX, i64::MIN, MAX_SHIFT_MINUTES + 1] {
            let refused = shift(&current, minutes).unwrap_err();
            assert!(refused.contains("out of range"), "{refused}");
        }
        let far = shift(&current, MAX_SHIFT_MINUTES).unwrap();
        assert_eq!(far.start_time, Some(time(14, 0)));
        let day_only = Schedule { start_time: None, end_time: None, ..current };
        assert!(shift(&day_only, -MAX_SHIFT_MINUTES - 24 * 60).is_err());
    }

    #[test]
    fn recurrences_come_from_text_or_rrules() {
        let stated = read_time_arguments(&TimeArguments { recurrence: Some("每周一"), ..Default::default() }, &ctx()).unwrap();
        assert_eq!(stated.recurrence.as_deref(), Some("FREQ=WEEKLY;BYDAY=MO"));
        let stated = read_time_arguments(&TimeArguments { recurrence: Some("FREQ=DAILY"), ..Default::default() }, &ctx()).unwrap();
        assert_eq!(stated.recurrence.as_deref(), Some("FREQ=DAILY"));
        assert!(read_time_arguments(&TimeArguments { recurrence: Some("sometimes"), ..Default::default() }, &ctx()).is_err());
    }

    #[test]
    fn unreadable_times_name_the_argument() {
        let err = read_time_arguments(&TimeArguments { start_time: Some("teatime-ish"), ..Default::default() }, &ctx()).unwrap_err();
        assert!(err.contains("start_time"));
    }

    #[test]
    fn dates_are_told_from_times() {
        let stated = |text: &str| resolve(text, &ctx()).is_some_and(|r| r.day_stated);
        for text in ["明天晚上8点", "2月8日", "周五10点", "Friday 10am", "next monday", "2026-02-08", "2/8 3pm", "今晚", "tomorrow", "tmrw 7pm", "明儿下午", "后儿仨点", "the 15th at 3pm", "on the 2nd"] {
            assert!(stated(text), "{text}");
        }
        for text in ["晚上8点", "15:30", "3pm", "下午3点到4点", "noon"] {
            assert!(!stated(text), "{text}");
        }
    }
}
