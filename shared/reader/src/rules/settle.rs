//! Rules that settle an item: delete it ("cancel tomorrow's yoga", 删除明天的健身, 明天的会取消,
//! "I can't make it to X") or complete it ("mark X as done", 完成报告, 报告写完了, "I already paid
//! the water bill").

use super::{Rule, body, skip_subject};
use crate::{
    frame::{Act, Frame, Role, Selector},
    lexicon::{Action, Category, Flags, Glue},
    reader::Reader,
    target::selector,
    tokens::Tag,
};

fn frame(act: Act, target: Selector) -> Frame {
    Frame { act, text: String::new(), span: (0, 0), rule: "", target: Some(target), item: None, change: None, listing: None, parts: Vec::new() }
}

pub const NOT_GOING: Rule = Rule {
    name: "delete.not_going",
    reads: "a statement of not going, before or after the item (明天的健身不去了, 'I can't make it to X', 'stop reminding me to X')",
    examples: &["明天的健身不去了", "例会不开了", "I can't make it to the book club on monday", "stop reminding me to stretch", "不用再提醒我吃药了", "the offsite is cancelled"],
    read: not_going,
};

fn not_going(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let n = (range.start..range.end).find(|&i| r.is(i, Category::NotGoing))?;
    r.set(n, Role::Action);
    let kind = r.sense(n, Category::NotGoing).and_then(|s| s.kind);
    // The item after the statement ("I can't make it to X", 不用再提醒我X) or before it (X不去了).
    let after = n + 1..range.end;
    let before = skip_subject(r, range.start, n)..n;
    // "明天体检不去了 删掉吧": saying to delete it too changes nothing.
    let mut after = after;
    while after.end > after.start && (r.is_verb(after.end - 1, Action::Delete) || r.is(after.end - 1, Category::Aspect) || r.is_noise(after.end - 1)) {
        r.set(after.end - 1, Role::Noise);
        after.end -= 1;
    }
    let has_words = |r: &Reader, range: std::ops::Range<usize>| range.into_iter().any(|i| !r.is_noise(i) && !r.is(i, Category::Aspect));
    let has_names = |r: &Reader, range: std::ops::Range<usize>| range.into_iter().any(|i| !r.is_noise(i) && !r.is(i, Category::Aspect) && !matches!(r.tag(i), Tag::Time(_)));
    let mut target = if has_words(r, after.clone()) && !has_names(r, after.clone()) && has_names(r, before.clone()) {
        // "book club got cancelled tmrw": the item before, its day after.
        let mut target = selector(r, before);
        let day = selector(r, after);
        target.when = target.when.or(day.when);
        target.timed |= day.timed;
        target
    } else if has_words(r, after.clone()) {
        let start = if r.is_glue(after.start, Glue::About) {
            r.set(after.start, Role::Noise);
            after.start + 1
        } else {
            after.start
        };
        // "今天不去健身了": a day before the statement is the item's.
        if has_names(r, before.clone()) {
            return None;
        }
        let mut target = selector(r, start..after.end);
        let day = selector(r, before);
        target.when = target.when.or(day.when);
        target.timed |= day.timed;
        target
    } else {
        selector(r, before)
    };
    if target.is_empty() {
        return None;
    }
    target.kind = target.kind.or(kind.filter(|_| target.words.is_empty()));
    Some(frame(Act::Delete, target))
}

pub const DELETE_BA: Rule = Rule {
    name: "delete.ba",
    reads: "把/将 the item, then a delete verb (把买菜删掉)",
    examples: &["把买菜删掉", "把明天的会取消了", "将周五的聚餐取消"],
    read: |r| ba_then(r, Action::Delete),
};

pub const COMPLETE_BA: Rule = Rule {
    name: "complete.ba",
    reads: "把/将 the item, then a complete verb (把报告标成完成)",
    examples: &["把报告标成完成", "把这周的待办都标记为已完成", "把买菜完成了"],
    read: |r| ba_then(r, Action::Complete),
};

