//! The local provider (no network, deterministic) through the real API, worker and database: a table
//! of one-sentence requests in Chinese and English, each with the exact state of the user's items it
//! must leave behind and the verdict it must end with.
//!
//! Every case runs for a fresh user, on the items its `setup` creates through `POST /api/items`; the
//! sentence goes through `POST /api/quick-action` with a fixed `now` (Saturday 2026-02-07 09:00 in
//! Shanghai unless the case says otherwise). Then the case checks the verdict, the task's accounting
//! (`model_used == "local"`, no tokens, no cost) and `GET /api/items` before and after: the one item
//! created, completed, deleted or moved, and that every other item is byte-for-byte untouched. Cases
//! of one category run one after another on one app; every failing case is collected and reported at
//! the end, so one bad case does not hide the others.
//!
//! Dates used below (NOW = Sat 2026-02-07 09:00 +08:00; weeks start on Monday):
//! 今天/today 02-07 (Sat), 明天/tomorrow 02-08 (Sun), 后天/周一/下周一/next monday 02-09,
//! 下周二/next tuesday 02-10, 下周三 02-11, 周五/friday 02-13; 这周 = 02-02..02-08.

use std::collections::BTreeSet;

use quickact_testkit::{TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Saturday 2026-02-07, 09:00 in Shanghai.
const NOW: &str = "2026-02-07T09:00:00+08:00";
/// The same Saturday at 16:00: 15:00 today has passed.
const NOW_16: &str = "2026-02-07T16:00:00+08:00";
/// The same Saturday at 19:00: the rest of today is the evening.
const NOW_19: &str = "2026-02-07T19:00:00+08:00";
const TZ: &str = "Asia/Shanghai";

const TODAY: &str = "2026-02-07";
const TOMORROW: &str = "2026-02-08";
const MON: &str = "2026-02-09";
const TUE: &str = "2026-02-10";
const WED: &str = "2026-02-11";
const THU: &str = "2026-02-12";
const FRI: &str = "2026-02-13";

// ---------------------------------------------------------------------------------------------
// The table's vocabulary
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Lang {
    Zh,
    En,
}

/// An item a case starts with, created through `POST /api/items`.
#[derive(Clone, Debug)]
struct Seed {
    kind: &'static str,
    title: &'static str,
    date: &'static str,
    start: Option<&'static str>,
    end: Option<&'static str>,
    segment: Option<&'static str>,
    priority: Option<u8>,
    completed: bool,
}

fn event(title: &'static str, date: &'static str, start: &'static str, end: &'static str) -> Seed {
    Seed { kind: "event", title, date, start: Some(start), end: Some(end), segment: None, priority: None, completed: false }
}

fn event_in(title: &'static str, date: &'static str, segment: &'static str) -> Seed {
    Seed { kind: "event", title, date, start: None, end: None, segment: Some(segment), priority: None, completed: false }
}

fn todo(title: &'static str, date: &'static str) -> Seed {
    Seed { kind: "todo", title, date, start: None, end: None, segment: None, priority: None, completed: false }
}

fn todo_p(title: &'static str, date: &'static str, priority: u8) -> Seed {
    Seed { priority: Some(priority), ..todo(title, date) }
}

fn reminder(title: &'static str, date: &'static str, at: &'static str) -> Seed {
    Seed { kind: "reminder", title, date, start: Some(at), end: None, segment: None, priority: None, completed: false }
}

impl Seed {
    fn done(self) -> Seed {
        Seed { completed: true, ..self }
    }

    fn json(&self) -> Value {
        let mut v = json!({ "kind": self.kind, "title": self.title, "date": self.date });
        if let Some(start) = self.start {
            v["start_time"] = json!(start);
        }
        if let Some(end) = self.end {
            v["end_time"] = json!(end);
        }
        if let Some(segment) = self.segment {
            v["segment"] = json!(segment);
        }
        if let Some(priority) = self.priority {
            v["priority"] = json!(priority);
        }
        if self.completed {
            v["status"] = json!("completed");
        }
        v
    }
}

/// The one item a create must add, field by field (`None`: the field must be absent).
#[derive(Clone, Debug)]
struct New {
    kind: &'static str,
    title: &'static str,
    /// Another title that is accepted as well (only where the spec leaves the choice open).
    alt_title: Option<&'static str>,
    date: &'static str,
    start: Option<&'static str>,
    end: Option<&'static str>,
    segment: Option<&'static str>,
    priority: Option<u8>,
    recurrence: Option<&'static str>,
    /// The item's description (a note the sentence adds); `None`: no description.
    note: Option<&'static str>,
}

fn new_event(title: &'static str, date: &'static str, start: &'static str, end: &'static str) -> New {
    New { kind: "event", title, alt_title: None, date, start: Some(start), end: Some(end), segment: None, priority: None, recurrence: None, note: None }
}

fn new_event_in(title: &'static str, date: &'static str, segment: &'static str) -> New {
    New { kind: "event", title, alt_title: None, date, start: None, end: None, segment: Some(segment), priority: None, recurrence: None, note: None }
}

fn new_todo(title: &'static str, date: &'static str) -> New {
    New { kind: "todo", title, alt_title: None, date, start: None, end: None, segment: None, priority: None, recurrence: None, note: None }
}

/// A reminder or to-do at a time gets no default end.
fn new_reminder(title: &'static str, date: &'static str, at: &'static str) -> New {
    New { kind: "reminder", title, alt_title: None, date, start: Some(at), end: None, segment: None, priority: None, recurrence: None, note: None }
}

impl New {
    fn p(self, priority: u8) -> New {
        New { priority: Some(priority), ..self }
    }

    fn every(self, rrule: &'static str) -> New {
        New { recurrence: Some(rrule), ..self }
    }

    fn or_title(self, alt: &'static str) -> New {
        New { alt_title: Some(alt), ..self }
    }

    fn note(self, note: &'static str) -> New {
        New { note: Some(note), ..self }
    }
}

/// Where a moved item must end up.
#[derive(Clone, Debug)]
struct Slot {
    date: &'static str,
    start: Option<&'static str>,
    end: Option<&'static str>,
    segment: Option<&'static str>,
}

fn slot(date: &'static str, start: &'static str, end: &'static str) -> Slot {
    Slot { date, start: Some(start), end: Some(end), segment: None }
}

fn slot_in(date: &'static str, segment: &'static str) -> Slot {
    Slot { date, start: None, end: None, segment: Some(segment) }
}

/// What a sentence must do. Indexes point into the case's `setup`.
#[derive(Clone, Debug)]
enum Expect {
    /// action_completed; exactly one new item, as described; the setup untouched.
    Creates(New),
    /// action_completed; exactly these new items (matched by title), as described; the setup untouched.
    CreatesAll(Vec<New>),
    /// need_clarification about what the request lacks: no options, a suggestion; nothing changed.
    AsksWhat,
    /// action_completed; this item is completed (completed_at set), everything else untouched.
    Completes(usize),
    /// action_completed; this item is gone from GET /api/items, everything else untouched.
    Deletes(usize),
    /// action_completed; this item now has this date and time (kind, title, priority kept).
    Moves(usize, Slot),
    /// action_completed; `result.items` is exactly these items (any order); nothing changed.
    Lists(Vec<usize>),
    /// action_completed; `result.items` is exactly these items in this order; nothing changed.
    ListsInOrder(Vec<usize>),
    /// need_clarification; `result.options` is exactly these candidates; nothing changed.
    AsksWhich(Vec<usize>),
    /// need_clarification; the suggestion mentions tomorrow (明天 / tomorrow); nothing changed.
    TimePassed,
    /// need_clarification; `result.options` is exactly these conflicting events; nothing changed.
    Conflicts(Vec<usize>),
    /// error (nothing matches the words); suggestion present; nothing changed.
    NotFound,
    /// error (not a request it can read); suggestion present; nothing changed.
    NotUnderstood,
}

struct Case {
    name: &'static str,
    lang: Lang,
    now: &'static str,
    setup: Vec<Seed>,
    text: &'static str,
    expect: Expect,
}

// ---------------------------------------------------------------------------------------------
// The tables
// ---------------------------------------------------------------------------------------------

fn create_cases() -> Vec<Case> {
    use Expect::*;
    use Lang::*;
    vec![
        // Chinese
        Case { name: "a range gives an event with both times", lang: Zh, now: NOW, setup: vec![],
            text: "明天下午3点到4点开会", expect: Creates(new_event("开会", TOMORROW, "15:00", "16:00")) },
        Case { name: "a start without an end lasts the default hour", lang: Zh, now: NOW, setup: vec![],
            text: "明天下午3点开会", expect: Creates(new_event("开会", TOMORROW, "15:00", "16:00")) },
        Case { name: "a part of the day without a clock time gives that segment", lang: Zh, now: NOW, setup: vec![],
            text: "明天下午开会", expect: Creates(new_event_in("开会", TOMORROW, "afternoon")) },
        Case { name: "a duration stated before the start time sets the end", lang: Zh, now: NOW, setup: vec![],
            text: "明天开2小时的会，下午3点开始", expect: Creates(new_event("开会", TOMORROW, "15:00", "17:00")) },
        Case { name: "a duration inside the phrase sets the end and leaves the title", lang: Zh, now: NOW, setup: vec![],
            text: "明天下午3点开2小时的会", expect: Creates(new_event("开会", TOMORROW, "15:00", "17:00")) },
        // 开周会 is what the title rule (strip time, command and priority words) leaves; 周会 is what
        // a person would write down. Both are accepted here.
        Case { name: "a weekly sentence gives a recurring event from the next Monday", lang: Zh, now: NOW, setup: vec![],
            text: "每周一早上9点开周会",
            expect: Creates(new_event("开周会", MON, "09:00", "10:00").or_title("周会").every("FREQ=WEEKLY;BYDAY=MO")) },
        Case { name: "remind me gives a reminder with no default end", lang: Zh, now: NOW, setup: vec![],
            text: "提醒我明天早上8点吃药", expect: Creates(new_reminder("吃药", TOMORROW, "08:00")) },
        // 周五前 (by Friday) is due on that Friday.
        Case { name: "a to-do prefix with a deadline gives a to-do due that day", lang: Zh, now: NOW, setup: vec![],
            text: "待办：周五前交报告", expect: Creates(new_todo("交报告", FRI)) },
        Case { name: "p1 gives priority 1 and leaves the title", lang: Zh, now: NOW, setup: vec![],
            text: "明天交报告 p1", expect: Creates(new_todo("交报告", TOMORROW).p(1)) },
        Case { name: "重要紧急 gives priority 1", lang: Zh, now: NOW, setup: vec![],
            text: "今天寄合同，重要紧急", expect: Creates(new_todo("寄合同", TODAY).p(1)) },
        Case { name: "a to-do without a date is for today and 重要不紧急 gives priority 2", lang: Zh, now: NOW, setup: vec![],
            text: "添加待办：整理发票，重要不紧急", expect: Creates(new_todo("整理发票", TODAY).p(2)) },
        Case { name: "紧急不重要 gives priority 3", lang: Zh, now: NOW, setup: vec![],
            text: "紧急不重要：明天取快递", expect: Creates(new_todo("取快递", TOMORROW).p(3)) },
        Case { name: "下周一 is Monday of next week and p3 gives priority 3", lang: Zh, now: NOW, setup: vec![],
            text: "下周一提交报销单 p3", expect: Creates(new_todo("提交报销单", MON).p(3)) },
        // 记得 is a command word like 帮我, not a reminder marker: without a time this is a to-do.
        Case { name: "记得 is dropped and 不重要不紧急 gives priority 4", lang: Zh, now: NOW, setup: vec![],
            text: "记得周日交水电费，不重要不紧急", expect: Creates(new_todo("交水电费", TOMORROW).p(4)) },
        Case { name: "a bare weekday that is today means today", lang: Zh, now: NOW, setup: vec![],
            text: "周六下午3点打羽毛球", expect: Creates(new_event("打羽毛球", TODAY, "15:00", "16:00")) },
        Case { name: "a month and day gives that date this year", lang: Zh, now: NOW, setup: vec![],
            text: "3月5日上午10点看牙医", expect: Creates(new_event("看牙医", "2026-03-05", "10:00", "11:00")) },
        Case { name: "a date without a year that has passed is next year's", lang: Zh, now: NOW, setup: vec![],
            text: "1月10日交年度总结", expect: Creates(new_todo("交年度总结", "2027-01-10")) },
        Case { name: "帮我安排 is dropped from an evening range next week", lang: Zh, now: NOW, setup: vec![],
            text: "帮我安排下周三晚上7点到9点和老王吃饭", expect: Creates(new_event("和老王吃饭", WED, "19:00", "21:00")) },
        Case { name: "提醒我 in the middle of the sentence still gives a reminder tonight", lang: Zh, now: NOW, setup: vec![],
            text: "今晚8点提醒我给妈妈打电话", expect: Creates(new_reminder("给妈妈打电话", TODAY, "20:00")) },
        Case { name: "a start today that has passed asks instead of writing", lang: Zh, now: NOW_16, setup: vec![],
            text: "今天下午3点开会", expect: TimePassed },
        Case { name: "no date means today, and a passed range today asks", lang: Zh, now: NOW_16, setup: vec![],
            text: "下午2点到3点和客户通电话", expect: TimePassed },
        Case { name: "an overlapping event is a conflict that lists the existing event", lang: Zh, now: NOW,
            setup: vec![event("项目评审", TOMORROW, "15:00", "16:00")],
            text: "明天下午3点半开会", expect: Conflicts(vec![0]) },
        Case { name: "a back-to-back event is not a conflict", lang: Zh, now: NOW,
            setup: vec![event("项目评审", TOMORROW, "15:00", "16:00")],
            text: "明天下午4点到5点开会", expect: Creates(new_event("开会", TOMORROW, "16:00", "17:00")) },
        // English
        Case { name: "remind me to gives a reminder at that time", lang: En, now: NOW, setup: vec![],
            text: "remind me to call mom tomorrow at 5pm", expect: Creates(new_reminder("call mom", TOMORROW, "17:00")) },
        Case { name: "a bare weekday is the next one and an event lasts an hour", lang: En, now: NOW, setup: vec![],
            text: "dentist appointment friday 10am", expect: Creates(new_event("dentist appointment", FRI, "10:00", "11:00")) },
        Case { name: "add todo without a date is a to-do for today", lang: En, now: NOW, setup: vec![],
            text: "add todo buy milk", expect: Creates(new_todo("buy milk", TODAY)) },
        Case { name: "next monday with a range gives both times", lang: En, now: NOW, setup: vec![],
            text: "team meeting next monday 3pm to 4:30pm", expect: Creates(new_event("team meeting", MON, "15:00", "16:30")) },
        Case { name: "every weekday gives a recurring event from Monday", lang: En, now: NOW, setup: vec![],
            text: "every weekday 9am standup",
            expect: Creates(new_event("standup", MON, "09:00", "10:00").every("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")) },
        Case { name: "todo: with by friday and p2 gives a prioritised to-do due friday", lang: En, now: NOW, setup: vec![],
            text: "todo: submit expense report by friday p2", expect: Creates(new_todo("submit expense report", FRI).p(2)) },
        Case { name: "urgent gives priority 1", lang: En, now: NOW, setup: vec![],
            text: "urgent: renew passport tomorrow", expect: Creates(new_todo("renew passport", TOMORROW).p(1)) },
        Case { name: "important gives priority 2", lang: En, now: NOW, setup: vec![],
            text: "important: prepare the board slides by monday", expect: Creates(new_todo("prepare the board slides", MON).p(2)) },
        Case { name: "a bare weekday that is today and an evening without a clock time give tonight's segment", lang: En, now: NOW, setup: vec![],
            text: "yoga class saturday evening", expect: Creates(new_event_in("yoga class", TODAY, "evening")) },
        Case { name: "schedule is dropped from the title", lang: En, now: NOW, setup: vec![],
            text: "schedule code review tomorrow 2pm to 3pm", expect: Creates(new_event("code review", TOMORROW, "14:00", "15:00")) },
        Case { name: "a reminder without a date is for today", lang: En, now: NOW, setup: vec![],
            text: "remind me to water the plants at 6pm", expect: Creates(new_reminder("water the plants", TODAY, "18:00")) },
        Case { name: "a month name and day with minutes gives that date and time", lang: En, now: NOW, setup: vec![],
            text: "lunch with Sarah on march 3 at 12:30pm", expect: Creates(new_event("lunch with Sarah", "2026-03-03", "12:30", "13:30")) },
        Case { name: "a passed month and day without a year is next year's", lang: En, now: NOW, setup: vec![],
            text: "pay rent on jan 5", expect: Creates(new_todo("pay rent", "2027-01-05")) },
        Case { name: "a duration before the title sets the end", lang: En, now: NOW, setup: vec![],
            text: "2 hour workshop tomorrow at 2pm", expect: Creates(new_event("workshop", TOMORROW, "14:00", "16:00")) },
        Case { name: "a passed time today asks and suggests tomorrow", lang: En, now: NOW_16, setup: vec![],
            text: "team sync today at 3pm", expect: TimePassed },
        Case { name: "a passed reminder time today asks", lang: En, now: NOW_16, setup: vec![],
            text: "remind me to take out the trash at 2pm", expect: TimePassed },
        Case { name: "an overlapping event lists the existing one as the option", lang: En, now: NOW,
            setup: vec![event("team sync", MON, "10:00", "11:00")],
            text: "client call monday 10:30am", expect: Conflicts(vec![0]) },
        Case { name: "a length said after the start, past the title, sets the end", lang: Zh, now: NOW, setup: vec![],
            text: "周一上午10点部门评审，开一个半小时", expect: Creates(new_event("部门评审", MON, "10:00", "11:30")) },
        Case { name: "a length written before the title and the day sets the end", lang: En, now: NOW, setup: vec![],
            text: "a 45-minute call with the bank friday at 4pm", expect: Creates(new_event("call with the bank", FRI, "16:00", "16:45")) },
        // Issue 13, point 5: a day before today is a record; names that look like times stay.
        Case { name: "an evening before today is a record and is written", lang: Zh, now: NOW, setup: vec![],
            text: "昨天晚上8点和老同学吃饭", expect: Creates(new_event("和老同学吃饭", "2026-02-06", "20:00", "21:00")) },
        Case { name: "a part of an earlier day is a record too", lang: Zh, now: NOW, setup: vec![],
            text: "前天下午去了医院", expect: Creates(new_event_in("去了医院", "2026-02-05", "afternoon")) },
        Case { name: "a passed time this morning still asks", lang: Zh, now: NOW, setup: vec![],
            text: "今天早上7点跑步", expect: TimePassed },
        Case { name: "log yesterday's run writes it on yesterday", lang: En, now: NOW, setup: vec![],
            text: "log yesterday's run at 7am", expect: Creates(new_event("run", "2026-02-06", "07:00", "08:00")) },
        Case { name: "a meal after a noun stays in the title", lang: En, now: NOW, setup: vec![],
            text: "Board lunch friday at 12:30", expect: Creates(new_event("Board lunch", FRI, "12:30", "13:30")) },
        Case { name: "a part of day before a noun stays in the title", lang: En, now: NOW, setup: vec![],
            text: "evening class on thursday at 7pm", expect: Creates(new_event("evening class", THU, "19:00", "20:00")) },
        Case { name: "下午茶 stays in the title and gives the afternoon", lang: Zh, now: NOW, setup: vec![],
            text: "明天喝下午茶", expect: Creates(new_event_in("喝下午茶", TOMORROW, "afternoon")) },
        Case { name: "an event starting when another ends is created", lang: En, now: NOW,
            setup: vec![event("team sync", MON, "10:00", "11:00")],
            text: "client call monday 11am to 12pm", expect: Creates(new_event("client call", MON, "11:00", "12:00")) },
    ]
}

fn complete_cases() -> Vec<Case> {
    use Expect::*;
    use Lang::*;
    vec![
        Case { name: "完成 with the title completes that to-do", lang: Zh, now: NOW,
            setup: vec![todo("买菜", TODAY), todo("报告提交", MON)],
            text: "完成买菜", expect: Completes(0) },
        Case { name: "完成了 after the title completes it", lang: Zh, now: NOW,
            setup: vec![todo("报告提交", MON), event("周会", MON, "09:00", "10:00")],
            text: "报告提交完成了", expect: Completes(0) },
        Case { name: "an exact title among several matches counts as one", lang: Zh, now: NOW,
            setup: vec![todo("报告提交", MON), todo("报告提交审核", TUE)],
            text: "完成报告提交", expect: Completes(0) },
        Case { name: "two matches the words cannot tell apart ask which", lang: Zh, now: NOW,
            setup: vec![todo("读书笔记第一章", TOMORROW), todo("读书笔记第二章", MON)],
            text: "完成读书笔记", expect: AsksWhich(vec![0, 1]) },
        Case { name: "nothing matching is an error", lang: Zh, now: NOW,
            setup: vec![todo("买菜", TODAY)],
            text: "完成健身计划", expect: NotFound },
        Case { name: "a reminder can be completed too", lang: Zh, now: NOW,
            setup: vec![reminder("吃药", TODAY, "20:00"), todo("买菜", TODAY)],
            text: "吃药完成了", expect: Completes(0) },
        // Only open items are searched: an item already done is no match.
        Case { name: "an item already completed is not a match", lang: Zh, now: NOW,
            setup: vec![todo("交房租", TODAY).done(), todo("交电费", TODAY)],
            text: "完成交房租", expect: NotFound },
        Case { name: "mark ... as done completes that to-do", lang: En, now: NOW,
            setup: vec![todo("buy milk", TODAY), todo("call mom", TOMORROW)],
            text: "mark buy milk as done", expect: Completes(0) },
        Case { name: "I finished the report completes the one report", lang: En, now: NOW,
            setup: vec![todo("write the quarterly report", MON), todo("buy milk", TODAY)],
            text: "I finished the report", expect: Completes(0) },
        Case { name: "done: with an exact title wins over a longer match", lang: En, now: NOW,
            setup: vec![todo("call mom", TOMORROW), todo("call mom about the trip", TUE)],
            text: "done: call mom", expect: Completes(0) },
        Case { name: "two invoices ask which one", lang: En, now: NOW,
            setup: vec![todo("send invoice to Acme", MON), todo("send invoice to Globex", TUE)],
            text: "mark the invoice as done", expect: AsksWhich(vec![0, 1]) },
        Case { name: "no matching to-do is an error", lang: En, now: NOW,
            setup: vec![todo("buy milk", TODAY)],
            text: "mark pick up dry cleaning as done", expect: NotFound },
        Case { name: "is done after the title completes it", lang: En, now: NOW,
            setup: vec![todo_p("pay rent", MON, 1), todo("pay the phone bill", TUE)],
            text: "pay rent is done", expect: Completes(0) },
        Case { name: "an already completed to-do is not found again", lang: En, now: NOW,
            setup: vec![todo("book flights", TODAY).done(), todo("book hotel", MON)],
            text: "mark book flights as done", expect: NotFound },
    ]
}

fn delete_cases() -> Vec<Case> {
    use Expect::*;
    use Lang::*;
    vec![
        Case { name: "the date picks the one of two same-titled events", lang: Zh, now: NOW,
            setup: vec![event_in("健身", TOMORROW, "evening"), event_in("健身", TUE, "evening"), todo("买菜", TODAY)],
            text: "删除明天的健身", expect: Deletes(0) },
        Case { name: "a weekday and a word find the one meeting", lang: Zh, now: NOW,
            setup: vec![event("部门会议", FRI, "14:00", "15:00"), event("项目会议", MON, "10:00", "11:00")],
            text: "取消周五的会议", expect: Deletes(0) },
        Case { name: "two meetings that day ask which", lang: Zh, now: NOW,
            setup: vec![event("项目会议", MON, "10:00", "11:00"), event("部门会议", MON, "15:00", "16:00")],
            text: "取消周一的会议", expect: AsksWhich(vec![0, 1]) },
        Case { name: "no matching title is an error", lang: Zh, now: NOW,
            setup: vec![event_in("健身", TOMORROW, "evening")],
            text: "删除明天的瑜伽课", expect: NotFound },
        Case { name: "把...删掉 deletes the named to-do", lang: Zh, now: NOW,
            setup: vec![todo("买菜", TODAY), todo("买花", TOMORROW)],
            text: "把买菜删掉", expect: Deletes(0) },
        Case { name: "the right title on another day is no match", lang: Zh, now: NOW,
            setup: vec![event_in("健身", TUE, "evening")],
            text: "删除明天的健身", expect: NotFound },
        // 提醒 names the kind, not the title.
        Case { name: "a reminder named by its title and kind is deleted", lang: Zh, now: NOW,
            setup: vec![reminder("吃药", TOMORROW, "08:00"), todo("买药", TODAY)],
            text: "删除吃药提醒", expect: Deletes(0) },
        Case { name: "tomorrow's picks the one of two yoga sessions", lang: En, now: NOW,
            setup: vec![event("yoga", TOMORROW, "07:00", "08:00"), event("yoga", MON, "07:00", "08:00")],
            text: "cancel tomorrow's yoga", expect: Deletes(0) },
        Case { name: "delete the ... deletes the one appointment", lang: En, now: NOW,
            setup: vec![event("dentist appointment", FRI, "10:00", "11:00"), todo("buy milk", TODAY)],
            text: "delete the dentist appointment", expect: Deletes(0) },
        Case { name: "two team lunches ask which", lang: En, now: NOW,
            setup: vec![event("team lunch", MON, "12:00", "13:00"), event("team lunch", THU, "12:00", "13:00")],
            text: "cancel team lunch", expect: AsksWhich(vec![0, 1]) },
        Case { name: "nothing called that is an error", lang: En, now: NOW,
            setup: vec![event("yoga", TOMORROW, "07:00", "08:00")],
            text: "delete the piano lesson", expect: NotFound },
        Case { name: "remove deletes the named to-do only", lang: En, now: NOW,
            setup: vec![todo("buy milk", TODAY), todo("buy bread", TODAY)],
            text: "remove buy milk", expect: Deletes(0) },
        Case { name: "a month and day pick the later of two sessions", lang: En, now: NOW,
            setup: vec![event("book club", FRI, "19:00", "21:00"), event("book club", "2026-02-20", "19:00", "21:00")],
            text: "cancel book club on feb 20", expect: Deletes(1) },
        Case { name: "the right title on the wrong day is no match", lang: En, now: NOW,
            setup: vec![event("yoga", MON, "07:00", "08:00")],
            text: "cancel yoga on sunday", expect: NotFound },
    ]
}

fn reschedule_cases() -> Vec<Case> {
    use Expect::*;
    use Lang::*;
    vec![
        Case { name: "a time alone keeps the day and the length", lang: Zh, now: NOW,
            setup: vec![event("项目会议", TOMORROW, "14:00", "15:30"), event_in("健身", TOMORROW, "evening")],
            text: "把2月8日的会议改到晚上8点", expect: Moves(0, slot(TOMORROW, "20:00", "21:30")) },
        Case { name: "a date alone keeps the time", lang: Zh, now: NOW,
            setup: vec![event("产品会议", MON, "10:00", "11:00"), todo("买菜", TODAY)],
            text: "把会议挪到下周二", expect: Moves(0, slot(TUE, "10:00", "11:00")) },
        Case { name: "推迟半小时 shifts both ends", lang: Zh, now: NOW,
            setup: vec![event("周会", MON, "09:00", "10:00"), event("午餐", MON, "12:00", "13:00")],
            text: "把周会推迟半小时", expect: Moves(0, slot(MON, "09:30", "10:30")) },
        Case { name: "推迟3天 moves the event three days on", lang: Zh, now: NOW,
            setup: vec![event("周会", MON, "09:00", "10:00"), event("午餐", MON, "12:00", "13:00")],
            text: "把周会推迟3天", expect: Moves(0, slot(THU, "09:00", "10:00")) },
        Case { name: "提前一周 moves the event a week earlier", lang: Zh, now: NOW,
            setup: vec![event("体检", "2026-02-20", "08:00", "09:00")],
            text: "把体检提前一周", expect: Moves(0, slot(FRI, "08:00", "09:00")) },
        Case { name: "提前1小时 shifts both ends earlier", lang: Zh, now: NOW,
            setup: vec![event("评审会议", MON, "15:00", "16:00")],
            text: "会议提前1小时", expect: Moves(0, slot(MON, "14:00", "15:00")) },
        Case { name: "two meetings ask which one to move", lang: Zh, now: NOW,
            setup: vec![event("项目会议", MON, "10:00", "11:00"), event("部门会议", TUE, "10:00", "11:00")],
            text: "把会议改到下午4点", expect: AsksWhich(vec![0, 1]) },
        Case { name: "moving something that does not exist is an error", lang: Zh, now: NOW,
            setup: vec![event("项目会议", MON, "10:00", "11:00")],
            text: "把牙医预约改到周五", expect: NotFound },
        Case { name: "moving to a time that has passed asks and changes nothing", lang: Zh, now: NOW_16,
            setup: vec![event("聚餐", TODAY, "18:00", "20:00")],
            text: "把聚餐改到今天下午3点", expect: TimePassed },
        Case { name: "moving onto another event is a conflict listing it", lang: Zh, now: NOW,
            setup: vec![event("项目会议", MON, "10:00", "11:00"), event("客户拜访", MON, "14:00", "15:00")],
            text: "把项目会议改到周一下午2点", expect: Conflicts(vec![1]) },
        Case { name: "a weekday and a time move the appointment and keep its length", lang: En, now: NOW,
            setup: vec![event("dentist appointment", TUE, "09:00", "10:00"), todo("buy milk", TODAY)],
            text: "move the dentist appointment to friday 3pm", expect: Moves(0, slot(FRI, "15:00", "16:00")) },
        Case { name: "push back 30 minutes shifts both ends", lang: En, now: NOW,
            setup: vec![event("team meeting", MON, "15:00", "16:00")],
            text: "push team meeting back 30 minutes", expect: Moves(0, slot(MON, "15:30", "16:30")) },
        Case { name: "reschedule to a day and time keeps the length", lang: En, now: NOW,
            setup: vec![event("yoga", TODAY, "18:00", "19:00")],
            text: "reschedule yoga to tomorrow 7am", expect: Moves(0, slot(TOMORROW, "07:00", "08:00")) },
        Case { name: "1 hour earlier shifts both ends", lang: En, now: NOW,
            setup: vec![event("design review", TUE, "14:00", "15:00")],
            text: "move design review 1 hour earlier", expect: Moves(0, slot(TUE, "13:00", "14:00")) },
        Case { name: "a date alone keeps the time in English too", lang: En, now: NOW,
            setup: vec![event("budget review", MON, "11:00", "12:00")],
            text: "move the budget review to next tuesday", expect: Moves(0, slot(TUE, "11:00", "12:00")) },
        Case { name: "postpone by 2 days moves the event two days on", lang: En, now: NOW,
            setup: vec![event("board meeting", MON, "15:00", "16:00")],
            text: "postpone the board meeting by 2 days", expect: Moves(0, slot(WED, "15:00", "16:00")) },
        Case { name: "postpone by a week moves the event seven days on", lang: En, now: NOW,
            setup: vec![event("standup", MON, "09:00", "09:15")],
            text: "postpone standup by a week", expect: Moves(0, slot("2026-02-16", "09:00", "09:15")) },
        Case { name: "two coffees with Tom ask which", lang: En, now: NOW,
            setup: vec![event("coffee with Tom", MON, "08:00", "08:30"), event("coffee with Tom", THU, "08:00", "08:30")],
            text: "move coffee with Tom to 9am", expect: AsksWhich(vec![0, 1]) },
        Case { name: "rescheduling something unknown is an error", lang: En, now: NOW,
            setup: vec![event("yoga", TODAY, "18:00", "19:00")],
            text: "reschedule piano lesson to saturday 4pm", expect: NotFound },
        Case { name: "moving to a passed time today asks and changes nothing", lang: En, now: NOW_16,
            setup: vec![event("dinner with Lisa", TODAY, "19:00", "21:00")],
            text: "move dinner with Lisa to 2pm today", expect: TimePassed },
        Case { name: "moving onto another event is a conflict", lang: En, now: NOW,
            setup: vec![event("team meeting", MON, "15:00", "16:00"), event("dentist appointment", MON, "17:00", "18:00")],
            text: "move team meeting to monday 5pm", expect: Conflicts(vec![1]) },
    ]
}

fn list_cases() -> Vec<Case> {
    use Expect::*;
    use Lang::*;
    vec![
        Case { name: "a day lists only that day's items", lang: Zh, now: NOW,
            setup: vec![event("早会", TOMORROW, "09:00", "09:30"), todo("买菜", TOMORROW), todo("写周报", MON), event_in("健身", TODAY, "evening")],
            text: "明天有什么安排", expect: Lists(vec![0, 1]) },
        // 这周 is Mon 02-02 .. Sun 02-08; the setup has nothing before today so open past days do not matter.
        Case { name: "this week's to-dos exclude events, next week and completed ones", lang: Zh, now: NOW,
            setup: vec![todo("交水电费", TODAY), todo("买菜", TOMORROW), todo("写周报", MON), event("聚餐", TOMORROW, "18:00", "20:00"), todo("洗车", TODAY).done()],
            text: "这周有哪些待办", expect: Lists(vec![0, 1]) },
        Case { name: "前3个最紧急 gives exactly three, most important first", lang: Zh, now: NOW,
            setup: vec![todo_p("任务A", MON, 3), todo_p("任务B", TUE, 1), todo_p("任务C", TOMORROW, 4), todo_p("任务D", WED, 2), todo("任务E", MON)],
            text: "前3个最紧急的任务", expect: ListsInOrder(vec![1, 3, 0]) },
        Case { name: "后天 lists the day after tomorrow", lang: Zh, now: NOW,
            setup: vec![event("周会", MON, "09:00", "10:00"), todo("写周报", MON), event("早会", TOMORROW, "09:00", "09:30")],
            text: "后天有什么安排", expect: Lists(vec![0, 1]) },
        Case { name: "today's open to-dos leave out the completed one", lang: Zh, now: NOW,
            setup: vec![todo("寄快递", TODAY), todo("取快递", TODAY), todo("洗车", TODAY).done(), todo("买菜", TOMORROW)],
            text: "今天还有哪些待办", expect: Lists(vec![0, 1]) },
        Case { name: "两个 gives exactly two, most important first", lang: Zh, now: NOW,
            setup: vec![todo_p("读书", MON, 4), todo_p("交税", TUE, 1), todo_p("体检", THU, 2), todo_p("理发", TOMORROW, 3)],
            text: "列出最重要的两个待办", expect: ListsInOrder(vec![1, 2]) },
        Case { name: "what's on tomorrow lists only tomorrow", lang: En, now: NOW,
            setup: vec![event("brunch", TOMORROW, "11:00", "12:00"), todo("laundry", TOMORROW), event("gym", MON, "18:00", "19:00")],
            text: "what's on tomorrow", expect: Lists(vec![0, 1]) },
        Case { name: "show my todos lists the open to-dos only", lang: En, now: NOW,
            setup: vec![todo("buy milk", TODAY), todo("pay rent", MON), event_in("gym", TOMORROW, "evening"), todo("renew passport", TODAY).done()],
            text: "show my todos", expect: Lists(vec![0, 1]) },
        Case { name: "top 2 gives exactly two, priority 1 first", lang: En, now: NOW,
            setup: vec![todo_p("file taxes", TUE, 3), todo_p("fix the bike", MON, 1), todo_p("clean the garage", TOMORROW, 4), todo_p("call the bank", WED, 2)],
            text: "top 2 most important tasks", expect: ListsInOrder(vec![1, 3]) },
        Case { name: "a weekday lists that day", lang: En, now: NOW,
            setup: vec![event("standup", MON, "09:00", "09:15"), todo("send weekly report", MON), event("brunch", TOMORROW, "11:00", "12:00")],
            text: "what do I have on monday", expect: Lists(vec![0, 1]) },
        Case { name: "3 most urgent gives exactly three in priority order", lang: En, now: NOW,
            setup: vec![todo_p("renew visa", MON, 2), todo_p("water plants", TOMORROW, 4), todo_p("pay the fine", TUE, 1), todo_p("book dentist", WED, 3), todo("read a book", MON)],
            text: "what are my 3 most urgent tasks", expect: ListsInOrder(vec![2, 0, 3]) },
        Case { name: "a count glued to top is the limit", lang: En, now: NOW,
            setup: vec![todo_p("file taxes", TUE, 3), todo_p("fix the bike", MON, 1), todo_p("clean the garage", TOMORROW, 4), todo_p("call the bank", WED, 2)],
            text: "top3 most urgent tasks", expect: ListsInOrder(vec![1, 3, 0]) },
        Case { name: "前两个 after the priority words is the limit", lang: Zh, now: NOW,
            setup: vec![todo_p("读书", MON, 4), todo_p("交税", TUE, 1), todo_p("体检", THU, 2), todo_p("理发", TOMORROW, 3)],
            text: "最重要的前两个待办", expect: ListsInOrder(vec![1, 2]) },
        Case { name: "reminders for today leave out other kinds and days", lang: En, now: NOW,
            setup: vec![reminder("take vitamins", TODAY, "20:00"), reminder("call grandma", TOMORROW, "10:00"), todo("buy milk", TODAY)],
            text: "show my reminders for today", expect: Lists(vec![0]) },
    ]
}

/// Issue 34, kinds 3, 4 and 7: an item picked out by its time of day (several items share its
/// day, so a search by the day alone cannot pick it), a move to a time or part of day that keeps
/// the item's own date, and a listing narrowed by what it is about.
fn selector_cases() -> Vec<Case> {
    use Expect::*;
    use Lang::*;
    vec![
        // A time of day in the target picks the item.
        Case { name: "a recurrence word in the target describes the item and picks no day", lang: Zh, now: NOW,
            setup: vec![event("周例会", MON, "10:00", "11:00")],
            text: "把每周例会改到周二上午10点", expect: Moves(0, slot(TUE, "10:00", "11:00")) },
        Case { name: "weekly before the item's name picks no day", lang: En, now: NOW,
            setup: vec![event("team sync", TUE, "09:00", "09:30")],
            text: "move the weekly team sync to 11am", expect: Moves(0, slot(TUE, "11:00", "11:30")) },
        Case { name: "a clock time picks the one meeting of three that day", lang: Zh, now: NOW,
            setup: vec![event("评审会", TOMORROW, "10:00", "11:00"), event("客户会", TOMORROW, "15:00", "16:00"), event("复盘会", TOMORROW, "20:00", "21:00")],
            text: "取消明天下午3点那个会", expect: Deletes(1) },
        Case { name: "an evening clock time picks the evening meeting", lang: Zh, now: NOW,
            setup: vec![event("项目会", TOMORROW, "15:00", "16:00"), event("项目会", TOMORROW, "20:00", "21:00"), event("项目会", MON, "20:00", "21:00")],
            text: "删除明天晚上8点的项目会", expect: Deletes(1) },
        Case { name: "a part of the day without a day picks the meeting in it", lang: Zh, now: NOW,
            setup: vec![event("周会", TODAY, "10:00", "11:00"), event("客户会", TODAY, "15:00", "16:00"), todo("买菜", TODAY)],
            text: "早上那个会取消吧", expect: Deletes(0) },
        Case { name: "a clock time that no item starts at finds nothing", lang: Zh, now: NOW,
            setup: vec![event("部门会", TOMORROW, "10:00", "11:00"), event("部门会", TOMORROW, "16:00", "17:00")],
            text: "取消明天上午9点的部门会", expect: NotFound },
        Case { name: "the time picks the review and a bare hour stays in its half of the day", lang: Zh, now: NOW,
            setup: vec![event("评审", MON, "10:00", "11:00"), event("评审", MON, "16:00", "17:00"), event("评审", TUE, "10:00", "11:00")],
            text: "把周一上午10点的评审提前到9点", expect: Moves(0, slot(MON, "09:00", "10:00")) },
        Case { name: "an afternoon clock time moved to a bare hour stays in the afternoon", lang: Zh, now: NOW,
            setup: vec![event("面试", TOMORROW, "10:00", "11:00"), event("面试", TOMORROW, "14:00", "15:00"), event("面试", TOMORROW, "19:00", "20:00")],
            text: "把明天下午两点的面试改到5点", expect: Moves(1, slot(TOMORROW, "17:00", "18:00")) },
        Case { name: "an hour with pm picks the call of three that day", lang: En, now: NOW,
            setup: vec![event("call with the bank", TOMORROW, "10:00", "10:30"), event("call with Sam", TOMORROW, "14:00", "14:30"), event("call with Lee", TOMORROW, "17:00", "17:30")],
            text: "delete my 2pm call tomorrow", expect: Deletes(1) },
        Case { name: "this evening picks today's evening dinner", lang: En, now: NOW,
            setup: vec![event("dinner prep call", TODAY, "11:00", "11:30"), event("dinner with Ann", TODAY, "19:00", "21:00"), event("dinner with Bob", TOMORROW, "19:00", "21:00")],
            text: "cancel this evening's dinner", expect: Deletes(1) },
        Case { name: "a clock time without a day picks the call starting then", lang: En, now: NOW,
            setup: vec![event("call with Sam", MON, "10:30", "11:00"), event("call with Lee", MON, "15:00", "15:30"), event("call with Ann", TOMORROW, "16:00", "16:30")],
            text: "move the 10:30 call to 11:30", expect: Moves(0, slot(MON, "11:30", "12:00")) },
        Case { name: "a bare hour as the new time stays in the item's afternoon", lang: En, now: NOW,
            setup: vec![event("team sync", TUE, "09:00", "09:30"), event("team sync", TUE, "15:00", "16:00")],
            text: "push the 3pm team sync to 4", expect: Moves(1, slot(TUE, "16:00", "17:00")) },
        Case { name: "a morning time picks the morning standup only", lang: En, now: NOW,
            setup: vec![event("standup", MON, "09:00", "09:15"), event("standup review", MON, "17:00", "17:30")],
            text: "remove monday morning's standup", expect: Deletes(0) },
        Case { name: "a part of the day with no item in it takes the to-do due that day", lang: Zh, now: NOW,
            setup: vec![todo("交周报", TODAY), todo("交周报", MON)],
            text: "完成今天下午的周报", expect: Completes(0) },
        Case { name: "a part of the day with no item in it takes the day's to-do in English too", lang: En, now: NOW,
            setup: vec![todo("send the report", TODAY), todo("send the report", TUE)],
            text: "mark this afternoon's report as done", expect: Completes(0) },
        Case { name: "a time of day alone names the item to move", lang: Zh, now: NOW,
            setup: vec![event("客户拜访", MON, "10:00", "11:00"), event("部门例会", MON, "15:00", "16:00"), todo("写周报", MON)],
            text: "把周一下午3点那个挪到5点", expect: Moves(1, slot(MON, "17:00", "18:00")) },
        Case { name: "a clock time alone names the item in English too", lang: En, now: NOW,
            setup: vec![event("dentist", TOMORROW, "16:00", "17:00"), event("haircut", TOMORROW, "11:00", "12:00")],
            text: "move my 4pm tomorrow to 6pm", expect: Moves(0, slot(TOMORROW, "18:00", "19:00")) },
        Case { name: "a part of the day without a day takes today's to-do when nothing is in it", lang: Zh, now: NOW,
            setup: vec![todo("跑步", TODAY), todo("跑步", TOMORROW)],
            text: "完成晚上的跑步", expect: Completes(0) },
        // A move to a part of the day keeps the item's date; a stated day moves it.
        Case { name: "a move to the morning keeps Monday", lang: Zh, now: NOW,
            setup: vec![event_in("理发", MON, "afternoon"), event_in("理发", TOMORROW, "afternoon")],
            text: "把周一下午的理发挪到上午", expect: Moves(0, slot_in(MON, "forenoon")) },
        Case { name: "a move to the evening keeps tomorrow and drops the clock times", lang: Zh, now: NOW,
            setup: vec![event("体检", TOMORROW, "10:00", "11:00"), todo("买菜", TODAY)],
            text: "明天的体检改到晚上", expect: Moves(0, slot_in(TOMORROW, "evening")) },
        Case { name: "a move to a stated day takes that day and keeps the time", lang: Zh, now: NOW,
            setup: vec![event("羽毛球", TODAY, "19:00", "21:00"), event("羽毛球", TODAY, "10:00", "11:00")],
            text: "把今天晚上的羽毛球改到明天", expect: Moves(0, slot(TOMORROW, "19:00", "21:00")) },
        Case { name: "a move to the afternoon keeps the lesson's day", lang: En, now: NOW,
            setup: vec![event("piano lesson", TUE, "10:00", "11:00"), todo("buy strings", TODAY)],
            text: "move the piano lesson to the afternoon", expect: Moves(0, slot_in(TUE, "afternoon")) },
        Case { name: "a move of tomorrow's item to the evening stays tomorrow", lang: En, now: NOW,
            setup: vec![event("massage", TOMORROW, "10:00", "11:00"), event("massage", FRI, "10:00", "11:00")],
            text: "reschedule tomorrow's massage to the evening", expect: Moves(0, slot_in(TOMORROW, "evening")) },
        Case { name: "a move to a stated day and part of day takes both", lang: En, now: NOW,
            setup: vec![event("car wash", TODAY, "15:00", "16:00")],
            text: "move this afternoon's car wash to tomorrow morning", expect: Moves(0, slot_in(TOMORROW, "morning")) },
        // A listing about something lists only what mentions it.
        Case { name: "to-dos related to invoices leave out the rest and other kinds", lang: Zh, now: NOW,
            setup: vec![todo("报销发票", TODAY), todo("开发票给客户", MON), todo("买菜", TODAY), event("发票培训", TUE, "10:00", "11:00")],
            text: "有哪些和发票相关的待办", expect: Lists(vec![0, 1]) },
        Case { name: "plans about the renovation list every kind that mentions it", lang: Zh, now: NOW,
            setup: vec![todo("装修报价", MON), event("装修验收", TOMORROW, "10:00", "11:00"), todo("交水电费", TODAY)],
            text: "看看关于装修的安排", expect: Lists(vec![0, 1]) },
        Case { name: "meetings next week about interviews leave out this week's", lang: Zh, now: NOW,
            setup: vec![event("面试候选人A", MON, "10:00", "11:00"), event("面试候选人B", THU, "14:00", "15:00"), event("面试复盘", TOMORROW, "10:00", "11:00"), event("周会", MON, "09:00", "10:00")],
            text: "下周跟面试有关的会议有哪些", expect: Lists(vec![0, 1]) },
        Case { name: "tasks related to taxes leave out the rest", lang: En, now: NOW,
            setup: vec![todo("file taxes", MON), todo("pay property taxes", TUE), todo("buy milk", TODAY)],
            text: "list tasks related to taxes", expect: Lists(vec![0, 1]) },
        Case { name: "events with a person next week leave out others and this week", lang: En, now: NOW,
            setup: vec![event("lunch with Maria", MON, "12:00", "13:00"), event("1:1 with Maria", TUE, "10:00", "10:30"), event("1:1 with Tom", TUE, "11:00", "11:30"), event("coffee with Maria", TOMORROW, "09:00", "09:30")],
            text: "any events with Maria next week", expect: Lists(vec![0, 1]) },
        Case { name: "reminders regarding the car leave out the rest", lang: En, now: NOW,
            setup: vec![reminder("car insurance renewal", MON, "09:00"), reminder("wash the car", TOMORROW, "10:00"), reminder("call mom", TODAY, "20:00")],
            text: "show reminders regarding the car", expect: Lists(vec![0, 1]) },
    ]
}

fn refusal_cases() -> Vec<Case> {
    use Expect::*;
    use Lang::*;
    vec![
        Case { name: "a greeting is not a request", lang: Zh, now: NOW,
            setup: vec![event_in("健身", TOMORROW, "evening")],
            text: "你好", expect: NotUnderstood },
        Case { name: "writing a poem is not a planner request", lang: Zh, now: NOW, setup: vec![],
            text: "帮我写一首诗", expect: NotUnderstood },
        Case { name: "a weather question with a date word is not a to-do", lang: Zh, now: NOW, setup: vec![],
            text: "今天天气怎么样", expect: NotUnderstood },
        Case { name: "a shift without an item never guesses, even with one event", lang: Zh, now: NOW,
            setup: vec![event("项目会议", MON, "10:00", "11:00")],
            text: "推迟半小时", expect: NotUnderstood },
        Case { name: "a delete without an item never guesses", lang: Zh, now: NOW,
            setup: vec![todo("买菜", TODAY)],
            text: "把它删掉", expect: NotUnderstood },
        Case { name: "a completion without an item never guesses", lang: Zh, now: NOW,
            setup: vec![todo("买菜", TODAY)],
            text: "完成了", expect: NotUnderstood },
        Case { name: "a weather question is not a request", lang: En, now: NOW, setup: vec![],
            text: "what's the weather like", expect: NotUnderstood },
        Case { name: "gibberish is not a request", lang: En, now: NOW,
            setup: vec![todo("buy milk", TODAY)],
            text: "asdfgh", expect: NotUnderstood },
        Case { name: "a joke is not a planner request", lang: En, now: NOW, setup: vec![],
            text: "tell me a joke", expect: NotUnderstood },
        Case { name: "push it back without an item never guesses", lang: En, now: NOW,
            setup: vec![event("team meeting", MON, "15:00", "16:00")],
            text: "push it back 30 minutes", expect: NotUnderstood },
        Case { name: "delete it without an item never guesses", lang: En, now: NOW,
            setup: vec![todo("buy milk", TODAY)],
            text: "delete it", expect: NotUnderstood },
        Case { name: "mark as done without an item never guesses", lang: En, now: NOW,
            setup: vec![todo("buy milk", TODAY)],
            text: "mark as done", expect: NotUnderstood },
    ]
}

/// Issue 34: everyday sentences read as a person would. A clause of preparation is a note, not a
/// command; a gathering is an event (the whole day without a clock time, through the conflict
/// check); a clause takes the day and the item of the clause before; colloquial words, bare errands
/// and particles reach the reader; a request that says nothing to do is a question.
fn reading_cases() -> Vec<Case> {
    use Expect::*;
    use Lang::*;
    vec![
        // A clause of preparation is a note on the item, not the sentence's verb.
        Case { name: "需要提前 in a trailing clause is a note on a new event", lang: Zh, now: NOW,
            setup: vec![event("预算评审会", WED, "10:00", "11:00")],
            text: "周二上午10点到11点开预算评审会，需要提前把报表打印好",
            expect: Creates(new_event("开预算评审会", TUE, "10:00", "11:00").or_title("预算评审会").note("需要提前把报表打印好")) },
        Case { name: "记得提前20分钟到 is a note, not a move by 20 minutes", lang: Zh, now: NOW,
            setup: vec![event("面试", THU, "14:00", "15:00")],
            text: "后天下午2点面试，记得提前20分钟到", expect: Creates(new_event("面试", MON, "14:00", "15:00").note("记得提前20分钟到")) },
        Case { name: "别忘了 starts a note after a dinner", lang: Zh, now: NOW, setup: vec![],
            text: "周五晚上7点部门聚餐，别忘了提前订位", expect: Creates(new_event("部门聚餐", FRI, "19:00", "20:00").note("别忘了提前订位")) },
        Case { name: "need to ... ahead is a note on a new event", lang: En, now: NOW, setup: vec![],
            text: "quarterly review friday 3pm, need to prepare the numbers ahead",
            expect: Creates(new_event("quarterly review", FRI, "15:00", "16:00").note("need to prepare the numbers ahead")) },
        Case { name: "cancel inside a note cancels nothing", lang: En, now: NOW,
            setup: vec![event("gym class", TUE, "07:00", "08:00")],
            text: "team offsite tuesday 9am, make sure to cancel the gym class before",
            expect: Creates(new_event("team offsite", TUE, "09:00", "10:00").note("make sure to cancel the gym class before")) },
        Case { name: "arrive early is a note, not a move", lang: En, now: NOW, setup: vec![],
            text: "interview on monday at 11am, remember to arrive 15 minutes early",
            expect: Creates(new_event("interview", MON, "11:00", "12:00").note("remember to arrive 15 minutes early")) },
        Case { name: "a note after a move leaves the move as the request", lang: Zh, now: NOW,
            setup: vec![event("周会", MON, "10:00", "11:00")],
            text: "把周会改到下午3点，记得通知大家", expect: Moves(0, slot(MON, "15:00", "16:00")) },
        Case { name: "a note after a cancel leaves the cancel as the request", lang: En, now: NOW,
            setup: vec![event("retro", FRI, "16:00", "17:00"), todo("tell the team", TODAY)],
            text: "call off the retro, remember to tell the team", expect: Deletes(0) },
        // An event is an event: a note goes to the description, a gathering without a time takes the day.
        Case { name: "any verb and 完了 after the item completes it", lang: Zh, now: NOW,
            setup: vec![todo("取快递", TODAY), todo("包礼物", TODAY)],
            text: "快递取完了", expect: Completes(0) },
        Case { name: "asking whether a day has anything lists it", lang: Zh, now: NOW,
            setup: vec![event("站会", TOMORROW, "09:00", "09:15"), todo("包礼物", TODAY)],
            text: "我明天有安排吗", expect: Lists(vec![0]) },
        Case { name: "taking an item off the calendar deletes it", lang: En, now: NOW,
            setup: vec![event("vet visit", MON, "10:00", "10:30"), event("vet bill", MON, "12:00", "12:30")],
            text: "take the vet visit off my calendar", expect: Deletes(0) },
        Case { name: "make it earlier by a length moves it", lang: En, now: NOW,
            setup: vec![event("team call", MON, "10:00", "10:30")],
            text: "make the team call 15 minutes earlier", expect: Moves(0, slot(MON, "09:45", "10:15")) },
        Case { name: "done with an item completes it", lang: En, now: NOW,
            setup: vec![todo("tax return", TODAY), todo("mow the lawn", TODAY)],
            text: "done with the tax return", expect: Completes(0) },
        Case { name: "搞定 after the item completes it", lang: Zh, now: NOW,
            setup: vec![todo("报税", TODAY), todo("除草", TODAY)],
            text: "报税搞定", expect: Completes(0) },
        Case { name: "to do: makes a to-do for today", lang: En, now: NOW, setup: vec![],
            text: "to do: clean the gutters", expect: Creates(new_todo("clean the gutters", TODAY)) },
        Case { name: "a plan said instead moves the item to that day", lang: En, now: NOW,
            setup: vec![event("retro", MON, "15:00", "16:00")],
            text: "can we do the retro on tuesday instead?", expect: Moves(0, slot(TUE, "15:00", "16:00")) },
        Case { name: "已经 and 过 say a to-do is done", lang: Zh, now: NOW,
            setup: vec![todo("交房租", TODAY), todo("买菜", TODAY)],
            text: "我已经交过房租了", expect: Completes(0) },
        Case { name: "a to-do within a week that has begun is due at its end", lang: Zh, now: NOW, setup: vec![],
            text: "这周内把简历改好", expect: Creates(new_todo("把简历改好", TOMORROW).or_title("简历改好")) },
        Case { name: "要准备 starts a note after a meeting", lang: Zh, now: NOW, setup: vec![],
            text: "周一上午九点半部门例会，要准备周报", expect: Creates(new_event("部门例会", MON, "09:30", "10:30").note("要准备周报")) },
        Case { name: "what's coming up lists the days ahead", lang: En, now: NOW,
            setup: vec![event("retro", MON, "15:00", "16:00"), todo("laundry", TODAY)],
            text: "what's coming up on monday", expect: Lists(vec![0]) },
        Case { name: "a trailing clause saying where it is is a note", lang: Zh, now: NOW, setup: vec![],
            text: "周一晚上7点和老李吃饭，地点在望京", expect: Creates(new_event("和老李吃饭", MON, "19:00", "20:00").note("地点在望京")) },
        Case { name: "how many meetings tomorrow lists them", lang: Zh, now: NOW,
            setup: vec![event("周会", TOMORROW, "10:00", "11:00"), event("客户会", TOMORROW, "15:00", "16:00"), todo("买菜", TOMORROW)],
            text: "明天有几个会", expect: Lists(vec![0, 1]) },
        Case { name: "swap a day for another keeps the time", lang: En, now: NOW,
            setup: vec![event("gym session", FRI, "07:00", "08:00")],
            text: "swap friday's gym session to thursday", expect: Moves(0, slot(THU, "07:00", "08:00")) },
        Case { name: "get rid of an item deletes it", lang: En, now: NOW,
            setup: vec![reminder("stretch", TODAY, "17:00"), reminder("water", TODAY, "18:00")],
            text: "get rid of the 5pm reminder", expect: Deletes(0) },
        Case { name: "a plural word finds the item written in the plural", lang: En, now: NOW,
            setup: vec![todo("groceries", TODAY), todo("laundry", TODAY)],
            text: "check off groceries", expect: Completes(0) },
        Case { name: "a vague day and a clock time move to that day at that time", lang: En, now: NOW,
            setup: vec![event("1:1", TODAY, "11:00", "11:30")],
            text: "move the 1:1 to later today, like 6pm", expect: Moves(0, slot(TODAY, "18:00", "18:30")) },
        Case { name: "a reason naming the item, then cancel it, deletes that item", lang: En, now: NOW,
            setup: vec![event("pottery class", MON, "19:00", "21:00"), event("pottery class", WED, "19:00", "21:00")],
            text: "I can't make it to the pottery class on monday, cancel it", expect: Deletes(0) },
        Case { name: "a reminder no longer needed is taken away", lang: Zh, now: NOW,
            setup: vec![reminder("吃药", TODAY, "21:00"), reminder("交房租", MON, "09:00")],
            text: "不用再提醒我吃药了", expect: Deletes(0) },
        Case { name: "already and a past verb completes the to-do written in the present", lang: En, now: NOW,
            setup: vec![todo("pay the water bill", TODAY), todo("pay rent", MON)],
            text: "I already paid the water bill", expect: Completes(0) },
        Case { name: "the item first and a later start is a move by that much", lang: En, now: NOW,
            setup: vec![event("board call", MON, "09:00", "10:00")],
            text: "the board call on monday needs to start 45 minutes later", expect: Moves(0, slot(MON, "09:45", "10:45")) },
        Case { name: "a short question about a day lists it", lang: En, now: NOW,
            setup: vec![event("haircut", TOMORROW, "10:00", "10:30"), todo("laundry", TODAY)],
            text: "anything on sunday?", expect: Lists(vec![0]) },
        Case { name: "a clause that only says note this down leads the request", lang: Zh, now: NOW, setup: vec![],
            text: "帮我记一下，周一下午四点去银行办卡", expect: Creates(new_event("去银行办卡", MON, "16:00", "17:00")) },
        Case { name: "a greeting and my calendar leave the item and its time", lang: En, now: NOW, setup: vec![],
            text: "hi, can you put a haircut on my calendar for friday at 5pm?", expect: Creates(new_event("haircut", FRI, "17:00", "18:00")) },
        Case { name: "the work's verb and done after the item completes it", lang: Zh, now: NOW,
            setup: vec![todo("交报销单", TODAY), todo("买菜", TODAY)],
            text: "报销单交好了", expect: Completes(0) },
        Case { name: "not going any more calls the item off", lang: Zh, now: NOW,
            setup: vec![event("羽毛球", TOMORROW, "18:00", "19:00"), event("羽毛球", MON, "18:00", "19:00")],
            text: "明天的羽毛球不去了", expect: Deletes(0) },
        Case { name: "a spoken day word with a spoken hour is that day and hour", lang: Zh, now: NOW, setup: vec![],
            text: "后儿下午俩点见客户", expect: Creates(new_event("见客户", MON, "14:00", "15:00")) },
        Case { name: "a day of the month as an ordinal is that day, not today", lang: En, now: NOW, setup: vec![],
            text: "eye exam on the 20th at 10am", expect: Creates(new_event("eye exam", "2026-02-20", "10:00", "11:00")) },
        Case { name: "a meal with a bare hour is in the evening and keeps its title", lang: En, now: NOW, setup: vec![],
            text: "dinner at 8 on friday with Dana", expect: Creates(new_event("dinner with Dana", FRI, "20:00", "21:00")) },
        Case { name: "a listing of what mentions a word lists only those", lang: En, now: NOW,
            setup: vec![todo("call the landlord", TODAY), todo("landlord deposit", MON), todo("buy bread", TODAY)],
            text: "which tasks mention the landlord", expect: Lists(vec![0, 1]) },
        Case { name: "a plural topic finds the singular too", lang: En, now: NOW,
            setup: vec![todo("pay property taxes", MON), todo("tax receipts", TODAY), todo("buy bread", TODAY)],
            text: "show my todos about taxes", expect: Lists(vec![0, 1]) },
        Case { name: "a meal named by a noun before it is still an event at its time of day", lang: En, now: NOW, setup: vec![],
            text: "family brunch on sunday, bring the pancakes", expect: Creates(new_event_in("family brunch", TOMORROW, "forenoon").note("bring the pancakes")) },
        Case { name: "a meal and a day alone are the item and its time", lang: En, now: NOW, setup: vec![],
            text: "lunch on monday", expect: Creates(new_event_in("lunch", MON, "noon")) },
        Case { name: "吃晚饭 without a clock time is an event in the evening", lang: Zh, now: NOW, setup: vec![],
            text: "周五和老同学吃晚饭", expect: Creates(new_event_in("和老同学吃晚饭", FRI, "evening")) },
        Case { name: "a meeting with a note is an event titled by the meeting", lang: Zh, now: NOW, setup: vec![],
            text: "周一下午4点开会，记得带上笔记本", expect: Creates(new_event("开会", MON, "16:00", "17:00").note("记得带上笔记本")) },
        Case { name: "a gathering on another day without a time is an all-day event", lang: Zh, now: NOW, setup: vec![],
            text: "明天聚餐", expect: Creates(new_event_in("聚餐", TOMORROW, "all_day")) },
        Case { name: "a party today in the morning is an all-day event", lang: Zh, now: NOW, setup: vec![],
            text: "今天去参加朋友的生日派对", expect: Creates(new_event_in("去参加朋友的生日派对", TODAY, "all_day").or_title("参加朋友的生日派对")) },
        Case { name: "a gathering today once it is evening is the evening", lang: Zh, now: NOW_19, setup: vec![],
            text: "今天和同事聚餐", expect: Creates(new_event_in("和同事聚餐", TODAY, "evening")) },
        Case { name: "a meeting with a note meets the conflict check as an event", lang: Zh, now: NOW,
            setup: vec![event("客户拜访", TOMORROW, "15:00", "16:00")],
            text: "明天下午3点半开会，记得带合同", expect: Conflicts(vec![0]) },
        Case { name: "dinner with someone on a day is an event in the evening (a meal gives its time of day)", lang: En, now: NOW, setup: vec![],
            text: "dinner with the Hendersons on friday", expect: Creates(new_event_in("dinner with the Hendersons", FRI, "evening")) },
        Case { name: "bring the slides is the description of a meeting without a time", lang: En, now: NOW, setup: vec![],
            text: "project kickoff meeting next tuesday, bring the slides",
            expect: Creates(new_event_in("project kickoff meeting", TUE, "all_day").note("bring the slides")) },
        Case { name: "don't forget is the description of a timed interview", lang: En, now: NOW, setup: vec![],
            text: "interview tomorrow at 10am, don't forget the portfolio",
            expect: Creates(new_event("interview", TOMORROW, "10:00", "11:00").note("don't forget the portfolio")) },
        Case { name: "a meeting with a note meets the conflict check", lang: En, now: NOW,
            setup: vec![event("standup", MON, "09:00", "09:30")],
            text: "roadmap meeting monday 9am, bring the printouts", expect: Conflicts(vec![0]) },
        Case { name: "a party today in the evening takes the evening", lang: En, now: NOW_19, setup: vec![],
            text: "team party today", expect: Creates(new_event_in("team party", TODAY, "evening")) },
        // Context is carried from one clause to the next.
        Case { name: "an afternoon clause takes the day of the clause before", lang: Zh, now: NOW, setup: vec![],
            text: "后天上午9点体检，下午3点回公司开会",
            expect: CreatesAll(vec![new_event("体检", MON, "09:00", "10:00"), new_event("回公司开会", MON, "15:00", "16:00")]) },
        Case { name: "an evening clause takes the weekday of the clause before", lang: Zh, now: NOW, setup: vec![],
            text: "周五早上8点跑步，晚上8点看电影",
            expect: CreatesAll(vec![new_event("跑步", FRI, "08:00", "09:00"), new_event("看电影", FRI, "20:00", "21:00")]) },
        Case { name: "then 3pm takes tomorrow from the clause before", lang: En, now: NOW, setup: vec![],
            text: "tomorrow 9am standup, then 3pm dentist",
            expect: CreatesAll(vec![new_event("standup", TOMORROW, "09:00", "10:00"), new_event("dentist", TOMORROW, "15:00", "16:00")]) },
        Case { name: "a lunch later in the sentence takes monday", lang: En, now: NOW, setup: vec![],
            text: "monday at 10am budget review and then lunch with Priya at 12:30",
            expect: CreatesAll(vec![new_event("budget review", MON, "10:00", "11:00"), new_event("lunch with Priya", MON, "12:30", "13:30")]) },
        Case { name: "再推迟 acts on the item the clause before moved", lang: Zh, now: NOW,
            setup: vec![event("周会", MON, "10:00", "11:00"), event("项目周会", TUE, "10:00", "11:00")],
            text: "把周一的周会改到下午2点，再推迟半小时", expect: Moves(0, slot(MON, "14:30", "15:30")) },
        Case { name: "它 after a move to another day finds the item on its new day", lang: Zh, now: NOW,
            setup: vec![event("体检", TOMORROW, "09:00", "10:00")],
            text: "把明天的体检改到周五上午9点，然后把它推迟一小时", expect: Moves(0, slot(FRI, "10:00", "11:00")) },
        Case { name: "push it back acts on the item moved before", lang: En, now: NOW,
            setup: vec![event("design review", TUE, "10:00", "11:00")],
            text: "move the design review to 2pm, then push it back 15 minutes", expect: Moves(0, slot(TUE, "14:15", "15:15")) },
        Case { name: "a note after two clauses goes with the second item", lang: Zh, now: NOW, setup: vec![],
            text: "后天上午10点到11点和王总开会，下午2点面试候选人，记得带简历",
            expect: CreatesAll(vec![new_event("和王总开会", MON, "10:00", "11:00"), new_event("面试候选人", MON, "14:00", "15:00").note("记得带简历")]) },
        Case { name: "two parts of one day set apart by a comma are two events", lang: Zh, now: NOW, setup: vec![],
            text: "周日下午打球，晚上看电影",
            expect: CreatesAll(vec![new_event_in("打球", TOMORROW, "afternoon"), new_event_in("看电影", TOMORROW, "evening")]) },
        Case { name: "an evening after a comma takes tomorrow", lang: En, now: NOW, setup: vec![],
            text: "tennis tomorrow afternoon, dinner with Lee in the evening",
            expect: CreatesAll(vec![new_event_in("tennis", TOMORROW, "afternoon"), new_event_in("dinner with Lee", TOMORROW, "evening")]) },
        Case { name: "a clause of preparation after a semicolon is a note", lang: En, now: NOW, setup: vec![],
            text: "call with the vendor monday 3pm; prep the pricing sheet in advance",
            expect: Creates(new_event("call with the vendor", MON, "15:00", "16:00").note("prep the pricing sheet in advance")) },
        Case { name: "and bring ... is a note", lang: En, now: NOW, setup: vec![],
            text: "lunch with Sam friday at 12:30 and bring the book",
            expect: Creates(new_event("lunch with Sam", FRI, "12:30", "13:30").note("bring the book")) },
        // Everyday words.
        Case { name: "a question about a date is not a to-do", lang: Zh, now: NOW, setup: vec![],
            text: "下周一是几号", expect: NotUnderstood },
        Case { name: "I have to ... is a to-do for today", lang: En, now: NOW, setup: vec![],
            text: "I have to renew my passport", expect: Creates(new_todo("renew my passport", TODAY)) },
        Case { name: "明儿 and 俩点 are read", lang: Zh, now: NOW, setup: vec![],
            text: "明儿下午俩点去银行", expect: Creates(new_event("去银行", TOMORROW, "14:00", "15:00")) },
        Case { name: "仨小时 is the length", lang: Zh, now: NOW, setup: vec![],
            text: "周一上午9点培训仨小时", expect: Creates(new_event("培训", MON, "09:00", "12:00")) },
        Case { name: "a bare errand is a to-do for today", lang: Zh, now: NOW, setup: vec![],
            text: "交房租", expect: Creates(new_todo("交房租", TODAY)) },
        Case { name: "有个会 is a meeting in that part of the day", lang: Zh, now: NOW, setup: vec![],
            text: "我周一下午有个会", expect: Creates(new_event_in("开会", MON, "afternoon").or_title("会议")) },
        Case { name: "安排一下 without saying what asks what to add", lang: Zh, now: NOW,
            setup: vec![todo("买菜", TODAY)],
            text: "帮我安排一下", expect: AsksWhat },
        Case { name: "提醒我一下 without saying what asks what to add", lang: Zh, now: NOW, setup: vec![],
            text: "提醒我一下", expect: AsksWhat },
        Case { name: "tmrw and w/ are read", lang: En, now: NOW, setup: vec![],
            text: "tmrw 7pm dinner w/ Sam", expect: Creates(new_event("dinner with Sam", TOMORROW, "19:00", "20:00")) },
        Case { name: "a bare errand in English is a to-do for today", lang: En, now: NOW, setup: vec![],
            text: "renew passport", expect: Creates(new_todo("renew passport", TODAY)) },
        Case { name: "I've got a ... is a create titled by what one has", lang: En, now: NOW, setup: vec![],
            text: "I've got a dentist appointment on friday at 4pm", expect: Creates(new_event("dentist appointment", FRI, "16:00", "17:00")) },
        Case { name: "push back the X leaves back out of the search", lang: En, now: NOW,
            setup: vec![event("1:1 with Dana", MON, "13:00", "13:30")],
            text: "push back the 1:1 with Dana by 30 minutes", expect: Moves(0, slot(MON, "13:30", "14:00")) },
        Case { name: "call off the X deletes it", lang: En, now: NOW,
            setup: vec![event("team lunch", FRI, "12:00", "13:00"), todo("buy milk", TODAY)],
            text: "call off the team lunch", expect: Deletes(0) },
        Case { name: "move up the X to a time keeps its day", lang: En, now: NOW,
            setup: vec![event("budget review", TUE, "11:00", "12:00")],
            text: "move up the budget review to 9am", expect: Moves(0, slot(TUE, "09:00", "10:00")) },
        Case { name: "a polite request with 能帮我…吗 is a request, not a question", lang: Zh, now: NOW,
            setup: vec![event("周会", MON, "10:00", "11:00")],
            text: "能帮我把周会推迟半小时吗", expect: Moves(0, slot(MON, "10:30", "11:30")) },
        Case { name: "can you ... is a request, not a question", lang: En, now: NOW, setup: vec![],
            text: "can you add coffee with Ivy tomorrow at 4pm", expect: Creates(new_event("coffee with Ivy", TOMORROW, "16:00", "17:00")) },
        Case { name: "schedule something asks what to add", lang: En, now: NOW, setup: vec![],
            text: "schedule something", expect: AsksWhat },
        Case { name: "add a reminder without saying what asks what to add", lang: En, now: NOW, setup: vec![],
            text: "add a reminder", expect: AsksWhat },
    ]
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

/// One test per table, each on an app of its own, and [`TABLES`] naming every table once.
macro_rules! table_tests {
    ($($test:ident: $category:literal => $cases:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $test() {
                run_table($category, $cases()).await;
            }
        )*
        /// Every table, by category.
        const TABLES: &[(&str, fn() -> Vec<Case>)] = &[$(($category, $cases)),*];
    };
}

table_tests! {
    the_local_provider_creates_events_todos_and_reminders_from_one_sentence: "create" => create_cases,
    the_local_provider_completes_exactly_the_item_a_sentence_names: "complete" => complete_cases,
    the_local_provider_deletes_exactly_the_item_a_sentence_names: "delete" => delete_cases,
    the_local_provider_moves_exactly_the_item_a_sentence_names: "reschedule" => reschedule_cases,
    the_local_provider_lists_exactly_the_open_items_asked_for: "list" => list_cases,
    the_local_provider_refuses_what_it_cannot_read_and_writes_nothing: "refusal" => refusal_cases,
    the_local_provider_reads_everyday_sentences_as_a_person_would: "reading" => reading_cases,
    the_local_provider_picks_items_by_their_time_and_words: "selector" => selector_cases,
}

/// The table itself is well formed: indexes point into the setup, and both languages are covered.
#[test]
fn the_sentence_table_is_well_formed() {
    let mut total = 0;
    for (category, cases) in TABLES {
        let cases = cases();
        let zh = cases.iter().filter(|c| matches!(c.lang, Lang::Zh)).count();
        let en = cases.len() - zh;
        assert!(zh >= 5 && en >= 5, "{category}: {zh} Chinese and {en} English cases");
        for case in &cases {
            let indexes: Vec<usize> = match &case.expect {
                Expect::Completes(i) | Expect::Deletes(i) | Expect::Moves(i, _) => vec![*i],
                Expect::Lists(v) | Expect::ListsInOrder(v) | Expect::AsksWhich(v) | Expect::Conflicts(v) => v.clone(),
                _ => vec![],
            };
            for i in indexes {
                assert!(i < case.setup.len(), "{category}: {:?} points at setup item {i}", case.name);
            }
        }
        total += cases.len();
    }
    assert!((90..=300).contains(&total), "{total} cases");
}

// ---------------------------------------------------------------------------------------------
// Running a table
// ---------------------------------------------------------------------------------------------

async fn run_table(category: &str, cases: Vec<Case>) {
    // An empty key: no model endpoint is configured, so the local provider serves every task.
    let app = TestApp::start_with(TestAppOptions::default().env("OPENAI_API_KEY", "")).await;
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        if let Some(report) = run_case(&app, category, n, case).await {
            failures.push(report);
        }
    }
    app.shutdown().await;
    assert!(
        failures.is_empty(),
        "{} of {} {category} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Runs one case; `None` when it passes, else a report of everything that was wrong.
async fn run_case(app: &TestApp, category: &str, n: usize, case: &Case) -> Option<String> {
    let (_, key) = app.create_user(&format!("case{n}")).await;
    let mut problems = Vec::new();

    let mut seeded = Vec::new();
    for seed in &case.setup {
        let answer = app.call(&key, Method::POST, "/api/items", Some(seed.json())).await;
        if answer.status != StatusCode::CREATED {
            problems.push(format!("setup item {} refused: {} {}", seed.json(), answer.status, answer.body));
            return Some(report(category, n, case, &problems, &Value::Null, &[]));
        }
        seeded.push(answer.body);
    }
    let before = app.items(&key).await;

    let body = json!({ "text": case.text, "now": case.now, "tz": TZ, "wait": true, "timeout": 60 });
    let answer = app.call(&key, Method::POST, "/api/quick-action", Some(body)).await;
    if answer.status != StatusCode::CREATED {
        problems.push(format!("POST /api/quick-action answered {} {}", answer.status, answer.body));
        return Some(report(category, n, case, &problems, &Value::Null, &before));
    }
    let Some(task_id) = answer.body["task_id"].as_str() else {
        problems.push(format!("no task_id in {}", answer.body));
        return Some(report(category, n, case, &problems, &Value::Null, &before));
    };
    let task = app.call(&key, Method::GET, &format!("/api/quick-action/{task_id}?wait=true&timeout=60"), None).await.body;
    let after = app.items(&key).await;

    check_accounting(&task, &mut problems);
    check_expectation(app, &key, case, &seeded, &before, &after, &task, &mut problems).await;

    if problems.is_empty() { None } else { Some(report(category, n, case, &problems, &task, &after)) }
}


/// A local run names the local model and costs nothing.
fn check_accounting(task: &Value, problems: &mut Vec<String>) {
    if task["model_used"] != "local" {
        problems.push(format!("model_used is {}, expected \"local\"", task["model_used"]));
    }
    if task["tokens_used"]["total"].as_i64() != Some(0) {
        problems.push(format!("tokens_used is {}, expected a total of 0", task["tokens_used"]));
    }
    if task["cost"]["amount"].as_f64() != Some(0.0) {
        problems.push(format!("cost is {}, expected an amount of 0", task["cost"]));
    }
}

#[allow(clippy::too_many_arguments)]
async fn check_expectation(
    app: &TestApp,
    key: &str,
    case: &Case,
    seeded: &[Value],
    before: &[Value],
    after: &[Value],
    task: &Value,
    p: &mut Vec<String>,
) {
    let id_of = |i: usize| seeded[i]["id"].as_str().unwrap_or_default().to_owned();
    match &case.expect {
        Expect::Creates(want) => {
            verdict(task, "action_completed", p);
            untouched(before, after, &[], p);
            let known: BTreeSet<&str> = before.iter().filter_map(|i| i["id"].as_str()).collect();
            let new: Vec<&Value> = after.iter().filter(|i| i["id"].as_str().is_some_and(|id| !known.contains(id))).collect();
            match new.as_slice() {
                [item] => {
                    check_new_item(item, want, p);
                    result_has(task, item["id"].as_str().unwrap_or_default(), p);
                }
                [] => p.push("no item was created".into()),
                more => p.push(format!("{} items were created, expected one: {}", more.len(), lines(more.iter().copied()))),
            }
        }
        Expect::CreatesAll(wants) => {
            verdict(task, "action_completed", p);
            untouched(before, after, &[], p);
            let known: BTreeSet<&str> = before.iter().filter_map(|i| i["id"].as_str()).collect();
            let new: Vec<&Value> = after.iter().filter(|i| i["id"].as_str().is_some_and(|id| !known.contains(id))).collect();
            if new.len() != wants.len() {
                p.push(format!("{} items were created, expected {}: {}", new.len(), wants.len(), lines(new.iter().copied())));
            }
            for want in wants {
                match new.iter().find(|item| item["title"] == want.title || want.alt_title.is_some_and(|alt| item["title"] == alt)) {
                    Some(item) => {
                        check_new_item(item, want, p);
                        result_has(task, item["id"].as_str().unwrap_or_default(), p);
                    }
                    None => p.push(format!("no item titled {:?} was created", want.title)),
                }
            }
        }
        Expect::AsksWhat => {
            verdict(task, "need_clarification", p);
            unchanged(before, after, p);
            suggestion(task, p);
            if !ids(&task["result"]["options"]).is_empty() {
                p.push(format!("result.options is {}, expected none", task["result"]["options"]));
            }
        }
        Expect::Completes(i) => {
            verdict(task, "action_completed", p);
            let id = id_of(*i);
            no_new_items(before, after, p);
            untouched(before, after, &[&id], p);
            match find(after, &id) {
                Some(item) => {
                    if item["status"] != "completed" {
                        p.push(format!("the target's status is {}, expected \"completed\"", item["status"]));
                    }
                    if !item["completed_at"].is_string() {
                        p.push("the target has no completed_at".into());
                    }
                    let was = find(before, &id).cloned().unwrap_or(Value::Null);
                    same_fields(&was, item, &["kind", "title", "date", "start_time", "end_time", "segment", "priority", "recurrence"], p);
                    result_has(task, &id, p);
                }
                None => p.push("the item to complete is gone".into()),
            }
        }
        Expect::Deletes(i) => {
            verdict(task, "action_completed", p);
            let id = id_of(*i);
            no_new_items(before, after, p);
            untouched(before, after, &[&id], p);
            if find(after, &id).is_some() {
                p.push("the item to delete is still listed".into());
            }
            let direct = app.call(key, Method::GET, &format!("/api/items/{id}"), None).await;
            if direct.status != StatusCode::NOT_FOUND {
                p.push(format!("GET /api/items/{{id}} of the deleted item answered {}", direct.status));
            }
        }
        Expect::Moves(i, to) => {
            verdict(task, "action_completed", p);
            let id = id_of(*i);
            no_new_items(before, after, p);
            untouched(before, after, &[&id], p);
            match find(after, &id) {
                Some(item) => {
                    compare(p, "moved date", text(&item["date"]), Some(to.date.to_owned()));
                    compare(p, "moved start_time", text(&item["start_time"]), to.start.map(str::to_owned));
                    compare(p, "moved end_time", text(&item["end_time"]), to.end.map(str::to_owned));
                    compare(p, "moved segment", text(&item["segment"]), to.segment.map(str::to_owned));
                    let was = find(before, &id).cloned().unwrap_or(Value::Null);
                    same_fields(&was, item, &["kind", "title", "priority", "status", "recurrence"], p);
                    result_has(task, &id, p);
                }
                None => p.push("the item to move is gone".into()),
            }
        }
        Expect::Lists(want) | Expect::ListsInOrder(want) => {
            verdict(task, "action_completed", p);
            unchanged(before, after, p);
            let want_ids: Vec<String> = want.iter().map(|i| id_of(*i)).collect();
            let got = ids(&task["result"]["items"]);
            let ordered = matches!(case.expect, Expect::ListsInOrder(_));
            let ok = if ordered { got == want_ids } else { sorted(&got) == sorted(&want_ids) };
            if !ok {
                p.push(format!(
                    "result.items is [{}], expected {}[{}]",
                    titles_of(&got, before),
                    if ordered { "in this order " } else { "" },
                    titles_of(&want_ids, before)
                ));
            }
        }
        Expect::AsksWhich(want) | Expect::Conflicts(want) => {
            verdict(task, "need_clarification", p);
            unchanged(before, after, p);
            let want_ids: Vec<String> = want.iter().map(|i| id_of(*i)).collect();
            let got = ids(&task["result"]["options"]);
            if sorted(&got) != sorted(&want_ids) {
                p.push(format!("result.options is [{}], expected [{}]", titles_of(&got, before), titles_of(&want_ids, before)));
            }
            suggestion(task, p);
        }
        Expect::TimePassed => {
            verdict(task, "need_clarification", p);
            unchanged(before, after, p);
            let text = task["result"]["suggestion"].as_str().unwrap_or_default().to_lowercase();
            if !(text.contains("明天") || text.contains("tomorrow")) {
                p.push(format!("the suggestion {:?} does not mention 明天 / tomorrow", task["result"]["suggestion"]));
            }
        }
        Expect::NotFound | Expect::NotUnderstood => {
            verdict(task, "error", p);
            unchanged(before, after, p);
            suggestion(task, p);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Assertion helpers (they collect problems instead of panicking)
// ---------------------------------------------------------------------------------------------

fn verdict(task: &Value, want: &str, p: &mut Vec<String>) {
    let status = if want == "action_completed" { "success" } else { "failed" };
    if task["result"]["type"] != want || task["status"] != status {
        p.push(format!("verdict is {}/{}, expected {want}/{status}", task["result"]["type"], task["status"]));
    }
}

fn suggestion(task: &Value, p: &mut Vec<String>) {
    if task["result"]["suggestion"].as_str().is_none_or(|s| s.trim().is_empty()) {
        p.push("result.suggestion is missing".into());
    }
}

/// The verdict's `result.items` holds the backend's rendering of the item the action was about.
fn result_has(task: &Value, id: &str, p: &mut Vec<String>) {
    if !ids(&task["result"]["items"]).iter().any(|i| i == id) {
        p.push("result.items does not hold the changed item".into());
    }
}

fn check_new_item(item: &Value, want: &New, p: &mut Vec<String>) {
    compare(p, "kind", text(&item["kind"]), Some(want.kind.to_owned()));
    compare(p, "description", text(&item["description"]), want.note.map(str::to_owned));
    let title = text(&item["title"]);
    if title.as_deref() != Some(want.title) && (want.alt_title.is_none() || title.as_deref() != want.alt_title) {
        let wanted = match want.alt_title {
            Some(alt) => format!("{:?} or {alt:?}", want.title),
            None => format!("{:?}", want.title),
        };
        p.push(format!("title is {title:?}, expected {wanted}"));
    }
    compare(p, "date", text(&item["date"]), Some(want.date.to_owned()));
    compare(p, "start_time", text(&item["start_time"]), want.start.map(str::to_owned));
    compare(p, "end_time", text(&item["end_time"]), want.end.map(str::to_owned));
    compare(p, "segment", text(&item["segment"]), want.segment.map(str::to_owned));
    compare(p, "priority", text(&item["priority"]), want.priority.map(|n| n.to_string()));
    compare(p, "recurrence", text(&item["recurrence"]), want.recurrence.map(str::to_owned));
    compare(p, "status", text(&item["status"]), Some("open".to_owned()));
}

fn compare(p: &mut Vec<String>, field: &str, got: Option<String>, want: Option<String>) {
    if got != want {
        p.push(format!("{field} is {}, expected {}", show(&got), show(&want)));
    }
}

fn show(v: &Option<String>) -> String {
    match v {
        Some(s) => format!("{s:?}"),
        None => "absent".into(),
    }
}

/// A field as text: strings as they are, numbers printed; null or missing is `None`.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn same_fields(was: &Value, now: &Value, fields: &[&str], p: &mut Vec<String>) {
    for field in fields {
        if was[*field] != now[*field] {
            p.push(format!("the target's {field} changed from {} to {}", was[*field], now[*field]));
        }
    }
}

fn find<'a>(items: &'a [Value], id: &str) -> Option<&'a Value> {
    items.iter().find(|i| i["id"] == id)
}

/// Every item of `before` except `except` is still there, exactly as it was.
fn untouched(before: &[Value], after: &[Value], except: &[&str], p: &mut Vec<String>) {
    for item in before {
        let id = item["id"].as_str().unwrap_or_default();
        if except.contains(&id) {
            continue;
        }
        match find(after, id) {
            Some(now) if now == item => {}
            Some(now) => p.push(format!("an item that should be untouched changed: {} -> {}", line(item), line(now))),
            None => p.push(format!("an item that should be untouched is gone: {}", line(item))),
        }
    }
}

fn no_new_items(before: &[Value], after: &[Value], p: &mut Vec<String>) {
    for item in after {
        if find(before, item["id"].as_str().unwrap_or_default()).is_none() {
            p.push(format!("an item was created: {}", line(item)));
        }
    }
}

/// Nothing was created, changed or deleted.
fn unchanged(before: &[Value], after: &[Value], p: &mut Vec<String>) {
    untouched(before, after, &[], p);
    no_new_items(before, after, p);
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array().map(|a| a.iter().filter_map(|i| i["id"].as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

fn titles_of(ids: &[String], known: &[Value]) -> String {
    ids.iter()
        .map(|id| find(known, id).and_then(|i| i["title"].as_str()).map(str::to_owned).unwrap_or_else(|| format!("<{id}>")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One item as a line: `[event] 2026-02-08 15:00-16:00 开会 p1 FREQ=... (completed)`.
fn line(item: &Value) -> String {
    let mut s = format!("[{}] {}", item["kind"].as_str().unwrap_or("?"), item["date"].as_str().unwrap_or("?"));
    match (item["start_time"].as_str(), item["end_time"].as_str(), item["segment"].as_str()) {
        (Some(a), Some(b), _) => s.push_str(&format!(" {a}-{b}")),
        (Some(a), None, _) => s.push_str(&format!(" {a}")),
        (None, _, Some(seg)) => s.push_str(&format!(" ({seg})")),
        _ => {}
    }
    s.push_str(&format!(" {:?}", item["title"].as_str().unwrap_or("?")));
    if let Some(priority) = item["priority"].as_i64() {
        s.push_str(&format!(" p{priority}"));
    }
    if let Some(rrule) = item["recurrence"].as_str() {
        s.push_str(&format!(" {rrule}"));
    }
    if item["status"] == "completed" {
        s.push_str(" (completed)");
    }
    s
}

fn lines<'a>(items: impl IntoIterator<Item = &'a Value>) -> String {
    items.into_iter().map(line).collect::<Vec<_>>().join("; ")
}

fn describe(expect: &Expect, setup: &[Seed]) -> String {
    let seed = |i: &usize| setup.get(*i).map(|s| line(&s.json())).unwrap_or_else(|| format!("<setup {i}>"));
    let seeds = |v: &[usize]| v.iter().map(seed).collect::<Vec<_>>().join("; ");
    match expect {
        Expect::Creates(n) => {
            let mut item = json!({"kind": n.kind, "title": n.title, "date": n.date, "status": "open"});
            for (field, value) in [("start_time", n.start), ("end_time", n.end), ("segment", n.segment), ("recurrence", n.recurrence)] {
                if let Some(value) = value {
                    item[field] = json!(value);
                }
            }
            if let Some(priority) = n.priority {
                item["priority"] = json!(priority);
            }
            let alt = n.alt_title.map(|a| format!(" (or title {a:?})")).unwrap_or_default();
            let note = n.note.map(|note| format!(" with the description {note:?}")).unwrap_or_default();
            format!("action_completed, creates {}{alt}{note}", line(&item))
        }
        Expect::CreatesAll(all) => format!("action_completed, creates {} items: {}", all.len(), all.iter().map(|n| format!("{} {} {}", n.date, n.start.or(n.segment).unwrap_or(""), n.title)).collect::<Vec<_>>().join("; ")),
        Expect::AsksWhat => "need_clarification (what to add), no options, suggestion present, nothing changed".into(),
        Expect::Completes(i) => format!("action_completed, completes {}", seed(i)),
        Expect::Deletes(i) => format!("action_completed, deletes {}", seed(i)),
        Expect::Moves(i, to) => {
            let when = match (to.start, to.end, to.segment) {
                (Some(a), Some(b), _) => format!("{a}-{b}"),
                (Some(a), None, _) => a.to_owned(),
                (None, _, Some(seg)) => format!("({seg})"),
                _ => String::new(),
            };
            format!("action_completed, moves {} to {} {when}", seed(i), to.date)
        }
        Expect::Lists(v) => format!("action_completed, lists exactly (any order): {}", seeds(v)),
        Expect::ListsInOrder(v) => format!("action_completed, lists exactly, in order: {}", seeds(v)),
        Expect::AsksWhich(v) => format!("need_clarification with options: {}", seeds(v)),
        Expect::TimePassed => "need_clarification (time passed), suggestion mentions 明天/tomorrow, nothing written".into(),
        Expect::Conflicts(v) => format!("need_clarification (conflict) with options: {}", seeds(v)),
        Expect::NotFound => "error (no match), suggestion present, nothing changed".into(),
        Expect::NotUnderstood => "error (not understood), suggestion present, nothing changed".into(),
    }
}

fn report(category: &str, n: usize, case: &Case, problems: &[String], task: &Value, after: &[Value]) -> String {
    let mut result = task["result"].clone();
    if let Some(map) = result.as_object_mut() {
        map.remove("tool_calls");
    }
    let setup = if case.setup.is_empty() { "(none)".to_owned() } else { case.setup.iter().map(|s| line(&s.json())).collect::<Vec<_>>().join("; ") };
    let items_after = if after.is_empty() { "(none)".to_owned() } else { lines(after.iter()) };
    format!(
        "#{n} [{category}/{}] {}\n    text:     {:?} at {}\n    setup:    {setup}\n    expected: {}\n    problems: {}\n    task:     status={} model_used={} tokens={}\n    result:   {}\n    items:    {items_after}\n",
        match case.lang {
            Lang::Zh => "zh",
            Lang::En => "en",
        },
        case.name,
        case.text,
        case.now,
        describe(&case.expect, &case.setup),
        problems.join("\n              "),
        task["status"],
        task["model_used"],
        task["tokens_used"]["total"],
        result,
    )
}
