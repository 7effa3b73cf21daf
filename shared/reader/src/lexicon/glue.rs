//! The glue words (`lexicon/glue.tsv`): small sets of words a rule looks for at one place of its
//! construction ("by" before a deadline, 前 after one). They are kept out of the lexicon's entries,
//! so they change no token; a rule asks whether a token's normal form is in a set.

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
}

impl Glue {
    const NAMES: [(&'static str, Glue); 52] = [
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
    ];

    /// The words of the set, in the order written.
    pub fn words(self) -> &'static [&'static str] {
        GLUE.get(&self).map_or(&[], Vec::as_slice)
    }

    /// Whether `word` (a normal form: lower case) is one of the set's words.
    pub fn has(self, word: &str) -> bool {
        self.words().contains(&word)
    }
}

static GLUE: LazyLock<HashMap<Glue, Vec<&'static str>>> = LazyLock::new(|| parse(include_str!("../../lexicon/glue.tsv")).unwrap_or_else(|e| panic!("lexicon/glue.tsv: {e}")));

/// The sets of `text`: every line names a set once, every set has a line.
fn parse(text: &'static str) -> Result<HashMap<Glue, Vec<&'static str>>, String> {
    let mut sets = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, words) = line.split_once('\t').ok_or_else(|| format!("line {}: no tab", n + 1))?;
        let set = Glue::NAMES.iter().find(|(known, _)| *known == name).map(|(_, g)| *g).ok_or_else(|| format!("line {}: no set is named {name:?}", n + 1))?;
        // Words are kept as written: " to " cuts a range only between words.
        let words: Vec<&'static str> = words.split('|').collect();
        if words.iter().any(|w| w.is_empty() || w.to_lowercase() != *w) || sets.insert(set, words).is_some() {
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
    }
}
