//! Running one claimed task: keep its lease, run the agent within the time budget, and write the
//! final state, whatever happens on the way.
//!
//! Runs are spawned tasks owned by this process, one per task: a task claimed again while an
//! earlier run of it is still here stops that run first (see [`Runner::run_task`]).

use std::{
    collections::HashMap,
    panic::AssertUnwindSafe,
    sync::{Arc, Mutex},
    time::Duration,
};

use chrono_tz::Tz;
use futures::{
    FutureExt,
    future::{BoxFuture, Shared},
};
use quickact_shared::{
    batch::{Batched, Batcher},
    config::{ModelConfig, WorkerConfig},
    db::retry_unavailable,
    domain::task::{TaskRecord, TaskStatus},
    notify::{Notifications, StepEvents},
    queue::{failed_attempts, hand_back, hand_back_to_wait, last_failure},
    store::{
        ending::{Ending, FinalState, end_task, end_tasks},
        steps::list_steps,
        tasks::{find_task, renew_lease},
        users::find_user,
    },
};
use sqlx::PgPool;
use tokio::time::Instant;
use tracing::Instrument;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::{
    agent::{spans, Endings, RunClock, RunContext, RunEnd, RunError, RunPlan, RunShared, question::load_question, run_agent},
    groups::{self, GroupOutcome, GroupedRun, Groups},
    provider::{choice::ProviderChoice, gate::ProviderGate},
    claim::{Claimed, DueTasks},
    tools::ToolRegistry,
};

mod endings;
use endings::ending_batches;

/// Most times a task is started before it is given up (each crash, panic or lost database counts
/// one): the task row's one attempt counter, counted by each fetch. Bounds a task that keeps
/// killing its worker, which the queue alone would retry forever.
pub const MAX_TASK_ATTEMPTS: i32 = 3;

/// Most runs one ending statement ends (see [`Endings`]).
const MAX_ENDINGS: usize = 64;

/// How long a run may wait for the database to come back before it hands its task back.
const DATABASE_PATIENCE: Duration = Duration::from_secs(30);

/// Everything runs share within one worker process.
pub struct Runner {
    pub pool: PgPool,
    /// Commits that a database crash may lose without losing anything: the fetch (which claims),
    /// heartbeats, lease renewals (see [`quickact_shared::db::bookkeeping_pool`]).
    pub bookkeeping: PgPool,
    /// What every run of this process shares: pools, step notifications, endings, tools, prices.
    shared: Arc<RunShared>,
    pub notifications: Notifications,
    /// This process's name, unique per process: its leases' holders begin with it
    /// (`quickact_shared::queue::lease_holder`).
    pub name: String,
    pub worker: WorkerConfig,
    pub model: ModelConfig,
    pub providers: Arc<dyn ProviderChoice>,
    pub tools: ToolRegistry,
    /// Runs in progress in this process, by task.
    running: Mutex<HashMap<Uuid, Running>>,
    /// Fired when the shutdown grace period is over: runs stop and hand their tasks back.
    hand_back: CancellationToken,
    /// Where local runs go to be committed in groups (see [`crate::groups`]).
    groups: Groups,
    /// Told when a run of this process ended and gave its room back: a user at their cap of
    /// running tasks may have a turn again (see `crate::queue`).
    pub run_ended: tokio::sync::Notify,
    /// When the tasks this process handed back with a delay come due: the fetcher wakes then.
    pub due_tasks: DueTasks,
}

/// A run in progress in this process.
struct Running {
    /// Who holds the lease it runs under (see [`Claimed::holder`]).
    holder: String,
    /// Stops it (a child of the runner's hand-back token).
    stop: CancellationToken,
    /// Completes when it has ended.
    done: Shared<BoxFuture<'static, ()>>,
}

/// What one run of a task starts from.
struct RunOfTask {
    task: TaskRecord,
    clock: RunClock,
    holder: String,
    stop: CancellationToken,
    /// Not in a group (see [`Claimed::alone`]).
    alone: bool,
}

/// What a run reads before it starts (see [`Runner::reads`]).
struct Reads {
    journal: Vec<quickact_shared::store::steps::Step>,
    user_model: Option<String>,
    question: Option<crate::agent::question::Question>,
}

