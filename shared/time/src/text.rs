//! The normalised input: one char per original code point (see [`normalize_char`]), plus small
//! matching helpers.

pub(crate) struct Text {
    c: Vec<char>,
    /// The first two UTF-8 bytes of each char of `c` (see [`utf8_lead`]), worked out once here:
    /// [`Text::lit`] compares them with every table entry at every position.
    lead: Vec<(u8, u8)>,
    /// An apostrophe stands somewhere in the text (so a possessive may: "next month's").
    apostrophe: bool,
    /// When typos were corrected ([`super::typos`]): the original code point of each char of `c`,
    /// and one more entry for the end. `None` when `c` maps one-to-one onto the original.
    original: Option<Vec<usize>>,
    /// The corrected words, as ranges of `c`.
    typos: Vec<(usize, usize)>,
}

impl Text {
    pub(crate) fn new(s: &str) -> Text {
        // sized for the whole text at once: collecting from `chars()` would grow it several times
        let mut c = Vec::with_capacity(s.len());
        let mut lead = Vec::with_capacity(s.len());
        let mut apostrophe = false;
        for ch in s.chars() {
            if ch.is_ascii() {
                // most input is ASCII: lower-casing is all its normalisation
                apostrophe |= ch == '\'';
                let n = ch.to_ascii_lowercase();
                c.push(n);
                lead.push((n as u8, 0));
                continue;
            }
            apostrophe |= ch == '’';
            let n = normalize_char(ch);
            c.push(n);
            lead.push(utf8_lead(n));
        }
        let mut t = Text { c, lead, apostrophe, original: None, typos: Vec::new() };
        t.correct_typos();
        t
    }

