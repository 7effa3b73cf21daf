//! Chinese lexemes, one file per phrase family. Traditional forms are normalised before (see
//! `text::normalize_char`); Cantonese words (聽日, 尋日, 琴日, 朝早, 晏晝, 下晝, 今個) are listed.
//!
//! # Layout
//! Each file depends only on the ones listed before it.
//! - `days`: relative days (明天, 后儿), weekdays and weeks (下周三, 这礼拜), the same day or time in
//!   another period (下个月的今天, 明天这个时候).
//! - `clock`: clock times (3点半, 差5分8点, 两三点) and parts of day (下午, 今晚).
//! - `periods`: years, months and days of the month (2026年, 下个月3号, 月底, 上旬), the n-th weekday or
//!   working day of a month (第三个周三).
//! - `offsets`: offsets, spans and lengths (3天后, 三天内, 两三个小时以后, 2小时, 两天三小时后).
//! - `recurrence`: 每天, 每周一三五, 工作日, 每隔一天, 每半小时.
//! - `words`: connectors and glue (到, 从, 的, 开始).
//! - `holidays`: 元旦, 国庆, 春节, 除夕, 中秋, 母亲节.

mod days;
mod clock;
mod periods;
mod offsets;
mod recurrence;
mod words;
mod holidays;

pub(crate) use clock::hour_pair;

/// The word tables of the families, for the lexicon of every time word (`crate::lexicon`).
pub(crate) mod tables {
    pub(crate) use super::clock::{DAY_SEGS, SEGS};
    pub(crate) use super::days::{NEXT_DAY_WORDS, NEXT_WORKDAY_WORDS, NOW_WORDS, REL_DAYS, REL_SPANS, WEEK_PREFIXES, WEEK_WORDS};
    pub(crate) use super::holidays::HOLIDAYS;
    pub(crate) use super::periods::{MONTH_PART_WORDS, MONTH_RELS, YEAR_PART_WORDS, YEAR_RELS};
    pub(crate) use super::recurrence::WORKDAY_WORDS;
}

use super::numerals::is_zh_num_char;
use super::text::Text;
use super::types::Best;
use clock::{part_of_day_words, clock, clock_after_minutes_short, short_segment};
use days::{relative_day_words, same_time, weekday};
use offsets::offset_or_duration;
use periods::{month_part_words, day_of_month, month_abs, month_rel, nth_weekday_or_month, year_abs, year_rel};
use recurrence::recurrence;
use words::words;

/// `after_tok`: the previous character belongs to a lexed atom (so a numeral may start here).
pub(crate) fn lex(t: &Text, i: usize, after_tok: bool, best: &mut Best) {
    let c = t.at(i);
    best.offer_opt(holidays::holiday(t, i));
    let num_start = c.is_ascii_digit() || is_zh_num_char(c) || c == '半';
    if num_start {
        // a number inside a longer number is not a start
        let b = t.before(i);
        if after_tok || !(b.is_ascii_digit() || (is_zh_num_char(b) && !c.is_ascii_digit())) {
            best.offer_opt(year_abs(t, i));
            best.offer_opt(month_abs(t, i));
            best.offer_opt(day_of_month(t, i));
            best.offer_opt(clock(t, i));
            best.offer_opt(offset_or_duration(t, i));
        }
    }
    let period_prefix = match c {
        '过' | '再' => true,
        '几' => !matches!(t.before(i), '十' | '好' | '这' | '那' | '前' | '后'),
        '未' | '接' | '今' | '往' | '最' => matches!(t.at(i + 1), '来' | '下' | '后' | '近'),
        '近' => is_zh_num_char(t.at(i + 1)) || t.at(i + 1).is_ascii_digit() || t.at(i + 1) == '半',
        _ => false,
    };
    if period_prefix {
        best.offer_opt(offset_or_duration(t, i));
    }
    if !may_start_word(c) {
        return;
    }
    words(t, i, best);
    relative_day_words(t, i, best);
    part_of_day_words(t, i, best);
    month_part_words(t, i, best);
    best.offer_opt(super::rest_of_day::zh(t, i));
    best.offer_opt(clock_after_minutes_short(t, i));
    best.offer_opt(nth_weekday_or_month(t, i));
    best.offer_opt(same_time(t, i));
    best.offer_opt(weekday(t, i));
    best.offer_opt(recurrence(t, i));
    best.offer_opt(month_rel(t, i));
    best.offer_opt(year_rel(t, i));
    best.offer_opt(short_segment(t, i));
}

/// Characters that can start a word-like (non-numeric) Chinese lexeme; everything else skips
/// the word tables. `tests::every_word_passes_the_prefilter` keeps it in step with the tables.
#[rustfmt::skip]
fn may_start_word(c: char) -> bool {
    matches!(c,
        '大' | '后' | '明' | '听' | '今' | '本' | '当' | '昨' | '寻' | '琴' | '前' | '次' |
        '翌' | '第' | '隔' | '凌' | '黎' | '拂' | '早' | '清' | '一' | '朝' | '上' | '中' |
        '正' | '午' | '晌' | '下' | '晏' | '傍' | '晚' | '夜' | '深' | '半' | '白' | '全' |
        '整' | '现' | '此' | '目' | '月' | '年' | '到' | '至' | '从' | '由' | '的' | '开' |
        '持' | '历' | '为' | '时' | '星' | '礼' | '周' | '这' | '每' | '工' | '天' | '同' |
        '去' | '来' | '又' | '零' | '最' | '差' | '倒' | '头'
    )
}

#[cfg(test)]
mod tests {
    use super::{clock::*, days::*, may_start_word, periods::*, recurrence::*, words::*};

    #[test]
    fn every_word_passes_the_prefilter() {
        let mut words: Vec<&str> = Vec::new();
        words.extend(REL_DAYS.iter().map(|w| w.0));
        words.extend(REL_SPANS.iter().map(|w| w.0));
        words.extend(DAY_SEGS.iter().map(|w| w.0));
        words.extend(SEGS.iter().map(|w| w.0));
        words.extend(WEEK_PREFIXES.iter().map(|w| w.0));
        words.extend(YEAR_RELS.iter().map(|w| w.0));
        words.extend(MONTH_RELS.iter().map(|w| w.0));
        words.extend(MONTH_PART_WORDS.iter().map(|w| w.0));
        words.extend(YEAR_PART_WORDS.iter().map(|w| w.0));
        words.extend(NEXT_DAY_WORDS);
        words.extend(NOW_WORDS);
        words.extend(NEXT_WORKDAY_WORDS);
        words.extend(DUR_GLUE_WORDS);
        words.extend(WORKDAY_WORDS);
        words.extend(WEEK_WORDS);
        words.push("午夜");
        words.push("天天");
        for w in words {
            let c = w.chars().next().unwrap();
            assert!(may_start_word(c), "{w}: {c} is missing from may_start_word");
        }
        // single characters that start a lexeme on their own (connectors, glue, 每, 早/晚 + time)
        for c in "到至从由的每早晚又零第最差倒头".chars() {
            assert!(may_start_word(c), "{c} is missing from may_start_word");
        }
    }

    #[test]
    fn every_holiday_passes_its_prefilter_and_the_table_is_grouped() {
        let names = super::holidays::HOLIDAYS;
        for (w, _) in names {
            assert!(super::holidays::may_start_holiday(w.chars().next().unwrap()), "{w}");
        }
        assert!(names.windows(2).all(|w| w[0].0.chars().next() <= w[1].0.chars().next()));
    }
}
