//! The listing rule: a question about what the planner holds ("what's on tomorrow", 明天有什么安排,
//! "how many meetings next week", "when is my dentist appointment", "what's still open", 前3个最
//! 紧急的任务, "am I free at 3 tomorrow").

use quickact_time::leading_number;

use super::{Rule, body};
use crate::{
    frame::{Act, Frame, Listing, Role},
    lexicon::{Action, Category, Flags, Glue, Kind},
    reader::Reader,
    target::search_word,
    times,
    tokens::Tag,
};

pub const LIST: Rule = Rule {
    name: "list.query",
    reads: "asking what there is: a query word or a list verb, with a day, a kind, a topic, a count or 'still open' / 'done'",
    examples: &[
        "明天有什么安排",
        "what's on tomorrow",
        "前3个最紧急的任务",
        "how many meetings do I have next week",
        "when is my dentist appointment",
        "what's still open this week",
        "有哪些和发票相关的待办",
        "show my todos",
        "周五有会吗",
        "am I free tomorrow afternoon",
    ],
    read: list,
};

fn list(r: &mut Reader) -> Option<Frame> {
    let range = body(r);
    // "which tasks mention X", "any reminders tonight?": a question word and a kind of item.
    let asks_for_kind = (r.is(range.start, Category::Question) || r.is_glue(range.start, Glue::Any)) && (range.start..range.end).any(|i| r.is_with(i, Category::Item, Flags::FILTER));
    let q = (range.start..range.end).find(|&i| r.is(i, Category::Query) || r.is_verb(i, Action::List) || asks_for_kind && i == range.start)?;
    // Another action before the question ("cancel what's on tomorrow") is not a listing.
    if super::first_other_action(r, range.start..q).is_some() {
        return None;
    }
    let mut listing = Listing::default();
    let mut when = Vec::new();
    let mut topic: Vec<String> = Vec::new();
    let mut open = false;
    // "why is my week so packed": a complaint, not a question about what there is.
    if let Some(why) = (range.start..range.end).find(|&i| r.is_glue(i, Glue::Complaint)) {
        r.doubt(why, "a complaint, not a request");
    }
    // Words are what the items are about only after a word that says so ("about", "with", 跟,
    // 关于) or before one (跟X有关); other unknown words are not read.
    let about: Vec<usize> = (range.start..range.end).filter(|&i| is_about(r, i)).collect();
    // "when's my flight to tokyo": a question of when names the item with all its words.
    let names_an_item = (range.start..range.end).any(|i| r.is_with(i, Category::Query, Flags::WHEN));
    for i in range.clone() {
        if r.roles[i].is_some() {
            continue;
        }
        let piece = match classify(r, i) {
            Piece::Topic if !names_an_item && !marked_topic(r, i, &about) && !r.is(i, Category::Item) => Piece::Doubt("a word that is no part of a listing"),
            Piece::Noise if names_an_item && r.is(i, Category::Prep) && r.text(i).is_ascii() && about.is_empty() => Piece::Topic,
            piece => piece,
        };
        match piece {
            Piece::Asks(flags, kind) => {
                r.set(i, Role::Action);
                open |= flags.contains(Flags::OPEN);
                asks(&mut listing, flags, kind);
            }
            Piece::When => {
                r.set(i, Role::Filter);
                when.push(i);
            }
            Piece::Kind(kind) => {
                r.set(i, Role::Kind);
                listing.kind = Some(kind);
            }
            Piece::Topic => {
                r.set(i, Role::Filter);
                topic.push(search_word(r, i));
            }
            Piece::KindWord(kind) => {
                r.set(i, Role::Filter);
                topic.push(search_word(r, i));
                listing.kind = listing.kind.or(kind);
            }
            Piece::Limit(n) => {
                r.set(i, Role::Filter);
                listing.limit = Some(n);
            }
            Piece::Priority => {
                r.set(i, Role::Filter);
                listing.by_priority = true;
            }
            Piece::Noise => r.set(i, Role::Noise),
            Piece::Doubt(reason) => r.doubt(i, reason),
        }
    }
    listing.when = times::join(r, &when);
    listing.query = (!topic.is_empty()).then(|| join_topic(&topic));
    // What is still open or already done is what is to do: the to-dos.
    if (open || listing.completed) && listing.kind.is_none() {
        listing.kind = Some(Kind::Todo);
    }
    Some(Frame { act: Act::List, text: String::new(), span: (0, 0), rule: "", target: None, item: None, change: None, listing: Some(listing), parts: Vec::new() })
}

