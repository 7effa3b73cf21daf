//! `/api/items` and `/api/parse-time` over HTTP.

use quickact_testkit::{TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn items_can_be_created_listed_edited_and_deleted() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let (_, bob) = app.create_user("bob").await;

    let created = app
        .call(&key, Method::POST, "/api/items", Some(json!({"kind": "event", "title": "牙医", "date": "2026-03-05", "start_time": "10:00", "end_time": "11:00", "priority": 2, "group": "health", "description": "bring the card"})))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let item = created.body;
    for field in ["id", "kind", "title", "date", "start_time", "end_time", "priority", "group", "status", "created_at", "updated_at"] {
        assert!(!item[field].is_null(), "{field} missing: {item:#}");
    }
    assert_eq!(item["status"], "open");
    let id = item["id"].as_str().unwrap().to_owned();
    let todo = app.call(&key, Method::POST, "/api/items/", Some(json!({"kind": "todo", "title": "buy milk", "date": "2026-03-06"}))).await.body;

    let list = |path: &'static str| {
        let app = &app;
        let key = key.clone();
        async move {
            let answer = app.call(&key, Method::GET, path, None).await;
            assert_eq!(answer.status, StatusCode::OK, "{path}: {:?}", answer.body);
            answer.body["items"].as_array().unwrap().iter().map(|i| i["title"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
        }
    };
    assert_eq!(list("/api/items").await, vec!["牙医", "buy milk"]);
    assert_eq!(list("/api/items?kind=todo").await, vec!["buy milk"]);
    assert_eq!(list("/api/items?date_from=2026-03-06").await, vec!["buy milk"]);
    assert_eq!(list("/api/items?date_to=2026-03-05").await, vec!["牙医"]);
    assert_eq!(list("/api/items?q=MILK").await, vec!["buy milk"]);
    assert_eq!(list("/api/items?limit=1").await.len(), 1);

    // PATCH a subset; null clears an optional field; completing stamps completed_at.
    let patched = app.call(&key, Method::PATCH, &format!("/api/items/{id}"), Some(json!({"title": "牙医复诊", "priority": null, "status": "completed"}))).await;
    assert_eq!(patched.status, StatusCode::OK, "{:?}", patched.body);
    assert_eq!(patched.body["title"], "牙医复诊");
    assert!(patched.body.get("priority").is_none());
    assert_eq!(patched.body["group"], "health", "untouched fields stay");
    assert!(patched.body["completed_at"].is_string());
    assert_eq!(list("/api/items?status=completed").await, vec!["牙医复诊"]);
    assert_eq!(list("/api/items?status=open").await, vec!["buy milk"]);

    // Another user's item is 404 on every route, and is left alone.
    for (method, body) in [(Method::GET, None), (Method::PATCH, Some(json!({"title": "x"}))), (Method::DELETE, None)] {
        let answer = app.call(&bob, method.clone(), &format!("/api/items/{id}"), body).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method}");
    }
    let bobs: Value = app.call(&bob, Method::GET, "/api/items", None).await.body;
    assert_eq!(bobs["items"].as_array().unwrap().len(), 0);

    let deleted = app.call(&key, Method::DELETE, &format!("/api/items/{}", todo["id"].as_str().unwrap()), None).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(list("/api/items").await, vec!["牙医复诊"]);
    let again = app.call(&key, Method::DELETE, &format!("/api/items/{}", todo["id"].as_str().unwrap()), None).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn invalid_items_are_refused_with_the_envelope() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let cases = [
        (json!({"title": "no kind"}), StatusCode::BAD_REQUEST),
        (json!({"kind": "meeting", "title": "x"}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"kind": "todo", "title": "  "}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"kind": "todo", "title": "x", "date": "2026-13-45"}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"kind": "event", "title": "x", "start_time": "25:00"}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"kind": "event", "title": "x", "end_time": "10:00"}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"kind": "event", "title": "x", "start_time": "10:00", "segment": "evening"}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"kind": "todo", "title": "x", "priority": 5}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"kind": "todo", "title": "x", "colour": "red"}), StatusCode::BAD_REQUEST),
        (json!({"kind": "todo", "title": 7}), StatusCode::BAD_REQUEST),
    ];
    for (body, status) in cases {
        let answer = app.call(&key, Method::POST, "/api/items", Some(body.clone())).await;
        assert_eq!(answer.status, status, "{body}: {:?}", answer.body);
        assert!(answer.body["error"]["code"].is_string());
    }
    // A missing date means today in the user's zone.
    let today = app.call(&key, Method::POST, "/api/items", Some(json!({"kind": "todo", "title": "today"}))).await;
    assert_eq!(today.status, StatusCode::CREATED);
    assert!(today.body["date"].is_string());
    let unknown = app.call(&key, Method::GET, &format!("/api/items/{}", uuid::Uuid::now_v7()), None).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    app.shutdown().await;
}

