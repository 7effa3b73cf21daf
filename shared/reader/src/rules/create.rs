//! Rules that put something new down: a reminder, a note to self, an item with a verb, an item
//! one has, an item with a time, a gathering, a bare errand.

use super::{Rule, body, first_action, first_other_action, first_time, skip_subject};
use crate::{
    frame::{Act, Frame, Role},
    lexicon::{Action, Category, Glue, Kind},
    reader::Reader,
    title::{Shape, new_item},
    tokens::Tag,
};

pub const REMIND: Rule = Rule {
    name: "create.remind",
    reads: "a reminder: 'remind me (to)' or 提醒我 before any other action word; the rest is what and when",
    examples: &["remind me to call mom tomorrow at 5pm", "提醒我明天早上8点吃药", "今晚8点提醒我给妈妈打电话", "remind me to cancel the gym membership on friday"],
    read: remind,
};

fn remind(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let (v, action) = first_action(r, range.clone())?;
    if action != Some(Action::Remind) {
        return None;
    }
    // "把明天的提醒全部删掉", "删除吃药提醒": 提醒 after 的 or 把 is the reminder, a noun.
    if v > range.start && (r.is(v - 1, Category::De) || r.is(v - 1, Category::Ba)) {
        return None;
    }
    // "把週五那個提醒刪掉", "喝水提醒改成10点半": a bare 提醒 (a noun too) after words that point or
    // name, with another action after it, is the reminder acted on.
    let names_it = v > range.start && !r.is_punct(v - 1) && !r.is(v - 1, Category::Pronoun);
    if r.is(v, Category::Item) && names_it && super::first_other_action(r, v + 1..range.end).is_some_and(|(_, a)| a != Some(Action::Remind)) {
        return None;
    }
    r.set(v, Role::Action);
    // "set a reminder to", "remind me about", "提醒我一下": the words that only join.
    let mut after = v + 1;
    while after < range.end && (r.is_glue(after, Glue::RemindGlue) || r.is(after, Category::Noise)) {
        r.set(after, Role::Noise);
        after += 1;
    }
    for i in range.start..v {
        if r.is(i, Category::Verb) && r.verb(i).is_some_and(|s| s.action == Some(Action::Create)) {
            r.set(i, Role::Action);
        }
    }
    Some(create_frame(r, range, Shape { kind: Some(Kind::Reminder), verbs_in_title: true }))
}

pub const NOTE_TO_SELF: Rule = Rule {
    name: "create.note_to_self",
    reads: "'remember to', 'don't forget to', 记得, 别忘了 first: a to-do (a reminder when a clock time is said)",
    examples: &["记得周日交水电费", "remember to renew the passport", "don't forget to call the plumber at 9am", "记得把会员的自动续费取消"],
    read: note_to_self,
};

fn note_to_self(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let start = skip_subject(r, range.start, range.end);
    if start >= range.end || !r.is(start, Category::Note) || r.is(start, Category::Verb) {
        return None;
    }
    r.set(start, Role::Action);
    let mut after = start + 1;
    while after < range.end && r.is_glue(after, Glue::NoteGlue) {
        r.set(after, Role::Noise);
        after += 1;
    }
    let mut frame = create_frame(r, after..range.end, Shape { kind: None, verbs_in_title: true });
    if let Some(item) = &mut frame.item {
        let clock = (after..range.end).any(|i| r.roles[i] == Some(Role::When) && crate::times::piece(r, i).is_some_and(|res| res.start_time.is_some()));
        if item.kind == "event" && clock && !item_is_gathering(r) {
            item.kind = "reminder";
            item.segment = None;
        } else if item.kind == "event" && !clock && item.segment == Some("all_day") && !item_is_gathering(r) {
            item.kind = "todo";
            item.segment = None;
        }
    }
    Some(frame)
}

pub const CREATE_VERB: Rule = Rule {
    name: "create.verb",
    reads: "a create verb first (add, schedule, book, 添加, 安排, 记一下): the rest is the item",
    examples: &["add todo buy milk", "schedule code review tomorrow 2pm to 3pm", "帮我安排下周三晚上7点到9点和老王吃饭", "put lunch with Kim on my calendar for tuesday at 1pm"],
    read: create_verb,
};

