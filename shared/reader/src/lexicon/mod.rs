//! The lexicon: every word and phrase the reader knows, once, with its category and features, in
//! both languages. It lives in data files beside the code (`shared/reader/lexicon/*.tsv`), read at
//! compile time and parsed once, on first use.
//!
//! A line is `form<TAB>category<TAB>features`:
//! - `form`: lower case; `|` separates forms of one entry (`cancel|cancels|cancelled`), and a
//!   trailing `(s)` or `(es)` adds the plural (`meeting(s)`). English forms match whole words only;
//!   Chinese forms match anywhere, the longest first, so a longer word (`会员`, category `word`)
//!   keeps a shorter one (`会`) from being read inside it.
//! - `category`: what the word is (see [`Category`]).
//! - `features`: space-separated `key=value` pairs and flags (see [`Sense`]); unknown names are an
//!   error at load time, which the crate's tests catch.
//!
//! A form may appear on several lines: each line is one sense of it ("提前" moves a time earlier
//! and also marks a note of preparation), and the rules choose among the senses.

mod glue;
mod load;
mod typo;

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use serde::Serialize;

pub use glue::Glue;
pub use typo::{is_english, near_miss};

/// What a word is, for the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// A verb that acts on items (`action`, for a shift `dir`).
    Verb,
    /// An English particle of a phrasal verb ("push it **back**", "move **up**"), with `dir`.
    Particle,
    /// A word that says which way a shift goes ("later", "earlier", 往后).
    Direction,
    /// A noun for an item (`kind`, `concept` for its synonyms, `generic` when it says only what
    /// kind of thing it is, `filter` when it names a list to search: "todos", 待办).
    Item,
    /// A verb an errand starts with ("buy", 买): a short phrase that starts with one is a to-do.
    Errand,
    /// Words that carry no request: fillers, greetings, politeness, lead-ins (`sub`).
    Noise,
    /// Articles and possessives ("the", "my", 我的).
    Det,
    /// Prepositions ("at", "to", "with", 在).
    Prep,
    /// The subject ("I", "we", 我).
    Pronoun,
    /// "need to", "should", 要, 得.
    Modal,
    /// 把 / 将: the object comes before the verb.
    Ba,
    /// 的.
    De,
    /// 了, 过: aspect particles.
    Aspect,
    /// "and", 和, 跟.
    And,
    /// Words that join two actions ("then", 然后, 顺便).
    Connector,
    /// "it", "that one", 那个: an item named before.
    Reference,
    /// "all", "every", 全部, 都: every matching item.
    Quantity,
    /// "first", "last", 第一个 (`value`: 1-based, negative from the end).
    Position,
    /// "one" in "the 4:30 one".
    One,
    /// How a note starts ("remember to", "bring", 记得, 带上).
    Note,
    /// Words of preparation ("ahead", "in advance", 提前, 事先): a clause with one is a note.
    Prepare,
    /// Priority words (`value` 1-4).
    Priority,
    /// Words that ask for a listing (`count`, `open`, `completed`, `when`, `free`, `urgent`).
    Query,
    /// A statement that something is done ("done", 完了, 搞定).
    Done,
    /// "already", 已经.
    Already,
    /// A statement of not going ("can't make it", 不去了).
    NotGoing,
    /// Question words ("why", 吗, 为什么).
    Question,
    /// Small talk and feelings: no request ("weather", "joke", 累).
    SmallTalk,
    /// Words that say something is to be added without saying what ("something", 点东西).
    Vague,
    /// A plain word that only keeps shorter entries from being read inside it (会员, 成都).
    Word,
    /// Words of a reply: yes, no, anyway, both (`sub`).
    Reply,
    /// "I have", "there's", 有个: saying one has something is asking to put it down.
    Have,
    /// Auxiliaries and copulas ("is", "do", "there", 是): they link, they name nothing.
    Aux,
    /// A verb with its result (改好, 写完): the work to get done; with 了, done.
    Result,
    /// "instead", 改成: the sentence changes a plan already made, it puts nothing new down.
    Instead,
}

/// What an action verb does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Create,
    Remind,
    Move,
    Shift,
    Complete,
    Delete,
    List,
}

/// Which way a shift goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    Later,
    Earlier,
}

/// The kind of an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Event,
    Todo,
    Reminder,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Event => "event",
            Kind::Todo => "todo",
            Kind::Reminder => "reminder",
        }
    }
}

/// Flags of a sense (see the lexicon files' headers for where each is used).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags(u32);

