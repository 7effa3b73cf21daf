//! A sentence in tokens, each tagged: a time expression (the resolver's), a lexicon word (with all
//! its senses), a number, an unknown English word or run of Chinese characters, punctuation, or a
//! symbol (emoji). The sentence is read once: one pass of the resolver and one of the lexicon.
//!
//! Text is compared in a normal form with one character per character of the original (lower
//! case, full-width letters and digits as ASCII, curly quotes straight), so every token's span
//! counts code points of what the user typed.

use quickact_time::{TimeContext, TimeMatch, find_all, is_han, leading_number, time_word_spans};

use crate::lexicon::{Entry, Hit, lexicon};

/// One token of a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// Code points of the sentence, end exclusive.
    pub start: usize,
    pub end: usize,
    pub tag: Tag,
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tag {
    /// A piece of the sentence's time expression `.0` (an expression with a gap has two pieces).
    Time(usize),
    /// A lexicon entry; `typo` when the word was read as the entry it misses by an edit or two.
    Word { entry: usize, typo: bool },
    /// A number that is no part of a time expression ("top 3", "three").
    Number(u32),
    /// An English word the lexicon does not have.
    Latin,
    /// A run of Chinese characters the lexicon does not have.
    Han,
    /// Punctuation.
    Punct(char),
    /// Emoji and other symbols.
    Symbol,
}

/// A sentence, read once.
#[derive(Debug, Clone)]
pub struct Sentence {
    pub text: String,
    /// The original characters.
    pub chars: Vec<char>,
    /// The normal form, one character per original character.
    pub norm: Vec<char>,
    pub times: Vec<TimeMatch>,
    pub tokens: Vec<Token>,
    /// Spans of the resolver's time words, whether or not they formed an expression.
    pub time_words: Vec<(usize, usize)>,
}

impl Sentence {
    /// Tokenises `text` in the context `ctx` (which the resolver needs to find times).
    pub fn read(text: &str, ctx: &TimeContext) -> Sentence {
        let chars: Vec<char> = text.chars().collect();
        // Traditional characters are looked up as simplified ones (刪掉 is 删掉, 會 is 会): the
        // conversion is one character for one, so spans stay the user's.
        let simple: Vec<char> = fast2s::convert(text).chars().collect();
        let simple = if simple.len() == chars.len() { simple } else { chars.clone() };
        let norm: Vec<char> = simple.iter().map(|&c| normal(c)).collect();
        // "in like 15 min", "明天嗯下午三点": fillers say nothing to the resolver either. They are
        // blanked (same length, so spans stay the user's) before it reads the sentence.
        let times = find_all(&without_fillers(&chars, &norm), ctx);
        let mut covered: Vec<Option<usize>> = vec![None; chars.len()];
        for (i, m) in times.iter().enumerate() {
            for (a, b) in m.pieces() {
                covered[a..b.min(chars.len())].iter_mut().for_each(|c| *c = Some(i));
            }
        }
        let words = lexicon_words(&norm, &covered);
        let tokens = tokenise(&chars, &norm, &covered, &words);
        let time_words = time_word_spans(text);
        Sentence { text: text.to_owned(), chars, norm, times, tokens, time_words }
    }

    /// The original text of code points `start..end`.
    pub fn slice(&self, start: usize, end: usize) -> String {
        self.chars[start..end].iter().collect()
    }

    /// The normal form of a token.
    pub fn norm_of(&self, token: &Token) -> String {
        self.norm[token.start..token.end].iter().collect()
    }

    /// The original text of a token.
    pub fn text_of(&self, token: &Token) -> String {
        self.slice(token.start, token.end)
    }

    /// The lexicon entry of a word token.
    pub fn entry(&self, token: &Token) -> Option<&'static Entry> {
        match token.tag {
            Tag::Word { entry, .. } => Some(lexicon().entry(entry)),
            _ => None,
        }
    }

    /// Whether a token that is no time expression holds a word of the resolver's (a time word it
    /// could not read as a time: "thrusdy", "at nine-ish").
    pub fn is_time_like(&self, token: &Token) -> bool {
        // "meeting with HR": a word in capitals is a name, not "hr".
        let acronym = token.end - token.start >= 2 && self.chars[token.start..token.end].iter().all(|c| c.is_ascii_uppercase());
        !matches!(token.tag, Tag::Time(_)) && !acronym && self.time_words.iter().any(|&(a, b)| a < token.end && token.start < b)
    }

    /// Whether the sentence is Chinese (for answering in its language and joining words).
    pub fn is_chinese(&self) -> bool {
        self.chars.iter().any(|&c| is_han(c))
    }
}