    /// Replace each English word that is a typo of a day, month or part-of-day name by that name
    /// ([`super::typos::correction`]), keeping the map back to the original code points.
    fn correct_typos(&mut self) {
        let mut fixes: Vec<(usize, usize, &'static str)> = Vec::new();
        let mut i = 0;
        while i < self.c.len() {
            if !self.c[i].is_ascii_lowercase() || !self.word_start(i) {
                i += 1;
                continue;
            }
            let mut e = i;
            while self.c.get(e).is_some_and(|c| c.is_ascii_lowercase()) {
                e += 1;
            }
            // the listed misspellings ("tommorow") are read as written, not guessed
            let listed = || ABBREVIATIONS.iter().any(|(_, short)| short.iter().any(|a| a.len() == e - i && a.chars().eq(self.c[i..e].iter().copied())));
            if e - i >= 5
                && !self.is_alnum(e)
                && let Some(name) = super::typos::correction(&self.c[i..e])
                && !listed()
            {
                fixes.push((i, e, name));
            }
            i = e;
        }
        if fixes.is_empty() {
            return;
        }
        let (mut c, mut original, mut typos) = (Vec::with_capacity(self.c.len() + 4), Vec::new(), Vec::new());
        let mut at = 0;
        for (s, e, name) in fixes {
            for k in at..s {
                c.push(self.c[k]);
                original.push(k);
            }
            typos.push((c.len(), c.len() + name.len()));
            for (k, ch) in name.chars().enumerate() {
                c.push(ch);
                original.push(s + k.min(e - s - 1));
            }
            at = e;
        }
        for k in at..self.c.len() {
            c.push(self.c[k]);
            original.push(k);
        }
        original.push(self.c.len());
        self.lead = c.iter().map(|&ch| utf8_lead(ch)).collect();
        self.c = c;
        self.original = Some(original);
        self.typos = typos;
    }

    /// The original code point of position `i` of the normalised text (`len()` maps to the end).
    pub(crate) fn to_original(&self, i: usize) -> usize {
        self.original.as_ref().map_or(i, |m| m[i.min(m.len() - 1)])
    }

    /// Whether a corrected typo lies within `s..e`.
    pub(crate) fn typo_within(&self, s: usize, e: usize) -> bool {
        self.typos.iter().any(|&(a, b)| s <= a && b <= e)
    }

    /// Whether an apostrophe stands anywhere in the text: possessives are looked for only then.
    #[inline]
    pub(crate) fn has_apostrophe(&self) -> bool {
        self.apostrophe
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.c.len()
    }

    /// Char at `i`, or '\0' past the end.
    #[inline]
    pub(crate) fn at(&self, i: usize) -> char {
        self.c.get(i).copied().unwrap_or('\0')
    }

    /// Char before `i`, or '\0' at the start.
    #[inline]
    pub(crate) fn before(&self, i: usize) -> char {
        if i == 0 { '\0' } else { self.at(i - 1) }
    }

    /// Literal match of `s` at `i`; returns the end.
    #[inline]
    pub(crate) fn lit(&self, i: usize, s: &str) -> Option<usize> {
        // most calls fail at the first character: compare its leading UTF-8 bytes with the
        // pattern's before decoding the pattern (the word tables are tried at every position)
        if !lead_fits(self.lead.get(i).copied(), s) {
            return None;
        }
        self.lit_chars(i, s)
    }

    /// [`Text::lit`] after its first-bytes check: `s` char by char.
    fn lit_chars(&self, i: usize, s: &str) -> Option<usize> {
        let mut j = i;
        for ch in s.chars() {
            if self.c.get(j) != Some(&ch) {
                return None;
            }
            j += 1;
        }
        Some(j)
    }

    /// Longest of several literals at `i`: (end, index in `pats`).
    pub(crate) fn lit_longest(&self, i: usize, pats: &[&str]) -> Option<(usize, usize)> {
        self.lit_longest_in(i, pats, |p: &&str| *p)
    }

    #[inline]
    pub(crate) fn is_alnum(&self, i: usize) -> bool {
        self.at(i).is_ascii_alphanumeric()
    }

    /// `i` starts a word (not preceded by an ASCII letter or digit).
    #[inline]
    pub(crate) fn word_start(&self, i: usize) -> bool {
        !self.before(i).is_ascii_alphanumeric()
    }

    /// English phrase at a word start: a space in `pat` matches one or more whitespace chars;
    /// the phrase must end at a word end (unless it ends in punctuation). A word of `pat` also
    /// matches its common abbreviations ("nxt wk" for "next week", see [`ABBREVIATIONS`]).
    #[inline(always)]
    pub(crate) fn phrase(&self, i: usize, pat: &str) -> Option<usize> {
        // the first letter decides most calls (abbreviations keep their word's first letter);
        // this check is inlined into every table loop, the rest is not
        if pat.as_bytes().first().map(|&b| b as char) != Some(self.at(i)) {
            return None;
        }
        self.phrase_rest(i, pat)
    }

    #[inline(never)]
    fn phrase_rest(&self, i: usize, pat: &str) -> Option<usize> {
        if !self.word_start(i) {
            return None;
        }
        self.phrase_words(i, pat)
    }

    /// [`Text::phrase`] after its word-start check: the words, then the word end.
    fn phrase_words(&self, i: usize, pat: &str) -> Option<usize> {
        let j = self.match_words(i, pat)?;
        let last = pat.chars().last().unwrap_or(' ');
        if last.is_ascii_alphanumeric() && self.is_alnum(j) {
            return None;
        }
        Some(j)
    }

    /// The words of `pat` at `i` (no word-end check at the end): its end. Character by character,
    /// since this runs for every table entry at every word; only a mismatch after a word's first
    /// letter looks for an abbreviation of that word.
    fn match_words(&self, i: usize, pat: &str) -> Option<usize> {
        let bytes = pat.as_bytes();
        let mut j = i;
        let (mut word_at, mut word_p) = (i, 0);
        let mut p = 0;
        while p < bytes.len() {
            // patterns are mostly ASCII: decode only the other chars
            let (ch, width) = if bytes[p] < 0x80 {
                (bytes[p] as char, 1)
            } else {
                let ch = pat[p..].chars().next()?;
                (ch, ch.len_utf8())
            };
            if ch == ' ' {
                let k = self.skip_ws(j);
                if k == j {
                    return None;
                }
                j = k;
                (word_at, word_p) = (j, p + 1);
            } else if self.c.get(j) == Some(&ch) {
                j += 1;
            } else {
                if p == word_p {
                    return None;
                }
                let word_end = pat.as_bytes()[p..].iter().position(|&b| b == b' ').map_or(pat.len(), |x| p + x);
                let e = self.abbreviation(word_at, &pat[word_p..word_end])?;
                if word_end == pat.len() {
                    return Some(e);
                }
                let k = self.skip_ws(e);
                if k == e {
                    return None;
                }
                return self.match_words(k, &pat[word_end + 1..]);
            }
            p += width;
        }
        Some(j)
    }

    /// An abbreviation of `word` at `j` that ends a word: its end.
    fn abbreviation(&self, j: usize, word: &str) -> Option<usize> {
        // (every abbreviation starts with its word's first letter, which the only caller has
        // already matched at `j`); most near misses end here: `word` is not one of the few
        // abbreviated words
        let (b0, len) = (word.as_bytes()[0], word.len());
        if !b0.is_ascii_lowercase() || len > 15 {
            return None;
        }
        let short = match ABBREVIATED_WORD[(b0 - b'a') as usize][len] {
            0 => return None,
            u8::MAX => ABBREVIATIONS.iter().find(|(w, _)| *w == word)?.1,
            k => {
                let (w, short) = ABBREVIATIONS[k as usize - 1];
                if w != word {
                    return None;
                }
                short
            }
        };
        short.iter().find_map(|a| self.lit(j, a).filter(|&e| !self.is_alnum(e)))
    }

    /// Longest literal among the keys of a table: (end, index).
    pub(crate) fn lit_longest_in<T>(
        &self,
        i: usize,
        items: &[T],
        key: impl Fn(&T) -> &str,
    ) -> Option<(usize, usize)> {
        // the first bytes of the char at `i` once, not per entry
        let lead = self.lead.get(i).copied();
        self.longest_in(i, items, key, |t, i, s| if lead_fits(lead, s) { t.lit_chars(i, s) } else { None })
    }

    /// Longest phrase among the keys of a table: (end, index).
    pub(crate) fn phrase_longest_in<T>(
        &self,
        i: usize,
        items: &[T],
        key: impl Fn(&T) -> &str,
    ) -> Option<(usize, usize)> {
        // the char at `i` and whether a word starts there once, not per entry
        let c = self.at(i);
        if !self.word_start(i) {
            return None;
        }
        self.longest_in(i, items, key, |t, i, pat| {
            if pat.as_bytes().first().map(|&b| b as char) == Some(c) { t.phrase_words(i, pat) } else { None }
        })
    }

    /// The key of `items` that `matches` finds ending furthest right at `i`: (end, index).
    fn longest_in<T>(
        &self,
        i: usize,
        items: &[T],
        key: impl Fn(&T) -> &str,
        matches: impl Fn(&Self, usize, &str) -> Option<usize>,
    ) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (k, it) in items.iter().enumerate() {
            if let Some(e) = matches(self, i, key(it))
                && best.is_none_or(|(be, _)| e > be)
            {
                best = Some((e, k));
            }
        }
        best
    }