/// What a query word asks for: a count, free time, what is done, most pressing, what comes next.
fn asks(listing: &mut Listing, flags: Flags, kind: Option<Kind>) {
    listing.count |= flags.contains(Flags::COUNT);
    listing.free |= flags.contains(Flags::FREE);
    listing.completed |= flags.contains(Flags::COMPLETED);
    listing.by_priority |= flags.contains(Flags::URGENT);
    if flags.contains(Flags::NEXT) {
        listing.limit = Some(1);
    }
    listing.from_now |= flags.contains(Flags::NEXT) || flags.contains(Flags::REMAINING);
    listing.kind = listing.kind.or(kind);
}

enum Piece {
    Asks(Flags, Option<Kind>),
    When,
    Kind(Kind),
    Topic,
    /// A word that names the kind ("会", "meetings"): a topic, and the kind.
    KindWord(Option<Kind>),
    Limit(u32),
    Priority,
    Noise,
    Doubt(&'static str),
}

fn classify(r: &Reader, i: usize) -> Piece {
    use Category::*;
    match r.tag(i) {
        Tag::Time(_) if times::is_meal(r, i) => return Piece::Topic,
        Tag::Time(_) => return Piece::When,
        Tag::Number(n) if counts(r, i) || n <= 20 => return Piece::Limit(n),
        Tag::Latin if r.norm(i).strip_prefix("top").is_some_and(|n| n.parse::<u32>().is_ok()) => {
            return Piece::Limit(r.norm(i)[3..].parse().unwrap_or(5));
        }
        Tag::Han if counts(r, i) => return leading_number(&r.text(i)).map_or(Piece::Topic, |(n, _)| Piece::Limit(n)),
        Tag::Latin | Tag::Han | Tag::Number(_) => return Piece::Topic,
        Tag::Punct(_) | Tag::Symbol => return Piece::Noise,
        Tag::Word { .. } => {}
    }
    if let Some(sense) = r.sense(i, Query) {
        return Piece::Asks(sense.flags, sense.kind);
    }
    if r.is_verb(i, Action::List) {
        return Piece::Asks(Flags::default(), None);
    }
    if let Some(sense) = r.sense(i, Item) {
        if let (true, Some(kind)) = (sense.has(Flags::FILTER), sense.kind) {
            return Piece::Kind(kind);
        }
        // "明天有几个会", "any meetings friday": the events that are meetings (a search word
        // that finds 会议, 开会, "meeting" alike; the planner widens it to the events when no title
        // says so).
        if sense.has(Flags::KIND_WORD) {
            return Piece::KindWord(sense.kind);
        }
        if sense.has(Flags::GENERIC) && sense.concept.is_none() {
            return Piece::Noise;
        }
        return Piece::Topic;
    }
    if let Some(n) = r.sense(i, Position).and_then(|s| s.value) {
        return if n == 1 { Piece::Limit(1) } else { Piece::Doubt("a position in a listing") };
    }
    if r.is(i, Priority) {
        return Piece::Priority;
    }
    if [Question, Det, De, Pronoun, Modal, Aspect, Noise, One, Have, Reply, Aux, Quantity, Prep, And, Reference].iter().any(|&c| r.is(i, c)) {
        return Piece::Noise;
    }
    if [Errand, Word].iter().any(|&c| r.is(i, c)) {
        return Piece::Topic;
    }
    Piece::Doubt("a word that is no part of a listing")
}

/// A number that says how many ("top 3", "前3个", "first 5", "3个").
fn counts(r: &Reader, i: usize) -> bool {
    let before = i.checked_sub(1).map(|b| r.norm(b));
    let after = (i + 1 < r.len()).then(|| r.norm(i + 1));
    before.as_deref().is_some_and(|b| Glue::LimitBefore.has(b))
        || after.as_deref().is_some_and(|a| Glue::Measure.has(a))
        || matches!(r.tag(i), Tag::Han) && before.as_deref() == Some("前")
}

/// Topic words as one query: Chinese characters join, English words keep their spaces.
fn join_topic(words: &[String]) -> String {
    crate::reader::join_words(&words.join(" "))
}

/// A word that says what items are about ("about", "with", "for", "mentioning", 跟, 和, 关于, 有关).
fn is_about(r: &Reader, i: usize) -> bool {
    r.sense(i, Category::Prep).is_some_and(|s| s.sub == Some("about")) || r.is_glue(i, Glue::AboutMarker) || r.is(i, Category::And) && !r.text(i).is_ascii()
}

/// Whether token `i` is inside what an about-word marks: after one (English, 关于X), or between
/// 跟/和 and 有关/相关 (Chinese).
fn marked_topic(r: &Reader, i: usize, about: &[usize]) -> bool {
    about.iter().any(|&a| a < i) || about.iter().any(|&a| a > i && r.sense(a, Category::Prep).is_some_and(|s| s.sub == Some("about")))
}
