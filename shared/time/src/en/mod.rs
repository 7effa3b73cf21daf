//! English lexemes, one file per phrase family; input is already lower-cased.
//!
//! # Layout
//! Each file depends only on the ones listed before it.
//! - `words`: the vocabulary every family shares: weekday and month names, units, glue words
//!   (at, on, to, from), day numbers and trailing years.
//! - `days`: relative days and weekdays (tomorrow, next friday, friday week, this time tomorrow).
//! - `clock`: clock times in digits and words, parts of day, noon, midnight, EOD.
//! - `offsets`: offsets and lengths (in 3 days, 2 hours from now, for 90 minutes, 3 days 4 hours).
//! - `periods`: weeks, months and years and their parts (next month, end of the week, early march).
//! - `ordinals`: the n-th weekday, business day or month of a period.
//! - `dates`: calendar dates (march 3, the 5th of june, 2027 oct 2).
//! - `recurrence`: every day, weekly, every other week, once a month.
//! - `holidays`: christmas, thanksgiving, easter, chinese new year.

mod words;
mod days;
mod periods;
mod ordinals;
mod dates;
mod offsets;
mod clock;
mod recurrence;
mod holidays;

/// The recognisers of single names and the holiday table, for the lexicon of every time word
/// (`crate::lexicon`).
pub(crate) mod tables {
    pub(crate) use super::holidays::HOLIDAYS;
    pub(crate) use super::words::{month_name, unit_word, weekday_name};
}

use super::text::Text;
use super::types::Best;
use clock::{part_of_day_words, clock_phrase, word_clock};
use dates::{day_first_date, month_first_date, ordinal_day, the_day, year_after_preposition, year_first_date};
use days::{relative_day_words, day_half, first_thing, same_day_of_period, same_time, weekday_expr};
use offsets::offset_or_duration;
use ordinals::{nth_month, nth_weekday, possessive_month};
use periods::{business_week, early_late_month, modified_period, month_part, rest_of_week, week_of_month, week_or_half_ahead};
use recurrence::recurrence;
use words::{digit_shorthand, fraction, glue_words};

pub(crate) fn lex(t: &Text, i: usize, best: &mut Best) {
    if !t.word_start(i) {
        return;
    }
    let c = t.at(i);
    if fraction(c).is_some() {
        best.offer_opt(offset_or_duration(t, i));
        return;
    }
    if c.is_ascii_digit() {
        if c == '2' && matches!(t.at(i + 1), 'd' | 'm' | 'n') {
            best.offer_opt(digit_shorthand(t, i));
        }
        best.offer_opt(day_first_date(t, i));
        best.offer_opt(nth_weekday(t, i));
        best.offer_opt(nth_month(t, i));
        if week_or_half_ahead(t, i) {
            best.offer_opt(week_of_month(t, i));
        }
        best.offer_opt(year_after_preposition(t, i));
        best.offer_opt(year_first_date(t, i));
        best.offer_opt(ordinal_day(t, i));
        best.offer_opt(offset_or_duration(t, i));
        best.offer_opt(clock_phrase(t, i));
        return;
    }
    if !c.is_ascii_alphabetic() {
        return;
    }
    relative_day_words(t, i, best);
    part_of_day_words(t, i, best);
    glue_words(t, i, best);
    best.offer_opt(holidays::holiday(t, i));
    best.offer_opt(nth_weekday(t, i));
    best.offer_opt(nth_month(t, i));
    best.offer_opt(possessive_month(t, i));
    best.offer_opt(day_first_date(t, i));
    best.offer_opt(weekday_expr(t, i));
    best.offer_opt(month_first_date(t, i));
    best.offer_opt(modified_period(t, i));
    best.offer_opt(month_part(t, i));
    best.offer_opt(the_day(t, i));
    best.offer_opt(offset_or_duration(t, i));
    best.offer_opt(clock_phrase(t, i));
    best.offer_opt(word_clock(t, i));
    best.offer_opt(recurrence(t, i));
    best.offer_opt(day_half(t, i));
    best.offer_opt(same_day_of_period(t, i));
    best.offer_opt(early_late_month(t, i));
    best.offer_opt(super::rest_of_day::en(t, i));
    if matches!((t.at(i), t.at(i + 1)), ('t', 'h') | ('f', 'i' | 'o') | ('s', 'e') | ('l', 'a') | ('r', 'e'))
        && week_or_half_ahead(t, i)
    {
        best.offer_opt(week_of_month(t, i));
        best.offer_opt(rest_of_week(t, i));
    }
    if matches!((t.at(i), t.at(i + 1)), ('t', 'h') | ('n', 'e') | ('l', 'a')) {
        best.offer_opt(business_week(t, i));
    }
    best.offer_opt(first_thing(t, i));
    best.offer_opt(same_time(t, i));
}
