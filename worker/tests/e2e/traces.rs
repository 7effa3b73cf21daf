//! One trace per task (docs/tracing.md): the API and worker processes export spans over OTLP to a
//! real receiver on loopback, continuing the caller's `traceparent` from the POST through the queue
//! to the run, its model turns and its tool calls. The OpenTelemetry layer is global to a process,
//! so the API and the worker run as processes of their own (the in-process API of the TestApp
//! serves only the set-up).

use std::{path::Path, time::Duration};

use quickact_testkit::{
    FakeMcpServer, OtlpReceiver, ReceivedSpan, Reply, TestApp, TestAppOptions, WebhookReceiver, chaos::api_binary_beside,
    processes::{spawn_api, spawn_worker},
};
use serde_json::{Value, json};
use tokio::process::Child;

const WORKER_BINARY: &str = env!("CARGO_BIN_EXE_quickact-worker");

/// The caller's trace, and its span that makes the request.
const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// The API binary, as fresh as this test's worker: a narrowed test run builds only the worker's
/// binaries, and an API built before this change would not trace.
fn api_binary() -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--quiet", "-p", "quickact-api", "--bin", "quickact-api"])
        .status()
        .expect("run cargo build");
    assert!(status.success(), "could not build quickact-api");
    api_binary_beside(Path::new(WORKER_BINARY)).to_string_lossy().into_owned()
}

/// SIGTERM, then the exit: a process flushes its last spans on the way out.
async fn stop(mut process: Child) {
    let pid = process.id().expect("a running process").to_string();
    let _ = std::process::Command::new("kill").args(["-TERM", &pid]).status();
    let status = tokio::time::timeout(Duration::from_secs(30), process.wait()).await.expect("the process stops").expect("wait");
    assert!(status.success(), "{status:?}");
}

async fn post(app: &TestApp, api: &str, key: &str, body: Value, traceparent: Option<&str>) -> Value {
    let mut request = app.client.post(format!("{api}/api/quick-action")).bearer_auth(key).json(&body);
    if let Some(traceparent) = traceparent {
        request = request.header("traceparent", traceparent).header("tracestate", "caller=1");
    }
    let answer = request.send().await.expect("the API answers");
    assert_eq!(answer.status(), 201);
    answer.json().await.expect("JSON")
}

async fn final_task(app: &TestApp, api: &str, key: &str, id: &str) -> Value {
    let answer = app.client.get(format!("{api}/api/quick-action/{id}?wait=true&timeout=30")).bearer_auth(key).send().await.expect("the API answers");
    let task: Value = answer.json().await.expect("JSON");
    assert_eq!(task["status"], "success", "{task:#}");
    task
}

fn named<'a>(spans: &'a [ReceivedSpan], name: &str) -> Vec<&'a ReceivedSpan> {
    spans.iter().filter(|span| span.name == name).collect()
}

