//! The OpenAI-compatible provider, on async-openai 0.43.
//!
//! Two defaults of async-openai are changed on purpose:
//! - its HTTP client has no timeout, so a stalled endpoint would hang a task: we bring our own
//!   reqwest client with connect and request timeouts;
//! - it retries 429/5xx three times at once, invisibly: we execute requests through a bare
//!   [`ReqwestService`], and the agent retries with backoff inside the task's time budget, recording
//!   every attempt.
//!
//! A `429` or `503` may say when to come back (`Retry-After`, `retry-after-ms`: see
//! [`super::retry_after`]), and the agent then waits at least that long. But async-openai turns a
//! failed answer into an `ApiError` that keeps the status and the body's message and drops the
//! headers. So requests go through `RetryAfterTransport`, on async-openai's middleware hook, around
//! the bare [`ReqwestService`]: it passes every answer on untouched except a `429`/`503` carrying
//! such a hint, which it turns into a `ComeBackLater` error itself (status, the body's message, the
//! wait) for `classify` to find in `OpenAIError::Boxed`. Nothing else about a request changes; the
//! agent's deadline decides whether the wait fits (see `agent::turn`).
//!
//! Responses are requested through the `byot` ("bring your own types") API and read leniently (see
//! [`super::parse`]), because strict enums reject values some compatible providers send.

use std::{
    task::{Context, Poll},
    time::Duration,
};

use async_openai::{
    Client,
    config::OpenAIConfig,
    error::OpenAIError,
    middleware::{HttpRequestFactory, ReqwestService},
};
use futures::future::BoxFuture;
use reqwest::StatusCode;
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use serde_json::Value;

use super::{ChatRequest, ModelProvider, ModelReply, ProviderError, parse::parse_chat_response, retry_after::retry_after};

/// A chat-completions request, serialised from the run's data as it is (nothing copied into a
/// JSON tree first: the tools' definitions alone are thousands of nodes, sent every turn).
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: &'a [&'a Value],
    stream: bool,
    temperature: u8,
    #[serde(skip_serializing_if = "<[Value]>::is_empty")]
    tools: &'a [Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
}

pub struct OpenAiProvider {
    client: Client<OpenAIConfig>,
    default_model: String,
}

impl OpenAiProvider {
    pub fn new(base_url: &str, api_key: &SecretString, default_model: &str, request_timeout: Duration) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10).min(request_timeout))
            .timeout(request_timeout)
            .build()?;
        let config = OpenAIConfig::new()
            .with_api_base(base_url.trim_end_matches('/'))
            .with_api_key(api_key.expose_secret());
        let client = Client::with_config(config).with_http_service(RetryAfterTransport(ReqwestService::new(http)));
        Ok(OpenAiProvider { client, default_model: default_model.to_owned() })
    }
}

impl ModelProvider for OpenAiProvider {
    fn default_model(&self) -> &str {
        &self.default_model
    }

    fn complete<'a>(&'a self, request: &'a ChatRequest<'_>) -> BoxFuture<'a, Result<ModelReply, ProviderError>> {
        Box::pin(async move {
            let body = Body {
                model: request.model,
                messages: &request.messages,
                stream: false,
                temperature: 0,
                tools: &request.tools,
                tool_choice: (!request.tools.is_empty()).then_some("auto"),
            };
            let response: Value = self.client.chat().create_byot(&body).await.map_err(classify)?;
            parse_chat_response(&response, request.model)
        })
    }
}

/// async-openai's bare transport, reading the wait a `429` or `503` asks for (see the module doc).
#[derive(Clone)]
struct RetryAfterTransport(ReqwestService);

impl tower::Service<HttpRequestFactory> for RetryAfterTransport {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = BoxFuture<'static, Result<reqwest::Response, OpenAIError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), OpenAIError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        let answer = self.0.call(request);
        Box::pin(async move {
            let response = answer.await?;
            let status = response.status();
            if !matches!(status, StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE) {
                return Ok(response);
            }
            let Some(wait) = retry_after(response.headers(), chrono::Utc::now()) else {
                return Ok(response);
            };
            let body = response.bytes().await.map_err(OpenAIError::Reqwest)?;
            Err(OpenAIError::Boxed(Box::new(ComeBackLater { status, message: error_message(&body), wait })))
        })
    }
}

/// A `429`/`503` that said how long to wait before asking again.
#[derive(Debug, thiserror::Error)]
#[error("the model endpoint answered {}: {message} (it asked to be retried in {wait:?})", status.as_u16())]
struct ComeBackLater {
    status: StatusCode,
    message: String,
    wait: Duration,
}

/// The message of an error body: OpenAI's `{"error": {"message": ..}}`, or the text itself (the
/// start of it: a proxy's 503 may be a whole HTML page).
fn error_message(body: &[u8]) -> String {
    let json = serde_json::from_slice::<Value>(body).ok();
    match json.as_ref().and_then(|json| json["error"]["message"].as_str()) {
        Some(message) => message.to_owned(),
        None => String::from_utf8_lossy(body).chars().take(500).collect(),
    }
}

/// Sorts a failed request into "retry later" and "give up".
fn classify(err: OpenAIError) -> ProviderError {
    match err {
        OpenAIError::Boxed(err) => match err.downcast::<ComeBackLater>() {
            Ok(later) => ProviderError::Transient { message: later.to_string(), retry_after: Some(later.wait) },
            Err(other) => ProviderError::Fatal { message: format!("the model request could not be made: {other}") },
        },
        OpenAIError::ApiError(api) => {
            let status = api.status_code.as_u16();
            let message = format!("the model endpoint answered {status}: {}", api.api_error.message);
            if status == 429 || status == 408 || status == 409 || api.status_code.is_server_error() {
                ProviderError::Transient { message, retry_after: None }
            } else {
                ProviderError::Fatal { message }
            }
        }
        OpenAIError::Reqwest(err) => {
            let message = if err.is_timeout() {
                "the model endpoint did not answer in time".to_owned()
            } else if err.is_connect() {
                "the model endpoint could not be reached".to_owned()
            } else {
                format!("the model request failed: {err}")
            };
            ProviderError::Transient { message, retry_after: None }
        }
        OpenAIError::JSONDeserialize(err, _) => {
            ProviderError::Transient { message: format!("the model's answer was not valid JSON: {err}"), retry_after: None }
        }
        other => ProviderError::Fatal { message: format!("the model request could not be made: {other}") },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hinted_refusal_is_transient_with_its_wait() {
        let later = ComeBackLater { status: StatusCode::TOO_MANY_REQUESTS, message: "slow down".into(), wait: Duration::from_secs(2) };
        match classify(OpenAIError::Boxed(Box::new(later))) {
            ProviderError::Transient { message, retry_after } => {
                assert_eq!(retry_after, Some(Duration::from_secs(2)));
                assert!(message.contains("429") && message.contains("slow down"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_error_body_gives_its_message_or_its_text() {
        assert_eq!(error_message(br#"{"error": {"message": "Rate limit reached", "type": "requests"}}"#), "Rate limit reached");
        assert_eq!(error_message(b"<html>busy</html>"), "<html>busy</html>");
        assert_eq!(error_message(&[b'x'; 2000]).len(), 500, "a page is cut short");
    }
}
