//! The chaos suite's short version (`quickact_testkit::chaos`; the full one is `scripts/chaos.sh`):
//! every scenario against the API and worker binaries, one at a time, each on its own Postgres
//! cluster. Each test fails with the scenario's report when an invariant did not hold; the reports
//! gather in `target/chaos/report-short.md`.

use std::path::Path;

use quickact_testkit::chaos::{self, ChaosOptions, Outcome, Scenario};

const WORKER_BINARY: &str = env!("CARGO_BIN_EXE_quickact-worker");

/// One scenario at a time: each loads the machine, and a recovery time measured beside another
/// scenario's load would measure that load.
static ONE_AT_A_TIME: tokio::sync::Mutex<Vec<Outcome>> = tokio::sync::Mutex::const_new(Vec::new());

async fn check(scenario: Scenario) {
    let mut done = ONE_AT_A_TIME.lock().await;
    let worker = Path::new(WORKER_BINARY);
    let options = ChaosOptions { short: true, api_binary: chaos::api_binary_beside(worker), worker_binary: worker.to_owned() };
    let outcome = chaos::run(scenario, &options).await;
    let report = chaos::report(std::slice::from_ref(&outcome), &options);
    let passed = outcome.passed();
    done.push(outcome);
    let target = worker.parent().and_then(Path::parent).expect("the binary lives in target/<profile>/");
    chaos::write_report(&target.join("chaos"), &done, &options);
    assert!(passed, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_crashes_under_load() {
    check(Scenario::Crashes).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_session_purged_during_long_polls_and_streams() {
    check(Scenario::Purges).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_paused_past_its_lease_writes_nothing_after_it_wakes() {
    check(Scenario::PausedWorker).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pinned_snapshot_under_steady_load() {
    check(Scenario::PinnedSnapshot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_free_connection_held_by_another_client() {
    check(Scenario::ConnectionsExhausted).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_whose_clocks_are_five_minutes_off() {
    check(Scenario::ClockSkew).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_429_storm_and_a_model_that_hangs() {
    check(Scenario::ModelFaults).await;
}
