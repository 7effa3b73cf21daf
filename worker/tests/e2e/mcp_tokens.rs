//! Users' MCP tokens at rest (docs/mcp-tools.md, "Tokens at rest"): stored encrypted with the
//! deployment's key and bound to their row, yet sent to the server as set; refused without a key;
//! a plain token of an older build still used, and encrypted when an API starts, as is one of a
//! previous key (a rotation).

use quickact_shared::{secrets::SecretKeys, store::mcp_tokens};
use quickact_testkit::{FakeMcpServer, Reply, TestApp, TestAppOptions, tool_step};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// A key as hex (`openssl rand -hex 32`), with its id.
const KEY_1: &str = "k1:1111111111111111111111111111111111111111111111111111111111111111";
/// Another as base64 (`openssl rand -base64 32`).
const KEY_2: &str = "k2:IiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiI=";

fn options(rooms: &FakeMcpServer, keys: &[(&str, &str)]) -> TestAppOptions {
    let servers = json!([rooms.config("rooms", json!({ "header": "X-Rooms-Token" }))]);
    let options = TestAppOptions::default().env("QUICKACT_MCP_SERVERS", &servers.to_string());
    keys.iter().fold(options, |options, (name, value)| options.env(name, value))
}

fn keys(current: &str, previous: Option<&str>) -> SecretKeys {
    let get = |name: &str| match name {
        "QUICKACT_SECRETS_KEY" => Some(current.to_owned()),
        "QUICKACT_SECRETS_PREVIOUS_KEYS" => previous.map(str::to_owned),
        _ => None,
    };
    SecretKeys::from_lookup(&get).unwrap().unwrap()
}

async fn user(app: &TestApp, name: &str) -> (Uuid, String) {
    let (user, key) = app.create_user(name).await;
    (user["id"].as_str().unwrap().parse().unwrap(), key)
}

/// A task whose model books a room on the rooms server (then ends as `verdict`).
async fn book(app: &TestApp, key: &str, sentence: &str, verdict: &str) -> Value {
    let call = Reply::tool("rooms__book_room", json!({ "room": "A", "at": "tomorrow 3pm" }));
    app.fake.script(sentence, vec![call, Reply::finish(verdict, "done")]);
    app.wait_final(key, &app.submit_id(key, sentence).await, 30).await
}

/// The token header of each call the server received, in order.
fn tokens_received(rooms: &FakeMcpServer) -> Vec<String> {
    rooms.calls().iter().map(|call| call.headers.get("x-rooms-token").cloned().unwrap_or_default()).collect()
}

/// Each stored token: its user, plain column, encrypted column, and the whole row as text.
async fn stored(app: &TestApp) -> Vec<(Uuid, Option<String>, Option<Vec<u8>>, String)> {
    sqlx::query_as("SELECT user_id, token, sealed_token, t::text FROM user_mcp_tokens t ORDER BY user_id").fetch_all(&app.pool).await.unwrap()
}

/// Checks that no stored row shows `token`, in any form.
async fn assert_nowhere_in_the_database(app: &TestApp, token: &str) {
    let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
    for (user_id, plain, sealed, row) in stored(app).await {
        assert_eq!(plain, None, "{user_id}: the plain column is cleared");
        let sealed = sealed.expect("stored encrypted");
        assert!(!sealed.windows(token.len()).any(|window| window == token.as_bytes()), "{user_id}: {sealed:?}");
        assert!(!row.contains(token) && !row.contains(&hex), "{user_id}: {row}");
    }
}

