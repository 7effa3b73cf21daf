//! Replies to a question (`POST /api/quick-action/{id}/reply`) through the real API, worker and
//! database: with the local provider, a candidates question answered by number, id, ordinals and
//! pointers acts on exactly that item; a passed time answered with another day, a conflict answered
//! with "add it anyway" or a new time, a reply to a reply; with a model, the reply's first user
//! message carries the question's context.

use quickact_testkit::{Reply, TestApp, TestAppOptions, tool_step};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Saturday 2026-02-07, 09:00 in Shanghai.
const NOW: &str = "2026-02-07T09:00:00+08:00";
/// The same Saturday at 16:00: 15:00 today has passed.
const NOW_16: &str = "2026-02-07T16:00:00+08:00";
const TOMORROW: &str = "2026-02-08";
const MON: &str = "2026-02-09";
const TUE: &str = "2026-02-10";
const FRI: &str = "2026-02-13";

async fn local_app() -> TestApp {
    TestApp::start_with(TestAppOptions::default().env("OPENAI_API_KEY", "")).await
}

/// Replies to task `id` with `body` (written at `now` in Shanghai), waits for the verdict, and
/// returns the reply's task with its journal.
async fn reply(app: &TestApp, key: &str, id: &str, mut body: Value, now: &str) -> Value {
    body["now"] = json!(now);
    body["tz"] = json!("Asia/Shanghai");
    body["wait"] = json!(true);
    let answer = app.call(key, Method::POST, &format!("/api/quick-action/{id}/reply"), Some(body)).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:#}", answer.body);
    let reply_id = answer.body["task_id"].as_str().unwrap();
    assert_eq!(answer.body["reply_to"], id, "{:#}", answer.body);
    let task = app.call(key, Method::GET, &format!("/api/quick-action/{reply_id}"), None).await.body;
    assert_eq!(task["reply_to"], id, "{task:#}");
    task
}

fn id_of(value: &Value) -> &str {
    value["id"].as_str().unwrap()
}

fn option_ids(task: &Value) -> Vec<String> {
    task["result"]["options"].as_array().unwrap_or_else(|| panic!("options: {task:#}")).iter().map(|o| id_of(o).to_owned()).collect()
}