/// Why an attempt at a task failed; the task is handed back and tried again after a pause.
#[derive(Debug, thiserror::Error)]
pub enum AttemptFailure {
    /// The database stayed away longer than a run waits for it.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// The run could not go on (see [`RunError`]).
    #[error("{0}")]
    Run(#[from] RunError),
    /// The run panicked.
    #[error("the run crashed ({0})")]
    Panicked(String),
}

/// How one attempt at a task ended.
enum Attempt {
    /// Nothing more to do here: the task is final, or another worker holds it.
    Settled,
    /// Shutting down: the task was given back to the queue unfinished.
    HandedBack,
    /// The attempt failed; the task goes back to the queue, to be tried again after a pause.
    Failed(AttemptFailure),
}

impl Runner {
    pub fn new(
        pool: PgPool,
        notifications: Notifications,
        name: String,
        worker: WorkerConfig,
        model: ModelConfig,
        providers: Arc<dyn ProviderChoice>,
        tools: ToolRegistry,
    ) -> Arc<Self> {
        // The bookkeeping pool: the fetch, the heartbeat, lease renewals and hand-backs, and one
        // statement of step notifications at a time. The journal's: a run holds one for a
        // statement at a time.
        let sizes = quickact_shared::db::WorkerPools::within(worker.database_connections);
        let bookkeeping = quickact_shared::db::bookkeeping_pool(&pool, sizes.bookkeeping);
        let journal = quickact_shared::db::planning_once(&pool, sizes.journal);
        let shared = Arc::new(RunShared {
            pool: pool.clone(),
            step_events: StepEvents::start(bookkeeping.clone()),
            endings: ending_batches(journal.clone()),
            journal,
            lazy_journal: quickact_shared::db::bookkeeping_pool(&pool, sizes.lazy_journal),
            tools: tools.clone(),
            prices: model.prices.clone(),
            budgets: model.budgets,
            gate: ProviderGate::new(bookkeeping.clone(), notifications.clone(), &model),
        });
        let groups = groups::start(shared.clone());
        Arc::new(Runner {
            pool,
            bookkeeping,
            shared,
            notifications,
            name,
            worker,
            model,
            providers,
            tools,
            running: Mutex::new(HashMap::new()),
            hand_back: CancellationToken::new(),
            groups,
            run_ended: tokio::sync::Notify::new(),
            due_tasks: DueTasks::default(),
        })
    }

    /// Ends the shutdown grace period: runs still going stop and give their tasks back.
    pub fn hand_back_all(&self) {
        self.hand_back.cancel();
    }

    /// Local runs waiting to be taken into a group (see [`crate::groups`]).
    pub fn runs_waiting_for_a_group(&self) -> usize {
        self.groups.waiting()
    }

    /// Endings waiting to be taken into a batch (see [`Endings`]).
    pub fn endings_waiting(&self) -> usize {
        self.shared.endings.waiting()
    }

    /// Number of runs in progress in this process.
    pub fn running_count(&self) -> usize {
        self.running.lock().expect("running map lock").len()
    }

    /// Runs a task this process claimed to a final state (or until it is handed back). The
    /// claim's permit is held until then.
    ///
    /// A task this process runs keeps its lease renewed, so fetches skip it; but its claim may be
    /// lost and the task fetched again by this process while the earlier run is still here (its
    /// lease lapsed while the process stalled, or the run stopped as its claim was lost and has not
    /// left yet): that run's writes are refused, as they check its holder. It is stopped, and this
    /// claim runs once it has ended.
    pub async fn run_task(self: &Arc<Self>, claimed: Claimed) {
        let Claimed { task, clock, holder, alone, permit } = claimed;
        let task_id = task.id;
        let earlier = self.running.lock().expect("running map lock").remove(&task_id);
        if let Some(earlier) = earlier {
            tracing::info!(task_id = %task_id, "task claimed again: its earlier run here stops first");
            earlier.stop.cancel();
            earlier.done.await;
        }
        let stop = self.hand_back.child_token();
        let runner = self.clone();
        let ours = holder.clone();
        // Every line a run logs carries the task, its user and this worker (as fields of this
        // span; top-level keys of `span` in JSON logs).
        // The same span continues the task's trace when traces are exported (see `agent::spans`).
        let span = spans::run_span(&task, &self.name);
        let run = RunOfTask { task, clock, holder: holder.clone(), stop: stop.clone(), alone };
        // Spawned and recorded under one lock: a run that ends at once removes its entry only
        // after it was recorded, so no entry of a finished run is left behind.
        let done = {
            let mut running = self.running.lock().expect("running map lock");
            let done = tokio::spawn(
                async move {
                    runner.run_to_an_end(run).await;
                    let mut running = runner.running.lock().expect("running map lock");
                    if running.get(&task_id).is_some_and(|running| running.holder == ours) {
                        running.remove(&task_id);
                    }
                }
                .instrument(span),
            )
            .map(|_| ())
            .boxed()
            .shared();
            running.insert(task_id, Running { holder, stop, done: done.clone() });
            done
        };
        done.await;
        drop(permit);
        self.run_ended.notify_one();
    }