    /// First matching phrase among `pats` (longest wins): (end, index).
    pub(crate) fn phrase_longest(&self, i: usize, pats: &[&str]) -> Option<(usize, usize)> {
        self.phrase_longest_in(i, pats, |p: &&str| *p)
    }

    pub(crate) fn skip_ws(&self, i: usize) -> usize {
        let mut j = i;
        while j < self.c.len() && self.c[j].is_whitespace() {
            j += 1;
        }
        j
    }

    /// True when only whitespace lies in `a..b`.
    pub(crate) fn gap_is_ws(&self, a: usize, b: usize) -> bool {
        a <= b && self.c[a..b].iter().all(|c| c.is_whitespace())
    }

    /// How many times `c` occurs in `a..b`.
    pub(crate) fn count(&self, a: usize, b: usize, c: char) -> usize {
        self.c[a..b].iter().filter(|&&x| x == c).count()
    }

    /// The previous English word before `i` (skipping whitespace), as (start, end).
    pub(crate) fn prev_word(&self, i: usize) -> Option<(usize, usize)> {
        let mut j = i;
        while j > 0 && self.c[j - 1].is_whitespace() {
            j -= 1;
        }
        let end = j;
        while j > 0 && self.c[j - 1].is_ascii_alphabetic() {
            j -= 1;
        }
        if j == end { None } else { Some((j, end)) }
    }

