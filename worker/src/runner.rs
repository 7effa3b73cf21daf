//! Running one task: claim it, keep its lease, run the agent within the time budget, and write
//! the final state, whatever happens on the way.
//!
//! Runs are spawned tasks owned by this process, not by the apalis worker that fetched their job:
//! if that worker has to be rebuilt (the database restarted under it), runs go on, and a job that
//! comes back for a task already running here simply joins the running one.

use std::{
    collections::HashMap,
    panic::AssertUnwindSafe,
    sync::{Arc, Mutex},
    time::Duration,
};

use chrono::Utc;
use chrono_tz::Tz;
use futures::{
    FutureExt,
    future::{BoxFuture, Shared},
};
use quickact_shared::{
    batch::Batcher,
    config::{ModelConfig, WorkerConfig},
    db::retry_unavailable,
    domain::task::{TaskRecord, TaskStatus},
    notify::{Notifications, StepEvents},
    queue::push_quick_action_job,
    store::{
        ending::{Ending, FinalState, end_task, end_tasks},
        steps::list_steps,
        tasks::{claim_task, claim_tasks, find_task, lease_of, release_lease, renew_lease},
        users::find_user,
    },
};
use sqlx::PgPool;
use tokio::{sync::Semaphore, time::Instant};
use tracing::Instrument;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::{
    agent::{Endings, RunContext, RunEnd, RunError, run_agent},
    groups::{self, GroupOutcome, GroupedRun, Groups},
    provider::ModelProvider,
    tools::ToolRegistry,
};

/// Most times a task is started before it is given up (each crash, panic or lost database counts
/// one). Bounds a task that keeps killing its worker, which the queue alone would retry forever.
pub const MAX_TASK_ATTEMPTS: i32 = 3;

/// Connections of [`Runner::bookkeeping`]: one claim statement at a time, apalis's fetch,
/// acknowledgement and heartbeat, and one statement of step notifications at a time.
const BOOKKEEPING_CONNECTIONS: u32 = 5;

/// Connections of [`Runner::journal`]: a run holds one for a statement at a time.
const JOURNAL_CONNECTIONS: u32 = 32;

/// Most tasks one claim statement takes (see [`Runner::claim`]).
const MAX_CLAIMS: usize = 64;

/// Most runs one ending statement ends (see [`Endings`]).
const MAX_ENDINGS: usize = 64;

/// How long a run may wait for the database to come back before it hands its task back.
const DATABASE_PATIENCE: Duration = Duration::from_secs(30);

/// Chooses the model provider for a task.
pub trait ProviderChoice: Send + Sync {
    /// The provider and the model name for a user whose own choice is `user_model`.
    fn choose(&self, user_model: Option<&str>, input_text: &str) -> (Arc<dyn ModelProvider>, String);

    /// Where a run that `choose` gave to the local fast path hands over when the local reading
    /// cannot finish the action: the model, when one is configured (see `agent::run`).
    fn hand_over_to(&self, _user_model: Option<&str>) -> Option<(Arc<dyn ModelProvider>, String)> {
        None
    }
}

/// Everything runs share within one worker process.
pub struct Runner {
    pub pool: PgPool,
    /// Commits that a database crash may lose without losing anything: the queue's bookkeeping and
    /// claims (see [`quickact_shared::db::bookkeeping_pool`]).
    pub bookkeeping: PgPool,
    /// The journal's statements made with nothing open, planned once per connection (see
    /// [`crate::agent::RunContext::journal`]).
    journal: PgPool,
    /// Where runs say that steps they wrote committed.
    step_events: StepEvents,
    pub notifications: Notifications,
    /// This process's name as a lease owner: unique per process.
    pub owner: String,
    pub worker: WorkerConfig,
    pub model: ModelConfig,
    pub providers: Arc<dyn ProviderChoice>,
    pub tools: ToolRegistry,
    /// Runs in progress in this process, by task.
    running: Mutex<HashMap<Uuid, Shared<BoxFuture<'static, ()>>>>,
    /// Bounds concurrent runs per process, also across rebuilt apalis workers.
    permits: Arc<Semaphore>,
    /// Fired when the shutdown grace period is over: runs stop and hand their tasks back.
    hand_back: CancellationToken,
    /// Where local runs go to be committed in groups (see [`crate::groups`]).
    groups: Groups,
    /// Claims waiting together go in one statement: a claim notifies, and Postgres commits
    /// notifying transactions one at a time. `None`: that batch failed (claim alone).
    claims: Batcher<Uuid, Option<Option<TaskRecord>>>,
    /// Endings of runs with nothing open go in one statement, for the same reason.
    endings: Endings,
}

