//! The answers people read, through the local provider (no model key), the real API, worker and
//! database: every verdict is in the sentence's language (no "(done)" or "(morning)" in a Chinese
//! answer, no Chinese in an English one), says what a person needs (the weekday's date, that an
//! item repeats, what a listing found, that a deleted item is deleted), and a clarification names
//! its kind of question (`result.question`), derived from what the tools answered.

use quickact_testkit::{TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Saturday 2026-02-07, 09:00 in Shanghai.
const NOW: &str = "2026-02-07T09:00:00+08:00";
/// The same Saturday at 16:00.
const LATE: &str = "2026-02-07T16:00:00+08:00";

/// The words a person reads: the message and the suggestion.
fn read(task: &Value) -> String {
    let result = &task["result"];
    format!("{} {}", result["message"].as_str().unwrap_or_default(), result["suggestion"].as_str().unwrap_or_default())
}

/// A Chinese answer: no English word (a run of two or more Latin letters) outside the quoted titles
/// the test passes as `titles`.
fn assert_chinese(task: &Value, titles: &[&str]) {
    let mut text = read(task);
    for title in titles {
        text = text.replace(title, "");
    }
    let english: Vec<&str> = text.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| w.len() >= 2).collect();
    assert!(english.is_empty(), "English words {english:?} in a Chinese answer: {:#}", task["result"]);
    assert!(quickact_time::is_chinese(&text), "{:#}", task["result"]);
}

/// An English answer: no Chinese character.
fn assert_english(task: &Value) {
    let text = read(task);
    assert!(!quickact_time::is_chinese(&text), "Chinese in an English answer: {:#}", task["result"]);
}

async fn seed(app: &TestApp, key: &str, item: Value) -> Value {
    let answer = app.call(key, Method::POST, "/api/items", Some(item)).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
    answer.body
}

fn event(title: &str, date: &str, start: &str, end: &str) -> Value {
    json!({"kind": "event", "title": title, "date": date, "start_time": start, "end_time": end})
}

fn todo(title: &str, date: &str) -> Value {
    json!({"kind": "todo", "title": title, "date": date})
}

async fn local_app() -> TestApp {
    TestApp::start_with(TestAppOptions::default().env("OPENAI_API_KEY", "")).await
}

