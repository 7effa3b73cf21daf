//! The glue words (`lexicon/glue.tsv`): small sets of words a rule looks for at one place of its
//! construction ("by" before a deadline, 前 after one). They are kept out of the lexicon's entries,
//! so they change no token; a rule asks whether a token's normal form is in a set. A set's words
//! may each carry a number (`word=value`: the count of an ordinal, the place a pointer points at).

use std::{collections::HashMap, sync::LazyLock};

/// A set of glue words, named for where its words stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Glue {
    DeadlineBefore,
    DeadlineAfter,
    Until,
    ToTime,
    TimePrep,
    AtOn,
    ZhJoiner,
    Joiner,
    NewTimeTail,
    RangeCut,
    Later,
    Earlier,
    AfterPost,
    LengthWord,
    Now,
    FromNow,
    WeekWord,
    WeekdayAbbrev,
    WeekdayHan,
    MealTime,
    By,
    Instead,
    PlanLead,
    Linking,
    Make,
    RemindGlue,
    NoteGlue,
    To,
    ToMe,
    Indefinite,
    HelpMe,
    Ahead,
    AheadTail,
    About,
    IsDone,
    As,
    OffVerb,
    Le,
    Guo,
    Any,
    Complaint,
    AboutMarker,
    LimitBefore,
    Measure,
    Also,
    Contraction,
    Start,
    Finished,
    SoBeforeAction,
    InsteadOf,
    ForItem,
    RangeFrom,
    PastAux,
    Once,
    OptionLead,
    OptionTail,
    OrdinalMark,
    ZhNumber,
    Ordinal,
    OrdinalTime,
    FromEnd,
    ZhPointer,
    BeforeLast,
    Pointer,
    TitleFiller,
}

impl Glue {
    const NAMES: [(&'static str, Glue); 65] = [
        ("once", Glue::Once),
        ("past_aux", Glue::PastAux),
        ("range_from", Glue::RangeFrom),
        ("for_item", Glue::ForItem),
        ("instead_of", Glue::InsteadOf),
        ("finished", Glue::Finished),
        ("so_before_action", Glue::SoBeforeAction),
        ("deadline_before", Glue::DeadlineBefore),
        ("deadline_after", Glue::DeadlineAfter),
        ("until", Glue::Until),
        ("to_time", Glue::ToTime),
        ("time_prep", Glue::TimePrep),
        ("at_on", Glue::AtOn),
        ("zh_joiner", Glue::ZhJoiner),
        ("joiner", Glue::Joiner),
        ("new_time_tail", Glue::NewTimeTail),
        ("range_cut", Glue::RangeCut),
        ("later", Glue::Later),
        ("earlier", Glue::Earlier),
        ("after_post", Glue::AfterPost),
        ("length_word", Glue::LengthWord),
        ("now", Glue::Now),
        ("from_now", Glue::FromNow),
        ("week_word", Glue::WeekWord),
        ("weekday_abbrev", Glue::WeekdayAbbrev),
        ("weekday_han", Glue::WeekdayHan),
        ("meal_time", Glue::MealTime),
        ("by", Glue::By),
        ("instead", Glue::Instead),
        ("plan_lead", Glue::PlanLead),
        ("linking", Glue::Linking),
        ("make", Glue::Make),
        ("remind_glue", Glue::RemindGlue),
        ("note_glue", Glue::NoteGlue),
        ("to", Glue::To),
        ("to_me", Glue::ToMe),
        ("indefinite", Glue::Indefinite),
        ("help_me", Glue::HelpMe),
        ("ahead", Glue::Ahead),
        ("ahead_tail", Glue::AheadTail),
        ("about", Glue::About),
        ("is_done", Glue::IsDone),
        ("as", Glue::As),
        ("off_verb", Glue::OffVerb),
        ("le", Glue::Le),
        ("guo", Glue::Guo),
        ("any", Glue::Any),
        ("complaint", Glue::Complaint),
        ("about_marker", Glue::AboutMarker),
        ("limit_before", Glue::LimitBefore),
        ("measure", Glue::Measure),
        ("also", Glue::Also),
        ("contraction", Glue::Contraction),
        ("start", Glue::Start),
        ("option_lead", Glue::OptionLead),
        ("option_tail", Glue::OptionTail),
        ("ordinal_mark", Glue::OrdinalMark),
        ("zh_number", Glue::ZhNumber),
        ("ordinal", Glue::Ordinal),
        ("ordinal_time", Glue::OrdinalTime),
        ("from_end", Glue::FromEnd),
        ("zh_pointer", Glue::ZhPointer),
        ("before_last", Glue::BeforeLast),
        ("pointer", Glue::Pointer),
        ("title_filler", Glue::TitleFiller),
    ];

    /// The words of the set, in the order written (without their values).
    pub fn words(self) -> &'static [&'static str] {
        GLUE.get(&self).map_or(&[], |set| set.words.as_slice())
    }

