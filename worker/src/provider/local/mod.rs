//! The local provider: a deterministic model that needs no network (the embedded default when no
//! API key is configured, and the zero-token fast path when one is).
//!
//! It reads the user's sentence with the local reader (the crate `quickact-reader`: a lexicon, one
//! parse, named rules) and answers each turn with the tool call a good model would make ([`plan`]),
//! through the same tool registry as a real model, so everything is journaled, rendered and checked
//! the same way. What it cannot read with certainty it never acts on: an `error` verdict that names
//! the words it could not read and asks to rephrase (or to configure a model), never a guess.
//!
//! - [`plan`]: frames + tool results so far -> next tool call or `finish`.
//! - [`reply`]: a reply to a question, read against the question (option, ordinal, new time, anyway).

pub mod plan;
pub mod reply;
mod say;

use chrono::Utc;
use futures::future::BoxFuture;
use quickact_reader::{Reading, Verdict, read};
use quickact_shared::phrases::Language;
use quickact_time::TimeContext;
use serde_json::json;

use self::plan::{Say, next_step, next_step_of_all};
use super::{ChatRequest, ModelProvider, ModelReply, ProviderError, ToolCall, Tokens};
use crate::tools::names::FINISH;

/// The name runs served locally record as `model_used`.
pub const LOCAL_MODEL: &str = quickact_shared::store::stats::LOCAL_MODEL;

#[derive(Debug, Default, Clone, Copy)]
pub struct LocalProvider;

/// Whether the local reader reads a sentence with certainty (every word accounted for).
pub fn understands(sentence: &str) -> bool {
    let context = TimeContext::new(Utc::now(), chrono_tz::UTC);
    read(sentence, &context).is_certain()
}

impl ModelProvider for LocalProvider {
    fn default_model(&self) -> &str {
        LOCAL_MODEL
    }

    fn is_local(&self) -> bool {
        true
    }

    fn complete<'a>(&'a self, request: &'a ChatRequest<'_>) -> BoxFuture<'a, Result<ModelReply, ProviderError>> {
        Box::pin(async move { answer(request) })
    }
}

fn answer(request: &ChatRequest<'_>) -> Result<ModelReply, ProviderError> {
    // The run as data: the sentence, its moment, and what the tools answered (full results, not
    // the text written for a model).
    let run = &request.run;
    if let Some(question) = run.question {
        let (tool, arguments) = reply::next_reply_step(question, run);
        return Ok(local_reply(tool, arguments, run.answered.len()));
    }
    let say = Say::new(Language::of(run.sentence), Some(run.time.today()));
    // A reader bug must cost a decline, not the run: a panic is read as a sentence not understood.
    let reading = std::panic::catch_unwind(|| read(run.sentence, &run.time)).unwrap_or_else(|_| {
        tracing::error!("the local reader panicked on a sentence");
        Reading { verdict: Verdict::Uncertain, frames: Vec::new(), unread: Vec::new(), chinese: quickact_time::is_chinese(run.sentence) }
    });
    let (tool, arguments) = match reading.verdict {
        Verdict::Certain if reading.frames.len() == 1 => next_step(&reading.frames[0], run.answered, &say),
        Verdict::Certain => next_step_of_all(&reading.frames, run.answered, &say),
        // "帮我安排一下": a question about what to add (a reply can say it), not an error.
        Verdict::Vague => (FINISH, json!({ "result_type": "need_clarification", "message": say.what_to_add(), "suggestion": say.say_what_and_when() })),
        Verdict::NoRequest => (FINISH, json!({ "result_type": "error", "message": say.replies().no_request(), "suggestion": say.rephrase() })),
        Verdict::Uncertain => {
            tracing::info!(unread = ?unread_words(&reading), "the local reader could not read the sentence with certainty");
            (FINISH, json!({ "result_type": "error", "message": say.not_read(&unread_words(&reading)), "suggestion": say.rephrase() }))
        }
    };
    Ok(local_reply(tool, arguments, run.answered.len()))
}

/// The words of the sentence the reader could not place, as written (at most five).
fn unread_words(reading: &Reading) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for unread in &reading.unread {
        let text = unread.text.trim().to_owned();
        if !text.is_empty() && !words.contains(&text) {
            words.push(text);
        }
    }
    words.truncate(5);
    words
}

/// The turn that calls `tool`, the run's `answered`-th call.
fn local_reply(tool: &str, arguments: serde_json::Value, answered: usize) -> ModelReply {
    ModelReply {
        content: None,
        tool_calls: vec![ToolCall { id: format!("local_{answered}"), name: tool.to_owned(), arguments: arguments.to_string() }],
        usage: Tokens::default(),
        finish_reason: Some("tool_calls".into()),
        model: LOCAL_MODEL.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::Value;

    use super::*;
    use crate::provider::RunInput;

    #[test]
    fn a_sentence_it_cannot_read_ends_with_an_error_verdict() {
        let time = TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
        // The conversation is not read: only the run's data.
        let request = ChatRequest {
            model: "local",
            messages: vec![],
            tools: Default::default(),
            run: RunInput { sentence: "asdfgh", time, answered: &[], question: None },
        };
        let reply = answer(&request).unwrap();
        assert_eq!(reply.tool_calls[0].name, "finish");
        let arguments: Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
        assert_eq!(arguments["result_type"], "error");
        assert!(arguments["suggestion"].as_str().unwrap().contains("OPENAI_API_KEY"));
        // Words it could not read are named.
        let request = ChatRequest { run: RunInput { sentence: "asdfgh tomorrow", ..request.run }, ..request };
        let reply = answer(&request).unwrap();
        let arguments: Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
        assert!(arguments["message"].as_str().unwrap().contains("asdfgh"), "{arguments}");
    }
}