    /// True when the word in `s..e` equals `w`.
    pub(crate) fn word_eq(&self, (s, e): (usize, usize), w: &str) -> bool {
        e - s == w.len() && self.lit(s, w).is_some()
    }

    /// The substring of the original text for code points `s..e`.
    pub(crate) fn original_slice(&self, original: &str, s: usize, e: usize) -> String {
        // one copy of the bytes between the two code points, not a push per char
        let byte = |n: usize| original.char_indices().nth(n).map_or(original.len(), |(b, _)| b);
        let bs = byte(s);
        let be = bs + original[bs..].char_indices().nth(e - s).map_or(original.len() - bs, |(b, _)| b);
        original[bs..be].to_string()
    }
}

/// Common abbreviations and misspellings of the English words the lexers look for; each starts
/// with its word's first letter.
pub(crate) const ABBREVIATIONS: &[(&str, &[&str])] = &[
    ("next", &["nxt"]),
    ("week", &["wk"]),
    ("weeks", &["wks"]),
    ("weekend", &["wknd", "wkend"]),
    (
        "tomorrow",
        &["tmrw", "tmr", "tmw", "tmrow", "tmro", "tmrrw", "tmorrow", "tomo", "tomoz", "tomorow", "tomorrw", "tommorow", "tommorrow"],
    ),
    ("yesterday", &["yday", "yest"]),
    ("today", &["tdy"]),
    ("tonight", &["tonite", "tonit"]),
    ("night", &["nite"]),
    ("minutes", &["mins"]),
    ("minute", &["min"]),
    ("hours", &["hrs"]),
    ("hour", &["hr"]),
    ("month", &["mth", "mo"]),
    ("months", &["mths", "mos"]),
    ("year", &["yr"]),
    ("years", &["yrs"]),
    ("morning", &["morn"]),
    ("afternoon", &["aftn", "arvo"]),
    ("business", &["biz"]),
];

/// The words of [`ABBREVIATIONS`] by first letter (a-z) and length: 0 none, `u8::MAX` several,
/// else the index of the only one plus one.
const ABBREVIATED_WORD: [[u8; 16]; 26] = {
    let mut m = [[0u8; 16]; 26];
    let mut k = 0;
    while k < ABBREVIATIONS.len() {
        let w = ABBREVIATIONS[k].0.as_bytes();
        assert!(w[0].is_ascii_lowercase() && w.len() < 16 && k + 1 < u8::MAX as usize);
        let slot = &mut m[(w[0] - b'a') as usize][w.len()];
        *slot = if *slot == 0 { k as u8 + 1 } else { u8::MAX };
        k += 1;
    }
    m
};

/// Whether pattern `s` may match a char whose first UTF-8 bytes are `lead` (`None`: past the
/// end, left to the char comparison): its first byte, and its second after a multi-byte lead.
#[inline(always)]
fn lead_fits(lead: Option<(u8, u8)>, s: &str) -> bool {
    match (lead, s.as_bytes().first()) {
        (Some((b0, b1)), Some(&p0)) => p0 == b0 && (b0 < 0xC0 || s.as_bytes().get(1) == Some(&b1)),
        _ => true,
    }
}