fn create_verb(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let start = skip_subject(r, range.start, range.end);
    if start >= range.end {
        return None;
    }
    // "to do: clean the gutters", "待办：整理发票": a kind word and a colon.
    if kind_and_colon(r, start) {
        let kind = r.sense(start, Category::Item).and_then(|s| s.kind);
        r.set(start, Role::Kind);
        r.set(start + 1, Role::Noise);
        return Some(create_frame(r, start + 2..range.end, Shape { kind, verbs_in_title: false }));
    }
    if !r.is_verb(start, Action::Create) {
        return None;
    }
    let before = r.clone();
    let mut i = start;
    // "add a new todo", "创建新的日程": several create words in a row.
    while i < range.end && (r.is_verb(i, Action::Create) || r.is(i, Category::Det)) {
        r.set(i, if r.is(i, Category::Det) { Role::Noise } else { Role::Action });
        i += 1;
    }
    if first_action(r, i..range.end).is_some_and(|(at, action)| action != Some(Action::Create) && !r.is(at, Category::Item) && !r.is(at, Category::Errand)) {
        return None;
    }
    let frame = create_frame(r, i..range.end, Shape::default());
    // "book the vet", "reserve a table at Nopa": with no time it is the errand to do, verb and all
    // (with a time, "book a dentist appointment friday 3pm", it is the thing booked).
    let errand = r.is(start, Category::Errand) && !r.is_verb(start + 1, Action::Create);
    let names_a_thing = |title: &str| !crate::lexicon::lexicon().find(&title.to_lowercase()).is_some_and(|e| e.is(Category::Reference));
    if errand && frame.item.as_ref().is_some_and(|item| item.kind == Kind::Todo.as_str() && names_a_thing(&item.title)) {
        *r = before;
        return Some(create_frame(r, start..range.end, Shape { kind: Some(Kind::Todo), verbs_in_title: true }));
    }
    Some(frame)
}

pub const HAVING: Rule = Rule {
    name: "create.having",
    reads: "saying one has something ('I have a', 'there's a', 有个): the thing and its time",
    examples: &["I have a meeting at 9am tomorrow", "我下周三上午有个面试", "we have a board meeting on wednesday at 3pm", "I've got a dentist appointment friday at 2"],
    read: having,
};

fn having(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    if first_other_action(r, range.clone()).is_some() {
        return None;
    }
    let have = r.find(range.clone(), |r, i| r.is(i, Category::Have))?;
    // Only the subject and times before it ("我明天上午有个会").
    for i in range.start..have {
        let before_ok = r.is(i, Category::Pronoun) || r.is_noise(i) || matches!(r.tag(i), Tag::Time(_));
        if !before_ok {
            return None;
        }
        if !matches!(r.tag(i), Tag::Time(_)) {
            r.set(i, Role::Noise);
        }
    }
    r.set(have, Role::Noise);
    let mut after = have + 1;
    while after < range.end && r.is_glue(after, Glue::To) {
        r.set(after, Role::Noise);
        after += 1;
    }
    let mut frame = create_frame(r, range, Shape::default());
    // "有个会": the meeting one has is one to hold.
    if let Some(item) = &mut frame.item
        && item.title == "会"
    {
        item.title = "开会".into();
    }
    Some(frame)
}

pub const TIMED: Rule = Rule {
    name: "create.timed",
    reads: "an item with a time and no action word: the words are the title",
    examples: &["明天下午3点到4点开会", "dentist appointment friday 10am", "每周一早上9点开周会", "明天交报告 p1", "2 hour workshop tomorrow at 2pm"],
    read: timed,
};

fn timed(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    if first_other_action(r, range.clone()).is_some() {
        return None;
    }
    first_time(r, range.clone())?;
    let start = skip_subject(r, range.start, range.end);
    let frame = create_frame(r, start..range.end, Shape::default());
    // "明天下午3点加个东西": a verb of putting down with nothing to put down asks what.
    let Some(item) = frame.item.as_ref() else {
        return (range.start..range.end).any(|i| r.is_verb(i, Action::Create)).then_some(frame);
    };
    // "asdfgh tomorrow": letters that are no word make no item.
    // An acronym in capitals ("PPT", "HR") is a word.
    let acronym = |i: usize| r.text(i).chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    let mashed: Vec<usize> = (start..range.end).filter(|&i| r.roles[i] == Some(Role::Title) && matches!(r.tag(i), Tag::Latin) && !acronym(i) && looks_like_mash(&r.norm(i))).collect();
    for i in mashed {
        r.doubt(i, "letters that are no word");
    }
    (item.when.is_some() || item.segment.is_some_and(|s| s != "all_day")).then_some(frame)
}

pub const GATHERING: Rule = Rule {
    name: "create.gathering",
    reads: "a short gathering with no time (开会, team dinner): an event today",
    examples: &["开会", "team dinner", "聚餐"],
    read: gathering,
};

