//! What one clause lends the next, as a person means it: a note goes with the item the clause
//! before creates ("…，记得带电脑"); a clause that names no item acts on the item of the clause
//! before ("把周会改到3点，再推迟半小时", "cancel it"); a time of day with no day takes the day of
//! the clause before ("明天上午9点开会，下午3点去医院").

use quickact_time::{TimeContext, find_all, resolve};

use crate::{
    Unread,
    frame::{Act, Change, Frame},
    lexicon::{Category, lexicon},
    reader::Reader,
    times,
    tokens::{Sentence, Tag},
};

/// When the clause only adds a note, the note goes with the item the clause before creates (after
/// a change it is the user's own note, and goes nowhere). Whether it was a note.
pub fn attach_note(r: &Reader, before: Option<&mut Frame>) -> bool {
    let Some(before) = before else { return false };
    let Some(first) = (0..r.len()).find(|&i| !r.is_noise(i) && !r.is(i, Category::Connector) && !r.is(i, Category::And)) else { return false };
    let starts_a_note = r.is(first, Category::Note);
    let prepares = (0..r.len()).any(|i| r.is(i, Category::Prepare));
    if !(starts_a_note || prepares) || has_own_time(r) || first + 1 >= r.len() && !prepares {
        return false;
    }
    // "提前一小时提醒我出门": a reminder of its own, ahead of the item.
    let reminds = (0..r.len()).any(|i| r.is_verb(i, crate::lexicon::Action::Remind));
    if reminds && (0..r.len()).any(|i| matches!(r.tag(i), Tag::Time(_) | Tag::Number(_))) {
        return false;
    }
    let last = (0..r.len()).rev().find(|&i| !r.is_punct(i)).unwrap_or(first);
    // "备注：丰巢柜A12", "note: bring the card": a label is no part of the note.
    let labelled = r.tokens.get(first).is_some_and(|&t| crate::clauses::is_label(r.sentence, t));
    let from = if labelled { (first + 1..=last).find(|&i| !r.is_punct(i)).unwrap_or(last) } else { first };
    let note = r.sentence.slice(r.token(from).start, r.token(last).end).trim().to_owned();
    if note.chars().count() > 200 {
        return false;
    }
    if let (Act::Create, Some(item)) = (before.act, before.item.as_mut()) {
        let joiner = if r.sentence.is_chinese() { "；" } else { "; " };
        item.description = Some(match item.description.take() {
            Some(was) => format!("{was}{joiner}{note}"),
            None => note,
        });
    }
    true
}

/// A time of its own: a time of day, a day or a series ("记得6点去接孩子" is an item of its own; a
/// length or "提前一天" is not).
fn has_own_time(r: &Reader) -> bool {
    (0..r.len()).any(|i| {
        matches!(r.tag(i), Tag::Time(_))
            && times::piece(r, i).is_some_and(|res| res.start_time.is_some() || res.segment.is_some() || res.rrule.is_some())
            || matches!(r.tag(i), Tag::Time(_)) && times::states_day(r, i) && !times::is_length(r, i) && !r.text(i).contains('前')
    })
}