impl Flags {
    /// A Chinese move verb that carries its "to" (改到, 挪到).
    pub const TO: Flags = Flags(1);
    /// A verb that may stand after its object (X取消, X完成了, "X is done").
    pub const POST: Flags = Flags(1 << 1);
    /// A verb that never stands before its object.
    pub const ONLY_POST: Flags = Flags(1 << 2);
    /// A past or passive form ("moved", "cancelled").
    pub const PAST: Flags = Flags(1 << 3);
    /// An item noun that says only what kind of thing it is ("appointment", "thing", 事).
    pub const GENERIC: Flags = Flags(1 << 4);
    /// An item noun that names a list to search by kind ("todos", "reminders", 待办).
    pub const FILTER: Flags = Flags(1 << 5);
    /// A query that asks how many.
    pub const COUNT: Flags = Flags(1 << 6);
    /// A query about what is still open.
    pub const OPEN: Flags = Flags(1 << 7);
    /// A query about what is done.
    pub const COMPLETED: Flags = Flags(1 << 8);
    /// A query asking when an item is ("when is", 什么时候): the rest names the item.
    pub const WHEN: Flags = Flags(1 << 9);
    /// A query asking whether the user is free ("am I free", 有空吗).
    pub const FREE: Flags = Flags(1 << 10);
    /// A query for the most pressing items (最紧急, "most urgent").
    pub const URGENT: Flags = Flags(1 << 11);
    /// "mark": completes only with "as done" or "done" after the object.
    pub const AS_DONE: Flags = Flags(1 << 12);
    /// A query word that asks only at the sentence's start ("show", "list", "find").
    pub const LEADING: Flags = Flags(1 << 13);
    /// A verb of the item's own work (写, 交, 买) before a statement of done (写完了).
    pub const WORK: Flags = Flags(1 << 14);
    /// A query that asks what comes next ("what's next", 下一个).
    pub const NEXT: Flags = Flags(1 << 15);
    /// A word that names an event even with no time ("meeting", 聚会).
    pub const GATHERING: Flags = Flags(1 << 16);
    /// A meal, with the part of day it is eaten in (`part`).
    pub const MEAL: Flags = Flags(1 << 17);
    /// A create verb that records what happened ("log", "record").
    pub const RECORD: Flags = Flags(1 << 18);
    /// A delete verb that clears every match ("clear", 清空).
    pub const BULK: Flags = Flags(1 << 19);
    /// A query about what is still to come ("what's left", 还剩): from now on.
    pub const REMAINING: Flags = Flags(1 << 21);
    /// A word that says what kind of item it is and little more ("meeting", 会): a time that picks
    /// one item of that kind names it, whatever its title.
    pub const KIND_WORD: Flags = Flags(1 << 22);
    /// A narrower word of its concept: found when the broad word is searched, widening no search
    /// of its own ("meeting" finds 周会; 周会 finds only 周会).
    pub const NARROW: Flags = Flags(1 << 20);

    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    const NAMES: [(&'static str, Flags); 23] = [
        ("kind_word", Flags::KIND_WORD),
        ("remaining", Flags::REMAINING),
        ("narrow", Flags::NARROW),
        ("bulk", Flags::BULK),
        ("to", Flags::TO),
        ("post", Flags::POST),
        ("only_post", Flags::ONLY_POST),
        ("past", Flags::PAST),
        ("generic", Flags::GENERIC),
        ("filter", Flags::FILTER),
        ("count", Flags::COUNT),
        ("open", Flags::OPEN),
        ("completed", Flags::COMPLETED),
        ("when", Flags::WHEN),
        ("free", Flags::FREE),
        ("urgent", Flags::URGENT),
        ("as_done", Flags::AS_DONE),
        ("leading", Flags::LEADING),
        ("work", Flags::WORK),
        ("next", Flags::NEXT),
        ("gathering", Flags::GATHERING),
        ("meal", Flags::MEAL),
        ("record", Flags::RECORD),
    ];
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

/// One sense of a word.
#[derive(Debug, Clone, PartialEq)]
pub struct Sense {
    pub category: Category,
    pub action: Option<Action>,
    pub dir: Option<Dir>,
    pub kind: Option<Kind>,
    /// The group of synonyms (both languages) a search word expands to.
    pub concept: Option<&'static str>,
    /// A priority (1-4) or a position (1-based, negative from the end).
    pub value: Option<i8>,
    /// A subcategory (`greeting`, `filler`, `polite`, `lead` for noise; `yes`, `no`, `force`,
    /// `all`, `move` for replies).
    pub sub: Option<&'static str>,
    /// A meal's part of the day (`morning`, `noon`, `evening`, ...).
    pub part: Option<&'static str>,
    /// What an abbreviation stands for, as a title or search word ("mtg" -> "meeting").
    pub means: Option<&'static str>,
    pub flags: Flags,
}

impl Sense {
    pub fn has(&self, flag: Flags) -> bool {
        self.flags.contains(flag)
    }
}

/// A form and its senses.
#[derive(Debug)]
pub struct Entry {
    pub form: &'static str,
    pub senses: Vec<Sense>,
    /// The file and line the form first came from, for errors and the preview.
    pub source: &'static str,
}

impl Entry {
    /// The sense of `category`, if the word has one.
    pub fn sense(&self, category: Category) -> Option<&Sense> {
        self.senses.iter().find(|s| s.category == category)
    }

    pub fn is(&self, category: Category) -> bool {
        self.sense(category).is_some()
    }
}

/// The lexicon's files, in the order their entries are read.
const FILES: [(&str, &str); 6] = [
    ("actions.tsv", include_str!("../../lexicon/actions.tsv")),
    ("items.tsv", include_str!("../../lexicon/items.tsv")),
    ("speech.tsv", include_str!("../../lexicon/speech.tsv")),
    ("grammar.tsv", include_str!("../../lexicon/grammar.tsv")),
    ("markers.tsv", include_str!("../../lexicon/markers.tsv")),
    ("replies.tsv", include_str!("../../lexicon/replies.tsv")),
];

/// Every entry, and the automaton that finds them all in one pass.
pub struct Lexicon {
    pub entries: Vec<Entry>,
    matcher: AhoCorasick,
    by_form: std::collections::HashMap<&'static str, usize>,
    /// English single words of five letters or more, for typo look-ups, by length.
    typo_forms: Vec<Vec<usize>>,
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| load::build(&FILES).unwrap_or_else(|error| panic!("the reader's lexicon: {error}")));

/// The lexicon (parsed on first use).
pub fn lexicon() -> &'static Lexicon {
    &LEXICON
}

/// A form found in a text: where (byte offsets into the normalised text) and which entry.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub start: usize,
    pub end: usize,
    pub entry: usize,
}

