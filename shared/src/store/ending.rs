//! How a task ends. Every way a task can end (the model's `finish`, a run that cannot reach a
//! verdict, the time limit, the user's cancel, a task given up after repeated failures) goes through
//! [`end_task`] (or, for a run that holds the task's lock and its journal, a [`FinalState`] ended
//! by [`end_one`] or [`end_tasks`]: one statement, its last steps and its verdict committed
//! together or not at all): it reads the journal, builds the verdict from it (message,
//! suggestion, items, options) and writes the final state, so every verdict has the same shape
//! whoever wrote it. What the verdict lists of the run (`tool_calls`, `model_turns`) is not stored
//! with it: the journal holds it once, and a read builds it ([`super::steps::list_run`]).

use serde_json::Value;
use sqlx::{Acquire, PgExecutor, PgPool, Postgres};
use uuid::Uuid;

use super::{
    steps::{Step, StepKind, list_steps, rows_json},
    tasks::{Added, TaskRead, Usage, find_task},
};
use crate::{
    domain::{
        cost_budget::{BUDGET_EXHAUSTED, BudgetRefusal},
        task::{Question, ResultType, TaskRecord, TaskStatus, Verdict},
    },
    phrases::{Language, replies::Replies},
};

/// How a task ends.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The model called `finish` with a verdict that passed the tool's checks (its `items` and
    /// `options` are the tool's).
    Finished(Verdict),
    /// The run could not reach a verdict: the model failed, or never called `finish`.
    Error { message: String, suggestion: String },
    /// The task's time budget ran out.
    Timeout { timeout_seconds: i32 },
    /// The user cancelled the task.
    Cancelled,
    /// Every attempt at the task failed (crashes, panics, a database that stayed away).
    GaveUp { attempts: i32, last_failure: String },
    /// A cost budget of the task's user refused the run's next paid model turn.
    BudgetExhausted(BudgetRefusal),
}

impl Ending {
    /// The final state and verdict of a task that ends this way after the run recorded `journal`.
    /// The engine's own words (a time limit, a cancel, a run given up) are in `language`, the
    /// sentence's.
    pub fn verdict(self, journal: &[Step], language: Language) -> (TaskStatus, Verdict) {
        let effects = RunEffects::from_journal(journal);
        let say = Replies(language);
        // `finish` chose its items; any other ending shows what the run changed before it stopped.
        let show_changed_items = !matches!(self, Ending::Finished(_));
        let (status, mut verdict) = match self {
            Ending::Finished(verdict) => (verdict.result_type.final_status(), verdict),
            Ending::Error { message, suggestion } => (TaskStatus::Failed, Verdict::error(message, Some(suggestion))),
            Ending::Timeout { timeout_seconds } => {
                let (message, suggestion) = say.timed_out(timeout_seconds);
                (TaskStatus::Timeout, Verdict::error(message, Some(suggestion)))
            }
            Ending::Cancelled => {
                let (message, suggestion) = say.cancelled();
                (TaskStatus::Cancelled, Verdict::error(message, Some(suggestion)))
            }
            Ending::BudgetExhausted(refusal) => (TaskStatus::Failed, refusal.verdict(language)),
            Ending::GaveUp { attempts, last_failure } => {
                let (message, suggestion) = say.gave_up(attempts, &last_failure);
                (TaskStatus::Failed, Verdict::error(message, Some(suggestion)))
            }
        };
        if show_changed_items && verdict.items.is_none() && !effects.changed_items.is_empty() {
            verdict.items = Some(effects.changed_items);
        }
        verdict.question = (verdict.result_type == ResultType::NeedClarification).then(|| question_of(journal, &verdict));
        (status, verdict)
    }
}

/// The kind of question a clarification asks, from what the run's tools answered: a choice among
/// the options when there are some and a search found them after the last decision a change left
/// to the user (a conflict, a passed time); else that decision (a change written after it is
/// another action's, in a sentence of several); else a choice among options, if any; else a
/// question for details. Never from the model's words.
pub fn question_of(journal: &[Step], verdict: &Verdict) -> Question {
    let options = verdict.options.as_ref().map_or(0, Vec::len);
    let action_options = verdict.actions.iter().flatten().filter_map(|action| action.options.as_ref()).map(Vec::len).max().unwrap_or(0);
    let choice = options.max(action_options) >= 2;
    let tool_results = journal.iter().rev().filter(|step| step.kind == StepKind::ToolCall && step.ok).filter_map(|step| step.result.as_ref());
    for result in tool_results {
        match result.get("outcome").and_then(Value::as_str) {
            Some("conflict") => return Question::Conflict,
            Some("time_passed") => return Question::TimePassed,
            _ => {}
        }
        let found_several = result.get("items").and_then(Value::as_array).is_some_and(|items| items.len() >= 2);
        if choice && found_several {
            return Question::WhichItem;
        }
    }
    if choice { Question::WhichItem } else { Question::Details }
}