/// The normal form of one character.
fn normal(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c).to_ascii_lowercase(),
        '\u{3000}' => ' ',
        '’' | '‘' | '`' | '´' => '\'',
        '“' | '”' => '"',
        c if c.is_whitespace() => ' ',
        c if c.is_ascii() => c.to_ascii_lowercase(),
        c => c.to_lowercase().next().filter(|l| l.len_utf8() == c.len_utf8() || !c.is_alphabetic()).unwrap_or(c),
    }
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// The lexicon words of the text (normal form) outside its time expressions, leftmost first and
/// longest at a place, as (start, end, entry) in code points. English forms stand as whole words.
/// A word that holds a whole time expression inside it and more ("good morning", 早上好) is the word.
fn lexicon_words(norm: &[char], covered: &[Option<usize>]) -> Vec<(usize, usize, usize)> {
    let text: String = norm.iter().collect();
    // Byte offset -> code point index (and one past the end).
    let mut char_at = vec![0usize; text.len() + 1];
    let mut ci = 0;
    for (bi, c) in text.char_indices() {
        char_at[bi..bi + c.len_utf8()].fill(ci);
        ci += 1;
    }
    char_at[text.len()] = ci;
    let lexicon = lexicon();
    let hits: Vec<(usize, usize, usize)> = lexicon
        .hits(&text)
        .map(|Hit { start, end, entry }| (char_at[start], char_at[end], entry))
        // Words of replies only ("add it" anyway, "both") are read against a question, not here.
        .filter(|&(_, _, entry)| !lexicon.entry(entry).senses.iter().all(|s| s.category == crate::lexicon::Category::Reply))
        .filter(|&(start, end, _)| {
            let runs_on = |edge: char, neighbour: Option<&char>| is_word_char(edge) && neighbour.is_some_and(|&n| is_word_char(n));
            let whole_word = !runs_on(norm[start], start.checked_sub(1).and_then(|b| norm.get(b))) && !runs_on(norm[end - 1], norm.get(end));
            whole_word && !cuts_a_time(start, end, covered)
        })
        .collect();
    segment(norm.len(), hits)
}

/// Of overlapping words, the ones that together cover the most of the text, and of those the
/// fewest (longer words): "的会议" is 的 + 会议, not 的会 + 议.
fn segment(len: usize, mut hits: Vec<(usize, usize, usize)>) -> Vec<(usize, usize, usize)> {
    hits.sort_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
    // best[i]: (covered, -words) from i to the end, and the hit taken at i (if any).
    let mut best: Vec<((usize, isize), Option<usize>)> = vec![((0, 0), None); len + 1];
    let mut by_start: Vec<Vec<usize>> = vec![Vec::new(); len + 1];
    for (h, hit) in hits.iter().enumerate() {
        by_start[hit.0].push(h);
    }
    for i in (0..len).rev() {
        let mut choice = (best[i + 1].0, None);
        for &h in &by_start[i] {
            let (start, end, _) = hits[h];
            let (covered, words) = best[end].0;
            let score = (covered + end - start, words - 1);
            // Longer words come first: a tie keeps the longer, and a word beats skipping it.
            if score > choice.0 || score == choice.0 && choice.1.is_none() {
                choice = (score, Some(h));
            }
        }
        best[i] = choice;
    }
    let mut taken = Vec::new();
    let mut i = 0;
    while i < len {
        match best[i].1 {
            Some(h) => {
                taken.push(hits[h]);
                i = hits[h].1;
            }
            None => i += 1,
        }
    }
    taken
}

/// Whether a word at `start..end` would cut into a time expression: it overlaps one without
/// holding all of it and more.
fn cuts_a_time(start: usize, end: usize, covered: &[Option<usize>]) -> bool {
    let inside: Vec<usize> = covered[start..end].iter().flatten().copied().collect();
    if inside.is_empty() {
        return false;
    }
    let holds_all = inside.iter().all(|&t| {
        let first = covered.iter().position(|c| *c == Some(t)).unwrap_or(0);
        let last = covered.iter().rposition(|c| *c == Some(t)).unwrap_or(0);
        first >= start && last < end
    });
    !(holds_all && inside.len() < end - start)
}

