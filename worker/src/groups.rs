//! Local runs in groups: many runs, one transaction, one commit.
//!
//! A local run (the local provider answers in microseconds) is one transaction from its first step
//! to its verdict, and most of what it costs is that transaction's commit (a WAL flush) and, for one
//! user's runs, the wait on the user's item lock, which each run holds until it commits. So the
//! runner hands its local runs to this process's group loop, which takes every run waiting at that
//! moment and runs them one after another in ONE transaction, each inside a savepoint, then
//! commits once. With one run waiting, a group is that run alone; under load, groups grow by
//! themselves (up to [`MAX_GROUP`]), and so does what each commit carries.
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
//!   same order and cannot deadlock on them; a group holds its users' locks for one commit.
//!
//! The loop stops when its runner is dropped (its sender goes).

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use chrono_tz::Tz;
use quickact_shared::{domain::task::TaskRecord, pricing::PriceTable, store::steps::Step};
use sqlx::{PgPool, Postgres, Transaction};
use tokio::{
    sync::{mpsc, oneshot},
    time::Instant,
};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::{
    agent::{RunContext, RunEnd, RunError, run_agent_grouped},
    provider::ModelProvider,
    tools::ToolRegistry,
};

/// Most runs one group commits together.
pub const MAX_GROUP: usize = 64;

/// A local run handed to the group loop, with everything it needs owned.
pub struct GroupedRun {
    pub task: TaskRecord,
    pub journal: Vec<Step>,
    pub model: String,
    pub provider: Arc<dyn ModelProvider>,
    pub hand_over_to: Option<(Arc<dyn ModelProvider>, String)>,
    pub time_zone: Tz,
    pub deadline: Instant,
    pub abort: CancellationToken,
    /// The run's span (task, user, worker): what the run logs in the group stays in it.
    pub span: tracing::Span,
}

/// How a grouped run came out.
#[derive(Debug)]
pub enum GroupOutcome {
    /// How the run ended: `Finished` is committed; anything else was rolled back.
    Ended(Result<RunEnd, RunError>),
    /// The run stopped at a checkpoint (it must wait on a model): what it recorded is committed,
    /// and it goes on alone from its journal.
    Suspended,
    /// The group's transaction failed: nothing of this run was kept.
    Failed(String),
}

/// The sending side of the group loop, held by the runner.
#[derive(Clone)]
pub struct Groups {
    sender: mpsc::UnboundedSender<(GroupedRun, oneshot::Sender<GroupOutcome>)>,
    /// Runs handed over and not yet taken into a group.
    waiting: Arc<AtomicUsize>,
}

/// What the loop shares with the runner.
struct Shared {
    pool: PgPool,
    owner: String,
    tools: ToolRegistry,
    prices: PriceTable,
}

impl Groups {
    /// Starts this process's group loop.
    pub fn start(pool: PgPool, owner: String, tools: ToolRegistry, prices: PriceTable) -> Groups {
        let (sender, receiver) = mpsc::unbounded_channel();
        let waiting = Arc::new(AtomicUsize::new(0));
        tokio::spawn(serve(Shared { pool, owner, tools, prices }, receiver, waiting.clone()));
        Groups { sender, waiting }
    }

    /// Runs handed over and not yet taken into a group.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Runs `run` in the next group and waits for the group's commit. `None`: the loop is gone.
    pub async fn run(&self, run: GroupedRun) -> Option<GroupOutcome> {
        let (reply, outcome) = oneshot::channel();
        self.waiting.fetch_add(1, Ordering::SeqCst);
        if self.sender.send((run, reply)).is_err() {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        outcome.await.ok()
    }
}

async fn serve(
    shared: Shared,
    mut receiver: mpsc::UnboundedReceiver<(GroupedRun, oneshot::Sender<GroupOutcome>)>,
    waiting: Arc<AtomicUsize>,
) {
    while let Some(first) = receiver.recv().await {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match receiver.try_recv() {
                Ok(next) => group.push(next),
                Err(_) => break,
            }
        }
        waiting.fetch_sub(group.len(), Ordering::SeqCst);
        group.sort_by_key(|(run, _)| (run.task.user_id, run.task.id));
        run_group(&shared, group).await;
    }
}

/// Runs one group and tells each run how it came out, once the group's fate is known.
async fn run_group(shared: &Shared, group: Vec<(GroupedRun, oneshot::Sender<GroupOutcome>)>) {
    let size = group.len();
    let started = Instant::now();
    let mut tx = match shared.pool.begin().await {
        Ok(tx) => Some(tx),
        Err(err) => return fail_all(group.into_iter().map(|(_, reply)| reply), &format!("database: {err}")),
    };
    let mut outcomes = Vec::with_capacity(size);
    for (run, reply) in group {
        let outcome = match tx.take() {
            Some(open) => {
                let (result, back) = run_one(shared, &run, open).await;
                tx = back;
                Some(result)
            }
            // An earlier run lost the group's transaction: nothing of this group will commit.
            None => None,
        };
        outcomes.push((reply, outcome));
    }
    let committed = match tx {
        Some(tx) => tx.commit().await.map_err(|err| format!("database: {err}")),
        None => Err("database: the group's transaction failed".to_owned()),
    };
    match committed {
        Ok(()) => {
            tracing::debug!(size, took_ms = started.elapsed().as_millis() as u64, "group committed");
            for (reply, outcome) in outcomes {
                let outcome = match outcome.expect("a committed group ran every run") {
                    Ok(None) => GroupOutcome::Suspended,
                    Ok(Some(end)) => GroupOutcome::Ended(Ok(end)),
                    Err(err) => GroupOutcome::Ended(Err(err)),
                };
                let _ = reply.send(outcome);
            }
        }
        Err(reason) => fail_all(outcomes.into_iter().map(|(reply, _)| reply), &reason),
    }
}

/// One run of a group, inside its own savepoint of `tx`; gives `tx` back unless it was lost.
async fn run_one(
    shared: &Shared,
    run: &GroupedRun,
    mut tx: Transaction<'static, Postgres>,
) -> (Result<Option<RunEnd>, RunError>, Option<Transaction<'static, Postgres>>) {
    if let Err(err) = sqlx::query("SAVEPOINT grouped_run").execute(&mut *tx).await {
        return (Err(err.into()), None);
    }
    let context = RunContext {
        pool: &shared.pool,
        task: &run.task,
        owner: &shared.owner,
        attempt: run.task.attempts,
        model: &run.model,
        provider: run.provider.as_ref(),
        hand_over_to: run.hand_over_to.as_ref().map(|(provider, model)| (provider.as_ref(), model.as_str())),
        tools: &shared.tools,
        prices: &shared.prices,
        time_zone: run.time_zone,
        deadline: run.deadline,
        abort: run.abort.clone(),
    };
    let (result, back) = run_agent_grouped(&context, &run.journal, tx).instrument(run.span.clone()).await;
    let Some(mut tx) = back else {
        return (result, None);
    };
    let keep = matches!(result, Ok(None | Some(RunEnd::Finished(_))));
    let settle = if keep { "RELEASE SAVEPOINT grouped_run" } else { "ROLLBACK TO SAVEPOINT grouped_run" };
    match sqlx::query(settle).execute(&mut *tx).await {
        Ok(_) => (result, Some(tx)),
        Err(err) => (Err(err.into()), None),
    }
}

fn fail_all(replies: impl Iterator<Item = oneshot::Sender<GroupOutcome>>, reason: &str) {
    tracing::warn!(reason, "a group of local runs failed; its runs retry alone");
    for reply in replies {
        let _ = reply.send(GroupOutcome::Failed(reason.to_owned()));
    }
}