/// What a run did, as its journal tells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunEffects {
    /// Items created or changed by the run, latest version of each, in order of first change.
    pub changed_items: Vec<Value>,
}

impl RunEffects {
    pub fn from_journal(journal: &[Step]) -> Self {
        let mut effects = RunEffects::default();
        for step in journal {
            if step.kind == StepKind::ToolCall
                && step.ok
                && let Some(item) = step.result.as_ref().and_then(changed_item)
            {
                remember_changed_item(&mut effects.changed_items, item);
            }
        }
        effects
    }
}

/// Outcomes of a tool that leave the choice to the user (a time that has passed, a conflict):
/// nothing was changed.
pub const DECISION_OUTCOMES: [&str; 2] = ["time_passed", "conflict"];

/// Whether a tool's result is an outcome that leaves the choice to the user.
pub fn is_decision(result: &Value) -> bool {
    result.get("outcome").and_then(Value::as_str).is_some_and(|outcome| DECISION_OUTCOMES.contains(&outcome))
}

/// The item a successful tool call created or changed: its result's `item` (rendered for clients),
/// unless the result is a decision left to the user.
pub fn changed_item(result: &Value) -> Option<&Value> {
    if is_decision(result) {
        return None;
    }
    result.get("item").filter(|item| item.is_object())
}

/// Adds `item` to the items a run changed: it replaces an earlier version of the same item in place,
/// or comes last.
pub fn remember_changed_item(items: &mut Vec<Value>, item: &Value) {
    let id = item.get("id");
    match items.iter_mut().find(|known| known.get("id") == id) {
        Some(known) => *known = item.clone(),
        None => items.push(item.clone()),
    }
}

/// Ends task `id`: builds the verdict of `ending` from the journal and writes the final state, if
/// `holder` still holds the task (or, with `holder = None`, if the task is unfinished at all). Returns
/// the finished task with its whole journal, or `None` when someone else decided first.
///
/// It runs in a transaction of its own, or a savepoint of the caller's (the transaction of the step
/// that ends the run, which then commits with it). It locks the task row first, as every journal
/// write does (`lock_for_holder`), so the journal it reads is whole and the verdict lists every step.
pub async fn end_task(
    db: impl Acquire<'_, Database = Postgres>,
    id: Uuid,
    holder: Option<&str>,
    ending: Ending,
) -> Result<Option<TaskRead>, sqlx::Error> {
    let mut tx = db.begin().await?;
    let sentence = sqlx::query_scalar!("SELECT input_text FROM quick_action_tasks WHERE id = $1 FOR UPDATE", id)
        .fetch_optional(&mut *tx)
        .await?;
    let language = Language::of(sentence.as_deref().unwrap_or_default());
    let journal = list_steps(&mut *tx, id).await?;
    let ended = end_one(&mut *tx, holder, &FinalState::new(id, ending, language, &journal, &[], None)).await?;
    tx.commit().await?;
    Ok(ended.map(|task| TaskRead { task, journal: Some(journal) }))
}

/// What ends one task, ready for [`end_tasks`]: its final state and verdict (built from the whole
/// journal), the run's steps not written yet, and the usage not yet added to its totals.
#[derive(Debug, Clone)]
pub struct FinalState {
    pub id: Uuid,
    status: TaskStatus,
    result_type: ResultType,
    result: Value,
    usage: Option<Usage>,
    /// The unwritten steps, as a JSON array of journal rows (see [`rows_json`]).
    steps: Value,
    /// 1 when a budget refused the run (counted in the user's refusals of the day), else 0.
    refusals: i32,
}

impl FinalState {
    /// The final state of task `id` ending this way after `journal` (`unwritten`: its last steps,
    /// not in the database yet); the engine's words in `language`, the sentence's.
    pub fn new(id: Uuid, ending: Ending, language: Language, journal: &[Step], unwritten: &[Step], usage: Option<&Usage>) -> Self {
        let (status, verdict) = ending.verdict(journal, language);
        let result = serde_json::to_value(&verdict).expect("a verdict serialises");
        let refusals = i32::from(verdict.reason.as_deref() == Some(BUDGET_EXHAUSTED));
        FinalState { id, status, result_type: verdict.result_type, result, usage: usage.cloned(), steps: rows_json(unwritten), refusals }
    }
}

