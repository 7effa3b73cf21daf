//! Rules that move an item: to a new time ("move X to friday 3pm", 把X改到周五) or by a length
//! ("push X back 30 minutes", 把X推迟半小时), with the verb first, after 把, or after the item
//! ("standup should be at 10", 周会改到周五).

use std::ops::Range;

use super::{Rule, body, skip_subject};
use crate::{
    frame::{Act, Change, Frame, Role, Selector},
    lexicon::{Action, Category, Dir, Flags, Glue},
    reader::Reader,
    target::selector,
    times,
    tokens::Tag,
};

pub const MOVE_BA: Rule = Rule {
    name: "move.ba",
    reads: "把/将 the item, a move verb (改到, 挪到), the new time",
    examples: &["把2月8日的会议改到晚上8点", "把周一下午3点那个挪到5点", "把周会从周二改到周四", "把会议时间改成下午3点"],
    read: |r| ba(r, Action::Move),
};

pub const SHIFT_BA: Rule = Rule {
    name: "shift.ba",
    reads: "把/将 the item, a shift verb (推迟, 提前), the length",
    examples: &["把周会推迟半小时", "把明天的会提前一个小时", "把评审往后推15分钟"],
    read: |r| ba(r, Action::Shift),
};

/// 把 + item + verb + time or length.
fn ba(r: &mut Reader, want: Action) -> Option<Frame> {
    let range = body(r);
    let b = skip_subject(r, range.start, range.end);
    if b >= range.end || !r.is(b, Category::Ba) {
        return None;
    }
    r.set(b, Role::Noise);
    let v = (b + 1..range.end).find(|&i| r.is(i, Category::Verb))?;
    let verb = r.verb(v)?;
    let action = verb.action?;
    let moves_to = action == Action::Move || verb.has(Flags::TO);
    if want == Action::Move && !moves_to || want == Action::Shift && (action != Action::Shift || verb.has(Flags::TO)) {
        return None;
    }
    r.set(v, Role::Action);
    let target = selector(r, b + 1..v).or_previous();
    let rest = skip_joiners(r, v + 1, range.end, Glue::ZhJoiner);
    if want == Action::Move {
        let to = new_time(r, rest..range.end)?;
        return Some(frame(Act::Move, target, to));
    }
    let by = length(r, rest..range.end, verb.dir)?;
    Some(frame(Act::Shift, target, Change::By(by)))
}

pub const MOVE_VERB: Rule = Rule {
    name: "move.verb",
    reads: "a move verb first, the item, then 'to' (until, for) and the new time",
    examples: &["move my dentist appointment to Friday 10am", "reschedule the call for monday 3pm", "push the retro to thursday", "move the meeting from 3pm to 4pm", "move up the review to 2pm"],
    read: move_verb,
};

fn move_verb(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let v = skip_subject(r, range.start, range.end);
    let verb = r.verb(v)?;
    if !matches!(verb.action, Some(Action::Move | Action::Shift)) || r.is_glue(v, Glue::Make) {
        return None;
    }
    r.set(v, Role::Action);
    // "改到后天同一时间", "推迟到周五" with no item named: the item of the clause before.
    if verb.has(Flags::TO) {
        let to = new_time(r, v + 1..range.end)?;
        return Some(frame(Act::Move, Selector::default().or_previous(), to));
    }
    let start = particles(r, v + 1, range.end).0;
    // The last "to" (until, till, for, 到) with a time after it: the new time; before it, the item.
    let to = (start..range.end).rev().find(|&i| {
        r.is_glue(i, Glue::ToTime) && (i + 1..range.end).any(|j| matches!(r.tag(j), Tag::Time(_)) || bare_hour(r, j).is_some())
    });
    if to.is_none()
        && let Some(frame) = range_as_move(r, start, range.end)
    {
        return Some(frame);
    }
    let (target_end, time_start) = match to {
        Some(to) if to > start && r.is(to - 1, Category::Particle) => {
            r.set(to - 1, Role::Action);
            r.set(to, Role::Noise);
            (to - 1, to + 1)
        }
        Some(to) => {
            r.set(to, Role::Noise);
            (to, to + 1)
        }
        // "reschedule dentist friday 3pm": the times at the end, after the item's words.
        None => {
            let t = trailing_times(r, start, range.end)?;
            (t, t)
        }
    };
    let target = selector(r, start..target_end).or_previous();
    let to = new_time(r, time_start..range.end)?;
    Some(frame(Act::Move, target, to))
}

pub const SHIFT_VERB: Rule = Rule {
    name: "shift.verb",
    reads: "a shift verb first, the item, the length, and which way (back, later, earlier, forward)",
    examples: &["push the standup back 10 minutes", "push back the budget review 45 minutes", "move the design review 1 hour earlier", "delay the call by an hour", "推迟周会半小时", "make the standup 10 minutes later"],
    read: shift_verb,
};

