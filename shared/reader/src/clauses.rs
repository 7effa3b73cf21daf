//! A sentence in clauses: where it joins several requests ("删除明天的健身，然后把周会推迟半小时",
//! "cancel yoga and move the dentist to friday"), and the pieces that only add to the clause
//! before ("…，下午3点开始", "…，重要紧急", "…, bring the slides").
//!
//! It splits at sentence punctuation and commas, at connectors (然后, 顺便, "then", "also"), and at
//! an English "and" before a verb or a note; then a piece that holds only a time, a priority or a
//! length goes back to the piece before, and a piece of noise alone goes with the piece after.

use std::ops::Range;

use crate::{
    lexicon::{Action, Category, Glue},
    tokens::{Sentence, Tag, Token},
};

/// The clauses of a sentence, as ranges of its tokens.
pub fn split(s: &Sentence) -> Vec<Range<usize>> {
    let tokens = &s.tokens;
    let mut pieces: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    for (i, token) in tokens.iter().enumerate() {
        let cut = match token.tag {
            Tag::Punct(c) => splits_at(s, i, c),
            // "I'm sick 🤒 cancel everything tomorrow": an emoji between words ends a sentence.
            Tag::Symbol => i + 1 < tokens.len() && !matches!(tokens[i + 1].tag, Tag::Symbol | Tag::Punct(_)),
            // "called Lisa ✔️ add …": a word that is an emoji ends its clause like one.
            Tag::Word { .. } if is_emoji_word(s, token) => {
                i + 1 < tokens.len() && !matches!(tokens[i + 1].tag, Tag::Symbol | Tag::Punct(_))
            }
            _ => is_connector(s, i) || is_and_before_action(s, i) || is_and_between_timed_items(s, start, i) || is_and_between_errands(s, start, i) || is_note_label(s, i),
        };
        if cut {
            let ends = matches!(token.tag, Tag::Punct(_) | Tag::Symbol) || is_emoji_word(s, token);
            if start < i {
                pieces.push(start..i);
            }
            // A connector starts the next piece (it is noise there); punctuation ends this one.
            start = if ends { i + 1 } else { i };
            if ends && let Some(last) = pieces.last_mut().filter(|l| l.end == i) {
                last.end = i + 1;
            }
        }
    }
    if start < tokens.len() {
        pieces.push(start..tokens.len());
    }
    merge_fragments(s, pieces)
}

/// A word of the lexicon written as an emoji ("✅", "✔️"), not an arrow that moves ("→").
fn is_emoji_word(s: &Sentence, token: &Token) -> bool {
    s.chars[token.start..token.end].iter().all(|c| !c.is_alphanumeric() && !c.is_ascii()) && s.entry(token).is_some_and(|e| !e.is(Category::Verb))
}

/// Punctuation that ends a clause: sentence ends, semicolons, commas (a comma inside a number or
/// a time is inside its token already), a full stop only before a space or the end.
fn splits_at(s: &Sentence, i: usize, c: char) -> bool {
    match c {
        '。' | '！' | '？' | '；' | ';' | '!' | '?' | '，' | ',' | '\n' => true,
        '.' => s.tokens.get(i + 1).is_none_or(|next| next.start > s.tokens[i].end),
        _ => false,
    }
}

/// "周一买菜 备注：鸡蛋 牛奶": a note's label starts a clause of its own.
fn is_note_label(s: &Sentence, i: usize) -> bool {
    i > 0 && is_label(s, i)
}

/// A note's label with its colon ("备注：", "note:"); 备注 in "转账备注写房号" is a word.
pub fn is_label(s: &Sentence, i: usize) -> bool {
    let Some(entry) = s.tokens.get(i).and_then(|t| s.entry(t)) else { return false };
    let colon = entry.form.ends_with([':', '：']) || s.tokens.get(i + 1).is_some_and(|t| matches!(t.tag, Tag::Punct(':' | '：')));
    colon && entry.sense(Category::Note).is_some_and(|sense| sense.sub == Some("label"))
}

fn is_connector(s: &Sentence, i: usize) -> bool {
    s.entry(&s.tokens[i]).is_some_and(|e| e.is(Category::Connector)) && i > 0
}

/// An English "and" followed by a verb that acts ("cancel yoga and move the dentist") or a note
/// ("lunch with Sam friday and bring the book").
/// "add buy milk and pick up dry cleaning": "and" between two errands starts the second.
fn is_and_between_errands(s: &Sentence, start: usize, i: usize) -> bool {
    let is_and = s.entry(&s.tokens[i]).is_some_and(|e| e.is(Category::And) && e.form.is_ascii());
    let errand = |t: &Token| s.entry(t).is_some_and(|e| e.is(Category::Errand) && !e.is(Category::Item));
    is_and && i > start && s.tokens.get(i + 1).is_some_and(errand) && s.tokens[start..i].iter().any(errand)
}

fn is_and_before_action(s: &Sentence, i: usize) -> bool {
    // "kids are sick so skip the playdate", "老板有事所以取消明天的会": "so" too.
    let so = Glue::SoBeforeAction.has(&s.norm_of(&s.tokens[i]));
    let is_and = so || s.entry(&s.tokens[i]).is_some_and(|e| e.is(Category::And) && e.form.is_ascii());
    let next = s.tokens.get(i + 1).and_then(|t| s.entry(t));
    is_and
        && i > 0
        && next.is_some_and(|e| {
            e.senses.iter().any(|sense| sense.category == Category::Verb && sense.action != Some(Action::List) || sense.category == Category::Note)
                && !e.is(Category::Item)
        })
}

