//! Which provider serves a task.

use std::sync::Arc;

use futures::future::BoxFuture;
use quickact_shared::config::ModelConfig;

use crate::{
    provider::{ChatRequest, ModelProvider, ModelReply, ProviderError, openai::OpenAiProvider},
    runner::ProviderChoice,
};

/// The providers this deployment has.
pub struct ConfiguredProviders {
    openai: Option<Arc<dyn ModelProvider>>,
    default_model: String,
    unconfigured: Arc<dyn ModelProvider>,
}

impl ConfiguredProviders {
    pub fn from_config(config: &ModelConfig) -> Result<Self, reqwest::Error> {
        let openai = match &config.api_key {
            Some(key) => Some(Arc::new(OpenAiProvider::new(&config.base_url, key, &config.model, config.request_timeout)?) as Arc<dyn ModelProvider>),
            None => None,
        };
        Ok(ConfiguredProviders { openai, default_model: config.model.clone(), unconfigured: Arc::new(Unconfigured) })
    }
}

impl ProviderChoice for ConfiguredProviders {
    fn choose(&self, user_model: Option<&str>, _input_text: &str) -> (Arc<dyn ModelProvider>, String) {
        match &self.openai {
            Some(openai) => (openai.clone(), user_model.unwrap_or(&self.default_model).to_owned()),
            None => (self.unconfigured.clone(), "none".to_owned()),
        }
    }
}

/// Answers every request with a clear refusal when no model endpoint is configured.
struct Unconfigured;

impl ModelProvider for Unconfigured {
    fn default_model(&self) -> &str {
        "none"
    }

    fn complete<'a>(&'a self, _request: &'a ChatRequest) -> BoxFuture<'a, Result<ModelReply, ProviderError>> {
        Box::pin(async {
            Err(ProviderError::Fatal { message: "no model is configured (set OPENAI_API_KEY)".into() })
        })
    }
}
