//! The seven scenarios: each starts its own fleet, runs a load, brings its fault while the load
//! runs, and checks what must hold (see the module above).

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use rand::Rng;
use sqlx::Connection;

use super::{
    ChaosOptions, Outcome,
    fleet::{Fleet, FleetSettings},
    load::{Load, LoadPlan, is_probe, model_reply},
};
use crate::Reply;

fn secs(range: (f64, f64)) -> Duration {
    Duration::from_secs_f64(rand::rng().random_range(range.0..=range.1))
}

/// Memory and connections while the load runs, to compare with their level after the faults.
struct Levels {
    memory: Vec<f64>,
    connections: Option<i64>,
}

async fn levels(fleet: &Fleet) -> Levels {
    Levels { memory: fleet.memory(), connections: fleet.connections().await }
}

/// Memory may grow a little as a process warms up (allocator pools, caches) but not with the
/// faults it went through. Connections: pools grow to what the load asks of them (each has a
/// ceiling) and keep idle ones for a while, so their count is reported, not judged; what a fault
/// must not leave behind is a session stuck in a transaction, holding locks and the xmin.
async fn compare_levels(fleet: &Fleet, before: &Levels, after: &Levels, outcome: &mut Outcome) {
    let names = ["api", "worker 0", "worker 1", "worker 2"];
    let memory = |levels: &Levels| levels.memory.iter().map(|m| format!("{m:.1}")).collect::<Vec<_>>().join(" / ");
    outcome.figure("RSS MiB under load before the faults (api / workers)", memory(before));
    outcome.figure("RSS MiB after the faults", memory(after));
    for (i, (b, a)) in before.memory.iter().zip(&after.memory).enumerate() {
        if *b > 0.0 && *a > b * 1.5 + 24.0 {
            outcome.violations.push(format!("{} grew from {b:.1} MiB to {a:.1} MiB", names[i]));
        }
    }
    let count = |c: Option<i64>| c.map_or("?".into(), |c| c.to_string());
    outcome.figure("database connections of the service under load before the faults / after", format!("{} / {}", count(before.connections), count(after.connections)));
    let stuck: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND state LIKE 'idle in transaction%' AND state_change < now() - interval '5 seconds'",
    )
    .fetch_one(&fleet.app.pool)
    .await
    .unwrap_or(-1);
    if stuck != 0 {
        outcome.violations.push(format!("{stuck} sessions were left idle in a transaction after the faults"));
    }
}

/// Lets a fresh fleet and its load settle, then reads the levels.
async fn warm_up(fleet: &Fleet, options: &ChaosOptions) -> Levels {
    tokio::time::sleep(options.size(Duration::from_secs(4), Duration::from_secs(15))).await;
    levels(fleet).await
}

/// The end of every scenario: the load's checks, the levels after the faults, the fleet stopped.
async fn conclude(fleet: Fleet, load: Load, before: Levels, mut outcome: Outcome) -> Outcome {
    outcome.verified = load.finish(&fleet).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = levels(&fleet).await;
    compare_levels(&fleet, &before, &after, &mut outcome).await;
    let (local, model, rerun) = (outcome.verified.local_runs, outcome.verified.model_runs, outcome.verified.rerun);
    outcome.figure("runs served locally / by the model", format!("{local} / {model}"));
    outcome.figure("tasks run more than once (taken over)", rerun);
    fleet.stop().await;
    outcome
}

fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