    /// One attempt at the task. A failed attempt (a panic included) hands the task back to the
    /// queue, to be taken again after a pause that grows with its attempts.
    async fn run_to_an_end(self: &Arc<Self>, run: RunOfTask) {
        let (task_id, attempts, holder) = (run.task.id, run.task.attempts, run.holder.clone());
        let failure = match AssertUnwindSafe(self.attempt(run)).catch_unwind().await {
            Ok(Attempt::Settled) | Ok(Attempt::HandedBack) => return,
            Ok(Attempt::Failed(failure)) => failure,
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                tracing::error!(task_id = %task_id, panic = %message, "a run panicked");
                AttemptFailure::Panicked(message)
            }
        };
        let pause = Duration::from_secs(1u64 << (attempts.clamp(1, 4) - 1));
        tracing::warn!(task_id = %task_id, reason = %failure, retry_in_secs = pause.as_secs(), "attempt failed; the task goes back to the queue");
        self.give_back(task_id, &holder, Some(pause), Some(&failure.to_string())).await;
    }

    /// One attempt at a claimed task: run it, finish it.
    async fn attempt(self: &Arc<Self>, run: RunOfTask) -> Attempt {
        let RunOfTask { task, clock, holder, stop: abort, alone } = run;
        let task_id = task.id;
        tracing::info!(task_id = %task_id, attempt = task.attempts, "task claimed");
        if let Some(ended) = self.past_its_limits(&task, &holder, &clock).await {
            return ended;
        }
        let deadline = clock.instant_at(task.deadline());
        let Reads { journal, user_model, question } = match self.reads(&task).await {
            Ok(reads) => reads,
            Err(err) => return Attempt::Failed(err),
        };
        let routed_text = if question.is_some() { "" } else { task.input_text.as_str() };
        let (provider, model) = self.providers.choose(user_model.as_deref(), routed_text);
        let hand_over_to = if provider.is_local() { self.providers.hand_over_to(user_model.as_deref()) } else { None };
        let time_zone: Tz = task.time_zone.parse().unwrap_or(chrono_tz::UTC);

        // The guard keeps the lease alive and stops the run the moment the task is cancelled or
        // taken over; `abort` also fires at the end of the shutdown grace period, and when the
        // task is claimed again here.
        let guard_stop = CancellationToken::new();
        let guard = tokio::spawn(self.clone().guard(task_id, holder.clone(), abort.clone(), guard_stop.clone()).in_current_span());

        let plan = Arc::new(RunPlan {
            task,
            holder: holder.clone(),
            model,
            provider,
            hand_over_to,
            time_zone,
            clock,
            deadline,
            abort,
            span: tracing::Span::current(),
            question,
        });
        let context = RunContext::new(&self.shared, &plan, false);
        // A first try of a local run goes into a group; a retry (after a failure) runs alone, and
        // so does a user's last waiting task while other users work through backlogs (a group
        // commits after all its runs: one sentence should not wait for a backlog's group).
        let outcome = if plan.provider.is_local() && plan.task.attempts <= 1 && !alone {
            let run = GroupedRun { plan: plan.clone(), journal };
            tokio::time::timeout_at(deadline, self.run_grouped(&context, run)).await
        } else {
            tokio::time::timeout_at(deadline, run_agent(&context, &journal)).await
        };
        guard_stop.cancel();
        let _ = guard.await;
        self.settle(outcome, &plan, &holder).await
    }

