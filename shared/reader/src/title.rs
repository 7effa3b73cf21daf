//! A new item from the words that describe it: the title is what is left once the time, length,
//! priority and kind words are taken out and the small words at its edges trimmed ("明天下午3点开
//! 2小时的会" -> 开会, 15:00, 120 minutes; "add todo buy milk p1" -> buy milk, to-do, priority 1).

use std::ops::Range;

use crate::{
    frame::{NewItem, Role},
    lexicon::{Action, Category, Flags, Glue, Kind},
    reader::Reader,
    times,
    tokens::Tag,
};

/// What a token of a new item's words is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Piece {
    Title,
    /// A meal or part of day that names the item and, with no other time of day, gives its part
    /// of day ("lunch with Sarah", "下午茶").
    Naming,
    When,
    Length,
    Priority(u8),
    Kind(Kind),
    Noise,
}

/// Options of a create rule.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shape {
    /// The kind the rule decided ("remind me" makes a reminder).
    pub kind: Option<Kind>,
    /// Action words may stand in the title ("remind me to cancel the gym", 记得把续费取消).
    pub verbs_in_title: bool,
}

/// The new item of tokens `range`, giving each its role; `None` when no title is left.
pub fn new_item(r: &mut Reader, range: Range<usize>, shape: Shape) -> Option<NewItem> {
    // Tokens the rule gave a role already (its verb) are not the item's words.
    let base = range.start;
    let given: Vec<bool> = range.clone().map(|i| r.roles[i].is_some()).collect();
    let pieces: Vec<Piece> = range.clone().map(|i| if given[i - base] { Piece::Noise } else { piece(r, i) }).collect();
    let at = |i: usize| pieces[i - base];
    let given = |i: usize| given[i - base];
    let titled: Vec<usize> = range.clone().filter(|&i| matches!(at(i), Piece::Title | Piece::Naming)).collect();
    let first = titled.iter().copied().find(|&i| !is_edge_word(r, i) || at(i) == Piece::Naming);
    let last = titled.iter().copied().rev().find(|&i| !is_tail_word(r, i) || at(i) == Piece::Naming);
    // "加个事", "add something", "新建一个日程": words that say there is something, not what.
    let says_what = titled.iter().any(|&i| !says_nothing(r, i));
    let (Some(first), Some(last), true) = (first, last, says_what) else {
        for i in range.filter(|&i| !given(i)) {
            r.set(i, role_of(at(i)));
        }
        return None;
    };
    let mut item = NewItem::default();
    let mut when = Vec::new();
    let mut naming = Vec::new();
    for i in range.clone().filter(|&i| !given(i)) {
        let p = at(i);
        let inside = (first..=last).contains(&i);
        match p {
            Piece::Title | Piece::Naming if inside => {
                r.set(i, Role::Title);
                if p == Piece::Naming {
                    naming.push(i);
                }
                if !shape.verbs_in_title {
                    doubt_in_title(r, i);
                }
            }
            Piece::Title | Piece::Naming => r.set(i, Role::Noise),
            Piece::When => {
                r.set(i, Role::When);
                when.push(i);
            }
            Piece::Length => {
                r.set(i, Role::Length);
                if let Some(res) = times::piece(r, i) {
                    item.duration_minutes = item.duration_minutes.or(res.duration_minutes);
                }
            }
            Piece::Priority(p) => {
                r.set(i, Role::Priority);
                item.priority = Some(p);
            }
            Piece::Kind(kind) => {
                r.set(i, Role::Kind);
                item.kind = kind.as_str();
            }
            Piece::Noise => r.set(i, Role::Noise),
        }
    }
    prepositions_of_times(r, first..=last);
    // "monday and wednesday at 3 gym", "明天上午9点到11点，下午2点到4点培训": two times of day of
    // two expressions are two items, or one the words do not say: not read.
    let clocks: Vec<usize> = when.iter().copied().filter(|&i| times::piece(r, i).is_some_and(|res| res.start_time.is_some())).collect();
    let distinct = clocks.iter().map(|&i| r.tag(i)).collect::<Vec<_>>();
    if distinct.windows(2).any(|w| w[0] != w[1])
        && let Some(&second) = clocks.get(1)
    {
        r.doubt(second, "a second time of day for one item");
    }
    let cut = |r: &Reader, i: usize| r.roles[i].is_some_and(|role| role != Role::Title) || after_length(r, i);
    item.title = r.text_between(first, last, cut);
    // "把校服洗了", "月底前把社保转移办了": the work said in 把 order is put down as its verb
    // and object (洗校服, 办社保转移).
    // So is the work said after its object and its day ("季度总结 下周一交" -> 交季度总结).
    let verb_last = r.is(last, Category::Errand) && r.text(last).chars().count() == 1;
    let ba_order = first > 0 && r.is(first - 1, Category::Ba) && r.is_glue(last + 1, Glue::Le);
    let after_its_day = last > 0 && r.roles[last - 1] == Some(Role::When) && !r.text(first).is_ascii();
    if last > first && verb_last && (ba_order || after_its_day) {
        item.title = format!("{}{}", r.text(last), r.text_between(first, last - 1, cut).trim());
    }
    finish(r, &mut item, &when, &naming, shape);
    Some(item)
}

