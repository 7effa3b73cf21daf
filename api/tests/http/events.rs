//! `GET /api/quick-action/{id}/events`: a task's steps live over Server-Sent Events, resumable with
//! `Last-Event-ID`, ending with the verdict (or at shutdown).

use std::time::Duration;

use futures::StreamExt;
use quickact_testkit::{Reply, SseEvent, TestApp, TestAppOptions, sse_events};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const NOW: &str = "2026-02-07T09:00:00+08:00";
/// Guards against a hang only; nothing here is timed.
const HANG: Duration = Duration::from_secs(60);

fn script_slow_task(app: &TestApp, text: &str) {
    // Slow turns, so the stream is read while the run is under way.
    let slow = Duration::from_millis(300);
    app.fake.script(
        text,
        vec![
            Reply::tool("create_item", json!({"kind": "event", "title": "评审", "when": "明天下午2点"})).delayed(slow),
            Reply::tool("search_items", json!({"query": "评审"})).delayed(slow),
            Reply::finish("action_completed", "已创建评审").delayed(slow),
        ],
    );
}

async fn submit(app: &TestApp, key: &str, text: &str) -> String {
    let answer = app.call(key, Method::POST, "/api/quick-action", Some(json!({"text": text, "now": NOW, "tz": "Asia/Shanghai"}))).await;
    assert_eq!(answer.status, StatusCode::CREATED, "{:#}", answer.body);
    answer.body["task_id"].as_str().unwrap().to_owned()
}

/// Reads events until the stream ends (or `stop_after_steps` steps were read).
async fn read(events: &mut futures::stream::BoxStream<'static, SseEvent>, stop_after_steps: Option<usize>) -> Vec<SseEvent> {
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(HANG, events.next()).await.expect("the stream moves on") {
        seen.push(event);
        let steps = seen.iter().filter(|e| e.event == "step").count();
        if stop_after_steps == Some(steps) {
            break;
        }
    }
    seen
}