/// Fills in what a clause takes from the clause before: its item ("it", or none named), its day.
/// Returns what could not be filled (a clause acting on "it" with nothing before it).
pub fn carry(sentence: &Sentence, ctx: &TimeContext, frames: &mut Vec<Frame>) -> Vec<Unread> {
    let mut problems = Vec::new();
    let mut k = 0;
    while k < frames.len() {
        if k > 0 && adds_to_the_item_before(frames, k) {
            frames.remove(k);
            continue;
        }
        if k > 0 && frames[k].target.as_ref().is_some_and(|t| t.previous) && frames[k - 1].rule == "delete.not_going" && frames[k].act != Act::Delete {
            // "I'm not going to yoga tonight, move it to thursday": the statement is the reason
            // for the change, not a deletion of its own.
            let reason = frames.remove(k - 1);
            frames[k - 1].target = reason.target;
            if let Some(target) = frames[k - 1].target.as_mut() {
                target.previous = false;
            }
            k = k.max(1);
            continue;
        }
        if k > 0 {
            name_the_kind(frames, k);
            remind_on(frames, k);
            lend_day_back(frames, k, ctx);
        }
        if frames[k].item.as_ref().and_then(|i| i.anchor.as_ref()).is_some_and(|a| a.target.previous) && !hang_on_the_item_before(frames, k, ctx) {
            problems.push(Unread { span: (0, sentence.chars.len()), text: sentence.text.clone(), reason: "it does not say which item the reminder is ahead of" });
        }
        if frames[k].target.as_ref().is_some_and(|t| t.previous) {
            match k.checked_sub(1).and_then(|b| frames[b].target.clone()) {
                Some(before) => {
                    let same_act = frames[k - 1].act == frames[k].act && !matches!(frames[k].act, Act::Move | Act::Shift);
                    let mut target = before;
                    // The item is where the clause before moved it.
                    if let Some(Change::To(to)) = &frames[k - 1].change
                        && let Some(day) = day_of(to, ctx)
                    {
                        target.when = Some(day);
                        target.timed = false;
                    }
                    target.all = false;
                    frames[k].target = Some(target);
                    if same_act {
                        // "I can't make it to X, cancel it": one deletion.
                        frames.remove(k);
                        continue;
                    }
                }
                None => problems.push(Unread { span: (0, sentence.chars.len()), text: sentence.text.clone(), reason: "it does not say which item" }),
            }
        }
        if k > 0 {
            let day = previous_day(&frames[k - 1], ctx);
            if let Some(day) = day {
                lend_day(&mut frames[k], &day, ctx);
            }
        }
        k += 1;
    }
    problems
}

/// The day the frame's time is on, as an ISO date, when it names one.
fn previous_day(frame: &Frame, ctx: &TimeContext) -> Option<String> {
    let when = match (&frame.item, &frame.change) {
        (Some(item), _) => item.when.as_deref()?,
        (_, Some(Change::To(to))) => to.as_str(),
        _ => return None,
    };
    day_of(when, ctx)
}

/// The date `when` names, if it names a day.
fn day_of(when: &str, ctx: &TimeContext) -> Option<String> {
    let names = find_all(when, ctx).iter().any(times::names_day);
    if !names {
        return None;
    }
    resolve(when, ctx).map(|res| res.date.to_string())
}

/// A create or move whose time is a time of day with no day of its own takes `day`.
fn lend_day(frame: &mut Frame, day: &str, ctx: &TimeContext) {
    let when = match (frame.item.as_mut(), frame.change.as_mut()) {
        (Some(item), _) => item.when.as_mut(),
        (_, Some(Change::To(to))) => Some(to),
        _ => None,
    };
    let Some(when) = when else { return };
    let matches = find_all(when, ctx);
    let of_day = matches.iter().any(|m| m.resolution.start_time.is_some() || m.resolution.segment.is_some());
    let own_day = matches.iter().any(times::names_day);
    if of_day && !own_day {
        *when = format!("{day} {when}");
    }
}


/// "周五晚上7点看电影，提前一小时提醒我出门": a reminder ahead of the item before. Ahead of an item
/// the clause before puts down, it is at that item's time less the length (of that item when it
/// says nothing of its own); ahead of an item the clause before names, it hangs on that item.
/// Whether there was one.
fn hang_on_the_item_before(frames: &mut [Frame], k: usize, ctx: &TimeContext) -> bool {
    let Some(before) = k.checked_sub(1).map(|b| frames[b].clone()) else { return false };
    let Some(item) = frames[k].item.as_mut() else { return false };
    let Some(anchor) = item.anchor.as_mut() else { return false };
    match (before.act, before.item, before.target) {
        (Act::Create, Some(made), _) => {
            let start = made.when.as_deref().and_then(|w| resolve(w, ctx)).and_then(|res| res.start_time.map(|t| res.date.and_time(t)));
            let length = anchor.offset.as_deref().and_then(|o| resolve(o, ctx)).and_then(|res| res.duration_minutes);
            let (Some(start), Some(length)) = (start, length) else { return false };
            let at = start - chrono::Duration::minutes(i64::from(length));
            item.when = Some(times::exact_time(at.date(), at.time()));
            if item.title.is_empty() {
                item.title = made.title;
            }
            item.anchor = None;
            true
        }
        (_, _, Some(target)) if !target.all => {
            anchor.target = target;
            anchor.target.previous = false;
            true
        }
        _ => false,
    }
}