/// "dinner at 8 on friday with Dana": the preposition of a time goes with it, not the title.
fn prepositions_of_times(r: &mut Reader, title: std::ops::RangeInclusive<usize>) {
    for i in title {
        if r.roles[i] == Some(Role::Title) && r.is(i, Category::Prep) && r.text(i).is_ascii() && i + 1 < r.len() && matches!(r.roles[i + 1], Some(Role::When | Role::Length)) {
            r.set(i, Role::Noise);
        }
    }
}

/// The kind, time, part of day and record flag, from what the words said.
fn finish(r: &Reader, item: &mut NewItem, when: &[usize], naming: &[usize], shape: Shape) {
    let resolutions: Vec<_> = when.iter().filter_map(|&i| times::piece(r, i)).collect();
    let timed = resolutions.iter().any(times::is_time_of_day);
    // A start with its length in one expression ("明天下午3点开2小时的会").
    if item.duration_minutes.is_none() {
        item.duration_minutes = resolutions.iter().find_map(|res| res.duration_minutes.filter(|&m| m < 24 * 60 && res.start_time.is_some()));
    }
    let gathering = head_of_title(r).is_some_and(|i| r.is_with(i, Category::Item, Flags::GATHERING));
    let mut when_text = times::join(r, when);
    let meal = naming.iter().find_map(|&i| part_of_day(r, i));
    // "dinner w/ kate at 8": a bare hour said with a meal is in the meal's half of the day.
    let combined = when_text.as_deref().and_then(|text| quickact_time::resolve(text, r.ctx));
    if let (Some(part), Some(res)) = (meal, combined)
        && let Some(start) = res.start_time.filter(|_| res.confidence == quickact_time::Confidence::Inferred)
        && let Some(pm) = afternoon_hour(part, start)
    {
        when_text = Some(times::exact_time(res.date, pm));
    }
    if !timed && let Some(part) = meal {
        // "lunch tomorrow", "喝下午茶": the meal names the item; with no other time of day it
        // is also the item's part of the day.
        item.segment = Some(part);
    }
    let kind = shape.kind.or(match item.kind {
        "" => None,
        "event" => Some(Kind::Event),
        "todo" => Some(Kind::Todo),
        _ => Some(Kind::Reminder),
    });
    // "submit the application by monday 9am", 周五下午5点前交报告: a time said as a deadline is
    // when a to-do is due, not when an event starts.
    let deadline = when.iter().any(|&i| i > 0 && r.is_glue(i - 1, Glue::DeadlineBefore) || r.is_glue(i + 1, Glue::DeadlineAfter));
    let kind = kind.unwrap_or(if (timed || item.segment.is_some()) && !deadline || gathering { Kind::Event } else { Kind::Todo });
    item.kind = kind.as_str();
    if kind == Kind::Event && !timed && item.segment.is_none() {
        item.segment = Some("all_day");
    }
    if kind != Kind::Event {
        item.segment = None;
    }
    let today = r.ctx.today();
    item.record = resolutions.iter().any(|res| res.rrule.is_none() && res.end_date.unwrap_or(res.date) < today);
    // "这周内把简历改好", "finish the deck this week": a to-do within a period that has begun is due
    // at its end, not on its first day.
    if let [res] = resolutions.as_slice()
        && kind == Kind::Todo
        && res.date <= today
        && res.start_time.is_none()
        && let Some(end) = res.end_date.filter(|&end| end > today)
    {
        when_text = Some(end.to_string());
    }
    item.when = when_text;
}

fn role_of(p: Piece) -> Role {
    match p {
        Piece::When => Role::When,
        Piece::Length => Role::Length,
        Piece::Priority(_) => Role::Priority,
        Piece::Kind(_) => Role::Kind,
        Piece::Title | Piece::Naming | Piece::Noise => Role::Noise,
    }
}

