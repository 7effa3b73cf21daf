//! The local provider: a deterministic model that needs no network (the embedded default when no
//! API key is configured, and the zero-token fast path when one is).
//!
//! It reads the user's sentence with rules ([`intent`]) and answers each turn with the tool call a
//! good model would make ([`plan`]), through the same tool registry as a real model, so everything
//! is journaled, rendered and checked the same way. What it does not understand it says so: an
//! `error` verdict that asks to rephrase (or to configure a model), never a guess.
//!
//! - [`intent`]: sentence -> intent (create, complete, delete, reschedule, list).
//! - [`plan`]: intent + tool results so far -> next tool call or `finish`.
//! - [`text`]: string helpers.

pub mod intent;
pub mod plan;
pub mod text;

use chrono::{NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use futures::future::BoxFuture;
use quickact_time::TimeContext;
use serde_json::{Value, json};

use self::{
    intent::{Reading, read},
    plan::{History, Say, next_step},
};
use super::{ChatRequest, ModelProvider, ModelReply, ProviderError, ToolCall, Usage};

/// The name runs served locally record as `model_used`.
pub const LOCAL_MODEL: &str = "local";

#[derive(Debug, Default, Clone, Copy)]
pub struct LocalProvider;

/// How sure the local reader is about a sentence.
pub fn understands(sentence: &str) -> bool {
    let context = TimeContext::new(Utc::now(), chrono_tz::UTC);
    matches!(read(sentence, &context), Reading::Understood(_))
}

impl ModelProvider for LocalProvider {
    fn default_model(&self) -> &str {
        LOCAL_MODEL
    }

    fn complete<'a>(&'a self, request: &'a ChatRequest) -> BoxFuture<'a, Result<ModelReply, ProviderError>> {
        Box::pin(async move { answer(request) })
    }
}

fn answer(request: &ChatRequest) -> Result<ModelReply, ProviderError> {
    let user = request
        .messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .ok_or_else(|| ProviderError::Fatal { message: "the conversation has no user message".into() })?;
    let (sentence, context) = parse_user_message(user);
    let chinese = text::is_chinese(&sentence);
    let history = history_of(&request.messages);
    let (tool, arguments) = match read(&sentence, &context) {
        Reading::Understood(intent) => next_step(&intent, &history, chinese),
        Reading::NotUnderstood(reason) => {
            tracing::info!(reason, "the local provider did not understand the sentence");
            let say = Say { chinese };
            ("finish", json!({ "result_type": "error", "message": say.not_understood(), "suggestion": say.rephrase() }))
        }
    };
    Ok(ModelReply {
        content: None,
        tool_calls: vec![ToolCall { id: format!("local_{}", history.len()), name: tool.to_owned(), arguments: arguments.to_string() }],
        usage: Usage::default(),
        finish_reason: Some("tool_calls".into()),
        model: LOCAL_MODEL.to_owned(),
    })
}

/// The sentence and its reference moment from the user message the agent writes
/// (`Sentence: ...\n\n(Written at YYYY-MM-DD HH:MM Weekday in time zone Zone. ...)`).
fn parse_user_message(message: &str) -> (String, TimeContext) {
    let (sentence, rest) = match message.strip_prefix("Sentence: ") {
        Some(body) => body.rsplit_once("\n\n(Written at ").map_or((body.to_owned(), ""), |(s, r)| (s.to_owned(), r)),
        None => (message.to_owned(), ""),
    };
    let context = (|| {
        let mut words = rest.split_whitespace();
        let date = words.next()?;
        let time = words.next()?;
        let local = NaiveDateTime::parse_from_str(&format!("{date} {time}"), "%Y-%m-%d %H:%M").ok()?;
        let zone: Tz = rest.split(" in time zone ").nth(1)?.split(|c: char| c == '.' || c.is_whitespace()).next()?.parse().ok()?;
        let instant = zone.from_local_datetime(&local).earliest()?.with_timezone(&Utc);
        Some(TimeContext::new(instant, zone))
    })()
    .unwrap_or_else(|| TimeContext::new(Utc::now(), chrono_tz::UTC));
    (sentence, context)
}

/// Tool results so far, in order, matched to their calls by id.
fn history_of(messages: &[Value]) -> History {
    let mut names = std::collections::HashMap::new();
    let mut history = History::new();
    for message in messages {
        match message["role"].as_str() {
            Some("assistant") => {
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    if let (Some(id), Some(name)) = (call["id"].as_str(), call.pointer("/function/name").and_then(Value::as_str)) {
                        names.insert(id.to_owned(), name.to_owned());
                    }
                }
            }
            Some("tool") => {
                let name = message["tool_call_id"].as_str().and_then(|id| names.get(id)).cloned().unwrap_or_default();
                let content = message["content"].as_str().unwrap_or_default();
                let parsed: Value = serde_json::from_str(content).unwrap_or(Value::String(content.to_owned()));
                let result = match parsed.get("error").and_then(Value::as_str) {
                    Some(error) => Err(error.to_owned()),
                    None => Ok(parsed),
                };
                history.push((name, result));
            }
            _ => {}
        }
    }
    history
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_moment_is_read_back_from_the_user_message() {
        let message = crate::agent::prompt::user_message("明天开会", Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
        let (sentence, context) = parse_user_message(&message);
        assert_eq!(sentence, "明天开会");
        assert_eq!(context.now().format("%Y-%m-%d %H:%M").to_string(), "2026-02-07 09:00");
        assert_eq!(context.tz(), chrono_tz::Asia::Shanghai);
    }

    #[test]
    fn a_sentence_it_cannot_read_ends_with_an_error_verdict() {
        let request = ChatRequest {
            model: "local".into(),
            messages: vec![json!({"role": "user", "content": "Sentence: 你好\n\n(Written at 2026-02-07 09:00 Saturday in time zone Asia/Shanghai.)"})],
            tools: vec![],
        };
        let reply = answer(&request).unwrap();
        assert_eq!(reply.tool_calls[0].name, "finish");
        let arguments: Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
        assert_eq!(arguments["result_type"], "error");
        assert!(arguments["suggestion"].as_str().unwrap().contains("OPENAI_API_KEY"));
    }
}
