//! Typo tolerance: an English word of five letters or more that no table holds, one edit
//! (a letter added, dropped, changed, or two neighbours swapped) from a day, month or
//! part-of-day name, with the same first letter, is read as that name ("thrusday", "wendesday",
//! "decmber", "febuary", "satruday", "tomorow"). Ordinary words that lie one edit from such a
//! name stay words (sundae, match, mourning). The reading is marked `inferred`: the text says
//! something else, the resolver guessed what was meant.

/// The names a typo may stand for: long enough that one edit rarely makes another word. Grouped
/// by first letter ([`BY_LETTER`]; `tests` checks).
const TARGETS: &[&str] = &[
    "april", "august", "afternoon", "christmas", "december", "evening", "friday", "february", "halloween", "january",
    "monday", "march", "morning", "midnight", "november", "october", "saturday", "sunday", "september", "tuesday",
    "thursday", "today", "tomorrow", "tonight", "thanksgiving", "wednesday", "weekend", "yesterday",
];

/// Ordinary words one edit from a name of [`TARGETS`] with its first letter: every such word of a
/// US English dictionary (`/usr/share/dict/words`, wamerican), which therefore stays a word.
const ORDINARY: &[&str] = &[
    "augusta", "marci", "marco", "marcy", "marsh", "match", "moaning", "mooning", "mourning", "sundae", "sundas", "sundry",
    "toady", "toddy", "tokay",
];

/// For each first letter (a-z), the range of [`TARGETS`] that start with it.
const BY_LETTER: [(u8, u8); 26] = {
    let mut r = [(0u8, 0u8); 26];
    let mut k = 0;
    while k < TARGETS.len() {
        let l = (TARGETS[k].as_bytes()[0] - b'a') as usize;
        if r[l].1 == 0 {
            r[l].0 = k as u8;
        }
        r[l].1 = k as u8 + 1;
        k += 1;
    }
    r
};

/// Whether a lower-case word starting with `c` may be a typo of a name (a cheap test first).
#[inline]
pub(crate) fn may_be_typo(c: char) -> bool {
    c.is_ascii_lowercase() && BY_LETTER[(c as u8 - b'a') as usize].1 > 0
}

/// The name the lower-case ASCII word `w` is a typo of, if any (one only).
pub(crate) fn correction(w: &[char]) -> Option<&'static str> {
    if w.len() < 5 || w.len() > 13 || !may_be_typo(w[0]) {
        return None;
    }
    let (a, b) = BY_LETTER[(w[0] as u8 - b'a') as usize];
    let mut found = None;
    for t in &TARGETS[a as usize..b as usize] {
        let tb = t.as_bytes();
        if tb.len().abs_diff(w.len()) > 1 {
            continue;
        }
        // the name itself, or its plural ("mondays"), is no typo
        if same(w, tb) || (w.len() == tb.len() + 1 && w[tb.len()] == 's' && same(&w[..tb.len()], tb)) {
            return None;
        }
        if one_edit(w, tb) {
            if found.is_some() {
                return None;
            }
            found = Some(*t);
        }
    }
    let found = found?;
    (!ORDINARY.iter().any(|o| same(w, o.as_bytes()))).then_some(found)
}

fn same(w: &[char], t: &[u8]) -> bool {
    w.len() == t.len() && w.iter().zip(t).all(|(a, b)| *a == *b as char)
}

/// Whether `w` and `t` (different) are one edit apart: one letter inserted, dropped, changed,
/// or two neighbours swapped.
fn one_edit(w: &[char], t: &[u8]) -> bool {
    let t: Vec<char> = t.iter().map(|&b| b as char).collect();
    let first = w.iter().zip(&t).position(|(a, b)| a != b).unwrap_or(w.len().min(t.len()));
    match w.len() as isize - t.len() as isize {
        0 => {
            w[first + 1..] == t[first + 1..]
                || (first + 1 < w.len() && w[first] == t[first + 1] && w[first + 1] == t[first] && w[first + 2..] == t[first + 2..])
        }
        1 => w[first + 1..] == t[first..],
        -1 => w[first..] == t[first + 1..],
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(w: &str) -> Option<&'static str> {
        correction(&w.chars().collect::<Vec<_>>())
    }

    #[test]
    fn the_names_are_grouped_by_first_letter() {
        assert!(TARGETS.windows(2).all(|w| w[0].as_bytes()[0] <= w[1].as_bytes()[0]));
    }

    #[test]
    fn one_edit_from_a_name_is_that_name() {
        for (typo, name) in [
            ("thrusday", "thursday"),
            ("wendesday", "wednesday"),
            ("wednsday", "wednesday"),
            ("decmber", "december"),
            ("febuary", "february"),
            ("satruday", "saturday"),
            ("fridya", "friday"),
            ("mondey", "monday"),
            ("septmber", "september"),
            ("tomorow", "tomorrow"),
            ("evenning", "evening"),
        ] {
            assert_eq!(fix(typo), Some(name), "{typo}");
        }
    }

    #[test]
    fn names_short_words_and_ordinary_words_are_no_typos() {
        for w in ["monday", "mondays", "march", "sundae", "money", "match", "marsh", "mourning", "toady", "tues", "sunny", "fridge", "octopus"] {
            assert_eq!(fix(w), None, "{w}");
        }
    }
}