fn piece(r: &Reader, i: usize) -> Piece {
    // "renew passport, due end of the month": the word of a deadline goes with its time.
    if r.is_glue(i, Glue::DeadlineBefore) && matches!(r.tag(i + 1), Tag::Time(_)) && !r.is(i, Category::Item) {
        return Piece::Noise;
    }
    // "每两周交一次水电费": how often is the series', not the title's.
    if r.is(i, Category::One) && r.is_glue(i, Glue::Once) && (0..r.len()).any(|j| times::piece(r, j).is_some_and(|res| res.rrule.is_some())) {
        return Piece::Noise;
    }
    // "实验报告周五截止", "standup every weekday starting today": words that only place the time.
    let next_to_time = i > 0 && matches!(r.tag(i - 1), Tag::Time(_)) || matches!(r.tag(i + 1), Tag::Time(_));
    if next_to_time && (r.is_glue(i, Glue::DeadlineAfter) && i > 0 && matches!(r.tag(i - 1), Tag::Time(_)) || r.is_glue(i, Glue::Start) && r.text(i).is_ascii()) {
        return Piece::Noise;
    }
    match r.tag(i) {
        Tag::Time(_) if times::is_meal(r, i) || times::names_the_item(r, i) => Piece::Naming,
        Tag::Time(_) if times::is_length(r, i) => {
            // "请假3天", "出差两周": an item lasts no days; the words stay in the title.
            if times::piece(r, i).and_then(|res| res.duration_minutes).is_some_and(|m| m >= 24 * 60) { Piece::Title } else { Piece::Length }
        }
        Tag::Time(_) => Piece::When,
        Tag::Punct(_) | Tag::Symbol => Piece::Noise,
        Tag::Word { .. } => word_piece(r, i),
        // "yesterday's run": the s of a possessive.
        Tag::Latin if i > 0 && r.norm(i) == "s" && matches!(r.tag(i - 1), Tag::Punct('\'')) => Piece::Noise,
        _ => Piece::Title,
    }
}

fn word_piece(r: &Reader, i: usize) -> Piece {
    if let Some(p) = r.sense(i, Category::Priority).and_then(|s| s.value) {
        return Piece::Priority(p as u8);
    }
    if let Some(sense) = r.sense(i, Category::Item).filter(|s| s.has(Flags::FILTER))
        && let Some(kind) = sense.kind
        && is_at_edge(r, i)
    {
        return Piece::Kind(kind);
    }
    if r.sense(i, Category::Item).is_some_and(|s| s.has(Flags::MEAL)) {
        return Piece::Naming;
    }
    // "…，开一个半小时", "takes about an hour": a word about the length goes with it.
    let about_length = r.sense(i, Category::Noise).is_some_and(|s| s.sub == Some("length"));
    // (Not in 开2小时的会, where 开 and 会 are one word around the length.)
    let holds_the_title = i + 2 < r.len() && r.is(i + 2, Category::De);
    if about_length && i + 1 < r.len() && matches!(r.tag(i + 1), Tag::Time(_)) && times::is_length(r, i + 1) && !holds_the_title {
        return Piece::Noise;
    }
    if r.is(i, Category::Noise) && !about_length && !r.is(i, Category::Item) {
        return Piece::Noise;
    }

    Piece::Title
}

/// A kind word at the start or end of the words ("add **todo** buy milk", "吃药**提醒**").
fn is_at_edge(r: &Reader, i: usize) -> bool {
    let content = |j: usize| r.roles[j].is_none() && !(r.is_noise(j) || is_edge_word(r, j) || matches!(r.tag(j), Tag::Time(_)));
    !(0..i).any(content) || !(i + 1..r.len()).any(content)
}

/// Small words a title does not start or end with: prepositions, articles, 的, 了, the subject,
/// "need to", connectors, noise.
pub fn is_edge_word(r: &Reader, i: usize) -> bool {
    use Category::*;
    if r.is_punct(i) {
        return true;
    }
    // "book a debrief", "schedule an hour": a verb of putting down before "a"/"an" is that verb, even
    // when it also starts errands ("book flights").
    if r.verb(i).is_some_and(|s| s.action == Some(Action::Create)) && r.is_glue(i + 1, Glue::Indefinite) {
        return true;
    }
    if r.entry(i).is_some_and(|e| e.senses.iter().any(|s| matches!(s.category, Item | Errand | Word) || s.sub == Some("length"))) {
        return false;
    }
    // 和老王吃饭: "with" in Chinese starts a title.
    if r.is(i, And) && !r.text(i).is_ascii() {
        return false;
    }
    // "schedule gym", "put a call with mom …": the verb of putting it down is no part of it.
    if r.verb(i).is_some_and(|s| s.action == Some(Action::Create)) {
        return true;
    }
    [Prep, Det, De, Aspect, And, Connector, Pronoun, Modal, Ba, Noise, One, Aux, Have].iter().any(|&c| r.is(i, c))
}

