//! `/mcp`: a real MCP client (rmcp over streamable HTTP) lists the tools, reads times, acts with a
//! sentence and waits for its verdict, and lists the items it made, as the key's user only; a
//! missing, unknown or revoked key is refused before the MCP transport sees the request.

use std::sync::Arc;

use quickact_testkit::{Reply, TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use rmcp::{
    ClientServiceExt, RoleClient, ServiceExt,
    model::{CallToolRequestParams, CallToolResult, ClientConfig, ProtocolVersion},
    service::{ClientLifecycleMode, RunningService},
    transport::{StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig},
};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

type Client = RunningService<RoleClient, ClientConfig>;

/// When the tests' sentences are written (Asia/Shanghai).
const NOW: &str = "2026-02-07T09:00:00+08:00";
const MEETING: &str = "明天下午3点到4点开会";

fn transport(app: &TestApp, key: Option<&str>) -> StreamableHttpClientTransport<reqwest::Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", app.base_url));
    if let Some(key) = key {
        config = config.auth_header(key);
    }
    StreamableHttpClientTransport::from_config(config)
}

/// An MCP client of `/mcp` with `key`, started as today's clients start (`initialize`).
async fn connect(app: &TestApp, key: &str) -> Client {
    ClientConfig::default().serve(transport(app, Some(key))).await.expect("the MCP client connects")
}

async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let arguments = arguments.as_object().expect("arguments are an object").clone();
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|error| panic!("{tool} answers: {error}"))
}

/// The structured content of a successful call.
fn ok(result: &CallToolResult) -> &Value {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    result.structured_content.as_ref().expect("structured content")
}

/// The error envelope of a failed call, checking its message is also the first text.
fn refused(result: &CallToolResult) -> &Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let envelope = &result.structured_content.as_ref().expect("the error envelope")["error"];
    let message = envelope["message"].as_str().expect("a message");
    assert!(text(result).contains(message), "the message is shown as text: {result:?}");
    envelope
}

