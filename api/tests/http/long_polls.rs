//! Task reads and long-polls: reads waiting together served by one statement, a verdict read with
//! its journal, and a long-poll on a task this API stored, which knows it unfinished without a
//! read.

use std::time::Duration;

use quickact_testkit::{TestApp, TestAppOptions, wait_until};
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Task reads waiting together are served by one statement, each with its own answer: a plain
/// read, the same task read twice, a long-poll on a task already final (it answers at once), a
/// long-poll that times out, another user's task and an unknown id (404 both). A long-poll on a
/// task this API stored and has not heard end reads nothing at first: another user's is a 404
/// without a read, and the one that times out reads once, at its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reads_that_wait_together_are_served_together_each_with_its_own_answer() {
    let options = TestAppOptions::default().workers(0).env("QUICKACT_SWEEP_SECS", "3600");
    let (app, alice) = TestApp::start_with_options_and_user(options, "alice").await;
    let (_, bob) = app.create_user("bob").await;
    let pending = app.submit_id(&alice, "开会").await;
    let cancelled = app.submit_id(&alice, "写报告").await;
    let bobs = app.submit_id(&bob, "买牛奶").await;
    let cancel = app.call(&alice, Method::POST, &format!("/api/quick-action/{cancelled}/cancel"), None).await;
    assert_eq!(cancel.status, StatusCode::OK, "{:?}", cancel.body);

    let read = |path: String| {
        let request = app.request(&alice, Method::GET, &path);
        tokio::spawn(async move {
            let response = request.send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        })
    };
    let gate = app.hold_task_reads().await;
    let first = read(format!("/api/quick-action/{pending}"));
    // The first read holds the loop (behind the lock); the next ones queue for one batch.
    gate.wait_for_a_read(Duration::from_secs(20)).await;
    let rest = [
        read(format!("/api/quick-action/{pending}")),
        read(format!("/api/quick-action/{cancelled}?wait=true")),
        read(format!("/api/quick-action/{pending}?wait=true&timeout=1")),
        read(format!("/api/quick-action/{bobs}")),
        read(format!("/api/quick-action/{bobs}?wait=true")),
        read(format!("/api/quick-action/{}", uuid::Uuid::now_v7())),
    ];
    wait_until("five reads wait for the next batch", Duration::from_secs(20), || async { app.reads.waiting() == 5 }).await;
    gate.release_after_a_read(Duration::from_secs(20)).await;

    let (status, body) = first.await.unwrap();
    assert_eq!((status, body["task_id"].as_str(), body["status"].as_str()), (StatusCode::OK, Some(&*pending), Some("pending")), "{body}");
    let mut answers = Vec::new();
    for handle in rest {
        let (status, body) = handle.await.unwrap();
        answers.push((status, body["task_id"].as_str().map(str::to_owned), body["status"].as_str().map(str::to_owned)));
    }
    let ok = |id: &str, status: &str| (StatusCode::OK, Some(id.to_owned()), Some(status.to_owned()));
    let not_found = (StatusCode::NOT_FOUND, None, None);
    assert_eq!(
        answers,
        [ok(&pending, "pending"), ok(&cancelled, "cancelled"), ok(&pending, "pending"), not_found.clone(), not_found.clone(), not_found],
    );
    app.shutdown().await;
}

/// A long-poll on a task this API stored and has not heard end waits without reading it first:
/// with every read of tasks held back, another user's long-poll on it is answered 404, and its
/// owner's long-poll hears its verdict (a cancel) once reads go through again, with its journal.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_long_poll_on_a_task_this_api_stored_waits_without_reading_it_first() {
    let options = TestAppOptions::default().workers(0).env("QUICKACT_SWEEP_SECS", "3600");
    let (app, alice) = TestApp::start_with_options_and_user(options, "alice").await;
    let (_, bob) = app.create_user("bob").await;
    let id = app.submit_id(&alice, "开会").await;

    let gate = app.hold_task_reads().await;
    let bobs = app.request(&bob, Method::GET, &format!("/api/quick-action/{id}?wait=true&timeout=30")).send();
    let bobs = tokio::time::timeout(Duration::from_secs(20), bobs).await.expect("answered while every read of tasks is held").unwrap();
    assert_eq!(bobs.status(), StatusCode::NOT_FOUND, "another user's task, as if it did not exist");
    let request = app.request(&alice, Method::GET, &format!("/api/quick-action/{id}?wait=true&timeout=30"));
    let alices = tokio::spawn(async move {
        let response = request.send().await.unwrap();
        (response.status(), response.json::<Value>().await.unwrap())
    });
    drop(gate);

    let cancel = app.call(&alice, Method::POST, &format!("/api/quick-action/{id}/cancel"), None).await;
    assert_eq!(cancel.status, StatusCode::OK, "{:?}", cancel.body);
    let (status, body) = tokio::time::timeout(Duration::from_secs(20), alices).await.expect("the verdict wakes the long-poll").unwrap();
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("cancelled")), "{body}");
    assert!(body["steps"].is_array(), "the verdict is read with its journal: {body}");
    app.shutdown().await;
}