fn gathering(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    if first_other_action(r, range.clone()).is_some() || !short(r, range.clone()) {
        return None;
    }
    r.find(range.clone(), |r, i| r.is_with(i, Category::Item, crate::lexicon::Flags::GATHERING))?;
    let start = skip_subject(r, range.start, range.end);
    let frame = create_frame(r, start..range.end, Shape { kind: Some(Kind::Event), verbs_in_title: false });
    frame.item.is_some().then_some(frame)
}

pub const ERRAND: Rule = Rule {
    name: "create.errand",
    reads: "a short errand with no time or command (买菜, buy milk): a to-do for today",
    examples: &["买菜", "buy milk", "renew passport", "交房租", "pick up the dry cleaning"],
    read: errand,
};

fn errand(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    if first_other_action(r, range.clone()).is_some() || !short(r, range.clone()) {
        return None;
    }
    let start = skip_subject(r, range.start, range.end);
    if start >= range.end || !(r.is(start, Category::Errand) || starts_with_errand(r, start)) {
        return None;
    }
    if (start..range.end).any(|i| r.is(i, Category::Instead)) {
        return None;
    }
    // "i returned the library books", "我买菜了": said in the past, it is done, not to do.
    if r.is_with(start, Category::Errand, crate::lexicon::Flags::PAST) {
        r.doubt(start, "said in the past");
    }
    if let Some(last) = (start..range.end).rev().find(|&i| !r.is_noise(i)).filter(|&l| l > start && r.is_glue(l, Glue::Le)) {
        r.doubt(last, "said in the past");
    }
    let frame = create_frame(r, start..range.end, Shape { kind: Some(Kind::Todo), verbs_in_title: false });
    frame.item.is_some().then_some(frame)
}

/// Chinese characters that start with an errand verb and say more ("买菜", an item word too, or a
/// run the lexicon does not have, "寄快递给妈妈").
fn starts_with_errand(r: &Reader, i: usize) -> bool {
    (matches!(r.tag(i), Tag::Han) || r.is(i, Category::Item) && !r.text(i).is_ascii()) && {
        let text = r.text(i);
        crate::lexicon::lexicon().entries.iter().any(|e| e.is(Category::Errand) && !e.form.is_ascii() && text.starts_with(e.form) && text.chars().count() > e.form.chars().count())
    }
}

/// A short phrase: at most 12 Chinese characters or 6 English words.
fn short(r: &Reader, range: std::ops::Range<usize>) -> bool {
    let text = r.text_between(range.start, range.end.saturating_sub(1).max(range.start), |_, _| false);
    let han = text.chars().filter(|&c| quickact_time::is_han(c)).count();
    let words = text.split_whitespace().count();
    (1..=12).contains(&han) && words <= 3 || han == 0 && (1..=6).contains(&words)
}

fn item_is_gathering(r: &Reader) -> bool {
    crate::title::head_of_title(r).is_some_and(|i| r.is_with(i, Category::Item, crate::lexicon::Flags::GATHERING))
}

/// A create frame of `range`; without a title, a request that does not say what to add.
pub(crate) fn create_frame(r: &mut Reader, range: std::ops::Range<usize>, shape: Shape) -> Frame {
    asks_the_assistant(r, range.clone());
    let item = new_item(r, range, shape);
    Frame { act: Act::Create, text: String::new(), span: (0, 0), rule: "", target: None, item, change: None, listing: None, parts: Vec::new() }
}

pub const DEADLINE: Rule = Rule {
    name: "create.deadline",
    reads: "a complete verb with a deadline ('finish X by friday', 周五前完成报告): a to-do due then",
    examples: &["finish the quarterly report by friday", "周五前完成报告", "complete the tax form before monday", "把报告周五前完成"],
    read: deadline,
};

fn deadline(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    let v = (range.start..range.end).find(|&i| r.is_verb(i, Action::Complete))?;
    if r.verb(v).is_some_and(|s| s.has(crate::lexicon::Flags::PAST)) || first_action(r, range.start..v).is_some() {
        return None;
    }
    let due = (range.start..range.end).any(|t| {
        matches!(r.tag(t), Tag::Time(_))
            && (t > 0 && (r.is_glue(t - 1, Glue::DeadlineBefore) || r.is_glue(t - 1, Glue::Until))
                || t + 1 < r.len() && r.sense(t + 1, Category::Prep).is_some_and(|s| s.sub == Some("before")))
    });
    if !due {
        return None;
    }
    Some(create_frame(r, range, Shape { kind: Some(Kind::Todo), verbs_in_title: true }))
}

