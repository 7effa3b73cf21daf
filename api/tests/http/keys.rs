//! API keys: a user lists, creates, rotates and revokes their own keys; an admin revokes anyone's;
//! a revoked key is refused at once by every API process; no secret is ever shown twice.

use std::time::Duration;

use quickact_testkit::{TestApp, wait_until};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn keys(app: &TestApp, key: &str) -> Vec<Value> {
    let answer = app.call(key, Method::GET, "/api/keys", None).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body["keys"].as_array().unwrap().clone()
}

async fn status_with(app: &TestApp, key: &str) -> StatusCode {
    app.call(key, Method::GET, "/api/quick-action", None).await.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_revoked_key_is_refused_at_once_by_every_api_process() {
    let (app, first) = TestApp::start_with_user("alice").await;
    let listed = keys(&app, &first).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["current"], true);
    assert!(first.starts_with(listed[0]["prefix"].as_str().unwrap()), "the prefix is the key's start: {listed:?}");
    assert!(listed[0].as_object().unwrap().values().all(|v| v.as_str() != Some(first.as_str())), "the secret is never listed");

    // A second key, shown once.
    let created = app.call(&first, Method::POST, "/api/keys", None).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let second = created.body["api_key"].as_str().unwrap().to_owned();
    assert_eq!(status_with(&app, &second).await, StatusCode::OK);
    let listed = keys(&app, &second).await;
    assert_eq!(listed.len(), 2);
    assert_eq!(listed.iter().filter(|k| k["current"] == true).count(), 1);
    let first_id = listed.iter().find(|k| k["current"] == false).unwrap()["id"].as_str().unwrap().to_owned();

    // Another API process of the same deployment, serving the same users.
    let stop = CancellationToken::new();
    let other_api = app.start_another_api(stop.clone()).await;
    let via_other = |key: &str| {
        let request = app.client.get(format!("{other_api}/api/quick-action")).bearer_auth(key);
        async move { request.send().await.unwrap().status() }
    };
    assert_eq!(via_other(&first).await, StatusCode::OK);

    let revoked = app.call(&second, Method::DELETE, &format!("/api/keys/{first_id}"), None).await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT, "{:?}", revoked.body);
    assert_eq!(status_with(&app, &first).await, StatusCode::UNAUTHORIZED);
    // The other process had the key cached; it hears the revocation over LISTEN, within moments.
    wait_until("the other process refuses the revoked key", Duration::from_secs(5), || async {
        via_other(&first).await == StatusCode::UNAUTHORIZED
    })
    .await;
    assert_eq!(via_other(&second).await, StatusCode::OK);
    let listed = keys(&app, &second).await;
    assert!(listed.iter().find(|k| k["id"] == first_id.as_str()).unwrap()["revoked_at"].is_string());
    stop.cancel();
    app.shutdown().await;
}

