//! Chinese clock times and parts of day: 3点, 三点半, 3点15分, 三点一刻, 15点30, 8点差一刻, 差5分8点,
//! 两三点 (two neighbouring hours), 早8点; 凌晨, 上午, 下午, 今晚, 明早.

use crate::digits::meridiem;
use crate::numerals::{
    int_any, zh_digit, zh_int,
};
use crate::segment::SegKind;
use crate::text::Text;
use crate::types::{
    Atom, Best, Clock, SegAtom,
};


pub(crate) const DAY_SEGS: &[(&str, i32, SegKind)] = &[
    ("今晚", 0, SegKind::Evening),
    ("今夜", 0, SegKind::Night),
    ("今早", 0, SegKind::Morning),
    ("今晨", 0, SegKind::Morning),
    ("今朝", 0, SegKind::Morning),
    ("当晚", 0, SegKind::Evening),
    ("明早", 1, SegKind::Morning),
    ("明晨", 1, SegKind::Morning),
    ("明晚", 1, SegKind::Evening),
    ("听晚", 1, SegKind::Evening),
    ("昨晚", -1, SegKind::Evening),
    ("昨夜", -1, SegKind::Night),
    ("琴晚", -1, SegKind::Evening),
    ("前晚", -2, SegKind::Evening),
];

pub(crate) const SEGS: &[(&str, SegKind)] = &[
    ("凌晨", SegKind::EarlyMorning),
    ("黎明", SegKind::Dawn),
    ("拂晓", SegKind::Dawn),
    ("后半夜", SegKind::LateNight),
    ("早上", SegKind::Morning),
    ("早晨", SegKind::Morning),
    ("清晨", SegKind::Morning),
    ("一早", SegKind::Morning),
    ("一大早", SegKind::Morning),
    ("大清早", SegKind::Morning),
    ("大早上", SegKind::Morning),
    ("朝早", SegKind::Morning),
    ("上午", SegKind::Forenoon),
    ("中午", SegKind::Noon),
    ("正午", SegKind::Noon),
    ("午间", SegKind::Noon),
    ("晌午", SegKind::Noon),
    ("下午", SegKind::Afternoon),
    ("午后", SegKind::Afternoon),
    ("晏昼", SegKind::Afternoon),
    ("下昼", SegKind::Afternoon),
    ("傍晚", SegKind::Evening),
    ("晚上", SegKind::Evening),
    ("夜晚", SegKind::Evening),
    ("晚间", SegKind::Evening),
    ("晚头", SegKind::Evening),
    ("夜里", SegKind::Night),
    ("夜间", SegKind::Night),
    ("深夜", SegKind::Night),
    ("半夜", SegKind::Night),
    ("白天", SegKind::Daytime),
    ("全天", SegKind::AllDay),
    ("整天", SegKind::AllDay),
    ("一整天", SegKind::AllDay),
];

/// 早8点 / 晚8点: a one-character part of day directly before a clock time.
pub(super) fn short_segment(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let kind = match t.at(i) {
        '早' => SegKind::Morning,
        '晚' => SegKind::Evening,
        _ => return None,
    };
    clock(t, i + 1)?;
    Some((
        i + 1,
        Atom::Seg(SegAtom {
            kind,
            day: None,
            daily: false,
        }),
    ))
}