/// Ends every task of `ends` that its holder (the run's lease, paired with each) still holds, in
/// one statement: each its final state, its last steps and its usage, together or not at all, and
/// notifies each verdict at commit. Returns the tasks it ended; a task missing from them was
/// decided by someone else first. A batch of many runs' endings pays one commit. (The locking
/// order and the rest: `migrations/functions/ending.sql`.)
pub async fn end_tasks(db: impl PgExecutor<'_>, owned_ends: &[(String, FinalState)]) -> Result<Vec<TaskRecord>, sqlx::Error> {
    let ends: Vec<(Option<&str>, &FinalState)> = owned_ends.iter().map(|(holder, end)| (Some(holder.as_str()), end)).collect();
    end(db, &ends).await
}

/// [`end_tasks`] of one task, whose holder is `holder` (`None`: whoever holds it, if it is
/// unfinished at all).
pub async fn end_one(db: impl PgExecutor<'_>, holder: Option<&str>, end: &FinalState) -> Result<Option<TaskRecord>, sqlx::Error> {
    Ok(self::end(db, &[(holder, end)]).await?.pop())
}

/// One call of `quickact_end_tasks` (`migrations/functions/ending.sql`), which answers the ended
/// rows in the table's own type, read here by name.
async fn end(db: impl PgExecutor<'_>, ends: &[(Option<&str>, &FinalState)]) -> Result<Vec<TaskRecord>, sqlx::Error> {
    let added: Vec<Added> = ends.iter().map(|(_, end)| Added::of(end.usage.as_ref())).collect();
    let column = |f: fn(&Added) -> i64| added.iter().map(f).collect::<Vec<i64>>();
    let steps: Vec<&Value> = ends.iter().flat_map(|(_, end)| end.steps.as_array().into_iter().flatten()).collect();
    sqlx::query_as("SELECT * FROM quickact_end_tasks($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)")
        .bind(ends.iter().map(|(_, end)| end.id).collect::<Vec<Uuid>>())
        .bind(ends.iter().map(|(holder, _)| *holder).collect::<Vec<Option<&str>>>())
        .bind(ends.iter().map(|(_, end)| end.status.as_str()).collect::<Vec<&str>>())
        .bind(ends.iter().map(|(_, end)| end.result_type.as_str()).collect::<Vec<&str>>())
        .bind(ends.iter().map(|(_, end)| &end.result).collect::<Vec<&Value>>())
        .bind(column(|a| a.input))
        .bind(column(|a| a.output))
        .bind(column(|a| a.cached))
        .bind(column(|a| a.cost_nanos))
        .bind(added.iter().map(|a| a.model).collect::<Vec<Option<&str>>>())
        .bind(sqlx::types::Json(&steps))
        .bind(ends.iter().map(|(_, end)| end.refusals).collect::<Vec<i32>>())
        .fetch_all(db)
        .await
}

/// What a cancel request found.
#[derive(Debug)]
pub enum CancelOutcome {
    /// The task as it ended, with its journal.
    Cancelled(TaskRead),
    AlreadyFinal(TaskRecord),
    NotFound,
}

