//! The local provider's words: each verdict's sentence in the user's language.

use chrono::NaiveDate;
use quickact_shared::phrases::{Language, items::ItemWords, replies::Replies};
use serde_json::Value;

/// The local provider's words, in the user's language (the sentences are in
/// [`quickact_shared::phrases`], shared with the engine's own verdicts).
#[derive(Debug, Clone, Copy)]
pub struct Say {
    pub language: Language,
    /// The user's today: dates in answers read "今天" / "tomorrow" when they are.
    pub today: Option<NaiveDate>,
}

impl Say {
    pub fn new(language: Language, today: Option<NaiveDate>) -> Self {
        Say { language, today }
    }

    pub fn replies(&self) -> Replies {
        Replies(self.language)
    }

    pub(super) fn words(&self) -> ItemWords {
        ItemWords { language: self.language, today: self.today }
    }

    /// What a listing found: how many, and each item's line (with its state and recurrence).
    pub(super) fn listed(&self, result: &Value) -> String {
        let items: Vec<Value> = result.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
        let count = result.get("count").and_then(Value::as_u64).unwrap_or(0).max(items.len() as u64) as usize;
        self.replies().listed(count, &self.words().lines(&items, true))
    }
    pub(super) fn not_found(&self, query: &str) -> String {
        self.replies().not_found(query)
    }
    pub(super) fn check_title(&self) -> String {
        self.replies().check_title()
    }
    pub(super) fn several(&self, n: usize, query: &str) -> String {
        self.replies().several(n, query)
    }
    pub(super) fn be_precise(&self) -> String {
        self.replies().be_precise()
    }
    /// The next occurrence of a passed time, as a suggestion: its day in words and its time.
    pub(super) fn try_next(&self, date: &str, time: Option<&str>) -> String {
        let day = NaiveDate::parse_from_str(date, "%Y-%m-%d").map(|d| self.words().date(d)).unwrap_or_else(|_| date.to_owned());
        let when = match time {
            Some(time) => format!("{day}{}{time}", self.language.pick("", " at ")),
            None => day,
        };
        self.replies().try_next(&when)
    }
    pub(super) fn failed(&self, error: &str) -> String {
        self.replies().failed(error)
    }
    pub fn rephrase(&self) -> String {
        self.replies().rephrase()
    }
    pub fn not_understood(&self) -> String {
        self.replies().not_understood()
    }
    pub fn not_read(&self, words: &[String]) -> String {
        if words.is_empty() { self.not_understood() } else { self.replies().not_read(words) }
    }
    pub fn what_to_add(&self) -> String {
        self.replies().what_to_add()
    }
    pub fn say_what_and_when(&self) -> String {
        self.replies().say_what_and_when()
    }
}