/// "…, can you add that as a todo": a create of "that" adds its kind to the item the clause before
/// creates. Whether frame `k` was one.
fn adds_to_the_item_before(frames: &mut [Frame], k: usize) -> bool {
    let Some(item) = frames[k].item.as_ref() else { return false };
    let refers = lexicon().find(&item.title.to_lowercase()).is_some_and(|e| e.is(Category::Reference));
    let kind_said = frames[k].parts.iter().any(|p| p.role == crate::frame::Role::Kind);
    let (kind, when) = (item.kind, item.when.clone());
    let creates = frames[k - 1].act == Act::Create;
    let Some(before) = frames[k - 1].item.as_mut().filter(|_| refers && creates) else { return false };
    if kind_said {
        before.kind = kind;
        if kind != "event" {
            before.segment = None;
        }
    }
    before.when = before.when.take().or(when);
    true
}

/// "remind me to call the bank at 10am and to email Sara at 2pm": "and to X" after a reminder is
/// another reminder.
fn remind_on(frames: &mut [Frame], k: usize) {
    let reminds = frames[k - 1].item.as_ref().is_some_and(|item| item.kind == crate::lexicon::Kind::Reminder.as_str());
    let mut words = frames[k].text.split_whitespace().map(str::to_lowercase);
    // "…and to email Sara at 2pm", "…and at 8 to water the plants": no verb of its own.
    let own_verb = frames[k].parts.iter().any(|p| p.role == crate::frame::Role::Action);
    let joined = words.next().is_some_and(|w| lexicon().find(&w).is_some_and(|e| e.is(Category::And))) && !own_verb;
    let creates = frames[k].act == Act::Create;
    if let Some(item) = frames[k].item.as_mut().filter(|_| reminds && joined && creates) {
        item.kind = crate::lexicon::Kind::Reminder.as_str();
        item.segment = None;
    }
}

/// "add buy milk and pick up dry cleaning for tomorrow": the day at the end is both items'.
fn lend_day_back(frames: &mut [Frame], k: usize, ctx: &TimeContext) {
    let joined = frames[k].text.split_whitespace().next().is_some_and(|w| lexicon().find(&w.to_lowercase()).is_some_and(|e| e.is(Category::And)));
    let both_create = frames[k - 1].act == Act::Create && frames[k].act == Act::Create;
    let Some(day) = frames[k].item.as_ref().and_then(|i| i.when.as_deref()).filter(|_| joined && both_create).and_then(|w| day_of(w, ctx)) else { return };
    if let Some(item) = frames[k - 1].item.as_mut().filter(|i| i.when.is_none() && i.anchor.is_none()) {
        item.when = Some(day);
        item.segment = item.segment.filter(|s| *s != "all_day");
    }
}

/// "called the plumber already, cancel the reminder": a target that names only its kind takes the
/// words of the item the clause before named.
fn name_the_kind(frames: &mut [Frame], k: usize) {
    let Some(words) = frames[k - 1].target.as_ref().map(|t| t.words.clone()).filter(|w| !w.is_empty()) else { return };
    if let Some(target) = frames[k].target.as_mut()
        && target.kind.is_some()
        && target.words.is_empty()
        && target.when.is_none()
        && !target.all
        && target.position.is_none()
        && !target.previous
    {
        target.words = words;
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_day_is_read_off_a_time() {
        let ctx = TimeContext::new(chrono::Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
        assert_eq!(day_of("周日下午", &ctx).as_deref(), Some("2026-02-08"));
    }
}
