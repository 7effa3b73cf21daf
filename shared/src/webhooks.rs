//! Webhooks when a task ends (docs/webhooks.md): what the API (registration) and the worker
//! (delivery) share: the configuration, secrets, which destinations are allowed, and the retry
//! schedule. The outbox is written by a trigger in the ending's own statement
//! (the schema in `migrations/`, the outbox trigger in `migrations/functions/webhooks.sql`); the rows' SQL is in [`crate::store::webhooks`].

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    time::Duration,
};

use base64::Engine;
use rand::Rng;
use serde::Deserialize;

use crate::config::error::ConfigError;

/// The verdict types an endpoint may hear (`result.type`).
pub const VERDICTS: [&str; 3] = ["action_completed", "need_clarification", "error"];

/// How webhooks are delivered, from the environment.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookConfig {
    /// `QUICKACT_WEBHOOK_ALLOW_PRIVATE`, default false: whether endpoints may resolve to loopback,
    /// private, link-local or unique-local addresses. Off, a user cannot make the service call into
    /// the network it runs in (SSRF); tests and single-host deployments turn it on.
    pub allow_private: bool,
    /// `QUICKACT_WEBHOOKS`: the deployment's endpoints, a JSON array of
    /// `{"url", "secret", "verdicts"?}`; they hear every user's task endings. `None` (unset): this
    /// process leaves the stored ones as they are, so a process started without the variable
    /// cannot undo them; set (`[]` included), they become the stored ones.
    pub deployment: Option<Vec<DeploymentEndpoint>>,
    /// `QUICKACT_WEBHOOK_TIMEOUT_SECS`, default 10: longest one attempt may take.
    pub timeout: Duration,
    /// `QUICKACT_WEBHOOK_RETRY_BASE_MS`, default 5000: the wait after a first failed attempt; each
    /// later one doubles it (see [`retry_delay`]).
    pub retry_base: Duration,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig { allow_private: false, deployment: None, timeout: Duration::from_secs(10), retry_base: Duration::from_secs(5) }
    }
}

/// An endpoint from the configuration (stored with no user, keyed by its URL).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeploymentEndpoint {
    pub url: String,
    pub secret: String,
    #[serde(default = "all_verdicts")]
    pub verdicts: Vec<String>,
}

fn all_verdicts() -> Vec<String> {
    VERDICTS.iter().map(|v| v.to_string()).collect()
}

impl WebhookConfig {
    /// Reads the `QUICKACT_WEBHOOK*` variables through `get` (unset or blank: `None`).
    pub fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let defaults = WebhookConfig::default();
        let allow_private = match get("QUICKACT_WEBHOOK_ALLOW_PRIVATE").map(|v| v.trim().to_ascii_lowercase()) {
            None => false,
            Some(v) if ["1", "true", "yes", "on"].contains(&v.as_str()) => true,
            Some(v) if ["0", "false", "no", "off"].contains(&v.as_str()) => false,
            Some(value) => return Err(ConfigError::Invalid { name: "QUICKACT_WEBHOOK_ALLOW_PRIVATE", value, reason: "expected true or false".into() }),
        };
        let deployment: Option<Vec<DeploymentEndpoint>> = match get("QUICKACT_WEBHOOKS") {
            None => None,
            Some(raw) => serde_json::from_str(&raw).map_err(|e| ConfigError::Invalid {
                name: "QUICKACT_WEBHOOKS",
                // It holds secrets: never echoed.
                value: "(hidden)".into(),
                reason: format!("expected a JSON array of {{\"url\", \"secret\", \"verdicts\"?}}: {e}"),
            })?,
        };
        for endpoint in deployment.iter().flatten() {
            let invalid = |reason: String| ConfigError::Invalid { name: "QUICKACT_WEBHOOKS", value: "(hidden)".into(), reason };
            check_url_shape(&endpoint.url).map_err(|refusal| invalid(format!("{}: {refusal}", endpoint.url)))?;
            check_verdicts(&endpoint.verdicts).map_err(invalid)?;
            if standard_secret_bytes(&endpoint.secret).is_none() {
                return Err(invalid(format!("the secret of {} must be whsec_ followed by base64", endpoint.url)));
            }
        }
        let positive = |name: &'static str| -> Result<Option<u64>, ConfigError> {
            match get(name) {
                None => Ok(None),
                Some(value) => match value.trim().parse::<u64>() {
                    Ok(n) if n > 0 => Ok(Some(n)),
                    _ => Err(ConfigError::Invalid { name, value, reason: "expected a positive whole number".into() }),
                },
            }
        };
        Ok(WebhookConfig {
            allow_private,
            deployment,
            timeout: positive("QUICKACT_WEBHOOK_TIMEOUT_SECS")?.map_or(defaults.timeout, Duration::from_secs),
            retry_base: positive("QUICKACT_WEBHOOK_RETRY_BASE_MS")?.map_or(defaults.retry_base, Duration::from_millis),
        })
    }

    /// How long a worker's claim on an attempt lasts: the attempt's time limit and a margin to
    /// record it. A worker that dies mid-attempt leaves the delivery to another after this.
    pub fn lease(&self) -> Duration {
        self.timeout + Duration::from_secs(5)
    }
}

