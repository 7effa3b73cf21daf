//! The HTTP contract: authentication, validation, the error envelope, idempotency, history and
//! admin routes, health and shutdown.

use quickact_testkit::{Reply, TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn assert_envelope(body: &Value, code: &str) {
    assert_eq!(body["error"]["code"], code, "{body:#}");
    assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{body:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_without_a_valid_key_get_401_and_non_admins_get_403() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;

    let no_key = app.client.get(format!("{}/api/quick-action", app.base_url)).send().await.unwrap();
    assert_eq!(no_key.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(no_key.headers()["www-authenticate"], "Bearer");
    assert_envelope(&no_key.json().await.unwrap(), "unauthorized");

    let bad = app.call("qa_not_a_real_key", Method::GET, "/api/quick-action", None).await;
    assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
    let basic = app.client.get(format!("{}/api/quick-action", app.base_url)).basic_auth("x", Some("y")).send().await.unwrap();
    assert_eq!(basic.status(), StatusCode::UNAUTHORIZED);

    let forbidden = app.call(&key, Method::GET, "/api/admin/quick-actions", None).await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN);
    assert_envelope(&forbidden.body, "forbidden");
    let forbidden = app.call(&key, Method::POST, "/api/admin/users", Some(json!({"name": "mallory", "is_admin": true}))).await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn another_users_task_is_404_like_an_unknown_one() {
    let (app, alice) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let (_, bob) = app.create_user("bob").await;
    let id = app.submit_id(&alice, "alice's secret plan").await;

    for (key, path) in [
        (&bob, format!("/api/quick-action/{id}")),
        (&bob, format!("/api/quick-action/{}", uuid::Uuid::now_v7())),
        (&bob, "/api/quick-action/not-a-uuid".to_owned()),
    ] {
        let answer = app.call(key, Method::GET, &path, None).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        assert_envelope(&answer.body, "not_found");
    }
    let cancel = app.call(&bob, Method::POST, &format!("/api/quick-action/{id}/cancel"), None).await;
    assert_eq!(cancel.status, StatusCode::NOT_FOUND);
    let history = app.call(&bob, Method::GET, "/api/quick-action", None).await;
    assert_eq!(history.body["count"], 0);
    // The owner still sees it, untouched.
    let own = app.call(&alice, Method::GET, &format!("/api/quick-action/{id}"), None).await;
    assert_eq!(own.status, StatusCode::OK);
    assert_eq!(own.body["status"], "pending");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_input_gets_a_clear_error_and_creates_nothing() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let post_raw = |body: &'static str, content_type: &'static str| {
        let app = &app;
        let key = key.clone();
        async move {
            let response = app
                .request(&key, Method::POST, "/api/quick-action")
                .header("content-type", content_type)
                .body(body)
                .send()
                .await
                .unwrap();
            (response.status(), response.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let (status, body) = post_raw("{\"text\": ", "application/json").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_envelope(&body, "invalid_json");
    let (status, body) = post_raw("{\"text\": \"x\"}", "text/plain").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_envelope(&body, "invalid_content_type");
    let (status, body) = post_raw("{\"txt\": \"x\"}", "application/json").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_envelope(&body, "invalid_input");
    let (status, _) = post_raw("{\"text\": 42}", "application/json").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let cases = [
        (json!({"text": ""}), StatusCode::BAD_REQUEST, "invalid_input"),
        (json!({"text": "   \n "}), StatusCode::BAD_REQUEST, "invalid_input"),
        (json!({"text": "x".repeat(2001)}), StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        (json!({"text": "会".repeat(2001)}), StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        (json!({"text": "x".repeat(200_000)}), StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        (json!({"text": "ok", "timeout": 0}), StatusCode::UNPROCESSABLE_ENTITY, "invalid_timeout"),
        (json!({"text": "ok", "timeout": 121}), StatusCode::UNPROCESSABLE_ENTITY, "invalid_timeout"),
        (json!({"text": "ok", "tz": "Mars/Olympus"}), StatusCode::UNPROCESSABLE_ENTITY, "invalid_tz"),
        (json!({"text": "ok", "now": "yesterday"}), StatusCode::BAD_REQUEST, "invalid_input"),
    ];
    for (body, status, code) in cases {
        let answer = app.call(&key, Method::POST, "/api/quick-action", Some(body.clone())).await;
        assert_eq!(answer.status, status, "{body}");
        assert_envelope(&answer.body, code);
    }
    // 2000 characters (even multi-byte) are fine.
    let answer = app.call(&key, Method::POST, "/api/quick-action", Some(json!({"text": "会".repeat(2000)}))).await;
    assert_eq!(answer.status, StatusCode::CREATED);

    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks").fetch_one(&app.pool).await.unwrap();
    assert_eq!(count, 1, "only the valid request created a task");

    let unknown = app.call(&key, Method::GET, "/api/nothing-here", None).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_envelope(&unknown.body, "not_found");
    let wrong_method = app.call(&key, Method::DELETE, "/api/quick-action", None).await;
    assert_eq!(wrong_method.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_envelope(&wrong_method.body, "method_not_allowed");
    let bad_query = app.call(&key, Method::GET, "/api/quick-action?limit=abc", None).await;
    assert_eq!(bad_query.status, StatusCode::BAD_REQUEST);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_reference_time_and_zone_are_kept_for_the_worker() {
    let (app, key) = TestApp::start_with_user("alice").await;
    app.fake.script("tz check", vec![Reply::look_up_and_finish("ok")]);
    let answer = app
        .call(&key, Method::POST, "/api/quick-action/", Some(json!({"text": "tz check", "now": "2026-02-07T09:30:00+08:00", "tz": "Europe/Berlin"})))
        .await;
    assert_eq!(answer.status, StatusCode::CREATED, "trailing slash accepted: {:?}", answer.body);
    assert_eq!(answer.body["reference_time"], "2026-02-07T01:30:00Z");
    assert_eq!(answer.body["tz"], "Europe/Berlin");
    let id = answer.body["task_id"].as_str().unwrap();
    app.wait_final(&key, id, 20).await;
    let request = &app.fake.requests_for("tz check")[0];
    let user = request["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("2026-02-07 02:30 Saturday in time zone Europe/Berlin"), "{user}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idempotency_keys_return_the_same_task() {
    let (app, alice) = TestApp::start_with_user("alice").await;
    let (_, bob) = app.create_user("bob").await;
    app.fake.fallback(|_| Reply::look_up_and_finish("ok"));
    let post = |key: String, text: &'static str, idem: &'static str| {
        let app = &app;
        async move {
            let response = app
                .request(&key, Method::POST, "/api/quick-action")
                .header("Idempotency-Key", idem)
                .json(&json!({ "text": text }))
                .send()
                .await
                .unwrap();
            let status = response.status();
            let replayed = response.headers().get("idempotent-replayed").is_some();
            (status, replayed, response.json::<Value>().await.unwrap())
        }
    };
    let (s1, r1, first) = post(alice.clone(), "write report", "k-1").await;
    let (s2, r2, second) = post(alice.clone(), "write report", "k-1").await;
    assert_eq!((s1, r1), (StatusCode::CREATED, false));
    assert_eq!((s2, r2), (StatusCode::CREATED, true));
    assert_eq!(first["task_id"], second["task_id"]);
    // Another user's key space is separate.
    let (_, _, other) = post(bob, "write report", "k-1").await;
    assert_ne!(other["task_id"], first["task_id"]);
    // Reusing a key for another sentence is refused.
    let (s3, _, reused) = post(alice.clone(), "something else", "k-1").await;
    assert_eq!(s3, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reused["error"]["code"], "idempotency_key_reused");
    // Concurrent duplicates still make one task.
    let results = futures::future::join_all((0..8).map(|_| post(alice.clone(), "race", "k-2"))).await;
    let ids: std::collections::HashSet<String> = results.iter().map(|(_, _, b)| b["task_id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids.len(), 1, "{results:?}");
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE input_text = 'race'").fetch_one(&app.pool).await.unwrap();
    assert_eq!(count, 1);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn history_is_newest_first_with_cursor_paging() {
    let (app, alice) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let (_, bob) = app.create_user("bob").await;
    let mut ids = Vec::new();
    for i in 0..7 {
        ids.push(app.submit_id(&alice, &format!("task number {i}")).await);
    }
    app.submit_id(&bob, "bob's task").await;
    ids.reverse();

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/quick-action?limit=3&cursor={c}"),
            None => "/api/quick-action?limit=3".to_owned(),
        };
        let page = app.call(&alice, Method::GET, &path, None).await;
        assert_eq!(page.status, StatusCode::OK, "{:?}", page.body);
        assert_eq!(page.body["total"], 7);
        let tasks = page.body["tasks"].as_array().unwrap();
        assert_eq!(page.body["count"], tasks.len());
        seen.extend(tasks.iter().map(|t| t["task_id"].as_str().unwrap().to_owned()));
        match page.body["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ids, "every task once, newest first");
    let clamped = app.call(&alice, Method::GET, "/api/quick-action?limit=500", None).await;
    assert_eq!(clamped.body["count"], 7);
    let bad_cursor = app.call(&alice, Method::GET, "/api/quick-action?cursor=garbage", None).await;
    assert_eq!(bad_cursor.status, StatusCode::BAD_REQUEST);
    assert_envelope(&bad_cursor.body, "invalid_cursor");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn admins_browse_everyones_history_with_filters() {
    let app = TestApp::start().await;
    let (alice_user, alice) = app.create_user("alice").await;
    let (_, bob) = app.create_user("bob").await;
    app.fake.script("dentist", vec![Reply::look_up_and_finish("moved")]);
    app.fake.script("groceries", vec![Reply::finish("error", "no such list")]);
    let done = app.submit_id(&alice, "move my dentist appointment to Friday 10am").await;
    let failed = app.submit_id(&bob, "buy groceries").await;
    app.wait_final(&alice, &done, 20).await;
    app.wait_final(&bob, &failed, 20).await;

    let admin = &app.admin_key;
    let all = app.call(admin, Method::GET, "/api/admin/quick-actions", None).await;
    assert_eq!(all.status, StatusCode::OK);
    assert_eq!(all.body["total"], 2);

    let by_user = app.call(admin, Method::GET, &format!("/api/admin/quick-actions?user_id={}", alice_user["id"].as_str().unwrap()), None).await;
    assert_eq!(by_user.body["total"], 1);
    assert_eq!(by_user.body["tasks"][0]["task_id"], done.as_str());

    let by_status = app.call(admin, Method::GET, "/api/admin/quick-actions?status=failed", None).await;
    assert_eq!(by_status.body["tasks"][0]["task_id"], failed.as_str());
    let by_result = app.call(admin, Method::GET, "/api/admin/quick-actions?result_type=action_completed", None).await;
    assert_eq!(by_result.body["tasks"][0]["task_id"], done.as_str());
    let by_text = app.call(admin, Method::GET, "/api/admin/quick-actions?q=DENTIST", None).await;
    assert_eq!(by_text.body["total"], 1);
    let future = app.call(admin, Method::GET, "/api/admin/quick-actions?since=2999-01-01", None).await;
    assert_eq!(future.body["total"], 0);
    let until = app.call(admin, Method::GET, "/api/admin/quick-actions?until=2999-01-01T00:00:00Z", None).await;
    assert_eq!(until.body["total"], 2);
    let bad = app.call(admin, Method::GET, "/api/admin/quick-actions?status=done", None).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    // Admins may open anyone's task.
    let one = app.call(admin, Method::GET, &format!("/api/quick-action/{failed}"), None).await;
    assert_eq!(one.status, StatusCode::OK);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn admins_create_users_whose_key_is_shown_once_and_stored_hashed() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let created = app
        .call(&app.admin_key, Method::POST, "/api/admin/users", Some(json!({"name": "zoe", "tz": "America/New_York", "is_admin": false})))
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let key = created.body["api_key"].as_str().unwrap();
    assert!(key.starts_with("qa_"));
    assert_eq!(created.body["user"]["tz"], "America/New_York");
    assert_eq!(created.body["user"]["is_admin"], false);
    let works = app.call(key, Method::GET, "/api/quick-action", None).await;
    assert_eq!(works.status, StatusCode::OK);

    let stored: Vec<Vec<u8>> = sqlx::query_scalar("SELECT key_hash FROM api_keys").fetch_all(&app.pool).await.unwrap();
    assert!(stored.iter().all(|hash| hash.len() == 32 && !String::from_utf8_lossy(hash).contains(&key[3..])));
    let plain: i64 = sqlx::query_scalar("SELECT count(*) FROM api_keys WHERE key_prefix = $1").bind(key).fetch_one(&app.pool).await.unwrap();
    assert_eq!(plain, 0, "the whole key is never stored");

    for (body, status) in [
        (json!({"name": ""}), StatusCode::BAD_REQUEST),
        (json!({"name": "x", "tz": "Nowhere/Land"}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"nom": "x"}), StatusCode::BAD_REQUEST),
    ] {
        let answer = app.call(&app.admin_key, Method::POST, "/api/admin/users", Some(body.clone())).await;
        assert_eq!(answer.status, status, "{body}");
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn too_many_unfinished_tasks_get_429_with_retry_after() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0).env("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "2"), "alice").await;
    app.submit_id(&key, "one").await;
    app.submit_id(&key, "two").await;
    let third = app.submit(&key, "three").await;
    assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(third.headers.get("retry-after").is_some());
    assert_envelope(&third.body, "too_many_requests");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn health_and_readiness_answer_without_a_key() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let health = app.client.get(format!("{}/health", app.base_url)).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let ready = app.client.get(format!("{}/ready", app.base_url)).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    let body: Value = ready.json().await.unwrap();
    assert_eq!(body["database"], true);
    assert_eq!(body["listener"], true);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_graceful_shutdown_answers_waiting_long_polls_at_once() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let id = app.submit_id(&key, "nobody will run this").await;
    // The shutdown begins only once the waiter is surely in the server.
    let waiter = app.long_poll_in_server(&key, &id).await;
    let started = std::time::Instant::now();
    app.shutdown().await;
    let (status, task, _) = waiter.await.unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "shutdown waited {:?}", started.elapsed());
    assert_eq!(status, StatusCode::OK);
    assert_eq!(task["status"], "pending");
}