/// 1. Postgres crashes (immediate mode) every 5-20 s and stays down 0-5 s, while local runs and
///    slow model runs are in flight.
pub async fn crashes(options: &ChaosOptions) -> Outcome {
    let fleet = Fleet::start(options, FleetSettings::default()).await;
    fleet.app.fake.fallback(|request| model_reply(request, (200, 3000)));
    let plan = LoadPlan { tasks: options.size(200, 3600), rate: 6.0, ..LoadPlan::default() };
    let load = Load::start(&fleet, plan);
    let before = warm_up(&fleet, options).await;
    let mut outcome = Outcome::default();
    let (up, down) = (options.size((3.0, 6.0), (5.0, 20.0)), options.size((0.0, 2.0), (0.0, 5.0)));
    let mut downtime = Duration::ZERO;
    while !load.submitted_all() {
        tokio::time::sleep(secs(up)).await;
        blocking(|| fleet.cluster.crash()).expect("crash the server");
        let pause = secs(down);
        downtime += pause;
        tokio::time::sleep(pause).await;
        blocking(|| fleet.cluster.restart_server()).expect("restart the server");
        outcome.faults += 1;
        // Served again: a submission is accepted and run to its verdict.
        outcome.recoveries.push(load.probe(true).await);
    }
    outcome.figure("crashes", outcome.faults);
    outcome.figure("time the database was down (s)", format!("{:.1}", downtime.as_secs_f64()));
    conclude(fleet, load, before, outcome).await
}

/// 2. Every client session of the database terminated (the listeners, long-polls' and SSE
///    streams' included) every 2-5 s.
pub async fn purges(options: &ChaosOptions) -> Outcome {
    let fleet = Fleet::start(options, FleetSettings::default()).await;
    fleet.app.fake.fallback(|request| model_reply(request, (200, 2000)));
    let plan = LoadPlan { tasks: options.size(200, 1200), rate: 10.0, sse_every: 3, ..LoadPlan::default() };
    let load = Load::start(&fleet, plan);
    let before = warm_up(&fleet, options).await;
    let mut outcome = Outcome::default();
    let mut terminated = 0i64;
    while !load.submitted_all() {
        tokio::time::sleep(secs((2.0, 5.0))).await;
        let mut admin = fleet.admin().await;
        let n: i64 = sqlx::query_scalar(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
        )
        .fetch_one(&mut admin)
        .await
        .expect("terminate the backends");
        admin.close().await.ok();
        terminated += n;
        outcome.faults += 1;
        outcome.recoveries.push(load.probe(true).await);
    }
    outcome.figure("purges", outcome.faults);
    outcome.figure("sessions terminated", terminated);
    conclude(fleet, load, before, outcome).await
}