impl Lexicon {
    /// Every form of the lexicon found in `text` (lower case), overlapping, in order of their
    /// start. Whole-word checks are the caller's.
    pub fn hits<'a>(&'a self, text: &'a str) -> impl Iterator<Item = Hit> + 'a {
        self.matcher.find_overlapping_iter(text).map(|m| Hit { start: m.start(), end: m.end(), entry: m.pattern().as_usize() })
    }

    pub fn entry(&self, index: usize) -> &Entry {
        &self.entries[index]
    }

    /// The entry spelled exactly `form`.
    pub fn find(&self, form: &str) -> Option<&Entry> {
        self.by_form.get(form).map(|&i| &self.entries[i])
    }

    /// The other forms sharing `word`'s concept (its synonyms in both languages); none when it has
    /// no concept. Single Chinese characters are left out: they match too much.
    pub fn synonyms(&self, word: &str) -> Vec<&'static str> {
        let lower = word.to_lowercase();
        self.concept_forms(&lower).filter(|form| *form != lower && (form.is_ascii() || form.chars().count() > 1)).collect()
    }

    /// The single Chinese characters of `word`'s concept: a title ending with one is of the
    /// concept ("季度review会", 家长会 are meetings), one holding it elsewhere may not be (会员).
    pub fn head_nouns(&self, word: &str) -> Vec<&'static str> {
        self.concept_forms(&word.to_lowercase()).filter(|form| form.chars().count() == 1 && !form.is_ascii()).collect()
    }

    /// Every form sharing `word`'s concept, when it is no narrower word.
    fn concept_forms(&self, lower: &str) -> impl Iterator<Item = &'static str> + '_ {
        let sense = self.find(lower).and_then(|e| e.senses.iter().find(|s| s.concept.is_some())).filter(|s| !s.has(Flags::NARROW));
        let concept = sense.map(|s| s.concept);
        self.entries.iter().filter(move |e| concept.is_some_and(|c| e.senses.iter().any(|s| s.concept == c))).map(|e| e.form)
    }

    /// Whether `word` only says what kind of item it is: generic ("appointment", 事) or a kind word
    /// ("meeting", 会).
    pub fn names_only_a_kind(&self, word: &str) -> bool {
        self.find(&word.to_lowercase()).is_some_and(|e| e.senses.iter().any(|s| s.category == Category::Item && (s.has(Flags::GENERIC) || s.has(Flags::KIND_WORD))))
    }

    /// The forms with a sense of `category` and subcategory `sub` (`reply` with `sub=yes`), in the
    /// order the files first name them.
    pub fn forms_of(&self, category: Category, sub: &str) -> Vec<&'static str> {
        self.entries.iter().filter(|e| e.senses.iter().any(|s| s.category == category && s.sub == Some(sub))).map(|e| e.form).collect()
    }

    /// Whether `word` is a generic item noun ("appointment", "thing", 事): a search may do without it.
    pub fn is_generic(&self, word: &str) -> bool {
        self.find(&word.to_lowercase()).is_some_and(|e| e.senses.iter().any(|s| s.category == Category::Item && s.has(Flags::GENERIC)))
    }
}