/// Attempts at one delivery before it is given up (recorded as `failed`): with [`retry_delay`]'s
/// schedule from a 5 s base, the last comes about a day after the first.
pub const MAX_ATTEMPTS: i32 = 16;

/// Longest wait between two attempts.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(6 * 3600);

/// The wait after failed attempt number `attempt` (from 1): `base` doubled at each attempt, at most
/// [`MAX_RETRY_DELAY`], times a random factor in [0.75, 1.25) so that the deliveries of one outage
/// do not all come back at the same moment. From a 5 s base the 15 waits add up to about 23 hours.
pub fn retry_delay(base: Duration, attempt: i32) -> Duration {
    let doublings = attempt.clamp(1, 30) as u32 - 1;
    let delay = base.saturating_mul(1u32 << doublings.min(20)).min(MAX_RETRY_DELAY);
    delay.mul_f64(rand::rng().random_range(0.75..1.25))
}

/// A new endpoint secret: `whsec_` and 24 random bytes in base64, as the Standard Webhooks
/// libraries expect.
pub fn generate_secret() -> String {
    let bytes: [u8; 24] = rand::rng().random();
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The key bytes of a `whsec_` secret, or `None` when it is not one.
pub fn standard_secret_bytes(secret: &str) -> Option<Vec<u8>> {
    let encoded = secret.strip_prefix("whsec_")?;
    base64::engine::general_purpose::STANDARD.decode(encoded).ok().filter(|key| !key.is_empty())
}

/// The verdict types named, all known and at least one.
pub fn check_verdicts(verdicts: &[String]) -> Result<(), String> {
    if verdicts.is_empty() {
        return Err("verdicts must name at least one of action_completed, need_clarification, error".into());
    }
    match verdicts.iter().find(|v| !VERDICTS.contains(&v.as_str())) {
        Some(unknown) => Err(format!("unknown verdict type {unknown:?} (known: action_completed, need_clarification, error)")),
        None => Ok(()),
    }
}

/// Why a destination is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DestinationRefused {
    #[error("not a valid URL: {0}")]
    Malformed(String),
    #[error("the URL must be http or https")]
    Scheme,
    #[error("the URL must not carry a user name or password")]
    Credentials,
    #[error("the host {0} could not be resolved")]
    Unresolved(String),
    #[error("the host {host} resolves to {address}, a private or loopback address (allowed only with QUICKACT_WEBHOOK_ALLOW_PRIVATE=true)")]
    Private { host: String, address: IpAddr },
}

