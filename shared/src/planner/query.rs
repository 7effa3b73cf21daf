//! What a search over one user's items asks for ([`ItemQuery`]), and its terms as the search's
//! SQL takes them (`super::store::search_items`).

use chrono::NaiveDateTime;

use super::{
    item::{ItemKind, ItemStatus},
    selector::TimeOfDay,
};
use crate::db::like_pattern;

/// How a search orders its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// By date and time (a to-do's due date and deadline).
    Deadline,
    /// By importance: quadrant 1 first when descending.
    Priority,
    /// By creation.
    Id,
}

impl SortKey {
    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::Deadline => "deadline",
            SortKey::Priority => "priority",
            SortKey::Id => "id",
        }
    }
}

/// A search over one user's live items.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemQuery {
    pub kind: Option<ItemKind>,
    /// `None`: open and completed.
    pub status: Option<ItemStatus>,
    /// Inclusive local bounds on the item's start.
    pub from: Option<NaiveDateTime>,
    pub to: Option<NaiveDateTime>,
    /// Every term must occur in the title or the description (case-insensitive), or one of its
    /// synonyms does.
    pub terms: Vec<String>,
    /// The other words each term may be found as (`terms[i]`'s in `synonyms[i]`; may be shorter):
    /// a "meeting" is a 会议 or 开会 item, a "dentist" a 牙医 one.
    pub synonyms: Vec<Vec<String>>,
    /// Single characters a title may end with to match each term: the head noun of a Chinese title
    /// ("季度review会" is a meeting; 会员 is not).
    pub endings: Vec<Vec<String>>,
    pub sort: SortKey,
    pub descending: bool,
    pub limit: i64,
    /// Also match Chinese terms by shared characters (at least half of them), for "会议" finding
    /// "开会". Used only after an exact search found nothing.
    pub relaxed: bool,
    /// Only items at this time of day ("the 3pm meeting", "上午的会"), on whatever day they are
    /// found.
    pub at: Option<TimeOfDay>,
}

impl ItemQuery {
    /// Every term, its synonyms and its endings in one list: the LIKE pattern of each, the word,
    /// whether a relaxed search matches it by shared characters (the term itself only), and the
    /// number of the term it belongs to.
    pub(super) fn alternatives(&self) -> Alternatives {
        let mut all = Alternatives::default();
        for (i, term) in self.terms.iter().enumerate() {
            let group = i32::try_from(i).unwrap_or(i32::MAX);
            let mut push = |pattern: String, word: &String, fuzzy: bool| {
                all.patterns.push(pattern);
                all.words.push(word.clone());
                all.fuzzy.push(fuzzy);
                all.groups.push(group);
            };
            push(like_pattern(term), term, fuzzy_term(term));
            for word in self.synonyms.get(i).into_iter().flatten() {
                push(like_pattern(word), word, false);
            }
            for ending in self.endings.get(i).into_iter().flatten() {
                let pattern = like_pattern(ending);
                push(pattern[..pattern.len() - 1].to_owned(), ending, false);
            }
        }
        all
    }

    /// Whether a relaxed search could find more than this one.
    pub fn can_relax(&self) -> bool {
        !self.relaxed && self.terms.iter().any(|t| fuzzy_term(t))
    }
}

/// The alternatives of a search's terms, as the query's parallel arrays.
#[derive(Default)]
pub(super) struct Alternatives {
    pub patterns: Vec<String>,
    pub words: Vec<String>,
    pub fuzzy: Vec<bool>,
    pub groups: Vec<i32>,
}

/// A term matched by shared characters in a relaxed search: Chinese, two characters or more.
fn fuzzy_term(term: &str) -> bool {
    term.chars().count() >= 2 && term.chars().any(|c| matches!(c, '\u{4e00}'..='\u{9fff}'))
}