/// Cancels a pending or processing task of `user_id` (`None`: of anyone, for an admin) at once. A
/// worker running it sees the new status before its next model turn or tool commit and stops: its
/// writes lock the same row first, so nothing is written after the cancel commits, and a step in
/// flight commits before the cancel reads the journal.
pub async fn cancel_task(pool: &PgPool, id: Uuid, user_id: Option<Uuid>) -> Result<CancelOutcome, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let locked = sqlx::query_scalar!("SELECT user_id FROM quick_action_tasks WHERE id = $1 FOR UPDATE", id)
        .fetch_optional(&mut *tx)
        .await?;
    if locked.is_none() || user_id.is_some_and(|user_id| locked != Some(user_id)) {
        return Ok(CancelOutcome::NotFound);
    }
    let outcome = match end_task(&mut *tx, id, None, Ending::Cancelled).await? {
        Some(task) => CancelOutcome::Cancelled(task),
        None => match find_task(&mut *tx, id).await? {
            Some(task) => CancelOutcome::AlreadyFinal(task),
            None => CancelOutcome::NotFound,
        },
    };
    tx.commit().await?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool_step(seq: i32, name: &str, ok: bool, result: Value) -> Step {
        crate::store::steps::test_step(seq, StepKind::ToolCall, name, ok, result)
    }

    #[test]
    fn a_change_replaces_the_earlier_version_of_the_same_item() {
        let journal = vec![
            tool_step(0, "create_item", true, json!({"item": {"id": "a", "title": "x"}})),
            tool_step(1, "update_item", true, json!({"item": {"id": "a", "title": "y"}, "model_view": "a -> y"})),
            tool_step(2, "create_item", true, json!({"item": {"id": "b", "title": "z"}})),
            tool_step(3, "create_item", true, json!({"outcome": "conflict", "item": {"id": "c"}})),
            tool_step(4, "delete_item", false, json!({"item": {"id": "d"}})),
        ];
        let effects = RunEffects::from_journal(&journal);
        assert_eq!(effects.changed_items, vec![json!({"id": "a", "title": "y"}), json!({"id": "b", "title": "z"})]);
    }

    #[test]
    fn endings_without_finish_show_what_the_run_changed() {
        let journal = vec![tool_step(0, "create_item", true, json!({"item": {"id": "a"}}))];
        for ending in [
            Ending::Timeout { timeout_seconds: 30 },
            Ending::Cancelled,
            Ending::Error { message: "m".into(), suggestion: "s".into() },
            Ending::GaveUp { attempts: 3, last_failure: "boom".into() },
        ] {
            let (_, verdict) = ending.verdict(&journal, Language::English);
            assert_eq!(verdict.items, Some(vec![json!({"id": "a"})]));
            assert!(verdict.tool_calls.is_empty(), "the journal lists the calls, once");
            assert!(verdict.suggestion.is_some());
        }
    }

    #[test]
    fn each_ending_has_its_final_status() {
        let finished = Verdict { result_type: ResultType::ActionCompleted, ..Verdict::error("done", None) };
        let status = |ending: Ending| ending.verdict(&[], Language::English).0;
        assert_eq!(status(Ending::Finished(finished)), TaskStatus::Success);
        assert_eq!(status(Ending::Timeout { timeout_seconds: 1 }), TaskStatus::Timeout);
        assert_eq!(status(Ending::Cancelled), TaskStatus::Cancelled);
        assert_eq!(status(Ending::Error { message: "m".into(), suggestion: "s".into() }), TaskStatus::Failed);
        assert_eq!(status(Ending::GaveUp { attempts: 3, last_failure: "x".into() }), TaskStatus::Failed);
    }

    #[test]
    fn finish_keeps_the_items_it_chose() {
        let journal = vec![tool_step(0, "create_item", true, json!({"item": {"id": "a"}}))];
        let clarification = Verdict { result_type: ResultType::NeedClarification, ..Verdict::error("which one?", None) };
        let (_, verdict) = Ending::Finished(clarification).verdict(&journal, Language::English);
        assert_eq!(verdict.items, None);
    }

    #[test]
    fn a_clarification_names_its_kind_from_what_the_tools_answered() {
        let clarification = |options: usize| Verdict {
            result_type: ResultType::NeedClarification,
            options: (options > 0).then(|| (0..options).map(|i| json!({"id": i})).collect()),
            ..Verdict::error("?", None)
        };
        let question = |journal: &[Step], options| Ending::Finished(clarification(options)).verdict(journal, Language::English).1.question;
        let search = |seq| tool_step(seq, "search_items", true, json!({"items": [{"id": "a"}, {"id": "b"}], "count": 2}));
        let conflict = tool_step(1, "create_item", true, json!({"outcome": "conflict", "conflicts": [{"id": "c"}]}));
        let passed = tool_step(1, "create_item", true, json!({"outcome": "time_passed", "next_occurrence": {"date": "2026-02-08"}}));
        assert_eq!(question(&[search(0)], 2), Some(Question::WhichItem));
        assert_eq!(question(&[search(0), conflict.clone()], 1), Some(Question::Conflict), "the last change decides");
        assert_eq!(question(std::slice::from_ref(&passed), 0), Some(Question::TimePassed));
        assert_eq!(question(&[conflict, search(2)], 2), Some(Question::WhichItem), "a search after the conflict asks anew");
        assert_eq!(question(&[], 0), Some(Question::Details));
        let written = tool_step(2, "create_item", true, json!({"written": true, "item": {"id": "d"}}));
        assert_eq!(question(&[passed.clone(), written], 0), Some(Question::TimePassed), "another action's change does not hide it");
        let (_, error) = Ending::Cancelled.verdict(&[passed], Language::English);
        assert_eq!(error.question, None, "only a clarification asks");
    }

    #[test]
    fn the_engines_own_endings_speak_the_sentences_language() {
        for ending in [Ending::Timeout { timeout_seconds: 30 }, Ending::Cancelled, Ending::GaveUp { attempts: 3, last_failure: "boom".into() }] {
            let (_, zh) = ending.clone().verdict(&[], Language::Chinese);
            assert!(quickact_time::is_chinese(&zh.message) && !zh.message.contains("boom"), "{}", zh.message);
            assert!(quickact_time::is_chinese(zh.suggestion.as_deref().unwrap()));
            let (_, en) = ending.verdict(&[], Language::English);
            assert!(!quickact_time::is_chinese(&en.message), "{}", en.message);
        }
    }
}