    /// A task past its limits is ended, not run: tried more than [`MAX_TASK_ATTEMPTS`] times (claims
    /// that ended waiting for a model do not count), or past its deadline (on the database's clock,
    /// as the claim read it: this machine's may be minutes off).
    async fn past_its_limits(&self, task: &TaskRecord, holder: &str, clock: &RunClock) -> Option<Attempt> {
        let pool = &self.pool;
        // Only when the claims pass the cap are the failed attempts read, to tell.
        let failed = if task.attempts > MAX_TASK_ATTEMPTS {
            match retry_unavailable(DATABASE_PATIENCE, || failed_attempts(pool, task.id)).await {
                Ok(failed) => failed,
                Err(err) => return Some(Attempt::Failed(err.into())),
            }
        } else {
            task.attempts
        };
        if failed > MAX_TASK_ATTEMPTS {
            let last_failure = match last_failure(pool, task.id).await {
                Ok(failure) => failure.unwrap_or_else(|| "its worker stopped unexpectedly".to_owned()),
                Err(err) => return Some(Attempt::Failed(err.into())),
            };
            return Some(self.finish(task, holder, Ending::GaveUp { attempts: MAX_TASK_ATTEMPTS, last_failure }).await);
        }
        if clock.now() >= task.deadline() {
            return Some(self.finish(task, holder, Ending::Timeout { timeout_seconds: task.timeout_seconds }).await);
        }
        None
    }

    /// What a run reads before it starts: its journal so far, the user's model, and the question a
    /// reply answers.
    async fn reads(&self, task: &TaskRecord) -> Result<Reads, AttemptFailure> {
        let pool = &self.pool;
        // Steps are written only by a run that claimed the task, so a first claim has none to read.
        let journal = if task.attempts <= 1 { Vec::new() } else { retry_unavailable(DATABASE_PATIENCE, || list_steps(pool, task.id)).await? };
        let user_model = self.user_model(task.user_id).await?;
        // A reply is read against the question it answers: a model reads it when one is
        // configured (the local reading of replies covers the common answers only).
        let question = if task.reply_to.is_some() { retry_unavailable(DATABASE_PATIENCE, || load_question(pool, task)).await? } else { None };
        Ok(Reads { journal, user_model, question })
    }

    /// Runs a local run in a group; one that stopped at a checkpoint (a hand-over to the model)
    /// goes on alone once its group committed, and so does one the group could not run.
    async fn run_grouped(&self, context: &RunContext<'_>, run: GroupedRun) -> Result<RunEnd, RunError> {
        let task_id = run.plan.task.id;
        match self.groups.call(run).await {
            Batched::Done(GroupOutcome::Checkpoint | GroupOutcome::Busy) => {
                let journal = retry_unavailable(DATABASE_PATIENCE, || list_steps(&self.shared.pool, task_id)).await?;
                run_agent(context, &journal).await
            }
            Batched::Done(GroupOutcome::Ended(result)) => result,
            // Nothing of the group was kept: the attempt failed, and the next one runs alone.
            Batched::BatchFailed { .. } => Err(RunError::Group("its group of local runs failed to commit".into())),
        }
    }

    /// The model `user_id` chose, if any: from the process's cache of users (kept true by the
    /// notification every change to a user sends, see [`quickact_shared::credentials`]), or read.
    async fn user_model(&self, user_id: Uuid) -> Result<Option<String>, sqlx::Error> {
        if let Some(user) = self.notifications.cached_user_by_id(user_id) {
            return Ok(user.model);
        }
        let seen = self.notifications.credentials().generation();
        let user = retry_unavailable(DATABASE_PATIENCE, || find_user(&self.pool, user_id)).await?;
        let Some(user) = user else { return Ok(None) };
        let model = user.model.clone();
        self.notifications.credentials().insert_user(seen, user);
        Ok(model)
    }

}
