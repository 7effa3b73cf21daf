//! HTTP hardening: a request past its time limit and a request past the in-flight bound get a quick
//! 503 with `Retry-After`; long-polls are bounded per user; CORS answers only configured origins.

use std::{sync::Arc, time::Duration};

use quickact_testkit::{Reply, TestApp, TestAppOptions, wait_until};
use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// A deployment with these variables set, and alice on it: the app and her key.
async fn app_with_alice(vars: &[(&str, &str)]) -> (TestApp, String) {
    let options = vars.iter().fold(TestAppOptions::default(), |options, (name, value)| options.env(name, value));
    TestApp::start_with_options_and_user(options, "alice").await
}

async fn new_item(app: &TestApp, key: &str) -> String {
    let created = app.call(key, Method::POST, "/api/items", Some(json!({ "kind": "todo", "title": "report" }))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    created.body["id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_past_its_time_limit_is_answered_503_and_changes_nothing() {
    let (app, key) = app_with_alice(&[("QUICKACT_REQUEST_TIMEOUT_SECS", "1")]).await;
    let id = new_item(&app, &key).await;

    let gate = app.hold_writes("items").await;
    let stuck = app.call(&key, Method::PATCH, &format!("/api/items/{id}"), Some(json!({ "title": "never" }))).await;
    assert_eq!(stuck.status, StatusCode::SERVICE_UNAVAILABLE, "{:?}", stuck.body);
    assert_eq!(stuck.body["error"]["code"], "overloaded");
    assert_eq!(stuck.headers.get(header::RETRY_AFTER).unwrap(), "1");
    gate.release().await;

    let item = app.call(&key, Method::GET, &format!("/api/items/{id}"), None).await.body;
    assert_eq!(item["title"], "report", "the abandoned request's transaction was rolled back");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_past_the_in_flight_bound_are_shed_at_once_not_queued() {
    let (app, key) = app_with_alice(&[("QUICKACT_MAX_CONCURRENT_REQUESTS", "1")]).await;
    let id = new_item(&app, &key).await;

    let gate = app.hold_writes("items").await;
    let path = format!("/api/items/{id}");
    let held = app.call(&key, Method::PATCH, &path, Some(json!({ "title": "quarterly report" })));
    let shed = async {
        gate.wait_for_blocked(1).await;
        let shed = app.call(&key, Method::GET, "/api/items", None).await;
        gate.release().await;
        shed
    };
    let (held, shed) = tokio::join!(held, shed);
    assert_eq!(shed.status, StatusCode::SERVICE_UNAVAILABLE, "{:?}", shed.body);
    assert_eq!(shed.body["error"]["code"], "overloaded");
    assert!(shed.headers.get(header::RETRY_AFTER).is_some());
    assert_eq!(held.status, StatusCode::OK, "the request in flight finishes: {:?}", held.body);
    assert_eq!(app.call(&key, Method::GET, "/api/items", None).await.status, StatusCode::OK, "served again once the slot is free");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn long_polls_are_bounded_per_user() {
    let (app, alice) = app_with_alice(&[("QUICKACT_MAX_LONG_POLLS_PER_USER", "1")]).await;
    let (_, bob) = app.create_user("bob").await;
    let gate = Arc::new(Notify::new());
    app.fake.script("slow one", vec![Reply::Gated(gate.clone(), Box::new(Reply::finish("error", "done")))]);
    let submitted = app.submit(&alice, "slow one").await;
    let id = submitted.body["task_id"].as_str().unwrap().to_owned();
    let wait = format!("/api/quick-action/{id}?wait=true&timeout=30");

    // Two waits of one user at once: one holds the slot, the other is refused at once (and then
    // lets the task finish, which answers the one that waits).
    let wait_once = || async {
        let answer = app.call(&alice, Method::GET, &wait, None).await;
        if answer.status == StatusCode::TOO_MANY_REQUESTS {
            gate.notify_one();
        }
        answer
    };
    let (first, second) = tokio::join!(wait_once(), wait_once());
    let mut statuses = [first.status, second.status];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::OK, StatusCode::TOO_MANY_REQUESTS], "{first:?} {second:?}");
    let (answered, refused) = if first.status == StatusCode::OK { (&first, &second) } else { (&second, &first) };
    assert!(refused.headers.get(header::RETRY_AFTER).is_some());
    assert_eq!(answered.body["status"], "failed", "the wait that held the slot saw the verdict: {answered:?}");

    // The slot is free again, and other users never shared it.
    assert_eq!(app.call(&alice, Method::GET, &wait, None).await.status, StatusCode::OK);
    let bob_task = app.submit(&bob, "bob's").await.body["task_id"].as_str().unwrap().to_owned();
    let bob_wait = app.call(&bob, Method::GET, &format!("/api/quick-action/{bob_task}?wait=true&timeout=1"), None).await;
    assert_eq!(bob_wait.status, StatusCode::OK);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cors_answers_only_the_configured_origins() {
    let (app, key) = app_with_alice(&[("QUICKACT_CORS_ORIGINS", "https://planner.example, https://other.example/")]).await;
    let preflight = |origin: &'static str| {
        app.client
            .request(Method::OPTIONS, format!("{}/api/quick-action", app.base_url))
            .header(header::ORIGIN, origin)
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
            .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "authorization, content-type, idempotency-key")
            .send()
    };
    let allowed = preflight("https://planner.example").await.unwrap();
    assert_eq!(allowed.headers().get(header::ACCESS_CONTROL_ALLOW_ORIGIN).unwrap(), "https://planner.example");
    let methods = allowed.headers().get(header::ACCESS_CONTROL_ALLOW_METHODS).unwrap().to_str().unwrap().to_owned();
    assert!(methods.contains("POST") && methods.contains("PATCH"), "{methods}");
    assert!(allowed.headers().get(header::ACCESS_CONTROL_ALLOW_HEADERS).unwrap().to_str().unwrap().contains("idempotency-key"));
    let refused = preflight("https://evil.example").await.unwrap();
    assert!(refused.headers().get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());

    let simple = app.request(&key, Method::GET, "/api/items").header(header::ORIGIN, "https://other.example").send().await.unwrap();
    assert_eq!(simple.status(), StatusCode::OK);
    assert_eq!(simple.headers().get(header::ACCESS_CONTROL_ALLOW_ORIGIN).unwrap(), "https://other.example");
    app.shutdown().await;

    let closed = TestApp::start().await;
    let (_, key) = closed.create_user("alice").await;
    let answer = closed.client.get(format!("{}/api/items", closed.base_url)).bearer_auth(&key).header(header::ORIGIN, "https://planner.example").send().await.unwrap();
    assert!(answer.headers().get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none(), "no CORS unless configured");
    closed.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_api_binary_writes_one_access_line_per_request_at_the_default_level() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let app = TestApp::start().await;
    let mut api = tokio::process::Command::new(env!("CARGO_BIN_EXE_quickact-api"))
        .envs(app.env_vars())
        .env_remove("RUST_LOG")
        .env("QUICKACT_BIND", "127.0.0.1:0")
        .env("QUICKACT_SKIP_MIGRATIONS", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start quickact-api");
    let mut lines = BufReader::new(api.stderr.take().unwrap()).lines();
    let mut next_line_with = async |needle: &str| -> String {
        let read = async {
            while let Some(line) = lines.next_line().await.expect("read the API's log") {
                if line.contains(needle) {
                    return line;
                }
            }
            panic!("the API's log ended before a line with {needle:?}");
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), read).await.unwrap_or_else(|_| panic!("no log line with {needle:?}"))
    };
    let listening = next_line_with("quickact-api listening").await;
    let address = listening.split("address=").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();

    let ok = app.client.get(format!("http://{address}/api/items")).bearer_auth(&app.admin_key).send().await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let line = next_line_with("finished processing request").await;
    assert!(line.contains("INFO") && line.contains("method=GET") && line.contains("uri=/api/items") && line.contains("status=200"), "{line}");
    assert!(line.contains("latency="), "{line}");

    let missing = app.client.get(format!("http://{address}/no/such/route")).send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let line = next_line_with("finished processing request").await;
    assert!(line.contains("uri=/no/such/route") && line.contains("status=404"), "{line}");
    api.kill().await.ok();
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_submission_time_far_from_the_server_clock_is_refused() {
    let (app, key) = app_with_alice(&[("QUICKACT_REFERENCE_TIME_WINDOW_SECS", "600")]).await;
    let submit = |now: chrono::DateTime<chrono::Utc>| {
        app.call(&key, Method::POST, "/api/quick-action", Some(json!({ "text": "明天下午3点开会", "now": now.to_rfc3339() })))
    };
    let backdated = submit(chrono::Utc::now() - chrono::Duration::days(1)).await;
    assert_eq!(backdated.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", backdated.body);
    assert_eq!(backdated.body["error"]["code"], "invalid_now");
    assert_eq!(submit(chrono::Utc::now() + chrono::Duration::hours(1)).await.status, StatusCode::UNPROCESSABLE_ENTITY, "nor ahead of it");
    assert_eq!(submit(chrono::Utc::now() - chrono::Duration::minutes(5)).await.status, StatusCode::CREATED, "a little clock drift is fine");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_unfinished_task_cap_holds_under_concurrent_submissions() {
    let options = TestAppOptions::default().workers(0).env("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "2").env("QUICKACT_SWEEP_SECS", "3600");
    let (app, key) = TestApp::start_with_options_and_user(options, "alice").await;
    // Six submissions, three to each of two API processes (each process writes the submissions
    // waiting together in one transaction), get as far as they can while task inserts are held:
    // each process's first transaction is blocked in Postgres, on the held insert or on the room the
    // other one took. Then they go together.
    let stop = tokio_util::sync::CancellationToken::new();
    let other_api = app.start_another_api(stop.clone()).await;
    let gate = app.hold_writes("quick_action_tasks").await;
    let submissions = futures::future::join_all((0..6).map(|n| {
        let base = if n % 2 == 0 { app.base_url.clone() } else { other_api.clone() };
        let request = app.client.post(format!("{base}/api/quick-action")).bearer_auth(&key).json(&json!({ "text": format!("开会 {n}") }));
        async move { request.send().await.unwrap().status() }
    }));
    let release = async {
        gate.wait_for_blocked(2).await;
        gate.release().await;
    };
    let (answers, ()) = tokio::join!(submissions, release);
    stop.cancel();
    let created = answers.iter().filter(|status| **status == StatusCode::CREATED).count();
    let refused = answers.iter().filter(|status| **status == StatusCode::TOO_MANY_REQUESTS).count();
    assert_eq!((created, refused), (2, 4), "{answers:?}");
    let unfinished: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE status IN ('pending', 'processing')").fetch_one(&app.pool).await.unwrap();
    assert_eq!(unfinished, 2);
    app.shutdown().await;
}

/// Submissions that wait together are written in one transaction (`api/src/submit.rs`), each
/// with its own answer: the first is held on its task insert, alone in its batch, while five more
/// queue behind it, two of them with one idempotency key; let go, the five commit together, the
/// repeated key names one task (the second answer is its replay) and gives its room back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn submissions_that_wait_together_commit_together_each_with_its_own_answer() {
    let options = TestAppOptions::default().workers(0).env("QUICKACT_SWEEP_SECS", "3600");
    let (app, key) = TestApp::start_with_options_and_user(options, "alice").await;
    let submit = |text: &'static str, idempotency: Option<&'static str>| {
        let mut request = app.request(&key, Method::POST, "/api/quick-action").json(&json!({ "text": text }));
        if let Some(idempotency) = idempotency {
            request = request.header("Idempotency-Key", idempotency);
        }
        tokio::spawn(async move {
            let response = request.send().await.unwrap();
            let replayed = response.headers().contains_key("idempotent-replayed");
            (response.status(), replayed, response.json::<Value>().await.unwrap())
        })
    };
    let gate = app.hold_writes("quick_action_tasks").await;
    let first = submit("开会", None);
    gate.wait_for_blocked(1).await;
    let rest = [submit("写报告", None), submit("买牛奶", Some("k-1")), submit("买牛奶", Some("k-1")), submit("交房租", None), submit("打电话", None)];
    wait_until("five submissions wait for the next batch", Duration::from_secs(20), || async { app.submissions.waiting() == 5 }).await;
    gate.release().await;

    let (status, replayed, alone) = first.await.unwrap();
    assert_eq!((status, replayed), (StatusCode::CREATED, false), "{alone}");
    let mut answers = Vec::new();
    for handle in rest {
        answers.push(handle.await.unwrap());
    }
    assert!(answers.iter().all(|(status, _, _)| *status == StatusCode::CREATED), "{answers:?}");
    let keyed: Vec<&(StatusCode, bool, Value)> = answers.iter().filter(|(_, _, body)| body["input_text"] == "买牛奶").collect();
    assert_eq!(keyed.len(), 2);
    assert_eq!(keyed[0].2["task_id"], keyed[1].2["task_id"], "one key, one task: {keyed:?}");
    assert_eq!(keyed.iter().filter(|(_, replayed, _)| *replayed).count(), 1, "the second is a replay: {keyed:?}");

    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks").fetch_one(&app.pool).await.unwrap();
    assert_eq!(stored, 5, "six submissions, two with one key");
    let room: i64 = sqlx::query_scalar("SELECT sum(used)::bigint FROM task_slots").fetch_one(&app.pool).await.unwrap();
    assert_eq!(room, 5, "the replay's room was given back");
    // `created_at` is the inserting transaction's start: one for the first, one for the other four.
    let commits: i64 = sqlx::query_scalar("SELECT count(DISTINCT created_at) FROM quick_action_tasks").fetch_one(&app.pool).await.unwrap();
    assert_eq!(commits, 2);
    app.shutdown().await;
}

/// A batch takes its users' room under the cap together: one user's five submissions in one batch
/// under a cap of three get three tasks and two 429s, while another user's go through.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_takes_room_under_the_cap_for_each_user_and_no_more() {
    let options = TestAppOptions::default().workers(0).env("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "3").env("QUICKACT_SWEEP_SECS", "3600");
    let (app, alice) = TestApp::start_with_options_and_user(options, "alice").await;
    let (_, bob) = app.create_user("bob").await;
    let submit = |key: &str, text: String| {
        let request = app.request(key, Method::POST, "/api/quick-action").json(&json!({ "text": text }));
        tokio::spawn(async move { request.send().await.unwrap().status() })
    };
    let gate = app.hold_writes("quick_action_tasks").await;
    let first = submit(&bob, "bob 0".into());
    gate.wait_for_blocked(1).await;
    let alices: Vec<_> = (0..5).map(|i| submit(&alice, format!("alice {i}"))).collect();
    let bobs: Vec<_> = (1..3).map(|i| submit(&bob, format!("bob {i}"))).collect();
    wait_until("seven submissions wait for the next batch", Duration::from_secs(20), || async { app.submissions.waiting() == 7 }).await;
    gate.release().await;

    assert_eq!(first.await.unwrap(), StatusCode::CREATED);
    let mut statuses = Vec::new();
    for handle in alices {
        statuses.push(handle.await.unwrap());
    }
    statuses.sort();
    assert_eq!(statuses, [StatusCode::CREATED, StatusCode::CREATED, StatusCode::CREATED, StatusCode::TOO_MANY_REQUESTS, StatusCode::TOO_MANY_REQUESTS]);
    for handle in bobs {
        assert_eq!(handle.await.unwrap(), StatusCode::CREATED, "bob's room is his own");
    }
    let held: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT u.name, (SELECT sum(used) FROM task_slots s WHERE s.user_id = u.id)::bigint,
                (SELECT count(*) FROM quick_action_tasks t WHERE t.user_id = u.id)
         FROM users u WHERE u.name IN ('alice', 'bob') ORDER BY u.name",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(held, [("alice".to_owned(), 3, 3), ("bob".to_owned(), 3, 3)], "the slots count exactly the tasks");
    app.shutdown().await;
}

/// A user's submissions in one batch take their room from one slot when one has room for all of
/// them, and from several when none has: the slots count exactly the tasks either way. Under a cap
/// of 160 a slot holds 10: a batch of 6 fits in one, the next batch of 12 does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_takes_its_room_from_one_slot_when_one_has_room_for_all() {
    let options = TestAppOptions::default().workers(0).env("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "160").env("QUICKACT_SWEEP_SECS", "3600");
    let (app, alice) = TestApp::start_with_options_and_user(options, "alice").await;
    let submit = |text: String| {
        let request = app.request(&alice, Method::POST, "/api/quick-action").json(&json!({ "text": text }));
        tokio::spawn(async move { request.send().await.unwrap().status() })
    };
    let slots_of = |pattern: &'static str| {
        let pool = app.pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(DISTINCT slot) FROM quick_action_tasks WHERE input_text ~ $1")
                .bind(pattern)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    for (batch, size) in [("six", 6), ("twelve", 12)] {
        let gate = app.hold_writes("quick_action_tasks").await;
        let first = submit(format!("{batch} alone"));
        gate.wait_for_blocked(1).await;
        let rest: Vec<_> = (0..size).map(|i| submit(format!("{batch} {i}"))).collect();
        wait_until("the batch waits for its turn", Duration::from_secs(20), || async { app.submissions.waiting() == size }).await;
        gate.release().await;
        assert_eq!(first.await.unwrap(), StatusCode::CREATED);
        for handle in rest {
            assert_eq!(handle.await.unwrap(), StatusCode::CREATED);
        }
    }
    assert_eq!(slots_of("^six [0-9]+$").await, 1, "six fit in one slot");
    assert!(slots_of("^twelve [0-9]+$").await > 1, "twelve do not fit in one slot");
    let (used, tasks): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT sum(used) FROM task_slots)::bigint, (SELECT count(*) FROM quick_action_tasks)",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!((used, tasks), (20, 20), "the slots count exactly the tasks");
    app.shutdown().await;
}

/// Room under the cap is held by unfinished tasks only: whatever ends a task (here a cancel, and
/// a verdict written in plain SQL, as any writer might) gives its room back, an idempotent replay
/// takes none, and the slots always count exactly the unfinished tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_task_gives_its_room_under_the_cap_back_when_it_ends() {
    let options = TestAppOptions::default().workers(0).env("QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "2").env("QUICKACT_SWEEP_SECS", "3600");
    let app = TestApp::start_with(options).await;
    let (user, key) = app.create_user("alice").await;
    let first = app.submit_id(&key, "开会").await;
    let second = app.submit_id(&key, "写报告").await;
    let refused = app.submit(&key, "买牛奶").await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{:?}", refused.body);
    assert!(refused.body["error"]["message"].as_str().unwrap().contains("2 unfinished"), "{:?}", refused.body);

    let cancelled = app.call(&key, Method::POST, &format!("/api/quick-action/{first}/cancel"), None).await;
    assert_eq!(cancelled.status, StatusCode::OK, "{:?}", cancelled.body);
    let keyed = |text: &'static str| {
        let request = app.request(&key, Method::POST, "/api/quick-action").header("Idempotency-Key", "k-1").json(&json!({ "text": text }));
        async move { request.send().await.unwrap().status() }
    };
    assert_eq!(keyed("买牛奶").await, StatusCode::CREATED, "a cancelled task's room is free again");
    assert_eq!(keyed("买牛奶").await, StatusCode::CREATED, "a replay at the cap is still answered");
    assert_eq!(app.submit(&key, "交房租").await.status, StatusCode::TOO_MANY_REQUESTS, "a replay took no room");

    // (A final task carries its completion time: `completed_exactly_when_finished`.)
    sqlx::query("UPDATE quick_action_tasks SET status = 'failed', result_type = 'error', result = '{}', completed_at = now() WHERE id = $1::uuid")
        .bind(&second)
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(app.submit(&key, "交房租").await.status, StatusCode::CREATED, "a task ended by any writer gives its room back");

    let (held, unfinished): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT coalesce(sum(used), 0)::bigint FROM task_slots WHERE user_id = $1::uuid),
                (SELECT count(*) FROM quick_action_tasks WHERE user_id = $1::uuid AND status IN ('pending', 'processing'))",
    )
    .bind(user["id"].as_str().unwrap())
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!((held, unfinished), (2, 2));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_submit_rate_holds_per_user_across_api_processes() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0).env("QUICKACT_SUBMIT_RATE_PER_MINUTE", "3")).await;
    let stop = tokio_util::sync::CancellationToken::new();
    let other_api = app.start_another_api(stop.clone()).await;
    let (_, alice) = app.create_user("alice").await;
    let (_, bob) = app.create_user("bob").await;
    let submit = |base: String, key: String, text: &'static str, idempotency: Option<&'static str>| {
        let client = app.client.clone();
        async move {
            let mut request = client.post(format!("{base}/api/quick-action")).bearer_auth(key).json(&json!({ "text": text }));
            if let Some(idempotency) = idempotency {
                request = request.header("idempotency-key", idempotency);
            }
            request.send().await.unwrap()
        }
    };

    // Three submissions spread over two API processes spend alice's budget of three.
    for (base, text, idempotency) in [(&app.base_url, "one", Some("k1")), (&other_api, "two", None), (&app.base_url, "three", None)] {
        let response = submit(base.clone(), alice.clone(), text, idempotency).await;
        assert_eq!(response.status(), StatusCode::CREATED, "{text}");
    }
    // The fourth is refused on either process, with the time until the budget admits one again
    // (one emission interval of 20 s at this rate).
    for base in [&other_api, &app.base_url] {
        let refused = submit(base.clone(), alice.clone(), "four", None).await;
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let retry_after: u64 = refused.headers()[header::RETRY_AFTER].to_str().unwrap().parse().unwrap();
        assert!((1..=20).contains(&retry_after), "Retry-After: {retry_after}");
        let body: serde_json::Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], "too_many_requests");
    }
    // A replay of an accepted submission is not a new one; another user has a budget of their own.
    let replay = submit(other_api.clone(), alice.clone(), "one", Some("k1")).await;
    assert_eq!(replay.status(), StatusCode::CREATED);
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_eq!(submit(other_api.clone(), bob.clone(), "bob's", None).await.status(), StatusCode::CREATED);
    // Nothing refused was stored.
    let history = app.call(&alice, Method::GET, "/api/quick-action", None).await;
    assert_eq!(history.body["total"], 3, "{:#}", history.body);
    stop.cancel();
    app.shutdown().await;
}