/// 3. A worker SIGSTOPped mid-run until another has taken its tasks over (its lease lapsed), then
///    SIGCONTed: it must not write anything of those tasks.
pub async fn paused_worker(options: &ChaosOptions) -> Outcome {
    let fleet = Fleet::start(options, FleetSettings::default()).await;
    fleet.app.fake.fallback(|request| model_reply(request, (1000, 4000)));
    let plan = LoadPlan { tasks: options.size(200, 1200), rate: 10.0, local_share: 0.2, ..LoadPlan::default() };
    let load = Load::start(&fleet, plan);
    let before = warm_up(&fleet, options).await;
    let mut outcome = Outcome::default();
    let (mut taken_over, mut paused_for) = (0usize, Vec::new());
    let mut victim = 0;
    while !load.submitted_all() {
        tokio::time::sleep(secs((3.0, 6.0))).await;
        victim = (victim + 1) % fleet.workers.len();
        let worker = &fleet.workers[victim];
        let pid = worker.child.id().expect("a running worker");
        signal("STOP", pid);
        let stopped = Instant::now();
        // What it held at that moment (a claim it made just before is caught by the next read).
        tokio::time::sleep(Duration::from_millis(200)).await;
        let held: Vec<(uuid::Uuid, i32)> = sqlx::query_as(
            "SELECT id, attempts FROM quick_action_tasks WHERE completed_at IS NULL AND lease_owner LIKE $1 || '-%'",
        )
        .bind(&worker.name)
        .fetch_all(&fleet.app.pool)
        .await
        .unwrap_or_default();
        // Paused until every task it held is another's (or finished): past its lease.
        let give_up = stopped + Duration::from_secs(60);
        loop {
            let still: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM quick_action_tasks WHERE completed_at IS NULL AND lease_owner LIKE $1 || '-%'",
            )
            .bind(&worker.name)
            .fetch_one(&fleet.app.pool)
            .await
            .unwrap_or(1);
            if still == 0 || Instant::now() > give_up {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let ids: Vec<uuid::Uuid> = held.iter().map(|(id, _)| *id).collect();
        let attempts: Vec<i32> = held.iter().map(|(_, a)| *a).collect();
        let old_steps = || async {
            sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM quick_action_steps s JOIN unnest($1::uuid[], $2::int4[]) AS h(id, attempt)
                 ON s.task_id = h.id AND s.attempt = h.attempt",
            )
            .bind(&ids)
            .bind(&attempts)
            .fetch_one(&fleet.app.pool)
            .await
            .unwrap_or(0)
        };
        let steps_at_resume = old_steps().await;
        signal("CONT", pid);
        paused_for.push(stopped.elapsed().as_secs_f64());
        // The paused run wakes with replies in hand and tries to write: give it time to (the
        // service's serving is probed meanwhile).
        let (probe, steps_later) = tokio::join!(load.probe(true), async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            old_steps().await
        });
        if steps_later != steps_at_resume {
            outcome.violations.push(format!(
                "a paused worker wrote {} steps of the {} tasks taken over from it after it woke",
                steps_later - steps_at_resume,
                ids.len()
            ));
        }
        taken_over += held.len();
        outcome.faults += 1;
        outcome.recoveries.push(probe);
    }
    outcome.figure("pauses", outcome.faults);
    outcome.figure("tasks held by a paused worker (taken over)", taken_over);
    let longest = paused_for.iter().copied().fold(0.0, f64::max);
    outcome.figure("longest pause (s; the lease is 6 s)", format!("{longest:.1}"));
    conclude(fleet, load, before, outcome).await
}

fn signal(name: &str, pid: u32) {
    let status = std::process::Command::new("kill").arg(format!("-{name}")).arg(pid.to_string()).status().expect("run kill");
    assert!(status.success(), "kill -{name} {pid} failed");
}

