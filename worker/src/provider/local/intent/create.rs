//! New items: "明天下午3点到4点开会", "提醒我吃药", "buy milk", "dentist appointment friday 10am".

use quickact_time::{Grain, TimeContext, TimeMatch, find_all};

use super::{
    Intent, NewItem, Reading, VAGUE,
    everyday::{having, is_gathering, is_vague},
    words::{MEALS, is_meal_word, is_question, join_cjk, join_times, merge},
};
use crate::provider::local::text::{find_any, remove_spans, squash, trim_fillers};

pub(super) const ZH_CREATE_WORDS: [&str; 16] =
    ["提醒我", "提醒", "帮我", "请", "记得", "添加", "新建", "创建", "安排", "加个", "加一个", "待办事项", "待办", "我要", "记录一下", "记录"];
pub(super) const EN_CREATE_WORDS: [&str; 33] = [
    "remind me to", "remind me about", "remind me", "please", "add a", "add an", "add", "create a", "create an", "create", "schedule a",
    "schedule an", "schedule", "new", "todo", "to-do", "task", "reminder", "event", "i need to", "log", "record", "note", "set up a", "set up an",
    "set up", "don't let me forget to", "do not let me forget to", "don't let me forget", "make sure i", "sometime", "to do:", "to do",
];

pub(super) fn create(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    let lower = text.to_lowercase();
    let (priority, priority_span) = priority(text, chinese);
    let matches = find_all(text, ctx);
    let kind_word: Option<&'static str> = if chinese {
        if text.contains("提醒") {
            Some("reminder")
        } else if ["待办", "任务", "记得"].iter().any(|w| text.contains(w)) {
            Some("todo")
        } else {
            None
        }
    } else if find_any(&lower, &["remind me", "reminder", "don't let me forget", "do not let me forget"]).is_some() {
        Some("reminder")
    } else if find_any(&lower, &["todo", "to-do", "to do:", "task", "i need to", "i have to"]).is_some() {
        Some("todo")
    } else if find_any(&lower, &["event", "meeting", "appointment"]).is_some() && !matches.is_empty() {
        Some("event")
    } else {
        None
    };
    let create_verb = if chinese {
        ["添加", "新建", "创建", "安排", "加个", "加一个", "记一下", "记下", "记点", "记个"].iter().any(|w| text.contains(w))
    } else {
        find_any(&lower, &["add", "create", "schedule", "new", "book", "log", "record"]).is_some_and(|(at, _)| at == 0)
    };
    // "开会", "team dinner": a gathering alone is an event today.
    let gathering = is_gathering(text, chinese);
    let short = if chinese { text.chars().count() <= 8 } else { text.split_whitespace().count() <= 4 };
    if matches.is_empty() && kind_word.is_none() && !create_verb && !(gathering && short) {
        return None;
    }
    if is_question(text, chinese) {
        return Some(Reading::NotUnderstood("a question, not a request"));
    }
    let chars: Vec<char> = text.chars().collect();
    // "Board lunch friday at 12:30": the resolver reads "lunch friday at 12:30" as one time, but
    // the meal after a noun is the item's name; the rest of the match is the time.
    let matches: Vec<TimeMatch> = matches.into_iter().map(|m| without_leading_name(m, &chars)).collect();
    // "Board lunch", "morning standup notes", "下午茶": a part-of-day word that names the item stays
    // in the title, and gives the time only when no clock time is stated.
    let title_word = |m: &TimeMatch| is_meal_word(m) || names_the_item(m, &chars, &matches);
    // "周六早上跑步，晚上看电影": two times of day set apart by a comma are two items.
    let of_day: Vec<&TimeMatch> =
        matches.iter().filter(|m| (m.resolution.start_time.is_some() || m.resolution.segment.is_some()) && !title_word(m)).collect();
    if of_day.windows(2).any(|w| w[0].span.1 <= w[1].span.0 && chars[w[0].span.1..w[1].span.0].iter().any(|c| matches!(c, ',' | '，' | ';' | '；'))) {
        return Some(Reading::NotUnderstood("several times"));
    }
    let clocks = matches.iter().filter(|m| m.resolution.start_time.is_some() && !title_word(m)).count();
    if clocks > 1 {
        // "明天上午9点到11点，下午2点到4点培训": two times, two items.
        return Some(Reading::NotUnderstood("several times"));
    }
    let has_clock = clocks == 1;

    // Split the time expressions: durations give the length, the rest is the time.
    let mut duration_minutes = None;
    let mut time_matches = Vec::new();
    let mut spans = Vec::new();
    for m in &matches {
        if title_word(m) {
            // "lunch with Sarah at 12:30": the meal is the title; alone it also gives the part of day.
            if !has_clock {
                time_matches.push(m.clone());
            }
            continue;
        }
        let r = &m.resolution;
        // A length alone ("2小时", "45 minutes"), not a date or part of day that carries one.
        let is_duration = r.duration_minutes.is_some()
            && r.grain == Grain::Minute
            && r.start_time.is_none()
            && r.segment.is_none()
            && r.rrule.is_none()
            && !m.text.contains('后')
            && !m.text.contains("以后");
        if is_duration && r.duration_minutes.is_some_and(|minutes| minutes >= 24 * 60) {
            // "请假3天", "出差两周": an item has no length in days, so the words stay in the title.
            continue;
        }
        for (mut start, mut end) in m.pieces() {
            // "dinner at 8 on friday": the preposition before a time goes with it.
            for preposition in [" at ", " on "] {
                let len = preposition.chars().count() - 1;
                if !chinese && start >= len && chars[start - len..start].iter().collect::<String>() == preposition[1..] && (start == len || chars[start - len - 1] == ' ') {
                    start -= len;
                    break;
                }
            }
            // "开2小时的会": the 的 after a duration goes with it; "周五前交": 前 after a date too.
            for connector in ["的", "之前", "以前", "前", "之内", "以内", "内", "开始", "起", "'s", "’s"] {
                let len = connector.chars().count();
                // 起 of 起床 (get up), 起飞 (take off) is a verb, not "from".
                let verb_after = connector == "起" && chars.get(end + len).is_some_and(|c| "床飞来身草".contains(*c));
                if chars.len() >= end + len && chars[end..end + len].iter().collect::<String>() == connector
                    && !verb_after
                    && (connector == "的" || !is_duration) {
                        end += len;
                        break;
                    }
            }
            spans.push((start, end));
        }
        // "评审，开一个半小时", "dentist 2pm, takes about an hour": after a comma, the words before
        // the duration are about the duration, not the title.
        if let Some((gap_start, gap_end)) = m.gap
            && let Some(comma) = (gap_start..gap_end).rev().find(|&i| matches!(chars[i], ',' | '，' | '、'))
        {
            spans.push((comma, gap_end));
        }
        if is_duration {
            duration_minutes = r.duration_minutes;
        } else {
            // "明天下午3点开2小时的会" is one match: its start and its length.
            if r.duration_minutes.is_some_and(|minutes| minutes < 24 * 60) {
                duration_minutes = duration_minutes.or(r.duration_minutes);
            }
            time_matches.push(m.clone());
        }
    }
    if let Some(span) = priority_span {
        spans.push(span);
    }
    spans.sort();
    let rest = remove_spans(text, &merge(spans));
    let title = clean_title(&rest, chinese);
    // "I have a meeting at 9am tomorrow", "我明天上午有个会": what one has is the item.
    let title = having(&title, chinese).unwrap_or(title);
    // "lunch tomorrow": the meal was read as the time of day, and it is also all the item is.
    let title = if title.is_empty() { leading_meal(&time_matches).unwrap_or(title) } else { title };
    if is_vague(&title, chinese) {
        // "帮我安排一下", "schedule something": nothing to write down yet.
        return Some(Reading::NotUnderstood(VAGUE));
    }
    if title.chars().count() > 100 {
        return Some(Reading::NotUnderstood("no title"));
    }
    let when = join_times(&time_matches, chinese, ctx);
    let timed = time_matches.iter().any(|m| m.resolution.start_time.is_some() || m.resolution.segment.is_some());
    // A gathering is an event even with a day and no clock time ("明天开会", "dinner with Sam on
    // friday"); a time of day makes anything an event.
    let kind = kind_word.or(if timed || gathering { Some("event") } else { Some("todo") });
    // An event without a clock time or part of day takes the whole day (the planner settles today's
    // into the evening once it is evening), so it shows in its day and meets the conflict check.
    // A meal in the title is at its own time of day ("dinner with Sam on friday" is in the evening).
    let segment = (kind == Some("event") && !timed).then(|| meal_segment(&title, chinese).unwrap_or("all_day"));
    // "昨天上午去了牙医", "log yesterday's run at 7am": a day before today is a record of what
    // happened (a passed time today is not: it keeps today's rule).
    let record = time_matches.iter().any(|m| m.resolution.rrule.is_none() && m.resolution.end_date.unwrap_or(m.resolution.date) < ctx.today());
    // "这周内把简历改好", "finish the deck this week": a to-do within a period that has begun is due
    // at its end, not on its first day.
    let today = ctx.today();
    let when = match time_matches.as_slice() {
        [m] if kind == Some("todo") && m.resolution.date <= today && m.resolution.end_date.is_some_and(|end| end > today) && m.resolution.start_time.is_none() => {
            m.resolution.end_date.map(|end| end.to_string())
        }
        _ => when,
    };
    Some(Reading::Understood(Intent::Create(NewItem { kind, title, description: None, when, segment, duration_minutes, priority, record })))
}

