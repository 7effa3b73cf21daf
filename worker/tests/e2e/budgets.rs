//! Cost budgets (issue 32, point 6): a user whose spend reached a budget gets an error verdict with
//! `reason: "budget_exhausted"` and when the budget renews, before any further paid model turn; an
//! admin raising the budget lets the next task run; the deployment's default applies to users
//! without their own; a user's spend always equals the costs of their tasks. Real Postgres, real workers (in process and a worker process), and the fake
//! model reporting usage priced by the test deployment (`fake-model`: 2.0 input / 8.0 output per
//! million tokens, so a turn with the fake's default usage, 100 in and 20 out, costs 0.00036).

use chrono::{DateTime, Datelike, Duration, Utc};
use quickact_testkit::{Reply, TestApp, TestAppOptions, prometheus::scrape};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const WORKER_BINARY: &str = env!("CARGO_BIN_EXE_quickact-worker");
/// What one turn with the fake's default usage costs in the test deployment.
const TURN_COST: f64 = 0.00036;

async fn set_budget(app: &TestApp, user: &Value, budget: Value) -> Value {
    let path = format!("/api/admin/users/{}/budget", user["id"].as_str().unwrap());
    let answer = app.call(&app.admin_key, Method::PUT, &path, Some(budget)).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body
}

async fn own_budget(app: &TestApp, key: &str) -> Value {
    let answer = app.call(key, Method::GET, "/api/budget", None).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body
}

async fn run_task(app: &TestApp, key: &str, text: &str) -> Value {
    let id = app.submit_id(key, text).await;
    app.wait_final(key, &id, 30).await
}

fn assert_budget_exhausted(task: &Value, renews_at: DateTime<Utc>) {
    assert_eq!(task["status"], "failed", "{task:#}");
    let result = &task["result"];
    assert_eq!(result["type"], "error", "{task:#}");
    assert_eq!(result["reason"], "budget_exhausted", "{task:#}");
    let told: DateTime<Utc> = result["renews_at"].as_str().expect("renews_at").parse().unwrap();
    assert_eq!(told, renews_at, "{task:#}");
    assert!(result["message"].as_str().unwrap().contains("budget"), "{task:#}");
    assert!(result["suggestion"].as_str().unwrap().contains(&renews_at.format("%Y-%m-%d %H:%M UTC").to_string()), "{task:#}");
}

/// The next UTC midnight and first of a month, as the database's clock (the test's, on this machine)
/// sees them now.
fn next_utc_midnight() -> DateTime<Utc> {
    (Utc::now().date_naive() + Duration::days(1)).and_hms_opt(0, 0, 0).unwrap().and_utc()
}