/// The first two bytes of `c` in UTF-8 (the second is 0 for ASCII).
#[inline]
fn utf8_lead(c: char) -> (u8, u8) {
    let u = c as u32;
    if u < 0x80 {
        (u as u8, 0)
    } else if u < 0x800 {
        (0xC0 | (u >> 6) as u8, 0x80 | (u & 0x3F) as u8)
    } else if u < 0x1_0000 {
        (0xE0 | (u >> 12) as u8, 0x80 | ((u >> 6) & 0x3F) as u8)
    } else {
        (0xF0 | (u >> 18) as u8, 0x80 | ((u >> 12) & 0x3F) as u8)
    }
}

/// Normalise one character. The mapping is one-to-one so that spans stay valid.
pub(crate) fn normalize_char(c: char) -> char {
    let c = match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3000}' | '\u{00A0}' => ' ',
        _ => c,
    };
    if c.is_ascii_uppercase() {
        return c.to_ascii_lowercase();
    }
    match c {
        '後' => '后',
        '週' => '周',
        '點' => '点',
        '時' => '时',
        '號' => '号',
        '個' => '个',
        '禮' => '礼',
        '鐘' | '鍾' => '钟',
        '兩' => '两',
        '倆' => '俩',
        '兒' => '儿',
        '這' => '这',
        '從' => '从',
        '當' => '当',
        '聽' => '听',
        '尋' => '寻',
        '晝' => '昼',
        '現' => '现',
        '間' => '间',
        '淩' => '凌',
        '裡' | '裏' => '里',
        '為' => '为',
        '續' => '续',
        '開' => '开',
        '過' => '过',
        '來' => '来',
        '頭' => '头',
        '〇' => '零',
        // the characters of the holiday names (聖誕節, 國慶, 中秋節, 重陽, 勞動節, 農曆新年, 臘八)
        '節' => '节',
        '聖' => '圣',
        '誕' => '诞',
        '國' => '国',
        '慶' => '庆',
        '陽' => '阳',
        '勞' => '劳',
        '動' => '动',
        '親' => '亲',
        '萬' => '万',
        '師' => '师',
        '農' => '农',
        '曆' | '歷' => '历',
        '臘' => '腊',
        '復' => '复',
        '婦' => '妇',
        '軍' => '军',
        '黨' => '党',
        '—' | '–' | '−' | '‒' | '―' => '-',
        '〜' | '∼' => '~',
        // a typed apostrophe: "new year’s eve", "next month’s"
        '’' => '\'',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_are_short_unique_words_of_their_word_s_first_letter() {
        let mut seen = std::collections::HashSet::new();
        for &(word, short) in ABBREVIATIONS {
            for &a in short {
                assert!((2..=9).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_lowercase()), "{a}");
                assert_eq!(a.as_bytes()[0], word.as_bytes()[0], "{a}");
                assert!(seen.insert(a), "{a} twice");
            }
        }
    }

    #[test]
    fn a_phrase_matches_abbreviations_of_any_of_its_words() {
        let t = Text::new("nxt wk, next wks, tmrw morn, tomorrowxy, wk");
        assert_eq!(t.phrase(0, "next week"), Some(6));
        assert_eq!(t.phrase(8, "next weeks"), Some(16));
        assert_eq!(t.phrase(8, "next week"), None);
        assert_eq!(t.phrase(18, "tomorrow morning"), Some(27));
        assert_eq!(t.phrase(18, "tomorrow"), Some(22));
        assert_eq!(t.phrase(29, "tomorrow"), None);
        assert_eq!(t.phrase(41, "week"), Some(43));
        assert_eq!(t.phrase(41, "weekend"), None);
    }
}
