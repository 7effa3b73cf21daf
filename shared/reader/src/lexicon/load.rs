//! Parsing the lexicon's files into entries and the automaton that finds them.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, MatchKind};

use super::{Action, Category, Dir, Entry, Flags, Kind, Lexicon, Sense};

/// The lexicon of `files` (name, text).
pub(super) fn build(files: &[(&'static str, &'static str)]) -> Result<Lexicon, String> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut by_form: HashMap<&'static str, usize> = HashMap::new();
    for (name, text) in files {
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |error: String| format!("{name}:{}: {error}: {line:?}", n + 1);
            let (forms, sense) = parse_line(line).map_err(at)?;
            for form in forms {
                let form: &'static str = form.leak();
                match by_form.get(form) {
                    Some(&i) => {
                        if entries[i].senses.contains(&sense) {
                            return Err(at(format!("the form {form:?} has this sense twice")));
                        }
                        entries[i].senses.push(sense.clone());
                    }
                    None => {
                        by_form.insert(form, entries.len());
                        entries.push(Entry { form, senses: vec![sense.clone()], source: name });
                    }
                }
            }
        }
    }
    let matcher = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(entries.iter().map(|e| e.form))
        .map_err(|e| e.to_string())?;
    let typo_forms = super::typo::index(&entries);
    Ok(Lexicon { entries, matcher, by_form, typo_forms })
}

/// The forms and the sense of one line.
fn parse_line(line: &'static str) -> Result<(Vec<String>, Sense), String> {
    let mut columns = line.split('\t');
    let forms = columns.next().ok_or("no form")?;
    let category = parse_category(columns.next().ok_or("no category")?)?;
    let features = columns.next().unwrap_or("");
    if columns.next().is_some() {
        return Err("more than three columns".into());
    }
    let mut sense = Sense { category, action: None, dir: None, kind: None, concept: None, value: None, sub: None, part: None, means: None, flags: Flags::default() };
    for feature in features.split_whitespace() {
        apply_feature(&mut sense, feature)?;
    }
    let forms = expand_forms(forms)?;
    Ok((forms, sense))
}

/// `cancel|cancels`, `meeting(s)`, `match(es)`: every form of an entry.
fn expand_forms(forms: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for form in forms.split('|') {
        let form = form.trim();
        if form.is_empty() {
            return Err("an empty form".into());
        }
        if form != form.to_lowercase() {
            return Err(format!("the form {form:?} is not lower case"));
        }
        match form.strip_suffix("(s)").map(|stem| (stem, "s")).or_else(|| form.strip_suffix("(es)").map(|stem| (stem, "es"))) {
            Some((stem, plural)) => {
                out.push(stem.to_owned());
                out.push(format!("{stem}{plural}"));
            }
            None => out.push(form.to_owned()),
        }
    }
    Ok(out)
}

fn parse_category(name: &str) -> Result<Category, String> {
    use Category::*;
    Ok(match name {
        "verb" => Verb,
        "particle" => Particle,
        "direction" => Direction,
        "item" => Item,
        "errand" => Errand,
        "noise" => Noise,
        "det" => Det,
        "prep" => Prep,
        "pronoun" => Pronoun,
        "modal" => Modal,
        "ba" => Ba,
        "de" => De,
        "aspect" => Aspect,
        "and" => And,
        "connector" => Connector,
        "reference" => Reference,
        "quantity" => Quantity,
        "position" => Position,
        "one" => One,
        "note" => Note,
        "prepare" => Prepare,
        "priority" => Priority,
        "query" => Query,
        "done" => Done,
        "already" => Already,
        "not_going" => NotGoing,
        "question" => Question,
        "small_talk" => SmallTalk,
        "vague" => Vague,
        "word" => Word,
        "reply" => Reply,
        "have" => Have,
        "aux" => Aux,
        "result" => Result,
        "instead" => Instead,
        other => return Err(format!("unknown category {other:?}")),
    })
}

fn apply_feature(sense: &mut Sense, feature: &'static str) -> Result<(), String> {
    let Some((key, value)) = feature.split_once('=') else {
        let flag = Flags::NAMES.iter().find(|(name, _)| *name == feature).ok_or(format!("unknown flag {feature:?}"))?.1;
        sense.flags = sense.flags | flag;
        return Ok(());
    };
    match key {
        "action" => {
            sense.action = Some(match value {
                "create" => Action::Create,
                "remind" => Action::Remind,
                "move" => Action::Move,
                "shift" => Action::Shift,
                "complete" => Action::Complete,
                "delete" => Action::Delete,
                "list" => Action::List,
                _ => return Err(format!("unknown action {value:?}")),
            })
        }
        "dir" => {
            sense.dir = Some(match value {
                "later" => Dir::Later,
                "earlier" => Dir::Earlier,
                _ => return Err(format!("unknown dir {value:?}")),
            })
        }
        "kind" => {
            sense.kind = Some(match value {
                "event" => Kind::Event,
                "todo" => Kind::Todo,
                "reminder" => Kind::Reminder,
                _ => return Err(format!("unknown kind {value:?}")),
            })
        }
        "concept" => sense.concept = Some(value),
        "value" => sense.value = Some(value.parse().map_err(|_| format!("value {value:?} is not a number"))?),
        "sub" => sense.sub = Some(value),
        "part" => sense.part = Some(value),
        "means" => sense.means = Some(value),
        _ => return Err(format!("unknown feature {key:?}")),
    }
    Ok(())
}
