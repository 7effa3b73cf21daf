//! `finish`: the terminal tool and the only source of a verdict.
//!
//! The rules of a quick action are enforced here in code, not only in the prompt: a clarification
//! is accepted only when the run's last search returned two or more candidates, its options must be
//! ids from that search, and the lists the user sees are rendered by the backend from what the tools
//! observed, never retyped by the model.

use quickact_shared::{
    domain::task::{ActionOutcome, ResultType, Verdict},
    phrases::{Language, replies::Replies},
    store::ending::remember_changed_item,
};
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use super::{DatabaseUse, FINISH, RunState, ToolContext, ToolError, ToolOutput, ToolResult, TypedTool, object_schema, state::MAX_OPTIONS};

pub struct FinishTool;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishArguments {
    result_type: ResultType,
    message: String,
    suggestion: Option<String>,
    options: Option<Vec<String>>,
    /// A sentence with several actions: each one's outcome.
    actions: Option<Vec<ActionArguments>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionArguments {
    action: String,
    result_type: ResultType,
    message: String,
    suggestion: Option<String>,
    item_ids: Option<Vec<String>>,
    options: Option<Vec<String>>,
}

/// Most actions one sentence may list.
const MAX_ACTIONS: usize = 10;

/// Longest message or suggestion kept, in characters.
const MAX_MESSAGE_CHARS: usize = 1000;

impl TypedTool for FinishTool {
    const NAME: &'static str = FINISH;
    const DESCRIPTION: &'static str = "End the run with exactly one verdict. action_completed: the requested action was done (or the \
         requested list was shown). need_clarification: ONLY when the last search returned several \
         candidates that the sentence cannot tell apart (list their ids in options), or when a tool reported \
         a time that has passed or a conflict the user must decide, or, before any tool call, when the request \
         does not say what to do at all (\"帮我安排一下\"); say in suggestion how to phrase the next request. error: the request cannot be done; say why, and give a suggestion \
         for the next request. When the sentence asks for several actions, do each and list every one's \
         outcome in actions, in the sentence's order; the verdict is action_completed only when all were done.";
    type Arguments = FinishArguments;
    // The verdict is checked against the run's own record, never the database.
    const DATABASE_USE: DatabaseUse = DatabaseUse::None;

    fn schema(&self) -> Value {
        object_schema(
            json!({
                "result_type": { "type": "string", "enum": ["action_completed", "need_clarification", "error"] },
                "message": { "type": "string", "description": "One or two sentences for the user, in the user's language." },
                "suggestion": { "type": "string", "description": "How the user could phrase the next request." },
                "options": { "type": "array", "items": { "type": "string" }, "description": "Ids of candidate items (need_clarification only)." },
                "actions": {
                    "type": "array",
                    "description": "Only for a sentence with several actions: one entry per action, in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "action": { "type": "string", "description": "The action in a few words, in the user's language." },
                            "result_type": { "type": "string", "enum": ["action_completed", "need_clarification", "error"] },
                            "message": { "type": "string" },
                            "suggestion": { "type": "string" },
                            "item_ids": { "type": "array", "items": { "type": "string" }, "description": "Ids of the items this action created, changed or listed." },
                            "options": { "type": "array", "items": { "type": "string" }, "description": "Ids of candidates (need_clarification only)." }
                        },
                        "required": ["action", "result_type", "message"],
                        "additionalProperties": false
                    }
                }
            }),
            &["result_type", "message"],
        )
    }

    async fn run(&self, context: &ToolContext<'_>, _db: &mut PgConnection, args: FinishArguments) -> ToolResult {
        verdict_from(context, args).map(ToolOutput::Finish)
    }
}

fn verdict_from(context: &ToolContext<'_>, mut args: FinishArguments) -> Result<Verdict, ToolError> {
    if let Some(actions) = args.actions.take().filter(|actions| !actions.is_empty()) {
        return verdict_of_actions(context, args, actions);
    }
    let message = clip(args.message.trim());
    if message.is_empty() {
        return Err(ToolError::InvalidArguments("message must not be empty".into()));
    }
    let suggestion = args.suggestion.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(clip);
    let mut verdict = Verdict::new(args.result_type, message, suggestion);
    match args.result_type {
        ResultType::NeedClarification => clarification(context, &args, verdict),
        ResultType::ActionCompleted => completed(context.state, &args, verdict),
        ResultType::Error => {
            if verdict.suggestion.is_none() {
                verdict.suggestion = Some(replies(context).rephrase_with_details());
            }
            if !context.state.changed_items.is_empty() {
                verdict.items = Some(context.state.changed_items.clone());
            }
            Ok(verdict)
        }
    }
}