/// 4. An idle transaction holds the snapshot (the xmin) under steady load: bloat and latency
///    during and after; the queue keeps serving.
pub async fn pinned_snapshot(options: &ChaosOptions) -> Outcome {
    let fleet = Fleet::start(options, FleetSettings::default()).await;
    fleet.app.fake.fallback(|request| model_reply(request, (50, 300)));
    let (lead, hold, tail) = (options.size(10.0, 60.0), options.size(30.0, 600.0), options.size(20.0, 120.0));
    let rate = 5.0;
    let plan = LoadPlan { tasks: ((lead + hold + tail) * rate) as usize, rate, ..LoadPlan::default() };
    let started = Instant::now();
    let load = Load::start(&fleet, plan);
    let before = warm_up(&fleet, options).await;
    let mut outcome = Outcome::default();
    tokio::time::sleep(Duration::from_secs_f64(lead).saturating_sub(started.elapsed())).await;
    let dead_before = dead_tuples(&fleet).await;

    let mut pin = fleet.admin().await;
    sqlx::query("BEGIN ISOLATION LEVEL REPEATABLE READ").execute(&mut pin).await.expect("begin");
    let _: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks").fetch_one(&mut pin).await.expect("take the snapshot");
    let pinned = Instant::now();
    // A task only the sweeper can end: leased to a worker that never renews or ends it (the fetch
    // leaves it alone until its lease lapses, in an hour), past its 5 s deadline soon.
    let swept: uuid::Uuid = sqlx::query_scalar(
        "INSERT INTO quick_action_tasks (id, user_id, input_text, status, started_at, timeout_seconds, reference_time, time_zone,
                                         attempts, lease_owner, lease_expires_at)
         SELECT gen_random_uuid(), id, 'a task its frozen worker never ends', 'processing', now(), 5, now(), 'UTC',
                1, 'frozen-0-00000000.00000001', now() + interval '1 hour'
         FROM users WHERE NOT is_admin LIMIT 1
         RETURNING id",
    )
    .fetch_one(&fleet.app.pool)
    .await
    .expect("insert a task for the sweeper");
    let mut dead_during = dead_before.clone();
    while pinned.elapsed() < Duration::from_secs_f64(hold) {
        tokio::time::sleep(Duration::from_secs(5).min(Duration::from_secs_f64(hold).saturating_sub(pinned.elapsed()))).await;
        dead_during = dead_tuples(&fleet).await;
    }
    let (status, ended_after): (String, Option<f64>) =
        sqlx::query_as("SELECT status, extract(epoch FROM completed_at - created_at)::float8 FROM quick_action_tasks WHERE id = $1")
            .bind(swept)
            .fetch_one(&fleet.app.pool)
            .await
            .expect("read the swept task");
    if status == "timeout" {
        outcome.figure("a task only the sweeper could end (5 s timeout), ended while pinned after (s)", format!("{:.1}", ended_after.unwrap_or(0.0)));
    } else {
        outcome.violations.push(format!("the sweeper did not end an overdue task while the snapshot was pinned (it is {status})"));
    }
    sqlx::query("COMMIT").execute(&mut pin).await.expect("release the snapshot");
    pin.close().await.ok();
    let released = Instant::now();
    outcome.faults = 1;
    outcome.recoveries.push(load.probe(true).await);
    while !load.submitted_all() {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Let the last tasks end and autovacuum come by.
    tokio::time::sleep(Duration::from_secs(options.size(10, 60))).await;
    let dead_after = dead_tuples(&fleet).await;
    let window = |from: Instant, to: Instant| {
        let (p50, p99, n) = load.latencies(from, to);
        format!("p50 {:.0} ms, p99 {:.0} ms ({n} tasks)", p50 * 1000.0, p99 * 1000.0)
    };
    outcome.figure("snapshot held (s)", format!("{hold:.0}"));
    outcome.figure("POST-to-verdict before the pin", window(started, pinned));
    outcome.figure("POST-to-verdict while pinned", window(pinned, released));
    outcome.figure("POST-to-verdict after the release", window(released, Instant::now()));
    for ((table, before), ((_, during), (_, after))) in dead_before.iter().zip(dead_during.iter().zip(&dead_after)) {
        outcome.figure(&format!("{table}: dead rows / size before, at the end of the pin, after"), format!("{} / {} / {}", before, during, after));
    }
    conclude(fleet, load, before, outcome).await
}

/// Dead rows and total size of the tables a task writes, as "dead rows (size)".
async fn dead_tuples(fleet: &Fleet) -> Vec<(String, String)> {
    let rows: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT relname::text, n_dead_tup, pg_total_relation_size(relid) FROM pg_stat_user_tables
         WHERE relname IN ('quick_action_tasks', 'quick_action_steps', 'items', 'item_changes', 'quickact_workers') ORDER BY relname",
    )
    .fetch_all(&fleet.app.pool)
    .await
    .unwrap_or_default();
    rows.into_iter().map(|(table, dead, size)| (table, format!("{dead} ({} kB)", size / 1024))).collect()
}

