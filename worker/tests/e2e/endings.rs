//! Endings of runs with nothing open written in batches (`Endings` in `worker/src/agent/run.rs`):
//! endings that wait together commit together, each exactly once, and a batch that fails sinks
//! none of its runs: each ends alone.
//!
//! Both tests line the endings up deterministically: the first task's ending is held in Postgres on
//! its write to `quick_action_steps` (testkit's `HeldWrites`) while it is a batch of its own, the
//! others reach their endings and wait for the loop (the runner counts them), and only then is
//! the write let go: the waiting endings make up the second batch, all of them.

use std::{sync::Arc, time::Duration};

use quickact_testkit::{Reply, TestApp, TestAppOptions, wait_until};
use quickact_worker::runner::Runner;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Tasks per test: one alone in the first batch, the rest together in the second.
const TASKS: usize = 8;

/// An app whose one worker has room for every task at once, whose model only finishes (a reply
/// the ending writes with its verdict), and that worker's runner.
async fn finishing_app() -> (TestApp, Arc<Runner>, String) {
    let mut app = TestApp::start_with(TestAppOptions::default().workers(0).env("QUICKACT_WORKER_CONCURRENCY", "16")).await;
    // An error needs no action done first (`action_completed` would be refused).
    app.fake.fallback(|_| Reply::finish("error", "nothing to do"));
    let (_, key) = app.create_user("erin").await;
    let stop = CancellationToken::new();
    let runner = quickact_worker::build_runner(&app.config(), app.pool.clone(), stop.clone()).expect("build a runner");
    app.start_worker_with(runner.clone(), stop).await;
    (app, runner, key)
}

/// Submits `texts` so that the first ends alone (held on its write to the journal) and all the
/// others wait for the next batch; then lets them go. Returns the tasks' ids.
async fn end_in_two_batches(app: &TestApp, runner: &Runner, key: &str, texts: &[String]) -> Vec<String> {
    let gate = app.hold_writes("quick_action_steps").await;
    let mut ids = vec![app.submit_id(key, &texts[0]).await];
    gate.wait_for_blocked(1).await;
    for text in &texts[1..] {
        ids.push(app.submit_id(key, text).await);
    }
    wait_until("every other ending waits for the next batch", Duration::from_secs(20), || async {
        runner.endings_waiting() == texts.len() - 1
    })
    .await;
    gate.release().await;
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn endings_that_wait_together_commit_together() {
    let (app, runner, key) = finishing_app().await;
    let texts: Vec<String> = (0..TASKS).map(|i| format!("finish at once {i}")).collect();
    let ids = end_in_two_batches(&app, &runner, &key, &texts).await;

    let mut batches = Vec::new();
    for id in &ids {
        let task = app.wait_final(&key, id, 30).await;
        assert_eq!((&task["status"], task["attempts"].as_i64()), (&Value::from("failed"), Some(1)), "{task:#}");
        let steps: Vec<&str> = task["steps"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(steps, ["fake-model", "finish"], "each run's turn and finish, once");
        let (ending, steps) = app.writers(id).await;
        assert!(steps.iter().all(|writer| *writer == ending), "the steps commit with the verdict: {ending} {steps:?}");
        batches.push(ending);
    }
    assert_ne!(batches[0], batches[1], "the held ending was a batch of its own");
    assert!(batches[1..].iter().all(|b| *b == batches[1]), "the waiting endings commit in one transaction: {batches:?}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_that_fails_sinks_none_of_its_runs() {
    let (app, runner, key) = finishing_app().await;
    // One ending of the second batch cannot be written: its journal refuses the `finish` step (a
    // row of its own, or a call its turn's row carries).
    sqlx::raw_sql(
        "CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF (NEW.name = 'finish' OR NEW.calls @> jsonb_build_array(jsonb_build_object('name', 'finish'))) AND EXISTS (SELECT FROM quick_action_tasks WHERE id = NEW.task_id AND input_text LIKE 'poison%') THEN
             RAISE EXCEPTION 'this journal refuses its finish';
           END IF;
           RETURN NEW;
         END $$;
         CREATE TRIGGER refuse_poison BEFORE INSERT ON quick_action_steps FOR EACH ROW EXECUTE FUNCTION refuse_poison();",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    let mut texts: Vec<String> = (0..TASKS).map(|i| format!("finish at once {i}")).collect();
    texts[TASKS / 2] = "poison".to_owned();
    let ids = end_in_two_batches(&app, &runner, &key, &texts).await;

    // The others of the failed batch each ended alone, at their first attempt.
    let mut alone = Vec::new();
    for (id, text) in ids.iter().zip(&texts) {
        if text == "poison" {
            continue;
        }
        let task = app.wait_final(&key, id, 30).await;
        assert_eq!((&task["status"], task["attempts"].as_i64()), (&Value::from("failed"), Some(1)), "{task:#}");
        let (ending, steps) = app.writers(id).await;
        assert!(steps.iter().all(|writer| *writer == ending), "{ending} {steps:?}");
        alone.push(ending);
    }
    let mut distinct = alone.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), alone.len(), "each ended in a transaction of its own: {alone:?}");
    // The poisoned task never got the model's verdict: its run fails on its own (and tries again).
    let poisoned = app.call(&key, reqwest::Method::GET, &format!("/api/quick-action/{}", ids[TASKS / 2]), None).await.body;
    assert_ne!(poisoned["result"]["message"], "nothing to do", "{poisoned:#}");
    app.shutdown().await;
}
