//! Small text helpers for reading sentences.

/// Removes the code-point ranges `spans` (sorted, non-overlapping) from `text`, replacing each with
/// a space so neighbouring words stay apart.
pub fn remove_spans(text: &str, spans: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut spans = spans.iter().peekable();
    for (i, c) in text.chars().enumerate() {
        while spans.peek().is_some_and(|(_, end)| *end <= i) {
            spans.next();
        }
        match spans.peek() {
            Some((start, end)) if (*start..*end).contains(&i) => {
                if i == *start {
                    out.push(' ');
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Collapses runs of whitespace and trims.
pub fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Trims punctuation, spaces and the given filler words from both ends, repeatedly.
pub fn trim_fillers(text: &str, fillers: &[&str]) -> String {
    let mut current = squash(text);
    loop {
        let before = current.clone();
        current = current
            .trim_matches(|c: char| c.is_whitespace() || is_punctuation(c))
            .to_owned();
        for filler in fillers {
            if let Some(rest) = strip_prefix_word(&current, filler) {
                current = rest.trim().to_owned();
            }
            if let Some(rest) = strip_suffix_word(&current, filler) {
                current = rest.trim().to_owned();
            }
        }
        if current == before {
            return current;
        }
    }
}

/// `text` without `word` at its start; for ASCII words only at a word boundary, case-insensitive.
pub fn strip_prefix_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let (head, rest) = text.split_at_checked(word.len())?;
    let found = !word.is_empty() && head.eq_ignore_ascii_case(word);
    (found && at_word_boundary(word.chars().last(), rest.chars().next())).then_some(rest)
}

/// `text` without `word` at its end; for ASCII words only at a word boundary, case-insensitive.
pub fn strip_suffix_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let (rest, tail) = text.split_at_checked(text.len().checked_sub(word.len())?)?;
    let found = !word.is_empty() && tail.eq_ignore_ascii_case(word);
    (found && at_word_boundary(word.chars().next(), rest.chars().last())).then_some(rest)
}

/// Whether a word whose outer letter is `edge` may stand against `neighbour`: an ASCII word must
/// not run on into another ASCII letter or digit (a Chinese word may).
fn at_word_boundary(edge: Option<char>, neighbour: Option<char>) -> bool {
    let alphanumeric = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    !(alphanumeric(edge) && alphanumeric(neighbour))
}

pub fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || "，。！？；：、,.!?;:“”‘’\"'（）()【】[]《》<>…—~～·".contains(c)
}

/// Byte offset of the first occurrence of any of `words` in `text` (case-insensitive for ASCII),
/// with the word found. ASCII words match at word boundaries only.
pub fn find_any<'w>(text: &str, words: &[&'w str]) -> Option<(usize, &'w str)> {
    let lower = text.to_lowercase();
    let mut best: Option<(usize, &'w str)> = None;
    for word in words {
        let needle = word.to_lowercase();
        let mut from = 0;
        while let Some(pos) = lower[from..].find(&needle) {
            let at = from + pos;
            let end = at + needle.len();
            // An ASCII word that starts (ends) with a letter or digit must not continue one.
            let starts_word = needle.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
            let ends_word = needle.chars().last().is_some_and(|c| c.is_ascii_alphanumeric());
            let boundary_ok = (!starts_word || !lower[..at].chars().last().is_some_and(|c| c.is_ascii_alphanumeric()))
                && (!ends_word || !lower[end..].chars().next().is_some_and(|c| c.is_ascii_alphanumeric()));
            if boundary_ok {
                if best.is_none_or(|(b, w)| at < b || (at == b && word.len() > w.len())) {
                    best = Some((at, word));
                }
                break;
            }
            from = at + needle.chars().next().map_or(1, char::len_utf8);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_removed_by_code_point() {
        assert_eq!(squash(&remove_spans("明天下午3点到4点开会", &[(0, 9)])), "开会");
        assert_eq!(squash(&remove_spans("call mom tomorrow at 5pm", &[(9, 24)])), "call mom");
    }

    #[test]
    fn fillers_are_trimmed_at_word_boundaries() {
        assert_eq!(trim_fillers("remind me to call mom", &["remind me to", "to"]), "call mom");
        assert_eq!(trim_fillers("  提醒我 吃药。", &["提醒我"]), "吃药");
        assert_eq!(trim_fillers("todo: buy milk", &["todo"]), "buy milk");
        assert_eq!(trim_fillers("toddler party", &["to"]), "toddler party");
    }

    #[test]
    fn words_are_stripped_only_whole_and_at_character_boundaries() {
        assert_eq!(strip_prefix_word("Todo: buy milk", "todo"), Some(": buy milk"));
        assert_eq!(strip_prefix_word("toddler party", "to"), None);
        assert_eq!(strip_prefix_word("提醒我吃药", "提醒我"), Some("吃药"), "a Chinese word needs no boundary");
        assert_eq!(strip_prefix_word("提醒", "ab"), None, "two bytes into 提 is inside a character");
        assert_eq!(strip_prefix_word("anything", ""), None);
        assert_eq!(strip_suffix_word("call mom Please", "please"), Some("call mom "));
        assert_eq!(strip_suffix_word("displease", "please"), None);
        assert_eq!(strip_suffix_word("吃药吧", "吧"), Some("吃药"));
        assert_eq!(strip_suffix_word("吃药", "ab"), None, "two bytes before the end is inside a character");
        assert_eq!(strip_suffix_word("to", "todo"), None);
    }

    #[test]
    fn words_are_found_at_boundaries() {
        assert_eq!(find_any("please move it", &["move"]), Some((7, "move")));
        assert_eq!(find_any("removed", &["move"]), None);
        assert_eq!(find_any("把会议改到晚上", &["改到", "改"]), Some((9, "改到")), "byte offsets");
    }
}
