//! Number parsing over normalised text: ASCII digits, decimals, Chinese numerals
//! (零一二两三四五六七八九十百廿卅, and the colloquial 俩 = 2 and 仨 = 3) and English number words.

use super::text::Text;

/// Value of one Chinese digit character.
pub(crate) fn zh_digit(c: char) -> Option<u32> {
    Some(match c {
        '零' => 0,
        '一' => 1,
        '二' | '两' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        _ => return None,
    })
}

/// True for characters that can start or continue a Chinese numeral.
pub(crate) fn is_zh_num_char(c: char) -> bool {
    zh_digit(c).is_some() || matches!(c, '十' | '百' | '廿' | '卅' | '俩' | '仨')
}

/// The colloquial numerals 俩 (two) and 仨 (three) at `i`: a whole number on their own, standing
/// where 两个/三个 would ("俩点", "仨小时", "俩天后"). Not after a pronoun or a word for people,
/// where they count the people ("我们俩", "咱俩", "哥儿俩", "夫妻俩", "他们仨").
pub(crate) fn zh_colloquial(t: &Text, i: usize) -> Option<u32> {
    let v = match t.at(i) {
        '俩' => 2,
        '仨' => 3,
        _ => return None,
    };
    let mut b = t.before(i);
    if b == '儿' && i >= 1 {
        b = t.before(i - 1);
    }
    if "们咱你我他她它俺您哥弟姐妹兄娘爹爷妻夫父母子女".contains(b) {
        return None;
    }
    Some(v)
}

/// ASCII integer (1..=9 digits) at `i`: (value, end, digit count).
pub(crate) fn ascii_int(t: &Text, i: usize) -> Option<(u32, usize, usize)> {
    let mut j = i;
    let mut v: u32 = 0;
    while j < t.len() && t.at(j).is_ascii_digit() && j - i < 9 {
        v = v * 10 + (t.at(j) as u32 - '0' as u32);
        j += 1;
    }
    if j == i || t.at(j).is_ascii_digit() {
        return None;
    }
    Some((v, j, j - i))
}

/// Chinese numeral 0..=999 at `i` ("十", "十二", "二十五", "两", "一百零五", "廿三", "零五").
/// Stops before a second digit in a row ("一三五" reads only "一").
pub(crate) fn zh_int(t: &Text, i: usize) -> Option<(u32, usize)> {
    if matches!(t.at(i), '俩' | '仨') {
        return zh_colloquial(t, i).map(|v| (v, i + 1));
    }
    let mut j = i;
    let mut total = 0u32;
    let mut cur: Option<u32> = None;
    let mut any = false;
    loop {
        let c = t.at(j);
        if let Some(d) = zh_digit(c) {
            if d == 0 {
                if cur.is_some() {
                    break;
                }
                any = true;
                j += 1;
                continue;
            }
            if cur.is_some() {
                break;
            }
            cur = Some(d);
            any = true;
            j += 1;
        } else if c == '十' {
            if total % 100 >= 10 {
                break;
            }
            total += cur.take().unwrap_or(1) * 10;
            any = true;
            j += 1;
        } else if c == '百' {
            let Some(d) = cur.take() else { break };
            if total > 0 {
                break;
            }
            total += d * 100;
            j += 1;
        } else if c == '廿' || c == '卅' {
            if any {
                break;
            }
            total += if c == '廿' { 20 } else { 30 };
            any = true;
            j += 1;
        } else {
            break;
        }
    }
    if !any {
        return None;
    }
    Some((total + cur.unwrap_or(0), j))
}

/// A run of Chinese digits read digit by digit ("二零一五" = 2015, "零七" = 7): (value, end, count).
pub(crate) fn zh_digit_seq(t: &Text, i: usize) -> Option<(u32, usize, usize)> {
    let mut j = i;
    let mut v = 0u32;
    while let Some(d) = zh_digit(t.at(j)) {
        if j - i >= 4 {
            return None;
        }
        v = v * 10 + d;
        j += 1;
    }
    if j == i {
        return None;
    }
    Some((v, j, j - i))
}

/// Integer written in ASCII digits or Chinese numerals: (value, end, is_ascii).
pub(crate) fn int_any(t: &Text, i: usize) -> Option<(u32, usize, bool)> {
    if t.at(i).is_ascii_digit() {
        let (v, e, _) = ascii_int(t, i)?;
        Some((v, e, true))
    } else {
        let (v, e) = zh_int(t, i)?;
        Some((v, e, false))
    }
}

/// A non-negative decimal number in ASCII ("2", "1.5", "0.25"), as hundredths: (value*100, end).
/// Amounts above this many units are not read (keeps all later arithmetic far from overflow).
pub(crate) const MAX_AMOUNT: u32 = 100_000;

pub(crate) fn ascii_decimal_hundredths(t: &Text, i: usize) -> Option<(u32, usize)> {
    let (int, mut j, _) = ascii_int(t, i)?;
    if int > MAX_AMOUNT {
        return None;
    }
    let mut v = int.checked_mul(100)?;
    if t.at(j) == '.' && t.at(j + 1).is_ascii_digit() {
        let d1 = t.at(j + 1) as u32 - '0' as u32;
        v += d1 * 10;
        j += 2;
        if t.at(j).is_ascii_digit() {
            v += t.at(j) as u32 - '0' as u32;
            j += 1;
        }
        if t.at(j).is_ascii_digit() {
            return None;
        }
    }
    Some((v, j))
}

