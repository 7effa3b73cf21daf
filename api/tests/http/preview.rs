//! `POST /api/quick-action/preview`: the local reader's reading of a sentence, over HTTP, with
//! nothing run or stored.

use quickact_testkit::{TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// `POST /api/quick-action/preview` of `text` written at 2026-02-07 09:00 in Shanghai (a
/// Saturday); the answer's body.
async fn preview(app: &TestApp, key: &str, text: &str) -> Value {
    let body = json!({"text": text, "now": "2026-02-07T09:00:00+08:00", "tz": "Asia/Shanghai"});
    let answer = app.call(key, Method::POST, "/api/quick-action/preview", Some(body)).await;
    assert_eq!(answer.status, StatusCode::OK, "{text}: {:?}", answer.body);
    answer.body
}

/// The part of `frame` with `role`, as (text, the sentence's code points its span covers).
fn part(sentence: &str, frame: &Value, role: &str) -> (String, String) {
    let found = frame["parts"].as_array().unwrap().iter().find(|p| p["role"] == role).unwrap_or_else(|| panic!("no {role} part: {frame:#}"));
    let (start, end) = (found["span"][0].as_u64().unwrap() as usize, found["span"][1].as_u64().unwrap() as usize);
    let covered: String = sentence.chars().skip(start).take(end - start).collect();
    (found["text"].as_str().unwrap().to_owned(), covered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_certain_sentence_is_one_frame_whose_parts_point_into_the_text() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let sentence = "move my dentist appointment to Friday 10am";
    let body = preview(&app, &key, sentence).await;
    assert_eq!((body["text"].as_str(), body["tz"].as_str()), (Some(sentence), Some("Asia/Shanghai")));
    assert_eq!(body["now"], "2026-02-07T09:00:00+08:00");
    assert_eq!((body["verdict"].as_str(), body["certain"].as_bool()), (Some("certain"), Some(true)), "{body:#}");
    assert_eq!(body["unread"], json!([]));
    let frames = body["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 1, "{body:#}");
    let frame = &frames[0];
    assert_eq!((frame["act"].as_str(), frame["certain"].as_bool()), (Some("move"), Some(true)), "{frame:#}");
    assert!(frame["rule"].as_str().is_some_and(|rule| !rule.is_empty()), "{frame:#}");
    assert_eq!(frame["change"], json!({"to": "Friday 10am"}), "{frame:#}");
    assert_eq!(frame["target"]["words"], json!(["dentist", "appointment"]), "{frame:#}");
    // Each part's span covers its own text in the sentence: what a client highlights.
    for (role, text) in [("action", "move"), ("target", "dentist appointment"), ("new_time", "Friday 10am")] {
        let (said, covered) = part(sentence, frame, role);
        assert_eq!((said.as_str(), covered.as_str()), (text, text), "{role}: {frame:#}");
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_chinese_sentence_is_a_create_with_its_title_and_time_in_code_points() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let sentence = "明天下午3点到4点开会";
    let body = preview(&app, &key, sentence).await;
    assert_eq!(body["verdict"], "certain", "{body:#}");
    let frame = &body["frames"][0];
    assert_eq!((frame["act"].as_str(), frame["certain"].as_bool()), (Some("create"), Some(true)), "{body:#}");
    assert_eq!(frame["item"]["title"], "开会", "{frame:#}");
    assert_eq!(frame["item"]["kind"], "event", "{frame:#}");
    // Spans count code points, not bytes: 开会 is code points 9 and 10.
    assert_eq!(part(sentence, frame, "title"), ("开会".to_owned(), "开会".to_owned()));
    let title = frame["parts"].as_array().unwrap().iter().find(|p| p["role"] == "title").unwrap();
    assert_eq!(title["span"], json!([9, 11]));
    let (when, covered) = part(sentence, frame, "when");
    assert_eq!(when, covered);
    assert!(when.starts_with("明天"), "{frame:#}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn words_the_reader_cannot_read_make_the_reading_and_only_their_own_frame_uncertain() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let body = preview(&app, &key, "asdfgh tomorrow").await;
    assert_eq!((body["verdict"].as_str(), body["certain"].as_bool()), (Some("uncertain"), Some(false)), "{body:#}");
    let unread = body["unread"].as_array().unwrap();
    let asdfgh = unread.iter().find(|u| u["text"] == "asdfgh").unwrap_or_else(|| panic!("asdfgh is not unread: {body:#}"));
    assert_eq!(asdfgh["span"], json!([0, 6]));
    assert!(asdfgh["reason"].as_str().is_some_and(|r| !r.is_empty()), "{asdfgh}");
    // A frame read around an unread word is not certain either.
    for frame in body["frames"].as_array().unwrap() {
        assert_eq!(frame["certain"], false, "{frame:#}");
    }
    // A clause read in full beside one that is not: that frame is certain, the reading is not.
    let body = preview(&app, &key, "asdfgh, move the standup to 4").await;
    assert_eq!((body["verdict"].as_str(), body["certain"].as_bool()), (Some("uncertain"), Some(false)), "{body:#}");
    let certainty: Vec<(&str, bool)> = body["frames"].as_array().unwrap().iter().map(|f| (f["act"].as_str().unwrap(), f["certain"].as_bool().unwrap())).collect();
    assert_eq!(certainty, [("move", true)], "{body:#}");
    assert_eq!(body["unread"][0]["text"], "asdfgh");
    // Something to put down without saying what: vague, and so is its frame.
    let body = preview(&app, &key, "add a task").await;
    assert_eq!((body["verdict"].as_str(), body["frames"][0]["act"].as_str(), body["frames"][0]["certain"].as_bool()), (Some("vague"), Some("create"), Some(false)), "{body:#}");
    assert_eq!(body["unread"], json!([]));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_clauses_are_two_frames_each_with_its_own_span() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let sentence = "明天下午3点开会，后天上午10点看牙医";
    let body = preview(&app, &key, sentence).await;
    assert_eq!(body["verdict"], "certain", "{body:#}");
    let frames = body["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 2, "{body:#}");
    let titles: Vec<&str> = frames.iter().map(|f| f["item"]["title"].as_str().unwrap_or_default()).collect();
    assert_eq!(titles, ["开会", "看牙医"], "{body:#}");
    assert!(frames.iter().all(|f| f["act"] == "create" && f["certain"] == true), "{body:#}");
    assert!(frames[0]["span"][1].as_u64() <= frames[1]["span"][0].as_u64(), "left to right: {body:#}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_preview_runs_and_stores_nothing() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    for sentence in ["明天下午3点到4点开会", "delete the standup", "完成报告提交"] {
        preview(&app, &key, sentence).await;
    }
    let history = app.call(&key, Method::GET, "/api/quick-action", None).await;
    assert_eq!(history.status, StatusCode::OK);
    assert_eq!((history.body["tasks"].clone(), history.body["count"].as_u64()), (json!([]), Some(0)), "{:?}", history.body);
    assert_eq!(app.items(&key).await, Vec::<Value>::new());
    let tasks: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks").fetch_one(&app.pool).await.unwrap();
    assert_eq!(tasks, 0);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_preview_is_refused_like_parse_time() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let path = "/api/quick-action/preview";
    let no_key = app.client.post(format!("{}{path}", app.base_url)).json(&json!({"text": "明天开会"})).send().await.unwrap();
    assert_eq!(no_key.status(), StatusCode::UNAUTHORIZED);
    let envelope: Value = no_key.json().await.unwrap();
    assert!(envelope["error"]["code"].is_string(), "{envelope}");

    let too_long = app.call(&key, Method::POST, path, Some(json!({"text": "x".repeat(2001)}))).await;
    assert_eq!(too_long.status, StatusCode::PAYLOAD_TOO_LARGE, "{:?}", too_long.body);
    let bad_zone = app.call(&key, Method::POST, path, Some(json!({"text": "明天开会", "tz": "Moon/Base"}))).await;
    assert_eq!((bad_zone.status, bad_zone.body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_tz")));
    let malformed = app.request(&key, Method::POST, path).header("content-type", "application/json").body("{\"text\": ").send().await.unwrap();
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
    let envelope: Value = malformed.json().await.unwrap();
    assert_eq!(envelope["error"]["code"], "invalid_json", "{envelope}");
    let unknown_field = app.call(&key, Method::POST, path, Some(json!({"text": "明天开会", "wait": true}))).await;
    assert_eq!(unknown_field.status, StatusCode::BAD_REQUEST, "{:?}", unknown_field.body);

    // At exactly the limit, read; without a zone, in the user's own.
    let at_limit = app.call(&key, Method::POST, path, Some(json!({"text": "x".repeat(2000)}))).await;
    assert_eq!(at_limit.status, StatusCode::OK, "{:?}", at_limit.body);
    let nora = app.call(&app.admin_key, Method::POST, "/api/admin/users", Some(json!({"name": "nora", "tz": "America/New_York"}))).await;
    let nora_key = nora.body["api_key"].as_str().unwrap();
    let body = app.call(nora_key, Method::POST, path, Some(json!({"text": "明天开会"}))).await;
    assert_eq!((body.status, body.body["tz"].as_str()), (StatusCode::OK, Some("America/New_York")), "{:?}", body.body);
    app.shutdown().await;
}