/// How one attempt at a task ended.
enum Attempt {
    /// Nothing more to do here: the task is final, or another worker holds it.
    Settled,
    /// Shutting down: the task was given back to the queue unfinished.
    HandedBack,
    /// The attempt failed (the database stayed away); try again after a pause.
    Failed(String),
}

impl Runner {
    pub fn new(
        pool: PgPool,
        notifications: Notifications,
        owner: String,
        worker: WorkerConfig,
        model: ModelConfig,
        providers: Arc<dyn ProviderChoice>,
        tools: ToolRegistry,
    ) -> Arc<Self> {
        let permits = Arc::new(Semaphore::new(worker.concurrency));
        let bookkeeping = quickact_shared::db::bookkeeping_pool(&pool, BOOKKEEPING_CONNECTIONS);
        let step_events = StepEvents::start(bookkeeping.clone());
        let groups = groups::start(pool.clone(), step_events.clone(), owner.clone(), tools.clone(), model.prices.clone());
        let journal = quickact_shared::db::planning_once(&pool, JOURNAL_CONNECTIONS);
        let claims = claim_batches(bookkeeping.clone(), owner.clone(), worker.lease().as_secs_f64());
        let endings = ending_batches(journal.clone(), owner.clone());
        Arc::new(Runner {
            pool,
            bookkeeping,
            journal,
            step_events,
            notifications,
            owner,
            worker,
            model,
            providers,
            tools,
            running: Mutex::new(HashMap::new()),
            permits,
            hand_back: CancellationToken::new(),
            groups,
            claims,
            endings,
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
        self.endings.waiting()
    }

    /// Number of runs in progress in this process.
    pub fn running_count(&self) -> usize {
        self.running.lock().expect("running map lock").len()
    }

    /// Runs task `task_id` to a final state (or until it is handed back), joining the run already
    /// in progress in this process if there is one.
    pub async fn run_task(self: &Arc<Self>, task_id: Uuid) {
        let run = {
            let mut running = self.running.lock().expect("running map lock");
            running
                .entry(task_id)
                .or_insert_with(|| {
                    let runner = self.clone();
                    // Every line a run logs carries the task, its user (once claimed) and this
                    // worker (as fields of this span; top-level keys of `span` in JSON logs).
                    let span = tracing::info_span!("run", task_id = %task_id, user_id = tracing::field::Empty, worker = %self.owner);
                    let handle = tokio::spawn(
                        async move {
                            runner.run_until_settled(task_id).await;
                            runner.running.lock().expect("running map lock").remove(&task_id);
                        }
                        .instrument(span),
                    );
                    handle.map(|_| ()).boxed().shared()
                })
                .clone()
        };
        run.await;
    }

    /// Attempts the task until it settles. A panic is a failed attempt, not a dead worker.
    async fn run_until_settled(self: &Arc<Self>, task_id: Uuid) {
        let _permit = self.permits.clone().acquire_owned().await.expect("the semaphore is never closed");
        let mut pause = Duration::from_secs(1);
        let mut last_failure = None;
        loop {
            let attempt = AssertUnwindSafe(self.attempt(task_id, last_failure.as_deref())).catch_unwind().await;
            let failure = match attempt {
                Ok(Attempt::Settled) | Ok(Attempt::HandedBack) => return,
                Ok(Attempt::Failed(reason)) => reason,
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into());
                    tracing::error!(task_id = %task_id, panic = %message, "a run panicked");
                    format!("the run crashed ({message})")
                }
            };
            tracing::warn!(task_id = %task_id, reason = %failure, "attempt failed, retrying");
            // Let the next attempt (here or on another worker) claim the task at once.
            let _ = release_lease(&self.pool, task_id, &self.owner).await;
            last_failure = Some(failure);
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = self.hand_back.cancelled() => {
                    let _ = self.give_back(task_id).await;
                    return;
                }
            }
            pause = (pause * 2).min(Duration::from_secs(8));
        }
    }

    /// One attempt: claim, run, finish.
    async fn attempt(self: &Arc<Self>, task_id: Uuid, last_failure: Option<&str>) -> Attempt {
        let task = match self.claim_when_free(task_id).await {
            Ok(Some(task)) => task,
            Ok(None) => return Attempt::Settled,
            Err(attempt) => return attempt,
        };
        tracing::Span::current().record("user_id", tracing::field::display(task.user_id));
        tracing::info!(task_id = %task_id, attempt = task.attempts, "task claimed");
        let pool = &self.pool;

        if task.attempts > MAX_TASK_ATTEMPTS {
            let last_failure = last_failure.unwrap_or("its worker stopped unexpectedly").to_owned();
            return self.finish(&task, Ending::GaveUp { attempts: MAX_TASK_ATTEMPTS, last_failure }).await;
        }
        let deadline = task.deadline();
        if Utc::now() >= deadline {
            return self.finish(&task, Ending::Timeout { timeout_seconds: task.timeout_seconds }).await;
        }
        let deadline = Instant::now() + (deadline - Utc::now()).to_std().unwrap_or_default();

        // Steps are written only by a run that claimed the task, so a first claim has none to read.
        let journal = if task.attempts <= 1 {
            Vec::new()
        } else {
            match retry_unavailable(DATABASE_PATIENCE, || list_steps(pool, task_id)).await {
                Ok(journal) => journal,
                Err(err) => return Attempt::Failed(format!("database: {err}")),
            }
        };
        let user_model = match self.user_model(task.user_id).await {
            Ok(model) => model,
            Err(err) => return Attempt::Failed(format!("database: {err}")),
        };
        let (provider, model) = self.providers.choose(user_model.as_deref(), &task.input_text);
        let hand_over_to = if provider.is_local() { self.providers.hand_over_to(user_model.as_deref()) } else { None };
        let time_zone: Tz = task.time_zone.parse().unwrap_or(chrono_tz::UTC);

        // The guard keeps the lease alive and stops the run the moment the task is cancelled or
        // taken over; `abort` also fires at the end of the shutdown grace period.
        let abort = self.hand_back.child_token();
        let guard_stop = CancellationToken::new();
        let guard = tokio::spawn(self.clone().guard(task_id, abort.clone(), guard_stop.clone()).in_current_span());

        let context = RunContext {
            pool: &self.pool,
            journal: &self.journal,
            step_events: &self.step_events,
            endings: Some(&self.endings),
            task: &task,
            owner: &self.owner,
            attempt: task.attempts,
            model: &model,
            provider: provider.as_ref(),
            hand_over_to: hand_over_to.as_ref().map(|(provider, model)| (provider.as_ref(), model.as_str())),
            tools: &self.tools,
            prices: &self.model.prices,
            time_zone,
            deadline,
            abort: abort.clone(),
        };
        // A first try of a local run goes into a group; a retry (after a failure) runs alone.
        let grouped = provider.is_local() && last_failure.is_none();
        let outcome = if grouped {
            let run = GroupedRun {
                task: task.clone(),
                journal,
                model: model.clone(),
                provider: provider.clone(),
                hand_over_to: hand_over_to.clone(),
                time_zone,
                deadline,
                abort: abort.clone(),
                span: tracing::Span::current(),
            };
            tokio::time::timeout_at(deadline, self.run_grouped(&context, run)).await
        } else {
            tokio::time::timeout_at(deadline, run_agent(&context, &journal)).await
        };
        guard_stop.cancel();
        let _ = guard.await;

        match outcome {
            Ok(Ok(RunEnd::Finished(task))) => {
                quickact_shared::metrics::task_finished(&task);
                tracing::info!(task_id = %task_id, status = %task.status, "task finished");
                Attempt::Settled
            }
            Ok(Ok(RunEnd::Stopped(check))) => {
                tracing::info!(task_id = %task_id, ?check, "task stopped: no longer ours");
                Attempt::Settled
            }
            Ok(Ok(RunEnd::Aborted)) if self.hand_back.is_cancelled() => self.give_back(task_id).await,
            // Aborted by the guard: cancelled or taken over.
            Ok(Ok(RunEnd::Aborted)) => Attempt::Settled,
            Ok(Err(err)) => Attempt::Failed(err.to_string()),
            Err(_elapsed) => self.finish(&task, Ending::Timeout { timeout_seconds: task.timeout_seconds }).await,
        }
    }

    /// Runs a local run in a group; one that stopped at a checkpoint (a hand-over to the model)
    /// goes on alone once its group committed, and so does one the group could not run.
    async fn run_grouped(&self, context: &RunContext<'_>, run: GroupedRun) -> Result<RunEnd, RunError> {
        let task_id = run.task.id;
        match self.groups.call(run).await {
            Some(GroupOutcome::Suspended | GroupOutcome::Busy) => {
                let journal = retry_unavailable(DATABASE_PATIENCE, || list_steps(&self.pool, task_id)).await?;
                run_agent(context, &journal).await
            }
            Some(GroupOutcome::Ended(result)) => result,
            Some(GroupOutcome::Failed(reason)) => Err(RunError::Group(reason)),
            None => Err(RunError::Group("the group loop is gone".into())),
        }
    }

    /// Claims the task. When another worker holds a live lease on it (its job came back to the queue
    /// while that worker still renewed its lease, or the task was handed back twice), waits for the
    /// task to finish or the lease to lapse rather than dropping the job: a job is only let go once
    /// its task is final. `Ok(None)`: nothing left to do.
    async fn claim_when_free(self: &Arc<Self>, task_id: Uuid) -> Result<Option<TaskRecord>, Attempt> {
        let pool = &self.pool;
        // Registered before the first look, so a change in between is not missed.
        let mut changes = self.notifications.subscribe_task(task_id);
        loop {
            let claimed = retry_unavailable(DATABASE_PATIENCE, || self.claim(task_id)).await;
            match claimed {
                Ok(Some(task)) => return Ok(Some(task)),
                Ok(None) => {}
                Err(err) => return Err(Attempt::Failed(format!("database: {err}"))),
            }
            let task = retry_unavailable(DATABASE_PATIENCE, || find_task(pool, task_id)).await;
            match task {
                Ok(Some(task)) if !task.status.is_final() => {}
                Ok(_) => return Ok(None),
                Err(err) => return Err(Attempt::Failed(format!("database: {err}"))),
            }
            let lapses_in = match lease_of(pool, task_id).await {
                Ok(Some((holder, until))) => {
                    tracing::info!(task_id = %task_id, %holder, "task is held by another worker, waiting");
                    (until - Utc::now()).to_std().unwrap_or_default() + Duration::from_millis(50)
                }
                _ => Duration::from_millis(50),
            };
            tokio::select! {
                _ = changes.changed() => {}
                _ = tokio::time::sleep(lapses_in.min(Duration::from_secs(5))) => {}
                _ = self.hand_back.cancelled() => return Err(self.give_back(task_id).await),
            }
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

    /// Claims the task in the next batch of claims; alone when that batch failed, so the error
    /// reported is the task's own.
    async fn claim(&self, task_id: Uuid) -> Result<Option<TaskRecord>, sqlx::Error> {
        match self.claims.call(task_id).await {
            Some(Some(claimed)) => Ok(claimed),
            _ => claim_task(&self.bookkeeping, task_id, &self.owner, self.worker.lease().as_secs_f64()).await,
        }
    }

    /// Ends a task this process holds without a run (given up, or out of time).
    async fn finish(&self, task: &TaskRecord, ending: Ending) -> Attempt {
        let ending = &ending;
        let ended = retry_unavailable(DATABASE_PATIENCE, || end_task(&self.pool, task.id, Some(&self.owner), ending.clone())).await;
        match ended {
            Ok(Some(task)) => {
                quickact_shared::metrics::task_finished(&task);
                tracing::info!(task_id = %task.id, status = %task.status, "task finished");
                Attempt::Settled
            }
            Ok(None) => {
                tracing::info!(task_id = %task.id, "task ended elsewhere first");
                Attempt::Settled
            }
            Err(err) => Attempt::Failed(format!("database: {err}")),
        }
    }

    /// Gives an unfinished task back to the queue: the lease ends and a fresh job is pushed, in one
    /// transaction, so another worker picks it up at once and resumes from the journal.
    async fn give_back(&self, task_id: Uuid) -> Attempt {
        let (pool, owner) = (&self.pool, self.owner.as_str());
        let result = retry_unavailable(Duration::from_secs(5), || async move {
            let mut tx = pool.begin().await?;
            release_lease(&mut *tx, task_id, owner).await?;
            push_quick_action_job(&mut tx, task_id).await?;
            tx.commit().await
        })
        .await;
        match result {
            Ok(()) => {
                tracing::info!(task_id = %task_id, "task handed back to the queue");
                Attempt::HandedBack
            }
            Err(err) => {
                // The lease will lapse and the queue's orphan recovery brings the job back.
                tracing::error!(task_id = %task_id, error = %err, "could not hand the task back");
                Attempt::HandedBack
            }
        }
    }

    /// Renews the lease every third of its length and watches the task's notifications; fires
    /// `abort` when the task is no longer ours to run.
    async fn guard(self: Arc<Self>, task_id: Uuid, abort: CancellationToken, stop: CancellationToken) {
        let lease_secs = self.worker.lease().as_secs_f64();
        let every = self.worker.lease() / 3;
        let mut changes = self.notifications.subscribe_task(task_id);
        let mut next_renewal = Instant::now() + every;
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = abort.cancelled() => return,
                _ = changes.changed() => {
                    if let Ok(Some(task)) = find_task(&self.pool, task_id).await
                        && task.status != TaskStatus::Processing {
                            tracing::info!(task_id = %task_id, status = %task.status, "task changed elsewhere, stopping the run");
                            abort.cancel();
                            return;
                        }
                }
                _ = tokio::time::sleep_until(next_renewal) => {
                    next_renewal = Instant::now() + every;
                    match renew_lease(&self.pool, task_id, &self.owner, lease_secs).await {
                        Ok(true) => {}
                        Ok(false) => {
                            // A renewal waits on the row lock of the run's own writes, so it often
                            // finds the run's verdict just committed: an ended task, not a lost lease.
                            match find_task(&self.pool, task_id).await {
                                Ok(Some(task)) if task.status.is_final() => {
                                    tracing::debug!(task_id = %task_id, status = %task.status, "task ended; its lease is not renewed");
                                }
                                _ => tracing::warn!(task_id = %task_id, "lease lost, stopping the run"),
                            }
                            abort.cancel();
                            return;
                        }
                        // The database is away; the run's own writes wait for it. Keep trying.
                        Err(err) => tracing::warn!(task_id = %task_id, error = %err, "lease renewal failed"),
                    }
                }
            }
        }
    }
}

