//! One clause being read: its tokens, the role each has been given, and the doubts met on the way.
//! A rule reads a clause by giving its tokens roles; a token no rule gives a role to is a word the
//! reader could not read, and the reading is uncertain.

use quickact_time::{TimeContext, TimeMatch};

use crate::{
    frame::{Part, Role},
    lexicon::{Action, Category, Entry, Flags, Glue, Sense},
    tokens::{Sentence, Tag, Token},
};

/// Why a reading is uncertain, with the token it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct Doubt {
    pub token: usize,
    pub reason: &'static str,
}

/// A clause of a sentence, its tokens' roles and doubts.
#[derive(Clone)]
pub struct Reader<'s> {
    pub sentence: &'s Sentence,
    pub ctx: &'s TimeContext,
    /// The clause's tokens (indexes into the sentence's tokens).
    pub tokens: Vec<usize>,
    pub roles: Vec<Option<Role>>,
    pub doubts: Vec<Doubt>,
    /// What a look past the clause's last token sees: a symbol at the end of the sentence, which
    /// no rule reads as a word (so a rule that runs off the end finds nothing, and never panics).
    end: Token,
}

impl<'s> Reader<'s> {
    pub fn new(sentence: &'s Sentence, ctx: &'s TimeContext, tokens: Vec<usize>) -> Self {
        let roles = vec![None; tokens.len()];
        let at = sentence.chars.len();
        Reader { sentence, ctx, tokens, roles, doubts: Vec::new(), end: Token { start: at, end: at, tag: Tag::Symbol } }
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn token(&self, i: usize) -> &Token {
        self.tokens.get(i).map_or(&self.end, |&t| &self.sentence.tokens[t])
    }

    pub fn tag(&self, i: usize) -> Tag {
        self.token(i).tag
    }

    pub fn entry(&self, i: usize) -> Option<&'static Entry> {
        self.tokens.get(i).and_then(|&t| self.sentence.entry(&self.sentence.tokens[t]))
    }

