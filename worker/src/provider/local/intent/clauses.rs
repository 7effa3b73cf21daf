//! Several actions in one sentence: "删除明天的健身，然后把周会推迟半小时", "cancel yoga and move
//! the dentist to friday", "明天下午3点开会，6点提醒我去接孩子".
//!
//! A sentence is split into clauses where it joins actions: at a clear connector (然后, 并且,
//! 同时, 顺便, ；, "and then", "and also", "then", ";"), at " and " or ", " before an English
//! action verb, and at a Chinese comma when the sentence does not read as one action. Each clause
//! must read as an action on its own, else the sentence is not understood (never half-read).
//!
//! Context goes on from one clause to the next, as a person means it: a clause with a clock time
//! or a part of day but no day of its own takes the day of the clause before ("明天上午9点开会，下午3点
//! 去医院" -> "明天下午3点去医院"; a leading bare clock takes its part of day too: "明天下午3点开会，6点..."
//! -> "明天下午6点"), and a clause that names no item acts on the item of the clause before
//! ("把周会改到3点，再推迟半小时", "move standup to 10am, then push it 15 minutes later").

use quickact_time::{TimeContext, is_chinese};

use quickact_shared::planner::schedule::states_a_date;

use super::{Change, Intent, Reading, Target, read};

/// A clause and what it asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub text: String,
    pub intent: Intent,
}

