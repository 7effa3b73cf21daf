//! Model providers behind one interface.
//!
//! A provider takes the conversation so far (OpenAI chat-completions messages) and the tool
//! definitions, and answers with one assistant message: text and/or tool calls, plus token usage.
//! - [`gate`]: the fleet's limits and pauses of each model, and the fallback chain.
//! - [`choice`]: which provider serves a task (the fast path, the hand-over to the model).
//! - [`openai`]: any OpenAI-compatible endpoint, through async-openai.
//! - [`local`]: the deterministic provider that needs no network.
//! - [`parse`]: the lenient reading of chat-completions responses both use.
//! - [`retry_after`]: the wait a rate-limited endpoint asks for, from its answer's headers.

pub mod choice;
pub mod gate;
pub mod local;
pub mod openai;
pub mod parse;
pub mod retry_after;

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use quickact_time::TimeContext;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::question::Question;

/// One request to a model, borrowed from the run that makes it (a run asks at every turn, and
/// its conversation and answers grow with each one: they are not copied for the request).
#[derive(Debug, Clone)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    /// Messages in the chat-completions wire format.
    pub messages: Vec<&'a Value>,
    /// Tool definitions in the chat-completions wire format (the registry's, shared).
    pub tools: Arc<Vec<Value>>,
    /// The same run as data, for providers that act on it directly rather than read the
    /// conversation written for a model (the local provider). Model providers ignore it.
    pub run: RunInput<'a>,
}

/// What a run is about and what its tools have answered, as data.
#[derive(Debug, Clone)]
pub struct RunInput<'a> {
    /// The user's sentence.
    pub sentence: &'a str,
    /// The moment it was written, in the user's zone.
    pub time: TimeContext,
    /// Every tool call answered so far, in order.
    pub answered: &'a [AnsweredCall],
    /// For a reply, the question it answers.
    pub question: Option<&'a Question>,
}

/// A tool call and its answer as the journal recorded it: the full result (not the compact view a
/// model reads), or the error.
#[derive(Debug, Clone, PartialEq)]
pub struct AnsweredCall {
    pub tool: String,
    pub result: Result<Value, String>,
}

/// A tool call the model asked for. `arguments` is the raw text the model produced; it may be
/// anything, and is validated by the tool registry, not here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Tokens of one turn, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Prompt tokens, cached ones included.
    pub input: u64,
    pub output: u64,
    pub cached: u64,
}

/// The model's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReply {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Tokens,
    pub finish_reason: Option<String>,
    /// The model that actually answered (providers may resolve aliases).
    pub model: String,
}

impl ModelReply {
    /// The assistant message to append to the conversation (and to journal).
    pub fn to_message(&self) -> Value {
        let mut message = serde_json::json!({ "role": "assistant", "content": self.content });
        if !self.tool_calls.is_empty() {
            message["tool_calls"] = self
                .tool_calls
                .iter()
                .map(|call| {
                    serde_json::json!({
                        "id": call.id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments },
                    })
                })
                .collect();
        }
        message
    }
}

/// Why a model request failed, and whether trying again may help.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    /// Rate limits, server errors, timeouts, dropped connections, unreadable answers: retry with
    /// backoff while the task's time budget lasts.
    #[error("{message}")]
    Transient { message: String, retry_after: Option<Duration> },
    /// The request itself is refused (bad key, unknown model, invalid request): retrying is futile.
    #[error("{message}")]
    Fatal { message: String },
}

impl ProviderError {
    pub fn is_transient(&self) -> bool {
        matches!(self, ProviderError::Transient { .. })
    }
}

/// A source of assistant turns.
pub trait ModelProvider: Send + Sync {
    /// What `model_used` records for this provider's turns when the reply names no model.
    fn default_model(&self) -> &str;

    /// Whether turns are answered in process, at once and for free (the local provider): a run
    /// then keeps its steps in one transaction instead of committing around each turn.
    fn is_local(&self) -> bool {
        false
    }

    /// One chat-completions round trip.
    fn complete<'a>(&'a self, request: &'a ChatRequest<'_>) -> BoxFuture<'a, Result<ModelReply, ProviderError>>;
}
