//! Reading one sentence into an intent: create, complete, delete, reschedule or list, with the
//! parts each needs (a title, a target, a new time, filters). Time expressions are located with
//! the resolver (for their spans) and passed on as the user wrote them; the tools resolve them.
//!
//! One module per intent (`reschedule`, `delete`, `complete`, `list`, `create`), tried in that
//! order by [`read`]; `target` reads the item a sentence refers to, `words` holds what they share.

mod clauses;
mod complete;
mod create;
mod delete;
mod everyday;
mod list;
mod notes;
mod reschedule;
mod target;
mod words;

pub use clauses::{Clause, read_clauses};
use quickact_time::{TimeContext, is_chinese};
use serde::Serialize;

use super::text::find_any;

/// What the sentence asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    Create(NewItem),
    Complete(Target),
    Delete(Target),
    Reschedule { target: Target, change: Change },
    List(Listing),
}

/// An item to create; it serializes as the arguments of `create_item` (what it does not say is left out).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct NewItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub title: String,
    /// A note the sentence adds to the item ("记得带电脑", "bring the slides").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The time as written (several expressions joined), for the tool to resolve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// `all_day` for an event with neither a clock time nor a part of day ("明天开会").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_minutes: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// The sentence puts it on a day before today: a record of what happened.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub record: bool,
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

/// Why a request is not read when it asks for something without saying what ("帮我安排一下",
/// "schedule something"): a question to the user, not an error.
pub const VAGUE: &str = "too vague to act on";

/// One way of reading a sentence: `None` when the sentence is not of this kind.
type Reader = fn(&str, &TimeContext, bool) -> Option<Reading>;