/// `POST /api/parse-time` of `text` written at 2026-02-07 09:00 in Shanghai; the answer's body.
async fn parse_time(app: &TestApp, key: &str, text: &str) -> Value {
    let body = json!({"text": text, "now": "2026-02-07T09:00:00+08:00", "tz": "Asia/Shanghai"});
    let answer = app.call(key, Method::POST, "/api/parse-time", Some(body)).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parse_time_reports_spans_in_code_points_and_resolutions() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let parse = |text| parse_time(&app, &key, text);
    let body = parse("把2月8日的会议改到晚上8点").await;
    assert_eq!(body["tz"], "Asia/Shanghai");
    let matches = body["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2, "{body:#}");
    assert_eq!(matches[0]["span"], json!([1, 5]));
    assert_eq!(matches[0]["text"], "2月8日");
    assert_eq!(matches[0]["date"], "2026-02-08");
    assert_eq!(matches[1]["text"], "晚上8点");
    assert_eq!(matches[1]["start_time"], "20:00");

    let body = parse("明天下午3点到4点开会").await;
    let range = &body["matches"][0];
    assert_eq!((range["span"].clone(), range["date"].as_str()), (json!([0, 9]), Some("2026-02-08")));
    assert_eq!((range["start_time"].as_str(), range["end_time"].as_str()), (Some("15:00"), Some("16:00")));
    assert!(range.get("segment").is_none(), "absent fields are left out: {range}");

    let body = parse("每周一早上9点开周会").await;
    assert_eq!(body["matches"][0]["rrule"], "FREQ=WEEKLY;BYDAY=MO");
    let body = parse("完成报告提交").await;
    assert_eq!(body["matches"], json!([]));

    let too_long = app.call(&key, Method::POST, "/api/parse-time", Some(json!({"text": "x".repeat(2001)}))).await;
    assert_eq!(too_long.status, StatusCode::PAYLOAD_TOO_LARGE);
    let bad_zone = app.call(&key, Method::POST, "/api/parse-time", Some(json!({"text": "明天", "tz": "Moon/Base"}))).await;
    assert_eq!(bad_zone.status, StatusCode::UNPROCESSABLE_ENTITY);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parse_time_tells_a_reading_from_a_guess_in_every_match() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let parse = async |text| parse_time(&app, &key, text).await["matches"].as_array().cloned().unwrap_or_default();
    // Everything written: a reading.
    let matches = parse("明天下午3点开会").await;
    assert_eq!(matches.len(), 1, "{matches:?}");
    assert_eq!((matches[0]["confidence"].as_str(), matches[0]["grain"].as_str()), (Some("read"), Some("hour")));
    // A bare hour: 15:00 by rule, but 03:00 is another reading.
    let matches = parse("明天3点开会").await;
    assert_eq!((matches[0]["start_time"].as_str(), matches[0]["confidence"].as_str()), (Some("15:00"), Some("inferred")));
    // Day and month that could go either way.
    let matches = parse("05.04.2027 deadline").await;
    assert_eq!((matches[0]["date"].as_str(), matches[0]["confidence"].as_str()), (Some("2027-04-05"), Some("inferred")));
    // A duration alone: its date is only there because every match has one.
    let matches = parse("休息半小时").await;
    assert_eq!((matches[0]["duration_minutes"].as_u64(), matches[0]["confidence"].as_str()), (Some(30), Some("assumed")));
    assert_eq!(matches[0]["date"], "2026-02-07", "the contract's date is kept: the reference date");
    // A start and its duration a few words apart are one match, read.
    let matches = parse("后天上午10点评审，开一个半小时").await;
    assert_eq!(matches.len(), 1, "{matches:?}");
    let m = &matches[0];
    assert_eq!((m["date"].as_str(), m["start_time"].as_str(), m["end_time"].as_str()), (Some("2026-02-09"), Some("10:00"), Some("11:30")));
    assert_eq!((m["duration_minutes"].as_u64(), m["confidence"].as_str()), (Some(90), Some("read")));
    app.shutdown().await;
}