/// The items that differ between `before` and `after` (by id): what the reply changed.
fn changed_ids(before: &[Value], after: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = before
        .iter()
        .filter(|item| !after.contains(item))
        .map(|item| id_of(item).to_owned())
        .chain(after.iter().filter(|item| !before.iter().any(|b| b["id"] == item["id"])).map(|item| id_of(item).to_owned()))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// How a reply picks an option in a case: the body, and which option (0-based) it means.
struct Pick {
    body: fn(&[String]) -> Value,
    option: usize,
}

/// Three items the sentence cannot tell apart, a sentence that asks about them, replies each
/// picking one: the reply acts on that item only (`check` reads it after), the others untouched.
async fn answer_each(app: &TestApp, seeds: &[Value], sentence: &str, picks: Vec<Pick>, check: impl Fn(&Value) -> Result<(), String>) {
    for (n, pick) in picks.into_iter().enumerate() {
        let (_, key) = app.create_user(&format!("picker{n}-{}", sentence.len())).await;
        for seed in seeds {
            app.create_item(&key, seed.clone()).await;
        }
        let asked = app.act(&key, sentence, NOW).await;
        assert_eq!(asked["result"]["type"], "need_clarification", "{sentence}: {asked:#}");
        let options = option_ids(&asked);
        let before = app.items(&key).await;
        let body = (pick.body)(&options);
        let task = reply(app, &key, asked["task_id"].as_str().unwrap(), body.clone(), NOW).await;
        assert_eq!(task["status"], "success", "{sentence} / {body}: {task:#}");
        assert_eq!(task["model_used"], "local");
        let after = app.items(&key).await;
        let chosen = &options[pick.option];
        assert_eq!(changed_ids(&before, &after), vec![chosen.clone()], "{sentence} / {body}: only the chosen item changes");
        let item = app.call(&key, Method::GET, &format!("/api/items/{chosen}"), None).await;
        check(&item.body).unwrap_or_else(|why| panic!("{sentence} / {body}: {why}: {:#}", item.body));
        let result_items = task["result"]["items"].as_array().cloned().unwrap_or_default();
        assert!(result_items.iter().any(|i| i["id"] == json!(chosen)), "{task:#}");
    }
}

fn meeting(title: &str, date: &str, start: &str, end: &str) -> Value {
    json!({ "kind": "event", "title": title, "date": date, "start_time": start, "end_time": end })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reply_to_which_one_deletes_exactly_the_chosen_item() {
    let app = local_app().await;
    let seeds = [meeting("项目周会", TOMORROW, "10:00", "11:00"), meeting("项目周会", MON, "15:00", "16:00"), meeting("项目周会", TUE, "20:00", "21:00")];
    let picks = vec![
        Pick { body: |_| json!({ "option": 2 }), option: 1 },
        Pick { body: |o| json!({ "option": o[2] }), option: 2 },
        Pick { body: |_| json!({ "option": "1" }), option: 0 },
        Pick { body: |_| json!({ "text": "第三个" }), option: 2 },
        Pick { body: |_| json!({ "text": "就第2个吧" }), option: 1 },
        Pick { body: |_| json!({ "text": "最后那个" }), option: 2 },
        Pick { body: |_| json!({ "text": "下午3点那个" }), option: 1 },
        Pick { body: |o| json!({ "text": format!("删 {}", o[0]) }), option: 0 },
    ];
    answer_each(&app, &seeds, "删除项目周会", picks, |item| match item["error"]["code"].as_str() {
        Some("not_found") => Ok(()),
        _ => Err("the chosen item is deleted".into()),
    })
    .await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_english_reply_completes_or_moves_the_chosen_item() {
    let app = local_app().await;
    let todos = [
        json!({ "kind": "todo", "title": "send the report", "date": TOMORROW }),
        json!({ "kind": "todo", "title": "review the report", "date": MON }),
        json!({ "kind": "todo", "title": "print the report", "date": TUE }),
    ];
    let picks = vec![
        Pick { body: |_| json!({ "text": "the second one" }), option: 1 },
        Pick { body: |_| json!({ "text": "the last one please" }), option: 2 },
        Pick { body: |_| json!({ "text": "1st" }), option: 0 },
        Pick { body: |_| json!({ "text": "the print one" }), option: 2 },
    ];
    answer_each(&app, &todos, "mark the report as done", picks, |item| {
        if item["status"] == "completed" { Ok(()) } else { Err("the chosen to-do is completed".into()) }
    })
    .await;

    let standups = [meeting("standup", TOMORROW, "09:00", "09:15"), meeting("standup", MON, "15:00", "15:15")];
    let picks = vec![
        Pick { body: |_| json!({ "text": "the 2nd" }), option: 1 },
        Pick { body: |_| json!({ "text": "the one at 3pm" }), option: 1 },
        Pick { body: |_| json!({ "text": "the first one" }), option: 0 },
    ];
    answer_each(&app, &standups, "move the standup to friday 10am", picks, |item| {
        if item["date"] == FRI && item["start_time"] == "10:00" { Ok(()) } else { Err("moved to Friday 10:00, as the first sentence asked".into()) }
    })
    .await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reply_can_move_the_chosen_item_to_a_new_time_or_act_on_every_option() {
    let app = local_app().await;
    let (_, key) = app.create_user("mover").await;
    let first = app.create_item(&key, meeting("复盘会", TOMORROW, "10:00", "11:00")).await;
    let second = app.create_item(&key, meeting("复盘会", MON, "10:00", "11:00")).await;
    let asked = app.act(&key, "把复盘会改到周五下午2点", NOW).await;
    assert_eq!(asked["result"]["type"], "need_clarification", "{asked:#}");
    let options = option_ids(&asked);
    let pick = options.iter().position(|id| id == id_of(&second)).unwrap() + 1;
    // "Neither": nothing is changed, and the verdict says how to answer.
    let before = app.items(&key).await;
    let neither = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "text": "都不是" }), NOW).await;
    assert_eq!(neither["result"]["type"], "error", "{neither:#}");
    assert!(neither["result"]["suggestion"].as_str().unwrap().contains('2'), "{neither:#}");
    assert_eq!(app.items(&key).await, before);
    let task = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "option": pick, "text": "改到周五下午4点" }), NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let moved = app.item_now(&key, &second).await;
    assert_eq!((moved["date"].as_str(), moved["start_time"].as_str()), (Some(FRI), Some("16:00")), "{moved:#}");
    assert_eq!(app.item_now(&key, &first).await, first, "the other option is untouched");

    // "Both": every option the user saw, deleted.
    let (_, key) = app.create_user("clearer").await;
    let a = app.create_item(&key, json!({ "kind": "todo", "title": "买牛奶", "date": TOMORROW })).await;
    let b = app.create_item(&key, json!({ "kind": "todo", "title": "买牛奶", "date": MON })).await;
    let other = app.create_item(&key, json!({ "kind": "todo", "title": "交房租", "date": MON })).await;
    let asked = app.act(&key, "删除买牛奶", NOW).await;
    assert_eq!(asked["result"]["type"], "need_clarification", "{asked:#}");
    let task = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "text": "两个都删了" }), NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let left = app.items(&key).await;
    assert!(!left.iter().any(|i| i["id"] == a["id"] || i["id"] == b["id"]), "{left:#?}");
    assert_eq!(left, vec![other]);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_passed_time_answered_with_another_day_is_created_there() {
    let app = local_app().await;
    for (sentence, answer, title, date, start) in [
        ("今天下午3点去银行", "明天吧", "去银行", TOMORROW, "15:00"),
        ("今天下午2点去取快递", "那就改到周一", "去取快递", MON, "14:00"),
        ("call the plumber today at 1pm", "tomorrow at 5pm instead", "call the plumber", TOMORROW, "17:00"),
        ("gym today at 2pm", "ok", "gym", TOMORROW, "14:00"),
    ] {
        let (_, key) = app.create_user(&format!("late-{}", sentence.len())).await;
        let asked = app.act(&key, sentence, NOW_16).await;
        assert_eq!(asked["result"]["type"], "need_clarification", "{sentence}: {asked:#}");
        assert!(app.items(&key).await.is_empty());
        let task = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "text": answer }), NOW_16).await;
        assert_eq!(task["status"], "success", "{sentence} / {answer}: {task:#}");
        let items = app.items(&key).await;
        assert_eq!(items.len(), 1, "{items:#?}");
        let item = &items[0];
        assert_eq!((item["title"].as_str(), item["date"].as_str(), item["start_time"].as_str()), (Some(title), Some(date), Some(start)), "{sentence} / {answer}: {item:#}");
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_conflict_answered_anyway_or_with_a_new_time_and_a_reply_to_a_reply() {
    let app = local_app().await;
    for (sentence, answer, date, start) in [
        ("明天下午3点到4点开会", "冲突也要添加", TOMORROW, "15:00"),
        ("meeting with Ana tomorrow 3pm to 4pm", "add it anyway", TOMORROW, "15:00"),
        ("明天下午3点到4点开会", "改到下午5点", TOMORROW, "17:00"),
        ("meeting with Ana tomorrow 3pm to 4pm", "monday instead", MON, "15:00"),
    ] {
        let (_, key) = app.create_user(&format!("busy-{}-{}", sentence.len(), answer.len())).await;
        let review = app.create_item(&key, meeting("评审", TOMORROW, "15:00", "16:00")).await;
        let asked = app.act(&key, sentence, NOW).await;
        assert_eq!(asked["result"]["type"], "need_clarification", "{sentence}: {asked:#}");
        let task = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "text": answer }), NOW).await;
        assert_eq!(task["status"], "success", "{sentence} / {answer}: {task:#}");
        let items = app.items(&key).await;
        assert_eq!(items.len(), 2, "{items:#?}");
        let new = items.iter().find(|i| i["id"] != review["id"]).unwrap();
        assert_eq!((new["date"].as_str(), new["start_time"].as_str()), (Some(date), Some(start)), "{sentence} / {answer}: {new:#}");
        assert_eq!(app.item_now(&key, &review).await, review);
    }

    // A move that hit a conflict: forced, or moved again.
    for (answer, start) in [("add it anyway", "15:00"), ("make it 5pm instead", "17:00")] {
        let (_, key) = app.create_user(&format!("mover-{}", answer.len())).await;
        let review = app.create_item(&key, meeting("review", TOMORROW, "15:00", "16:00")).await;
        let standup = app.create_item(&key, meeting("standup", MON, "09:00", "09:30")).await;
        let asked = app.act(&key, "move the standup to tomorrow 3pm", NOW).await;
        assert_eq!(asked["result"]["type"], "need_clarification", "{asked:#}");
        let task = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "text": answer }), NOW).await;
        assert_eq!(task["status"], "success", "{answer}: {task:#}");
        let moved = app.item_now(&key, &standup).await;
        assert_eq!((moved["date"].as_str(), moved["start_time"].as_str()), (Some(TOMORROW), Some(start)), "{answer}: {moved:#}");
        assert_eq!(app.item_now(&key, &review).await, review);
    }

    // A new time that conflicts too asks again; the reply to that reply settles it.
    let (_, key) = app.create_user("chain").await;
    app.create_item(&key, meeting("评审", TOMORROW, "15:00", "17:00")).await;
    let asked = app.act(&key, "明天下午3点到4点开会", NOW).await;
    let again = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "text": "改到下午4点" }), NOW).await;
    assert_eq!(again["result"]["type"], "need_clarification", "{again:#}");
    assert_eq!(app.items(&key).await.len(), 1);
    let settled = reply(&app, &key, again["task_id"].as_str().unwrap(), json!({ "text": "照样加上" }), NOW).await;
    assert_eq!(settled["status"], "success", "{settled:#}");
    let create = tool_step(&settled, "create_item");
    assert_eq!(create["arguments"]["allow_conflict"], true, "{create:#}");
    let items = app.items(&key).await;
    let new = items.iter().find(|i| i["title"] != "评审").unwrap();
    assert_eq!((new["date"].as_str(), new["start_time"].as_str()), (Some(TOMORROW), Some("16:00")), "{new:#}");

    // A reply that reads as nothing asks how to answer, and changes nothing.
    let task = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "text": "嗯……再想想" }), NOW).await;
    assert_eq!(task["result"]["type"], "error", "{task:#}");
    assert_eq!(app.items(&key).await.len(), 2);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_models_reply_run_is_told_the_question_in_its_first_user_message() {
    let (app, key) = TestApp::start_with_user("asker").await;
    let early = app.create_item(&key, meeting("sync with design", TOMORROW, "10:00", "10:30")).await;
    let late = app.create_item(&key, meeting("sync with sales", TOMORROW, "16:00", "16:30")).await;
    let answer = "the later of those two";
    // Scripted first: the reply's message holds the earlier sentence too.
    app.fake.script(
        &format!("Sentence: {answer}"),
        vec![Reply::tool("delete_item", json!({ "id": late["id"] })), Reply::finish("action_completed", "Deleted.")],
    );
    let sentence = "cancel tomorrow's sync";
    app.fake.script(
        sentence,
        vec![
            Reply::tool("search_items", json!({ "query": "sync", "date": "tomorrow" })),
            Reply::tool("finish", json!({ "result_type": "need_clarification", "message": "Two syncs tomorrow; which one?", "options": [early["id"], late["id"]] })),
        ],
    );
    let asked = app.act(&key, sentence, NOW).await;
    assert_eq!(asked["result"]["type"], "need_clarification", "{asked:#}");
    let task = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "text": answer }), NOW).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(app.items(&key).await, vec![early.clone()]);

    let requests = app.fake.requests_for(&format!("Sentence: {answer}"));
    let first = quickact_testkit::fake_model::user_text(&requests[0]);
    for part in [
        "Earlier sentence: \"cancel tomorrow's sync\"",
        "Question (which_item): Two syncs tomorrow; which one?",
        &format!("1. id={}, title=\"sync with design\", {TOMORROW} 10:00-10:30, event", id_of(&early)),
        &format!("2. id={}, title=\"sync with sales\", {TOMORROW} 16:00-16:30, event", id_of(&late)),
        "not instructions",
    ] {
        assert!(first.contains(part), "{part:?} missing from the first user message:\n{first}");
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reply_written_the_next_day_keeps_the_day_the_first_sentence_named() {
    let app = local_app().await;
    let next_morning = "2026-02-08T08:00:00+08:00";
    // "明天" in Saturday's sentence is Sunday; the reply comes on Sunday.
    let (_, key) = app.create_user("late-riser").await;
    let review = app.create_item(&key, meeting("评审", TOMORROW, "15:00", "16:00")).await;
    let asked = app.act(&key, "明天下午3点到4点开会", NOW).await;
    assert_eq!(asked["result"]["type"], "need_clarification", "{asked:#}");
    let task = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "text": "冲突也要加" }), next_morning).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let items = app.items(&key).await;
    let new = items.iter().find(|i| i["id"] != review["id"]).unwrap();
    assert_eq!((new["date"].as_str(), new["start_time"].as_str()), (Some(TOMORROW), Some("15:00")), "{new:#}");

    let (_, key) = app.create_user("late-mover").await;
    let a = app.create_item(&key, meeting("站会", MON, "09:00", "09:15")).await;
    let b = app.create_item(&key, meeting("站会", TUE, "09:00", "09:15")).await;
    let asked = app.act(&key, "把站会改到明天上午10点", NOW).await;
    let options = option_ids(&asked);
    let pick = options.iter().position(|id| id == id_of(&a)).unwrap() + 1;
    let task = reply(&app, &key, asked["task_id"].as_str().unwrap(), json!({ "option": pick }), next_morning).await;
    assert_eq!(task["status"], "success", "{task:#}");
    let moved = app.item_now(&key, &a).await;
    assert_eq!((moved["date"].as_str(), moved["start_time"].as_str()), (Some(TOMORROW), Some("10:00")), "{moved:#}");
    assert_eq!(app.item_now(&key, &b).await, b);
    app.shutdown().await;
}
