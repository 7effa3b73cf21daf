//! The fleet's limits on each model (`QUICKACT_MODEL_LIMITS`): a leaf, read by the configuration and
//! by the store of the models' budgets.

use std::collections::HashMap;

use serde::Deserialize;

use super::error::ConfigError;

/// What the fleet may send one model each minute (see `QUICKACT_MODEL_LIMITS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelLimit {
    /// Requests a minute, in bursts of up to as many; none when absent.
    pub requests_per_minute: Option<u32>,
    /// Tokens (prompt and completion) a minute, debited after each turn with its real usage.
    pub tokens_per_minute: Option<u64>,
}

/// The limits of each model; `"*"` applies to the models without an entry of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelLimits(HashMap<String, ModelLimit>);

impl ModelLimits {
    /// The limits of `model` (no limit when none is configured).
    pub fn of(&self, model: &str) -> ModelLimit {
        self.0.get(model).or_else(|| self.0.get("*")).copied().unwrap_or_default()
    }

    /// The models with limits of their own, and their limits (for the admin page).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ModelLimit)> {
        self.0.iter().map(|(model, limit)| (model.as_str(), limit))
    }
}

pub(super) fn parse_limits(raw: &str) -> Result<ModelLimits, ConfigError> {
    let invalid = |reason: String| ConfigError::Invalid { name: "QUICKACT_MODEL_LIMITS", value: raw.to_owned(), reason };
    let parsed: HashMap<String, ModelLimit> = serde_json::from_str(raw).map_err(|e| invalid(e.to_string()))?;
    for (model, limit) in &parsed {
        if limit.requests_per_minute == Some(0) || limit.tokens_per_minute == Some(0) {
            return Err(invalid(format!("a limit of 0 for {model} would stop it for good; leave the limit out instead")));
        }
    }
    Ok(ModelLimits(parsed))
}