fn shift_verb(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let v = skip_subject(r, range.start, range.end);
    let verb = r.verb(v)?;
    if !matches!(verb.action, Some(Action::Move | Action::Shift)) || verb.has(Flags::TO) {
        return None;
    }
    r.set(v, Role::Action);
    let (start, particle_dir) = particles(r, v + 1, range.end);
    let l = (start..range.end).find(|&i| is_shift_length(r, i))?;
    // "push X back 30 minutes", "delay X by an hour": particles and "by" between item and length.
    let mut target_end = l;
    let mut dir = verb.dir.or(particle_dir);
    while target_end > start && (r.is(target_end - 1, Category::Particle) || r.is_glue(target_end - 1, Glue::By)) {
        dir = dir.or(r.sense(target_end - 1, Category::Particle).and_then(|s| s.dir));
        r.set(target_end - 1, Role::Action);
        target_end -= 1;
    }
    let target = selector(r, start..target_end).or_previous();
    let by = length(r, l..range.end, dir)?;
    Some(frame(Act::Shift, target, Change::By(by)))
}

pub const MOVE_INSTEAD: Rule = Rule {
    name: "move.instead",
    reads: "a plan said instead: ('can we do', 'let's have') the item at a time 'instead'",
    examples: &["can we do the retro on wednesday instead", "could we have the standup at 10 instead?", "let's have the sync at 4 instead", "dinner w sam at 8 instead", "lets do yoga saturday instead of friday"],
    read: instead,
};

fn instead(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let end = (range.start..range.end).rev().find(|&i| !r.is_punct(i))?;
    // "yoga saturday instead of friday": the time after "instead of" is the item's own.
    let of_its_time = end > 0 && matches!(r.tag(end), Tag::Time(_)) && r.is_glue(end - 1, Glue::InsteadOf);
    let last = if of_its_time { end - 1 } else { end };
    if !(r.is_glue(last, Glue::Instead) || of_its_time) {
        return None;
    }
    r.set(last, Role::Noise);
    let its_time = of_its_time.then(|| {
        r.set(end, Role::TargetTime);
        r.text(end)
    });
    let mut i = range.start;
    while i < last && (r.is_glue(i, Glue::PlanLead) || [Category::Pronoun, Category::Modal, Category::Have, Category::Aux].iter().any(|&c| r.is(i, c))) {
        r.set(i, Role::Action);
        i += 1;
    }
    let t = (i..last).find(|&j| matches!(r.tag(j), Tag::Time(_)))?;
    let target_end = if t > i && r.is_glue(t - 1, Glue::TimePrep) { t - 1 } else { t };
    let mut target = selector(r, i..target_end);
    if its_time.is_some() {
        target.when = its_time;
    }
    let to = new_time(r, target_end..last)?;
    (!target.is_empty()).then(|| frame(Act::Move, target, to))
}

pub const MOVE_SUBJECT: Rule = Rule {
    name: "move.subject_first",
    reads: "the item first, then its new time (周会改到周五, 'standup should be at 10 tomorrow', 'X got moved to friday')",
    examples: &["周会改到周五下午3点", "standup should be at 10 tomorrow", "my dentist appointment got moved to Friday 10am", "明天的会议挪到下午3点"],
    read: |r| subject_first(r, Act::Move),
};

pub const SHIFT_SUBJECT: Rule = Rule {
    name: "shift.subject_first",
    reads: "the item first, then a length later or earlier (会议提前1小时, 'X needs to start 30 minutes later')",
    examples: &["会议提前1小时", "周会推迟半小时", "the design review on friday needs to start 30 minutes later"],
    read: |r| subject_first(r, Act::Shift),
};


fn subject_first(r: &mut Reader, want: Act) -> Option<Frame> {
    let range = body(r);
    let start = range.start;
    // The first word that is no part of the item: a verb (Chinese), or English linking words.
    let moves = |r: &Reader, i: usize| r.verb(i).is_some_and(|s| matches!(s.action, Some(Action::Move | Action::Shift)));
    let v = (start..range.end).find(|&i| moves(r, i) || r.is(i, Category::Modal) || r.is_glue(i, Glue::Linking))?;
    if (start..v).any(|i| r.is(i, Category::Verb) && !r.is(i, Category::Item)) {
        return None;
    }
    if v == start {
        return None;
    }
    let mut i = v;
    let mut dir = None;
    let mut moved = false;
    while i < range.end && (r.is(i, Category::Modal) || r.is_glue(i, Glue::Linking) || r.is(i, Category::Verb)) {
        if let Some(verb) = r.verb(i) {
            if !matches!(verb.action, Some(Action::Move | Action::Shift)) {
                return None;
            }
            dir = dir.or(verb.dir);
            moved = true;
        }
        r.set(i, Role::Action);
        i += 1;
    }
    // In Chinese the item is followed by its verb (周会改到周五); English may link with words alone.
    if r.text(v).chars().any(quickact_time::is_han) && !moved {
        return None;
    }
    let target = selector(r, start..v);
    if target.is_empty() {
        return None;
    }
    let rest = skip_joiners(r, i, range.end, Glue::Joiner);
    match want {
        Act::Shift => {
            let by = length(r, rest..range.end, dir)?;
            Some(frame(Act::Shift, target, Change::By(by)))
        }
        _ => {
            let to = new_time(r, rest..range.end)?;
            Some(frame(Act::Move, target, to))
        }
    }
}