/// A kind word followed by a colon ("todo:", 待办：).
fn kind_and_colon(r: &Reader, i: usize) -> bool {
    i + 1 < r.len()
        && r.sense(i, Category::Item).is_some_and(|s| s.has(crate::lexicon::Flags::FILTER) && s.kind.is_some())
        && matches!(r.tag(i + 1), Tag::Punct(':' | '：'))
}

/// "帮我把这周的会议整理一下", "help me write the report": asked to do the work itself, not to put
/// it down (a create verb after 帮我, "帮我记一下", is a request to the planner and is read first).
fn asks_the_assistant(r: &mut Reader, range: std::ops::Range<usize>) {
    let helped = (0..range.start.min(r.len())).any(|i| r.is_glue(i, Glue::HelpMe));
    let Some(first) = (range.start..range.end).find(|&i| r.roles[i].is_none() && !r.is_noise(i)) else { return };
    if helped && (r.is(first, Category::Ba) || r.is(first, Category::Errand) || starts_with_errand(r, first)) {
        r.doubt(first, "asks the assistant to do it, not to put it down");
    }
}

pub const ANCHORED: Rule = Rule {
    name: "create.anchored",
    reads: "an item whose time hangs on another item's: a length, 'before'/'after' (前/后) and the other item",
    examples: &["call mom half an hour after the standup", "remind me 10 minutes before the dentist", "面试前两个小时提醒我准备", "standup后半小时给妈妈打电话"],
    read: anchored,
};

fn anchored(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    // "周会一小时后": the resolver read the length and 后 as one offset from now.
    if let Some((at, offset)) = (range.start..range.end).find_map(|i| offset_after_item(r, i).map(|o| (i, o))) {
        let back = first_of_item(r, range.start, at)?;
        return anchored_at(r, range, at, true, at - back..at, Some(offset));
    }
    let (at, after) = (range.start..range.end).find_map(|i| relation(r, i).map(|after| (i, after)))?;
    let english = r.text(at).is_ascii();
    // "remind me 3 hours before to leave": what follows is the reminder's, no other item.
    if english && r.is_glue(at + 1, Glue::To) {
        return None;
    }
    // English: "<length> before|after <item>"; Chinese: "<item> 前|后 <length>".
    let (item_range, length_range) = if english {
        let item_end = (at + 1..range.end).find(|&i| r.is_punct(i) || r.is(i, Category::Verb) && !r.is(i, Category::Item) || r.is(i, Category::Connector)).unwrap_or(range.end);
        let length_start = (range.start..at).rev().take_while(|&i| is_length_word(r, i)).last().unwrap_or(at);
        (at + 1..item_end, length_start..at)
    } else {
        let item_start = (range.start..at).rev().take_while(|&i| !r.is_punct(i) && !r.is(i, Category::Verb) && r.roles[i].is_none()).last()?;
        let length_end = (at + 1..range.end).take_while(|&i| is_length_word(r, i)).last().map_or(at + 1, |i| i + 1);
        (item_start..at, at + 1..length_end)
    };
    if item_range.is_empty() || !(item_range.clone()).any(|i| r.is(i, Category::Item) || matches!(r.tag(i), Tag::Latin | Tag::Han)) {
        return None;
    }
    let (offset, clock) = if length_range.is_empty() {
        (None, None)
    } else {
        let text = r.sentence.slice(r.token(length_range.start).start, r.token(length_range.end - 1).end);
        let (offset, clock) = days_and_clock(&text);
        quickact_time::resolve(&offset, r.ctx).filter(|res| res.duration_minutes.is_some() && res.start_time.is_none())?;
        (Some(offset), clock)
    };
    r.set_range(length_range, Role::Length);
    let mut frame = anchored_at(r, range, at, after, item_range, offset)?;
    // "体检前一天晚上8点": that many days before, at that time of day.
    if let (Some(item), Some(clock)) = (frame.item.as_mut(), clock) {
        item.when = Some(clock);
    }
    Some(frame)
}

/// "一天晚上8点" -> ("一天", "晚上8点"): days before or after another item, then a time of day on
/// that day; any other text is a length alone.
fn days_and_clock(text: &str) -> (String, Option<String>) {
    match text.split_once('天') {
        Some((days, clock)) if !clock.trim().is_empty() => (format!("{days}天"), Some(clock.trim().to_owned())),
        _ => (text.to_owned(), None),
    }
}