/// Keys are cached in each process; a change made by any writer (here plain SQL, as an operator
/// would) reaches every process through the table's trigger, and one made while a process's
/// listener is down is not missed either.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn key_and_user_changes_made_anywhere_reach_the_cached_keys() {
    let app = TestApp::start().await;
    let (alice, alice_key) = app.create_user("alice").await;
    let (bob, bob_key) = app.create_user("bob").await;
    let (carol, carol_key) = app.create_user("carol").await;
    for key in [&alice_key, &bob_key, &carol_key] {
        assert_eq!(status_with(&app, key).await, StatusCode::OK);
    }
    let admin_page = |key: &str| {
        let key = key.to_owned();
        let app = &app;
        async move { app.call(&key, Method::GET, "/api/admin/quick-actions", None).await.status }
    };
    assert_eq!(admin_page(&bob_key).await, StatusCode::FORBIDDEN);

    sqlx::query("UPDATE api_keys SET revoked_at = now() WHERE user_id = $1::uuid")
        .bind(alice["id"].as_str().unwrap())
        .execute(&app.pool)
        .await
        .unwrap();
    wait_until("a key revoked in SQL is refused", Duration::from_secs(5), || async {
        status_with(&app, &alice_key).await == StatusCode::UNAUTHORIZED
    })
    .await;

    sqlx::query("UPDATE users SET is_admin = true WHERE id = $1::uuid").bind(bob["id"].as_str().unwrap()).execute(&app.pool).await.unwrap();
    wait_until("a user made admin in SQL is an admin", Duration::from_secs(5), || async { admin_page(&bob_key).await == StatusCode::OK }).await;

    // Carol's key is revoked in the transaction that cuts the listeners off, so its notification
    // reaches no one. Once a listener is back, only forgetting every cached key on reconnect keeps
    // the revoked key out (it was cached a moment ago).
    // This test's listeners only: the tests running beside it share the server, not the database.
    let listeners = "SELECT pid FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND pid <> pg_backend_pid() AND datname = current_database()";
    let cut: Vec<i32> = sqlx::query_scalar(listeners).fetch_all(&app.pool).await.unwrap();
    assert!(!cut.is_empty());
    let mut tx = app.pool.begin().await.unwrap();
    sqlx::query("UPDATE api_keys SET revoked_at = now() WHERE user_id = $1::uuid").bind(carol["id"].as_str().unwrap()).execute(&mut *tx).await.unwrap();
    sqlx::query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid").bind(&cut).execute(&mut *tx).await.unwrap();
    tx.commit().await.unwrap();
    wait_until("the listeners reconnect", Duration::from_secs(10), || async {
        let now: Vec<i32> = sqlx::query_scalar(listeners).fetch_all(&app.pool).await.unwrap();
        now.iter().filter(|pid| !cut.contains(pid)).count() >= cut.len()
    })
    .await;
    wait_until("a key revoked while the listener was down is refused", Duration::from_secs(5), || async {
        status_with(&app, &carol_key).await == StatusCode::UNAUTHORIZED
    })
    .await;
    assert_eq!(status_with(&app, &bob_key).await, StatusCode::OK, "other keys still work");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotating_replaces_the_calling_key_in_one_request() {
    let (app, old) = TestApp::start_with_user("alice").await;
    let rotated = app.call(&old, Method::POST, "/api/keys", Some(json!({ "rotate": true }))).await;
    assert_eq!(rotated.status, StatusCode::CREATED, "{:?}", rotated.body);
    let new = rotated.body["api_key"].as_str().unwrap();
    assert!(rotated.body["revoked"]["revoked_at"].is_string(), "{:?}", rotated.body);
    assert_eq!(status_with(&app, &old).await, StatusCode::UNAUTHORIZED);
    assert_eq!(status_with(&app, new).await, StatusCode::OK);

    let malformed = app.call(new, Method::POST, "/api/keys", Some(json!({ "rotate": "yes", "extra": 1 }))).await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST, "{:?}", malformed.body);
    assert_eq!(keys(&app, new).await.len(), 2, "a refused request creates nothing");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn users_cannot_touch_each_others_keys_but_admins_can_revoke_any() {
    let app = TestApp::start().await;
    let (alice, alice_key) = app.create_user("alice").await;
    let (_, bob_key) = app.create_user("bob").await;
    let alice_key_id = keys(&app, &alice_key).await[0]["id"].as_str().unwrap().to_owned();

    let stolen = app.call(&bob_key, Method::DELETE, &format!("/api/keys/{alice_key_id}"), None).await;
    assert_eq!(stolen.status, StatusCode::NOT_FOUND, "another user's key is 404 like an unknown one");
    assert_eq!(app.call(&bob_key, Method::DELETE, "/api/keys/not-an-id", None).await.status, StatusCode::NOT_FOUND);
    let path = format!("/api/admin/keys/{alice_key_id}");
    assert_eq!(app.call(&bob_key, Method::DELETE, &path, None).await.status, StatusCode::FORBIDDEN);
    assert_eq!(status_with(&app, &alice_key).await, StatusCode::OK);

    let listed = app.call(&app.admin_key, Method::GET, &format!("/api/admin/users/{}/keys", alice["id"].as_str().unwrap()), None).await;
    assert_eq!(listed.body["keys"][0]["id"], alice_key_id.as_str(), "{:?}", listed.body);
    assert_eq!(app.call(&app.admin_key, Method::DELETE, &path, None).await.status, StatusCode::NO_CONTENT);
    assert_eq!(status_with(&app, &alice_key).await, StatusCode::UNAUTHORIZED);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_part_of_the_operators_admin_key_is_stored_in_clear() {
    let app = TestApp::start().await;
    let listed = keys(&app, &app.admin_key).await;
    assert_eq!(listed[0]["prefix"], "QUICKACT_ADMIN_KEY", "{listed:?}");
    let stored: Vec<String> = sqlx::query_scalar("SELECT key_prefix FROM api_keys").fetch_all(&app.pool).await.unwrap();
    assert!(stored.iter().all(|prefix| !app.admin_key.starts_with(prefix.as_str())), "{stored:?}");
    app.shutdown().await;
}
