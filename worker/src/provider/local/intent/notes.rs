//! A clause that only adds a note to the item the sentence creates: "明天下午3点开会，记得带电脑",
//! "周四上午10点评审会，需要提前准备材料", "team sync tomorrow 10am, need to prepare the deck ahead".
//!
//! Such a clause is not the sentence's verb: 提前/推迟/取消 or "ahead"/"cancel" inside it are about
//! the preparation, not a command on an item. It is recognised by how it starts (需要, 记得, 别忘了,
//! "bring", "don't forget", ...) and by having no time of its own beyond a length ("记得提前10分钟到"
//! is a note; "记得6点去接孩子" is an item of its own). The note becomes the item's description.

use quickact_shared::planner::schedule::states_a_date;
use quickact_time::{TimeContext, find_all};

use crate::provider::local::text::find_any;

/// How a Chinese note starts.
const ZH_NOTE_STARTS: [&str; 32] = [
    "需要", "要提前", "提前", "记得", "别忘了", "别忘记", "不要忘了", "不要忘记", "不要忘", "别忘", "注意", "带上", "带好", "要带", "记着", "准备好",
    "提前准备", "准备", "务必", "一定要", "得提前", "得带", "需提前",
    // where it is: 地点在国贸, 地址：…
    "地点", "地址", "位置", "会议室", "要准备", "要带上", "要记得", "需准备", "得准备",
];

/// How an English note starts.
const EN_NOTE_STARTS: [&str; 24] = [
    "need to", "needs to", "i need to", "remember to", "remember the", "don't forget", "dont forget", "do not forget", "bring", "take the",
    "pack", "prepare", "make sure", "be sure to", "must", "should", "have to", "gotta", "arrive", "get there",
    // where it is: "location: room 4", "address is 12 Elm St"
    "location", "address", "venue", "room ",
];

/// Words that make a clause one of preparation wherever they stand ("把PPT提前发给老板", "book a
/// table ahead", "print the handouts beforehand").
const ZH_PREPARATION: [&str; 4] = ["提前", "事先", "预先", "提早"];
const EN_PREPARATION: [&str; 5] = ["ahead", "in advance", "beforehand", "before it", "early"];

/// Connectors in front of a note that only join it ("，记得...", "- bring ...", ", and bring ...").
const LEADS: [&str; 5] = ["and ", "also ", "but ", "还", "也"];

/// The sentence split into the part that asks for something and a trailing note, when it ends
/// with one: ("明天下午3点开会", "记得带电脑").
pub(super) fn split_note<'a>(text: &'a str, ctx: &TimeContext, chinese: bool) -> Option<(&'a str, String)> {
    // The last comma that starts a note: "A，B，记得C" keeps "A，B" together.
    let mut cuts: Vec<(usize, usize)> = text
        .char_indices()
        .filter(|(_, c)| matches!(c, '，' | ',' | '；' | ';' | '—'))
        .map(|(at, c)| (at, at + c.len_utf8()))
        .collect();
    if !chinese {
        // "lunch with Sam friday noon and bring the book", "standup at 9 - bring the numbers".
        let lower = text.to_ascii_lowercase();
        for joint in [" and ", " - "] {
            cuts.extend(lower.match_indices(joint).map(|(at, _)| (at, at + joint.len())));
        }
        cuts.sort();
    }
    for (at, after) in cuts {
        let head = text[..at].trim();
        let tail = text[after..].trim().trim_start_matches(['-', ' ']);
        if head.is_empty() {
            continue;
        }
        if let Some(note) = note_of(tail, ctx, chinese) {
            return Some((head, note));
        }
    }
    None
}