/// The anchored create once the relation at `at`, the other item's tokens and the length are
/// known.
fn anchored_at(r: &mut Reader, range: std::ops::Range<usize>, at: usize, after: bool, item_range: std::ops::Range<usize>, offset: Option<String>) -> Option<Frame> {
    r.set(at, Role::Anchor);
    // "开完周会…": the end of the other item, said with its verb.
    for i in item_range.clone() {
        if r.is(i, Category::Result) {
            r.set(i, Role::Noise);
        }
    }
    let target = crate::target::selector(r, item_range.clone());
    for i in item_range {
        if r.roles[i].is_some_and(|role| role != Role::Noise) {
            r.set(i, Role::Anchor);
        }
    }
    // The rest is the new item: a reminder when the sentence asks to be reminded.
    let remind = (range.start..range.end).find(|&i| r.roles[i].is_none() && r.is_verb(i, Action::Remind));
    if let Some(v) = remind {
        r.set(v, Role::Action);
        let mut after_verb = v + 1;
        while after_verb < range.end && r.roles[after_verb].is_none() && (r.is_glue(after_verb, Glue::RemindGlue) || r.is(after_verb, Category::Noise)) {
            r.set(after_verb, Role::Noise);
            after_verb += 1;
        }
    }
    let kind = remind.map(|_| Kind::Reminder);
    let mut frame = create_frame(r, range, Shape { kind, verbs_in_title: remind.is_some() });
    // "remind me 10 minutes before the dentist": the reminder is of the other item.
    if remind.is_some() && frame.item.is_none() && !target.words.is_empty() {
        frame.item = Some(crate::frame::NewItem { kind: "reminder", title: target.query(), ..Default::default() });
    }
    if let Some(item) = frame.item.as_mut() {
        item.anchor = Some(crate::frame::Anchor { target, after, offset });
        if item.kind == "todo" && item.when.is_none() {
            // A time taken from another item makes an event, unless it is a reminder.
            item.kind = "event";
            item.segment = None;
        }
        item.segment = item.segment.filter(|s| *s != "all_day");
    }
    Some(frame)
}

/// "before" / "after" (前, 后, 之前, 以后) at token `i`: whether it is "after".
fn relation(r: &Reader, i: usize) -> Option<bool> {
    let sub = r.sense(i, Category::Prep).and_then(|s| s.sub);
    match (r.norm(i).as_str(), sub) {
        ("after", _) | (_, Some("after")) => Some(true),
        ("before", _) | (_, Some("before")) => Some(false),
        _ => None,
    }
}

/// A word of a length said apart from the resolver ("10", "minutes", "half", "an", "hour").
pub(crate) fn is_length_word(r: &Reader, i: usize) -> bool {
    matches!(r.tag(i), Tag::Number(_) | Tag::Time(_)) || r.is_glue(i, Glue::LengthWord)
}

/// A time piece right after the other item that is a length and 后 ("周会一小时后"): the length.
fn offset_after_item(r: &Reader, i: usize) -> Option<String> {
    if !matches!(r.tag(i), Tag::Time(_)) || i == 0 || !(r.is(i - 1, Category::Item) || matches!(r.tag(i - 1), Tag::Han | Tag::Latin)) {
        return None;
    }
    let text = r.text(i);
    let length = Glue::AfterPost.words().iter().find_map(|end| text.strip_suffix(end))?;
    quickact_time::resolve(length, r.ctx).filter(|res| res.duration_minutes.is_some() && res.start_time.is_none()).map(|_| length.to_owned())
}

/// Where the other item's words start, going back from `at` (its words, and 开完 before them).
fn first_of_item(r: &Reader, start: usize, at: usize) -> Option<usize> {
    let first = (start..at).rev().take_while(|&i| !r.is_punct(i) && r.roles[i].is_none() && (r.is(i, Category::Item) || r.is(i, Category::Result) || matches!(r.tag(i), Tag::Han | Tag::Latin))).last()?;
    Some(at - first)
}

/// Letters typed at random: no vowel at all, or five consonants in a row ("asdfgh", "qwrtzp").
fn looks_like_mash(word: &str) -> bool {
    let vowel = |c: char| "aeiouy".contains(c);
    let letters: Vec<char> = word.chars().filter(char::is_ascii_alphabetic).collect();
    let mut run = 0;
    let mut longest = 0;
    for &c in &letters {
        run = if vowel(c) { 0 } else { run + 1 };
        longest = longest.max(run);
    }
    letters.len() >= 3 && (!letters.iter().any(|&c| vowel(c)) || longest >= 5)
}
