//! Chinese names of holidays: fixed dates (元旦, 情人节, 劳动节, 国庆, 圣诞节), an n-th weekday of a
//! month (母亲节, 父亲节, 感恩节) and the festivals of the lunar calendar (春节, 除夕, 元宵, 端午, 七夕,
//! 中秋, 重阳, 腊八). Each is the next one, today included; a year before it picks that year's
//! (2027年春节, 明年中秋).

use crate::holidays::{Rule, holiday_parts};
use crate::text::Text;
use crate::types::{Atom, Holiday};

/// Every Chinese holiday name, grouped by first character (looked up by it; `tests` checks). 十一 (also eleven) and 清明 (a solar term, not in the lunar tables
/// used here) are left out on purpose.
pub(crate) const HOLIDAYS: &[(&str, Rule)] = &[
    ("七夕", Rule::Moving(Holiday::Lunar(7, 7))),
    ("七夕节", Rule::Moving(Holiday::Lunar(7, 7))),
    ("万圣节", Rule::Fixed(10, 31)),
    ("中秋", Rule::Moving(Holiday::Lunar(8, 15))),
    ("中秋节", Rule::Moving(Holiday::Lunar(8, 15))),
    ("五一", Rule::Fixed(5, 1)),
    ("五一劳动节", Rule::Fixed(5, 1)),
    ("儿童节", Rule::Fixed(6, 1)),
    ("元旦", Rule::Fixed(1, 1)),
    ("元宵", Rule::Moving(Holiday::Lunar(1, 15))),
    ("元宵节", Rule::Moving(Holiday::Lunar(1, 15))),
    ("六一", Rule::Fixed(6, 1)),
    ("六一儿童节", Rule::Fixed(6, 1)),
    ("农历新年", Rule::Moving(Holiday::Lunar(1, 1))),
    ("劳动节", Rule::Fixed(5, 1)),
    ("双十一", Rule::Fixed(11, 11)),
    ("国庆", Rule::Fixed(10, 1)),
    ("国庆节", Rule::Fixed(10, 1)),
    ("国庆日", Rule::Fixed(10, 1)),
    ("圣诞", Rule::Fixed(12, 25)),
    ("圣诞节", Rule::Fixed(12, 25)),
    ("复活节", Rule::Moving(Holiday::Easter(0))),
    ("大年初一", Rule::Moving(Holiday::Lunar(1, 1))),
    ("大年三十", Rule::Moving(Holiday::LunarNewYearEve)),
    ("妇女节", Rule::Fixed(3, 8)),
    ("平安夜", Rule::Fixed(12, 24)),
    ("年三十", Rule::Moving(Holiday::LunarNewYearEve)),
    ("建党节", Rule::Fixed(7, 1)),
    ("建军节", Rule::Fixed(8, 1)),
    ("情人节", Rule::Fixed(2, 14)),
    ("愚人节", Rule::Fixed(4, 1)),
    ("感恩节", Rule::Nth(4, 3, 11)),
    ("教师节", Rule::Fixed(9, 10)),
    ("春节", Rule::Moving(Holiday::Lunar(1, 1))),
    ("植树节", Rule::Fixed(3, 12)),
    ("母亲节", Rule::Nth(2, 6, 5)),
    ("父亲节", Rule::Nth(3, 6, 6)),
    ("端午", Rule::Moving(Holiday::Lunar(5, 5))),
    ("端午节", Rule::Moving(Holiday::Lunar(5, 5))),
    ("腊八", Rule::Moving(Holiday::Lunar(12, 8))),
    ("腊八节", Rule::Moving(Holiday::Lunar(12, 8))),
    ("重阳", Rule::Moving(Holiday::Lunar(9, 9))),
    ("重阳节", Rule::Moving(Holiday::Lunar(9, 9))),
    ("除夕", Rule::Moving(Holiday::LunarNewYearEve)),
    ("青年节", Rule::Fixed(5, 4)),
];

/// The first character of each name of [`HOLIDAYS`], in the table's order.
const FIRST_CHARS: [u32; HOLIDAYS.len()] = {
    let mut f = [0u32; HOLIDAYS.len()];
    let mut k = 0;
    while k < HOLIDAYS.len() {
        // a Han character is three bytes in UTF-8
        let b = HOLIDAYS[k].0.as_bytes();
        f[k] = ((b[0] as u32 & 0x0F) << 12) | ((b[1] as u32 & 0x3F) << 6) | (b[2] as u32 & 0x3F);
        k += 1;
    }
    f
};

/// Characters that start a name of [`HOLIDAYS`] (`tests` keeps them in step).
pub(super) fn may_start_holiday(c: char) -> bool {
    matches!(c, '元' | '情' | '妇' | '植' | '愚' | '劳' | '五' | '青' | '儿' | '六' | '建' | '教' | '国' | '万' | '双' | '平' | '圣' | '母' | '父' | '感' | '复' | '春' | '大' | '农' | '除' | '年' | '端' | '七' | '中' | '重' | '腊')
}

/// A holiday name at `i`. 五一 and 六一 inside a longer numeral are numbers (十五一, 五一二).
pub(super) fn holiday(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if !may_start_holiday(t.at(i)) {
        return None;
    }
    // the names that start with this character: a binary search of the grouped table
    let c = t.at(i) as u32;
    let a = FIRST_CHARS.partition_point(|&f| f < c);
    let b = a + FIRST_CHARS[a..].partition_point(|&f| f == c);
    let (e, k) = t.lit_longest_in(i, &HOLIDAYS[a..b], |h| h.0)?;
    let k = k + a;
    let numeral = |c: char| crate::numerals::is_zh_num_char(c) || c.is_ascii_digit();
    if matches!(HOLIDAYS[k].0, "五一" | "六一") && (numeral(t.before(i)) || numeral(t.at(e))) {
        return None;
    }
    // 年三十 after a numeral or a year word is a day of that year (2026年三十号, 明年三十岁)
    if HOLIDAYS[k].0 == "年三十" && (numeral(t.before(i)) || "今明去前后上下本来同当".contains(t.before(i))) {
        return None;
    }
    Some((e, Atom::Date(holiday_parts(HOLIDAYS[k].1, None))))
}
