//! Reading chat-completions responses leniently.
//!
//! OpenAI-compatible providers differ in small ways that strict typed clients reject (async-openai
//! issues #266 and #498: unknown `finish_reason` values, missing fields). We read the response as
//! JSON and take what we need: the first choice's message, its tool calls and the usage, and
//! tolerate everything else.

use serde_json::Value;

use super::{ModelReply, ProviderError, ToolCall, Tokens};

/// Parses a chat-completions response body.
pub fn parse_chat_response(body: &Value, requested_model: &str) -> Result<ModelReply, ProviderError> {
    let garbage = |what: &str| ProviderError::Transient {
        message: format!("the model's answer was not a chat completion ({what})"),
        retry_after: None,
    };
    if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("unknown error");
        return Err(ProviderError::Transient { message: format!("the model reported an error: {message}"), retry_after: None });
    }
    let choice = body.get("choices").and_then(Value::as_array).and_then(|c| c.first()).ok_or_else(|| garbage("no choices"))?;
    let message = choice.get("message").filter(|m| m.is_object()).ok_or_else(|| garbage("no message"))?;

    let content = match message.get("content") {
        Some(Value::String(text)) => Some(text.clone()),
        // Some providers send content as a list of parts.
        Some(Value::Array(parts)) => {
            let text: String = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
            Some(text)
        }
        _ => None,
    }
    .filter(|text| !text.trim().is_empty());

    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (index, call) in calls.iter().enumerate() {
            let function = call.get("function").unwrap_or(call);
            let name = function.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                None | Some(Value::Null) => String::new(),
                // Some providers send the arguments as an object rather than as JSON text.
                Some(other) => other.to_string(),
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map_or_else(|| format!("call_{index}"), str::to_owned);
            tool_calls.push(ToolCall { id, name, arguments });
        }
    }
    // A legacy `function_call` (pre-tools API) is still a call.
    if tool_calls.is_empty()
        && let Some(function) = message.get("function_call").filter(|f| f.is_object()) {
            tool_calls.push(ToolCall {
                id: "call_0".into(),
                name: function.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                arguments: function.get("arguments").and_then(Value::as_str).unwrap_or_default().to_owned(),
            });
        }

    let usage = body.get("usage");
    let number = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let usage = Tokens {
        input: number(usage.and_then(|u| u.get("prompt_tokens"))),
        output: number(usage.and_then(|u| u.get("completion_tokens"))),
        cached: number(usage.and_then(|u| u.pointer("/prompt_tokens_details/cached_tokens")))
            .max(number(usage.and_then(|u| u.get("prompt_cache_hit_tokens")))),
    };

    Ok(ModelReply {
        content,
        tool_calls,
        usage,
        finish_reason: choice.get("finish_reason").and_then(Value::as_str).map(str::to_owned),
        model: body.get("model").and_then(Value::as_str).filter(|m| !m.is_empty()).unwrap_or(requested_model).to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tool_calls_and_usage_are_read() {
        let body = json!({
            "model": "m-2024",
            "choices": [{ "finish_reason": "tool_calls", "message": { "role": "assistant", "content": null,
                "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "finish", "arguments": "{\"a\":1}" } }] } }],
            "usage": { "prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": { "cached_tokens": 40 } }
        });
        let reply = parse_chat_response(&body, "m").unwrap();
        assert_eq!(reply.tool_calls, vec![ToolCall { id: "c1".into(), name: "finish".into(), arguments: "{\"a\":1}".into() }]);
        assert_eq!(reply.usage, Tokens { input: 100, output: 20, cached: 40 });
        assert_eq!(reply.model, "m-2024");
        assert_eq!(reply.content, None);
    }

    #[test]
    fn unknown_finish_reasons_and_object_arguments_are_tolerated() {
        let body = json!({
            "choices": [{ "finish_reason": "insufficient_system_resource", "message": {
                "tool_calls": [{ "function": { "name": "finish", "arguments": { "x": 1 } } }] } }]
        });
        let reply = parse_chat_response(&body, "m").unwrap();
        assert_eq!(reply.finish_reason.as_deref(), Some("insufficient_system_resource"));
        assert_eq!(reply.tool_calls[0].arguments, "{\"x\":1}");
        assert_eq!(reply.tool_calls[0].id, "call_0");
        assert_eq!(reply.model, "m");
    }

    #[test]
    fn a_body_without_choices_is_a_transient_failure() {
        let err = parse_chat_response(&json!({"hello": "world"}), "m").unwrap_err();
        assert!(err.is_transient());
        assert!(err.to_string().contains("no choices"));
    }

    #[test]
    fn plain_text_answers_have_no_tool_calls() {
        let body = json!({ "choices": [{ "message": { "content": "Sure! Done." } }] });
        let reply = parse_chat_response(&body, "m").unwrap();
        assert_eq!(reply.content.as_deref(), Some("Sure! Done."));
        assert!(reply.tool_calls.is_empty());
    }
}