/// The first text block: the short rendering.
fn text(result: &CallToolResult) -> &str {
    result.content.first().and_then(|block| block.as_text()).map(|text| text.text.as_str()).expect("a text block")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_mcp_client_lists_the_tools_and_bad_input_is_a_tool_error() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let client = connect(&app, &key).await;
    let server = client.peer_info().expect("the server's info").server_info.clone().expect("its name");
    assert_eq!(server.name, "quickact");

    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    names.sort();
    assert_eq!(names, ["get_quick_action", "list_items", "parse_time", "quick_action"]);
    let schema = |name: &str| Value::Object((*tools.iter().find(|tool| tool.name == name).unwrap().input_schema).clone());
    let quick_action = schema("quick_action");
    assert_eq!(quick_action["required"], json!(["text"]), "{quick_action:#}");
    for argument in ["text", "timeout", "tz", "now", "idempotency_key"] {
        assert!(quick_action["properties"][argument]["description"].is_string(), "{argument} is described: {quick_action:#}");
    }
    assert_eq!(quick_action["additionalProperties"], false);
    assert_eq!(schema("get_quick_action")["required"], json!(["task_id"]));
    assert_eq!(schema("parse_time")["required"], json!(["text"]));
    let list_items = schema("list_items");
    assert!(list_items.get("required").is_none_or(|required| required == &json!([])), "{list_items:#}");
    for argument in ["kind", "status", "date_from", "date_to", "q", "limit"] {
        assert!(list_items["properties"].get(argument).is_some(), "{argument}: {list_items:#}");
    }
    let read_only = |name: &str| tools.iter().find(|tool| tool.name == name).unwrap().annotations.as_ref().and_then(|a| a.read_only_hint);
    assert_eq!((read_only("list_items"), read_only("parse_time")), (Some(true), Some(true)));

    // Every bad input is the tool's error, with the message the REST route gives where it has one.
    let bad = [
        ("quick_action", json!({})),
        ("quick_action", json!({ "text": "   " })),
        ("quick_action", json!({ "text": MEETING, "timeout": 61 })),
        ("quick_action", json!({ "text": MEETING, "tz": "Moon/Base" })),
        ("quick_action", json!({ "text": MEETING, "now": "tomorrow" })),
        ("quick_action", json!({ "text": MEETING, "colour": "blue" })),
        ("quick_action", json!({ "text": "x".repeat(2001) })),
        ("get_quick_action", json!({ "task_id": "not-a-task" })),
        ("get_quick_action", json!({ "task_id": uuid_like(), "wait": 0 })),
        ("list_items", json!({ "date_from": "Feb 8" })),
        ("list_items", json!({ "kind": "meeting" })),
        ("parse_time", json!({ "text": "明天", "tz": "Moon/Base" })),
    ];
    let mut codes = Vec::new();
    for (tool, arguments) in bad {
        let result = call(&client, tool, arguments).await;
        codes.push(refused(&result)["code"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        codes,
        [
            "invalid_input", "invalid_input", "invalid_input", "invalid_tz", "invalid_input", "invalid_input",
            "payload_too_large", "not_found", "not_found", "invalid_query", "invalid_query", "invalid_tz",
        ]
    );
    let missing = call(&client, "quick_action", json!({})).await;
    assert!(refused(&missing)["message"].as_str().unwrap().contains("text"), "names the missing argument: {missing:?}");
    // None of them submitted anything.
    assert_eq!(app.call(&key, Method::GET, "/api/quick-action", None).await.body["total"], 0);
    client.cancel().await.expect("the client stops");
    app.shutdown().await;
}

fn uuid_like() -> String {
    "0190f0f0-0000-7000-8000-000000000000".to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parse_time_answers_as_the_rest_route_does_and_a_discover_client_calls_it_too() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let arguments = json!({ "text": MEETING, "now": NOW, "tz": "Asia/Shanghai" });
    let rest = app.call(&key, Method::POST, "/api/parse-time", Some(arguments.clone())).await;
    assert_eq!(rest.status, StatusCode::OK);

    let client = connect(&app, &key).await;
    let result = call(&client, "parse_time", arguments.clone()).await;
    assert_eq!(ok(&result), &rest.body);
    let found = &rest.body["matches"][0];
    assert_eq!((found["date"].as_str(), found["start_time"].as_str(), found["end_time"].as_str()), (Some("2026-02-08"), Some("15:00"), Some("16:00")));
    assert!(text(&result).contains("\"明天下午3点到4点\": 2026-02-08 15:00-16:00"), "{}", text(&result));
    // The JSON is there as text too, for clients that read only text.
    let json_text = result.content.get(1).and_then(|block| block.as_text()).expect("a JSON text block");
    assert_eq!(serde_json::from_str::<Value>(&json_text.text).unwrap(), rest.body);
    client.cancel().await.expect("the client stops");

    // A client of the 2026-07-28 revision, which has no handshake: every request stands alone.
    let discover = ClientConfig::default()
        .serve_with_lifecycle(transport(&app, Some(&key)), ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] })
        .await
        .expect("a discover client starts");
    let result = call(&discover, "parse_time", arguments.clone()).await;
    assert_eq!(ok(&result), &rest.body);
    discover.cancel().await.expect("the client stops");

    // No session: another API process, which never saw this client's `initialize`, answers its
    // next call (as one behind a load balancer would).
    let stop = CancellationToken::new();
    let other_api = app.start_another_api(stop.clone()).await;
    let answer = app
        .client
        .post(format!("{other_api}/mcp"))
        .bearer_auth(&key)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "parse_time", "arguments": arguments } }))
        .send()
        .await
        .expect("the other API process answers");
    assert_eq!(answer.status(), StatusCode::OK);
    let body: Value = answer.json().await.expect("a JSON-RPC answer");
    assert_eq!(body["result"]["structuredContent"], rest.body, "{body:#}");
    stop.cancel();
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn quick_action_returns_the_verdict_and_list_items_sees_the_item_as_that_user_only() {
    let (app, alice) = TestApp::start_with_user("alice").await;
    let (_, bob) = app.create_user("bob").await;
    app.fake.script(
        MEETING,
        vec![
            Reply::tool("create_item", json!({ "kind": "event", "title": "开会", "when": "明天下午3点到4点" })),
            Reply::finish("action_completed", "已安排明天下午3点到4点开会。"),
        ],
    );
    let client = connect(&app, &alice).await;
    let result = call(&client, "quick_action", json!({ "text": MEETING, "now": NOW, "tz": "Asia/Shanghai" })).await;
    let task = ok(&result).clone();
    assert_eq!((task["status"].as_str(), task["result"]["type"].as_str()), (Some("success"), Some("action_completed")), "{task:#}");
    assert!(text(&result).starts_with("success (action_completed): 已安排明天下午3点到4点开会。"), "{}", text(&result));
    // The task as `GET /api/quick-action/{id}` shows it, journal included.
    let id = task["task_id"].as_str().unwrap();
    let rest = app.call(&alice, Method::GET, &format!("/api/quick-action/{id}"), None).await;
    assert_eq!(rest.body, task);
    assert!(task["steps"].as_array().is_some_and(|steps| !steps.is_empty()), "{task:#}");

    let listed = call(&client, "list_items", json!({ "date_from": "2026-02-08", "date_to": "2026-02-08", "kind": "event" })).await;
    let items = ok(&listed)["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!((items[0]["title"].as_str(), items[0]["start_time"].as_str(), items[0]["end_time"].as_str()), (Some("开会"), Some("15:00"), Some("16:00")));
    assert!(text(&listed).contains("2026-02-08 15:00-16:00 开会 (event, open)"), "{}", text(&listed));
    assert_eq!(ok(&listed), &json!({ "items": app.items(&alice).await }));
    let none = call(&client, "list_items", json!({ "date_from": "2026-02-09" })).await;
    assert_eq!((ok(&none)["items"].clone(), text(&none)), (json!([]), "No items."));

    // Bob's key acts as Bob: Alice's item and task are not his to see.
    let bobs = connect(&app, &bob).await;
    let listed = call(&bobs, "list_items", json!({})).await;
    assert_eq!(ok(&listed)["items"], json!([]));
    let read = call(&bobs, "get_quick_action", json!({ "task_id": id, "wait": 0 })).await;
    assert_eq!(refused(&read)["code"], "not_found");
    client.cancel().await.expect("the client stops");
    bobs.cancel().await.expect("the client stops");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_wait_that_ends_first_names_the_task_and_get_quick_action_waits_for_its_verdict() {
    let (app, key) = TestApp::start_with_user("alice").await;
    let sentence = "what do I have on Friday?";
    // The model answers only once the gate opens: the tool's one-second wait ends first.
    let gate = Arc::new(Notify::new());
    app.fake.script(sentence, vec![Reply::Gated(gate.clone(), Box::new(Reply::look_up_and_finish("Nothing on Friday.")))]);
    let client = connect(&app, &key).await;
    let arguments = json!({ "text": sentence, "timeout": 1, "idempotency_key": "friday-1" });
    let first = call(&client, "quick_action", arguments.clone()).await;
    let task = ok(&first).clone();
    let id = task["task_id"].as_str().unwrap().to_owned();
    assert!(matches!(task["status"].as_str(), Some("pending" | "processing")), "{task:#}");
    assert_eq!(text(&first), format!("Task {id} is still {}: call get_quick_action with this task_id to wait for its verdict.", task["status"].as_str().unwrap()));
    // A short wait does not cut the task short: it keeps the default time limit.
    assert_eq!(task["timeout"], 30);
    // A retry with the same key is the same task, not a second one.
    let again = call(&client, "quick_action", arguments).await;
    assert_eq!(ok(&again)["task_id"], id.as_str());

    gate.notify_one();
    let verdict = call(&client, "get_quick_action", json!({ "task_id": id, "wait": 30 })).await;
    let task = ok(&verdict);
    assert_eq!((task["status"].as_str(), task["result"]["message"].as_str()), (Some("success"), Some("Nothing on Friday.")), "{task:#}");
    assert_eq!(app.call(&key, Method::GET, "/api/quick-action", None).await.body["total"], 1);
    client.cancel().await.expect("the client stops");
    app.shutdown().await;
}

/// A raw MCP `initialize` POST, as a client sends it first.
async fn initialize_with(app: &TestApp, authorization: Option<&str>) -> (StatusCode, Option<String>, Value) {
    let mut request = app
        .client
        .post(format!("{}/mcp", app.base_url))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "1" } },
        }));
    if let Some(authorization) = authorization {
        request = request.header("authorization", authorization);
    }
    let response = request.send().await.expect("the API answers");
    let challenge = response.headers().get("www-authenticate").map(|value| value.to_str().unwrap().to_owned());
    (response.status(), challenge, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_mcp_endpoint_refuses_a_missing_unknown_or_revoked_key() {
    let (app, first) = TestApp::start_with_user("alice").await;
    let unauthorized = json!({ "error": { "code": "unauthorized", "message": "a valid API key is required (Authorization: Bearer <key>)" } });
    for authorization in [None, Some("Bearer qa_not_a_key"), Some("Basic YWxpY2U6eA=="), Some(format!("Bearer {first}").as_str())] {
        let (status, challenge, body) = initialize_with(&app, authorization).await;
        if authorization.is_some_and(|a| a.ends_with(first.as_str())) {
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(body["result"]["serverInfo"]["name"], "quickact");
        } else {
            assert_eq!((status, challenge.as_deref(), &body), (StatusCode::UNAUTHORIZED, Some("Bearer"), &unauthorized), "{authorization:?}");
        }
    }
    assert!(ClientConfig::default().serve(transport(&app, None)).await.is_err(), "a client without a key cannot start");
    // No sessions, so no session stream to open or end.
    for method in [Method::GET, Method::DELETE] {
        let answer = app.request(&first, method.clone(), "/mcp").header("accept", "text/event-stream").send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
    }

    // A second key, used by a client, then revoked: the client's next call is refused, and so is
    // a new client with it.
    let created = app.call(&first, Method::POST, "/api/keys", None).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let second = created.body["api_key"].as_str().unwrap().to_owned();
    let client = connect(&app, &second).await;
    ok(&call(&client, "list_items", json!({})).await);
    let keys = app.call(&first, Method::GET, "/api/keys", None).await.body;
    let second_id = keys["keys"].as_array().unwrap().iter().find(|k| k["current"] == false).unwrap()["id"].as_str().unwrap().to_owned();
    let revoked = app.call(&first, Method::DELETE, &format!("/api/keys/{second_id}"), None).await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT, "{:?}", revoked.body);

    let arguments = json!({}).as_object().unwrap().clone();
    let refused = client.call_tool(CallToolRequestParams::new("list_items").with_arguments(arguments)).await;
    assert!(refused.is_err(), "a call with a revoked key is refused: {refused:?}");
    let (status, _, body) = initialize_with(&app, Some(&format!("Bearer {second}"))).await;
    assert_eq!((status, &body), (StatusCode::UNAUTHORIZED, &unauthorized));
    assert!(ClientConfig::default().serve(transport(&app, Some(&second))).await.is_err(), "a client with a revoked key cannot start");
    let _ = client.cancel().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_configured_browser_origin_may_send_the_mcp_headers() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0).env("QUICKACT_CORS_ORIGINS", "https://assistant.example")).await;
    let preflight = app
        .client
        .request(Method::OPTIONS, format!("{}/mcp", app.base_url))
        .header("origin", "https://assistant.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name")
        .send()
        .await
        .expect("the API answers");
    assert_eq!(preflight.headers().get("access-control-allow-origin").unwrap(), "https://assistant.example");
    let allowed = preflight.headers().get("access-control-allow-headers").unwrap().to_str().unwrap().to_owned();
    for name in ["authorization", "content-type", "mcp-protocol-version", "mcp-method", "mcp-name"] {
        assert!(allowed.contains(name), "{name} in {allowed}");
    }
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_graceful_shutdown_answers_a_waiting_quick_action_at_once_with_the_task() {
    let (app, key) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let sentence = "nobody will run this";
    // Submitted first, so the tool call's first step (finding its idempotency key) is a task read
    // the test can catch: the call is then inside the server, on its way to wait.
    let submitted = app.request(&key, Method::POST, "/api/quick-action").header("idempotency-key", "once").json(&json!({ "text": sentence })).send().await.unwrap();
    assert_eq!(submitted.status(), StatusCode::CREATED);
    let client = connect(&app, &key).await;
    let held = app.hold_task_reads().await;
    let waiting = tokio::spawn(async move {
        let result = call(&client, "quick_action", json!({ "text": sentence, "timeout": 60, "idempotency_key": "once" })).await;
        let _ = client.cancel().await;
        result
    });
    held.release_after_a_read(std::time::Duration::from_secs(20)).await;
    let started = std::time::Instant::now();
    app.shutdown().await;
    let result = waiting.await.unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "shutdown waited {:?}", started.elapsed());
    assert_eq!(ok(&result)["status"], "pending", "the task as it is, not an error: {result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_call_that_does_not_wait_is_shed_past_the_in_flight_bound_as_api_requests_are() {
    let options = TestAppOptions::default().env("QUICKACT_MAX_CONCURRENT_REQUESTS", "1");
    let (app, alice) = TestApp::start_with_options_and_user(options, "alice").await;
    let created = app.call(&alice, Method::POST, "/api/items", Some(json!({ "kind": "todo", "title": "report" }))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let client = connect(&app, &alice).await;

    // A REST request holds the one slot, blocked on the items' row lock.
    let gate = app.hold_writes("items").await;
    let path = format!("/api/items/{}", created.body["id"].as_str().unwrap());
    let held = app.call(&alice, Method::PATCH, &path, Some(json!({ "title": "quarterly report" })));
    let shed = async {
        gate.wait_for_blocked(1).await;
        let listed = call(&client, "list_items", json!({})).await;
        let parsed = call(&client, "parse_time", json!({ "text": "明天下午3点" })).await;
        gate.release().await;
        (listed, parsed)
    };
    let (held, (listed, parsed)) = tokio::join!(held, shed);
    assert_eq!(refused(&listed)["code"], "overloaded", "{listed:?}");
    assert_eq!(refused(&parsed)["code"], "overloaded", "{parsed:?}");
    assert_eq!(held.status, StatusCode::OK, "the request in flight finishes: {:?}", held.body);
    assert_eq!(ok(&call(&client, "list_items", json!({})).await)["items"][0]["title"], "quarterly report", "served again once the slot is free");
    app.shutdown().await;
}