/// 5. Another client holds every free connection of the server; half the times it also takes the
///    ones the service held (their sessions terminated, the slots taken as they free): requests are
///    answered (503 with `Retry-After` when the service has no connection) within the request
///    timeout, and the workers resume when the connections are released.
pub async fn connections_exhausted(options: &ChaosOptions) -> Outcome {
    let settings = FleetSettings {
        // The fleet fits the server (Postgres's default of 100), as configuration.md asks: 16
        // for each process (three workers, the API, and the harness's in-process API), 20 left.
        env: vec![("QUICKACT_REQUEST_TIMEOUT_SECS", "10".into()), ("QUICKACT_DATABASE_CONNECTIONS", "16".into())],
        server_options: "-c max_connections=100".into(),
        ..FleetSettings::default()
    };
    let fleet = Fleet::start(options, settings).await;
    fleet.app.fake.fallback(|request| model_reply(request, (200, 1500)));
    let plan = LoadPlan { tasks: options.size(200, 1200), rate: 10.0, answer_within: Some(Duration::from_secs(12)), ..LoadPlan::default() };
    let load = Load::start(&fleet, plan);
    let before = warm_up(&fleet, options).await;
    let mut outcome = Outcome::default();
    let (mut held_most, mut least_left) = (0, i64::MAX);
    while !load.submitted_all() {
        tokio::time::sleep(secs((3.0, 6.0))).await;
        let mut hog = take_free_connections(&fleet, Vec::new()).await;
        if outcome.faults % 2 == 1 {
            // The service's own sessions too: terminated, and each slot taken as it frees, until
            // the other client holds every one (the service reconnects as fast as it can).
            let mut mine: Vec<i32> = Vec::new();
            let taking = Instant::now();
            while taking.elapsed() < Duration::from_secs(3) {
                for conn in &mut hog[mine.len()..] {
                    if let Ok(pid) = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(&mut *conn).await {
                        mine.push(pid);
                    }
                }
                let Some(conn) = hog.first_mut() else { break };
                let others: i64 = sqlx::query_scalar(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                     WHERE datname = current_database() AND backend_type = 'client backend' AND NOT pid = ANY($1)",
                )
                .bind(&mine)
                .fetch_one(&mut *conn)
                .await
                .unwrap_or(0);
                if others == 0 {
                    break;
                }
                hog = take_free_connections(&fleet, hog).await;
            }
        }
        held_most = held_most.max(hog.len());
        let hold = secs(options.size((6.0, 10.0), (10.0, 20.0)));
        tokio::time::sleep(hold / 2).await;
        let service = fleet.connections().await.unwrap_or(-1);
        least_left = least_left.min(service + i64::from(fleet.app.pool.size()));
        tokio::time::sleep(hold / 2).await;
        for conn in hog {
            let _ = conn.close().await;
        }
        outcome.faults += 1;
        // Both kinds of run served again (they write through different pools); the model's
        // answer takes up to 1.5 s of it.
        let (local, model) = tokio::join!(load.probe(true), load.probe(false));
        outcome.recoveries.push(local.max(model));
    }
    // The holds are shorter than a task's deadline: once they end, the workers must catch up.
    no_task_timed_out(&fleet, &mut outcome, "the workers did not catch up once the connections were released").await;
    outcome.figure("exhaustions (every other one with the service's sessions terminated too)", outcome.faults);
    outcome.figure("connections held by the other client (most)", held_most);
    outcome.figure("sessions the service had left while they were held (fewest)", least_left);
    conclude(fleet, load, before, outcome).await
}

