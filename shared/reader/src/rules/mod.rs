//! The rules: each names one way people ask for something, with sentences it reads. A clause is
//! read by the first rule of [`RULES`] that reads it whole; the order puts the rule whose words say
//! the most first ("remind me to cancel the gym" is a reminder, not a deletion).
//!
//! A rule gives every token of the clause a role (the verb, the item, the new time, noise, ...) and
//! returns the frame. What it cannot place it leaves without a role, or marks as a doubt: then the
//! reading is uncertain and never acts.

mod ahead;
mod change;
mod create;
mod query;
mod settle;

use crate::{
    frame::{Frame, Role},
    lexicon::{Action, Category, Glue},
    reader::Reader,
    tokens::Tag,
};

/// One way of asking.
pub struct Rule {
    pub name: &'static str,
    /// What it reads, in words.
    pub reads: &'static str,
    /// Sentences it reads (its own test reads each of them with this rule).
    pub examples: &'static [&'static str],
    pub read: fn(&mut Reader) -> Option<Frame>,
}

/// Every rule, in the order they are tried.
pub const RULES: &[Rule] = &[
    create::ANCHORED,
    ahead::REMIND_AHEAD,
    create::REMIND,
    create::NOTE_TO_SELF,
    settle::NOT_GOING,
    query::LIST,
    create::DEADLINE,
    change::MOVE_BA,
    change::SHIFT_BA,
    settle::DELETE_BA,
    settle::COMPLETE_BA,
    change::MOVE_VERB,
    change::SHIFT_VERB,
    change::MOVE_INSTEAD,
    settle::DELETE_VERB,
    settle::DELETE_OFF_CALENDAR,
    settle::COMPLETE_MARK,
    settle::COMPLETE_PAST,
    settle::COMPLETE_VERB,
    settle::COMPLETE_ALREADY,
    settle::COMPLETE_RESULT,
    change::MOVE_SUBJECT,
    change::SHIFT_SUBJECT,
    settle::DELETE_AFTER,
    settle::COMPLETE_AFTER,
    create::CREATE_VERB,
    create::HAVING,
    create::TIMED,
    create::GATHERING,
    create::ERRAND,
];

/// The rule named `name`.
pub fn rule(name: &str) -> Option<&'static Rule> {
    RULES.iter().find(|rule| rule.name == name)
}

/// The first rule that reads the whole clause (every token placed, no doubt), and the reader with
/// the roles it gave; when none does, the first rule that read it in part, whose doubts and
/// unplaced words say why the reading is uncertain.
pub fn read_clause<'s>(reader: &Reader<'s>) -> Option<(Frame, Reader<'s>)> {
    let mut partial = None;
    for rule in RULES {
        let mut attempt = reader.clone();
        if let Some(mut frame) = (rule.read)(&mut attempt) {
            attempt.settle_noise();
            frame.rule = rule.name;
            frame.parts = attempt.parts();
            let words: Vec<usize> = (0..attempt.len()).filter(|&i| !attempt.is_punct(i)).collect();
            if let (Some(&first), Some(&last)) = (words.first(), words.last()) {
                frame.span = (attempt.token(first).start, attempt.token(last).end);
                frame.text = attempt.sentence.slice(frame.span.0, frame.span.1);
            }
            if attempt.doubts.is_empty() && attempt.unread().is_empty() {
                return Some((frame, attempt));
            }
            partial = partial.or(Some((frame, attempt)));
        }
    }
    partial
}

// ---------------------------------------------------------------------------------------------
// What the rules share
// ---------------------------------------------------------------------------------------------

/// The clause without its noise at either end (greetings, fillers, politeness, punctuation), as
/// the range of tokens left; the noise gets its role.
pub fn body(r: &mut Reader) -> std::ops::Range<usize> {
    let mut start = 0;
    let mut polite = false;
    // Noise, and the word that joins the clause to the one before ("then", 再, "and"); "那个，"
    // as a filler ("嗯……那个，明天…").
    let filler_reference = |r: &Reader, i: usize| {
        r.is(i, Category::Reference)
            && !r.text(i).is_ascii()
            && (r.is_punct(i + 1) || r.is(i + 1, Category::Reference) || r.is_noise(i + 1) || r.is(i + 1, Category::Verb) || matches!(r.tag(i + 1), Tag::Time(_)))
    };
    while start < r.len()
        && (r.is_noise(start) || r.is(start, Category::Connector) || start == 0 && r.is(start, Category::And) || filler_reference(r, start))
        && !r.is(start, Category::Verb)
    {
        polite |= r.sense(start, Category::Noise).is_some_and(|s| s.sub == Some("polite"));
        r.set(start, Role::Noise);
        start += 1;
    }
    // "now remind me to …", "现在帮我…": "now" opening a clause only starts it.
    if start + 1 < r.len() && matches!(r.tag(start), Tag::Time(_)) && r.is_glue(start, Glue::Now) {
        r.set(start, Role::Noise);
        start += 1;
    }
    let mut end = r.len();
    // "能帮我把周会推迟半小时吗", "can you move it to 4?": a polite request asked as a question.
    let place = |r: &Reader, i: usize| r.sense(i, Category::Noise).is_some_and(|s| matches!(s.sub, Some("on" | "off")));
    while end > start && (r.is_noise(end - 1) && !place(r, end - 1) || polite && r.is(end - 1, Category::Question)) && !r.is(end - 1, Category::Verb) {
        r.set(end - 1, Role::Noise);
        end -= 1;
    }
    start..end
}

/// The first action word of `range`: a verb of any action, a query word, or a statement (done,
/// not going). Its index and action.
pub(crate) fn first_action(r: &Reader, range: std::ops::Range<usize>) -> Option<(usize, Option<Action>)> {
    range.into_iter().find_map(|i| {
        if let Some(sense) = r.verb(i) {
            return Some((i, sense.action));
        }
        [Category::Query, Category::NotGoing, Category::Done].iter().any(|&c| r.is(i, c)).then_some((i, None))
    })
}

/// The first action word of `range` other than a verb of putting down ("add", 记一下): a create
/// rule may have one ("明天下午两点看牙医，帮我记一下"), never another.
pub(crate) fn first_other_action(r: &Reader, range: std::ops::Range<usize>) -> Option<(usize, Option<Action>)> {
    range.clone().filter_map(|i| first_action(r, i..i + 1)).find(|&(_, action)| !matches!(action, Some(Action::Create)))
}

/// The first token in `range` that is a time.
pub(crate) fn first_time(r: &Reader, range: std::ops::Range<usize>) -> Option<usize> {
    range.into_iter().find(|&i| matches!(r.tag(i), Tag::Time(_)))
}



/// Skips the subject and what only leads up to the verb ("I", "we", 我, "please", "can you") from
/// `i`, giving them the noise role; the index after.
pub(crate) fn skip_subject(r: &mut Reader, mut i: usize, end: usize) -> usize {
    while i < end && (r.is_noise(i) || r.is(i, Category::Pronoun) || r.is(i, Category::Modal)) && !r.is(i, Category::Verb) {
        r.set(i, Role::Noise);
        i += 1;
    }
    i
}