fn one<'a>(spans: &'a [ReceivedSpan], name: &str) -> &'a ReceivedSpan {
    match named(spans, name).as_slice() {
        [span] => span,
        other => panic!("{} spans named {name:?} in {spans:#?}", other.len()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tasks_spans_continue_the_callers_trace_from_the_post_through_the_queue_to_its_turns_and_calls() {
    let receiver = OtlpReceiver::start().await;
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let (_, key) = app.create_user("alice").await;
    let sentence = "traced run";
    app.fake.script(sentence, vec![Reply::look_up_and_finish("done").with_usage(120, 30, 40)]);
    // No export before shutdown (the batch delay is far off): the spans below arrive by the
    // processes' flush on SIGTERM.
    let endpoint = receiver.endpoint();
    let traced = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_BSP_SCHEDULE_DELAY", "600000")];
    let private = ("QUICKACT_WEBHOOK_ALLOW_PRIVATE", "true");
    let (api, url) = spawn_api(&app, &api_binary(), &[traced[0], traced[1], private]).await;
    // The fast path on: a sentence the local rules read runs locally (the others go to the model).
    // An MCP server whose tool a model run calls: the call is a span like a planner tool's.
    let rooms = FakeMcpServer::start().await;
    let servers = json!([rooms.config("rooms", json!({}))]).to_string();
    let mcp = ("QUICKACT_MCP_SERVERS", servers.as_str());
    let worker = spawn_worker(&app, WORKER_BINARY, &[traced[0], traced[1], private, mcp, ("QUICKACT_FAST_PATH", "true")]);
    // Each task's ending is delivered to a webhook, an attempt being a span of the task's trace.
    let hooks = WebhookReceiver::start().await;
    let endpoint = app.client.post(format!("{url}/api/webhooks")).bearer_auth(&key).json(&json!({ "url": hooks.url })).send().await.unwrap();
    let endpoint: Value = endpoint.json().await.unwrap();
    hooks.set_secret(endpoint["secret"].as_str().unwrap_or_else(|| panic!("the endpoint: {endpoint}")));

    let caller = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let accepted = post(&app, &url, &key, json!({ "text": sentence }), Some(&caller)).await;
    assert_eq!(accepted["trace_id"], CALLER_TRACE, "{accepted:#}");
    let id = accepted["task_id"].as_str().unwrap().to_owned();
    // Without a caller's trace, the POST starts one.
    app.fake.script("untraced caller", vec![Reply::finish("error", "cannot")]);
    let own = post(&app, &url, &key, json!({ "text": "untraced caller" }), None).await;
    let own_trace = own["trace_id"].as_str().expect("a trace the API began").to_owned();
    assert!(own_trace.len() == 32 && own_trace != CALLER_TRACE, "{own:#}");
    let local = post(&app, &url, &key, json!({ "text": "明天下午3点到4点开会" }), None).await;
    let local_trace = local["trace_id"].as_str().expect("a trace the API began").to_owned();
    app.fake.script("rooms T please", vec![Reply::tool("rooms__book_room", json!({ "room": "T", "at": "tomorrow 3pm" })), Reply::finish("action_completed", "booked")]);
    let booked = post(&app, &url, &key, json!({ "text": "rooms T please" }), None).await;
    let booked_trace = booked["trace_id"].as_str().expect("a trace the API began").to_owned();
    let booked = final_task(&app, &url, &key, booked["task_id"].as_str().unwrap()).await;
    assert_eq!((booked["status"].as_str(), rooms.effects()), (Some("success"), 1), "{booked:#}");
    let task = final_task(&app, &url, &key, &id).await;
    assert_eq!(task["trace_id"], CALLER_TRACE, "the task's JSON names the caller's trace: {task:#}");
    let local = final_task(&app, &url, &key, local["task_id"].as_str().unwrap()).await;
    assert_eq!(local["model_used"], "local", "{local:#}");
    let own_id = own["task_id"].as_str().unwrap();
    let answer = app.client.get(format!("{url}/api/quick-action/{own_id}?wait=true&timeout=30")).bearer_auth(&key).send().await.unwrap();
    let own: Value = answer.json().await.unwrap();
    assert_eq!(own["status"], "failed", "{own:#}");
    let delivered = hooks.wait_for_accepted(4, std::time::Duration::from_secs(60)).await;
    assert!(delivered.iter().all(|d| d.verified), "{delivered:#?}");

    stop(worker).await;
    stop(api).await;
    let spans = receiver.trace(CALLER_TRACE);

    let submit = one(&spans, "POST /api/quick-action");
    assert_eq!((submit.service.as_str(), submit.parent_span_id.as_str(), submit.kind), ("quickact-api", CALLER_SPAN, 2), "{submit:#?}");
    assert_eq!(submit.attribute("task_id").as_deref(), Some(id.as_str()));
    assert_eq!(submit.attribute("http.response.status_code").as_deref(), Some("201"));

    let run = one(&spans, "task.run");
    assert_eq!((run.service.as_str(), run.parent_span_id.as_str()), ("quickact-worker", submit.span_id.as_str()), "{run:#?}");
    assert_eq!(run.attribute("task_id").as_deref(), Some(id.as_str()));

    let turn = one(&spans, "chat fake-model");
    assert_eq!(turn.parent_span_id, run.span_id, "{turn:#?}");
    assert_eq!(turn.attribute("gen_ai.request.model").as_deref(), Some("fake-model"));
    assert_eq!(turn.attribute("gen_ai.usage.input_tokens").as_deref(), Some("120"));
    assert_eq!(turn.attribute("gen_ai.usage.output_tokens").as_deref(), Some("30"));
    assert_eq!(turn.attribute("gen_ai.usage.cache_read.input_tokens").as_deref(), Some("40"));
    let cost = turn.attributes.get("quickact.cost").and_then(Value::as_f64);
    assert_eq!(cost, task["cost"]["amount"].as_f64(), "the turn's cost is the task's (one turn): {turn:#?}");

    for tool in ["search_items", "finish"] {
        let call = one(&spans, &format!("execute_tool {tool}"));
        assert_eq!(call.parent_span_id, run.span_id, "{call:#?}");
        assert_eq!(call.attribute("gen_ai.tool.name").as_deref(), Some(tool));
        assert_eq!(call.attribute("quickact.tool.ok").as_deref(), Some("true"));
        assert!(call.start_unix_nanos >= turn.end_unix_nanos, "calls follow their turn: {call:#?} {turn:#?}");
    }

    // The webhook delivery of its ending is in its trace, below the submission.
    let delivery = one(&spans, "webhook.deliver");
    assert_eq!((delivery.service.as_str(), delivery.parent_span_id.as_str()), ("quickact-worker", submit.span_id.as_str()), "{delivery:#?}");
    assert_eq!(delivery.attribute("quickact.task_id").as_deref(), Some(id.as_str()));
    assert_eq!(delivery.attribute("http.response.status_code").as_deref(), Some("200"));

    // The task the API began a trace for: its submit span is a root, and its run is in it.
    let own_spans = receiver.trace(&own_trace);
    let own_submit = one(&own_spans, "POST /api/quick-action");
    assert_eq!(own_submit.parent_span_id, "", "{own_submit:#?}");
    assert_eq!(one(&own_spans, "task.run").parent_span_id, own_submit.span_id);
    // A local run is one span, the run's, in its task's trace.
    let local_spans = receiver.trace(&local_trace);
    let local_submit = one(&local_spans, "POST /api/quick-action");
    assert_eq!(one(&local_spans, "task.run").parent_span_id, local_submit.span_id);
    assert_eq!(one(&local_spans, "webhook.deliver").parent_span_id, local_submit.span_id);
    assert_eq!(local_spans.len(), 3, "the submission, the run, the delivery: {local_spans:#?}");
    // An external tool's call: a span of its run, with how it went.
    let booked_spans = receiver.trace(&booked_trace);
    let external = one(&booked_spans, "execute_tool rooms__book_room");
    assert_eq!(external.parent_span_id, one(&booked_spans, "task.run").span_id, "{external:#?}");
    assert_eq!(external.attribute("quickact.tool.ok").as_deref(), Some("true"), "{external:#?}");
    // Nothing went to another trace: a poll is no trace of its own, nor is the fetch.
    let ours = [CALLER_TRACE, own_trace.as_str(), local_trace.as_str(), booked_trace.as_str()];
    let elsewhere: Vec<ReceivedSpan> = receiver.spans().into_iter().filter(|span| !ours.contains(&span.trace_id.as_str())).collect();
    assert!(elsewhere.is_empty(), "spans outside the tasks' traces: {elsewhere:#?}");
    app.shutdown().await;
}

/// With no OTLP endpoint (this test process never sets up an exporter, as a binary without
/// `OTEL_EXPORTER_OTLP_ENDPOINT` does not), a caller's `traceparent` is not even read: the task
/// stores none and its JSON names no trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_an_endpoint_a_task_has_no_trace_even_when_its_caller_sends_one() {
    let app = TestApp::start().await;
    let (_, key) = app.create_user("alice").await;
    app.fake.script("not traced", vec![Reply::look_up_and_finish("done")]);
    let caller = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let answer = app
        .request(&key, reqwest::Method::POST, "/api/quick-action")
        .header("traceparent", &caller)
        .json(&json!({ "text": "not traced" }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
    let accepted: Value = answer.json().await.unwrap();
    let id = accepted["task_id"].as_str().unwrap();
    let task = app.wait_final(&key, id, 30).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert!(task.get("trace_id").is_none() && accepted.get("trace_id").is_none(), "{task:#}");
    let stored: Option<String> = sqlx::query_scalar("SELECT trace_parent FROM quick_action_tasks WHERE id = $1::uuid")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(stored, None);
    app.shutdown().await;
}