/// Small words a title does not end with: fewer than it does not start with, since a Chinese word
/// may end in a character that alone is a small word (会议纪要, 签合同).
fn is_tail_word(r: &Reader, i: usize) -> bool {
    use Category::*;
    // "remind me to call Kate instead": the plan changed, Kate is who to call.
    if r.is_glue(i, Glue::Instead) {
        return true;
    }
    // "the library books": an English verb of putting down ends no title ("books" is the books);
    // "…，帮我记一下" does.
    if !is_edge_word(r, i) || r.is(i, Verb) && r.text(i).is_ascii() {
        return false;
    }
    let chinese_single = !r.text(i).is_ascii() && r.text(i).chars().count() == 1;
    !chinese_single || [De, Aspect, Noise, Prep].iter().any(|&c| r.is(i, c))
}

/// The 的 after a length ("开2小时**的**会") goes with it.
fn after_length(r: &Reader, i: usize) -> bool {
    i > 0 && r.roles[i - 1] == Some(Role::Length) && r.is(i, Category::De)
}

/// Action words that cannot stand in a title (other than create's), and words that ask.
fn doubt_in_title(r: &mut Reader, i: usize) {
    if matches!(r.tag(i), Tag::Latin) && crate::lexicon::lexicon().near_action(&r.norm(i)) {
        r.doubt(i, "a word like an action verb, misspelt");
    }
    // "my sister's wedding was lovely": what was is no item to put down.
    if r.is_glue(i, Glue::PastAux) {
        r.doubt(i, "said in the past");
    }
    let Some(entry) = r.entry(i) else { return };
    // "took all weekend": what was done, said in the past, is no item to put down.
    if r.roles[..i].iter().all(|role| role != &Some(Role::Title)) && r.is_with(i, Category::Errand, Flags::PAST) {
        r.doubt(i, "said in the past");
    }
    let named = entry.senses.iter().any(|s| matches!(s.category, Category::Item | Category::Errand | Category::Word));
    if named {
        return;
    }
    let acts = entry.senses.iter().any(|s| {
        s.category == Category::Verb && !matches!(s.action, Some(Action::Create | Action::Remind))
            || matches!(s.category, Category::Query | Category::NotGoing | Category::Done | Category::SmallTalk | Category::Question | Category::Instead | Category::Vague)
    });
    if acts {
        r.doubt(i, "an action or question word in the new item's title");
    }
}

/// The part of day of a meal word or a naming part-of-day word.
fn part_of_day(r: &Reader, i: usize) -> Option<&'static str> {
    if let Some(part) = r.entry(i).and_then(|e| e.senses.iter().find_map(|s| s.part)) {
        return Some(part);
    }
    let norm = r.norm(i);
    if let Some(part) = crate::lexicon::lexicon().find(norm.trim()).and_then(|e| e.senses.iter().find_map(|s| s.part)) {
        return Some(part);
    }
    times::piece(r, i).and_then(|res| res.segment).map(|s| s.as_str())
}

/// A word that says there is something without saying what ("something", 事, "task", 日程).
fn says_nothing(r: &Reader, i: usize) -> bool {
    if is_edge_word(r, i) || r.is(i, Category::Vague) {
        return true;
    }
    r.sense(i, Category::Item).is_some_and(|s| s.has(Flags::FILTER) || s.has(Flags::GENERIC) && s.concept.is_none())
}

/// The word a title is about: its last word, or in English the last before a preposition ("dinner
/// with Sam", "team meeting"; "meeting notes" is about notes, 会议整理 about 整理).
pub fn head_of_title(r: &Reader) -> Option<usize> {
    let titled: Vec<usize> = (0..r.len()).filter(|&i| r.roles[i] == Some(Role::Title) && !r.is_punct(i)).collect();
    let before_prep = titled.iter().position(|&i| r.is(i, Category::Prep) && r.text(i).is_ascii() && i != titled[0]);
    let head = match before_prep {
        Some(at) if at > 0 => titled[at - 1],
        _ => *titled.last()?,
    };
    Some(head)
}

/// The hour twelve hours on, when a bare morning hour said with a meal of the afternoon or evening
/// means that ("dinner at 8" is 20:00, "lunch at 1" 13:00).
fn afternoon_hour(part: &str, start: chrono::NaiveTime) -> Option<chrono::NaiveTime> {
    use chrono::Timelike;
    let hour = start.hour();
    let later = match part {
        "evening" => (1..=11).contains(&hour),
        "noon" | "afternoon" => (1..=5).contains(&hour),
        _ => false,
    };
    later.then(|| start + chrono::Duration::hours(12))
}