/// The part of the day of a meal the title names.
fn meal_segment(title: &str, chinese: bool) -> Option<&'static str> {
    let lower = title.to_lowercase();
    MEALS.iter().find(|(meal, _)| if chinese { lower.contains(meal) } else { lower.split(|c: char| !c.is_alphanumeric()).any(|w| w == *meal) }).map(|(_, part)| *part)
}

/// The meal a time match starts with ("lunch tomorrow"), as written.
fn leading_meal(matches: &[TimeMatch]) -> Option<String> {
    matches.iter().find_map(|m| {
        let first = m.text.split_whitespace().next()?;
        MEALS.iter().any(|(meal, _)| first.eq_ignore_ascii_case(meal)).then(|| first.to_owned())
    })
}

/// English words the resolver reads as a part of the day that also name meals and meetings.
const EN_PART_NAMES: [&str; 7] = ["lunch", "lunchtime", "morning", "afternoon", "evening", "night", "breakfast"];

/// A match that starts with a part-of-day word right after a noun of the title ("Board lunch
/// friday at 12:30", "team lunch tomorrow at noon"), without that word: it names the item.
fn without_leading_name(m: TimeMatch, chars: &[char]) -> TimeMatch {
    let text_chars: Vec<char> = m.text.chars().collect();
    let first_end = text_chars.iter().position(|c| c.is_whitespace()).unwrap_or(text_chars.len());
    let first: String = text_chars[..first_end].iter().collect::<String>().to_lowercase();
    let rest_start = (first_end..text_chars.len()).find(|&i| !text_chars[i].is_whitespace());
    let Some(rest_start) = rest_start.filter(|_| EN_PART_NAMES.contains(&first.as_str()) && m.gap.is_none()) else { return m };
    // the word before the match: a noun of the title, not a preposition or command
    let before: String = chars[..m.span.0].iter().rev().skip_while(|c| c.is_whitespace()).take_while(|c| c.is_ascii_alphabetic()).collect::<Vec<_>>().into_iter().rev().collect();
    let before = before.to_lowercase();
    if before.is_empty() || EN_NOT_A_NAME.contains(&before.as_str()) || EN_CREATE_WORDS.contains(&before.as_str()) {
        return m;
    }
    TimeMatch { span: (m.span.0 + rest_start, m.span.1), text: text_chars[rest_start..].iter().collect(), ..m }
}