/// 3点, 三点半, 3点15分, 三点一刻, 十五点, 15点30, 晚上十一点钟, 8时35分, 6点30pm.
pub(crate) fn clock(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (h, mut e, is_ascii) = int_any(t, i)?;
    if h > 24 {
        return None;
    }
    // "7 点", "下午 4 点": digits typed apart from their unit among Chinese words.
    if is_ascii {
        while t.at(e) == ' ' && matches!(t.at(e + 1), ' ' | '点' | '时') {
            e += 1;
        }
    }
    let marker = t.at(e);
    if marker != '点' && marker != '时' {
        return None;
    }
    let after = t.at(e + 1);
    if marker == '时' && matches!(after, '间' | '候' | '代' | '期' | '刻' | '段' | '差') {
        return None;
    }
    if marker == '点' && after == '点' {
        return None;
    }
    let padded = is_ascii && t.at(i) == '0' && e - i == 2;
    let mut j = e + 1;
    if marker == '点' && after == '儿' {
        // "三点儿", "俩点儿" = 3, 2 o'clock; "一点儿" is "a little" unless a part of day stands
        // right before it ("下午一点儿")
        if h == 1 && !is_ascii && !"午晨上里".contains(t.before(i)) {
            return None;
        }
        j += 1;
    }
    if matches!(t.at(j), '钟' | '整' | '正') {
        j += 1;
    }
    let (h, m, has_min, mut j) = minutes_after_hour(t, h, j);
    if h == 24 && m > 0 {
        return None;
    }
    let mut mer = None;
    if (1..=12).contains(&h)
        && let Some((mr, e3)) = meridiem(t, j)
        && (!t.at(j).is_ascii_alphabetic() || !t.before(j).is_ascii_alphabetic())
    {
        mer = Some(mr);
        j = e3;
    }
    // "一点" usually means "a little" after these characters or before these
    if !is_ascii && h == 1 && !has_min && mer.is_none() && t.at(i) == '一' {
        let b = t.before(i);
        if "有快早晚慢多少好差大小些点再高低长短近远轻重".contains(b)
            || "也都不吧啊呀".contains(t.at(j))
        {
            return None;
        }
    }
    // "第3点", "这三点", "有3点建议": points of a list, not hours
    if !has_min && mer.is_none() && marker == '点' && "第这那几有".contains(t.before(i)) {
        return None;
    }
    Some((
        j,
        Atom::Clock(Clock {
            h,
            m,
            has_min,
            mer,
            absolute: h > 12 || h == 0,
            padded,
            guessed: false,
        }),
    ))
}

/// The minutes written after an hour's 点 at `j` (半, 一刻, 15, 15分, 差一刻, 零五): (hour, minutes,
/// whether minutes were written, end). "8点差一刻" takes the hour back: (7, 45).
fn minutes_after_hour(t: &Text, h: u32, j: usize) -> (u32, u32, bool, usize) {
    let (mut h, mut m, mut has_min, mut j) = (h, 0, false, j);
    if let Some((before, e2)) = minutes_short(t, j).filter(|_| h > 0) {
        // "8点差一刻" = 7:45
        h -= 1;
        m = 60 - before;
        has_min = true;
        j = e2;
    } else if t.at(j) == '半' {
        m = 30;
        has_min = true;
        j += 1;
    } else if t.at(j) == '踏' && t.at(j + 1) == '半' {
        m = 30;
        has_min = true;
        j += 2;
    } else {
        let mut k = j;
        if t.at(k) == '过' || t.at(k) == '零' && t.at(k + 1).is_ascii_digit() {
            k += 1;
        }
        if let Some((mm, e2, _)) = int_any(t, k) {
            if t.at(e2) == '刻' && (1..=3).contains(&mm) && t.at(e2 + 1) != '钟' {
                m = mm * 15;
                has_min = true;
                j = e2 + 1;
            } else if mm <= 59
                && !matches!(
                    t.at(e2),
                    '点' | '时'
                        | '号'
                        | '日'
                        | '月'
                        | '个'
                        | '天'
                        | '年'
                        | '小'
                        | '刻'
                        | '周'
                        | '星'
                        | '岁'
                        | '次'
                        | '人'
                        | '.'
                        | '%'
                )
                // "七点一起去", "三点一下": 一 starts a word there, it is no minute
                && !(t.at(k) == '一' && e2 == k + 1 && "起下些会直定样般共同块边道切旦".contains(t.at(e2)))
                && !(t.at(e2) == '分'
                    && t.at(e2 + 1) == '钟'
                    && matches!(t.at(e2 + 2), '后' | '前' | '以' | '之'))
            {
                m = mm;
                has_min = true;
                j = e2;
                if t.at(j) == '分' {
                    j += 1;
                    if let Some((s, e3, _)) = int_any(t, j)
                        && s <= 59
                        && t.at(e3) == '秒'
                    {
                        j = e3 + 1;
                    }
                }
            }
        }
    }
    (h, m, has_min, j)
}