/// Connectors that always join two actions.
const CONNECTORS: [&str; 15] =
    ["，然后", ",然后", "然后", "并且", "同时", "顺便", "，再", ",再", "，接着", ",接着", "；", ";", " and then ", " and also ", ", then "];
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
    // "dinner friday 7pm; book a table ahead": a create whose last clause is a note is one action.
    if let Reading::Understood(Intent::Create(item)) = read(text, ctx)
        && item.description.is_some()
    {
        return None;
    }
    let mut parts = split_on(vec![text.to_owned()], &CONNECTORS);
    if !chinese {
        parts = split_before_verbs(parts);
    }
    let joined = parts.len() >= 2;
    if !joined && matches!(read(text, ctx), Reading::NotUnderstood(_)) {
        parts = split_on(parts, if chinese { &["，", ","] } else { &[", "] });
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
        // "…，下午2点面试候选人，记得带简历": a note goes with the item the clause before creates.
        if let Some(Clause { intent: Intent::Create(item), .. }) = clauses.last_mut()
            && let Some(note) = super::notes::note_of(&part, ctx, chinese)
        {
            item.description = Some(match item.description.take() {
                Some(before) => format!("{before}{}{note}", if chinese { "；" } else { "; " }),
                None => note,
            });
            continue;
        }
        // A clause that names no item ("再推迟半小时") acts on the one before; only then may a time
        // in it ("push it 30 minutes later") be read as a time of day of its own.
        if matches!(read(&part, ctx), Reading::NotUnderstood(_))
            && let Some(clause) = on_item_before(clauses.last(), &part, chinese, ctx)
        {
            clauses.push(clause);
            continue;
        }
        let part = with_day_of(clauses.last(), &part, ctx);
        match read(&part, ctx) {
            Reading::Understood(intent) => clauses.push(Clause { text: part, intent }),
            // "I can't make it to the pottery class, cancel it": a piece that is no action, read
            // whole, is one action about the item it names.
            Reading::NotUnderstood(_) if matches!(read(text, ctx), Reading::Understood(_)) => return None,
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

/// The clause with the day of the clause before it when it states a time of day but no day:
/// "6点提醒我去接孩子" after "明天下午3点开会" reads as "明天下午6点提醒我去接孩子" (a leading bare clock
/// takes the part of day too), "下午3点去医院" after "明天上午9点开会" as "明天下午3点去医院".
fn with_day_of(before: Option<&Clause>, clause: &str, ctx: &TimeContext) -> String {
    let Some(when) = before.and_then(|before| when_of(&before.intent)) else { return clause.to_owned() };
    let chinese = is_chinese(clause);
    let starts_with_clock = clause.chars().next().is_some_and(|c| c.is_ascii_digit() || CLOCK_DIGITS.contains(c));
    if starts_with_clock && chinese {
        // The day and part of day of the clause before: its time expression up to its clock time.
        let day = &when[..clock_at(when).unwrap_or(when.len())];
        return if day.trim().is_empty() { clause.to_owned() } else { format!("{day}{clause}") };
    }
    let matches = quickact_time::find_all(clause, ctx);
    let time_of_day = matches.iter().any(|m| m.resolution.start_time.is_some() || m.resolution.segment.is_some());
    let own_day = matches.iter().any(|m| states_a_date(&m.text));
    let day = day_of(when);
    if !(time_of_day || starts_with_clock) || own_day || day.is_empty() {
        return clause.to_owned();
    }
    // English puts the day where it does not join a meal word into the time ("lunch with Kim at
    // 1pm" + "monday" -> "lunch with Kim at 1pm monday").
    let leads = matches.first().is_some_and(|m| m.span.0 == 0 && !super::words::is_meal_word(m));
    if chinese {
        format!("{day}{clause}")
    } else if leads || starts_with_clock {
        format!("{day} {clause}")
    } else {
        format!("{clause} {day}")
    }
}

/// Where a Chinese time expression's clock time starts: a number followed by 点, 时 or a colon
/// ("明天下午3点" -> before "3"; the 五 of 周五 and the 5 of 5月 are the day's).
fn clock_at(when: &str) -> Option<usize> {
    let chars: Vec<(usize, char)> = when.char_indices().collect();
    let digit = |c: char| c.is_ascii_digit() || CLOCK_DIGITS.contains(c);
    (0..chars.len()).find(|&i| {
        let starts_run = digit(chars[i].1) && (i == 0 || !digit(chars[i - 1].1));
        let end = (i..chars.len()).find(|&j| !digit(chars[j].1));
        starts_run && end.is_some_and(|j| "点时:：".contains(chars[j].1))
    })
    .map(|i| chars[i].0)
}

/// Digits a Chinese clock time may start with.
const CLOCK_DIGITS: &str = "一二三四五六七八九十两俩仨";

/// The day a time expression names, without its time of day: "明天上午9点" -> "明天", "周五下午"
/// -> "周五", "今晚8点" -> "今天", "tomorrow at 9am" -> "tomorrow", "friday morning" -> "friday"; empty
/// when it names no day.
fn day_of(when: &str) -> String {
    const ZH_EVENINGS: [(&str, &str); 4] = [("今晚", "今天"), ("明晚", "明天"), ("昨晚", "昨天"), ("后晚", "后天")];
    const ZH_PARTS: [&str; 16] =
        ["凌晨", "早上", "早晨", "清晨", "一早", "上午", "中午", "正午", "午后", "下午", "傍晚", "晚上", "夜里", "夜间", "半夜", "白天"];
    const EN_PARTS: [&str; 11] = ["at", "@", "morning", "afternoon", "evening", "night", "noon", "midnight", "in", "around", "from"];
    let day = if is_chinese(when) {
        let part_at = when.char_indices().map(|(at, _)| at).find(|&at| ZH_PARTS.iter().any(|p| when[at..].starts_with(p)));
        let cut = [part_at, clock_at(when)].into_iter().flatten().min().unwrap_or(when.len());
        let day = when[..cut].trim().trim_end_matches('的').to_owned();
        ZH_EVENINGS.iter().find(|(evening, _)| day.starts_with(evening)).map_or(day.clone(), |(evening, whole)| day.replacen(evening, whole, 1))
    } else {
        let words: Vec<&str> = when
            .split_whitespace()
            .take_while(|w| {
                let lower = w.to_ascii_lowercase();
                !lower.starts_with(|c: char| c.is_ascii_digit()) && !EN_PARTS.contains(&lower.as_str())
            })
            .collect();
        let day = words.join(" ");
        if day.eq_ignore_ascii_case("tonight") { "today".to_owned() } else { day }
    };
    if states_a_date(&day) { day } else { String::new() }
}

/// A clause that names no item ("再推迟半小时", "push it 15 minutes later") read as acting on the item
/// of the clause before, on the day that item is now on.
fn on_item_before(before: Option<&Clause>, clause: &str, chinese: bool, ctx: &TimeContext) -> Option<Clause> {
    let (target, day_now) = match &before?.intent {
        Intent::Reschedule { target, change: Change::To(when) } => (target, Some(day_of(when)).filter(|d| !d.is_empty())),
        Intent::Reschedule { target, .. } | Intent::Complete(target) => (target, None),
        _ => return None,
    };
    let day_now = day_now.or_else(|| target.date.as_deref().map(day_of).filter(|d| !d.is_empty()));
    let named = if chinese {
        match ["它", "这个", "那个"].iter().find(|p| clause.contains(*p)) {
            Some(pronoun) => clause.replacen(pronoun, &target.query, 1),
            None => format!("把{}{}", target.query, clause.trim_start_matches(['把', '将'])),
        }
    } else {
        let words: Vec<&str> = clause.split_whitespace().collect();
        let at = words.iter().position(|w| ["it", "that", "this"].contains(&w.to_ascii_lowercase().as_str()))?;
        let mut named: Vec<&str> = words.clone();
        named[at] = &target.query;
        named.join(" ")
    };
    match read(&named, ctx) {
        Reading::Understood(Intent::Reschedule { target: Target { query, .. }, change }) if query == target.query => Some(Clause {
            text: clause.to_owned(),
            intent: Intent::Reschedule { target: Target { query, date: day_now }, change },
        }),
        Reading::Understood(Intent::Delete(Target { query, .. })) if query == target.query => {
            Some(Clause { text: clause.to_owned(), intent: Intent::Delete(Target { query, date: day_now }) })
        }
        _ => None,
    }
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

    fn intents(sentence: &str) -> Vec<Intent> {
        match read_clauses(sentence, &ctx()) {
            Some(Ok(clauses)) => clauses.into_iter().map(|c| c.intent).collect(),
            other => panic!("{sentence}: {other:?}"),
        }
    }

    #[test]
    fn a_clause_with_a_time_of_day_and_no_day_takes_the_day_before() {
        assert_eq!(texts("后天早上8点体检，下午两点回公司开会"), ["后天早上8点体检", "后天下午两点回公司开会"]);
        assert_eq!(texts("周五上午10点面试；晚上和朋友吃饭"), ["周五上午10点面试", "周五晚上和朋友吃饭"]);
        assert_eq!(texts("今晚7点健身，然后9点半给老妈打电话"), ["今晚7点健身", "今晚9点半给老妈打电话"]);
        assert_eq!(texts("dentist friday at 9am, then 2pm haircut"), ["dentist friday at 9am", "friday 2pm haircut"]);
        assert_eq!(texts("tomorrow morning gym and then lunch with Kim at 1pm"), ["tomorrow morning gym", "lunch with Kim at 1pm tomorrow"]);
        // A day of its own stays.
        assert_eq!(texts("明天上午9点开会，后天下午3点复诊"), ["明天上午9点开会", "后天下午3点复诊"]);
        // Parts of day without clock times are times too.
        assert_eq!(texts("周六早上跑步，晚上看电影"), ["周六早上跑步", "周六晚上看电影"]);
        assert_eq!(texts("gym tomorrow morning, dinner with Lee in the evening"), ["gym tomorrow morning", "dinner with Lee in the evening tomorrow"]);
    }

    #[test]
    fn a_note_after_several_clauses_goes_with_the_last_item() {
        let [first, second] = &intents("后天上午10点到11点和王总开会，下午2点面试候选人，记得带简历")[..] else { panic!() };
        let (Intent::Create(first), Intent::Create(second)) = (first, second) else { panic!() };
        assert_eq!((first.description.as_deref(), second.title.as_str(), second.description.as_deref()), (None, "面试候选人", Some("记得带简历")));
    }

    #[test]
    fn a_clause_without_an_item_acts_on_the_item_before() {
        let weekly = Target { query: "周会".into(), date: None };
        assert_eq!(
            intents("把周会改到3点，再推迟半小时"),
            [Intent::Reschedule { target: weekly.clone(), change: Change::To("3点".into()) }, Intent::Reschedule { target: weekly, change: Change::By("半小时".into()) }]
        );
        // The item is looked for on the day it was moved to.
        let [_, second] = &intents("把体检挪到周五上午，然后再把它提前一小时")[..] else { panic!() };
        assert_eq!(second, &Intent::Reschedule { target: Target { query: "体检".into(), date: Some("周五".into()) }, change: Change::By("-一小时".into()) });
        let [_, second] = &intents("move the design review to monday 2pm, then push it 30 minutes later")[..] else { panic!() };
        assert_eq!(second, &Intent::Reschedule { target: Target { query: "design review".into(), date: Some("monday".into()) }, change: Change::By("30 minutes".into()) });
    }

    #[test]
    fn one_action_stays_one_and_half_read_sentences_are_refused() {
        for one in ["后天上午10点评审，开一个半小时", "call mom and dad tomorrow at 5pm", "明天下午3点到4点开会", "buy milk, eggs and bread"] {
            assert_eq!(read_clauses(one, &ctx()), None, "{one}");
        }
        assert!(matches!(read_clauses("删除明天的健身，然后今天天气怎么样", &ctx()), Some(Err(_))));
    }
}
