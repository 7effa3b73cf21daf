//! The words of every answer a person reads that the backend writes (not the model): the local
//! provider's verdicts, the engine's own (timeouts, cancels, give-ups, model failures), the undo's,
//! and the item lines inside them. Each answer is in one language, the sentence's
//! ([`Language::of`]), so a Chinese task never reads "(done)" or "(morning)" and an English one
//! never reads 已完成.
//!
//! Every phrase lives here, keyed by language in one `match`, so a new phrase is written in both
//! languages or not at all, and the worker and the API say the same thing the same way.
//!
//! - [`items`]: an item (as clients see it) as words: when, what, whether it repeats or is done.
//! - [`recurrence`]: an RRULE as words ("每周一", "every weekday").
//! - [`replies`]: the verdicts of the local provider and the engine, and the undo's.

pub mod items;
pub mod recurrence;
pub mod replies;

/// The language of an answer: the sentence's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Chinese,
    English,
}

impl Language {
    /// The language a sentence is written in: Chinese when it has a Chinese character, else English.
    pub fn of(sentence: &str) -> Self {
        if quickact_time::is_chinese(sentence) { Language::Chinese } else { Language::English }
    }

    pub fn is_chinese(self) -> bool {
        self == Language::Chinese
    }

    /// `zh` or `en` by the language.
    pub fn pick<T>(self, zh: T, en: T) -> T {
        match self {
            Language::Chinese => zh,
            Language::English => en,
        }
    }

    /// Several sentences as one text: each ends with a full stop of the language (unless it ends
    /// with one already), a dangling `;` or `,` is dropped, and they are joined as the language
    /// writes sentences (no space in Chinese, one in English). Empty parts are skipped.
    pub fn join_sentences<S: AsRef<str>>(self, parts: &[S]) -> String {
        let mut out = String::new();
        for part in parts {
            let part = part.as_ref().trim().trim_end_matches([';', '；', ',', '，', ':', '：', '、']).trim_end();
            if part.is_empty() {
                continue;
            }
            if !out.is_empty() && self == Language::English {
                out.push(' ');
            }
            out.push_str(part);
            if !ends_a_sentence(part) {
                out.push_str(self.pick("。", "."));
            }
        }
        out
    }

    /// Items of a list, joined as the language lists them: `A、B、C` / `A, B and C`.
    pub fn join_list<S: AsRef<str>>(self, parts: &[S]) -> String {
        let parts: Vec<&str> = parts.iter().map(AsRef::as_ref).collect();
        match (self, parts.as_slice()) {
            (_, []) => String::new(),
            (_, [one]) => (*one).to_owned(),
            (Language::Chinese, _) => parts.join("、"),
            (Language::English, [init @ .., last]) => format!("{} and {last}", init.join(", ")),
        }
    }

    /// Lines of a listing, joined into one sentence: `A；B；C` / `A; B; C`.
    pub fn join_lines<S: AsRef<str>>(self, parts: &[S]) -> String {
        let parts: Vec<&str> = parts.iter().map(AsRef::as_ref).collect();
        parts.join(self.pick("；", "; "))
    }
}

/// Whether `text` ends a sentence already (a full stop, a question or an exclamation mark).
fn ends_a_sentence(text: &str) -> bool {
    text.ends_with(['.', '!', '?', '。', '！', '？'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_is_the_sentences() {
        assert_eq!(Language::of("明天下午3点开会"), Language::Chinese);
        assert_eq!(Language::of("和Alex的1:1改到周五"), Language::Chinese);
        assert_eq!(Language::of("lunch with Bo at noon"), Language::English);
    }

    #[test]
    fn sentences_are_joined_as_sentences() {
        let en = Language::English;
        assert_eq!(
            en.join_sentences(&["No item matches \"x\"; nothing was changed.", "It overlaps standup;", "Created: y"]),
            "No item matches \"x\"; nothing was changed. It overlaps standup. Created: y."
        );
        let zh = Language::Chinese;
        assert_eq!(zh.join_sentences(&["已创建：开会", "与已有日程冲突：周会，没有创建。", ""]), "已创建：开会。与已有日程冲突：周会，没有创建。");
        assert_eq!(zh.join_sentences(&["找到2项；"]), "找到2项。");
    }

    #[test]
    fn lists_are_joined_as_the_language_lists() {
        assert_eq!(Language::Chinese.join_list(&["A", "B", "C"]), "A、B、C");
        assert_eq!(Language::English.join_list(&["A", "B", "C"]), "A, B and C");
        assert_eq!(Language::English.join_list(&["A"]), "A");
        assert_eq!(Language::English.join_list::<&str>(&[]), "");
    }
}