/// Opens connections until the server refuses one (as long as slots free up within a second).
async fn take_free_connections(fleet: &Fleet, mut held: Vec<sqlx::PgConnection>) -> Vec<sqlx::PgConnection> {
    let url = fleet.database_url();
    let mut refused_since: Option<Instant> = None;
    loop {
        match sqlx::PgConnection::connect(&url).await {
            Ok(conn) => {
                held.push(conn);
                refused_since = None;
            }
            Err(_) => {
                let since = *refused_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_millis(300) {
                    return held;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// The preloadable libfaketime: `QUICKACT_LIBFAKETIME` (which `scripts/test.sh` and
/// `scripts/chaos.sh` export after installing Debian's `faketime`), else where Debian puts it.
fn libfaketime() -> Option<String> {
    if let Ok(path) = std::env::var("QUICKACT_LIBFAKETIME")
        && std::path::Path::new(&path).exists()
    {
        return Some(path);
    }
    let dirs = std::fs::read_dir("/usr/lib").ok()?;
    dirs.filter_map(Result::ok)
        .map(|d| d.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.exists())
        .map(|p| p.to_string_lossy().into_owned())
}

/// 6. Workers whose clocks are 5 minutes off (ahead, behind), through libfaketime: leases,
///    deadlines and the sweeper act on the database's time; one skewed worker is killed midway,
///    and its tasks are taken over on the database's time too.
pub async fn clock_skew(options: &ChaosOptions) -> Outcome {
    let Some(library) = libfaketime() else {
        let mut outcome = Outcome::default();
        outcome.violations.push("libfaketime is not installed (Debian's faketime; scripts/faketime.sh install)".into());
        return outcome;
    };
    let skewed = |offset: &str| {
        vec![
            ("LD_PRELOAD".to_owned(), library.clone()),
            ("FAKETIME".to_owned(), offset.to_owned()),
            ("FAKETIME_DONT_FAKE_MONOTONIC".to_owned(), "1".to_owned()),
        ]
    };
    let settings = FleetSettings { worker_env: vec![skewed("+5m"), skewed("-5m"), skewed("+5m")], ..FleetSettings::default() };
    // Proof that the clock is faked as the workers get it.
    let faked = std::process::Command::new("date").arg("+%s").envs(skewed("+5m")).output().expect("run date");
    let faked: i64 = String::from_utf8_lossy(&faked.stdout).trim().parse().unwrap_or(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs() as i64;
    let skew = faked - now;
    let mut fleet = Fleet::start(options, settings).await;
    fleet.app.fake.fallback(|request| model_reply(request, (200, 2000)));
    let plan = LoadPlan { tasks: options.size(200, 1200), rate: 10.0, timeout_secs: 60, ..LoadPlan::default() };
    let load = Load::start(&fleet, plan);
    let before = warm_up(&fleet, options).await;
    let mut outcome = Outcome::default();
    outcome.figure("a worker's clock, as libfaketime gives it, ahead by (s)", skew);
    if !(290..=310).contains(&skew) {
        outcome.violations.push(format!("the faked clock is {skew} s off, not 300: the scenario proves nothing"));
    }
    // Midway, the worker 5 minutes ahead is killed: its tasks wait for their leases to lapse.
    while load.accepted() < options.size(100, 600) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    fleet.replace_worker(0).await;
    outcome.faults = 1;
    outcome.recoveries.push(load.probe(true).await);
    while !load.submitted_all() {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    no_task_timed_out(&fleet, &mut outcome, "their runs take seconds of their 60").await;
    // A step's times are the database's: inside its task's life, whichever clock its worker has.
    let astray: Vec<(uuid::Uuid, i32, String)> = sqlx::query_as(
        "SELECT s.task_id, s.seq, format('started %s, task created %s, completed %s', s.started_at, t.created_at, t.completed_at)
         FROM quick_action_steps s JOIN quick_action_tasks t ON t.id = s.task_id
         WHERE s.started_at < t.created_at - interval '1 second' OR s.finished_at > t.completed_at + interval '1 second'",
    )
    .fetch_all(&fleet.app.pool)
    .await
    .unwrap_or_default();
    if !astray.is_empty() {
        outcome.violations.push(format!("{} steps are timed outside their task's life, e.g. {:?}", astray.len(), &astray[..astray.len().min(3)]));
    }
    conclude(fleet, load, before, outcome).await
}

/// Once every task is final, a violation (saying `why` none should have) for each that timed out.
async fn no_task_timed_out(fleet: &Fleet, outcome: &mut Outcome, why: &str) {
    wait_until_all_final(fleet).await;
    let timeouts: Result<i64, _> =
        sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE status = 'timeout'").fetch_one(&fleet.app.pool).await;
    match timeouts {
        Ok(0) => {}
        Ok(n) => outcome.violations.push(format!("{n} tasks timed out: {why}")),
        Err(err) => outcome.violations.push(format!("the timeouts could not be counted: {err}")),
    }
}

/// Waits (up to two minutes) until no task is unfinished.
async fn wait_until_all_final(fleet: &Fleet) {
    let give_up = Instant::now() + Duration::from_secs(120);
    while Instant::now() < give_up {
        let open: i64 = sqlx::query_scalar("SELECT count(*) FROM quick_action_tasks WHERE completed_at IS NULL")
            .fetch_one(&fleet.app.pool)
            .await
            .unwrap_or(1);
        if open == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// 7. The model at scale: a 429 storm with `Retry-After`, and a model that takes requests and never
///    answers (5% of them): retries stay bounded and inside each task's deadline, and every task
///    ends.
pub async fn model_faults(options: &ChaosOptions) -> Outcome {
    let fleet = Fleet::start(options, FleetSettings::default()).await;
    let started = Instant::now();
    let storm = (options.size(8.0, 20.0), options.size(10.0, 30.0));
    let in_storm = move || {
        let t = started.elapsed().as_secs_f64();
        t >= storm.0 && t < storm.0 + storm.1
    };
    // No request hangs in the seconds after the storm, while the probe times the recovery: the
    // first request after a pause goes alone, and a hung one holds every worker for the probe
    // window (worker/src/provider/gate.rs, PROBE_WINDOW, 5 s) by design, which would time the
    // hang, not the storm's recovery.
    let recovering = move || {
        let t = started.elapsed().as_secs_f64();
        t >= storm.0 + storm.1 && t < storm.0 + storm.1 + 10.0
    };
    let (limited, hung) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (limited_count, hung_count) = (limited.clone(), hung.clone());
    fleet.app.fake.fallback(move |request| {
        if in_storm() {
            limited_count.fetch_add(1, Ordering::Relaxed);
            Reply::RateLimited { retry_after_secs: rand::rng().random_range(1..=3) }
        } else if !is_probe(request) && !recovering() && rand::rng().random_bool(0.05) {
            hung_count.fetch_add(1, Ordering::Relaxed);
            Reply::Delayed(Duration::from_secs(3600), Box::new(Reply::Status(500, "never sent".into())))
        } else {
            model_reply(request, (100, 1000))
        }
    });
    let timeout = 30;
    let plan = LoadPlan { tasks: options.size(200, 1200), rate: 10.0, local_share: 0.1, timeout_secs: timeout, ..LoadPlan::default() };
    let load = Load::start(&fleet, plan);
    let before = warm_up(&fleet, options).await;
    let mut outcome = Outcome::default();
    tokio::time::sleep(Duration::from_secs_f64(storm.0 + storm.1).saturating_sub(started.elapsed())).await;
    outcome.faults = 1;
    outcome.recoveries.push(load.probe(false).await);
    while !load.submitted_all() {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    wait_until_all_final(&fleet).await;
    let late: Vec<(uuid::Uuid, f64)> = sqlx::query_as(
        "SELECT id, extract(epoch FROM completed_at - created_at)::float8 FROM quick_action_tasks
         WHERE completed_at > created_at + make_interval(secs => timeout_seconds + 5)",
    )
    .fetch_all(&fleet.app.pool)
    .await
    .unwrap_or_default();
    if !late.is_empty() {
        outcome.violations.push(format!("{} tasks ended more than 5 s past their deadline, e.g. {:?}", late.len(), &late[..late.len().min(3)]));
    }
    let requests = fleet.app.fake.requests().len();
    outcome.figure(
        "model requests (answered 429, never answered)",
        format!("{requests} ({}, {})", limited.load(Ordering::Relaxed), hung.load(Ordering::Relaxed)),
    );
    outcome.figure("storm (s from the start, length)", format!("{:.0}, {:.0}", storm.0, storm.1));
    conclude(fleet, load, before, outcome).await
}
