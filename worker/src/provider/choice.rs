//! Which provider serves a task: the OpenAI-compatible model when one is configured, the local
//! provider otherwise; and, with a model configured, the local provider still serves the sentences
//! it reads with full confidence (the zero-token fast path) unless `QUICKACT_FAST_PATH=false`, and
//! hands the run over to the model when its search finds nothing or several items.

use std::sync::Arc;

use quickact_shared::config::ModelConfig;

use super::{
    ModelProvider,
    local::{LOCAL_MODEL, LocalProvider, understands},
    openai::OpenAiProvider,
};

/// Chooses the model provider for a task.
pub trait ProviderChoice: Send + Sync {
    /// The provider and the model name for a user whose own choice is `user_model`.
    fn choose(&self, user_model: Option<&str>, input_text: &str) -> (Arc<dyn ModelProvider>, String);

    /// Where a run that `choose` gave to the local fast path hands over when the local reading
    /// cannot finish the action: the model, when one is configured (see `agent::run`).
    fn hand_over_to(&self, _user_model: Option<&str>) -> Option<(Arc<dyn ModelProvider>, String)> {
        None
    }
}


/// The providers this deployment has.
pub struct ConfiguredProviders {
    openai: Option<Arc<dyn ModelProvider>>,
    local: Arc<dyn ModelProvider>,
    default_model: String,
    fast_path: bool,
}

impl ConfiguredProviders {
    pub fn from_config(config: &ModelConfig) -> Result<Self, reqwest::Error> {
        let openai = match &config.api_key {
            Some(key) => Some(Arc::new(OpenAiProvider::new(&config.base_url, key, &config.model, config.request_timeout)?) as Arc<dyn ModelProvider>),
            None => None,
        };
        Ok(ConfiguredProviders { openai, local: Arc::new(LocalProvider), default_model: config.model.clone(), fast_path: config.fast_path })
    }
}

impl ProviderChoice for ConfiguredProviders {
    fn choose(&self, user_model: Option<&str>, input_text: &str) -> (Arc<dyn ModelProvider>, String) {
        match &self.openai {
            Some(openai) if !(self.fast_path && understands(input_text)) => {
                (openai.clone(), user_model.unwrap_or(&self.default_model).to_owned())
            }
            _ => (self.local.clone(), LOCAL_MODEL.to_owned()),
        }
    }

    fn hand_over_to(&self, user_model: Option<&str>) -> Option<(Arc<dyn ModelProvider>, String)> {
        let openai = self.openai.as_ref()?;
        Some((openai.clone(), user_model.unwrap_or(&self.default_model).to_owned()))
    }
}