fn ba_then(r: &mut Reader, want: Action) -> Option<Frame> {
    let range = body(r);
    let b = skip_subject(r, range.start, range.end);
    if b >= range.end || !r.is(b, Category::Ba) {
        return None;
    }
    r.set(b, Role::Noise);
    let v = (b + 1..range.end).find(|&i| r.is(i, Category::Verb) || want == Action::Complete && r.is(i, Category::Done))?;
    if !(r.is_verb(v, want) || want == Action::Complete && r.is(v, Category::Done)) {
        return None;
    }
    // "标成" + "完成": a verb that needs "done" after it.
    let mut end = v + 1;
    if r.verb(v).is_some_and(|s| s.has(Flags::AS_DONE)) {
        if !(end < range.end && (r.is_verb(end, Action::Complete) || r.is(end, Category::Done))) {
            return None;
        }
        r.set(end, Role::Action);
        end += 1;
    }
    r.set(v, Role::Action);
    for i in end..range.end {
        if r.is(i, Category::Aspect) || r.is_noise(i) {
            r.set(i, Role::Noise);
        } else {
            r.doubt(i, "a word after the verb");
        }
    }
    let target = selector(r, b + 1..v);
    (!target.is_empty()).then(|| frame(if want == Action::Delete { Act::Delete } else { Act::Complete }, target))
}

pub const DELETE_VERB: Rule = Rule {
    name: "delete.verb",
    reads: "a delete verb first, then the item(s) (cancel, delete, remove, 删除, 取消)",
    examples: &["cancel tomorrow's yoga", "删除明天的健身", "取消周五的会议", "drop every reminder for today", "clear everything tomorrow", "remove the vet visit from my calendar"],
    read: |r| verb_first(r, Action::Delete),
};

pub const COMPLETE_VERB: Rule = Rule {
    name: "complete.verb",
    reads: "a complete verb first, then the item (完成, finish, 'done with')",
    examples: &["完成报告提交", "finish the slides", "done with the slides", "check off groceries", "complete the tax form"],
    read: |r| verb_first(r, Action::Complete),
};

fn verb_first(r: &mut Reader, want: Action) -> Option<Frame> {
    let range = body(r);
    let v = skip_subject(r, range.start, range.end);
    if v >= range.end || !r.is_verb(v, want) || r.verb(v).is_some_and(|s| s.has(Flags::AS_DONE) || s.has(Flags::ONLY_POST)) {
        return None;
    }
    r.set(v, Role::Action);
    let bulk = r.verb(v).is_some_and(|s| s.has(Flags::BULK));
    let mut end = range.end;
    // "finish the report" ends with "as done", "off" or "please" at most.
    while end > v + 1 && (r.is(end - 1, Category::Particle) || r.is(end - 1, Category::Aspect) || r.is_noise(end - 1)) {
        r.set(end - 1, Role::Noise);
        end -= 1;
    }
    let mut target = selector(r, v + 1..end);
    // "clear friday", 清空下周五的日程: every item there.
    target.all |= bulk;
    let target = target.or_previous();
    Some(frame(if want == Action::Delete { Act::Delete } else { Act::Complete }, target))
}

pub const DELETE_OFF_CALENDAR: Rule = Rule {
    name: "delete.off_calendar",
    reads: "take or remove the item off or from the calendar",
    examples: &["take the vet visit off my calendar", "get the dentist off my schedule"],
    read: off_calendar,
};

fn off_calendar(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let v = skip_subject(r, range.start, range.end);
    let place = (v..range.end).find(|&i| r.sense(i, Category::Noise).is_some_and(|s| s.sub == Some("off")))?;
    if !(r.is_glue(v, Glue::OffVerb) || r.is_verb(v, Action::Delete)) {
        return None;
    }
    r.set(v, Role::Action);
    r.set(place, Role::Action);
    let mut target = selector(r, v + 1..place);
    let rest = selector(r, place + 1..range.end);
    target.when = target.when.or(rest.when);
    target.timed |= rest.timed;
    (!target.is_empty()).then(|| frame(Act::Delete, target))
}

pub const COMPLETE_MARK: Rule = Rule {
    name: "complete.mark",
    reads: "'mark' the item 'as done' (done, complete, finished)",
    examples: &["mark buy milk as done", "mark the invoice done", "mark pay rent complete"],
    read: mark,
};