/// Reads a sentence.
pub fn read(sentence: &str, ctx: &TimeContext) -> Reading {
    let text = sentence.trim().trim_end_matches(|c: char| "。.!！?？~～".contains(c)).trim();
    if text.is_empty() {
        return Reading::NotUnderstood("empty");
    }
    let chinese = is_chinese(text);
    let plain = everyday::plain(text, chinese);
    let text = plain.as_str();
    // "明天下午3点开会，记得带电脑": a trailing note is not the sentence's verb; it goes with the item.
    // After a change to an existing item ("把会议改到3点，记得通知大家") the note is for the user, not
    // the planner: the change is the request.
    if let Some((head, note)) = notes::split_note(text, ctx, chinese) {
        match read(head, ctx) {
            Reading::Understood(Intent::Create(mut item)) => {
                item.description = Some(note);
                return Reading::Understood(Intent::Create(item));
            }
            Reading::Understood(intent @ (Intent::Reschedule { .. } | Intent::Delete(_) | Intent::Complete(_))) => {
                return Reading::Understood(intent);
            }
            _ => {}
        }
    }
    // More than one action in one sentence is beyond a rule reader.
    if chinese && ["然后", "并且", "同时", "再把", "顺便"].iter().any(|w| text.contains(w)) {
        return Reading::NotUnderstood("several actions");
    }
    if !chinese && find_any(text, &["and then", "and also", "then"]).is_some() {
        return Reading::NotUnderstood("several actions");
    }
    // The most specific readings first: "把会议取消" must not become a to-do called "会议取消".
    let attempts: [Reader; 5] = [reschedule::reschedule, delete::delete, complete::complete, list::list, create::create];
    for attempt in attempts {
        if let Some(reading) = attempt(text, ctx, chinese) {
            return reading;
        }
    }
    // "买菜", "buy milk": a bare errand is a to-do for today.
    if everyday::bare_errand(text, ctx, chinese) {
        let title = create::clean_title(text, chinese);
        if !title.is_empty() {
            return Reading::Understood(Intent::Create(NewItem { kind: Some("todo"), title, ..Default::default() }));
        }
    }
    Reading::NotUnderstood("no known action")
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
    fn an_earlier_day_is_a_record_and_a_passed_time_today_is_not() {
        let Intent::Create(item) = intent("昨天上午去了牙医") else { panic!() };
        assert_eq!((item.title.as_str(), item.when.as_deref(), item.record), ("去了牙医", Some("昨天上午"), true));
        let Intent::Create(item) = intent("log yesterday's run at 7am") else { panic!() };
        assert_eq!((item.title.as_str(), item.record), ("run", true));
        let Intent::Create(item) = intent("上周五晚上和老同学吃饭") else { panic!() };
        assert!(item.record, "{item:?}");
        // ctx() is 09:00: 7 this morning has passed, but today keeps today's rule
        let Intent::Create(item) = intent("今天早上7点跑步") else { panic!() };
        assert!(!item.record, "{item:?}");
        let Intent::Create(item) = intent("明天上午去牙医") else { panic!() };
        assert!(!item.record, "{item:?}");
    }

    #[test]
    fn words_that_look_like_times_but_name_the_item_stay_in_the_title() {
        let Intent::Create(item) = intent("Board lunch friday at 12:30") else { panic!() };
        assert_eq!((item.title.as_str(), item.when.as_deref()), ("Board lunch", Some("friday at 12:30")));
        let Intent::Create(item) = intent("morning standup notes tomorrow") else { panic!() };
        assert_eq!(item.title, "morning standup notes");
        let Intent::Create(item) = intent("evening class on thursday at 7pm") else { panic!() };
        assert_eq!((item.title.as_str(), item.when.as_deref()), ("evening class", Some("thursday at 7pm")));
        let Intent::Create(item) = intent("明天喝下午茶") else { panic!() };
        assert_eq!(item.title, "喝下午茶");
        // a part of day followed by a time word or a preposition is still the time
        let Intent::Create(item) = intent("yoga tomorrow morning") else { panic!() };
        assert_eq!((item.title.as_str(), item.when.as_deref()), ("yoga", Some("tomorrow morning")));
        let Intent::Create(item) = intent("run in the evening with Sam") else { panic!() };
        assert_eq!(item.title, "run with Sam");
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
        // A recurrence word describes the series: it names no day.
        assert_eq!(intent("move the weekly sync to 4pm"), Intent::Reschedule { target: Target { query: "sync".into(), date: None }, change: Change::To("4pm".into()) });
        assert_eq!(intent("把每周例会改到周四"), Intent::Reschedule { target: Target { query: "例会".into(), date: None }, change: Change::To("周四".into()) });
        assert_eq!(intent("cancel the daily standup tomorrow"), Intent::Delete(Target { query: "standup".into(), date: Some("tomorrow".into()) }));
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
        assert_eq!(intent("top3 most urgent tasks"), Intent::List(Listing { kind: Some("todo"), by_priority: true, ..Default::default() }));
        assert_eq!(intent("最重要的前两个待办"), Intent::List(Listing { kind: Some("todo"), by_priority: true, ..Default::default() }));
    }

    fn created(text: &str) -> NewItem {
        match intent(text) {
            Intent::Create(item) => item,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn a_clause_of_preparation_is_a_note_on_the_item_not_a_command() {
        let item = created("周四下午2点到3点开季度复盘会，需要提前整理销售数据");
        assert_eq!((item.title.as_str(), item.kind, item.when.as_deref()), ("开季度复盘会", Some("event"), Some("周四下午2点到3点")));
        assert_eq!(item.description.as_deref(), Some("需要提前整理销售数据"));
        let item = created("后天上午10点签合同，记得提前半小时到");
        assert_eq!((item.title.as_str(), item.description.as_deref()), ("签合同", Some("记得提前半小时到")));
        let item = created("client pitch on thursday at 2pm, need to move the demo data ahead");
        assert_eq!((item.title.as_str(), item.description.as_deref()), ("client pitch", Some("need to move the demo data ahead")));
        let item = created("offsite planning tuesday 10am, remember to cancel the room booking first");
        assert_eq!((item.title.as_str(), item.kind), ("offsite planning", Some("event")));
        // After a change, the note is the user's own: the change is the request.
        assert_eq!(intent("把周会改到下午3点，记得通知大家"), Intent::Reschedule { target: Target { query: "周会".into(), date: None }, change: Change::To("下午3点".into()) });
        assert_eq!(intent("cancel the retro, remember to tell the team"), Intent::Delete(Target { query: "retro".into(), date: None }));
    }

    #[test]
    fn gatherings_are_events_and_a_day_without_a_time_is_the_whole_day() {
        for (text, title) in [("周日聚会", "聚会"), ("下周二去面试", "去面试"), ("明天和大学同学约饭", "和大学同学约饭"), ("drinks with Tom on friday", "drinks with Tom"), ("job interview next monday", "job interview")] {
            let item = created(text);
            assert_eq!((item.title.as_str(), item.kind, item.segment), (title, Some("event"), Some("all_day")), "{text}");
        }
        // A time of day is the item's own; an errand with a day stays a to-do.
        assert_eq!(created("周日下午聚会").segment, None);
        let item = created("明天交水费");
        assert_eq!((item.kind, item.segment), (Some("todo"), None));
    }

    #[test]
    fn everyday_words_reach_the_reader() {
        let item = created("后天下午仨点和老李喝茶");
        assert_eq!((item.title.as_str(), item.when.as_deref()), ("和老李喝茶", Some("后天下午仨点")));
        let item = created("coffee w/ Maya tmrw 10am");
        assert_eq!((item.title.as_str(), item.when.as_deref()), ("coffee with Maya", Some("tmrw 10am")));
        for (text, title) in [("洗车", "洗车"), ("缴燃气费", "缴燃气费"), ("pay the water bill", "pay the water bill"), ("return library books", "return library books")] {
            let item = created(text);
            assert_eq!((item.title.as_str(), item.kind, item.when), (title, Some("todo"), None), "{text}");
        }
        let item = created("we have a board meeting on wednesday at 3pm");
        assert_eq!((item.title.as_str(), item.kind), ("board meeting", Some("event")));
        let item = created("我下周三上午有个面试");
        assert_eq!((item.title.as_str(), item.when.as_deref()), ("面试", Some("下周三上午")));
        assert_eq!(
            intent("put off the vendor call until friday"),
            Intent::Reschedule { target: Target { query: "vendor call".into(), date: None }, change: Change::To("friday".into()) }
        );
        assert_eq!(intent("call off tomorrow's yoga"), Intent::Delete(Target { query: "yoga".into(), date: Some("tomorrow".into()) }));
        for vague in ["帮我安排点事", "帮我加个待办", "帮我安排个时间", "新建一个日程", "帮我记一下", "帮我记点东西", "加个事", "schedule something for me", "create an event", "add a task"] {
            assert_eq!(read(vague, &ctx()), Reading::NotUnderstood(VAGUE), "{vague}");
        }
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
            "今天星期几",
            "下周一是几号",
            "去死吧",
        ] {
            let reading = read(text, &ctx());
            assert!(matches!(reading, Reading::NotUnderstood(_)), "{text}: {reading:?}");
        }
    }
}

#[cfg(test)]
mod everyday_leads {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn ctx() -> TimeContext {
        TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai)
    }

    #[test]
    fn a_lead_in_before_the_request_says_nothing() {
        let Reading::Understood(Intent::Create(item)) = read("帮我记一下，周一上午十点去银行开户", &ctx()) else { panic!() };
        assert_eq!((item.title.as_str(), item.when.as_deref()), ("去银行开户", Some("周一上午十点")));
        let Reading::Understood(Intent::Create(item)) = read("hey, could you put lunch with Kim on my calendar for tuesday at 1pm?", &ctx()) else { panic!() };
        assert_eq!(item.title, "lunch with Kim");
        let Reading::Understood(Intent::Create(item)) = read("ok so add a vet visit to my schedule for monday 4pm", &ctx()) else { panic!() };
        assert_eq!(item.title, "vet visit");
    }

    #[test]
    fn saying_it_is_done_or_not_going_acts_on_the_item() {
        assert_eq!(read("报销单交好了", &ctx()), Reading::Understood(Intent::Complete(Target { query: "报销单".into(), date: None })));
        assert_eq!(read("论文改完了", &ctx()), Reading::Understood(Intent::Complete(Target { query: "论文".into(), date: None })));
        assert_eq!(read("周日的羽毛球不去了", &ctx()), Reading::Understood(Intent::Delete(Target { query: "羽毛球".into(), date: Some("周日".into()) })));
        assert_eq!(read("例会不开了", &ctx()), Reading::Understood(Intent::Delete(Target { query: "例会".into(), date: None })));
        assert_eq!(read("不用再提醒我吃药了", &ctx()), Reading::Understood(Intent::Delete(Target { query: "吃药".into(), date: None })));
        assert_eq!(read("stop reminding me to stretch", &ctx()), Reading::Understood(Intent::Delete(Target { query: "stretch".into(), date: None })));
        assert_eq!(
            read("I won't make it to the book club on monday, cancel it", &ctx()),
            Reading::Understood(Intent::Delete(Target { query: "book club".into(), date: Some("monday".into()) }))
        );
        assert_eq!(read("I already sent the invoice to Acme", &ctx()), Reading::Understood(Intent::Complete(Target { query: "send invoice to Acme".into(), date: None })));
    }

    #[test]
    fn an_item_named_first_then_its_new_time_is_a_move() {
        assert_eq!(
            read("the design review on friday needs to start 30 minutes later", &ctx()),
            Reading::Understood(Intent::Reschedule { target: Target { query: "design review".into(), date: Some("friday".into()) }, change: Change::By("30 minutes".into()) })
        );
        assert_eq!(
            read("standup should be at 10 tomorrow", &ctx()),
            Reading::Understood(Intent::Reschedule { target: Target { query: "standup".into(), date: None }, change: Change::To("at 10 tomorrow".into()) })
        );
    }

    #[test]
    fn a_plan_said_instead_and_a_done_said_with_guo_act_on_the_item() {
        assert_eq!(
            read("could we have the standup at 10 instead?", &ctx()),
            Reading::Understood(Intent::Reschedule { target: Target { query: "standup".into(), date: None }, change: Change::To("at 10".into()) })
        );
        assert_eq!(read("我已经交过房租了", &ctx()), Reading::Understood(Intent::Complete(Target { query: "交房租".into(), date: None })));
        let Reading::Understood(Intent::Create(item)) = read("明天早上6点起床跑步", &ctx()) else { panic!() };
        assert_eq!(item.title, "起床跑步");
        let Reading::Understood(Intent::Create(item)) = read("这周内把简历改好", &ctx()) else { panic!() };
        // ctx() is Saturday 2026-02-07: this week ends tomorrow.
        assert_eq!((item.title.as_str(), item.when.as_deref(), item.record), ("把简历改好", Some("2026-02-08"), false));
    }

    #[test]
    fn more_everyday_ways_to_say_done_move_delete_and_add() {
        assert_eq!(read("done with the slides", &ctx()), Reading::Understood(Intent::Complete(Target { query: "slides".into(), date: None })));
        assert_eq!(read("房租搞定", &ctx()), Reading::Understood(Intent::Complete(Target { query: "房租".into(), date: None })));
        assert_eq!(read("take the vet visit off my calendar", &ctx()), Reading::Understood(Intent::Delete(Target { query: "vet visit".into(), date: None })));
        assert_eq!(read("remove the vet visit from my calendar", &ctx()), Reading::Understood(Intent::Delete(Target { query: "vet visit".into(), date: None })));
        assert_eq!(
            read("make the standup 10 minutes later", &ctx()),
            Reading::Understood(Intent::Reschedule { target: Target { query: "standup".into(), date: None }, change: Change::By("10 minutes".into()) })
        );
        let Reading::Understood(Intent::Create(item)) = read("to do: wash the car", &ctx()) else { panic!() };
        assert_eq!((item.title.as_str(), item.kind), ("wash the car", Some("todo")));
    }

    #[test]
    fn done_said_with_any_verb_and_whether_there_is_anything() {
        assert_eq!(read("衣服洗好了", &ctx()), Reading::Understood(Intent::Complete(Target { query: "衣服".into(), date: None })));
        assert_eq!(read("快递取完了", &ctx()), Reading::Understood(Intent::Complete(Target { query: "快递".into(), date: None })));
        assert!(!matches!(read("今天下班前把报销单交了", &ctx()), Reading::Understood(Intent::Complete(_))));
        assert_eq!(read("周五有会吗", &ctx()), Reading::Understood(Intent::List(Listing { date: Some("周五".into()), kind: Some("event"), ..Default::default() })));
    }

    #[test]
    fn short_questions_about_a_day_list_it() {
        assert_eq!(read("anything on monday?", &ctx()), Reading::Understood(Intent::List(Listing { date: Some("monday".into()), ..Default::default() })));
    }
}
