//! The cost budget a run asks before each paid model turn (see
//! `quickact_shared::domain::cost_budget`): the user's own limits over the deployment's, against
//! what the user spent this UTC day and month, plus what this run paid and has not written yet.
//! One statement per paid turn (a model's turn takes seconds); a local turn asks nothing.

use quickact_shared::{
    domain::cost_budget::{BudgetRefusal, refusal},
    store::{cost_budgets::user_budget, ending::Ending},
};

use super::run::{Run, RunEnd, RunError};

impl Run<'_> {
    /// The budget that refuses the run's next paid turn, if one does.
    pub(super) async fn budget_refusal(&self) -> Result<Option<BudgetRefusal>, RunError> {
        let Some(budget) = user_budget(self.cx.pool, self.cx.task.user_id).await? else {
            return Ok(None);
        };
        let limits = budget.own.over(self.cx.budgets);
        Ok(refusal(limits, &budget.spend, self.ledger.unrecorded_cost(), &self.cx.task.currency))
    }

    /// Ends the run with the refusal's verdict (`reason: budget_exhausted`, when it renews).
    pub(super) async fn end_for_the_budget(&mut self, refusal: BudgetRefusal) -> Result<RunEnd, RunError> {
        tracing::info!(
            task_id = %self.cx.task.id,
            period = refusal.period.as_str(),
            limit_nanos = refusal.limit_nanos,
            spent_nanos = refusal.spent_nanos,
            "a cost budget refused the run"
        );
        let period = refusal.period;
        let end = self.ledger.end(Ending::BudgetExhausted(refusal)).await?;
        if let RunEnd::Finished(_) = end {
            quickact_shared::metrics::budget_refusal(period);
        }
        Ok(end)
    }
}