fn mark(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let v = skip_subject(r, range.start, range.end);
    if v >= range.end || !r.verb(v).is_some_and(|s| s.action == Some(Action::Complete) && s.has(Flags::AS_DONE)) {
        return None;
    }
    r.set(v, Role::Action);
    let says_done = |r: &Reader, i: usize| r.is(i, Category::Done) || r.is_verb(i, Action::Complete);
    let last = (v + 1..range.end).rev().find(|&i| says_done(r, i))?;
    // "mark the slides as done ✅": every word of done at the end.
    let done = (v + 1..=last).rev().take_while(|&i| says_done(r, i) || r.is_noise(i)).filter(|&i| says_done(r, i)).last()?;
    for i in done..=last {
        r.set(i, if says_done(r, i) { Role::Action } else { Role::Noise });
    }
    let mut end = done;
    if end > v + 1 && r.is_glue(end - 1, Glue::As) {
        r.set(end - 1, Role::Noise);
        end -= 1;
    }
    for i in done + 1..range.end {
        if r.is_noise(i) {
            r.set(i, Role::Noise);
        }
    }
    let target = selector(r, v + 1..end);
    (!target.is_empty()).then(|| frame(Act::Complete, target))
}

pub const COMPLETE_ALREADY: Rule = Rule {
    name: "complete.already",
    reads: "已经 and the work with 过 (我已经交过房租了); in English what was done said with 'already' is complete.past",
    examples: &["我已经交过房租了", "已经给妈妈打过电话了"],
    read: already,
};

fn already(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let a = skip_subject(r, range.start, range.end);
    // "called the plumber already": the past verb first, "already" at the end.
    let last = range.end.checked_sub(1)?;
    if a < last && r.is(last, Category::Already) && (r.is_with(a, Category::Errand, Flags::PAST) || r.norm(a).ends_with("ed") && matches!(r.tag(a), Tag::Latin)) {
        r.set(a, Role::Action);
        r.set(last, Role::Noise);
        let mut target = selector(r, a + 1..last);
        target.hint = base_form(r, a);
        return (!target.is_empty()).then(|| frame(Act::Complete, target));
    }
    if a >= range.end || !r.is(a, Category::Already) {
        return None;
    }
    r.set(a, Role::Noise);
    let mut start = a + 1;
    let zh = r.text(a).chars().any(quickact_time::is_han);
    if zh {
        // 已经 + the work with 过 + 了: the item is the work without its aspect words.
        if !(start..range.end).any(|i| r.is_glue(i, Glue::Guo) || r.is(i, Category::Done)) {
            return None;
        }
    } else {
        // "already paid X": the past verb goes; the item is what it was done to.
        if start < range.end && matches!(r.tag(start), Tag::Latin) || r.is(start, Category::Errand) || r.is(start, Category::Verb) {
            r.set(start, Role::Action);
            let hint = base_form(r, start);
            start += 1;
            let mut end = range.end;
            while end > start && (r.is(end - 1, Category::Aspect) || r.is(end - 1, Category::Done) || r.is_noise(end - 1)) {
                r.set(end - 1, Role::Noise);
                end -= 1;
            }
            let mut target = selector(r, start..end);
            target.hint = hint;
            return (!target.is_empty()).then(|| frame(Act::Complete, target));
        } else {
            return None;
        }
    }
    let mut end = range.end;
    while end > start && (r.is(end - 1, Category::Aspect) || r.is(end - 1, Category::Done) || r.is_noise(end - 1)) {
        r.set(end - 1, Role::Noise);
        end -= 1;
    }
    let target = selector(r, start..end);
    (!target.is_empty()).then(|| frame(Act::Complete, target))
}

pub const DELETE_AFTER: Rule = Rule {
    name: "delete.after",
    reads: "the item, then a delete verb (明天的会取消, 下午那场会取消吧, 'the 3pm call, cancel')",
    examples: &["明天的会取消", "下午那场会取消吧", "周五的聚餐取消掉"],
    read: |r| item_then(r, Action::Delete),
};

pub const COMPLETE_AFTER: Rule = Rule {
    name: "complete.after",
    reads: "the item, then done (报告提交完成了, 周报写完了, 'pay rent is done')",
    examples: &["报告提交完成了", "周报写完了", "报销单交好了", "房租搞定", "pay rent is done", "the slides are done"],
    read: |r| item_then(r, Action::Complete),
};