/// The tokens of the sentence, left to right.
fn tokenise(chars: &[char], norm: &[char], covered: &[Option<usize>], words: &[(usize, usize, usize)]) -> Vec<Token> {
    let lexicon = lexicon();
    let mut tokens = Vec::new();
    let mut words = words.iter().peekable();
    let mut i = 0;
    while i < chars.len() {
        if let Some(&&(start, end, entry)) = words.peek()
            && start == i
        {
            tokens.push(Token { start, end, tag: Tag::Word { entry, typo: false } });
            words.next();
            i = end;
            continue;
        }
        let next_word = words.peek().map_or(chars.len(), |w| w.0);
        if let Some(t) = covered[i] {
            let end = (i..next_word).find(|&j| covered[j] != Some(t)).unwrap_or(next_word);
            // "lunch on monday", "Board lunch friday at 12:30": the meal the expression starts with
            // is the item's name; the rest is its time.
            let start = match leading_meal(norm, i, end) {
                Some((meal_end, entry)) => {
                    tokens.push(Token { start: i, end: meal_end, tag: Tag::Word { entry, typo: false } });
                    (meal_end..end).find(|&j| norm[j] != ' ').unwrap_or(end)
                }
                None => i,
            };
            // "next wednesday lunch with Kelvin": the meal it ends with names the item as well.
            match trailing_meal(norm, start, end) {
                Some((meal_start, entry)) => {
                    let time_end = (start..meal_start).rev().find(|&j| norm[j] != ' ').map_or(meal_start, |j| j + 1);
                    tokens.push(Token { start, end: time_end, tag: Tag::Time(t) });
                    tokens.push(Token { start: meal_start, end, tag: Tag::Word { entry, typo: false } });
                }
                None => tokens.push(Token { start, end, tag: Tag::Time(t) }),
            }
            i = end;
            continue;
        }
        let free = |j: usize| j < next_word && covered[j].is_none();
        let c = norm[i];
        if c == ' ' {
            i += 1;
        } else if is_word_char(c) {
            let mut end = i + 1;
            while free(end) && (is_word_char(norm[end]) || (matches!(norm[end], '\'' | '-' | ':' | '/') && end + 1 < chars.len() && free(end + 1) && is_word_char(norm[end + 1]))) {
                end += 1;
            }
            let word: String = norm[i..end].iter().collect();
            let tag = if let Ok(n) = word.parse::<u32>() {
                Tag::Number(n)
            } else if let Some(entry) = stretched(&word) {
                // "soooo", "pleaseee", "hiii": a word drawn out.
                Tag::Word { entry, typo: true }
            } else if let Some(entry) = lexicon.typo_of(&word) {
                Tag::Word { entry, typo: true }
            } else if let Some((n, len)) = leading_number(&word).filter(|&(_, len)| len == word.chars().count()) {
                let _ = len;
                Tag::Number(n)
            } else {
                Tag::Latin
            };
            tokens.push(Token { start: i, end, tag });
            i = end;
        } else if is_han(c) {
            let end = (i + 1..chars.len()).find(|&j| !(free(j) && is_han(norm[j]))).unwrap_or(chars.len());
            tokens.push(Token { start: i, end, tag: Tag::Han });
            i = end;
        } else if c.is_ascii_punctuation() || "，。！？；：、…—～·（）【】《》「」".contains(c) {
            tokens.push(Token { start: i, end: i + 1, tag: Tag::Punct(c) });
            i += 1;
        } else {
            tokens.push(Token { start: i, end: i + 1, tag: Tag::Symbol });
            i += 1;
        }
    }
    tokens
}

/// A meal word ("lunch", "dinner") that starts a longer time expression at `i`, followed by a
/// space: where it ends, and its entry.
fn leading_meal(norm: &[char], i: usize, end: usize) -> Option<(usize, usize)> {
    let space = (i..end).find(|&j| norm[j] == ' ')?;
    let index = meal_entry(&norm[i..space])?;
    (space + 1 < end).then_some((space, index))
}

