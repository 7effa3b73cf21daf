//! Local runs committed in groups (`worker/src/groups.rs`): runs that wait together commit
//! together, each exactly once, and a group whose commit fails loses nothing and does nothing twice.
//!
//! Both tests line the runs up deterministically: the first task's run is held in Postgres on a
//! write to `items` (testkit's `HeldWrites`) while it is a group of its own, the others are claimed
//! and wait for the group loop (the runner counts them), and only then is the write let go: the
//! waiting runs make up the second group, all of them.

use std::{sync::Arc, time::Duration};

use quickact_testkit::{TestApp, TestAppOptions, tool_steps, wait_until};
use quickact_worker::{groups::LOOPS, runner::Runner};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Tasks per test: one alone in the first group, the rest together in the second.
const TASKS: usize = 12;

/// An app whose one worker serves every sentence with the local provider, with room for all the
/// tasks at once; and that worker's runner.
async fn local_app() -> (TestApp, Arc<Runner>, String) {
    local_app_with(&[]).await
}

/// [`local_app`] with more variables set.
async fn local_app_with(vars: &[(&str, &str)]) -> (TestApp, Arc<Runner>, String) {
    let options = TestAppOptions::default().workers(0).env("OPENAI_API_KEY", "").env("QUICKACT_WORKER_CONCURRENCY", "16");
    let mut app = TestApp::start_with(vars.iter().fold(options, |options, (name, value)| options.env(name, value))).await;
    let (_, key) = app.create_user("alice").await;
    let stop = CancellationToken::new();
    let runner = quickact_worker::build_runner(&app.config(), app.pool.clone(), stop.clone()).expect("build a runner");
    app.start_worker_with(runner.clone(), stop).await;
    (app, runner, key)
}

/// Submits the tasks so that the first runs alone (held on its write to `items`) and all the
/// others wait for the next group; then lets them go and returns every task's verdict.
async fn submit_in_two_groups(app: &TestApp, runner: &Runner, key: &str) -> Vec<Value> {
    let gate = app.hold_writes("items").await;
    let mut ids = vec![app.submit_id(key, "add todo buy milk 0").await];
    gate.wait_for_blocked(1).await;
    for i in 1..TASKS {
        ids.push(app.submit_id(key, &format!("add todo buy milk {i}")).await);
    }
    wait_until("every other run waits for the next group", Duration::from_secs(20), || async {
        runner.runs_waiting_for_a_group() == TASKS - 1
    })
    .await;
    gate.release().await;
    let mut verdicts = Vec::with_capacity(TASKS);
    for id in &ids {
        verdicts.push(app.wait_final(key, id, 30).await);
    }
    verdicts
}

/// Each task created its own to-do, once: every verdict names one item, the items are exactly
/// the twelve to-dos, and each journal holds one successful `create_item`.
async fn assert_each_done_once(app: &TestApp, key: &str, verdicts: &[Value]) {
    for (i, task) in verdicts.iter().enumerate() {
        assert_eq!(task["status"], "success", "{task:#}");
        assert_eq!(task["model_used"], "local", "{task:#}");
        let items = task["result"]["items"].as_array().expect("the verdict's items");
        assert_eq!(items.len(), 1, "{task:#}");
        assert_eq!(items[0]["title"], format!("buy milk {i}"), "{task:#}");
        let creates = tool_steps(task, "create_item");
        assert_eq!(creates.len(), 1, "one create_item in the journal: {task:#}");
        assert_eq!(creates[0]["ok"], true, "{task:#}");
    }
    let mut titles: Vec<String> = app.items(key).await.iter().map(|item| item["title"].as_str().unwrap().to_owned()).collect();
    titles.sort();
    let mut expected: Vec<String> = (0..TASKS).map(|i| format!("buy milk {i}")).collect();
    expected.sort();
    assert_eq!(titles, expected, "every to-do exactly once");
}

