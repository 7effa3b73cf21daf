//! Reading one sentence into an intent: create, complete, delete, reschedule or list, with the
//! parts each needs (a title, a target, a new time, filters). Time expressions are located with
//! the resolver (for their spans) and passed on as the user wrote them; the tools resolve them.

use quickact_time::{TimeContext, TimeMatch, find_all};

use super::text::{find_any, is_chinese, remove_spans, squash, trim_fillers};

/// What the sentence asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    Create(NewItem),
    Complete(Target),
    Delete(Target),
    Reschedule { target: Target, change: Change },
    List(Listing),
}

/// An item to create.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewItem {
    pub kind: Option<&'static str>,
    pub title: String,
    /// The time as written (several expressions joined), for the tool to resolve.
    pub when: Option<String>,
    pub duration_minutes: Option<u32>,
    pub priority: Option<u8>,
}

/// The item a sentence refers to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Target {
    /// Words of the title.
    pub query: String,
    /// The day as written ("明天", "2月8日", "friday"), if the sentence names one.
    pub date: Option<String>,
}

/// How a reschedule changes the item.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A new time as written ("晚上8点", "下周二", "friday 3pm").
    To(String),
    /// A move by a duration as written, negative for earlier ("半小时", "-1 hour").
    By(String),
}

/// A listing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing {
    pub date: Option<String>,
    pub kind: Option<&'static str>,
    pub by_priority: bool,
    pub query: Option<String>,
}

/// The verdict on a sentence: an intent, or why it was not understood.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    Understood(Intent),
    NotUnderstood(&'static str),
}

/// One way of reading a sentence: `None` when the sentence is not of this kind.
type Reader = fn(&str, &TimeContext, bool) -> Option<Reading>;

/// Reads a sentence.
pub fn read(sentence: &str, ctx: &TimeContext) -> Reading {
    let text = sentence.trim().trim_end_matches(|c: char| "。.!！?？~～".contains(c)).trim();
    if text.is_empty() {
        return Reading::NotUnderstood("empty");
    }
    let chinese = is_chinese(text);
    // More than one action in one sentence is beyond a rule reader.
    if chinese && ["然后", "并且", "同时", "再把", "顺便"].iter().any(|w| text.contains(w)) {
        return Reading::NotUnderstood("several actions");
    }
    if !chinese && find_any(text, &["and then", "and also", "then"]).is_some() {
        return Reading::NotUnderstood("several actions");
    }
    // The most specific readings first: "把会议取消" must not become a to-do called "会议取消".
    let attempts: [Reader; 5] = [reschedule, delete, complete, list, create];
    for attempt in attempts {
        if let Some(reading) = attempt(text, ctx, chinese) {
            return reading;
        }
    }
    Reading::NotUnderstood("no known action")
}

// --- reschedule -----------------------------------------------------------------------------

const ZH_MOVE_TO: [&str; 16] = [
    "改到", "改成", "改为", "改在", "挪到", "移到", "推迟到", "延期到", "延后到", "推到", "提前到", "调到", "调整到", "换到", "延到", "放到",
];
const ZH_SHIFT_LATER: [&str; 6] = ["往后推", "推迟", "延后", "延迟", "推后", "顺延"];
const ZH_SHIFT_EARLIER: [&str; 2] = ["往前挪", "提前"];

