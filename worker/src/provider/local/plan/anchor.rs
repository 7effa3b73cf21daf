//! Items whose time hangs on another item's ("call mom half an hour after the standup",
//! 面试前两个小时提醒我): find the other item, then create at its end or start, moved by the length.

use chrono::NaiveDate;
use quickact_reader::{Anchor, NewItem};
use serde_json::json;

use super::{Candidate, Done, Found, History, Say, NextCall, finish, finish_after_change, read_as, same_title, target_search};
use crate::tools::names::{CREATE_ITEM, SEARCH_ITEMS};

/// "call mom half an hour after the standup": find the other item, then create at its end (or
/// start) moved by the length.
pub(super) fn create_anchored(item: &NewItem, anchor: &Anchor, history: &History, say: &Say) -> NextCall {
    let Some(search) = history.first() else { return (SEARCH_ITEMS, target_search(&anchor.target)) };
    if let Some(call) = history.get(1) {
        return finish_after_change(&call.result, Done::Created, say);
    }
    let candidates = match &search.result {
        Ok(result) => read_as::<Found>(result).items,
        Err(error) => return finish("error", say.failed(error), Some(say.rephrase())),
    };
    let named = anchor.target.query();
    let exact: Vec<&Candidate> = candidates.iter().filter(|c| c.title.trim().eq_ignore_ascii_case(named.trim())).collect();
    let the_one = match (candidates.len(), exact.len()) {
        (0, _) => return finish("error", say.not_found(&named), Some(say.check_title())),
        (1, _) => &candidates[0],
        (_, 1) => exact[0],
        // "下课后": the next of an item that repeats under one title.
        _ if same_title(&candidates) => &candidates[0],
        (n, _) => {
            let options: Vec<&str> = candidates.iter().map(|c| c.id.as_str()).collect();
            let mut step = finish("need_clarification", say.several(n, &named), Some(say.be_precise()));
            step.1["options"] = json!(options);
            return step;
        }
    };
    match anchored_time(the_one, anchor).map(|moment| at_clock(&moment, item.when.as_deref())) {
        Some(when) => {
            let mut arguments = json!(NewItem { anchor: None, segment: None, when: Some(when), ..item.clone() });
            arguments.as_object_mut().map(|a| a.remove("record"));
            (CREATE_ITEM, arguments)
        }
        None => finish("error", say.replies().no_time_to_hang_on(&the_one.title), Some(say.rephrase())),
    }
}

/// The moment `anchor` names on `item`: its end (or start) after, its start before, moved by the
/// length, as the tools read it exactly ("2026-02-09 10:30").
fn anchored_time(item: &Candidate, anchor: &Anchor) -> Option<String> {
    let date = NaiveDate::parse_from_str(item.date.as_deref()?, "%Y-%m-%d").ok()?;
    let clock = |t: &Option<String>| t.as_deref().and_then(|t| chrono::NaiveTime::parse_from_str(t, "%H:%M").ok());
    let start = date.and_time(clock(&item.start_time)?);
    let end = clock(&item.end_time).map_or(start, |end| if end >= start.time() { date.and_time(end) } else { (date + chrono::Duration::days(1)).and_time(end) });
    let any_moment = quickact_time::TimeContext::new(chrono::DateTime::UNIX_EPOCH, chrono_tz::UTC);
    let minutes = match &anchor.offset {
        Some(text) => i64::from(quickact_time::resolve(text, &any_moment)?.duration_minutes?),
        None => 0,
    };
    let moment = if anchor.after { end + chrono::Duration::minutes(minutes) } else { start - chrono::Duration::minutes(minutes) };
    Some(moment.format("%Y-%m-%d %H:%M").to_string())
}

/// The anchored moment ("2026-02-11 08:00") at the time of day `clock` names ("体检前一天晚上8点":
/// the day before, at 20:00), if it names one.
fn at_clock(moment: &str, clock: Option<&str>) -> String {
    let any_moment = quickact_time::TimeContext::new(chrono::DateTime::UNIX_EPOCH, chrono_tz::UTC);
    match clock.and_then(|c| quickact_time::resolve(c, &any_moment)).and_then(|r| r.start_time) {
        Some(time) => format!("{} {}", &moment[..10], time.format("%H:%M")),
        None => moment.to_owned(),
    }
}