const EN_UNITS: [(&str, u32); 20] = [
    ("zero", 0),
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("thirteen", 13),
    ("fourteen", 14),
    ("fifteen", 15),
    ("sixteen", 16),
    ("seventeen", 17),
    ("eighteen", 18),
    ("nineteen", 19),
];

const EN_TENS: [(&str, u32); 8] = [
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("fifty", 50),
    ("sixty", 60),
    ("seventy", 70),
    ("eighty", 80),
    ("ninety", 90),
];

/// English number word 0..=99 at a word start ("three", "twenty-five", "thirty five").
pub(crate) fn en_number_word(t: &Text, i: usize) -> Option<(u32, usize)> {
    // the first two letters of every number word: most words end here ("to", "next", "from")
    if !matches!(
        (t.at(i), t.at(i + 1)),
        ('z', 'e') | ('o', 'n') | ('t', 'w' | 'h' | 'e') | ('f', 'o' | 'i') | ('s', 'i' | 'e') | ('e', 'i' | 'l') | ('n', 'i')
    ) || !t.word_start(i)
    {
        return None;
    }
    for (w, v) in EN_TENS {
        if let Some(e) = t.lit(i, w)
            && !t.is_alnum(e)
        {
            // optional "-five" / " five"
            let k = if t.at(e) == '-' { e + 1 } else { t.skip_ws(e) };
            if k > e {
                for (u, uv) in &EN_UNITS[1..10] {
                    if let Some(e2) = t.lit(k, u)
                        && !t.is_alnum(e2)
                    {
                        return Some((v + uv, e2));
                    }
                }
            }
            return Some((v, e));
        }
    }
    // longest unit word first ("seventeen" before "seven")
    longest_whole_word(t, i, &EN_UNITS)
}

/// The longest of `words` standing as a whole word at `i`: (value, end).
fn longest_whole_word(t: &Text, i: usize, words: &[(&str, u32)]) -> Option<(u32, usize)> {
    let mut best: Option<(u32, usize)> = None;
    for &(w, v) in words {
        if let Some(e) = t.lit(i, w)
            && !t.is_alnum(e)
            && best.is_none_or(|(_, be)| e > be)
        {
            best = Some((v, e));
        }
    }
    best
}

const EN_ORDINALS: [(&str, u32); 19] = [
    ("first", 1),
    ("second", 2),
    ("third", 3),
    ("fourth", 4),
    ("fifth", 5),
    ("sixth", 6),
    ("seventh", 7),
    ("eighth", 8),
    ("ninth", 9),
    ("tenth", 10),
    ("eleventh", 11),
    ("twelfth", 12),
    ("thirteenth", 13),
    ("fourteenth", 14),
    ("fifteenth", 15),
    ("sixteenth", 16),
    ("seventeenth", 17),
    ("eighteenth", 18),
    ("nineteenth", 19),
];

/// English ordinal 1..=31 in words or digits at a word start: "second", "twenty-second",
/// "twenty second", "thirtieth", "thirty first", "22nd", "3rd". (value, end).
pub(crate) fn en_ordinal(t: &Text, i: usize) -> Option<(u32, usize)> {
    let c = t.at(i);
    // digits, or the first two letters of an ordinal word
    if !(c.is_ascii_digit()
        || matches!((c, t.at(i + 1)), ('f', 'i' | 'o') | ('s', 'e' | 'i') | ('t', 'h' | 'e' | 'w') | ('e', 'i' | 'l') | ('n', 'i')))
        || !t.word_start(i)
    {
        return None;
    }
    if t.at(i).is_ascii_digit() {
        let (v, e, n) = ascii_int(t, i)?;
        if n > 2 {
            return None;
        }
        let (e2, _) = t.lit_longest(e, &["st", "nd", "rd", "th"])?;
        return (!t.is_alnum(e2)).then_some((v, e2));
    }
    let single = |k: usize| longest_whole_word(t, k, &EN_ORDINALS);
    for (w, v, whole) in [("twenty", 20, "twentieth"), ("thirty", 30, "thirtieth")] {
        if let Some(e) = t.lit(i, whole)
            && !t.is_alnum(e)
        {
            return Some((v, e));
        }
        if let Some(e) = t.lit(i, w)
            && !t.is_alnum(e)
        {
            let k = if t.at(e) == '-' { e + 1 } else { t.skip_ws(e) };
            if k > e
                && let Some((u, e2)) = single(k)
                && u <= 9
            {
                return Some((v + u, e2));
            }
            return None;
        }
    }
    single(i)
}

/// A year in English words: "twenty twenty-seven", "nineteen ninety nine", "two thousand
/// twenty seven", "two thousand and five". (year, end).
pub(crate) fn en_year_words(t: &Text, i: usize) -> Option<(i32, usize)> {
    let (hi, e) = en_number_word(t, i)?;
    let k = t.skip_ws(e);
    if k == e {
        return None;
    }
    if hi == 2
        && let Some(x) = t.phrase(k, "thousand")
    {
        let mut k2 = t.skip_ws(x);
        if let Some(x2) = t.phrase(k2, "and") {
            k2 = t.skip_ws(x2);
        }
        return match en_number_word(t, k2) {
            Some((lo, e2)) if k2 > x && (1..=99).contains(&lo) => Some((2000 + lo as i32, e2)),
            _ => Some((2000, x)),
        };
    }
    if !(19..=21).contains(&hi) {
        return None;
    }
    let (lo, e2) = en_number_word(t, k)?;
    (10..=99).contains(&lo).then_some((hi as i32 * 100 + lo as i32, e2))
}
