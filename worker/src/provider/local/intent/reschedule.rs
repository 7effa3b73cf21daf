//! Reschedules: "把周会改到周五下午3点", "推迟半小时", "move the dentist to friday 10am", "push standup 30 minutes later".

use quickact_shared::planner::schedule::states_a_date;
use quickact_time::{TimeContext, find_all};

use super::{Intent, Change, Reading, target::target, words::{exact_time, strip_verb}};
use crate::provider::local::text::{find_any, trim_fillers};

pub(super) const ZH_MOVE_TO: [&str; 16] = [
    "改到", "改成", "改为", "改在", "挪到", "移到", "推迟到", "延期到", "延后到", "推到", "提前到", "调到", "调整到", "换到", "延到", "放到",
];
pub(super) const ZH_SHIFT_LATER: [&str; 6] = ["往后推", "推迟", "延后", "延迟", "推后", "顺延"];
pub(super) const ZH_SHIFT_EARLIER: [&str; 2] = ["往前挪", "提前"];

pub(super) fn reschedule(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    if chinese {
        if let Some((at, word)) = find_any(text, &ZH_MOVE_TO) {
            let target = &text[..at];
            let to = text[at + word.len()..].trim();
            return Some(reschedule_reading(target, Change::To(to.to_owned()), ctx, true));
        }
        for (words, sign) in [(&ZH_SHIFT_LATER[..], ""), (&ZH_SHIFT_EARLIER[..], "-")] {
            if let Some((at, word)) = find_any(text, words) {
                let target = &text[..at];
                let by = text[at + word.len()..].trim().trim_start_matches('了');
                if by.is_empty() {
                    return Some(Reading::NotUnderstood("no amount to move by"));
                }
                return Some(reschedule_reading(target, Change::By(format!("{sign}{by}")), ctx, true));
            }
        }
        return None;
    }
    let lower = text.to_lowercase();
    for verb in ["move", "reschedule", "shift", "change", "switch", "swap", "rebook", "bump"] {
        if let Some(rest) = strip_verb(&lower, text, verb) {
            if let Some((at, sep)) = find_any(rest, &[" to ", " for ", " until "]) {
                let to = rest[at + sep.len()..].trim();
                return Some(reschedule_reading(&rest[..at], Change::To(to.to_owned()), ctx, false));
            }
            // "move design review 1 hour earlier", "shift standup 15 minutes later".
            return Some(match shift_at_end(rest, ctx) {
                Some((at, by)) => reschedule_reading(&rest[..at], Change::By(by), ctx, false),
                None => Reading::NotUnderstood("no new time"),
            });
        }
    }
    // "make the team call 15 minutes earlier": only a shift; "make dinner reservations at 7" is a new item.
    if let Some(rest) = strip_verb(&lower, text, "make")
        && let Some((at, by)) = shift_at_end(rest, ctx)
    {
        return Some(reschedule_reading(&rest[..at], Change::By(by), ctx, false));
    }
    if let Some(reading) = instead(text, &lower, ctx) {
        return Some(reading);
    }
    if let Some(reading) = subject_first(text, &lower, ctx) {
        return Some(reading);
    }
    for (verb, sign) in [("push", ""), ("postpone", ""), ("delay", ""), ("bring", "-"), ("pull", "-")] {
        if let Some(rest) = strip_verb(&lower, text, verb) {
            if let Some((at, sep)) = find_any(rest, &[" to ", " until "]) {
                let to = rest[at + sep.len()..].trim();
                return Some(reschedule_reading(&rest[..at], Change::To(to.to_owned()), ctx, false));
            }
            // "push X back 30 minutes", "bring X forward by an hour", "postpone X by 2 days".
            let marker = find_any(rest, &[" back by ", " forward by ", " out by ", " ahead by ", " back ", " forward ", " out ", " ahead ", " by "]);
            let Some((at, sep)) = marker else { return Some(Reading::NotUnderstood("no amount to move by")) };
            let earlier = sign == "-" || sep.contains("forward") || sep.contains("ahead");
            let by = rest[at + sep.len()..].trim();
            let change = Change::By(format!("{}{by}", if earlier { "-" } else { "" }));
            return Some(reschedule_reading(&rest[..at], change, ctx, false));
        }
    }
    None
}

/// "can we do the retro on wednesday instead", "let's have the sync at 4 instead": the item and its
/// new time, said as a plan instead of the old one.
fn instead(text: &str, lower: &str, ctx: &TimeContext) -> Option<Reading> {
    let body_end = lower.trim_end_matches(['?', '.', '!', ' ']).strip_suffix(" instead")?.len();
    const LEADS: [&str; 8] = ["can we do ", "could we do ", "let's do ", "lets do ", "can we have ", "could we have ", "let's have ", "lets have "];
    let lead = LEADS.iter().find(|lead| lower.starts_with(**lead))?;
    let body = &text[lead.len()..body_end];
    let times = find_all(body, ctx);
    let first = times.first()?;
    // The target before the time, the new time after its start ("the retro on wednesday").
    let start = body.char_indices().nth(first.span.0).map_or(body.len(), |(i, _)| i);
    let target_text = body[..start].trim_end().trim_end_matches(" on").trim_end_matches(" at");
    let to = body[start..].trim();
    Some(reschedule_reading(target_text, Change::To(to.to_owned()), ctx, false))
}

