//! Local runs in groups: many runs, one transaction, one commit.
//!
//! A local run (the local provider answers in microseconds) is one transaction from its first step
//! to its verdict, and most of what it costs is that transaction's commit (a WAL flush) and, for one
//! user's runs, the wait on the user's item lock, which each run holds until it commits. So the
//! runner hands its local runs to this process's group loop, which takes every run waiting at that
//! moment and runs them one after another in ONE transaction, each inside a savepoint, then
//! writes every verdict they reached in one statement, and commits once. With one run waiting, a
//! group is that run alone; under load, groups grow by themselves (up to [`MAX_GROUP`]), and so
//! does what each commit carries.
//!
//! The guarantees stay those of a run alone:
//! - a run's tool effects, journal and final state are in the group's commit, or, with it, nowhere:
//!   when the commit (or the group's transaction) fails, every run of the group is told so and
//!   retries alone from its committed journal, so nothing is done twice and nothing is lost;
//! - a run that ends without a verdict (no longer its worker's, aborted, a failure) is rolled back
//!   to its savepoint, leaving the others' work in place, and the runner handles it as before;
//! - a run that must wait on a model (after a hand-over) stops at that checkpoint: what it recorded
//!   commits with the group and it goes on alone afterwards;
//! - runs are taken in user order, so groups (in several processes) take users' item locks in the
//!   same order and cannot deadlock on them; a group holds its users' locks for one commit;
//! - a group never waits on a task's row: a run whose row another transaction holds (the runner
//!   ending it at its deadline, a cancel; either may be waiting on what the group holds) does
//!   nothing in the group and runs alone, as does a run whose time is up before its turn.
//!
//! A group runs its runs one after another, so one loop is bounded by round trips, not by the
//! machine: a process keeps [`LOOPS`] of them, and a user's runs always go to the same one. Runs
//! of different users then commit side by side, while one user's runs, which take that user's
//! item lock and hold it until their group commits, never wait on a group of another loop.
//!
//! The loops stop when their runner is dropped (their senders go).

use std::{collections::HashMap, sync::Arc};

use quickact_shared::{
    batch::{Batched, Batcher},
    domain::task::TaskRecord,
    store::{
        ending::end_tasks,
        steps::Step,
        tasks::{HolderCheck, try_lock_in_savepoint},
    },
};
use sqlx::{AssertSqlSafe, PgConnection, Postgres, Transaction};
use uuid::Uuid;
use tokio::time::Instant;
use tracing::Instrument;

use crate::agent::{Grouped, RunContext, RunEnd, RunError, RunPlan, RunShared, run_agent_grouped};

/// Most runs one group commits together.
pub const MAX_GROUP: usize = 64;

/// Group loops in a process. More loops let more users' runs commit side by side, up to what the
/// machine's CPU allows (three were worth it on 2 cores with 100 users; one user's runs share one
/// loop whatever the number: docs/performance.md).
pub const LOOPS: usize = 3;

/// A local run handed to the group loop: its plan and its committed journal.
pub struct GroupedRun {
    pub plan: Arc<RunPlan>,
    pub journal: Vec<Step>,
}

/// How a grouped run came out.
#[derive(Debug)]
pub enum GroupOutcome {
    /// How the run ended: `Finished` is committed; anything else was rolled back.
    Ended(Result<RunEnd, RunError>),
    /// The run stopped at a checkpoint (it must wait on a model): what it recorded is committed,
    /// and it goes on alone from its journal.
    Checkpoint,
    /// Nothing of the run is kept (its task's row was held elsewhere, its time was up before its
    /// turn, or one of its tools failed): it runs alone.
    Busy,
}

/// This process's group loops (each a [`Batcher`]).
pub struct Groups {
    loops: Vec<Batcher<GroupedRun, GroupOutcome>>,
}

impl Groups {
    /// Runs `run` in a group of its user's loop (`BatchFailed`: the group's transaction failed,
    /// and nothing of the run was kept).
    pub async fn call(&self, run: GroupedRun) -> Batched<GroupOutcome> {
        let user = run.plan.task.user_id.as_u128();
        self.loops[(user % self.loops.len() as u128) as usize].call(run).await
    }

    /// Runs waiting to be taken into a group, in every loop.
    pub fn waiting(&self) -> usize {
        self.loops.iter().map(Batcher::waiting).sum()
    }
}

/// Starts this process's group loops.
pub fn start(shared: Arc<RunShared>) -> Groups {
    let loops = (0..LOOPS)
        .map(|_| {
            let shared = shared.clone();
            Batcher::start(MAX_GROUP, "local runs", move |runs| {
                let shared = shared.clone();
                async move { run_group(&shared, runs).await }
            })
        })
        .collect();
    Groups { loops }
}