fn message(task: &Value) -> &str {
    task["result"]["message"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chinese_sentences_get_chinese_answers_that_say_what_happened() {
    let app = local_app().await;
    let (_, key) = app.create_user("zh").await;

    // A weekday resolves to a date, and the answer says which.
    let created = app.act(&key, "周五下午两点到三点开预算评审", NOW).await;
    assert_eq!(created["status"], "success", "{created:#}");
    assert!(message(&created).contains("周五（2月13日）"), "{created:#}");
    assert_chinese(&created, &[]);

    // A part of the day is said in Chinese.
    let umbrella = app.act(&key, "后天早上记得带伞", NOW).await;
    assert_eq!(umbrella["status"], "success", "{umbrella:#}");
    assert!(message(&umbrella).contains("早上"), "{umbrella:#}");
    assert_chinese(&umbrella, &[]);

    // A repeating item says it repeats, and how.
    let weekly = app.act(&key, "每周三下午4点开部门例会", NOW).await;
    assert_eq!(weekly["status"], "success", "{weekly:#}");
    assert!(message(&weekly).contains("每周三"), "{weekly:#}");
    assert_chinese(&weekly, &[]);

    // Done: no "(done)".
    seed(&app, &key, todo("交周报", "2026-02-07")).await;
    let done = app.act(&key, "完成交周报", NOW).await;
    assert_eq!(done["status"], "success", "{done:#}");
    assert!(message(&done).starts_with("已完成："), "{done:#}");
    assert_chinese(&done, &[]);

    // A listing names what it found, not a count ending in a colon.
    seed(&app, &key, todo("买牛奶", "2026-02-07")).await;
    seed(&app, &key, todo("取快递", "2026-02-07")).await;
    let listed = app.act(&key, "今天有哪些待办", NOW).await;
    assert_eq!(listed["status"], "success", "{listed:#}");
    let text = message(&listed);
    assert!(text.contains("买牛奶") && text.contains("取快递") && !text.ends_with('：'), "{listed:#}");
    assert_chinese(&listed, &[]);

    // A deleted item's state is deleted.
    seed(&app, &key, event("看牙医", "2026-02-10", "10:00", "11:00")).await;
    let deleted = app.act(&key, "删掉看牙医", NOW).await;
    assert_eq!(deleted["status"], "success", "{deleted:#}");
    assert_eq!(deleted["result"]["items"][0]["status"], "deleted", "{deleted:#}");
    assert_chinese(&deleted, &[]);

    // Its undo answers in Chinese too, and shows the item back open.
    let id = deleted["task_id"].as_str().unwrap();
    let undo = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/undo"), None).await;
    assert_eq!(undo.status, StatusCode::CREATED, "{:?}", undo.body);
    assert_chinese(&undo.body, &[]);
    assert_eq!(undo.body["result"]["items"][0]["status"], "open", "{:#}", undo.body);
    // Undoing a creation takes the item away: shown as deleted.
    let id = weekly["task_id"].as_str().unwrap();
    let undo = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/undo"), None).await;
    assert_eq!(undo.body["result"]["items"][0]["status"], "deleted", "{:#}", undo.body);
    assert_chinese(&undo.body, &[]);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn english_sentences_get_english_answers_that_say_what_happened() {
    let app = local_app().await;
    let (_, key) = app.create_user("en").await;

    let created = app.act(&key, "budget review on Friday from 2pm to 3pm", NOW).await;
    assert_eq!(created["status"], "success", "{created:#}");
    assert!(message(&created).contains("Friday (Feb 13)"), "{created:#}");
    assert_english(&created);

    let weekly = app.act(&key, "team sync every Wednesday at 4pm", NOW).await;
    assert_eq!(weekly["status"], "success", "{weekly:#}");
    assert!(message(&weekly).contains("every Wednesday"), "{weekly:#}");
    assert_english(&weekly);

    seed(&app, &key, todo("file expenses", "2026-02-07")).await;
    seed(&app, &key, todo("water plants", "2026-02-07")).await;
    let listed = app.act(&key, "what are my todos today", NOW).await;
    assert_eq!(listed["status"], "success", "{listed:#}");
    let text = message(&listed);
    assert!(text.contains("file expenses") && text.contains("water plants") && !text.ends_with(':'), "{listed:#}");
    assert_english(&listed);

    seed(&app, &key, event("dentist", "2026-02-10", "10:00", "11:00")).await;
    let deleted = app.act(&key, "cancel the dentist", NOW).await;
    assert_eq!(deleted["status"], "success", "{deleted:#}");
    assert_eq!(deleted["result"]["items"][0]["status"], "deleted", "{deleted:#}");
    assert_english(&deleted);

    let id = deleted["task_id"].as_str().unwrap();
    let undo = app.call(&key, Method::POST, &format!("/api/quick-action/{id}/undo"), None).await;
    assert_eq!(undo.status, StatusCode::CREATED, "{:?}", undo.body);
    assert!(message(&undo.body).starts_with("Undid"), "{:#}", undo.body);
    assert_english(&undo.body);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_clarification_names_its_kind_of_question() {
    let app = local_app().await;
    let (_, key) = app.create_user("asks").await;
    seed(&app, &key, event("产品评审", "2026-02-08", "15:00", "16:00")).await;
    seed(&app, &key, event("周会", "2026-02-09", "10:00", "11:00")).await;
    seed(&app, &key, event("周会", "2026-02-10", "10:00", "11:00")).await;
    seed(&app, &key, event("client call", "2026-02-11", "14:00", "15:00")).await;
    seed(&app, &key, event("standup", "2026-02-12", "09:00", "09:15")).await;
    seed(&app, &key, event("standup", "2026-02-13", "09:00", "09:15")).await;

    // Each with what its message must name: the item in the way and when it is.
    let cases = [
        ("明天下午三点到四点和设计组开会", NOW, "conflict", "明天（周日，2月8日）15:00-16:00 产品评审"),
        ("interview on Wednesday from 2:30pm to 3:30pm", NOW, "conflict", "\"client call\" Wednesday (Feb 11), 14:00-15:00"),
        ("把周会改到下午", NOW, "which_item", "周会"),
        ("move standup to 10am", NOW, "which_item", "standup"),
        ("今天下午3点交材料", LATE, "time_passed", "明天（周日，2月8日）15:00"),
        ("call the bank today at 2pm", LATE, "time_passed", "tomorrow (Sunday, Feb 8) at 14:00"),
    ];
    for (sentence, now, question, named) in cases {
        let task = app.act(&key, sentence, now).await;
        assert_eq!(task["result"]["type"], "need_clarification", "{sentence}: {task:#}");
        assert_eq!(task["result"]["question"], question, "{sentence}: {task:#}");
        assert!(read(&task).contains(named), "{sentence}: {named} in {:#}", task["result"]);
        if quickact_time::is_chinese(sentence) {
            assert_chinese(&task, &[]);
        } else {
            assert_english(&task);
        }
    }
    // A sentence of several actions: one done, one in conflict. The question is the conflict's,
    // and the actions' messages read as sentences, each ended, none glued by a separator.
    for (sentence, joined) in [
        ("明天下午3点到4点和设计组开会，然后周一上午整理票据", "没有创建。已创建："),
        ("review budget tomorrow from 3pm to 4pm and then renew passport on Monday", "so nothing was written. Created: "),
    ] {
        let task = app.act(&key, sentence, NOW).await;
        assert_eq!(task["result"]["question"], "conflict", "{sentence}: {task:#}");
        let text = message(&task);
        assert!(text.contains(joined) && !text.contains(".;") && !text.contains("。；"), "{sentence}: {text}");
    }

    // Other verdicts ask nothing.
    let created = app.act(&key, "下周一上午整理票据", NOW).await;
    assert!(created["result"].get("question").is_none(), "{created:#}");
    app.shutdown().await;
}