/// The note a clause is, if it is one.
pub(super) fn note_of(clause: &str, ctx: &TimeContext, chinese: bool) -> Option<String> {
    let mut body = clause.trim();
    for lead in LEADS {
        if let Some(rest) = strip_start(body, lead) {
            body = rest.trim_start();
        }
    }
    let zh = chinese || quickact_time::is_chinese(body);
    let (starts, preparation) = if zh { (&ZH_NOTE_STARTS[..], &ZH_PREPARATION[..]) } else { (&EN_NOTE_STARTS[..], &EN_PREPARATION[..]) };
    let starts_a_note = starts.iter().any(|start| strip_start(body, start).is_some_and(|rest| !rest.trim().is_empty()));
    let prepares = if zh { preparation.iter().any(|w| body.contains(w)) } else { find_any(body, preparation).is_some() };
    if !(starts_a_note || prepares) {
        return None;
    }
    // A time of its own makes the clause an item ("记得6点去接孩子", "记得明天交报告"); a length or a
    // relative amount does not ("提前10分钟到", "提前一天把PPT发给老板").
    let own_time = find_all(body, ctx).iter().any(|m| {
        let r = &m.resolution;
        r.start_time.is_some() || r.segment.is_some() || r.rrule.is_some() || states_a_date(&m.text)
    });
    if own_time {
        return None;
    }
    let note = body.trim_end_matches(|c: char| "。.!！~～".contains(c)).trim();
    (!note.is_empty() && note.chars().count() <= 200).then(|| note.to_owned())
}

/// `text` without `start` at its beginning (ASCII case-insensitive; an English word must end there).
fn strip_start<'a>(text: &'a str, start: &str) -> Option<&'a str> {
    let head = text.get(..start.len())?;
    if !head.eq_ignore_ascii_case(start) {
        return None;
    }
    let rest = &text[start.len()..];
    let word_goes_on = start.ends_with(|c: char| c.is_ascii_alphabetic()) && rest.starts_with(|c: char| c.is_ascii_alphanumeric());
    (!word_goes_on).then_some(rest)
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn ctx() -> TimeContext {
        TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai)
    }

    fn split(text: &str) -> Option<(String, String)> {
        split_note(text, &ctx(), quickact_time::is_chinese(text)).map(|(head, note)| (head.to_owned(), note))
    }

    #[test]
    fn a_trailing_clause_of_preparation_is_a_note() {
        assert_eq!(split("周四上午10点评审会，需要提前打印合同"), Some(("周四上午10点评审会".into(), "需要提前打印合同".into())));
        assert_eq!(split("后天晚上7点聚餐，别忘了带礼物"), Some(("后天晚上7点聚餐".into(), "别忘了带礼物".into())));
        assert_eq!(split("明天上午面试，记得提前15分钟到"), Some(("明天上午面试".into(), "记得提前15分钟到".into())));
        assert_eq!(split("board review friday 2pm, need to print the handouts ahead"), Some(("board review friday 2pm".into(), "need to print the handouts ahead".into())));
        assert_eq!(split("dinner with Ann tomorrow 7pm - don't forget the wine"), Some(("dinner with Ann tomorrow 7pm".into(), "don't forget the wine".into())));
        assert_eq!(split("下周一上午10点季度汇报，把PPT提前发给老板"), Some(("下周一上午10点季度汇报".into(), "把PPT提前发给老板".into())));
        assert_eq!(split("dinner at Luigi's friday 7pm, book a table in advance"), Some(("dinner at Luigi's friday 7pm".into(), "book a table in advance".into())));
        assert_eq!(split("lunch with Sam friday at noon and bring the book"), Some(("lunch with Sam friday at noon".into(), "bring the book".into())));
        assert_eq!(split("dinner with Ann tomorrow 7pm, and don't forget the wine"), Some(("dinner with Ann tomorrow 7pm".into(), "don't forget the wine".into())));
    }

    #[test]
    fn a_clause_with_a_time_of_its_own_or_no_note_word_is_not_a_note() {
        assert_eq!(split("明天下午3点开会，记得6点去接孩子"), None);
        assert_eq!(split("周五下午开会，记得明天交报告"), None);
        assert_eq!(split("今天寄合同，重要紧急"), None);
        assert_eq!(split("周一上午10点部门评审，开一个半小时"), None);
        assert_eq!(split("call mom, bring"), None, "a note says something");
        assert_eq!(split("standup at 9, bringing nothing"), None, "bring must be a word");
    }
}
