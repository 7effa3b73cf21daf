//! "Later today" and 今天晚些时候: the rest of today, from now to midnight, as a span of the
//! reference instant ([`Atom::TimeSpan`] ending at [`REST_OF_DAY`]). People say it for "some
//! time today, not now"; the span keeps both ends so a caller can schedule inside it.

use super::text::Text;
use super::types::{Atom, REST_OF_DAY, date_atom};

/// "later today", "later on today", "later in the day", "later on in the day". With an hour after
/// it ("later today at 5") it is only the day: the hour says when.
pub(crate) fn en(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if (t.at(i), t.at(i + 1)) != ('l', 'a') {
        return None;
    }
    let (e, _) = t.phrase_longest(i, &["later today", "later on today", "later in the day", "later on in the day"])?;
    let k = t.skip_ws(e);
    let hour_follows = k > e
        && (t.at(k).is_ascii_digit() || t.phrase_longest(k, &["at", "around", "by", "from", "between", "before", "after"]).is_some());
    if hour_follows {
        return Some((e, date_atom(|d| d.rel_day = Some(0))));
    }
    Some((e, Atom::TimeSpan(0, REST_OF_DAY, false)))
}

/// 今天/今日/今儿 followed by 晚些(时候), 晚一些, 晚一点(儿), 晚点(儿), 稍后, 稍晚(些时候), 迟些(时候), 迟点:
/// "今天晚些时候给你回电话", "今天稍后开会". Not before a number (晚8点 is an evening hour, which
/// the clock reader owns), nor 晚点 before 了 or 名 (航班今天晚点了: the flight is late today).
pub(crate) fn zh(t: &Text, i: usize) -> Option<(usize, Atom)> {
    if t.at(i) != '今' {
        return None;
    }
    let (d, _) = t.lit_longest(i, &["今天", "今日", "今儿"])?;
    const LATER: &[&str] = &[
        "晚些时候", "晚些", "晚一些", "晚一点", "晚一点儿", "晚点", "晚点儿", "稍后", "稍晚", "稍晚些时候", "稍晚些", "迟些时候", "迟些", "迟点", "迟一点",
    ];
    let (e, _) = t.lit_longest(d, LATER)?;
    let next = t.at(e);
    if next.is_ascii_digit() || super::numerals::is_zh_num_char(next) || (t.at(e - 1) == '点' && matches!(next, '了' | '名')) {
        return None;
    }
    Some((e, Atom::TimeSpan(0, REST_OF_DAY, false)))
}