/// Runs one group, in user order, writes its verdicts, and says how each run (in the order
/// given) came out once the group's fate is known.
async fn run_group(shared: &RunShared, runs: Vec<GroupedRun>) -> Result<Vec<GroupOutcome>, sqlx::Error> {
    let size = runs.len();
    let started = Instant::now();
    let mut order: Vec<usize> = (0..size).collect();
    order.sort_by_key(|&i| (runs[i].plan.task.user_id, runs[i].plan.task.id));
    let mut tx = Some(shared.pool.begin().await?);
    let mut results: Vec<Option<Result<Grouped, RunError>>> = (0..size).map(|_| None).collect();
    for (place, i) in order.into_iter().enumerate() {
        // An earlier run lost the group's transaction: nothing of this group will commit.
        let Some(open) = tx.take() else { break };
        let (result, back) = run_one(shared, &runs[i], place, open).await;
        tx = back;
        results[i] = Some(result);
    }
    let Some(mut tx) = tx else {
        return Err(sqlx::Error::Protocol("a run of the group lost its transaction".into()));
    };
    let ended = write_verdicts(&mut tx, &runs, &mut results).await?;
    tx.commit().await?;
    tracing::debug!(size, ended, took_ms = started.elapsed().as_millis() as u64, "group committed");
    Ok(results
        .into_iter()
        .zip(&runs)
        .map(|(result, run)| match result.expect("a committed group ran every run") {
            Ok(Grouped::Checkpoint) => {
                // Its steps committed with the group (an ending notifies by itself).
                shared.step_events.stepped(run.plan.task.id);
                GroupOutcome::Checkpoint
            }
            Ok(Grouped::Busy) => GroupOutcome::Busy,
            Ok(Grouped::Ended(end)) => GroupOutcome::Ended(Ok(end)),
            Err(err) => GroupOutcome::Ended(Err(err)),
        })
        .collect())
}

/// Writes every verdict the group's runs reached ([`RunEnd::Decided`]) in one statement, and
/// turns each into the task as it ended (`Finished`); says how many. Each run locked its task's
/// row, as its lease holder, before it began, and the group holds that lock: every one of them
/// ends here, or the group fails (and each run goes on alone from its committed journal).
async fn write_verdicts(tx: &mut PgConnection, runs: &[GroupedRun], results: &mut [Option<Result<Grouped, RunError>>]) -> Result<usize, sqlx::Error> {
    let mut decided = Vec::new();
    let mut ends = Vec::new();
    for (i, result) in results.iter_mut().enumerate() {
        if let Some(Ok(Grouped::Ended(RunEnd::Decided(_)))) = result
            && let Some(Ok(Grouped::Ended(RunEnd::Decided(end)))) = result.take()
        {
            decided.push(i);
            ends.push((runs[i].plan.holder.clone(), *end));
        }
    }
    if ends.is_empty() {
        return Ok(0);
    }
    let mut ended: HashMap<Uuid, TaskRecord> = end_tasks(&mut *tx, &ends).await?.into_iter().map(|task| (task.id, task)).collect();
    for i in decided {
        let Some(task) = ended.remove(&runs[i].plan.task.id) else {
            return Err(sqlx::Error::Protocol("a grouped run's task was not ended with its group's verdicts".into()));
        };
        results[i] = Some(Ok(Grouped::Ended(RunEnd::Finished(Box::new(task)))));
    }
    Ok(ends.len())
}

/// One run of a group, inside a savepoint of `tx` of its own (`place`: its place in the group);
/// gives `tx` back unless it was lost.
async fn run_one(
    shared: &RunShared,
    run: &GroupedRun,
    place: usize,
    mut tx: Transaction<'static, Postgres>,
) -> (Result<Grouped, RunError>, Option<Transaction<'static, Postgres>>) {
    if Instant::now() >= run.plan.deadline {
        return (Ok(Grouped::Busy), Some(tx));
    }
    // Never released: a kept run's savepoint stays open to the commit, which keeps it, and a
    // release would cost a statement per run. Named by place, so a rollback finds this one; sent
    // as simple queries, so the names leave no prepared statements behind. The task's row is
    // locked in the same round trip, without waiting: the group holds locks of the runs before
    // (their rows, their users' room under the cap, which a task's ending takes), and whoever
    // holds this row (the runner ending it at its deadline, a cancel) may be waiting on them.
    let savepoint = format!("grouped_run_{place}");
    let (result, back) = match try_lock_in_savepoint(&mut tx, &savepoint, run.plan.task.id, &run.plan.holder).await {
        Ok(Some(HolderCheck::Owned)) => {
            let context = RunContext::new(shared, &run.plan, true);
            run_agent_grouped(&context, &run.journal, tx).instrument(run.plan.span.clone()).await
        }
        Ok(Some(check)) => (Ok(Grouped::Ended(RunEnd::Stopped(check))), Some(tx)),
        Ok(None) => (Ok(Grouped::Busy), Some(tx)),
        Err(err) => return (Err(err.into()), None),
    };
    let Some(mut tx) = back else {
        return (result, None);
    };
    let keep = matches!(result, Ok(Grouped::Checkpoint | Grouped::Ended(RunEnd::Decided(_))));
    if !keep && let Err(err) = sqlx::raw_sql(AssertSqlSafe(format!("ROLLBACK TO SAVEPOINT {savepoint}"))).execute(&mut *tx).await {
        return (Err(err.into()), None);
    }
    (result, Some(tx))
}