/// A `need_clarification` verdict: a decision the run met (a passed time, a conflict), a request
/// too vague to start on, or two candidates or more of the last search to choose from.
fn clarification(context: &ToolContext<'_>, args: &FinishArguments, mut verdict: Verdict) -> Result<Verdict, ToolError> {
    let state = context.state;
    let candidates = state.last_search.as_deref().unwrap_or_default();
    if let Some(decision) = &state.decision {
        // A passed time or a conflict: the user decides. Conflicting items are the options.
        let conflicts = decision.get("conflicts").and_then(Value::as_array).cloned().unwrap_or_default();
        if !conflicts.is_empty() {
            verdict.options = Some(conflicts.into_iter().take(MAX_OPTIONS).collect());
        }
        if verdict.suggestion.is_none() {
            verdict.suggestion = decision.get("suggestion").and_then(Value::as_str).map(str::to_owned);
        }
        return Ok(verdict);
    }
    // A request too vague to start on ("帮我安排一下", "schedule something"): before any tool
    // was called there is nothing to choose from, only what to add, which the suggestion says.
    let nothing_done = state.last_search.is_none() && state.changed_items.is_empty() && !state.looked_up;
    if nothing_done && args.options.as_ref().is_none_or(|o| o.is_empty()) && verdict.suggestion.is_some() {
        return Ok(verdict);
    }
    if candidates.len() < 2 {
        return Err(ToolError::Refused(match candidates.len() {
            0 if state.last_search.is_none() => "need_clarification is refused: no search was made. Search first; \
                act on a single match, or report an error when nothing matches. (A request that does not say \
                what to do at all may ask before any tool call, with a suggestion saying what to add.)"
                .into(),
            0 => "need_clarification is refused: the last search found nothing. Finish with result_type \
                error and a suggestion instead."
                .into(),
            _ => "need_clarification is refused: the last search found exactly one match. Act on it.".into(),
        }));
    }
    let chosen = chosen_options(args.options.as_deref(), state.last_search_ids())?;
    if chosen.len() < 2 {
        return Err(ToolError::Refused("need_clarification needs at least two candidates; with one, act on it".into()));
    }
    let options = candidates
        .iter()
        .filter(|item| item.get("id").and_then(Value::as_str).and_then(|id| id.parse::<Uuid>().ok()).is_some_and(|id| chosen.contains(&id)))
        .take(MAX_OPTIONS)
        .cloned()
        .collect();
    verdict.options = Some(options);
    if verdict.suggestion.is_none() {
        verdict.suggestion = Some(replies(context).name_it_precisely());
    }
    Ok(verdict)
}

/// The candidates a clarification offers: the model's `options` (ids of the last search, each
/// once), or, without any, every match of the last search (`ids`).
fn chosen_options(options: Option<&[String]>, ids: Vec<Uuid>) -> Result<Vec<Uuid>, ToolError> {
    let Some(options) = options.filter(|options| !options.is_empty()) else {
        return Ok(ids);
    };
    let mut chosen = Vec::new();
    for option in options {
        let id = option.trim().parse::<Uuid>().ok().filter(|id| ids.contains(id)).ok_or_else(|| {
            ToolError::InvalidArguments(format!("option {option:?} is not an id returned by the last search; use ids from it"))
        })?;
        if !chosen.contains(&id) {
            chosen.push(id);
        }
    }
    Ok(chosen)
}

/// An `action_completed` verdict: something was changed or looked up, and its items are what
/// changed (or, for a lookup, what the last search found).
fn completed(state: &RunState, args: &FinishArguments, mut verdict: Verdict) -> Result<Verdict, ToolError> {
    if args.options.as_ref().is_some_and(|o| !o.is_empty()) {
        return Err(ToolError::InvalidArguments("options are only for need_clarification".into()));
    }
    if state.changed_items.is_empty() && !state.looked_up {
        return Err(ToolError::Refused(
            "action_completed is refused: nothing was changed or looked up in this run. Do the action with \
             the tools first; if it cannot be done, finish with result_type error and a suggestion."
                .into(),
        ));
    }
    verdict.items = Some(if state.changed_items.is_empty() { state.last_search.clone().unwrap_or_default() } else { state.changed_items.clone() });
    Ok(verdict)
}