/// Two neighbouring hours said together, "两三点" (2 or 3 o'clock), "七八点", "十一二点": the first
/// hour, the end of its numeral, and the second hour's clock time with its end. The lexer makes
/// them a range (下午两三点 = 14:00-15:00) whose `confidence` is `inferred`, since either hour may
/// be meant. "一两点" only after a part of day (凌晨一两点); "有一两点建议" counts points.
pub(crate) fn hour_pair(t: &Text, i: usize) -> Option<(Clock, usize, Clock, usize)> {
    let (a, e1) = zh_int(t, i)?;
    let b = zh_digit(t.at(e1))?;
    let second = match a {
        2..=8 if b == a + 1 => b,
        1 if b == 2 && "午晨上里晚夜".contains(t.before(i)) => 2,
        11 if b == 2 => 12,
        _ => return None,
    };
    if "第这那几有".contains(t.before(i)) {
        return None;
    }
    let (e2, atom) = clock(t, e1)?;
    let Atom::Clock(c2) = atom else { return None };
    if c2.mer.is_some() {
        return None;
    }
    let first = Clock {
        guessed: true,
        ..Clock::bare(a)
    };
    Some((first, e1, Clock { h: second, absolute: second > 12, ..c2 }, e2))
}

/// "差一刻", "差5分", "差十分钟" at `j`: the minutes short of the hour (1..=59) and the end.
fn minutes_short(t: &Text, j: usize) -> Option<(u32, usize)> {
    if t.at(j) != '差' {
        return None;
    }
    let (n, e, _) = int_any(t, j + 1)?;
    let (minutes, e) = match t.at(e) {
        '刻' if (1..=3).contains(&n) => (n * 15, e + 1),
        '分' => (n, if t.at(e + 1) == '钟' { e + 2 } else { e + 1 }),
        _ => return None,
    };
    (1..=59).contains(&minutes).then_some((minutes, e))
}

/// "差5分8点", "差一刻九点": a clock time written after the minutes short of it.
pub(super) fn clock_after_minutes_short(t: &Text, i: usize) -> Option<(usize, Atom)> {
    let (before, e) = minutes_short(t, i)?;
    let (end, atom) = clock(t, e)?;
    let Atom::Clock(c) = atom else { return None };
    if c.has_min || c.h == 0 {
        return None;
    }
    Some((
        end,
        Atom::Clock(Clock {
            h: c.h - 1,
            m: 60 - before,
            has_min: true,
            absolute: c.h - 1 > 12,
            ..c
        }),
    ))
}

/// Parts of day (凌晨, 下午, 今晚, 明早) and midnight (午夜).
#[inline]
pub(super) fn part_of_day_words(t: &Text, i: usize, best: &mut Best) {
    for &(p, d, k) in DAY_SEGS {
        if let Some(e) = t.lit(i, p) {
            best.offer(
                e,
                Atom::Seg(SegAtom {
                    kind: k,
                    day: Some(d),
                    daily: false,
                }),
            );
        }
    }
    for &(p, k) in SEGS {
        if let Some(e) = t.lit(i, p) {
            best.offer(
                e,
                Atom::Seg(SegAtom {
                    kind: k,
                    day: None,
                    daily: false,
                }),
            );
        }
    }
    if let Some(e) = t.lit(i, "午夜") {
        // "午夜12点", "午夜十二点" = midnight too
        let e = t.lit_longest(e, &["12点", "十二点", "12点整", "十二点整"]).map_or(e, |x| x.0);
        best.offer(e, Atom::Clock(Clock::midnight()));
    }
}
