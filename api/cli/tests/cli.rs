//! The `quickact` binary, run as a user would, against a real API, worker and Postgres (with the
//! fake model scripted per sentence).

use std::{process::Output, time::Duration};

use quickact_testkit::{Reply, TestApp, TestAppOptions};
use serde_json::{Value, json};

/// Runs `quickact args...` against `app` with `key`.
async fn quickact(app: &TestApp, key: Option<&str>, args: &[&str]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_quickact"));
    command.args(args).env("QUICKACT_URL", &app.base_url).env_remove("QUICKACT_KEY");
    if let Some(key) = key {
        command.env("QUICKACT_KEY", key);
    }
    let output = tokio::time::timeout(Duration::from_secs(60), command.output()).await.expect("quickact ends").unwrap();
    eprintln!("$ quickact {args:?}\n{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sentence_runs_live_and_history_show_items_and_undo_read_what_it_did() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.fake.script(
        "明天下午3点开会",
        vec![
            Reply::tool("create_item", json!({"kind": "event", "title": "开会", "when": "明天下午3点"})).delayed(Duration::from_millis(200)),
            Reply::finish("action_completed", "已创建明天下午3点的会议"),
        ],
    );

    let run = quickact(&app, Some(&key), &["明天下午3点开会"]).await;
    assert_eq!(run.status.code(), Some(0));
    let shown = stdout(&run);
    assert!(shown.starts_with("task "), "{shown}");
    assert!(shown.contains("model fake-model  100 in / 20 out"), "{shown}");
    assert!(shown.contains("create_item {") && shown.contains("  ok  "), "{shown}");
    // The verdict is the server's sentence after a mark, with no heading of the CLI's in words.
    assert!(shown.contains("\n✓ 已创建明天下午3点的会议\n"), "{shown}");
    assert!(shown.contains("15:00-16:00 开会"), "{shown}");
    let id = shown.lines().next().unwrap().trim_start_matches("task ").to_owned();

    // The steps shown live are the journal, in order.
    let task = app.call(&key, reqwest::Method::GET, &format!("/api/quick-action/{id}"), None).await.body;
    let names: Vec<&str> = task["steps"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    let shown_names: Vec<&str> = shown.lines().filter(|l| l.starts_with("  model ") || l.starts_with("  create_item") || l.starts_with("  finish")).map(|l| l.split_whitespace().nth(if l.starts_with("  model ") { 1 } else { 0 }).unwrap()).collect();
    assert_eq!(shown_names, names, "{shown}");

    let history = quickact(&app, Some(&key), &["history", "--json"]).await;
    let page: Value = serde_json::from_slice(&history.stdout).unwrap();
    assert_eq!(page["tasks"][0]["task_id"], id.as_str());
    let show = quickact(&app, Some(&key), &["show", &id]).await;
    assert_eq!(show.status.code(), Some(0), "a done task");
    assert!(stdout(&show).starts_with(&format!("task {id}  ✓ done\n")), "{}", stdout(&show));
    assert!(stdout(&show).contains("create_item") && stdout(&show).contains("✓ 已创建"), "{}", stdout(&show));

    let date = task["result"]["items"][0]["date"].as_str().unwrap().to_owned();
    let items = quickact(&app, Some(&key), &["items", "--date", &date]).await;
    assert!(stdout(&items).contains(&format!("[event] {date} 15:00-16:00 开会")), "{}", stdout(&items));

    // Cancelling a finished task fails with the server's reason; undo removes the meeting.
    let cancel = quickact(&app, Some(&key), &["cancel", &id]).await;
    assert_eq!(cancel.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&cancel.stderr).contains("task_finished, HTTP 409"));
    let undo = quickact(&app, Some(&key), &["undo", &id]).await;
    assert_eq!(undo.status.code(), Some(0));
    // The undo of a Chinese sentence answers in Chinese.
    assert!(stdout(&undo).contains("✓ 已撤销“明天下午3点开会”"), "{}", stdout(&undo));
    assert_eq!(stdout(&quickact(&app, Some(&key), &["items"]).await).trim(), "no items");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_exit_code_and_json_tell_the_verdict_to_scripts() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.fake.script("做那个东西", vec![Reply::finish("error", "不知道要做什么")]);

    let run = quickact(&app, Some(&key), &["--json", "submit", "做那个东西"]).await;
    assert_eq!(run.status.code(), Some(4), "an error verdict");
    let task: Value = serde_json::from_slice(&run.stdout).expect("--json prints only the task");
    assert_eq!(task["status"], "failed");
    assert_eq!(task["result"]["type"], "error");
    assert_eq!(task["priority"], "interactive");
    assert_eq!(task["input_text"], "做那个东西", "a flag before the subcommand leaves it a subcommand");

    // A script's sentence: --batch.
    app.fake.script("批量的东西", vec![Reply::finish("error", "不知道要做什么")]);
    let batch = quickact(&app, Some(&key), &["--json", "submit", "--batch", "批量的东西"]).await;
    let task: Value = serde_json::from_slice(&batch.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&batch.stderr)));
    assert_eq!(task["priority"], "batch");

    let no_key = quickact(&app, None, &["history"]).await;
    assert_eq!(no_key.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&no_key.stderr).contains("QUICKACT_KEY"));
    let bad_key = quickact(&app, Some("qa_nope"), &["history"]).await;
    assert_eq!(bad_key.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad_key.stderr).contains("HTTP 401"));
    let unknown = quickact(&app, Some(&key), &["show", "0199aaaa-0000-7000-8000-000000000000"]).await;
    assert_eq!(unknown.status.code(), Some(1));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_task_that_runs_out_of_time_exits_5() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0).env("QUICKACT_SWEEP_SECS", "1"), "alice").await;
    // No worker runs it: the sweeper ends it at its deadline, and the stream brings the verdict.
    let run = quickact(&app, Some(&key), &["submit", "--timeout", "1", "明天下午3点开会"]).await;
    assert_eq!(run.status.code(), Some(5), "{}", stdout(&run));
    assert!(stdout(&run).contains("… pending"), "{}", stdout(&run));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_shows_when_each_task_was_submitted_in_the_users_own_zone() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let created = app
        .call(&app.admin_key, reqwest::Method::POST, "/api/admin/users", Some(json!({"name": "nora", "tz": "America/New_York"})))
        .await;
    let key = created.body["api_key"].as_str().unwrap().to_owned();
    let id = app.submit_id(&key, "明天下午3点开会").await;
    let task = app.call(&key, reqwest::Method::GET, &format!("/api/quick-action/{id}"), None).await.body;
    let at: chrono::DateTime<chrono::Utc> = task["created_at"].as_str().unwrap().parse().unwrap();

    let history = stdout(&quickact(&app, Some(&key), &["history"]).await);
    let row = history.lines().find(|line| line.starts_with(&id)).unwrap_or_else(|| panic!("{history}"));
    let in_new_york = at.with_timezone(&chrono_tz::America::New_York).format("%Y-%m-%d %H:%M:%S %Z").to_string();
    assert!(row.contains(&in_new_york), "{in_new_york} in {row}");
    assert!(in_new_york.ends_with("EST") || in_new_york.ends_with("EDT"), "{in_new_york}");

    // --tz shows another zone; an unknown one is refused.
    let in_utc = at.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    assert!(stdout(&quickact(&app, Some(&key), &["history", "--tz", "UTC"]).await).contains(&in_utc), "{in_utc}");
    let refused = quickact(&app, Some(&key), &["history", "--tz", "Mars/Olympus"]).await;
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not an IANA time zone"));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_question_is_the_servers_sentence_once_and_exits_3_wherever_it_is_read() {
    // The local provider (no model key) reads the sentences.
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().env("OPENAI_API_KEY", ""), "alice").await;
    let seed = |title: &str, date: &str, start: &str, end: &str| {
        json!({"kind": "event", "title": title, "date": date, "start_time": start, "end_time": end})
    };
    for item in [
        seed("评审会", "2030-03-05", "15:00", "16:00"),
        seed("周会", "2030-03-06", "10:00", "11:00"),
        seed("周会", "2030-03-07", "10:00", "11:00"),
        seed("design review", "2030-04-02", "09:00", "10:00"),
        seed("standup", "2030-04-03", "09:00", "09:15"),
        seed("standup", "2030-04-04", "09:00", "09:15"),
    ] {
        assert_eq!(app.call(&key, reqwest::Method::POST, "/api/items", Some(item)).await.status, reqwest::StatusCode::CREATED);
    }

    let run = quickact(&app, Some(&key), &["2030年3月5日下午3点到4点开产品会"]).await;
    assert_eq!(run.status.code(), Some(3), "a question");
    let conflict = stdout(&run);
    // The server's sentence says it is a conflict; the CLI adds a mark, not "时间冲突：" before it.
    assert!(conflict.contains("\n? 与已有日程冲突：") && conflict.contains("评审会") && !conflict.contains("冲突：与"), "{conflict}");
    let run = quickact(&app, Some(&key), &["删除周会"]).await;
    let which = stdout(&run);
    assert!(which.contains("\n? ") && which.contains("  1. [日程]") && !which.contains("which one"), "{which}");
    let id = which.lines().next().unwrap().trim_start_matches("task ").to_owned();

    // Read again, the question exits as it did when submitted, text or JSON, and history says
    // "question", not the API's status "failed".
    let show = quickact(&app, Some(&key), &["show", &id]).await;
    assert_eq!(show.status.code(), Some(3), "{}", stdout(&show));
    assert!(stdout(&show).starts_with(&format!("task {id}  ? question\n")), "{}", stdout(&show));
    assert_eq!(quickact(&app, Some(&key), &["--json", "show", &id]).await.status.code(), Some(3));
    let history = stdout(&quickact(&app, Some(&key), &["history"]).await);
    let row = history.lines().find(|line| line.starts_with(&id)).unwrap_or_else(|| panic!("{history}"));
    assert!(row.contains("  ? question  ") && !row.contains("failed"), "{row}");

    let conflict = stdout(&quickact(&app, Some(&key), &["team sync on April 2, 2030 from 9am to 10am"]).await);
    assert!(conflict.contains("\n? It overlaps") && !conflict.contains("which one?"), "{conflict}");
    let which = stdout(&quickact(&app, Some(&key), &["delete standup"]).await);
    assert!(which.contains("\n? ") && which.contains("  2. [event]"), "{which}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reply_picks_an_option_by_number_or_in_words_and_prints_its_verdict() {
    let (app, key) = TestApp::start_with_user("dora").await;
    let first = app.create_item(&key, json!({ "kind": "event", "title": "sync", "date": "2026-03-02", "start_time": "10:00", "end_time": "11:00" })).await;
    let second = app.create_item(&key, json!({ "kind": "event", "title": "sync", "date": "2026-03-03", "start_time": "10:00", "end_time": "11:00" })).await;
    let third = app.create_item(&key, json!({ "kind": "event", "title": "sync", "date": "2026-03-04", "start_time": "10:00", "end_time": "11:00" })).await;
    // The replies' scripts first: a reply's message holds the asked sentence too.
    app.fake.script("Sentence: #2", vec![Reply::tool("delete_item", json!({ "id": second["id"] })), Reply::finish("action_completed", "Deleted the second sync")]);
    app.fake.script("Sentence: the first one", vec![Reply::tool("delete_item", json!({ "id": first["id"] })), Reply::finish("action_completed", "Deleted the first sync")]);
    for (sentence, other) in [("cancel the sync", &second), ("drop the sync", &third)] {
        app.fake.script(
            sentence,
            vec![
                Reply::tool("search_items", json!({ "query": "sync" })),
                Reply::tool("finish", json!({ "result_type": "need_clarification", "message": "Which sync?", "options": [first["id"], other["id"]] })),
            ],
        );
    }
    let asked = quickact(&app, Some(&key), &["cancel the sync"]).await;
    let id = stdout(&asked).lines().next().unwrap().trim_start_matches("task ").to_owned();
    assert!(stdout(&asked).lines().any(|l| l.trim_start().starts_with("2. ") && l.contains("2026-03-03")), "{}", stdout(&asked));

    let by_number = quickact(&app, Some(&key), &["reply", &id, "2"]).await;
    assert_eq!(by_number.status.code(), Some(0), "{}", stdout(&by_number));
    assert!(stdout(&by_number).starts_with("task ") && stdout(&by_number).contains("\n✓ Deleted the second sync\n"), "{}", stdout(&by_number));
    let reply_id = stdout(&by_number).lines().next().unwrap().trim_start_matches("task ").to_owned();
    let reply = app.call(&key, reqwest::Method::GET, &format!("/api/quick-action/{reply_id}"), None).await.body;
    assert_eq!((reply["reply_to"].as_str(), reply["input_text"].as_str()), (Some(id.as_str()), Some("#2")), "{reply:#}");

    let asked = quickact(&app, Some(&key), &["drop the sync"]).await;
    let id = stdout(&asked).lines().next().unwrap().trim_start_matches("task ").to_owned();
    let in_words = quickact(&app, Some(&key), &["reply", &id, "the", "first", "one"]).await;
    assert_eq!(in_words.status.code(), Some(0), "{}", stdout(&in_words));
    assert!(stdout(&in_words).contains("\n✓ Deleted the first sync\n"), "{}", stdout(&in_words));
    let left = app.items(&key).await;
    assert_eq!(left, vec![third], "the reply deleted only the chosen option");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn preview_shows_how_a_sentence_is_read_and_exits_by_its_certainty() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;

    let certain = quickact(&app, Some(&key), &["preview", "move my dentist appointment to Friday 10am"]).await;
    assert_eq!(certain.status.code(), Some(0), "a certain reading");
    let shown = stdout(&certain);
    assert!(shown.starts_with("certain: move my dentist appointment to Friday 10am\n1. move, certain (rule "), "{shown}");
    for line in ["action      move", "target      dentist appointment", "new_time    Friday 10am"] {
        assert!(shown.lines().any(|l| l.trim() == line), "{line:?} in {shown}");
    }

    let unread = quickact(&app, Some(&key), &["--json", "preview", "asdfgh", "tomorrow"]).await;
    assert_eq!(unread.status.code(), Some(4), "not certain: the error verdict's code");
    let reading: Value = serde_json::from_slice(&unread.stdout).expect("--json prints only the reading");
    assert_eq!((reading["verdict"].as_str(), reading["text"].as_str()), (Some("uncertain"), Some("asdfgh tomorrow")));
    let shown = stdout(&quickact(&app, Some(&key), &["preview", "asdfgh tomorrow"]).await);
    assert!(shown.contains("unread:\n  \"asdfgh\": "), "{shown}");

    let refused = quickact(&app, Some(&key), &["preview", "--tz", "Mars/Olympus", "明天开会"]).await;
    assert_eq!(refused.status.code(), Some(1), "a refused request");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("invalid_tz, HTTP 422"));
    assert_eq!(app.call(&key, reqwest::Method::GET, "/api/quick-action", None).await.body["count"], 0, "nothing was submitted");
    app.shutdown().await;
}
