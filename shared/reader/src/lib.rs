//! quickact-reader: the local reader. One sentence about a schedule or to-dos, in Chinese,
//! English or both, is parsed once into frames: what to do (create, move, shift, complete, delete,
//! list), to which item, with what time, title, note or priority, and where in the sentence each
//! piece came from. Pure code, no I/O.
//!
//! A reading is certain only when every word of the sentence is accounted for: in a rule, in a
//! title, or known as noise. Otherwise it says which words it could not read, and it never acts
//! ("fail closed": a decline costs a retype, a wrong effect costs the user's trust).
//!
//! # Layout
//! The pipeline runs top to bottom; each module depends only on the ones above it.
//! - `lexicon`: every word the reader knows, in data files (`lexicon/*.tsv`), with typo look-ups.
//! - `tokens`: the sentence in tokens: the resolver's time expressions, lexicon words, numbers,
//!   unknown words.
//! - `clauses`: where a sentence joins several requests, and the pieces that only add to one.
//! - `frame`: what a clause asks for ([`Frame`]), with the span of each part.
//! - `reader`: a clause being read: each token's role, and the doubts.
//! - `times`, `target`, `title`: the time words, the item pointed at, the item to create.
//! - `rules`: the named rules ([`rules::RULES`]), each with the sentences it reads.
//! - `context`: what one clause lends the next (its day, its item).
//!
//! `corpus.tsv` holds the reader's cases (sentence, zone, moment, the user's items, what must
//! happen); the worker's end-to-end tests run them through the service, and this crate's tests
//! check each one's reading. `benches/reader.rs` measures sentences per second.

mod clauses;
mod context;
pub mod frame;
mod joined;
pub mod lexicon;
mod reader;
pub mod rules;
mod target;
mod times;
mod title;
pub mod tokens;

use quickact_time::TimeContext;
use serde::Serialize;

pub use frame::{Act, Anchor, Change, Frame, Listing, NewItem, Part, Role, Selector};
pub use lexicon::Kind;

use crate::{lexicon::Category, reader::Reader, tokens::Sentence};

/// How sure a reading is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every word is accounted for: the frames may act.
    Certain,
    /// It asks for something to be put down without saying what ("帮我安排一下", "add a task").
    Vague,
    /// No request at all: greetings, thanks.
    NoRequest,
    /// Some words could not be read (see [`Reading::unread`]): it must not act.
    Uncertain,
}

/// A word the reader could not read, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unread {
    pub span: (usize, usize),
    pub text: String,
    pub reason: &'static str,
}

/// A sentence, read.
#[derive(Debug, Clone, Serialize)]
pub struct Reading {
    pub verdict: Verdict,
    pub frames: Vec<Frame>,
    pub unread: Vec<Unread>,
    /// The sentence is Chinese (it has a Han character): answers follow its language.
    pub chinese: bool,
}

impl Reading {
    pub fn is_certain(&self) -> bool {
        self.verdict == Verdict::Certain
    }
}

/// Reads a sentence written at the moment (and in the zone) of `ctx`.
pub fn read(text: &str, ctx: &TimeContext) -> Reading {
    let sentence = Sentence::read(text, ctx);
    let chinese = sentence.is_chinese();
    let mut pieces: Vec<Piece> = Vec::new();
    for range in clauses::split(&sentence) {
        let reader = Reader::new(&sentence, ctx, range.collect());
        if all_noise(&reader) {
            continue;
        }
        let before = pieces.iter_mut().rev().find_map(|p| p.frame.as_mut());
        if context::attach_note(&reader, before) {
            pieces.push(Piece { reader, frame: None, unread: Vec::new(), chatter: false, note: true });
            continue;
        }
        pieces.push(read_piece(reader));
    }
    let mut unread = settle_pieces(&mut pieces);
    let mut frames: Vec<Frame> = pieces.iter().filter_map(|p| p.frame.clone().map(|f| joined::split(&p.reader, f))).flatten().collect();
    unread.extend(context::carry(&sentence, ctx, &mut frames));
    let verdict = if pieces.is_empty() {
        Verdict::NoRequest
    } else if !unread.is_empty() || frames.is_empty() {
        Verdict::Uncertain
    } else if frames.iter().any(|f| f.act == Act::Create && f.item.is_none()) {
        if frames.len() == 1 { Verdict::Vague } else { Verdict::Uncertain }
    } else {
        Verdict::Certain
    };
    unread.sort_by_key(|u| u.span);
    unread.dedup_by_key(|u| u.span);
    let unread = join_unread(&sentence, unread);
    Reading { verdict, frames, unread, chinese }
}