fn tool_names(request: &Value) -> Vec<&str> {
    request["tools"].as_array().unwrap().iter().map(|tool| tool["function"]["name"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_token_is_stored_encrypted_reaches_the_server_as_set_and_opens_in_its_own_row_only() {
    let rooms = FakeMcpServer::start().await;
    let app = TestApp::start_with(options(&rooms, &[("QUICKACT_SECRETS_KEY", KEY_1)])).await;
    let (alice_id, alice) = user(&app, "alice").await;
    let (bob_id, bob) = user(&app, "bob").await;
    let token = "Bearer alice-Very-Secret-7f3a9c";
    let set = app.call(&alice, Method::PUT, "/api/mcp-servers/rooms/token", Some(json!({ "token": token }))).await;
    assert_eq!(set.status, StatusCode::NO_CONTENT, "{:?}", set.body);
    assert_nowhere_in_the_database(&app, token).await;
    let rows = stored(&app).await;
    assert_eq!(quickact_shared::secrets::key_id(rows[0].2.as_deref().unwrap()), Ok("k1"));

    let task = book(&app, &alice, "alice books room A", "action_completed").await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(tokens_received(&rooms), [token]);

    // Alice's value copied into a row of Bob's does not decrypt there: Bob's tasks are not offered
    // the server, a call to it fails saying why, and nothing reaches the server.
    sqlx::query("INSERT INTO user_mcp_tokens (user_id, server, sealed_token) SELECT $1, server, sealed_token FROM user_mcp_tokens WHERE user_id = $2")
        .bind(bob_id)
        .bind(alice_id)
        .execute(&app.pool)
        .await
        .unwrap();
    let task = book(&app, &bob, "bob books room A with alice's token", "error").await;
    assert!(!tool_names(&app.fake.requests_for("bob books room A with alice's token")[0]).iter().any(|n| n.starts_with("rooms__")));
    let error = tool_step(&task, "rooms__book_room")["error"].as_str().unwrap().to_owned();
    assert!(error.starts_with("rooms__book_room failed: the user's token for the server rooms cannot be read"), "{error}");
    assert!(error.contains("moved from another row") && !error.contains("Secret"), "{error}");
    assert!(!task.to_string().contains("Very-Secret"), "{task:#}");
    assert_eq!(tokens_received(&rooms).len(), 1);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_a_key_setting_a_token_is_refused_and_a_plain_one_from_before_still_works() {
    let rooms = FakeMcpServer::start().await;
    let app = TestApp::start_with(options(&rooms, &[])).await;
    let (alice_id, alice) = user(&app, "alice").await;
    let (bob_id, bob) = user(&app, "bob").await;

    let refused = app.call(&alice, Method::PUT, "/api/mcp-servers/rooms/token", Some(json!({ "token": "alice-token" }))).await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert_eq!(refused.body["error"]["code"], "secrets_key_missing");
    assert!(refused.body["error"]["message"].as_str().unwrap().contains("QUICKACT_SECRETS_KEY"), "{:?}", refused.body);
    let listed = app.call(&alice, Method::GET, "/api/mcp-servers", None).await;
    assert_eq!(listed.body["servers"][0]["token_set"], false, "{:?}", listed.body);
    assert!(stored(&app).await.is_empty());

    // A token the previous build stored, in plain text: still sent.
    sqlx::query("INSERT INTO user_mcp_tokens (user_id, server, token) VALUES ($1, 'rooms', 'alice-plain-token')")
        .bind(alice_id)
        .execute(&app.pool)
        .await
        .unwrap();
    let listed = app.call(&alice, Method::GET, "/api/mcp-servers", None).await;
    assert_eq!(listed.body["servers"][0]["token_set"], true, "{:?}", listed.body);
    let task = book(&app, &alice, "alice books with her old token", "action_completed").await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(tokens_received(&rooms), ["alice-plain-token"]);

    // An encrypted one, with no key here to decrypt it: the call says what to set.
    mcp_tokens::set_token(&app.pool, &keys(KEY_1, None), bob_id, "rooms", "bob-token").await.unwrap();
    let task = book(&app, &bob, "bob books without a key", "error").await;
    let error = tool_step(&task, "rooms__book_room")["error"].as_str().unwrap().to_owned();
    assert!(error.contains("cannot be read: it is encrypted and no key is configured here: set QUICKACT_SECRETS_KEY"), "{error}");
    assert_eq!(tokens_received(&rooms).len(), 1);

    let removed = app.call(&alice, Method::DELETE, "/api/mcp-servers/rooms/token", None).await;
    assert_eq!(removed.status, StatusCode::NO_CONTENT);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_api_start_encrypts_plain_tokens_and_those_of_a_previous_key_with_the_current_one() {
    let rooms = FakeMcpServer::start().await;
    // The key was rotated: k2 is current, k1 previous.
    let rotated = [("QUICKACT_SECRETS_KEY", KEY_2), ("QUICKACT_SECRETS_PREVIOUS_KEYS", KEY_1)];
    let mut app = TestApp::start_with(options(&rooms, &rotated).workers(0)).await;
    let (alice_id, alice) = user(&app, "alice").await;
    let (bob_id, bob) = user(&app, "bob").await;
    // Alice's token from a build before encryption at rest; Bob's encrypted with the old key.
    sqlx::query("INSERT INTO user_mcp_tokens (user_id, server, token) VALUES ($1, 'rooms', 'alice-plain-token')")
        .bind(alice_id)
        .execute(&app.pool)
        .await
        .unwrap();
    mcp_tokens::set_token(&app.pool, &keys(KEY_1, None), bob_id, "rooms", "bob-old-key-token").await.unwrap();

    // Until an API starts, a worker with both keys sends both as they are.
    app.start_worker().await;
    book(&app, &alice, "alice books before the restart", "action_completed").await;
    book(&app, &bob, "bob books before the restart", "action_completed").await;
    assert_eq!(tokens_received(&rooms), ["alice-plain-token", "bob-old-key-token"]);
    app.workers.pop().unwrap().stop().await;

    let stop = CancellationToken::new();
    app.start_another_api(stop.clone()).await;
    stop.cancel();
    assert_nowhere_in_the_database(&app, "alice-plain-token").await;
    assert_nowhere_in_the_database(&app, "bob-old-key-token").await;
    for (user_id, _, sealed, _) in stored(&app).await {
        assert_eq!(quickact_shared::secrets::key_id(sealed.as_deref().unwrap()), Ok("k2"), "{user_id}");
    }

    // So the old key can go: a worker with k2 alone sends both tokens.
    let mut config = app.config();
    config.secrets = Some(keys(KEY_2, None));
    let stop = CancellationToken::new();
    let runner = quickact_worker::build_runner(&config, app.pool.clone(), stop.clone()).unwrap();
    app.start_worker_with(runner, stop).await;
    book(&app, &alice, "alice books after the restart", "action_completed").await;
    book(&app, &bob, "bob books after the restart", "action_completed").await;
    let received = tokens_received(&rooms);
    assert_eq!(received[2..], ["alice-plain-token", "bob-old-key-token"]);
    app.shutdown().await;
}