    /// The value `word` carries in the set (`word=value`), if it is one of its words and the set's
    /// words carry values.
    pub fn value(self, word: &str) -> Option<i32> {
        let set = GLUE.get(&self)?;
        set.words.iter().position(|w| *w == word).and_then(|at| set.values.get(at).copied())
    }

    /// Whether `word` (a normal form: lower case) is one of the set's words.
    pub fn has(self, word: &str) -> bool {
        self.words().contains(&word)
    }
}

/// The words of one set, as written, and their values (none, or one for each word).
struct Set {
    words: Vec<&'static str>,
    values: Vec<i32>,
}

static GLUE: LazyLock<HashMap<Glue, Set>> = LazyLock::new(|| parse(include_str!("../../lexicon/glue.tsv")).unwrap_or_else(|e| panic!("lexicon/glue.tsv: {e}")));

/// The sets of `text`: every line names a set once, every set has a line; a set's words carry a
/// value each (`word=value`) or none does.
fn parse(text: &'static str) -> Result<HashMap<Glue, Set>, String> {
    let mut sets = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, column) = line.split_once('\t').ok_or_else(|| format!("line {}: no tab", n + 1))?;
        let set = Glue::NAMES.iter().find(|(known, _)| *known == name).map(|(_, g)| *g).ok_or_else(|| format!("line {}: no set is named {name:?}", n + 1))?;
        // Words are kept as written: " to " cuts a range only between words.
        let (mut words, mut values) = (Vec::new(), Vec::new());
        for written in column.split('|') {
            let (word, value) = written.split_once('=').map_or((written, None), |(word, value)| (word, Some(value)));
            words.push(word);
            if let Some(value) = value {
                values.push(value.parse().map_err(|_| format!("line {}: the value of {word:?} is no number", n + 1))?);
            }
        }
        if !values.is_empty() && values.len() != words.len() {
            return Err(format!("line {}: words with values and words without", n + 1));
        }
        if words.iter().any(|w| w.is_empty() || w.to_lowercase() != *w) || sets.insert(set, Set { words, values }).is_some() {
            return Err(format!("line {}: an empty or capital word, or the set {name:?} twice", n + 1));
        }
    }
    match Glue::NAMES.iter().find(|(_, g)| !sets.contains_key(g)) {
        Some((name, _)) => Err(format!("the set {name:?} has no line")),
        None => Ok(sets),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_has_its_words() {
        for (name, set) in Glue::NAMES {
            assert!(!set.words().is_empty(), "{name}");
        }
        assert!(Glue::DeadlineBefore.has("by") && Glue::DeadlineAfter.has("之前") && !Glue::DeadlineBefore.has("at"));
        assert_eq!(Glue::RangeCut.words()[0], " to ");
        assert_eq!((Glue::Ordinal.value("2nd"), Glue::ZhNumber.value("两"), Glue::ZhPointer.value("后者")), (Some(2), Some(2), Some(-1)));
        assert_eq!((Glue::Ordinal.value("2"), Glue::DeadlineBefore.value("by")), (None, None));
    }

    #[test]
    fn words_may_carry_values() {
        let plain: String = Glue::NAMES.iter().map(|(name, _)| format!("{name}\tx\n")).collect();
        let with = |line: &str| parse(plain.replacen("deadline_before\tx", line, 1).leak());
        let sets = with("deadline_before\tfirst=1|last=-1").expect("a set with values");
        let set = &sets[&Glue::DeadlineBefore];
        assert_eq!((set.words.as_slice(), set.values.as_slice()), (["first", "last"].as_slice(), [1, -1].as_slice()));
        assert!(sets[&Glue::Until].values.is_empty());
        assert!(with("deadline_before\tfirst=1|last").is_err() && with("deadline_before\tfirst=one").is_err());
    }
}