/// Pieces that carry only a time, a priority, a length or noise join the piece before (or, at the
/// start, the piece after): "明天开2小时的会，下午3点开始", "今天寄合同，重要紧急".
fn merge_fragments(s: &Sentence, pieces: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut carry: Option<usize> = None;
    let count = pieces.len();
    for (n, piece) in pieces.into_iter().enumerate() {
        let piece = carry.take().map_or(piece.clone(), |start| start..piece.end);
        // "帮我记一下，…", "hey, …": a lead-in goes with the piece after it; at the end ("…，帮我记
        // 一下"), with the piece before.
        let lead_in = is_lead_in(s, &s.tokens[piece.clone()]) || is_anchor_lead(s, &s.tokens[piece.clone()]);
        if n + 1 < count && lead_in {
            carry = Some(piece.start);
            continue;
        }
        if is_fragment(s, &s.tokens[piece.clone()]) || lead_in && !out.is_empty() {
            match out.last_mut() {
                Some(last) => last.end = piece.end,
                None => carry = Some(piece.start),
            }
        } else {
            out.push(piece);
        }
    }
    if let Some(start) = carry {
        match out.last_mut() {
            Some(last) => last.end = last.end.max(s.tokens.len()),
            None => out.push(start..s.tokens.len()),
        }
    }
    out
}

/// A piece with no word of its own: only times, priorities, noise, punctuation and small words
/// ("下午3点开始", "重要紧急", "p1", "hey", "ok", "due friday").
fn is_fragment(s: &Sentence, tokens: &[Token]) -> bool {
    tokens.iter().all(|t| match t.tag {
        Tag::Time(_) | Tag::Punct(_) | Tag::Symbol => true,
        Tag::Word { .. } => s.entry(t).is_some_and(|e| {
            e.senses.iter().all(|sense| {
                matches!(sense.category, Category::Priority | Category::Noise | Category::Prep | Category::Aspect | Category::De | Category::Connector)
            }) || Glue::Start.has(e.form)
        }) || Glue::DeadlineBefore.has(&s.norm_of(t)),
        // "…, due end of the month": the deadline of the item before.
        Tag::Latin | Tag::Han => Glue::DeadlineBefore.has(&s.norm_of(t)),
        _ => false,
    })
}

/// "30 min before the Q3 review, remind me to print the deck": a length and another item, with no
/// verb, say when the request after them is.
fn is_anchor_lead(s: &Sentence, tokens: &[Token]) -> bool {
    let relation = tokens.iter().any(|t| s.entry(t).is_some_and(|e| e.senses.iter().any(|p| p.category == Category::Prep && matches!(p.sub, Some("before" | "after")))));
    // A length ("30 min", 15分钟), not a day ("周五前交房租" is a deadline).
    let length = tokens.iter().enumerate().any(|(k, t)| match t.tag {
        Tag::Time(m) => s.times.get(m).is_some_and(|m| m.resolution.duration_minutes.is_some() && !m.resolution.day_stated && m.resolution.start_time.is_none()),
        Tag::Number(_) => tokens.get(k + 1).is_some_and(|u| Glue::LengthWord.has(&s.norm_of(u))),
        _ => false,
    });
    let verb = tokens.iter().any(|t| s.entry(t).is_some_and(|e| e.is(Category::Verb)));
    relation && length && !verb
}

/// A piece that only says a request follows: noise, create verbs, "那个" as a filler ("帮我记一下",
/// "嗯……那个", "ok so").
fn is_lead_in(s: &Sentence, tokens: &[Token]) -> bool {
    tokens.iter().all(|t| match t.tag {
        Tag::Punct(_) | Tag::Symbol => true,
        Tag::Word { .. } => s.entry(t).is_some_and(|e| {
            e.senses.iter().any(|sense| {
                matches!(sense.category, Category::Noise | Category::Reference | Category::Pronoun)
                    || sense.category == Category::Verb && sense.action == Some(Action::Create)
            })
        }),
        _ => false,
    }) && tokens.iter().any(|t| matches!(t.tag, Tag::Word { .. }))
}

/// An English "and" between two items that each have a time of their own and words of their own
/// ("add swim class sat 10-11 and soccer practice sun 2-4"), not between two times of one item
/// ("monday and wednesday at 3") or two names of one ("dinner with Sam and Alex friday").
fn is_and_between_timed_items(s: &Sentence, start: usize, i: usize) -> bool {
    let is_and = s.entry(&s.tokens[i]).is_some_and(|e| e.is(Category::And) && e.form.is_ascii());
    if !is_and {
        return false;
    }
    let end = (i + 1..s.tokens.len()).find(|&j| matches!(s.tokens[j].tag, Tag::Punct(_))).unwrap_or(s.tokens.len());
    let timed = |range: std::ops::Range<usize>| range.clone().any(|j| matches!(s.tokens[j].tag, Tag::Time(_)));
    let named = |range: std::ops::Range<usize>| range.clone().any(|j| matches!(s.tokens[j].tag, Tag::Latin) || s.entry(&s.tokens[j]).is_some_and(|e| e.is(Category::Item)));
    // The word right after "and" names something: a time there would join the two times.
    let next_names = s.tokens.get(i + 1).is_some_and(|t| !matches!(t.tag, Tag::Time(_)));
    next_names && timed(start..i) && named(start..i) && timed(i + 1..end) && named(i + 1..end)
}
