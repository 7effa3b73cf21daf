//! English names of holidays: fixed dates (christmas, new year's eve, halloween, valentine's
//! day), an n-th weekday of a month (thanksgiving, mother's day, labor day, memorial day) and
//! moving feasts (easter, good friday, chinese new year, mid-autumn festival), each the next one
//! (today included) unless a year follows ("christmas 2027").

use super::words::trailing_year;
use crate::text::Text;
use crate::holidays::{Rule, holiday_parts};
use crate::types::{Atom, Holiday, YearSpec};

/// Every English holiday name (apostrophes as typed are normalised to '); "may day" and "labour
/// day" are left out on purpose (a distress call, and a day that differs by country).
pub(crate) const HOLIDAYS: &[(&str, Rule)] = &[
    ("april fools' day", Rule::Fixed(4, 1)),
    ("april fools day", Rule::Fixed(4, 1)),
    ("april fool's day", Rule::Fixed(4, 1)),
    ("boxing day", Rule::Fixed(12, 26)),
    ("christmas eve", Rule::Fixed(12, 24)),
    ("christmas", Rule::Fixed(12, 25)),
    ("christmas day", Rule::Fixed(12, 25)),
    ("columbus day", Rule::Nth(2, 0, 10)),
    ("chinese new year", Rule::Moving(Holiday::Lunar(1, 1))),
    ("chinese new year's eve", Rule::Moving(Holiday::LunarNewYearEve)),
    ("dragon boat festival", Rule::Moving(Holiday::Lunar(5, 5))),
    ("easter", Rule::Moving(Holiday::Easter(0))),
    ("easter sunday", Rule::Moving(Holiday::Easter(0))),
    ("easter monday", Rule::Moving(Holiday::Easter(1))),
    ("father's day", Rule::Nth(3, 6, 6)),
    ("fathers day", Rule::Nth(3, 6, 6)),
    ("good friday", Rule::Moving(Holiday::Easter(-2))),
    ("halloween", Rule::Fixed(10, 31)),
    ("independence day", Rule::Fixed(7, 4)),
    ("labor day", Rule::Nth(1, 0, 9)),
    ("lunar new year", Rule::Moving(Holiday::Lunar(1, 1))),
    ("lantern festival", Rule::Moving(Holiday::Lunar(1, 15))),
    ("martin luther king day", Rule::Nth(3, 0, 1)),
    ("mlk day", Rule::Nth(3, 0, 1)),
    ("mother's day", Rule::Nth(2, 6, 5)),
    ("mothers day", Rule::Nth(2, 6, 5)),
    ("memorial day", Rule::Nth(-1, 0, 5)),
    ("mid-autumn festival", Rule::Moving(Holiday::Lunar(8, 15))),
    ("mid autumn festival", Rule::Moving(Holiday::Lunar(8, 15))),
    ("moon festival", Rule::Moving(Holiday::Lunar(8, 15))),
    ("new year's day", Rule::Fixed(1, 1)),
    ("new years day", Rule::Fixed(1, 1)),
    ("new year's", Rule::Fixed(1, 1)),
    ("new year's eve", Rule::Fixed(12, 31)),
    ("new years eve", Rule::Fixed(12, 31)),
    ("presidents day", Rule::Nth(3, 0, 2)),
    ("presidents' day", Rule::Nth(3, 0, 2)),
    ("st patrick's day", Rule::Fixed(3, 17)),
    ("st. patrick's day", Rule::Fixed(3, 17)),
    ("saint patrick's day", Rule::Fixed(3, 17)),
    ("spring festival", Rule::Moving(Holiday::Lunar(1, 1))),
    ("thanksgiving", Rule::Nth(4, 3, 11)),
    ("thanksgiving day", Rule::Nth(4, 3, 11)),
    ("valentine's day", Rule::Fixed(2, 14)),
    ("valentines day", Rule::Fixed(2, 14)),
    ("valentine's", Rule::Fixed(2, 14)),
    ("veterans day", Rule::Fixed(11, 11)),
    ("veterans' day", Rule::Fixed(11, 11)),
    ("xmas", Rule::Fixed(12, 25)),
    ("xmas eve", Rule::Fixed(12, 24)),
];

/// For each first letter (a-z), the range of [`HOLIDAYS`] whose names start with it: a word is
/// compared with its letter's names only (the table is sorted by first letter; `tests` checks).
const BY_LETTER: [(u8, u8); 26] = {
    let mut r = [(0u8, 0u8); 26];
    let mut k = 0;
    while k < HOLIDAYS.len() {
        let l = (HOLIDAYS[k].0.as_bytes()[0] - b'a') as usize;
        if r[l].1 == 0 {
            r[l].0 = k as u8;
        }
        r[l].1 = k as u8 + 1;
        k += 1;
    }
    r
};

/// For each first letter (a-z), the second letters of the names that start with it, as a bit set.
const SECOND_LETTERS: [u32; 26] = {
    let mut m = [0u32; 26];
    let mut k = 0;
    while k < HOLIDAYS.len() {
        let w = HOLIDAYS[k].0.as_bytes();
        m[(w[0] - b'a') as usize] |= 1 << (w[1] - b'a');
        k += 1;
    }
    m
};

/// A holiday name at `i`, with a year after it ("christmas 2027", "easter of 2028").
pub(super) fn holiday(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let c = t.at(i);
    if !c.is_ascii_lowercase() {
        return None;
    }
    // most words that share a name's first letter differ at the second
    let second = t.at(i + 1);
    if !second.is_ascii_lowercase() || SECOND_LETTERS[(c as u8 - b'a') as usize] & (1 << (second as u8 - b'a')) == 0 {
        return None;
    }
    let (a, b) = BY_LETTER[(c as u8 - b'a') as usize];
    let names = &HOLIDAYS[a as usize..b as usize];
    // ... or at the third ("the", "next" and "last" share two letters with names)
    let third = t.at(i + 2);
    if !names.iter().any(|h| h.0.as_bytes()[1] as char == second && h.0.as_bytes()[2] as char == third) {
        return None;
    }
    let (e, k) = t.phrase_longest_in(i, names, |h| h.0)?;
    let k = k + a as usize;
    let (year, e) = match trailing_year(t, e) {
        Some((y, e2)) => (Some(YearSpec::Abs(y)), e2),
        None => (None, e),
    };
    Some((e, Atom::Date(holiday_parts(HOLIDAYS[k].1, year))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_grouped_by_first_letter() {
        assert!(HOLIDAYS.windows(2).all(|w| w[0].0.as_bytes()[0] <= w[1].0.as_bytes()[0]));
    }
}