// ---------------------------------------------------------------------------------------------

fn frame(act: Act, target: Selector, change: Change) -> Frame {
    // "改到下周同一时间": a move by a length is a shift.
    let act = if act == Act::Move && matches!(change, Change::By(_)) { Act::Shift } else { act };
    Frame { act, text: String::new(), span: (0, 0), rule: "", target: Some(target), item: None, change: Some(change), listing: None, parts: Vec::new() }
}

/// Particles right after a verb ("push **back** the review", "move **up** the call"): the index
/// after them, and the way they point.
fn particles(r: &mut Reader, mut i: usize, end: usize) -> (usize, Option<Dir>) {
    let mut dir = None;
    while i < end && r.is(i, Category::Particle) && !r.is(i, Category::Det) {
        dir = dir.or(r.sense(i, Category::Particle).and_then(|s| s.dir));
        r.set(i, Role::Action);
        i += 1;
    }
    (i, dir)
}

/// Skips words that only join (to, 到) from `i`.
fn skip_joiners(r: &mut Reader, mut i: usize, end: usize, words: Glue) -> usize {
    while i < end && r.is_glue(i, words) {
        r.set(i, Role::Noise);
        i += 1;
    }
    i
}

/// Where a run of time tokens that ends the clause starts (after at least one other word).
fn trailing_times(r: &Reader, start: usize, end: usize) -> Option<usize> {
    let mut t = end;
    while t > start && (matches!(r.tag(t - 1), Tag::Time(_)) || r.is_punct(t - 1) || r.is_glue(t - 1, Glue::AtOn)) {
        t -= 1;
    }
    (t > start && t < end && (t..end).any(|i| matches!(r.tag(i), Tag::Time(_)))).then_some(t)
}

/// A bare number as a new time ("move it to 4", 改到4) is an hour.
fn bare_hour(r: &Reader, i: usize) -> Option<String> {
    let Tag::Number(n) = r.tag(i) else { return None };
    (1..=24).contains(&n).then(|| if r.sentence.is_chinese() { format!("{n}点") } else { format!("at {n}") })
}

/// The new time of tokens `range`: its time pieces (a bare number as an hour), with the small
/// words around them; anything else there is a doubt.
pub(crate) fn new_time(r: &mut Reader, range: Range<usize>) -> Option<Change> {
    let mut times_at = Vec::new();
    let mut bare = None;
    for i in range {
        if shift_amount(r, i).is_some() {
            r.doubt(i, "a length, not a new time");
        } else if matches!(r.tag(i), Tag::Time(_)) {
            r.set(i, Role::NewTime);
            times_at.push(i);
        } else if let Some(hour) = bare_hour(r, i).filter(|_| bare.is_none() && times_at.is_empty()) {
            r.set(i, Role::NewTime);
            bare = Some(hour);
        } else if r.is_noise(i) || r.is(i, Category::Prep) || r.is(i, Category::Aspect) || r.is(i, Category::Det) || r.is_glue(i, Glue::NewTimeTail) {
            r.set(i, Role::Noise);
        } else {
            r.doubt(i, "a word beside the new time");
        }
    }
    if times_at.is_empty() {
        return bare.map(Change::To);
    }
    // "改到后天同一时间", "friday, same time": the same time is the item's own, not the present
    // moment's (which the resolver reads it as): only the day moves. "same time next week" names
    // no day: the item moves a week on.
    if let [only] = times_at[..]
        && same_time(&r.norm(only))
        && let Some(res) = times::piece(r, only)
    {
        let days = (res.date - r.ctx.today()).num_days();
        if weeks_only(&r.norm(only)) && days > 0 && days % 7 == 0 {
            return Some(Change::By(format!("{} weeks", days / 7)));
        }
        return Some(Change::To(res.date.to_string()));
    }
    times::join(r, &times_at).map(Change::To)
}