fn step_seqs(events: &[SseEvent]) -> Vec<i64> {
    events.iter().filter(|e| e.event == "step").map(|e| e.id.parse().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_stream_shows_each_step_as_it_commits_then_the_verdict_and_ends() {
    let (app, key) = TestApp::start_with_user("alice").await;
    script_slow_task(&app, "明天下午2点评审");
    let id = submit(&app, &key, "明天下午2点评审").await;

    let response = app.open_events(&key, &id, None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events = read(&mut sse_events(response), None).await;

    // A status first, the steps in order with their seq as event id, the verdict last.
    assert_eq!(events[0].event, "status", "{events:#?}");
    let status: Value = serde_json::from_str(&events[0].data).unwrap();
    assert!(status["status"] == "pending" || status["status"] == "processing", "{status}");
    let last = events.last().unwrap();
    assert_eq!(last.event, "verdict", "{events:#?}");
    let verdict: Value = serde_json::from_str(&last.data).unwrap();
    assert_eq!(verdict["status"], "success");
    assert_eq!(verdict["result"]["type"], "action_completed");

    // Exactly the journal GET shows, same JSON, none twice.
    let task = app.call(&key, Method::GET, &format!("/api/quick-action/{id}"), None).await.body;
    let journal = task["steps"].as_array().unwrap();
    let streamed: Vec<Value> = events.iter().filter(|e| e.event == "step").map(|e| serde_json::from_str(&e.data).unwrap()).collect();
    assert_eq!(&streamed, journal);
    assert_eq!(step_seqs(&events), (0..journal.len() as i64).collect::<Vec<_>>());
    // Model turns carry their tokens and latency; tool calls their arguments and result.
    let turn = streamed.iter().find(|s| s["kind"] == "model_turn").unwrap();
    assert!(turn["tokens"]["input"].as_i64().unwrap() > 0 && turn.get("latency_ms").is_some(), "{turn}");
    let call = streamed.iter().find(|s| s["name"] == "create_item").unwrap();
    assert_eq!(call["arguments"]["title"], "评审");
    assert_eq!(call["result"]["item"]["title"], "评审");
    // The verdict lists the run's calls and turns as GET does (both built from the journal).
    assert_eq!(verdict["result"], task["result"]);
    let calls: Vec<&str> = verdict["result"]["tool_calls"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(calls, ["create_item", "search_items", "finish"], "{verdict:#}");
    assert_eq!(verdict["result"]["model_turns"].as_array().unwrap().len(), 3, "{verdict:#}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stream_resumed_with_last_event_id_loses_and_repeats_nothing() {
    let (app, key) = TestApp::start_with_user("alice").await;
    script_slow_task(&app, "明天下午2点评审");
    let id = submit(&app, &key, "明天下午2点评审").await;

    // Drop the connection after two steps, then reconnect from the last id seen.
    let first = read(&mut sse_events(app.open_events(&key, &id, None).await), Some(2)).await;
    // Steps stream as they commit, not with the verdict: two model turns of 300 ms are still ahead.
    let under_way = app.call(&key, Method::GET, &format!("/api/quick-action/{id}"), None).await.body;
    assert!(under_way["status"] == "pending" || under_way["status"] == "processing", "{under_way:#}");
    let last_id = first.iter().rev().find(|e| e.event == "step").unwrap().id.clone();
    let rest = read(&mut sse_events(app.open_events(&key, &id, Some(&last_id)).await), None).await;
    assert_eq!(rest.last().unwrap().event, "verdict", "{rest:#?}");

    let task = app.call(&key, Method::GET, &format!("/api/quick-action/{id}"), None).await.body;
    let steps = task["steps"].as_array().unwrap().len() as i64;
    let mut seqs = step_seqs(&first);
    seqs.extend(step_seqs(&rest));
    assert_eq!(seqs, (0..steps).collect::<Vec<_>>(), "every step once, in order");

    // Resuming a finished task after its last step gives its state, as every stream opens, and
    // the verdict.
    let tail = read(&mut sse_events(app.open_events(&key, &id, Some(&(steps - 1).to_string())).await), None).await;
    assert_eq!(tail.iter().map(|e| e.event.as_str()).collect::<Vec<_>>(), ["status", "verdict"]);
    let status: Value = serde_json::from_str(&tail[0].data).unwrap();
    assert_eq!(status["status"], "success", "{status}");
    // A stream that resumed after every step still lists the whole run in its verdict.
    let verdict: Value = serde_json::from_str(&tail[1].data).unwrap();
    assert_eq!(verdict["result"], task["result"]);
    assert_eq!(verdict["result"]["tool_calls"].as_array().unwrap().len(), 3, "{verdict:#}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_stream_follows_the_rules_of_get_and_ends_at_shutdown() {
    let (app, alice) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    let (_, bob) = app.create_user("bob").await;
    let id = submit(&app, &alice, "明天下午2点评审").await;

    for (key, task) in [(&bob, id.clone()), (&alice, uuid::Uuid::now_v7().to_string()), (&alice, "nope".to_owned())] {
        let response = app.open_events(key, &task, None).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{task}");
    }
    let no_key = app.client.get(format!("{}/api/quick-action/{id}/events", app.base_url)).send().await.unwrap();
    assert_eq!(no_key.status(), StatusCode::UNAUTHORIZED);
    let bad = app.open_events(&alice, &id, Some("seven")).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_last_event_id");

    // No worker runs: the task stays pending, and the stream stays open until the server stops.
    let mut events = sse_events(app.open_events(&alice, &id, None).await);
    let first = tokio::time::timeout(HANG, events.next()).await.unwrap().unwrap();
    assert_eq!((first.event.as_str(), first.data.contains("pending")), ("status", true), "{first:?}");
    let reader = tokio::spawn(async move { events.collect::<Vec<_>>().await });
    app.shutdown().await;
    let after = tokio::time::timeout(HANG, reader).await.expect("the stream ends at shutdown").unwrap();
    assert!(after.is_empty(), "{after:?}");
}