/// A clause and how it was read.
struct Piece<'s> {
    reader: Reader<'s>,
    frame: Option<Frame>,
    unread: Vec<Unread>,
    /// Only small talk ("I'm sick", 好累): said beside a request, it is no part of it.
    chatter: bool,
    /// A note that went with the item of the clause before.
    note: bool,
}

fn read_piece(reader: Reader<'_>) -> Piece<'_> {
    let chatter = is_chatter(&reader);
    match rules::read_clause(&reader) {
        Some((frame, read)) => {
            let mut unread: Vec<Unread> = read.unread().into_iter().map(|i| unread_word(&read, i, "a word no rule could place")).collect();
            unread.extend(unread_times(&read).into_iter().map(|i| unread_word(&read, i, "a time word that is no time the resolver read")));
            unread.extend(read.doubts.iter().map(|d| unread_word(&read, d.token, d.reason)));
            Piece { reader: read, frame: Some(frame), unread, chatter, note: false }
        }
        None => {
            let unread = (0..reader.len()).filter(|&i| !reader.is_noise(i)).map(|i| unread_word(&reader, i, "no rule reads this clause")).collect();
            Piece { reader, frame: None, unread, chatter, note: false }
        }
    }
}

/// What the pieces say together: small talk beside a request is left out; a piece that only
/// names an item ("my meeting tomorrow, push it to 3", "the last thing on friday, move it to 6pm")
/// is the item of the action after it. The words still unread.
fn settle_pieces(pieces: &mut Vec<Piece<'_>>) -> Vec<Unread> {
    let acts = pieces.iter().any(|p| p.frame.is_some() && p.unread.is_empty() && !p.chatter);
    if acts {
        pieces.retain(|p| !p.chatter || p.frame.is_some() && p.unread.is_empty());
    }
    for k in 1..pieces.len() {
        let refers_back = pieces[k].unread.is_empty() && pieces[k].frame.as_ref().and_then(|f| f.target.as_ref()).is_some_and(|t| t.previous);
        // The piece before names the item: it reads as nothing, or as an item to put down ("my
        // meeting tomorrow" read as a new meeting), which an action on "it" shows it is not.
        let before_names = !pieces[k - 1].note && (!pieces[k - 1].unread.is_empty() || pieces[k - 1].frame.as_ref().is_some_and(|f| f.act == Act::Create));
        if !(refers_back && before_names) {
            continue;
        }
        if let Some(selector) = names_an_item(&pieces[k - 1].reader) {
            if let Some(target) = pieces[k].frame.as_mut().and_then(|f| f.target.as_mut()) {
                *target = selector;
            }
            pieces[k - 1].unread.clear();
            pieces[k - 1].frame = None;
        }
    }
    settle_commentary(pieces);
    pieces.iter_mut().flat_map(|p| std::mem::take(&mut p.unread)).collect()
}

/// The item a piece names, read as a whole ("my meeting tomorrow") or as an item and something
/// said about it ("明天的钢琴课老师请假": the piano lesson; the teacher's leave is the reason).
fn names_an_item(piece: &Reader<'_>) -> Option<Selector> {
    let last_item = (0..piece.len()).rev().find(|&i| piece.is(i, Category::Item));
    let mut tries = vec![piece.clone()];
    if let Some(last) = last_item.filter(|&l| l + 1 < piece.len() && is_commentary(piece, l + 1..piece.len())) {
        let named = Reader::new(piece.sentence, piece.ctx, piece.tokens[..=last].to_vec());
        // "教练生病", "老师请假": what is said of the item is a remark, not words of its name.
        if (last + 1..piece.len()).any(|i| piece.is(i, Category::SmallTalk)) {
            tries.insert(0, named);
        } else {
            tries.push(named);
        }
    }
    tries.into_iter().find_map(|mut reader| {
        reader.roles.iter_mut().for_each(|r| *r = None);
        reader.doubts.clear();
        let range = rules::body(&mut reader);
        let selector = target::selector(&mut reader, range);
        reader.settle_noise();
        (reader.doubts.is_empty() && reader.unread().is_empty() && !selector.is_empty() && !selector.previous).then_some(selector)
    })
}

/// A remark beside a request, asking nothing ("老师说来不及", "we're going out of town", "好久没见了",
/// "用冷水手洗"): no action, no time, no question, nothing pointing at an item, nothing adding to
/// the request ("too", 也). After an item to create, a remark that states nothing ([`is_statement`])
/// is the item's note; any other remark beside a request is left out.
fn settle_commentary(pieces: &mut Vec<Piece<'_>>) {
    let acts = |p: &Piece<'_>| p.frame.is_some() && p.unread.is_empty() && !p.note;
    if !pieces.iter().any(acts) {
        return;
    }
    let mut k = 0;
    while k < pieces.len() {
        let p = &pieces[k];
        if acts(p) || p.note || !is_commentary(&p.reader, 0..p.reader.len()) {
            k += 1;
            continue;
        }
        let r = &p.reader;
        let past = is_statement(r, 0..r.len());
        let remark = p.reader.sentence.slice(r.token(0).start, r.token(r.len() - 1).end).trim().trim_end_matches(['。', '.', '!', '！', '~', '～']).to_owned();
        let joiner = if r.sentence.is_chinese() { "；" } else { "; " };
        if !past
            && k > 0
            && pieces[k - 1].unread.is_empty()
            && let Some(item) = pieces[k - 1].frame.as_mut().filter(|f| f.act == Act::Create).and_then(|f| f.item.as_mut())
        {
            item.description = Some(match item.description.take() {
                Some(was) => format!("{was}{joiner}{remark}"),
                None => remark,
            });
        }
        pieces.remove(k);
    }
}

/// Whether tokens `range` of a clause only remark: nothing in them acts, times, asks, points at an
/// item or adds to the request.
fn is_commentary(r: &Reader<'_>, range: std::ops::Range<usize>) -> bool {
    use lexicon::Category::*;
    const REQUESTING: [Category; 17] = [Verb, Query, Question, Reference, Det, And, Position, Priority, Done, NotGoing, Have, Instead, Ba, Note, Prepare, Vague, Already];
    let mut words = 0;
    let mut only_items = true;
    // A statement: a judgement ("7点太晚了", "the kids are sick"), what happened ("took all
    // weekend", 我刚跟房东聊完) or what is ("the client is sick"). In one, a time, "the", 和 or 已经
    // ask for nothing.
    let statement = is_statement(r, range.clone());
    let said_in_a_statement = |i: usize| statement && (matches!(r.tag(i), tokens::Tag::Time(_)) || r.is(i, Det) || r.is(i, Already) || r.is(i, And) && !r.text(i).is_ascii());
    for i in range {
        if r.is_punct(i) || r.is_noise(i) && words == 0 {
            continue;
        }
        // "买牛奶" after a request is a to-do of its own; "gym" a second item.
        if words == 0 && r.is(i, Errand) && !r.is_with(i, Errand, lexicon::Flags::PAST) {
            return false;
        }
        only_items &= r.is(i, Item);
        let tail = r.sense(i, Noise).is_some_and(|s| s.sub == Some("tail"));
        // "asdfgh, move the standup to 4": letters that are no English word remark nothing.
        let norm = r.norm(i);
        let word = norm.strip_suffix("'s").unwrap_or(&norm);
        if matches!(r.tag(i), tokens::Tag::Latin) && word.len() > 3 && !lexicon::is_english(word) {
            return false;
        }
        // 备注 inside a remark ("转账备注写房号") names the remark, it asks nothing.
        let label = r.sense(i, Note).is_some_and(|s| s.sub == Some("label"));
        if said_in_a_statement(i) {
            words += 1;
            continue;
        }
        if matches!(r.tag(i), tokens::Tag::Time(_)) || REQUESTING.iter().any(|&c| r.is(i, c)) && !label || tail || r.is_glue(i, lexicon::Glue::Also) {
            return false;
        }
        words += 1;
    }
    words > 0 && !only_items
}

/// Whether tokens `range` state something rather than ask: a judgement ("7点太晚了", "the kids are
/// sick"), what happened ("took all weekend", "the dentist called", 我刚跟房东聊完) or what is ("the
/// client is sick"). Beside an item to create, a remark that states is left out; one that does not
/// ("用冷水手洗") is the item's note.
fn is_statement(r: &Reader<'_>, range: std::ops::Range<usize>) -> bool {
    use lexicon::Category::*;
    let last = range.clone().rev().find(|&i| !r.is_punct(i) && !r.is_noise(i));
    range.clone().any(|i| r.is(i, SmallTalk) || r.is(i, Aux) && r.text(i).is_ascii() || r.is_with(i, Errand, lexicon::Flags::PAST))
        || last.is_some_and(|l| r.is_glue(l, lexicon::Glue::Le) || r.is(l, Result) || lexicon::Glue::Finished.words().iter().any(|w| r.norm(l).ends_with(w)))
}

/// Small talk alone: feelings, complaints, the weather ("I'm sick", "ugh", 好累), with nothing of a
/// request in it.
fn is_chatter(r: &Reader) -> bool {
    use lexicon::Category::*;
    let small_talk = (0..r.len()).any(|i| r.is(i, SmallTalk));
    small_talk
        && (0..r.len()).all(|i| {
            r.is_noise(i) || [SmallTalk, Pronoun, Aux, Question, Modal, Det].iter().any(|&c| r.is(i, c)) || matches!(r.tag(i), tokens::Tag::Latin) && r.norm(i).len() <= 3
        })
}

/// A clause of greetings, thanks and punctuation only.
fn all_noise(r: &Reader) -> bool {
    (0..r.len()).all(|i| r.is_noise(i) && !r.is(i, Category::Verb))
}

fn unread_word(r: &Reader, i: usize, reason: &'static str) -> Unread {
    let token = r.token(i);
    Unread { span: (token.start, token.end), text: r.text(i), reason }
}

/// Words it could not read that stand side by side, as one phrase ("99999" + "年" -> "99999年").
fn join_unread(sentence: &Sentence, unread: Vec<Unread>) -> Vec<Unread> {
    let mut out: Vec<Unread> = Vec::new();
    for u in unread {
        match out.last_mut() {
            Some(last) if last.span.1 <= u.span.0 && sentence.chars[last.span.1..u.span.0].iter().all(|c| c.is_whitespace()) => {
                last.span.1 = u.span.1;
                last.text = sentence.slice(last.span.0, last.span.1);
            }
            Some(last) if last.span.1 > u.span.0 => {}
            _ => out.push(u),
        }
    }
    out
}

/// Time words the rules placed as words (a weekday or month word the resolver could not join into
/// a time): the time was not read. Words that also name items ("lunch", 下午茶) and adjectives of
/// a series ("quarterly review", "weekly sync") are words of the title.
fn unread_times(r: &Reader) -> Vec<usize> {
    (0..r.len())
        .filter(|&i| {
            r.sentence.is_time_like(r.token(i))
                && matches!(r.roles[i], Some(Role::Title | Role::Target | Role::Noise))
                && !r.is_punct(i)
                && r.entry(i).is_none()
                && !r.norm(i).ends_with("ly")
        })
        .collect()
}
