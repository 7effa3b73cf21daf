//! One run's state: who answers its turns, its journal so far, its ledger and its tools. The loop
//! ([`super::run`]), a tool call ([`super::tool_call`]) and a model turn ([`super::turn`]) each add
//! their part of its behaviour.

use quickact_shared::phrases::{Language, replies::Replies};
use serde_json::Value;

use super::{context::RunContext, journal::Replay, ledger::Ledger};
use crate::provider::ModelProvider;

/// One run: who answers its turns, what its journal says so far, and its ledger.
pub(super) struct Run<'a> {
    pub(super) cx: &'a RunContext<'a>,
    /// Who answers the turns now: the context's provider, or the model after a hand-over.
    pub(super) provider: &'a dyn ModelProvider,
    pub(super) model: &'a str,
    /// The conversation and tool observations so far, rebuilt from the journal and kept current.
    pub(super) replay: Replay,
    pub(super) ledger: Ledger<'a>,
    /// The tools a model's turn is offered: the registry's and, listed before the run's first
    /// model turn, the external tools the task's user may call (see [`crate::mcp`]). `None`:
    /// not listed yet, or no MCP server is registered.
    pub(super) model_tools: Option<std::sync::Arc<Vec<Value>>>,
}

impl Run<'_> {
    /// The engine's sentences in the language of the task's sentence.
    pub(super) fn replies(&self) -> Replies {
        Replies(Language::of(&self.cx.task.input_text))
    }
}