/// Part-of-day words that name an item when a noun follows them in Chinese.
const ZH_NAMED_PARTS: [&str; 2] = ["下午茶", "夜宵"];

/// Words after which an English part-of-day word is still the time, not part of a name
/// ("morning at 9", "evening with Sam").
const EN_NOT_A_NAME: [&str; 24] = [
    "at", "on", "in", "for", "with", "to", "by", "from", "until", "till", "and", "or", "the", "a", "an", "this", "next", "every", "of",
    "around", "about", "before", "after", "is",
];

/// A lone part-of-day word used as a modifier of the item's name: "morning standup", "evening
/// class", "afternoon tea", "下午茶" (the next word is a noun of the title, not a time or a
/// preposition).
fn names_the_item(m: &TimeMatch, chars: &[char], matches: &[TimeMatch]) -> bool {
    let r = &m.resolution;
    if r.segment.is_none() || r.start_time.is_some() || r.rrule.is_some() || m.text.trim().contains(char::is_whitespace) {
        return false;
    }
    let after: String = chars[m.span.1..].iter().take(2).collect();
    if ZH_NAMED_PARTS.iter().any(|w| w.starts_with(m.text.as_str()) && format!("{}{after}", m.text).starts_with(w)) {
        return true;
    }
    if !m.text.chars().all(|c| c.is_ascii_alphabetic()) || chars.get(m.span.1) != Some(&' ') {
        return false;
    }
    let start = m.span.1 + 1;
    let end = (start..chars.len()).find(|&i| !chars[i].is_ascii_alphanumeric()).unwrap_or(chars.len());
    let word: String = chars[start..end].iter().collect::<String>().to_lowercase();
    !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphabetic())
        && !EN_NOT_A_NAME.contains(&word.as_str())
        && !matches.iter().any(|o| o.span.0 <= start && start < o.span.1)
}