/// Whether a time says weeks from now and no weekday ("same time next week", 两周后同一时间).
fn weeks_only(text: &str) -> bool {
    let week = Glue::WeekWord.words().iter().any(|w| text.contains(w));
    let numbered = |rest: &str| Glue::WeekdayHan.words().iter().any(|d| rest.starts_with(d));
    let weekday = Glue::WeekdayAbbrev.words().iter().any(|d| text.contains(d)) || Glue::WeekWord.words().iter().any(|w| text.split(w).skip(1).any(numbered));
    week && !weekday
}

/// Words that keep an item's time of day ("same time", 同一时间).
fn same_time(text: &str) -> bool {
    crate::lexicon::lexicon().entries.iter().any(|e| e.senses.iter().any(|s| s.sub == Some("same_time")) && text.contains(e.form))
}

/// A time piece that is a length to move by ("30 minutes", 半小时, "2 days").
fn is_shift_length(r: &Reader, i: usize) -> bool {
    shift_amount(r, i).is_some()
}

/// The length of a time piece to move by, and the way its own words say ("15 minutes earlier",
/// which the resolver reads as a time from now).
fn shift_amount(r: &Reader, i: usize) -> Option<(String, Option<Dir>)> {
    if !matches!(r.tag(i), Tag::Time(_)) {
        return None;
    }
    let text = r.text(i).trim().to_owned();
    let is_length = |res: &quickact_time::Resolution| res.duration_minutes.is_some() && res.start_time.is_none() && res.segment.is_none() && res.rrule.is_none();
    if times::piece(r, i).is_some_and(|res| is_length(&res)) {
        return Some((text, None));
    }
    let lower = text.to_lowercase();
    let ways = Glue::Later.words().iter().map(|w| (w, Dir::Later)).chain(Glue::Earlier.words().iter().map(|w| (w, Dir::Earlier)));
    let (amount, dir) = ways
        .filter_map(|(word, dir)| lower.strip_suffix(word).filter(|rest| rest.ends_with(' ')).map(|rest| (text[..rest.len()].trim().to_owned(), dir)))
        .next()?;
    quickact_time::resolve(&amount, r.ctx).filter(is_length).map(|_| (amount, Some(dir)))
}

/// The signed length of tokens `range` ("-1 hour" for earlier): its length piece and the words
/// saying which way; `dir` is the verb's.
fn length(r: &mut Reader, range: Range<usize>, mut dir: Option<Dir>) -> Option<String> {
    let mut amount = None;
    for i in range {
        if amount.is_none()
            && let Some((text, own_dir)) = shift_amount(r, i)
        {
            r.set(i, Role::Shift);
            amount = Some(text);
            dir = own_dir.or(dir);
        } else if let Some(d) = r.sense(i, Category::Direction).or(r.sense(i, Category::Particle)).and_then(|s| s.dir) {
            r.set(i, Role::Action);
            dir = Some(d);
        } else if r.is_noise(i) || r.is(i, Category::Aspect) || r.is(i, Category::Prep) || r.is(i, Category::Det) {
            r.set(i, Role::Noise);
        } else {
            r.doubt(i, "a word beside the length");
        }
    }
    let amount = amount?;
    Some(match dir? {
        Dir::Later => amount,
        Dir::Earlier => format!("-{amount}"),
    })
}

/// "move my 4pm tomorrow to 6pm": the resolver reads "4pm tomorrow to 6pm" as one range; in a
/// move its start picks the item and its end is the new time.
fn range_as_move(r: &mut Reader, start: usize, end: usize) -> Option<Frame> {
    let t = (start..end).rev().find(|&i| matches!(r.tag(i), Tag::Time(_)))?;
    let res = times::piece(r, t)?;
    let text = r.text(t);
    let lower = text.to_lowercase();
    let (cut, word) = Glue::RangeCut.words().iter().find_map(|c| lower.find(c).map(|at| (at, c.len())))?;
    if (t + 1..end).any(|i| !r.is_noise(i)) {
        return None;
    }
    let to = match (res.start_time, res.end_time, res.end_date) {
        // "tomorrow's 3pm to 4": with no day in the range, the new time is on the item's day.
        (Some(_), Some(until), _) if res.day_stated => times::exact_time(res.end_date.unwrap_or(res.date), until),
        (Some(_), Some(until), _) => until.format("%H:%M").to_string(),
        // "the first one on monday to tuesday": from one day to another, at the item's own time.
        (None, None, Some(_)) => text[cut + word..].trim().to_owned(),
        _ => return None,
    };
    let mut target = selector(r, start..t);
    r.set(t, Role::NewTime);
    let picked = text[..cut].trim();
    // "from monday to wednesday": the item is monday's.
    let picked = Glue::RangeFrom.words().iter().find_map(|w| picked.strip_prefix(w)).unwrap_or(picked).trim().to_owned();
    target.when = Some(match target.when.take() {
        Some(when) => format!("{when} {picked}"),
        None => picked,
    });
    target.timed = res.start_time.is_some();
    Some(frame(Act::Move, target, Change::To(to)))
}
