//! Typos in English words: a word the lexicon does not have is read as the one entry it misses by
//! one edit (five letters or more) or two (eight or more), never for short words, where one edit
//! makes another word ("move" / "mode", "call" / "fall"), and never for a word of the English
//! dictionary ("plants" is no typo of "plans"; the list is SCOWL's, in `english-words.txt`). A near
//! miss of an action verb too short to be read ("moev") still tells the reader its reading is
//! uncertain.

use std::{collections::HashSet, sync::LazyLock};

use strsim::damerau_levenshtein;

use super::{Category, Entry, Lexicon, lexicon};

/// The categories whose English words are read through a typo.
const TOLERANT: [Category; 9] = [
    Category::Verb,
    Category::Item,
    Category::Query,
    Category::Position,
    Category::Quantity,
    Category::Direction,
    Category::Done,
    Category::Priority,
    Category::Note,
];

/// The shortest word read through a typo, and the shortest read through two.
const ONE_EDIT: usize = 5;
const TWO_EDITS: usize = 8;

/// Indexes of the single-word English forms open to typos, by length.
pub(super) fn index(entries: &[Entry]) -> Vec<Vec<usize>> {
    let mut by_length: Vec<Vec<usize>> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let form = entry.form;
        let word = form.len() >= ONE_EDIT - 1 && form.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        if word && entry.senses.iter().any(|s| TOLERANT.contains(&s.category)) {
            if by_length.len() <= form.len() {
                by_length.resize(form.len() + 1, Vec::new());
            }
            by_length[form.len()].push(i);
        }
    }
    by_length
}

impl Lexicon {
    /// The entry `word` (lower case, not in the lexicon) is a typo of, if exactly one is nearest.
    pub fn typo_of(&self, word: &str) -> Option<usize> {
        let len = word.chars().count();
        if len < ONE_EDIT || !word.bytes().all(|b| b.is_ascii_lowercase()) || is_english(word) {
            return None;
        }
        let allowed = if len >= TWO_EDITS { 2 } else { 1 };
        self.nearest(word, allowed, ONE_EDIT)
    }

    /// Whether `word` misses an action verb by one edit (four letters or more): not read, but a
    /// sign that the sentence asks for an action the reader cannot see.
    pub fn near_action(&self, word: &str) -> bool {
        let len = word.len();
        if len < ONE_EDIT - 1 || !word.bytes().all(|b| b.is_ascii_lowercase()) || is_english(word) {
            return false;
        }
        // A four-letter word is taken for a verb only with two letters swapped ("moev"): one
        // letter changed makes names and words ("Lisa", "mode").
        let swapped = |e: &Entry| {
            let (mut a, mut b): (Vec<u8>, Vec<u8>) = (word.bytes().collect(), e.form.bytes().collect());
            a.sort_unstable();
            b.sort_unstable();
            len >= ONE_EDIT || a == b
        };
        self.nearest_where(word, 1, ONE_EDIT - 1, |e| e.is(Category::Verb) && swapped(e)).is_some()
    }

    fn nearest(&self, word: &str, allowed: usize, shortest: usize) -> Option<usize> {
        self.nearest_where(word, allowed, shortest, |_| true)
    }

    fn nearest_where(&self, word: &str, allowed: usize, shortest: usize, keep: impl Fn(&Entry) -> bool) -> Option<usize> {
        let len = word.len();
        let mut best: Option<(usize, usize)> = None;
        let mut tie = false;
        for length in len.saturating_sub(allowed)..=len + allowed {
            for &i in self.typo_forms.get(length).map(Vec::as_slice).unwrap_or_default() {
                let entry = &self.entries[i];
                if entry.form.len() < shortest || !keep(entry) {
                    continue;
                }
                let distance = if allowed == 1 { one_edit(word.as_bytes(), entry.form.as_bytes()) } else { damerau_levenshtein(word, entry.form) };
                if distance == 0 || distance > allowed || inflects(word, entry.form) {
                    continue;
                }
                match best {
                    Some((d, _)) if d < distance => {}
                    Some((d, j)) if d == distance => tie |= !same_senses(&self.entries[j], entry),
                    _ => {
                        best = Some((distance, i));
                        tie = false;
                    }
                }
            }
        }
        best.filter(|_| !tie).map(|(_, i)| i)
    }
}

/// [`damerau_levenshtein`] of two ASCII words where only whether it is 0, 1 or more matters: 0, 1
/// (one letter added, dropped or changed, or two adjacent ones swapped), or 2 for anything
/// further. Most looked-up words allow one edit, and this is a walk of the two words, where the
/// full distance fills a table (and a map) for every entry of the length.
fn one_edit(a: &[u8], b: &[u8]) -> usize {
    if a == b {
        return 0;
    }
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (&a[same..], &b[same..]);
    let one = match a.len() as isize - b.len() as isize {
        0 => a_rest[1..] == b_rest[1..] || (a_rest.len() >= 2 && a_rest[0] == b_rest[1] && a_rest[1] == b_rest[0] && a_rest[2..] == b_rest[2..]),
        1 => a_rest[1..] == *b_rest,
        -1 => *a_rest == b_rest[1..],
        _ => false,
    };
    if one { 1 } else { 2 }
}

/// Two forms of one word ("meeting" and "meetings" for "meetng") are no tie.
fn same_senses(a: &Entry, b: &Entry) -> bool {
    a.senses == b.senses
}

/// The entry a word is a typo of, in the lexicon.
pub fn near_miss(word: &str) -> Option<&'static Entry> {
    let lexicon = lexicon();
    lexicon.typo_of(word).map(|i| lexicon.entry(i))
}

/// Whether `word` is `form` with an ending ("slides", "booked", "moving") or `form` cut short: a
/// word of its own, not a typo.
fn inflects(word: &str, form: &str) -> bool {
    const ENDINGS: [&str; 7] = ["s", "es", "ed", "d", "ing", "er", "ers"];
    let stem = form.strip_suffix('e').unwrap_or(form);
    ENDINGS.iter().any(|end| word.strip_suffix(end).is_some_and(|w| w == form || w == stem)) || form.starts_with(word)
}

/// The English words of four to fourteen letters (SCOWL american-english).
static ENGLISH: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| include_str!("../../lexicon/english-words.txt").lines().filter(|l| !l.starts_with('#')).collect());

/// Whether `word` (lower case) is an English word.
pub fn is_english(word: &str) -> bool {
    ENGLISH.contains(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of words of up to 4 letters of "abc" (121 words): 0, 1 or "2 or more" as the
    /// full distance says.
    #[test]
    fn one_edit_agrees_with_the_full_distance_up_to_one() {
        let mut words = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = words.iter().filter(|w| w.len() == words.last().unwrap().len()).flat_map(|w| ["a", "b", "c"].map(|c| format!("{w}{c}"))).collect();
            words.extend(longer);
        }
        assert_eq!(words.len(), 121);
        for a in &words {
            for b in &words {
                assert_eq!(one_edit(a.as_bytes(), b.as_bytes()), damerau_levenshtein(a, b).min(2), "{a:?} {b:?}");
            }
        }
    }
}
