//! The OpenAI-compatible provider, on async-openai 0.43.
//!
//! Two defaults of async-openai are changed on purpose:
//! - its HTTP client has no timeout, so a stalled endpoint would hang a task: we bring our own
//!   reqwest client with connect and request timeouts;
//! - it retries 429/5xx three times at once, invisibly: we execute requests through a bare
//!   [`ReqwestService`], and the agent retries with backoff inside the task's time budget, recording
//!   every attempt.
//!
//! Responses are requested through the `byot` ("bring your own types") API and read leniently (see
//! [`super::parse`]), because strict enums reject values some compatible providers send.

use std::time::Duration;

use async_openai::{Client, config::OpenAIConfig, error::OpenAIError, middleware::ReqwestService};
use futures::future::BoxFuture;
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use serde_json::Value;

use super::{ChatRequest, ModelProvider, ModelReply, ProviderError, parse::parse_chat_response};

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
        let client = Client::with_config(config).with_http_service(ReqwestService::new(http));
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

/// Sorts a failed request into "retry later" and "give up".
fn classify(err: OpenAIError) -> ProviderError {
    match err {
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