/// The loop that claims the tasks waiting together in one statement (see [`Runner::claim`]).
fn claim_batches(pool: PgPool, owner: String, lease_secs: f64) -> Batcher<Uuid, Option<Option<TaskRecord>>> {
    Batcher::start(MAX_CLAIMS, move |ids: Vec<Uuid>| {
        let (pool, owner) = (pool.clone(), owner.clone());
        async move { answers(&ids, claim_tasks(&pool, &ids, &owner, lease_secs).await, "claims") }
    })
}

/// The loop that writes the endings waiting together in one statement (see [`Endings`]).
fn ending_batches(journal: PgPool, owner: String) -> Endings {
    Batcher::start(MAX_ENDINGS, move |ends: Vec<FinalState>| {
        let (journal, owner) = (journal.clone(), owner.clone());
        async move {
            let ids: Vec<Uuid> = ends.iter().map(|end| end.id).collect();
            answers(&ids, end_tasks(&journal, Some(&owner), &ends).await, "endings")
        }
    })
}

/// A batch's answer to each of its requests (task `ids`, in order) from what its one statement
/// gave: the task it returned for that id, or `None` inside when it returned none; `None` for
/// every request when the statement failed (each is then tried alone). `what` names the batch in
/// the log.
fn answers(ids: &[Uuid], result: Result<Vec<TaskRecord>, sqlx::Error>, what: &str) -> Vec<Option<Option<TaskRecord>>> {
    match result {
        Ok(tasks) => {
            let mut tasks: HashMap<Uuid, TaskRecord> = tasks.into_iter().map(|task| (task.id, task)).collect();
            ids.iter().map(|id| Some(tasks.remove(id))).collect()
        }
        Err(err) => {
            tracing::warn!(error = %err, tasks = ids.len(), "a batch of {what} failed; each is tried alone");
            ids.iter().map(|_| None).collect()
        }
    }
}
