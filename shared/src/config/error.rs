//! Why a configuration could not be built: a leaf, so the modules that read their own variables
//! (webhooks, model limits) do not depend on the whole configuration.

/// Why a configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("environment variable {name} has an invalid value {value:?}: {reason}")]
    Invalid { name: &'static str, value: String, reason: String },
}
