//! Users and their API keys.

use base64::Engine;
use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// A user as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct User {
    pub id: Uuid,
    pub name: String,
    pub is_admin: bool,
    #[serde(rename = "tz")]
    pub time_zone: String,
    pub model: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// An API key as its owner sees it: never the secret, only its first characters.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ApiKey {
    pub id: Uuid,
    pub user_id: Uuid,
    /// The key's first characters (`qa_` and six more), or where it came from for a key that was
    /// not generated here (`QUICKACT_ADMIN_KEY`).
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Every key starts with this, so a leaked key is recognisable in logs and secret scanners.
pub const API_KEY_PREFIX: &str = "qa_";

/// A fresh API key: 32 random bytes, URL-safe base64, with our prefix.
pub fn generate_api_key() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{API_KEY_PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// What is stored for a key. Keys carry 256 bits of randomness, so a plain SHA-256 cannot be
/// brute-forced and keeps authentication a single index lookup.
pub fn hash_api_key(key: &str) -> Vec<u8> {
    Sha256::digest(key.as_bytes()).to_vec()
}

/// The part of a key that may be shown again (to tell keys apart).
pub fn key_display_prefix(key: &str) -> String {
    key.chars().take(API_KEY_PREFIX.len() + 6).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_unique_and_prefixed() {
        let a = generate_api_key();
        let b = generate_api_key();
        assert_ne!(a, b);
        assert!(a.starts_with(API_KEY_PREFIX));
        assert_eq!(a.len(), API_KEY_PREFIX.len() + 43);
    }

    #[test]
    fn hashes_are_stable_and_hide_the_key() {
        assert_eq!(hash_api_key("qa_x"), hash_api_key("qa_x"));
        assert_ne!(hash_api_key("qa_x"), hash_api_key("qa_y"));
        assert_eq!(hash_api_key("qa_x").len(), 32);
    }
}