pub(super) fn clean_title(rest: &str, chinese: bool) -> String {
    if chinese {
        // Pieces around a removed time join up again ("我 要去北京" -> "我要去北京"); spaces stay only
        // between Latin words.
        let joined = join_cjk(rest);
        let mut title = trim_fillers(&joined, &ZH_CREATE_WORDS);
        if let Some(rest) = title.strip_prefix('我') {
            title = rest.to_owned();
        }
        title = trim_fillers(&title, &["的", "要", "去做", "一下", "开始", "截止", "之前", "以前", "前", "了", "在", "从", "到"]);
        title = trim_fillers(&title, &ZH_CREATE_WORDS);
        // "开 会" after removing "2小时的" from "开2小时的会".
        let joined: String = title.split_whitespace().collect::<Vec<_>>().join(if title.chars().any(|c| c.is_ascii_alphabetic()) { " " } else { "" });
        joined
    } else {
        let mut title = trim_fillers(rest, &EN_CREATE_WORDS);
        title = trim_fillers(&title, &["at", "on", "for", "to", "by", "from", "until", "till", "in", "the", "every", "starting", "due", "before", "and", "a", "an", "is", "are"]);
        title = trim_fillers(&title, &EN_CREATE_WORDS);
        squash(&title)
    }
}

/// Priority words and their code-point span: p1-p4, 重要紧急 ... (quadrants), urgent/important.
pub(super) fn priority(text: &str, chinese: bool) -> (Option<u8>, Option<(usize, usize)>) {
    let lower = text.to_lowercase();
    let mut table: Vec<(&str, u8)> = vec![("p1", 1), ("p2", 2), ("p3", 3), ("p4", 4), ("priority 1", 1), ("priority 2", 2), ("priority 3", 3), ("priority 4", 4)];
    if chinese {
        table.extend([
            ("不重要不紧急", 4),
            ("不紧急不重要", 4),
            ("重要且紧急", 1),
            ("又重要又紧急", 1),
            ("重要紧急", 1),
            ("紧急重要", 1),
            ("重要不紧急", 2),
            ("紧急不重要", 3),
            ("非常紧急", 1),
            ("很紧急", 1),
            ("紧急", 1),
            ("很重要", 2),
            ("重要", 2),
            ("高优先级", 1),
            ("低优先级", 4),
        ]);
    } else {
        table.extend([
            ("urgent and important", 1),
            ("important and urgent", 1),
            ("important but not urgent", 2),
            ("important, not urgent", 2),
            ("urgent but not important", 3),
            ("not urgent or important", 4),
            ("high priority", 1),
            ("low priority", 4),
            ("urgent", 1),
            ("asap", 1),
            ("important", 2),
        ]);
    }
    let words: Vec<&str> = table.iter().map(|(w, _)| *w).collect();
    // The longest phrase at the earliest position wins (find_any prefers the longer on ties).
    let Some((at, word)) = find_any(&lower, &words) else { return (None, None) };
    let value = table.iter().find(|(w, _)| *w == word).map(|(_, v)| *v);
    let start = lower[..at].chars().count();
    (value, Some((start, start + word.chars().count())))
}