/// The transactions that ended the tasks: `completed_at` is `now()`, the start of the transaction
/// that wrote the verdict (not of the run's savepoint), the same for every run of a group.
async fn commits_of(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(DISTINCT completed_at) FROM quick_action_tasks").fetch_one(&app.pool).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn local_runs_that_wait_together_commit_together_each_exactly_once() {
    let (app, runner, key) = local_app().await;
    let verdicts = submit_in_two_groups(&app, &runner, &key).await;
    assert_each_done_once(&app, &key, &verdicts).await;
    assert_eq!(commits_of(&app).await, 2, "the first run committed alone, the other eleven in one commit");
    let attempts: Vec<i64> = verdicts.iter().map(|task| task["attempts"].as_i64().unwrap()).collect();
    assert_eq!(attempts, vec![1; TASKS]);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_group_whose_commit_fails_loses_nothing_and_does_nothing_twice() {
    let (app, runner, key) = local_app().await;
    // The second commit that carries a new item fails, at commit time (a deferred trigger): that is
    // the second group's, with eleven runs in it. A sequence counts, as it is not rolled back.
    for statement in [
        "CREATE SEQUENCE item_commits",
        "CREATE FUNCTION fail_the_second_commit() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF nextval('item_commits') = 2 THEN RAISE EXCEPTION 'injected: this commit fails'; END IF;
           RETURN NULL;
         END $$",
        "CREATE CONSTRAINT TRIGGER fail_the_second_commit AFTER INSERT ON items
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_the_second_commit()",
    ] {
        sqlx::query(statement).execute(&app.pool).await.unwrap();
    }

    let verdicts = submit_in_two_groups(&app, &runner, &key).await;
    assert_each_done_once(&app, &key, &verdicts).await;
    // The first task committed at its first attempt; the eleven of the failed group each tried
    // again alone, from a journal holding nothing of the attempt that failed.
    assert_eq!(verdicts[0]["attempts"], 1, "{:#}", verdicts[0]);
    for task in &verdicts[1..] {
        assert_eq!(task["attempts"], 2, "{task:#}");
        let steps = task["steps"].as_array().expect("the journal");
        assert!(steps.iter().all(|step| step["attempt"] == 2), "only the second attempt's steps are kept: {task:#}");
    }
    app.shutdown().await;
}

/// A grouped run's tools run without a savepoint of their own (it would cost two statements a
/// call): a run whose tool fails (here a create refused at the user's cap on items) keeps nothing
/// of its try, its group goes on and commits, and the run runs alone, where the refusal is told as
/// a run alone tells it. Running alone is no failed attempt, and each journal holds one create.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_run_whose_tool_fails_in_its_group_runs_alone_and_its_group_commits() {
    const CAP: usize = 6;
    let (app, runner, key) = local_app_with(&[("QUICKACT_MAX_ITEMS_PER_USER", &CAP.to_string())]).await;
    let verdicts = submit_in_two_groups(&app, &runner, &key).await;
    assert_eq!(app.items(&key).await.len(), CAP);
    let (done, refused): (Vec<&Value>, Vec<&Value>) = verdicts.iter().partition(|task| task["status"] == "success");
    assert_eq!(done.len(), CAP, "{verdicts:#?}");
    for task in &verdicts {
        assert_eq!(task["attempts"], 1, "{task:#}");
        assert_eq!(tool_steps(task, "create_item").len(), 1, "one create_item in the journal: {task:#}");
    }
    for task in refused {
        let create = tool_steps(task, "create_item")[0];
        assert_eq!(create["ok"], false, "{task:#}");
        assert!(create["error"].as_str().unwrap().contains(&format!("limit of {CAP} items")), "{task:#}");
    }
    // The first task committed alone, the five of the group that created theirs together.
    let commits: i64 = sqlx::query_scalar("SELECT count(DISTINCT completed_at) FROM quick_action_tasks WHERE status = 'success'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(commits, 2);
    assert!(commits_of(&app).await > 2, "the refused runs ended alone, not in their group's commit");
    app.shutdown().await;
}

/// A group never waits on a task's row: that row's holder (the runner ending the task at its
/// deadline, a cancel) may itself wait on room under the cap that the group's earlier runs hold,
/// which deadlocked under load. The run whose row is held leaves the group untouched and runs
/// alone once the row is free; the rest of its group commits meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_run_whose_task_row_is_held_leaves_its_group_and_runs_alone() {
    let (app, runner, key) = local_app().await;
    let gate = app.hold_writes("items").await;
    let first = app.submit_id(&key, "add todo buy milk 0").await;
    gate.wait_for_blocked(1).await;
    let second = app.submit_id(&key, "add todo buy milk 1").await;
    let third = app.submit_id(&key, "add todo buy milk 2").await;
    wait_until("two runs wait for the next group", Duration::from_secs(20), || async { runner.runs_waiting_for_a_group() == 2 }).await;
    // Someone else holds the third task's row.
    let mut holder = app.pool.begin().await.unwrap();
    sqlx::query("SELECT id FROM quick_action_tasks WHERE id = $1::uuid FOR UPDATE").bind(&third).execute(&mut *holder).await.unwrap();
    gate.release().await;

    // The first and second tasks finish while the third's row is still held.
    for id in [&first, &second] {
        assert_eq!(app.wait_final(&key, id, 30).await["status"], "success");
    }
    let third_now: String = sqlx::query_scalar("SELECT status FROM quick_action_tasks WHERE id = $1::uuid").bind(&third).fetch_one(&app.pool).await.unwrap();
    assert_eq!(third_now, "processing", "the third waits for its row, outside the group");
    holder.commit().await.unwrap();
    let task = app.wait_final(&key, &third, 30).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["attempts"], 1, "running alone is not another attempt: {task:#}");
    assert_eq!(tool_steps(&task, "create_item").len(), 1, "{task:#}");
    assert_eq!(app.items(&key).await.len(), 3);
    app.shutdown().await;
}