fn reschedule(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
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
    for verb in ["move", "reschedule", "shift", "change", "switch"] {
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

/// A trailing "<duration> earlier|later" (optionally "by <duration> ..."): where it starts, and the
/// signed duration.
fn shift_at_end(rest: &str, ctx: &TimeContext) -> Option<(usize, String)> {
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

fn reschedule_reading(target_text: &str, change: Change, ctx: &TimeContext, chinese: bool) -> Reading {
    let change = match change {
        Change::To(to) => {
            let to = trim_fillers(&to, if chinese { &["吧", "了", "去"] } else { &["please", "instead"] });
            if to.is_empty() || find_all(&to, ctx).is_empty() {
                return Reading::NotUnderstood("no new time");
            }
            Change::To(to)
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

// --- delete and complete --------------------------------------------------------------------

fn delete(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    let object = if chinese {
        let body = strip_leading(text, &["请", "帮我", "麻烦", "我要", "我想"]);
        leading_verb(body, &["删除", "删掉", "删了", "取消", "去掉", "移除", "清除", "撤销"])
            .or_else(|| {
                let body = strip_leading(body, &["把", "将"]);
                (body.len() < text.len() || text.starts_with('把'))
                    .then(|| trailing_verb(body, &["删除", "删掉", "删了", "取消", "去掉", "移除", "取消掉"]))
                    .flatten()
            })?
    } else {
        let lower = text.to_lowercase();
        ["delete", "remove", "cancel", "drop", "erase", "scrap"].iter().find_map(|v| strip_verb(&lower, text, v))?
    };
    Some(match target(object, ctx, chinese) {
        Some(target) => Reading::Understood(Intent::Delete(target)),
        None => Reading::NotUnderstood("no item named"),
    })
}

fn complete(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    let object = if chinese {
        let body = strip_leading(text, &["我已经", "我", "已经", "请", "帮我"]);
        leading_verb(body, &["完成了", "完成", "做完了", "做完", "搞定了", "搞定", "已完成", "标记完成"])
            .or_else(|| {
                let body = strip_leading(body, &["把", "将"]);
                trailing_verb(body, &["已经完成了", "完成了", "做完了", "搞定了", "已完成", "标记为完成", "标记完成", "完成", "办完了"])
            })?
    } else {
        let lower = text.to_lowercase();
        let body = ["i have", "i've", "i", "please"].iter().find_map(|p| strip_verb(&lower, text, p)).unwrap_or(text);
        let lower_body = body.to_lowercase();
        if let Some(rest) = strip_verb(&lower_body, body, "mark").or_else(|| strip_verb(&lower_body, body, "check off")).or_else(|| strip_verb(&lower_body, body, "tick off")) {
            let rest_lower = rest.to_lowercase();
            let end = ["as done", "as complete", "as completed", "as finished", "done", "complete", "completed", "off"]
                .iter()
                .find_map(|s| rest_lower.trim_end().strip_suffix(s).map(|r| r.len()))
                .unwrap_or(rest.len());
            &rest[..end]
        } else if let Some(rest) = ["done:", "done", "finished", "finish", "completed", "complete"].iter().find_map(|v| strip_verb(&lower_body, body, v)) {
            rest
        } else {
            let trimmed = lower_body.trim_end();
            let end = [" is done", " is finished", " is complete", " done", " finished", " completed"]
                .iter()
                .find_map(|s| trimmed.strip_suffix(s).map(|r| r.len()))?;
            &body[..end]
        }
    };
    // "finish the report by friday" asks for a to-do with a deadline, not to tick one off.
    if !chinese && find_any(object, &["by", "before", "due"]).is_some() && !find_all(object, ctx).is_empty() {
        return None;
    }
    Some(match target(object, ctx, chinese) {
        Some(target) => Reading::Understood(Intent::Complete(target)),
        None => Reading::NotUnderstood("no item named"),
    })
}

/// The item a phrase names: its words (the query) and the day it mentions.
fn target(phrase: &str, ctx: &TimeContext, chinese: bool) -> Option<Target> {
    let phrase = strip_leading(phrase.trim(), &["帮我", "请", "麻烦", "我要", "我想", "把", "将"]);
    let matches: Vec<TimeMatch> = find_all(phrase, ctx).into_iter().filter(|m| !is_meal_word(m)).collect();
    let date = join_times(&matches, chinese, ctx);
    let spans: Vec<(usize, usize)> = matches.iter().map(|m| m.span).collect();
    let rest = remove_spans(phrase, &spans);
    let query = if chinese {
        // A kind word names the list the item is on, not its title ("删除吃药提醒").
        let q: String = rest.split_whitespace().collect();
        
        trim_fillers(
            &q,
            &["截止日期", "截止时间", "的时间", "的日期", "时间", "的", "我的", "那个", "这个", "一下", "了", "个", "把", "将", "事项", "日程", "安排", "提醒", "待办事项", "待办", "任务"],
        )
    } else {
        let cleaned: Vec<&str> = rest
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| c.is_ascii_punctuation() && c != '-'))
            .map(|w| w.strip_suffix("'s").unwrap_or(w))
            .filter(|w| !w.is_empty() && !["the", "my", "a", "an", "item", "event", "task", "todo", "reminder", "on", "at", "for", "'s", "s"].contains(&w.to_lowercase().as_str()))
            .collect();
        cleaned.join(" ")
    };
    // "it", "那个": the item is not named; several items at once are beyond the rules.
    const PRONOUNS: [&str; 8] = ["it", "that", "this", "them", "它", "这个", "那个", "这"];
    const BULK: [&str; 6] = ["all", "every", "everything", "所有", "全部", "都"];
    let lower = query.to_lowercase();
    if PRONOUNS.contains(&lower.as_str()) || BULK.iter().any(|b| if chinese { query.contains(b) } else { lower.split_whitespace().any(|w| w == *b) }) {
        return None;
    }
    (!query.is_empty()).then_some(Target { query, date })
}

// --- list -----------------------------------------------------------------------------------

fn list(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
    let lower = text.to_lowercase();
    let matches = find_all(text, ctx);
    let asks = if chinese {
        let asking = ["有什么", "有哪些", "有啥", "哪些", "看看", "查看", "列出", "显示", "查一下", "看一下", "查询", "最紧急", "最重要"]
            .iter()
            .any(|w| text.contains(w))
            || starts_with_count(text);
        let about_the_planner = !matches.is_empty() || ["安排", "待办", "任务", "日程", "会议", "提醒", "计划", "事"].iter().any(|w| text.contains(w));
        asking && about_the_planner
    } else {
        let starts = ["what's on", "whats on", "what is on", "what do i have", "what have i got", "what's happening", "what are my", "show", "list", "display", "any "];
        starts.iter().any(|w| lower.starts_with(w))
            || find_any(&lower, &["agenda", "my schedule", "do i have"]).is_some()
            || find_any(&lower, &["top"]).is_some_and(|(at, _)| lower[at + 3..].trim_start().starts_with(|c: char| c.is_ascii_digit()) || ["one", "two", "three", "four", "five", "ten"].iter().any(|n| lower[at + 3..].trim_start().starts_with(n)))
    };
    if !asks {
        return None;
    }
    let kind = if chinese {
        if ["待办", "任务", "要做"].iter().any(|w| text.contains(w)) {
            Some("todo")
        } else if text.contains("提醒") {
            Some("reminder")
        } else if ["会议", "会", "活动"].iter().any(|w| text.contains(w)) && !text.contains("安排") {
            Some("event")
        } else {
            None
        }
    } else if find_any(&lower, &["todo", "todos", "to-dos", "to-do", "task", "tasks"]).is_some() {
        Some("todo")
    } else if find_any(&lower, &["reminder", "reminders"]).is_some() {
        Some("reminder")
    } else if find_any(&lower, &["meeting", "meetings", "event", "events"]).is_some() {
        Some("event")
    } else {
        None
    };
    let by_priority = if chinese {
        ["紧急", "重要", "优先"].iter().any(|w| text.contains(w))
    } else {
        find_any(&lower, &["urgent", "important", "priority", "pressing"]).is_some()
    };
    Some(Reading::Understood(Intent::List(Listing { date: join_times(&matches, chinese, ctx), kind, by_priority, query: None })))
}

fn starts_with_count(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next() == Some('前') && chars.next().is_some_and(|c| c.is_ascii_digit() || "一二两三四五六七八九十".contains(c))
}

// --- create ---------------------------------------------------------------------------------

const ZH_CREATE_WORDS: [&str; 14] =
    ["提醒我", "提醒", "帮我", "请", "记得", "添加", "新建", "创建", "安排", "加个", "加一个", "待办事项", "待办", "我要"];
const EN_CREATE_WORDS: [&str; 20] = [
    "remind me to", "remind me about", "remind me", "please", "add a", "add an", "add", "create a", "create an", "create", "schedule a",
    "schedule an", "schedule", "new", "todo", "to-do", "task", "reminder", "event", "i need to",
];

fn create(text: &str, ctx: &TimeContext, chinese: bool) -> Option<Reading> {
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
    } else if find_any(&lower, &["remind me", "reminder"]).is_some() {
        Some("reminder")
    } else if find_any(&lower, &["todo", "to-do", "task", "i need to", "i have to"]).is_some() {
        Some("todo")
    } else if find_any(&lower, &["event", "meeting", "appointment"]).is_some() && !matches.is_empty() {
        Some("event")
    } else {
        None
    };
    let create_verb = if chinese {
        ["添加", "新建", "创建", "安排", "加个", "加一个", "记一下", "记下"].iter().any(|w| text.contains(w))
    } else {
        find_any(&lower, &["add", "create", "schedule", "new", "book"]).is_some_and(|(at, _)| at == 0)
    };
    if matches.is_empty() && kind_word.is_none() && !create_verb {
        return None;
    }
    if is_question(text, chinese) {
        return Some(Reading::NotUnderstood("a question, not a request"));
    }
    let clocks = matches.iter().filter(|m| m.resolution.start_time.is_some() && !is_meal_word(m)).count();
    if clocks > 1 {
        // "明天上午9点到11点，下午2点到4点培训": two times, two items.
        return Some(Reading::NotUnderstood("several times"));
    }
    let has_clock = clocks == 1;

    // Split the time expressions: durations give the length, the rest is the time.
    let mut duration_minutes = None;
    let mut time_matches = Vec::new();
    let mut spans = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for m in &matches {
        if is_meal_word(m) {
            // "lunch with Sarah at 12:30": the meal is the title; alone it also gives the part of day.
            if !has_clock {
                time_matches.push(m.clone());
            }
            continue;
        }
        let r = &m.resolution;
        let is_duration = r.duration_minutes.is_some() && r.start_time.is_none() && r.rrule.is_none() && !m.text.contains('后') && !m.text.contains("以后");
        let mut end = m.span.1;
        // "开2小时的会": the 的 after a duration goes with it; "周五前交": 前 after a date too.
        for connector in ["的", "之前", "以前", "前", "开始", "起"] {
            let len = connector.chars().count();
            if chars.len() >= end + len && chars[end..end + len].iter().collect::<String>() == connector
                && (connector == "的" || !is_duration) {
                    end += len;
                    break;
                }
        }
        spans.push((m.span.0, end));
        if is_duration {
            duration_minutes = r.duration_minutes;
        } else {
            time_matches.push(m.clone());
        }
    }
    if let Some(span) = priority_span {
        spans.push(span);
    }
    spans.sort();
    let rest = remove_spans(text, &merge(spans));
    let title = clean_title(&rest, chinese);
    if title.is_empty() || title.chars().count() > 100 {
        return Some(Reading::NotUnderstood("no title"));
    }
    let when = join_times(&time_matches, chinese, ctx);
    let timed = time_matches.iter().any(|m| m.resolution.start_time.is_some() || m.resolution.segment.is_some());
    let kind = kind_word.or(if timed { Some("event") } else { Some("todo") });
    Some(Reading::Understood(Intent::Create(NewItem { kind, title, when, duration_minutes, priority })))
}

fn clean_title(rest: &str, chinese: bool) -> String {
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
        title = trim_fillers(&title, &["at", "on", "for", "to", "by", "from", "until", "till", "in", "the", "every", "starting", "due", "before", "and", "a", "an", "due"]);
        title = trim_fillers(&title, &EN_CREATE_WORDS);
        squash(&title)
    }
}

/// Priority words and their code-point span: p1-p4, 重要紧急 ... (quadrants), urgent/important.
fn priority(text: &str, chinese: bool) -> (Option<u8>, Option<(usize, usize)>) {
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

// --- shared helpers -------------------------------------------------------------------------

/// Words the resolver reads as a part of day that are also what the item is ("lunch with Sarah",
/// "cancel team lunch"): they stay in the title or query.
const MEAL_WORDS: [&str; 6] = ["lunch", "lunchtime", "dinner", "breakfast", "brunch", "supper"];

fn is_meal_word(m: &TimeMatch) -> bool {
    MEAL_WORDS.contains(&m.text.trim().to_lowercase().as_str())
}

/// Questions are not requests to write something ("今天天气怎么样", "is it raining tomorrow?").
fn is_question(text: &str, chinese: bool) -> bool {
    let trimmed = text.trim();
    if trimmed.ends_with('?') || trimmed.ends_with('？') {
        return true;
    }
    if chinese {
        ["怎么样", "怎样", "如何", "为什么", "是什么", "什么时候", "吗", "呢", "几点了", "多少"].iter().any(|w| trimmed.ends_with(w) || trimmed.contains(w) && *w != "吗" && *w != "呢")
    } else {
        let lower = trimmed.to_lowercase();
        ["what ", "what's", "how ", "why ", "who ", "is it ", "are ", "can you", "could you", "will it", "when is", "where "].iter().any(|w| lower.starts_with(w))
    }
}

/// The time expressions of `matches` as one text, in order ("明天" + "下午3点"), each as the tools
/// will read it ("3" of "at 3" goes on as "at 3").
fn join_times(matches: &[TimeMatch], chinese: bool, ctx: &TimeContext) -> Option<String> {
    if matches.is_empty() {
        return None;
    }
    let parts: Vec<String> = matches
        .iter()
        .map(|m| {
            let text = m.text.trim();
            if !chinese && quickact_time::resolve(text, ctx).is_none() {
                format!("at {text}")
            } else {
                text.to_owned()
            }
        })
        .collect();
    Some(parts.join(if chinese { "" } else { " " }))
}

/// Removes whitespace except between two Latin letters or digits.
fn join_cjk(text: &str) -> String {
    let chars: Vec<char> = text.trim().chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if c.is_whitespace() {
            let before = out.chars().last();
            let after = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if before.is_some_and(|b| b.is_ascii_alphanumeric()) && after.is_some_and(|a| a.is_ascii_alphanumeric()) && !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(*c);
        }
    }
    out
}

fn merge(spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

fn strip_leading<'a>(text: &'a str, words: &[&str]) -> &'a str {
    let mut current = text.trim();
    loop {
        let before = current;
        for word in words {
            if let Some(rest) = current.strip_prefix(word) {
                current = rest.trim();
            }
        }
        if current == before {
            return current;
        }
    }
}

/// The text after a leading verb.
fn leading_verb<'a>(text: &'a str, verbs: &[&str]) -> Option<&'a str> {
    verbs.iter().find_map(|v| text.strip_prefix(v)).map(str::trim).filter(|rest| !rest.is_empty())
}

