//! Many users on one queue (`quickact_shared::queue::fetch_tasks`): users take turns rather than
//! arrival order, a user holds at most `QUICKACT_MAX_RUNNING_PER_USER` tasks across every worker,
//! and batch tasks wait for interactive ones until they have aged.

use std::{collections::HashSet, time::Duration};

use quickact_shared::queue::{Turns, fetch_tasks};
use quickact_testkit::{Reply, TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::json;

const WORKER_BINARY: &str = env!("CARGO_BIN_EXE_quickact-worker");

/// The settings' defaults, for tests that call the fetch themselves.
pub const TURNS: Turns = Turns { max_running_per_user: 16, batch_aging: Duration::from_secs(10) };

/// One fetch of up to `limit` tasks by a worker of its own (committed: no worker runs beside it).
async fn fetch(app: &TestApp, claim: u32, limit: usize, turns: Turns) -> HashSet<String> {
    fetch_tasks(&app.pool, "turns-test", claim, limit, 30.0, turns)
        .await
        .unwrap()
        .into_iter()
        .map(|claimed| claimed.task.id.to_string())
        .collect()
}

async fn submit_all(app: &TestApp, key: &str, n: usize, priority: &str, word: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let body = json!({ "text": format!("{word} zq{i}"), "priority": priority });
        let answer = app.call(key, Method::POST, "/api/quick-action", Some(body)).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        assert_eq!(answer.body["priority"], priority, "the task says how soon it is served");
        ids.push(answer.body["task_id"].as_str().unwrap().to_owned());
    }
    ids
}

fn set(ids: &[&String]) -> HashSet<String> {
    ids.iter().map(|id| (*id).clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn users_take_turns_rather_than_arrival_order() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let (_, ann) = app.create_user("ann").await;
    let (_, bo) = app.create_user("bo").await;
    let (_, cy) = app.create_user("cy").await;
    let a = submit_all(&app, &ann, 5, "interactive", "ann").await;
    let b = submit_all(&app, &bo, 2, "interactive", "bo").await;
    let c = submit_all(&app, &cy, 1, "interactive", "cy").await;

    // Arrival order would take ann's first three; turns take each user's first.
    assert_eq!(fetch(&app, 1, 3, TURNS).await, set(&[&a[0], &b[0], &c[0]]));
    // Then every user's next before anyone's third: bo's last, and ann's next two.
    assert_eq!(fetch(&app, 2, 3, TURNS).await, set(&[&a[1], &b[1], &a[2]]));
    assert_eq!(fetch(&app, 3, 10, TURNS).await, set(&[&a[3], &a[4]]));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_user_with_one_sentence_waiting_goes_before_users_with_backlogs() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let (_, ann) = app.create_user("ann").await;
    let (_, bo) = app.create_user("bo").await;
    let (_, cy) = app.create_user("cy").await;
    let a = submit_all(&app, &ann, 3, "interactive", "ann").await;
    let b = submit_all(&app, &bo, 3, "interactive", "bo").await;
    let c = submit_all(&app, &cy, 1, "interactive", "cy").await;
    // Nobody has been served: cy's only sentence goes first, then the backlogs by age. A user's
    // last waiting task is marked to run by itself (not in a group of local runs).
    let first = fetch_tasks(&app.pool, "turns-test", 1, 1, 30.0, TURNS).await.unwrap();
    assert_eq!((first[0].task.id.to_string(), first[0].alone), (c[0].clone(), true));
    let next = fetch_tasks(&app.pool, "turns-test", 2, 2, 30.0, TURNS).await.unwrap();
    let next: HashSet<(String, bool)> = next.into_iter().map(|claimed| (claimed.task.id.to_string(), claimed.alone)).collect();
    assert_eq!(next, HashSet::from([(a[0].clone(), false), (b[0].clone(), false)]));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_user_at_the_cap_waits_while_others_are_served() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let (_, ann) = app.create_user("ann").await;
    let (_, bo) = app.create_user("bo").await;
    let a = submit_all(&app, &ann, 4, "interactive", "ann").await;
    let b = submit_all(&app, &bo, 1, "interactive", "bo").await;
    let capped = Turns { max_running_per_user: 2, ..TURNS };

    assert_eq!(fetch(&app, 1, 10, capped).await, set(&[&a[0], &a[1], &b[0]]), "ann holds two at most");
    assert!(fetch(&app, 2, 10, capped).await.is_empty(), "ann is at her cap; nobody else waits");
    // One of ann's tasks ends: she has one turn again (and only one).
    sqlx::query("UPDATE quick_action_tasks SET status = 'cancelled', result_type = 'error', completed_at = now() WHERE id = $1::uuid")
        .bind(&a[0])
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(fetch(&app, 3, 10, capped).await, set(&[&a[2]]));
    // A lease that lapsed (its worker died) is not a held task: ann's turn comes back, and the
    // lapsed task is the one taken again.
    sqlx::query("UPDATE quick_action_tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1::uuid")
        .bind(&a[1])
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(fetch(&app, 4, 10, capped).await, set(&[&a[1]]));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn batch_tasks_wait_for_interactive_ones_until_they_have_aged() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let (_, ann) = app.create_user("ann").await;
    let (_, bo) = app.create_user("bo").await;
    let a = submit_all(&app, &ann, 2, "batch", "ann").await;
    let b = submit_all(&app, &bo, 1, "interactive", "bo").await;
    let patient = Turns { batch_aging: Duration::from_secs(3600), ..TURNS };
    assert_eq!(fetch(&app, 1, 1, patient).await, set(&[&b[0]]), "the later interactive task goes first");
    assert_eq!(fetch(&app, 2, 1, patient).await, set(&[&a[0]]), "batch tasks are served when nothing else waits");

    // Aged (here at once), a batch task is served as an interactive one: by its turn and age.
    let (_, cy) = app.create_user("cy").await;
    let (_, dee) = app.create_user("dee").await;
    let c = submit_all(&app, &cy, 1, "batch", "cy").await;
    let d = submit_all(&app, &dee, 1, "interactive", "dee").await;
    let aged = Turns { batch_aging: Duration::ZERO, ..TURNS };
    assert_eq!(fetch(&app, 3, 1, aged).await, set(&[&c[0]]), "the older, aged batch task");
    assert_eq!(fetch(&app, 4, 2, aged).await, set(&[&d[0], &a[1]]));

    // The default is interactive; a priority that does not exist is refused.
    let plain = app.submit(&ann, "plain zq").await;
    assert_eq!(plain.body["priority"], "interactive");
    let wrong = app.call(&ann, Method::POST, "/api/quick-action", Some(json!({ "text": "x", "priority": "urgent" }))).await;
    assert!(wrong.status.is_client_error(), "{:?}", wrong);
    assert!(wrong.body.to_string().contains("priority"), "the error names the field: {:?}", wrong.body);
    app.shutdown().await;
}

/// Through the API and a worker: a user who submits one sentence behind another user's backlog
/// is served at the next free slot, not after the backlog.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_light_user_is_served_before_a_heavy_users_backlog() {
    let app = TestApp::start_with(TestAppOptions::default().workers(1).env("QUICKACT_WORKER_CONCURRENCY", "2")).await;
    app.fake.fallback(|_| Reply::look_up_and_finish("done").delayed(Duration::from_millis(150)));
    let (_, heavy) = app.create_user("heavy").await;
    let (_, light) = app.create_user("light").await;
    let backlog = submit_all(&app, &heavy, 20, "interactive", "heavy").await;
    let answer = app.call(&light, Method::POST, "/api/quick-action", Some(json!({ "text": "light zq", "wait": true }))).await;
    assert_eq!(answer.body["status"], "success", "{:?}", answer.body);
    let light_id = answer.body["task_id"].as_str().unwrap().to_owned();
    let started_before: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM quick_action_tasks h, quick_action_tasks l
         WHERE l.id = $1::uuid AND h.id = ANY($2::uuid[]) AND h.started_at < l.started_at",
    )
    .bind(&light_id)
    .bind(&backlog)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    // The worker runs two at a time: the light task starts once one of those in hand ends (a fetch
    // claims what the room allows, so a few more may have been claimed with them).
    assert!(started_before <= 4, "{started_before} of the backlog's 20 tasks started before the light user's");
    for id in &backlog {
        assert_eq!(app.wait_final(&heavy, id, 30).await["status"], "success");
    }
    app.shutdown().await;
}

