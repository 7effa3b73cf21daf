//! The time tokens of a clause: what each piece is (a day, a time of day, a length, a series, a
//! meal that names the item) and how the pieces go on to the tools as text.

use chrono::{NaiveDate, NaiveTime};
use quickact_time::{Grain, Resolution, TimeMatch, resolve};

use crate::{
    lexicon::{Category, Flags, Glue, lexicon},
    reader::Reader,
    tokens::Tag,
};

/// A time piece read on its own: a match with a gap ("后天上午10点**评审，开**一个半小时") has two
/// pieces, each meaning something of its own; a match without one is its own piece.
pub fn piece(r: &Reader, i: usize) -> Option<Resolution> {
    let m = r.time(i)?;
    if m.gap.is_some() {
        return resolve(&r.text(i), r.ctx);
    }
    // "next wednesday **lunch** with Kelvin": the meal it ended with is a word of its own.
    if r.token(i).end < m.span.1 {
        return resolve(&r.text(i), r.ctx);
    }
    let mut res = m.resolution.clone();
    // The rest of an expression that started with a meal ("lunch **on monday**"): the meal set
    // the hour's half of the day, but its part of day is the meal's, not this piece's.
    if r.token(i).start > m.span.0 {
        res.segment = resolve(&r.text(i), r.ctx).and_then(|own| own.segment);
    }
    Some(res)
}

/// A length alone ("2小时", "45 minutes"), not a day or time that carries one, nor an offset.
pub fn is_length(r: &Reader, i: usize) -> bool {
    let Some(res) = piece(r, i) else { return false };
    let text = r.text(i);
    res.duration_minutes.is_some()
        && res.start_time.is_none()
        && res.segment.is_none()
        && res.rrule.is_none()
        && res.grain == Grain::Minute
        && !text.contains('后')
        && !Glue::FromNow.words().iter().any(|w| text.to_lowercase().contains(w))
}

/// A time of day: a clock time or a part of day.
pub fn is_time_of_day(res: &Resolution) -> bool {
    res.start_time.is_some() || res.segment.is_some()
}

/// A time piece that is only a meal word ("lunch", "dinner", 午饭): the item's name as much as
/// its time.
pub fn is_meal(r: &Reader, i: usize) -> bool {
    let norm = r.norm(i);
    let word = norm.trim();
    Glue::MealTime.has(word) || lexicon().find(word).is_some_and(|e| e.senses.iter().any(|s| s.category == Category::Item && s.has(Flags::MEAL)))
}

/// Whether the piece names the day (a relative day, a weekday, a date, a period of days, a day
/// offset), not only a time of day or a length.
pub fn states_day(r: &Reader, i: usize) -> bool {
    piece(r, i).is_some_and(|res| res.day_stated)
}

/// Whether a time expression names a day.
pub fn names_day(m: &TimeMatch) -> bool {
    m.resolution.day_stated
}

/// A lone part-of-day word that names the item, not its time: followed by a noun of the title
/// ("morning standup", "evening class"), not by a preposition, a time or the end.
pub fn names_the_item(r: &Reader, i: usize) -> bool {
    let Some(res) = piece(r, i) else { return false };
    let text = r.text(i);
    if res.segment.is_none() || res.start_time.is_some() || res.rrule.is_some() || text.trim().contains(char::is_whitespace) {
        return false;
    }
    if !text.chars().all(|c| c.is_ascii_alphabetic()) || i + 1 >= r.len() {
        return false;
    }
    let next = r.token(i + 1);
    let spaced = r.sentence.chars.get(r.token(i).end) == Some(&' ');
    spaced && matches!(next.tag, Tag::Latin) || r.is(i + 1, Category::Item) && !r.is(i + 1, Category::Prep)
}

/// The pieces `indexes` as one text for the tools: each as written, unless words outside it
/// decided what it means ("dinner at 8 on friday" is 20:00), then as the day and time it means.
pub fn join(r: &Reader, indexes: &[usize]) -> Option<String> {
    if indexes.is_empty() {
        return None;
    }
    let chinese = r.sentence.is_chinese();
    let parts: Vec<String> = indexes.iter().map(|&i| as_written(r, i, chinese)).collect();
    Some(parts.join(if chinese { "" } else { " " }))
}

/// One piece as the tools will read it.
fn as_written(r: &Reader, i: usize, chinese: bool) -> String {
    let text = r.text(i).trim().to_owned();
    let Some(res) = piece(r, i) else { return text };
    let meant = (res.date, res.start_time);
    let reads_as = |t: &str| resolve(t, r.ctx).map(|x| (x.date, x.start_time)) == Some(meant);
    let text = if reads_as(&text) || res.rrule.is_some() {
        text
    } else if !chinese && reads_as(&format!("at {text}")) {
        // "@ 3 tmrw": the hour needs the "at" the sentence gave it.
        format!("at {text}")
    } else if let Some(start) = res.start_time {
        exact_time(res.date, start)
    } else {
        text
    };
    if !chinese && resolve(&text, r.ctx).is_none() { format!("at {text}") } else { text }
}

/// A day and a clock time as the tools read them exactly ("2026-02-13 20:00").
pub fn exact_time(date: NaiveDate, time: NaiveTime) -> String {
    format!("{date} {}", time.format("%H:%M"))
}
