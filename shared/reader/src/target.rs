//! The item(s) a phrase points at: words of the title, the day or time it is on, its kind, its
//! place among several ("the second call on monday", 周四第一个会), or all of them ("every
//! reminder for today", 这周的待办都…), or the item of the clause before ("it", 它).

use std::ops::Range;

use quickact_time::is_han;

use crate::{
    frame::{Role, Selector},
    lexicon::{Category, Flags, Kind},
    reader::Reader,
    times,
    tokens::Tag,
};

/// The selector of tokens `range`, giving each its role. Words it cannot place are doubts.
pub fn selector(r: &mut Reader, range: Range<usize>) -> Selector {
    let mut sel = Selector::default();
    let mut when: Vec<usize> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    // Chinese characters of one run of title words join into one word (报告 + 提交 -> 报告提交).
    let mut run = String::new();
    let mut references = Vec::new();
    for i in range.clone() {
        // A token the rule placed already (开完 of "开完周会") is no word of the item.
        if r.roles[i].is_some() {
            flush(&mut run, &mut words);
            continue;
        }
        match place(r, i) {
            Place::Word => {
                r.set(i, Role::Target);
                let text = search_word(r, i);
                if text.chars().next().is_some_and(is_han) {
                    run.push_str(&text);
                } else {
                    flush(&mut run, &mut words);
                    words.push(text);
                }
                continue;
            }
            Place::Time => {
                r.set(i, Role::TargetTime);
                when.push(i);
            }
            Place::Kind(kind) => {
                r.set(i, Role::Kind);
                sel.kind = Some(kind);
            }
            Place::Position(n) => {
                r.set(i, Role::Position);
                sel.position = Some(n);
            }
            Place::All => {
                r.set(i, Role::Position);
                sel.all = true;
            }
            Place::Priority(p) => {
                r.set(i, Role::Priority);
                sel.priority = Some(p);
            }
            Place::Reference => references.push(i),
            Place::Noise => r.set(i, Role::Noise),
            Place::Doubt(reason) => r.doubt(i, reason),
        }
        flush(&mut run, &mut words);
    }
    flush(&mut run, &mut words);
    sel.words = words;
    // "cancel all my meetings on friday", "move the meeting to 4": a meeting is an event, not
    // every item that mentions one ("book meeting room").
    sel.event = (range.clone()).any(|i| r.sense(i, Category::Item).is_some_and(|s| !s.has(Flags::GENERIC) && s.kind == Some(Kind::Event)));
    sel.timed = when.iter().any(|&i| times::piece(r, i).is_some_and(|res| times::is_time_of_day(&res)));
    sel.when = times::join(r, &when);
    // "it", "那个": alone it is the item named before; beside words or a time it only points.
    for i in references {
        r.set(i, Role::Target);
        if sel.words.is_empty() && sel.when.is_none() && sel.kind.is_none() {
            sel.previous = true;
        }
    }
    sel
}

/// Where a token of a target goes.
enum Place {
    Word,
    Time,
    Kind(crate::lexicon::Kind),
    Position(i8),
    All,
    Priority(u8),
    Reference,
    Noise,
    Doubt(&'static str),
}

fn place(r: &Reader, i: usize) -> Place {
    use Category::*;
    match r.tag(i) {
        Tag::Time(_) if times::is_meal(r, i) => return Place::Word,
        // "the weekly sync", 每周例会: a series describes the item, it picks no day.
        Tag::Time(_) if times::piece(r, i).is_some_and(|res| res.rrule.is_some()) => return Place::Noise,
        Tag::Time(_) => return Place::Time,
        Tag::Latin if crate::lexicon::lexicon().near_action(&r.norm(i)) => return Place::Doubt("a word like an action verb, misspelt"),
        Tag::Latin | Tag::Han | Tag::Number(_) => return if possessive_s(r, i) { Place::Noise } else { Place::Word },
        Tag::Punct(_) | Tag::Symbol => return Place::Noise,
        Tag::Word { .. } => {}
    }
    if let Some(sense) = r.sense(i, Item) {
        if sense.has(Flags::FILTER) {
            return sense.kind.map_or(Place::Noise, Place::Kind);
        }
        // "the dentist thing", 那件事: a word for any item names none.
        if sense.has(Flags::GENERIC) && sense.concept.is_none() {
            return Place::Noise;
        }
        return Place::Word;
    }
    if r.is(i, Quantity) {
        return Place::All;
    }
    if let Some(p) = r.sense(i, Priority).and_then(|s| s.value) {
        return Place::Priority(p as u8);
    }
    if let Some(n) = r.sense(i, Position).and_then(|s| s.value) {
        return Place::Position(n);
    }
    if r.is(i, Reference) {
        return Place::Reference;
    }
    if [Errand, Word].iter().any(|&c| r.is(i, c)) {
        return Place::Word;
    }
    if [Det, Prep, De, Aspect, Ba, Noise, One, Pronoun, Priority, And, Reply, Aux, Already].iter().any(|&c| r.is(i, c)) {
        return Place::Noise;
    }
    // "the library books", "the study plan": a verb of putting down is a noun of a name too.
    if r.verb(i).is_some_and(|s| !matches!(s.action, Some(crate::lexicon::Action::Create))) {
        return Place::Doubt("an action word in the item's name");
    }
    if r.is(i, Verb) {
        return Place::Word;
    }
    Place::Doubt("a word that is no part of an item's name")
}

/// The "s" of "tomorrow's yoga" (the apostrophe is punctuation).
fn possessive_s(r: &Reader, i: usize) -> bool {
    i > 0 && r.norm(i) == "s" && matches!(r.tag(i - 1), Tag::Punct('\''))
}

/// The search word of a token: as written, an abbreviation or a form like 的会 as what it stands
/// for, a typo as the word it misses.
pub fn search_word(r: &Reader, i: usize) -> String {
    let Some(entry) = r.entry(i) else { return r.text(i) };
    if let Some(means) = entry.senses.iter().find_map(|s| s.means) {
        return means.replace('_', " ");
    }
    match r.tag(i) {
        Tag::Word { typo: true, .. } => entry.form.to_owned(),
        _ => r.text(i),
    }
}

fn flush(run: &mut String, words: &mut Vec<String>) {
    if !run.is_empty() {
        words.push(std::mem::take(run));
    }
}