/// "the team lunch on monday needs to start an hour later", "standup should be at 10 tomorrow": the
/// item first, then what must change about its time.
fn subject_first(text: &str, lower: &str, ctx: &TimeContext) -> Option<Reading> {
    const MODALS: [&str; 6] = [" needs to ", " need to ", " should ", " has to ", " must ", " will have to "];
    const VERBS: [&str; 7] = ["start ", "begin ", "be moved ", "move ", "be pushed ", "be ", "happen "];
    let (at, modal) = find_any(lower, &MODALS)?;
    let after = &lower[at + modal.len()..];
    let verb = VERBS.iter().find(|v| after.starts_with(**v))?;
    let rest_at = at + modal.len() + verb.len();
    let rest = text[rest_at..].trim();
    let target_text = &text[..at];
    if let Some((_, by)) = shift_at_end(rest, ctx).filter(|(cut, _)| rest[..*cut].trim().is_empty()) {
        return Some(reschedule_reading(target_text, Change::By(by), ctx, false));
    }
    let rest_lower = rest.to_lowercase();
    ["to ", "at ", "on "].iter().any(|p| rest_lower.starts_with(p)).then(|| reschedule_reading(target_text, Change::To(rest.to_owned()), ctx, false))
}

/// "later today, like 6pm", "friday, say 3pm": several expressions of which one is a clock time;
/// the clock says when and the others which day, as the day and time they mean together.
fn one_time(found: &[quickact_time::TimeMatch]) -> Option<String> {
    // A point in time, not a span ("later today" runs from now to midnight).
    let mut clocks = found.iter().filter(|m| m.resolution.start_time.is_some() && m.resolution.end_time.is_none());
    let (clock, None) = (clocks.next()?, clocks.next()) else { return None };
    // A bare hour ("friday at 8") stays text: the tool puts it in the half of the day nearer the item's.
    if found.len() < 2 || clock.resolution.confidence == quickact_time::Confidence::Inferred {
        return None;
    }
    let day = found.iter().find(|m| !std::ptr::eq(*m, clock) && states_a_date(&m.text)).map_or(clock.resolution.date, |m| m.resolution.date);
    Some(exact_time(day, clock.resolution.start_time?))
}

/// A trailing "<duration> earlier|later" (optionally "by <duration> ..."): where it starts, and the
/// signed duration.
pub(super) fn shift_at_end(rest: &str, ctx: &TimeContext) -> Option<(usize, String)> {
    let lower = rest.to_lowercase();
    let (body, sign) = if let Some(body) = lower.trim_end().strip_suffix("earlier") {
        (body, "-")
    } else if let Some(body) = lower.trim_end().strip_suffix("later") {
        (body, "")
    } else {
        return None;
    };
    let duration = find_all(body.trim_end(), ctx).into_iter().last().filter(|m| m.resolution.duration_minutes.is_some())?;
    let start_char = duration.span.0;
    let at = body.char_indices().nth(start_char).map_or(body.len(), |(i, _)| i);
    let at = body[..at].trim_end().strip_suffix(" by").map_or(at, |b| b.len());
    Some((at, format!("{sign}{}", duration.text.trim())))
}

pub(super) fn reschedule_reading(target_text: &str, change: Change, ctx: &TimeContext, chinese: bool) -> Reading {
    let change = match change {
        Change::To(to) => {
            let to = trim_fillers(&to, if chinese { &["吧", "了", "去"] } else { &["please", "instead"] });
            let to = bare_hour(&to, chinese).unwrap_or(to);
            let found = find_all(&to, ctx);
            if to.is_empty() || found.is_empty() {
                return Reading::NotUnderstood("no new time");
            }
            Change::To(one_time(&found).unwrap_or(to))
        }
        Change::By(by) => {
            let (sign, amount) = by.strip_prefix('-').map_or(("", by.as_str()), |rest| ("-", rest));
            let amount = trim_fillers(amount, if chinese { &["吧", "了"] } else { &["please", "later", "earlier"] });
            if amount.is_empty() {
                return Reading::NotUnderstood("no amount to move by");
            }
            Change::By(format!("{sign}{amount}"))
        }
    };
    match target(target_text, ctx, chinese) {
        Some(target) => Reading::Understood(Intent::Reschedule { target, change }),
        None => Reading::NotUnderstood("no item named"),
    }
}

/// A bare number as the new time ("move it to 4", "改到4") is an hour: "at 4", "4点". Its half of
/// the day is the one nearer the item's time (the tool decides).
fn bare_hour(to: &str, chinese: bool) -> Option<String> {
    let hour: u32 = to.trim().parse().ok().filter(|h| (1..=24).contains(h))?;
    Some(if chinese { format!("{hour}点") } else { format!("at {hour}") })
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use quickact_time::TimeContext;

    use super::super::{Change, Intent, Reading, read};

    fn intent(text: &str) -> Intent {
        let ctx = TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
        match read(text, &ctx) {
            Reading::Understood(intent) => intent,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn a_time_in_the_target_stays_with_the_target_and_a_bare_number_is_an_hour() {
        let Intent::Reschedule { target, change } = intent("把周一上午10点的评审改到11") else { panic!() };
        assert_eq!((target.query.as_str(), target.date.as_deref(), change), ("评审", Some("周一上午10点"), Change::To("11点".into())));
        let Intent::Reschedule { target, change } = intent("move the 9:30 standup to 10") else { panic!() };
        assert_eq!((target.query.as_str(), target.date.as_deref(), change), ("standup", Some("9:30"), Change::To("at 10".into())));
        // A trailing 取消 after an item described by its time is a deletion; after a to-do it is the to-do.
        assert!(matches!(intent("下午那场会取消吧"), Intent::Delete(_)));
        assert!(matches!(intent("明天的评审取消"), Intent::Delete(_)));
        assert!(matches!(intent("记得把会员的自动续费取消"), Intent::Create(_)));
        let Intent::Reschedule { target, change } = intent("move tomorrow's massage to the evening") else { panic!() };
        assert_eq!((target.query.as_str(), target.date.as_deref(), change), ("massage", Some("tomorrow"), Change::To("the evening".into())));
    }
}