    /// The sense of `category` of token `i`, if it is a word that has one.
    pub fn sense(&self, i: usize, category: Category) -> Option<&'static Sense> {
        self.entry(i).and_then(|e| e.sense(category))
    }

    pub fn is(&self, i: usize, category: Category) -> bool {
        self.sense(i, category).is_some()
    }

    /// Whether token `i` is a word of `category` with `flag`.
    pub fn is_with(&self, i: usize, category: Category, flag: Flags) -> bool {
        self.entry(i).is_some_and(|e| e.senses.iter().any(|s| s.category == category && s.has(flag)))
    }

    /// The action of a verb token.
    pub fn verb(&self, i: usize) -> Option<&'static Sense> {
        self.sense(i, Category::Verb)
    }

    /// Whether token `i` is one of the glue words of `set` ("by" before a deadline, 前 after one).
    pub fn is_glue(&self, i: usize, set: Glue) -> bool {
        i < self.len() && set.has(&self.norm(i))
    }

    pub fn is_verb(&self, i: usize, action: Action) -> bool {
        self.verb(i).is_some_and(|s| s.action == Some(action))
    }

    /// The time expression of a time token.
    pub fn time(&self, i: usize) -> Option<&'s TimeMatch> {
        match self.tag(i) {
            Tag::Time(t) => self.sentence.times.get(t),
            _ => None,
        }
    }

    /// The text of the time piece of token `i` (a piece, not the whole match when it has a gap).
    pub fn text(&self, i: usize) -> String {
        self.sentence.text_of(self.token(i))
    }

    /// The normal form of token `i` (lower case).
    pub fn norm(&self, i: usize) -> String {
        self.sentence.norm_of(self.token(i))
    }

    pub fn is_punct(&self, i: usize) -> bool {
        matches!(self.tag(i), Tag::Punct(_) | Tag::Symbol)
    }

    /// Whether the token carries nothing of the request on its own: noise words, punctuation,
    /// symbols.
    pub fn is_noise(&self, i: usize) -> bool {
        self.is_punct(i) || self.is(i, Category::Noise) || self.is_contraction(i)
    }

    /// The "s" of "what's", "tomorrow's": the end of a word the apostrophe cut off.
    pub fn is_contraction(&self, i: usize) -> bool {
        i > 0 && matches!(self.tag(i - 1), Tag::Punct('\'')) && self.is_glue(i, Glue::Contraction)
    }

    pub fn set(&mut self, i: usize, role: Role) {
        if let Some(slot) = self.roles.get_mut(i) {
            *slot = Some(role);
        }
    }

    pub fn set_range(&mut self, range: std::ops::Range<usize>, role: Role) {
        for i in range {
            self.set(i, role);
        }
    }

    /// The role of token `i` (none past the end).
    pub fn role(&self, i: usize) -> Option<Role> {
        self.roles.get(i).copied().flatten()
    }

    pub fn doubt(&mut self, token: usize, reason: &'static str) {
        self.doubts.push(Doubt { token, reason });
    }

    /// The first token in `range` for which `test` holds.
    pub fn find(&self, range: std::ops::Range<usize>, test: impl Fn(&Self, usize) -> bool) -> Option<usize> {
        range.into_iter().find(|&i| test(self, i))
    }

    /// Gives every token still without a role that carries nothing (noise, punctuation) the
    /// noise role.
    pub fn settle_noise(&mut self) {
        for i in 0..self.len() {
            if self.roles[i].is_none() && self.is_noise(i) {
                self.roles[i] = Some(Role::Noise);
            }
        }
    }

    /// The tokens without a role (words the reader could not place).
    pub fn unread(&self) -> Vec<usize> {
        (0..self.len()).filter(|&i| self.roles[i].is_none()).collect()
    }

    /// The parts of the frame: runs of tokens with one role, with their spans.
    pub fn parts(&self) -> Vec<Part> {
        let mut parts: Vec<Part> = Vec::new();
        for i in 0..self.len() {
            let Some(role) = self.roles[i] else { continue };
            let token = self.token(i);
            match parts.last_mut() {
                Some(last) if last.role == role && self.joins(last.span.1, token.start) => last.span.1 = token.end,
                _ => parts.push(Part { role, span: (token.start, token.end), text: String::new() }),
            }
        }
        for part in &mut parts {
            part.text = self.sentence.slice(part.span.0, part.span.1);
        }
        parts
    }

    /// Whether only spaces stand between code points `end` and `start`.
    fn joins(&self, end: usize, start: usize) -> bool {
        end <= start && self.sentence.chars[end..start].iter().all(|c| c.is_whitespace())
    }

    /// The original text from token `a` to token `b` (inclusive), time pieces and the tokens in
    /// `cut` left out, spaces squashed (Chinese pieces join without spaces).
    pub fn text_between(&self, a: usize, b: usize, cut: impl Fn(&Self, usize) -> bool) -> String {
        let mut out = String::new();
        let mut last_end: Option<usize> = None;
        for i in a..=b {
            if cut(self, i) {
                last_end = None;
                if !out.ends_with([' ', CUT]) && !out.is_empty() {
                    out.push(CUT);
                }
                continue;
            }
            let token = self.token(i);
            if let Some(end) = last_end
                && end < token.start
                && self.sentence.chars[end..token.start].iter().any(|c| c.is_whitespace())
                && !out.ends_with(' ')
            {
                out.push(' ');
            }
            // "w/" is written out ("coffee with Maya").
            match self.sense(i, Category::Prep).and_then(|s| s.means) {
                Some(means) => out.push_str(means),
                None => out.push_str(&self.sentence.slice(token.start, token.end)),
            }
            last_end = Some(token.end);
        }
        join_words(&out)
    }
}

/// Where words were taken out of a text (a time, a priority): a space only between Latin words.
const CUT: char = '\u{1}';

/// Squashes spaces: one where the user typed any, except between Chinese characters ("call 张总",
/// "买 iPhone 15"); where words were taken out, one only between two Latin words ("开2小时的会"
/// -> "开会", "dinner at 8 with Dana" -> "dinner with Dana").
pub fn join_words(text: &str) -> String {
    let chars: Vec<char> = text.trim_matches(|c: char| c.is_whitespace() || c == CUT).chars().collect();
    let mut out = String::with_capacity(text.len());
    let latin = |c: Option<&char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c.is_ascii_punctuation());
    for (i, &c) in chars.iter().enumerate() {
        if c.is_whitespace() || c == CUT {
            if out.ends_with(' ') {
                continue;
            }
            let before = out.chars().last();
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace() && **c != CUT);
            let typed = chars[i..].iter().take_while(|c| c.is_whitespace() || **c == CUT).any(|c| c.is_whitespace());
            let han = |c: Option<&char>| c.is_some_and(|&c| quickact_time::is_han(c));
            let keep = if typed { !(han(before.as_ref()) && han(next)) } else { latin(before.as_ref()) && latin(next) };
            if keep && before.is_some() && next.is_some() {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out
}