/// A URL an endpoint may have, before its host is resolved: absolute, http(s), with a host, without
/// credentials (they would be sent in the clear in logs and pages).
pub fn check_url_shape(text: &str) -> Result<url::Url, DestinationRefused> {
    let url = url::Url::parse(text.trim()).map_err(|e| DestinationRefused::Malformed(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(DestinationRefused::Scheme);
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(DestinationRefused::Malformed("the URL has no host".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(DestinationRefused::Credentials);
    }
    Ok(url)
}

/// Checks `text` as an endpoint URL and resolves its host: every address it resolves to must be
/// public unless `allow_private`. Called at registration and again before each attempt (DNS may
/// change in between; the worker's HTTP client also refuses such addresses when it connects).
pub async fn check_destination(text: &str, allow_private: bool) -> Result<url::Url, DestinationRefused> {
    let url = check_url_shape(text)?;
    if allow_private {
        return Ok(url);
    }
    let host = url.host_str().unwrap_or_default().trim_matches(['[', ']']).to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    let resolved = tokio::net::lookup_host((host.as_str(), port)).await.map(|addresses| addresses.collect::<Vec<SocketAddr>>());
    let Ok(addresses) = resolved else {
        return Err(DestinationRefused::Unresolved(host));
    };
    if addresses.is_empty() {
        return Err(DestinationRefused::Unresolved(host));
    }
    match addresses.iter().find(|a| !is_public(a.ip())) {
        Some(private) => Err(DestinationRefused::Private { host, address: private.ip() }),
        None => Ok(url),
    }
}

/// Whether `address` is on the public internet: not loopback, private (RFC 1918), shared (CGNAT),
/// link-local, unique-local, unspecified, multicast, broadcast or documentation space; an
/// IPv4-mapped IPv6 address is judged as its IPv4 address.
pub fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(a: Ipv4Addr) -> bool {
    let [first, second, ..] = a.octets();
    !(a.is_loopback()
        || a.is_private()
        || a.is_link_local()
        || a.is_unspecified()
        || a.is_broadcast()
        || a.is_multicast()
        || a.is_documentation()
        || first == 0
        || (first == 100 && (64..128).contains(&second)))
}

fn is_public_v6(a: Ipv6Addr) -> bool {
    let first = a.segments()[0];
    !(a.is_loopback()
        || a.is_unspecified()
        || a.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (first == 0x2001 && a.segments()[1] == 0x0db8)) // documentation
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_and_link_local_addresses_are_not_public() {
        for private in ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "::"] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[tokio::test]
    async fn loopback_destinations_are_refused_unless_allowed() {
        let refused = check_destination("http://127.0.0.1:9/hook", false).await;
        assert!(matches!(refused, Err(DestinationRefused::Private { .. })), "{refused:?}");
        let refused = check_destination("http://localhost:9/hook", false).await;
        assert!(matches!(refused, Err(DestinationRefused::Private { .. })), "{refused:?}");
        assert!(check_destination("http://127.0.0.1:9/hook", true).await.is_ok());
        assert_eq!(check_destination("ftp://example.com/", true).await, Err(DestinationRefused::Scheme));
        assert_eq!(check_destination("http://u:p@example.com/", true).await, Err(DestinationRefused::Credentials));
        assert!(matches!(check_destination("not a url", true).await, Err(DestinationRefused::Malformed(_))));
    }

    #[test]
    fn retries_double_with_jitter_and_spread_over_about_a_day() {
        let base = Duration::from_secs(5);
        let first = retry_delay(base, 1);
        assert!(first >= Duration::from_millis(3750) && first < Duration::from_millis(6250), "{first:?}");
        assert!(retry_delay(base, 30) <= MAX_RETRY_DELAY.mul_f64(1.25));
        // The midpoint of the schedule: the jitter averages out.
        let total: Duration = (1..MAX_ATTEMPTS).map(|n| base.saturating_mul(1 << (n - 1)).min(MAX_RETRY_DELAY)).sum();
        assert!(total > Duration::from_secs(20 * 3600) && total < Duration::from_secs(28 * 3600), "{total:?}");
    }

    #[test]
    fn secrets_are_standard_webhook_secrets() {
        let secret = generate_secret();
        assert_eq!(standard_secret_bytes(&secret).map(|key| key.len()), Some(24));
        assert_eq!(standard_secret_bytes("nope"), None);
    }

    #[test]
    fn deployment_endpoints_are_read_from_json() {
        let secret = generate_secret();
        let json = format!(r#"[{{"url": "https://hooks.example.com/q", "secret": "{secret}", "verdicts": ["error"]}}]"#);
        let config = WebhookConfig::from_lookup(&|name| (name == "QUICKACT_WEBHOOKS").then(|| json.clone())).unwrap();
        assert_eq!(config.deployment.unwrap()[0].verdicts, vec!["error".to_owned()]);
        let unset = WebhookConfig::from_lookup(&|_| None).unwrap();
        assert_eq!(unset.deployment, None, "unset leaves the stored endpoints as they are");
        let empty = WebhookConfig::from_lookup(&|name| (name == "QUICKACT_WEBHOOKS").then(|| "[]".to_owned())).unwrap();
        assert_eq!(empty.deployment, Some(Vec::new()), "set to [], there are none");
        let bad = WebhookConfig::from_lookup(&|name| (name == "QUICKACT_WEBHOOKS").then(|| r#"[{"url": "x", "secret": "y"}]"#.to_owned()));
        assert!(bad.is_err());
    }
}
