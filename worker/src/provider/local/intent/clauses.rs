//! Several actions in one sentence: "删除明天的健身，然后把周会推迟半小时", "cancel yoga and move
//! the dentist to friday", "明天下午3点开会，6点提醒我去接孩子".
//!
//! A sentence is split into clauses where it joins actions: at a clear connector (然后, 并且,
//! 同时, 顺便, ；, "and then", "and also", "then", ";"), at " and " or ", " before an English
//! action verb, and at a Chinese comma when the sentence does not read as one action. Each clause
//! must read as an action on its own, else the sentence is not understood (never half-read). A
//! clause with a clock time but no day of its own takes the day of the clause before
//! ("明天下午3点开会，6点..." -> "明天下午6点").

use quickact_time::{TimeContext, is_chinese};

use super::{Intent, Reading, read};

/// A clause and what it asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub text: String,
    pub intent: Intent,
}

/// Connectors that always join two actions.
const CONNECTORS: [&str; 11] = ["，然后", ",然后", "然后", "并且", "同时", "顺便", "；", ";", " and then ", " and also ", ", then "];
/// English verbs that start an action: " and <verb>" / ", <verb>" joins two.
const EN_VERBS: [&str; 20] = [
    "cancel", "delete", "remove", "drop", "move", "reschedule", "push", "postpone", "pull", "complete", "finish", "mark", "add",
    "create", "remind", "schedule", "book", "set", "put", "show",
];
/// Words a clause may start with that only join it to the one before.
const LEADS: [&str; 6] = ["再", "还要", "还有", "and ", "also ", "then "];

/// The clauses of a sentence that asks for several actions; `None` when it is one action (or
/// reads as none), `Some(Err)` when it joins actions of which one cannot be read.
pub fn read_clauses(text: &str, ctx: &TimeContext) -> Option<Result<Vec<Clause>, &'static str>> {
    let chinese = is_chinese(text);
    let mut parts = split_on(vec![text.to_owned()], &CONNECTORS);
    if !chinese {
        parts = split_before_verbs(parts);
    }
    let joined = parts.len() >= 2;
    if chinese && !joined && matches!(read(text, ctx), Reading::NotUnderstood(_)) {
        parts = split_on(parts, &["，", ","]);
    }
    if parts.len() < 2 {
        return None;
    }
    let mut clauses: Vec<Clause> = Vec::new();
    for part in parts {
        let mut part = part.trim().trim_matches(|c: char| "，,。.".contains(c)).trim().to_owned();
        for lead in LEADS {
            if let Some(rest) = part.strip_prefix(lead) {
                part = rest.trim().to_owned();
            }
        }
        if part.is_empty() {
            continue;
        }
        let part = with_day_of(clauses.last(), &part);
        match read(&part, ctx) {
            Reading::Understood(intent) => clauses.push(Clause { text: part, intent }),
            Reading::NotUnderstood(_) => return Some(Err("a clause of several actions")),
        }
    }
    (clauses.len() >= 2).then_some(Ok(clauses))
}

fn split_on(parts: Vec<String>, separators: &[&str]) -> Vec<String> {
    let mut out = parts;
    for separator in separators {
        out = out.iter().flat_map(|part| part.split(separator).map(str::to_owned).collect::<Vec<_>>()).collect();
    }
    out.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Splits English text at " and <verb>" and ", <verb>".
fn split_before_verbs(parts: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    for part in parts {
        let lower = part.to_ascii_lowercase();
        let mut cuts = Vec::new();
        for joint in [" and ", ", "] {
            let mut from = 0;
            while let Some(at) = lower[from..].find(joint).map(|i| i + from) {
                let next = &lower[at + joint.len()..];
                if EN_VERBS.iter().any(|verb| next.starts_with(verb) && next[verb.len()..].starts_with([' ', ','])) {
                    cuts.push((at, joint.len()));
                }
                from = at + joint.len();
            }
        }
        cuts.sort();
        let mut start = 0;
        for (at, len) in cuts {
            if at >= start {
                out.push(part[start..at].to_owned());
                start = at + len;
            }
        }
        out.push(part[start..].to_owned());
    }
    out
}

/// The clause with the day of the clause before it when it states a clock time but no day:
/// "6点提醒我去接孩子" after "明天下午3点开会" reads as "明天下午6点提醒我去接孩子".
fn with_day_of(before: Option<&Clause>, clause: &str) -> String {
    let Some(before) = before else { return clause.to_owned() };
    let Some(when) = when_of(&before.intent) else { return clause.to_owned() };
    let starts_with_clock = clause.chars().next().is_some_and(|c| c.is_ascii_digit() || "一二三四五六七八九十两".contains(c));
    if !starts_with_clock {
        return clause.to_owned();
    }
    // The day words of the clause before: its time expression up to its first number.
    let day: String = when.chars().take_while(|c| !c.is_ascii_digit() && !"一二三四五六七八九十两".contains(*c)).collect();
    if day.trim().is_empty() { clause.to_owned() } else { format!("{day}{clause}") }
}

fn when_of(intent: &Intent) -> Option<&str> {
    match intent {
        Intent::Create(item) => item.when.as_deref(),
        Intent::Reschedule { change: super::Change::To(when), .. } => Some(when),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn ctx() -> TimeContext {
        TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai)
    }

    fn texts(sentence: &str) -> Vec<String> {
        match read_clauses(sentence, &ctx()) {
            Some(Ok(clauses)) => clauses.into_iter().map(|c| c.text).collect(),
            other => panic!("{sentence}: {other:?}"),
        }
    }

    #[test]
    fn actions_are_split_where_the_sentence_joins_them() {
        assert_eq!(texts("删除明天的健身，然后把周会推迟半小时"), ["删除明天的健身", "把周会推迟半小时"]);
        assert_eq!(texts("cancel yoga and move the dentist to friday"), ["cancel yoga", "move the dentist to friday"]);
        assert_eq!(texts("完成报告提交；删除明天的健身"), ["完成报告提交", "删除明天的健身"]);
        // The second clause takes the first one's day and part of day.
        assert_eq!(texts("明天下午3点开会，6点提醒我去接孩子"), ["明天下午3点开会", "明天下午6点提醒我去接孩子"]);
    }

    #[test]
    fn one_action_stays_one_and_half_read_sentences_are_refused() {
        for one in ["后天上午10点评审，开一个半小时", "call mom and dad tomorrow at 5pm", "明天下午3点到4点开会", "buy milk, eggs and bread"] {
            assert_eq!(read_clauses(one, &ctx()), None, "{one}");
        }
        assert!(matches!(read_clauses("删除明天的健身，然后今天天气怎么样", &ctx()), Some(Err(_))));
    }
}
