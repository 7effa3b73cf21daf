//! What a run is given: its plan (the task, its holder, its model, its clock and deadline), what
//! every run of the process shares, and the context built from both, in one place.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use quickact_shared::{
    batch::Batcher,
    domain::cost_budget::BudgetLimits,
    domain::task::TaskRecord,
    notify::StepEvents,
    pricing::PriceTable,
    store::ending::FinalState,
};
use sqlx::PgPool;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::question::Question;
use crate::{
    provider::{ModelProvider, gate::ProviderGate},
    tools::ToolRegistry,
};

/// This process's loop that writes the endings of runs with nothing open, many in one statement
/// (see [`quickact_shared::store::ending::end_tasks`]): a verdict notifies, and Postgres commits
/// notifying transactions one at a time, each through its own WAL flush. A request is the run's
/// lease holder and its final state; the answer is the task as it ended, `None` when it was no
/// longer ours.
pub type Endings = Batcher<(String, FinalState), Option<TaskRecord>>;

/// What every run of a worker process shares.
pub struct RunShared {
    /// For the tools' statements and the run's transactions.
    pub pool: PgPool,
    /// For the journal's statements made with nothing open (a turn's record, an ending in one
    /// statement): they find their rows by key, and this pool plans them once per connection (see
    /// `quickact_shared::db::planning_once`); the tools' statements, whose plans depend on the
    /// values, go through `pool`.
    pub journal: PgPool,
    /// [`RunShared::journal`] for the journal's writes that need not wait for the disk (only a
    /// task's acceptance and its verdict do; see `super::ledger`).
    pub lazy_journal: PgPool,
    /// Where runs say that steps they wrote committed (see [`StepEvents`]).
    pub step_events: StepEvents,
    /// Where a run with nothing open ends (see [`Endings`]).
    pub endings: Endings,
    pub tools: ToolRegistry,
    pub prices: PriceTable,
    /// The deployment's default cost budgets (a user's own override them).
    pub budgets: BudgetLimits,
    /// The fleet's limits and pauses of each model, and the fallback chain.
    pub gate: ProviderGate,
}

/// A run's clock: the database's, as the claim read it, carried on by this process's monotonic
/// clock. The run's deadline and its steps' times go by it, never by this machine's wall clock: that
/// may be minutes off the database's, which stamps the task's creation, its lease and its verdict
/// (see `quickact_shared::queue`).
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    /// The database's `now()` at the claim.
    database_now_at_claim: DateTime<Utc>,
    /// When the claim's answer arrived here, after the database's `now()` was read: the run's
    /// clock lags the database's by at most the claim's round trip, and never runs ahead of it, so
    /// a step is never stamped after the verdict that follows it, nor a deadline passed early.
    claimed: Instant,
}

impl RunClock {
    /// The clock of a claim whose answer arrived at `claimed` with the database's `now()`.
    pub fn new(database_now_at_claim: DateTime<Utc>, claimed: Instant) -> Self {
        RunClock { database_now_at_claim, claimed }
    }

    /// The database's time now, as the run tells it.
    pub fn now(&self) -> DateTime<Utc> {
        // A run lasts seconds; an elapsed time chrono cannot hold would take ages.
        self.database_now_at_claim + chrono::Duration::from_std(self.claimed.elapsed()).unwrap_or_default()
    }

    /// When the database's clock shows `at`, on this process's monotonic clock (the claim's moment
    /// for a time already past then).
    pub fn instant_at(&self, at: DateTime<Utc>) -> Instant {
        self.claimed + (at - self.database_now_at_claim).to_std().unwrap_or_default()
    }
}

/// One run, as its worker plans it: owned, so it can be handed to a group loop.
pub struct RunPlan {
    pub task: TaskRecord,
    /// Who holds the task's lease: this worker's claim (see `crate::claim::Claimed::holder`).
    pub holder: String,
    pub model: String,
    pub provider: Arc<dyn ModelProvider>,
    /// With the local fast path and a model configured: the model provider and model name the run
    /// hands over to (see `super::run`).
    pub hand_over_to: Option<(Arc<dyn ModelProvider>, String)>,
    pub time_zone: Tz,
    /// The database's clock, for the run's steps.
    pub clock: RunClock,
    /// When the task's time budget ends (on the database's clock, see [`RunClock::instant_at`]).
    pub deadline: Instant,
    /// Cancelled when the run must stop at once (task cancelled or taken over, shutdown).
    pub abort: CancellationToken,
    /// The run's span (task, user, worker): what the run logs stays in it, also in a group.
    pub span: tracing::Span,
    /// For a reply, the question it answers (see [`super::question`]).
    pub question: Option<Question>,
}

/// Everything a run needs, borrowed from its plan and what the process shares.
pub struct RunContext<'a> {
    pub pool: &'a PgPool,
    /// See [`RunShared::journal`].
    pub journal: &'a PgPool,
    /// See [`RunShared::lazy_journal`].
    pub lazy_journal: &'a PgPool,
    pub step_events: &'a StepEvents,
    /// Where a run with nothing open ends (see [`Endings`]); `None`: in a statement of its own.
    pub endings: Option<&'a Endings>,
    pub task: &'a TaskRecord,
    /// Who holds the task's lease: every write checks it still does.
    pub holder: &'a str,
    /// Which attempt at the task this is (journal rows record it).
    pub attempt: i32,
    pub model: &'a str,
    pub provider: &'a dyn ModelProvider,
    pub hand_over_to: Option<(&'a dyn ModelProvider, &'a str)>,
    pub tools: &'a ToolRegistry,
    pub prices: &'a PriceTable,
    /// See [`RunShared::budgets`].
    pub budgets: BudgetLimits,
    pub gate: &'a ProviderGate,
    pub time_zone: Tz,
    /// The database's clock: what the run's steps are stamped with.
    pub clock: RunClock,
    pub deadline: Instant,
    pub abort: CancellationToken,
    /// See [`RunPlan::question`].
    pub question: Option<&'a Question>,
}

impl<'a> RunContext<'a> {
    /// The context of `plan`'s run, alone or in a group (a grouped run ends in its group's
    /// transaction, never in the batch of endings).
    pub fn new(shared: &'a RunShared, plan: &'a RunPlan, grouped: bool) -> Self {
        RunContext {
            pool: &shared.pool,
            journal: &shared.journal,
            lazy_journal: &shared.lazy_journal,
            step_events: &shared.step_events,
            endings: (!grouped).then_some(&shared.endings),
            task: &plan.task,
            holder: &plan.holder,
            attempt: plan.task.attempts,
            model: &plan.model,
            provider: plan.provider.as_ref(),
            hand_over_to: plan.hand_over_to.as_ref().map(|(provider, model)| (provider.as_ref(), model.as_str())),
            tools: &shared.tools,
            prices: &shared.prices,
            budgets: shared.budgets,
            gate: &shared.gate,
            time_zone: plan.time_zone,
            clock: plan.clock,
            deadline: plan.deadline,
            abort: plan.abort.clone(),
            question: plan.question.as_ref(),
        }
    }
}