fn item_then(r: &mut Reader, want: Action) -> Option<Frame> {
    let range = body(r);
    let start = skip_subject(r, range.start, range.end);
    let mut end = range.end;
    let mut finished = false;
    while end > start && (r.is(end - 1, Category::Aspect) || r.is_noise(end - 1)) {
        finished |= r.is_glue(end - 1, Glue::Le);
        r.set(end - 1, Role::Noise);
        end -= 1;
    }
    if end <= start + 1 {
        return None;
    }
    let v = end - 1;
    // "下周一的 meetings 全部 cancel": an English verb in a Chinese sentence takes Chinese order.
    let mixed = r.sentence.is_chinese() && r.text(v).is_ascii();
    let post = r.verb(v).is_some_and(|s| s.action == Some(want) && (s.has(Flags::POST) || s.has(Flags::PAST) || mixed));
    let bulk = r.verb(v).is_some_and(|s| s.has(Flags::BULK));
    // "报告交了", "水电费交了": the item's own work with 了 is done.
    let done = want == Action::Complete && (r.is(v, Category::Done) || finished && (r.is(v, Category::Result) || r.is_with(v, Category::Errand, Flags::WORK)));
    if !(post || done) {
        return None;
    }
    // "下周五前把护照办了": done by a day to come is a to-do, not a statement of done.
    if want == Action::Complete && (start..v).any(|i| crate::times::piece(r, i).is_some_and(|res| res.date > r.ctx.today())) {
        return None;
    }
    r.set(v, Role::Action);
    let mut target_end = v;
    // "今天的 todo 都 mark 成 done": the verb that needs "done" after it, and 成/as.
    while want == Action::Complete && target_end > start && (r.is_glue(target_end - 1, Glue::As) || r.verb(target_end - 1).is_some_and(|s| s.has(Flags::AS_DONE))) {
        r.set(target_end - 1, Role::Action);
        target_end -= 1;
    }
    // "pay rent is done", "the slides are done": the linking word; 写完了: the work's verb.
    while target_end > start && (r.is_glue(target_end - 1, Glue::IsDone) || want == Action::Complete && r.is_with(target_end - 1, Category::Errand, Flags::WORK) && target_end - 1 > start) {
        r.set(target_end - 1, Role::Action);
        target_end -= 1;
    }
    let mut target = selector(r, start..target_end);
    target.all |= bulk;
    // "报告已经交了": the work's verb tells 交报告 from 写周报.
    if want == Action::Complete && r.is_with(v, Category::Errand, Flags::WORK) {
        target.hint = Some(r.text(v));
    }
    if target.is_empty() {
        return None;
    }
    // "续费取消" with nothing pointing at an item may be a to-do of cancelling; an item named by its
    // day, time, "that" or kind is one to delete.
    if want == Action::Delete && target.when.is_none() && target.kind.is_none() && !pointed(r, start..target_end) && !r.sentence.is_chinese() {
        return None;
    }
    Some(frame(if want == Action::Delete { Act::Delete } else { Act::Complete }, target))
}

/// "那个", "这场", "the": the phrase points at an item.
fn pointed(r: &Reader, range: std::ops::Range<usize>) -> bool {
    range.into_iter().any(|i| r.is(i, Category::Reference) || r.is(i, Category::Det) || r.is(i, Category::De))
}

pub const COMPLETE_RESULT: Rule = Rule {
    name: "complete.result",
    reads: "the work with its result, the item, then 了 (买完菜了, 交完房租了, 开完会了)",
    examples: &["买完菜了", "我交完房租了", "已经取完快递了"],
    read: result_done,
};

fn result_done(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let mut start = skip_subject(r, range.start, range.end);
    if start < range.end && r.is(start, Category::Already) {
        r.set(start, Role::Noise);
        start += 1;
    }
    if start >= range.end || !r.is(start, Category::Result) {
        return None;
    }
    let last = range.end - 1;
    if last <= start || !r.is_glue(last, Glue::Le) {
        return None;
    }
    r.set(start, Role::Action);
    r.set(last, Role::Noise);
    let target = selector(r, start + 1..last);
    (!target.is_empty()).then(|| frame(Act::Complete, target))
}

/// The form a to-do is written in, of a past verb ("paid" -> "pay", "emailed" -> "email").
fn base_form(r: &Reader, i: usize) -> Option<String> {
    if let Some(means) = r.entry(i).and_then(|e| e.senses.iter().find_map(|s| s.means)) {
        return Some(means.replace('_', " "));
    }
    let word = r.norm(i);
    let stem = word.strip_suffix("ed")?;
    // "called" -> "call", "emailed" -> "email", "booked" -> "book"; "submitted" -> "submit";
    // "carried" -> "carry"; "filed" -> "file"
    let english = crate::lexicon::is_english;
    let bytes = stem.as_bytes();
    let undoubled = &stem[..stem.len().saturating_sub(1)];
    Some(if english(stem) || stem.len() <= 3 {
        stem.to_owned()
    } else if bytes.len() >= 2 && bytes[bytes.len() - 1] == bytes[bytes.len() - 2] && english(undoubled) {
        undoubled.to_owned()
    } else if let Some(y) = stem.strip_suffix('i').map(|s| format!("{s}y")).filter(|y| english(y)) {
        y
    } else {
        format!("{stem}e")
    })
}