fn next_utc_month() -> DateTime<Utc> {
    let today = Utc::now().date_naive();
    let first = today.with_day(1).unwrap();
    first.checked_add_months(chrono::Months::new(1)).unwrap().and_hms_opt(0, 0, 0).unwrap().and_utc()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_run_that_spent_its_users_daily_budget_ends_with_budget_exhausted_before_the_next_paid_turn() {
    let app = TestApp::start().await;
    let (user, key) = app.create_user("frugal").await;
    // Less than one turn: the first turn is allowed (nothing spent yet), the second is not.
    set_budget(&app, &user, json!({ "per_day": 0.0003 })).await;
    app.fake.script("budget errand", vec![Reply::tool("search_items", json!({})), Reply::finish("action_completed", "never asked")]);

    let task = run_task(&app, &key, "budget errand").await;
    assert_budget_exhausted(&task, next_utc_midnight());
    assert_eq!(app.fake.requests_for("budget errand").len(), 1, "the second turn was never requested");
    assert!((task["cost"]["amount"].as_f64().unwrap() - TURN_COST).abs() < 1e-12, "the first turn is paid: {}", task["cost"]);
    assert_eq!(task["result"]["tool_calls"].as_array().unwrap().len(), 1, "the search the run made is listed: {task:#}");

    // The next task is refused before its first turn, and the user sees why on their own budget.
    app.fake.script("another errand", vec![Reply::look_up_and_finish("never asked")]);
    let next = run_task(&app, &key, "another errand").await;
    assert_budget_exhausted(&next, next_utc_midnight());
    assert!(app.fake.requests_for("another errand").is_empty(), "a refused task asks the model nothing");
    assert_eq!(next["cost"]["amount"].as_f64(), Some(0.0));

    let budget = own_budget(&app, &key).await;
    assert_eq!(budget["exhausted"], true, "{budget:#}");
    assert_eq!(budget["day"]["refusals"], 2, "{budget:#}");
    assert!((budget["day"]["spent"].as_f64().unwrap() - TURN_COST).abs() < 1e-12, "{budget:#}");
    assert_eq!(budget["day"]["remaining"].as_f64(), Some(0.0), "{budget:#}");
    assert_eq!(budget["day"]["limit"].as_f64(), Some(0.0003), "{budget:#}");

    // Point 7: the refusals show in /metrics (the day's, read from the database, exact for this
    // deployment; the counter is the process's, shared with the other tests of this binary).
    let metrics = scrape(&app.client, &format!("{}/metrics", app.base_url)).await;
    assert_eq!(metrics.value("quickact_budget_refusals_today", &[]), 2.0);
    assert!(metrics.value("quickact_budget_refusals_total", &[("period", "day")]) >= 2.0);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn after_an_admin_raises_the_budget_the_next_task_runs() {
    let app = TestApp::start().await;
    let (user, key) = app.create_user("raised").await;
    // 0 allows no paid turn at all.
    set_budget(&app, &user, json!({ "per_day": 0 })).await;
    app.fake.script("first try", vec![Reply::look_up_and_finish("never asked")]);
    let refused = run_task(&app, &key, "first try").await;
    assert_budget_exhausted(&refused, next_utc_midnight());
    assert!(app.fake.requests_for("first try").is_empty());

    let raised = set_budget(&app, &user, json!({ "per_day": 1.0 })).await;
    assert_eq!(raised["exhausted"], false, "{raised:#}");
    app.fake.script("second try", vec![Reply::look_up_and_finish("done")]);
    let done = run_task(&app, &key, "second try").await;
    assert_eq!(done["status"], "success", "{done:#}");
    assert!(done["result"].get("reason").is_none(), "{done:#}");
    let budget = own_budget(&app, &key).await;
    assert!((budget["day"]["spent"].as_f64().unwrap() - TURN_COST).abs() < 1e-12, "{budget:#}");
    assert_eq!(budget["day"]["refusals"], 1, "{budget:#}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_deployments_monthly_default_refuses_users_without_their_own_budget_in_a_worker_process() {
    let options = TestAppOptions::default().workers(0).env("QUICKACT_BUDGET_PER_MONTH", "0.0005");
    let app = TestApp::start_with(options).await;
    let mut worker = app.spawn_worker_process(WORKER_BINARY);
    let (_, key) = app.create_user("default").await;
    let (generous, generous_key) = app.create_user("generous").await;
    set_budget(&app, &generous, json!({ "per_month": 1.0 })).await;

    // 0.00036 of 0.0005: the first task runs, the second is allowed a turn (0.00036 < 0.0005) that
    // passes the limit, the third is refused before its first turn.
    for (i, text) in ["month one", "month two"].into_iter().enumerate() {
        app.fake.script(text, vec![Reply::look_up_and_finish("done")]);
        let task = run_task(&app, &key, text).await;
        assert_eq!(task["status"], "success", "task {i}: {task:#}");
    }
    app.fake.script("month three", vec![Reply::look_up_and_finish("never asked")]);
    let refused = run_task(&app, &key, "month three").await;
    assert_budget_exhausted(&refused, next_utc_month());
    assert!(app.fake.requests_for("month three").is_empty());
    let budget = own_budget(&app, &key).await;
    assert_eq!((budget["month"]["limit"].as_f64(), budget["month"]["own_limit"].as_f64()), (Some(0.0005), None), "{budget:#}");
    assert_eq!(budget["month"]["refusals"], 1, "{budget:#}");

    // A user with a budget of their own goes by it, not by the default.
    for text in ["generous one", "generous two", "generous three"] {
        app.fake.script(text, vec![Reply::look_up_and_finish("done")]);
        let task = run_task(&app, &generous_key, text).await;
        assert_eq!(task["status"], "success", "{task:#}");
    }
    let _ = worker.kill();
    let _ = worker.wait();
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_users_spend_equals_the_costs_of_their_tasks_when_many_run_at_once() {
    let options = TestAppOptions::default().workers(2).env("QUICKACT_SUBMIT_RATE_PER_MINUTE", "0");
    let app = TestApp::start_with(options).await;
    let mut users = Vec::new();
    for name in ["ann", "ben", "cai"] {
        users.push(app.create_user(name).await);
    }
    // Turns with different usage, so a lost or doubled addition shows in the sums; runs of
    // several users end together in the workers' batches of endings.
    let mut ids = Vec::new();
    for (u, (_, key)) in users.iter().enumerate() {
        for i in 0..12 {
            let text = format!("spend <{u}.{i}>");
            let usage = 100 + 10 * i as u64;
            app.fake.script(
                &text,
                vec![
                    Reply::tool("search_items", json!({})).with_usage(usage, 7, 0),
                    Reply::finish("action_completed", "done").with_usage(usage * 2, 11, 50),
                ],
            );
            ids.push((key.clone(), app.submit_id(key, &text).await));
        }
    }
    for (key, id) in &ids {
        assert_eq!(app.wait_final(key, id, 60).await["status"], "success");
    }
    for (user, _) in &users {
        let (tasks, spend): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT sum(cost_nanos)::int8 FROM quick_action_tasks WHERE user_id = $1),
                    (SELECT sum(cost_nanos)::int8 FROM user_spend WHERE user_id = $1)",
        )
        .bind(user["id"].as_str().unwrap().parse::<uuid::Uuid>().unwrap())
        .fetch_one(&app.pool)
        .await
        .unwrap();
        assert!(tasks > 0);
        assert_eq!(spend, tasks, "{}'s spend and the costs of their tasks", user["name"]);
    }
    app.shutdown().await;
}