/// Two worker processes, one user at a cap of two: never more than two of the user's tasks run at
/// once across both, and all of them end.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_running_cap_holds_across_worker_processes() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    app.fake.fallback(|_| Reply::look_up_and_finish("done").delayed(Duration::from_millis(300)));
    let env = [("QUICKACT_MAX_RUNNING_PER_USER", "2"), ("QUICKACT_WORKER_CONCURRENCY", "8")];
    let mut one = app.spawn_logged_worker_process(WORKER_BINARY, &env);
    let mut two = app.spawn_logged_worker_process(WORKER_BINARY, &env);
    let (_, ann) = app.create_user("ann").await;
    let (_, bo) = app.create_user("bo").await;
    let a = submit_all(&app, &ann, 10, "interactive", "ann").await;
    let b = submit_all(&app, &bo, 4, "interactive", "bo").await;
    let (mut most, mut holders) = (0_i64, HashSet::new());
    let started = tokio::time::Instant::now();
    loop {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT split_part(lease_owner, '.', 1), count(*) OVER () FROM quick_action_tasks
             WHERE id = ANY($1::uuid[]) AND completed_at IS NULL AND lease_owner IS NOT NULL AND lease_expires_at > now()",
        )
        .bind(&a)
        .fetch_all(&app.pool)
        .await
        .unwrap();
        most = most.max(rows.first().map_or(0, |r| r.1));
        holders.extend(rows.into_iter().map(|r| r.0));
        let unfinished: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE id = ANY($1::uuid[]) AND completed_at IS NULL")
            .bind(&a)
            .fetch_one(&app.pool)
            .await
            .unwrap();
        if unfinished == 0 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "ann's tasks did not all end");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(most, 2, "at most two of ann's tasks ran at once, and two did (held by {holders:?})");
    for id in a.iter().chain(&b) {
        let key = if a.contains(id) { &ann } else { &bo };
        assert_eq!(app.wait_final(key, id, 30).await["status"], "success");
    }
    assert!(one.terminate().success() && two.terminate().success());
    app.shutdown().await;
}