pub const COMPLETE_PAST: Rule = Rule {
    name: "complete.past",
    reads: "what was done, said in the past ('booked the vet ✅', 'i paid the water bill', 交了房租了, 搞定了报销)",
    examples: &["booked the vet ✅", "i paid the water bill", "交了房租了", "搞定了报销", "交作业了", "已经给王老师回电话了", "finished reading ch 4", "I already paid the water bill", "already sent the invoice to Acme", "I finished the report"],
    read: past,
};

fn past(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let mut v = skip_subject(r, range.start, range.end);
    let already = v < range.end && r.is(v, Category::Already);
    if already {
        r.set(v, Role::Noise);
        v += 1;
    }
    if v >= range.end {
        return None;
    }
    // "交作业了", "已经给王老师回电话了": the work and the item, then 了 at the end.
    let last = (v..range.end).rev().find(|&i| !r.is_noise(i))?;
    // (with 过, "已经交过房租了", it is complete.already's)
    let work_done = !r.text(v).is_ascii()
        && r.is_glue(last, Glue::Le)
        && last > v + 1
        && (r.is_with(v, Category::Errand, Flags::WORK) || already && r.is(v, Category::Errand))
        && !(v..last).any(|i| r.is_glue(i, Glue::Guo));
    // "搞定了报销", "做完了PPT": done first, then the item.
    let done_first = r.is(v, Category::Done) && !r.text(v).is_ascii();
    // "交了房租了": the work's verb, 了, the item.
    let le = !r.text(v).is_ascii() && r.is(v, Category::Errand) && r.is_glue(v + 1, Glue::Le);
    // "booked the vet", "i paid the water bill", "finished reading ch 4"
    let english_past = r.is_with(v, Category::Errand, Flags::PAST)
        || r.verb(v).is_some_and(|s| s.action == Some(Action::Complete) && s.has(Flags::PAST))
        || matches!(r.tag(v), Tag::Latin) && r.norm(v).ends_with("ed") && crate::lexicon::is_english(&r.norm(v));
    if !(done_first || le || english_past || work_done) {
        return None;
    }
    let mut hint = if le || english_past || work_done { base_form(r, v).or_else(|| Some(r.text(v))).filter(|_| !done_first) } else { None };
    r.set(v, Role::Action);
    let mut start = v + 1;
    if le {
        r.set(start, Role::Noise);
        start += 1;
    }
    // "finished reading ch 4": the work itself is the hint, the rest the item.
    if start < range.end && r.norm(start).ends_with("ing") && matches!(r.tag(start), Tag::Latin | Tag::Word { .. }) {
        hint = r.norm(start).strip_suffix("ing").map(str::to_owned);
        r.set(start, Role::Action);
        start += 1;
    }
    let mut end = range.end;
    while end > start && (r.is(end - 1, Category::Aspect) || r.is(end - 1, Category::Done) || r.is(end - 1, Category::Already) || r.is_noise(end - 1)) {
        r.set(end - 1, Role::Noise);
        end -= 1;
    }
    // A time said with it makes it a record or a plan, not a statement of done; but "the slides
    // for thursday" names the item by the day in its title.
    let for_a_day = |r: &Reader, i: usize| i > start && r.is_glue(i - 1, Glue::ForItem);
    if (start..end).any(|i| matches!(r.tag(i), Tag::Time(_)) && !for_a_day(r, i)) {
        return None;
    }
    let named_by_day: Vec<String> = (start..end).filter(|&i| matches!(r.tag(i), Tag::Time(_))).map(|i| r.text(i)).collect();
    let mut target = selector(r, start..end);
    if !named_by_day.is_empty() {
        target.words.extend(named_by_day);
        (target.when, target.timed) = (None, false);
    }
    target.hint = hint;
    (!target.is_empty() && !target.previous).then(|| frame(Act::Complete, target))
}