/// The verdict of a sentence with several actions. Each action's items and options are ids of
/// items the run changed or found, rendered by the backend; a clarification needs two candidates
/// or more, a completed action something it changed or looked up. The verdict's type follows from
/// the actions' ([`ResultType::of_all`]), whatever the model said.
fn verdict_of_actions(context: &ToolContext<'_>, args: FinishArguments, actions: Vec<ActionArguments>) -> Result<Verdict, ToolError> {
    if actions.len() > MAX_ACTIONS {
        return Err(ToolError::InvalidArguments(format!("at most {MAX_ACTIONS} actions")));
    }
    let state = context.state;
    // What the run found, overlaid with what it changed since (the latest version of each item).
    let mut known = state.found.clone();
    for item in &state.changed_items {
        remember_changed_item(&mut known, item);
    }
    let render = |ids: &Option<Vec<String>>, field: &str| -> Result<Option<Vec<Value>>, ToolError> {
        let Some(ids) = ids.as_ref().filter(|ids| !ids.is_empty()) else { return Ok(None) };
        let mut items: Vec<Value> = Vec::new();
        for id in ids {
            let item = known.iter().find(|item| item.get("id").and_then(Value::as_str) == Some(id.trim())).ok_or_else(|| {
                ToolError::InvalidArguments(format!("{field}: {id:?} is not an item this run changed or found"))
            })?;
            remember_changed_item(&mut items, item);
        }
        Ok(Some(items))
    };
    let mut outcomes = Vec::new();
    for action in actions {
        let message = clip(action.message.trim());
        if message.is_empty() || action.action.trim().is_empty() {
            return Err(ToolError::InvalidArguments("each action needs an action and a message".into()));
        }
        let items = render(&action.item_ids, "item_ids")?;
        let options = render(&action.options, "options")?;
        let mut suggestion = action.suggestion.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(clip);
        match action.result_type {
            ResultType::ActionCompleted if items.is_none() && !state.looked_up => {
                return Err(ToolError::Refused(format!(
                    "action {:?} is not completed: name the items it created, changed or listed in item_ids",
                    action.action
                )));
            }
            ResultType::NeedClarification if !state.decided && options.as_ref().is_none_or(|o| o.len() < 2) => {
                return Err(ToolError::Refused(format!(
                    "need_clarification for action {:?} needs at least two candidate ids from a search in options (or a passed time or conflict to decide); with one, act on it",
                    action.action
                )));
            }
            ResultType::ActionCompleted => {}
            _ => {
                suggestion.get_or_insert_with(|| replies(context).say_action_again());
            }
        }
        outcomes.push(ActionOutcome {
            action: clip(action.action.trim()),
            result_type: action.result_type,
            message,
            suggestion,
            items,
            options: options.map(|o| o.into_iter().take(MAX_OPTIONS).collect()),
        });
    }
    let result_type = ResultType::of_all(outcomes.iter().map(|o| o.result_type));
    let mut items = Vec::new();
    for item in outcomes.iter().filter_map(|o| o.items.as_ref()).flatten() {
        remember_changed_item(&mut items, item);
    }
    let options: Vec<Value> = outcomes.iter().filter_map(|o| o.options.clone()).flatten().take(MAX_OPTIONS).collect();
    let message = clip(args.message.trim());
    let summary = replies(context).0.join_sentences(&outcomes.iter().map(|o| o.message.as_str()).collect::<Vec<_>>());
    Ok(Verdict {
        result_type,
        message: if message.is_empty() { clip(&summary) } else { message },
        suggestion: args.suggestion.or_else(|| outcomes.iter().find_map(|o| o.suggestion.clone())),
        options: (!options.is_empty()).then_some(options),
        items: (!items.is_empty()).then_some(items),
        actions: Some(outcomes),
        ..Verdict::error(String::new(), None)
    })
}

/// The backend's own sentences (fallback suggestions) in the language of the task's sentence.
fn replies(context: &ToolContext<'_>) -> Replies {
    Replies(Language::of(context.input_text))
}