/// A user's runs take that user's item lock and hold it until their group commits, and a group
/// runs its runs one after another. Each user's runs go to one of the process's group loops, so a
/// group held up on one user's lock holds up nobody of another loop.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_group_held_on_one_users_lock_holds_up_no_other_loop() {
    let (app, _runner, alice_key) = local_app().await;
    let loop_of = |user: &Value| (user["id"].as_str().unwrap().parse::<uuid::Uuid>().unwrap().as_u128() % LOOPS as u128) as usize;
    let alice_id: uuid::Uuid = sqlx::query_scalar("SELECT id FROM users WHERE name = 'alice'").fetch_one(&app.pool).await.unwrap();
    let alice = serde_json::json!({ "id": alice_id.to_string() });
    let mut bob = app.create_user("bob").await;
    for n in 0..64 {
        if loop_of(&bob.0) != loop_of(&alice) {
            break;
        }
        assert!(n < 63, "no user of another loop in 64 tries");
        bob = app.create_user(&format!("bob{n}")).await;
    }
    let (_, bob_key) = bob;

    // Someone else holds Alice's item lock: her run waits on it inside its group.
    let mut holder = app.pool.begin().await.unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('quickact.items:' || $1::uuid::text, 0))")
        .bind(alice["id"].as_str().unwrap())
        .execute(&mut *holder)
        .await
        .unwrap();
    let held = app.submit_id(&alice_key, "add todo buy milk").await;
    wait_until("Alice's run waits on her item lock", Duration::from_secs(20), || async {
        let waiting: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
            .fetch_one(&app.pool)
            .await
            .unwrap();
        waiting == 1
    })
    .await;

    let free = app.submit_id(&bob_key, "add todo buy bread").await;
    let bobs = app.wait_final(&bob_key, &free, 20).await;
    assert_eq!(bobs["status"], "success", "Bob's run finished while Alice's waited: {bobs:#}");
    let alices = app.call(&alice_key, reqwest::Method::GET, &format!("/api/quick-action/{held}"), None).await.body;
    assert_eq!(alices["status"], "processing", "{alices:#}");

    holder.rollback().await.unwrap();
    let alices = app.wait_final(&alice_key, &held, 20).await;
    assert_eq!(alices["status"], "success", "{alices:#}");
    assert_eq!(tool_steps(&alices, "create_item").len(), 1, "{alices:#}");
    app.shutdown().await;
}
