//! `GET/PUT /api/admin/users/{id}/budget` and `GET /api/budget`: admins read and set anyone's cost
//! budget, users read their own; bad input is 400, a non-admin 403, an unknown or malformed id 404.
//! (What a budget does to tasks is tested end to end in `worker/tests/e2e/budgets.rs`.)

use quickact_testkit::{TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn budget_path(user: &Value) -> String {
    format!("/api/admin/users/{}/budget", user["id"].as_str().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_admin_sets_a_users_budget_over_the_deployments_default_and_clears_it() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0).env("QUICKACT_BUDGET_PER_DAY", "2")).await;
    let (user, key) = app.create_user("alice").await;
    let path = budget_path(&user);

    let fresh = app.call(&app.admin_key, Method::GET, &path, None).await;
    assert_eq!(fresh.status, StatusCode::OK, "{:?}", fresh.body);
    assert_eq!(fresh.body["user_id"], user["id"]);
    assert_eq!(fresh.body["currency"], "CNY");
    assert_eq!(fresh.body["exhausted"], false);
    let day = &fresh.body["day"];
    assert_eq!((day["limit"].as_f64(), day["own_limit"].as_f64(), day["default_limit"].as_f64()), (Some(2.0), None, Some(2.0)), "{day:#}");
    assert_eq!((day["spent"].as_f64(), day["remaining"].as_f64(), day["refusals"].as_i64()), (Some(0.0), Some(2.0), Some(0)), "{day:#}");
    assert_eq!(fresh.body["month"]["limit"], Value::Null, "no monthly default: no limit");
    assert!(day["renews_at"].as_str().unwrap().ends_with("T00:00:00Z"), "{day:#}");

    let set = app.call(&app.admin_key, Method::PUT, &path, Some(json!({"per_day": 2.5, "per_month": 40}))).await;
    assert_eq!(set.status, StatusCode::OK, "{:?}", set.body);
    assert_eq!((set.body["day"]["limit"].as_f64(), set.body["day"]["own_limit"].as_f64()), (Some(2.5), Some(2.5)));
    assert_eq!(set.body["month"]["limit"].as_f64(), Some(40.0));
    // The user sees the same on their own route.
    let own = app.call(&key, Method::GET, "/api/budget", None).await;
    assert_eq!(own.status, StatusCode::OK, "{:?}", own.body);
    assert_eq!(own.body["day"], set.body["day"]);

    // Fields left out follow the deployment's default again.
    let cleared = app.call(&app.admin_key, Method::PUT, &path, Some(json!({}))).await;
    assert_eq!(cleared.status, StatusCode::OK, "{:?}", cleared.body);
    assert_eq!((cleared.body["day"]["limit"].as_f64(), cleared.body["day"]["own_limit"].as_f64()), (Some(2.0), None));
    assert_eq!(cleared.body["month"]["limit"], Value::Null);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn budget_routes_refuse_bad_amounts_non_admins_and_unknown_users() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let (alice, alice_key) = app.create_user("alice").await;
    let (bob, _) = app.create_user("bob").await;
    let path = budget_path(&bob);

    for body in [json!({"per_day": -1}), json!({"per_month": 2e9}), json!({"per_day": "5"}), json!({"per_week": 1}), json!([1])] {
        let answer = app.call(&app.admin_key, Method::PUT, &path, Some(body.clone())).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{body}: {:?}", answer.body);
        assert!(answer.body["error"]["code"].is_string(), "{:?}", answer.body);
    }
    let malformed = app.request(&app.admin_key, Method::PUT, &path).header("content-type", "application/json").body("{").send().await.unwrap();
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);

    // A user may not read or set anyone's budget through the admin routes, their own included.
    for target in [&bob, &alice] {
        let read = app.call(&alice_key, Method::GET, &budget_path(target), None).await;
        assert_eq!(read.status, StatusCode::FORBIDDEN, "{:?}", read.body);
        let write = app.call(&alice_key, Method::PUT, &budget_path(target), Some(json!({"per_day": 100}))).await;
        assert_eq!(write.status, StatusCode::FORBIDDEN, "{:?}", write.body);
    }
    let unchanged = app.call(&app.admin_key, Method::GET, &path, None).await;
    assert_eq!(unchanged.body["day"]["own_limit"], Value::Null, "nothing was set: {:?}", unchanged.body);

    for id in [uuid::Uuid::now_v7().to_string(), "not-a-uuid".to_owned()] {
        let path = format!("/api/admin/users/{id}/budget");
        assert_eq!(app.call(&app.admin_key, Method::GET, &path, None).await.status, StatusCode::NOT_FOUND);
        assert_eq!(app.call(&app.admin_key, Method::PUT, &path, Some(json!({"per_day": 1}))).await.status, StatusCode::NOT_FOUND);
    }
    assert_eq!(app.call("qa_nobody", Method::GET, "/api/budget", None).await.status, StatusCode::UNAUTHORIZED);
    app.shutdown().await;
}