fn clip(text: &str) -> String {
    text.chars().take(MAX_MESSAGE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use serde_json::json;

    use super::*;
    use crate::tools::RunState;

    fn context(state: &RunState) -> ToolContext<'_> {
        ToolContext {
            task_id: Uuid::nil(),
            user_id: Uuid::nil(),
            input_text: "x",
            time: quickact_time::TimeContext::new(Utc::now(), chrono_tz::Asia::Shanghai),
            state,
        }
    }

    fn args(value: Value) -> FinishArguments {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn clarification_is_refused_when_search_found_one_match() {
        let mut state = RunState::default();
        state.observe("search_items", &json!({"items": [{"id": Uuid::now_v7().to_string()}]}));
        let err = verdict_from(&context(&state), args(json!({"result_type": "need_clarification", "message": "which?"}))).unwrap_err();
        assert!(matches!(err, ToolError::Refused(m) if m.contains("exactly one match")));
    }

    #[test]
    fn clarification_is_refused_without_a_search() {
        let state = RunState::default();
        let err = verdict_from(&context(&state), args(json!({"result_type": "need_clarification", "message": "which?"}))).unwrap_err();
        assert!(matches!(err, ToolError::Refused(m) if m.contains("no search")));
    }

    #[test]
    fn a_request_too_vague_to_start_on_may_ask_what_to_add_before_any_tool_call() {
        let vague = || args(json!({"result_type": "need_clarification", "message": "要安排什么？", "suggestion": "说明事项和时间"}));
        let verdict = verdict_from(&context(&RunState::default()), vague()).unwrap();
        assert_eq!((verdict.result_type, verdict.options), (ResultType::NeedClarification, None));
        // Once a search was made, a question needs its candidates, whatever the suggestion.
        let mut searched = RunState::default();
        searched.observe("search_items", &json!({"items": []}));
        assert!(matches!(verdict_from(&context(&searched), vague()), Err(ToolError::Refused(m)) if m.contains("found nothing")));
        // Options without a search are never accepted.
        let with_options = args(json!({"result_type": "need_clarification", "message": "which?", "suggestion": "s", "options": [Uuid::now_v7().to_string()]}));
        assert!(verdict_from(&context(&RunState::default()), with_options).is_err());
    }

    #[test]
    fn clarification_lists_the_backend_rendered_candidates() {
        let (a, b, c) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
        let mut state = RunState::default();
        state.observe(
            "search_items",
            &json!({"items": [{"id": a.to_string(), "title": "A"}, {"id": b.to_string(), "title": "B"}, {"id": c.to_string(), "title": "C"}]}),
        );
        let verdict = verdict_from(
            &context(&state),
            args(json!({"result_type": "need_clarification", "message": "which?", "options": [c.to_string(), a.to_string()]})),
        )
        .unwrap();
        let options = verdict.options.unwrap();
        assert_eq!(options.len(), 2);
        assert_eq!(options[0]["title"], "A");
        assert_eq!(options[1]["title"], "C");
        assert!(verdict.suggestion.is_some());
    }

    #[test]
    fn a_passed_time_makes_a_clarification_legitimate() {
        let mut state = RunState::default();
        state.observe("create_item", &json!({"outcome": "time_passed", "suggestion": "明天下午3点"}));
        let verdict = verdict_from(&context(&state), args(json!({"result_type": "need_clarification", "message": "passed"}))).unwrap();
        assert_eq!(verdict.suggestion.as_deref(), Some("明天下午3点"));
        assert_eq!(verdict.options, None);
    }

    #[test]
    fn options_must_come_from_the_last_search() {
        let mut state = RunState::default();
        state.observe(
            "search_items",
            &json!({"items": [{"id": Uuid::now_v7().to_string()}, {"id": Uuid::now_v7().to_string()}]}),
        );
        let err = verdict_from(
            &context(&state),
            args(json!({"result_type": "need_clarification", "message": "which?", "options": [Uuid::now_v7().to_string()]})),
        )
        .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(m) if m.contains("not an id returned")));
    }

    #[test]
    fn a_completed_action_needs_a_change_or_a_lookup() {
        let refused = verdict_from(&context(&RunState::default()), args(json!({"result_type": "action_completed", "message": "done"})));
        assert!(matches!(refused, Err(ToolError::Refused(m)) if m.contains("nothing was changed or looked up")));
        let searched = RunState { last_search: Some(vec![]), looked_up: true, ..Default::default() };
        assert!(verdict_from(&context(&searched), args(json!({"result_type": "action_completed", "message": "nothing tomorrow"}))).is_ok());
        let decided = RunState { decision: Some(json!({"outcome": "conflict"})), ..Default::default() };
        assert!(verdict_from(&context(&decided), args(json!({"result_type": "action_completed", "message": "done"}))).is_err(), "a refused write backs nothing");
    }

    #[test]
    fn completed_actions_carry_the_changed_items() {
        let mut state = RunState::default();
        state.observe("create_item", &json!({"item": {"id": "x", "title": "meeting"}}));
        let verdict = verdict_from(&context(&state), args(json!({"result_type": "action_completed", "message": "done"}))).unwrap();
        assert_eq!(verdict.items.unwrap()[0]["title"], "meeting");
    }

    #[test]
    fn an_empty_message_is_rejected() {
        let state = RunState::default();
        let err = verdict_from(&context(&state), args(json!({"result_type": "error", "message": "  "}))).unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(_)));
    }
}