/// A meal word a longer time expression ends with, after a space: where it starts, and its entry.
fn trailing_meal(norm: &[char], start: usize, end: usize) -> Option<(usize, usize)> {
    let space = (start..end).rev().find(|&j| norm[j] == ' ')?;
    let index = meal_entry(&norm[space + 1..end])?;
    // "tomorrow 7 dinner": a clock before the meal keeps it in the time (the meal sets its half).
    let before = &norm[start..space];
    (before.iter().any(|c| *c != ' ') && !before.iter().any(char::is_ascii_digit)).then_some((space + 1, index))
}

/// The lexicon entry of a meal word ("lunch", "dinner").
fn meal_entry(word: &[char]) -> Option<usize> {
    let word: String = word.iter().collect();
    let entry = lexicon().find(&word)?;
    let meal = entry.senses.iter().any(|s| s.category == crate::lexicon::Category::Item && s.has(crate::lexicon::Flags::MEAL));
    meal.then(|| lexicon().entries.iter().position(|e| std::ptr::eq(e, entry)))?
}

/// The entry a drawn-out word stands for ("soooo" -> "so", "pleaseee" -> "please"): each run of
/// three or more of a letter as one letter, or as two.
fn stretched(word: &str) -> Option<usize> {
    let chars: Vec<char> = word.chars().collect();
    if !chars.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]) {
        return None;
    }
    let squash = |keep: usize| {
        let mut out = String::new();
        let mut run = 0;
        for (i, &c) in chars.iter().enumerate() {
            run = if i > 0 && chars[i - 1] == c { run + 1 } else { 1 };
            if run <= keep {
                out.push(c);
            }
        }
        out
    };
    let lexicon = lexicon();
    [1, 2].into_iter().find_map(|keep| lexicon.find(&squash(keep)).and_then(|e| lexicon.entries.iter().position(|x| std::ptr::eq(x, e))))
}

/// The text with its English filler words ("um", "like"), interjections (嗯) and symbols (emoji)
/// as spaces.
fn without_fillers(chars: &[char], norm: &[char]) -> String {
    // "10am–12pm": a dash of any width joins a range as '-' does.
    let mut out: Vec<char> = chars.iter().map(|&c| if matches!(c, '–' | '—' | '−') { '-' } else { c }).collect();
    let text: String = norm.iter().collect();
    let byte_to_char: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    let char_at = |byte: usize| byte_to_char.partition_point(|&b| b < byte);
    let mut before: Option<&'static crate::lexicon::Entry> = None;
    for hit in lexicon().hits(&text) {
        let entry = lexicon().entry(hit.entry);
        let (start, end) = (char_at(hit.start), char_at(hit.end));
        let cut_before = start > 0 && is_word_char(norm[start - 1]) && is_word_char(norm[start]);
        let cut_after = end < norm.len() && is_word_char(norm[end]) && is_word_char(norm[end - 1]);
        let whole = !(cut_before || cut_after);
        if !whole && entry.form.is_ascii() {
            continue;
        }
        // "the first one tomorrow", "that one at 3": "one" after a place or a pointer is no hour.
        let points = before.is_some_and(|b| [crate::lexicon::Category::Position, crate::lexicon::Category::Reference, crate::lexicon::Category::Det].iter().any(|&c| b.is(c)));
        if entry.form == "one" && points {
            out[start..end].iter_mut().for_each(|c| *c = ' ');
        }
        before = Some(entry);
        // English fillers and interjections only: a Chinese filler (一下) may be inside a time (周一下午).
        let filler = entry.senses.iter().all(|s| s.category == crate::lexicon::Category::Noise && (s.sub == Some("filler") && entry.form.is_ascii() || s.sub == Some("interjection")));
        if filler && whole {
            out[start..end].iter_mut().for_each(|c| *c = ' ');
        }
    }
    for (i, c) in out.iter_mut().enumerate() {
        if !c.is_alphanumeric() && !c.is_whitespace() && !c.is_ascii_punctuation() && !is_han(*c) && !"，。！？；：、…—～·（）【】《》「」".contains(norm[i]) {
            *c = ' ';
        }
    }
    out.into_iter().collect()
}