/// The text before a trailing verb.
fn trailing_verb<'a>(text: &'a str, verbs: &[&str]) -> Option<&'a str> {
    let trimmed = text.trim_end_matches(['了', '吧', '啦']);
    verbs.iter().find_map(|v| trimmed.strip_suffix(v).or_else(|| text.strip_suffix(v))).map(str::trim).filter(|rest| !rest.is_empty())
}

/// The text after an English verb at the start (`lower` is `text` lowercased).
fn strip_verb<'a>(lower: &str, text: &'a str, verb: &str) -> Option<&'a str> {
    let rest = lower.strip_prefix(verb)?;
    if !rest.starts_with(' ') && !rest.starts_with(':') {
        return None;
    }
    let cut = text.len() - rest.len();
    Some(text[cut..].trim_start_matches(':').trim())
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn ctx() -> TimeContext {
        TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai)
    }

    fn intent(text: &str) -> Intent {
        match read(text, &ctx()) {
            Reading::Understood(intent) => intent,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn creates_take_the_title_from_what_is_left() {
        let Intent::Create(item) = intent("明天下午3点到4点开会") else { panic!() };
        assert_eq!((item.title.as_str(), item.kind, item.when.as_deref()), ("开会", Some("event"), Some("明天下午3点到4点")));
        let Intent::Create(item) = intent("明天下午3点开2小时的会") else { panic!() };
        assert_eq!((item.title.as_str(), item.duration_minutes), ("开会", Some(120)));
        let Intent::Create(item) = intent("提醒我明天早上8点吃药") else { panic!() };
        assert_eq!((item.title.as_str(), item.kind), ("吃药", Some("reminder")));
        let Intent::Create(item) = intent("明天交报告 p1") else { panic!() };
        assert_eq!((item.title.as_str(), item.kind, item.priority), ("交报告", Some("todo"), Some(1)));
        let Intent::Create(item) = intent("remind me to call mom tomorrow at 5pm") else { panic!() };
        assert_eq!((item.title.as_str(), item.kind), ("call mom", Some("reminder")));
        let Intent::Create(item) = intent("dentist appointment friday 10am") else { panic!() };
        assert_eq!((item.title.as_str(), item.kind), ("dentist appointment", Some("event")));
        let Intent::Create(item) = intent("add todo buy milk") else { panic!() };
        assert_eq!((item.title.as_str(), item.kind, item.when), ("buy milk", Some("todo"), None));
    }

    #[test]
    fn targets_separate_words_from_days() {
        assert_eq!(
            intent("把2月8日的会议改到晚上8点"),
            Intent::Reschedule { target: Target { query: "会议".into(), date: Some("2月8日".into()) }, change: Change::To("晚上8点".into()) }
        );
        assert_eq!(intent("把周会推迟半小时"), Intent::Reschedule { target: Target { query: "周会".into(), date: None }, change: Change::By("半小时".into()) });
        assert_eq!(intent("会议提前1小时"), Intent::Reschedule { target: Target { query: "会议".into(), date: None }, change: Change::By("-1小时".into()) });
        assert_eq!(intent("删除明天的健身"), Intent::Delete(Target { query: "健身".into(), date: Some("明天".into()) }));
        assert_eq!(intent("cancel tomorrow's yoga"), Intent::Delete(Target { query: "yoga".into(), date: Some("tomorrow".into()) }));
        assert_eq!(intent("完成报告提交"), Intent::Complete(Target { query: "报告提交".into(), date: None }));
        assert_eq!(intent("mark buy milk as done"), Intent::Complete(Target { query: "buy milk".into(), date: None }));
        assert_eq!(
            intent("move my dentist appointment to Friday 10am"),
            Intent::Reschedule { target: Target { query: "dentist appointment".into(), date: None }, change: Change::To("Friday 10am".into()) }
        );
        assert_eq!(
            intent("push team meeting back 30 minutes"),
            Intent::Reschedule { target: Target { query: "team meeting".into(), date: None }, change: Change::By("30 minutes".into()) }
        );
    }

    #[test]
    fn everyday_phrasings_keep_clean_titles_and_targets() {
        let Intent::Create(item) = intent("我明天要去北京出差") else { panic!() };
        assert_eq!(item.title, "去北京出差");
        let Intent::Create(item) = intent("meeting with design team at 3") else { panic!() };
        assert_eq!((item.title.as_str(), item.when.as_deref()), ("meeting with design team", Some("at 3")));
        let Intent::Create(item) = intent("finish the quarterly report by friday") else { panic!() };
        assert_eq!((item.title.as_str(), item.kind), ("finish the quarterly report", Some("todo")));
        assert_eq!(
            intent("帮我把报告的截止日期改到下周一"),
            Intent::Reschedule { target: Target { query: "报告".into(), date: None }, change: Change::To("下周一".into()) }
        );
    }

    #[test]
    fn listings_carry_their_filters() {
        assert_eq!(intent("明天有什么安排"), Intent::List(Listing { date: Some("明天".into()), ..Default::default() }));
        assert_eq!(intent("前3个最紧急的任务"), Intent::List(Listing { kind: Some("todo"), by_priority: true, ..Default::default() }));
        assert_eq!(intent("what's on tomorrow"), Intent::List(Listing { date: Some("tomorrow".into()), ..Default::default() }));
    }

    #[test]
    fn what_is_not_understood_is_said_so() {
        for text in [
            "你好",
            "asdfgh",
            "推迟半小时",
            "what's the weather like",
            "帮我写一首诗",
            "有什么好吃的",
            "move it to tomorrow",
            "delete all my meetings",
            "取消明天的所有会议",
            "明天上午9点到11点，下午2点到4点培训",
        ] {
            let reading = read(text, &ctx());
            assert!(matches!(reading, Reading::NotUnderstood(_)), "{text}: {reading:?}");
        }
    }
}
