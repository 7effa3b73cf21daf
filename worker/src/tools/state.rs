//! What the run has learned from its tool calls so far.
//!
//! The state is a pure function of the journal: each recorded tool result is fed to
//! [`RunState::observe`] both live and on replay, so a run resumed on another worker knows exactly
//! what the interrupted one knew (e.g. which candidates its last search returned). What counts as a
//! changed item is decided once, in `quickact_shared::store::ending`, which builds the items of
//! verdicts that do not come from `finish` from the same journal.

use quickact_shared::store::ending::{changed_item, is_decision, remember_changed_item};
use serde_json::Value;
use uuid::Uuid;

/// Most candidates a clarification may list.
pub const MAX_OPTIONS: usize = 5;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunState {
    /// Items (as rendered for clients) returned by the most recent search, in order.
    pub last_search: Option<Vec<Value>>,
    /// Every item any search of the run returned, latest version of each (what the actions of a
    /// sentence with several may name).
    pub found: Vec<Value>,
    /// Items created or changed by this run, latest version of each, in order of first change.
    pub changed_items: Vec<Value>,
    /// The latest outcome that needs the user's decision (a time that has passed, a conflict), until
    /// a later change succeeds. It makes a clarification legitimate.
    pub decision: Option<Value>,
    /// Whether any outcome of the run needed the user's decision (kept after later changes: an
    /// action of a sentence with several may still need it).
    pub decided: bool,
    /// Whether a search or a time lookup succeeded: with a change, what may back `action_completed`
    /// (an answer to "明天有什么安排" or "下周一是几号" changes nothing).
    pub looked_up: bool,
}

impl RunState {
    /// Takes in a successful tool result. Results carry machine-readable parts: `items` for a
    /// search, `item` for a change.
    pub fn observe(&mut self, tool: &str, result: &Value) {
        if is_decision(result) {
            self.decision = Some(result.clone());
            self.decided = true;
            return;
        }
        if tool == "search_items" {
            let items = result.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
            for item in &items {
                remember_changed_item(&mut self.found, item);
            }
            self.last_search = Some(items);
            self.looked_up = true;
        } else if tool == "resolve_time" {
            self.looked_up = true;
        } else if result.get(crate::mcp::RESULT_SERVER).is_some() {
            // An external tool's answer (`crate::mcp`): the action done there backs
            // `action_completed` as a lookup does.
            self.looked_up = true;
        } else if let Some(item) = changed_item(result) {
            self.decision = None;
            remember_changed_item(&mut self.changed_items, item);
        }
    }

    /// Ids of the last search's candidates.
    pub fn last_search_ids(&self) -> Vec<Uuid> {
        self.last_search
            .iter()
            .flatten()
            .filter_map(|item| item.get("id").and_then(Value::as_str).and_then(|id| id.parse().ok()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_change_replaces_the_earlier_version_of_the_same_item() {
        let mut state = RunState::default();
        state.observe("create_item", &json!({"item": {"id": "a", "title": "x"}}));
        state.observe("update_item", &json!({"item": {"id": "a", "title": "y"}}));
        state.observe("create_item", &json!({"item": {"id": "b", "title": "z"}}));
        assert_eq!(state.changed_items, vec![json!({"id": "a", "title": "y"}), json!({"id": "b", "title": "z"})]);
    }

    #[test]
    fn a_decision_lasts_until_a_change_succeeds() {
        let mut state = RunState::default();
        state.observe("create_item", &json!({"outcome": "conflict", "conflicts": []}));
        assert!(state.decision.is_some());
        assert!(state.changed_items.is_empty());
        state.observe("create_item", &json!({"item": {"id": "a"}}));
        assert!(state.decision.is_none());
    }

    #[test]
    fn the_latest_search_wins() {
        let mut state = RunState::default();
        let id = Uuid::now_v7();
        state.observe("search_items", &json!({"items": [{"id": "junk"}]}));
        state.observe("search_items", &json!({"items": [{"id": id.to_string()}]}));
        assert_eq!(state.last_search_ids(), vec![id]);
    }
}
