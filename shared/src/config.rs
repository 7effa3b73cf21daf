//! Typed configuration read from environment variables over documented defaults.
//!
//! Every variable here is listed in docs/configuration.md with its default. Secrets are wrapped in
//! [`SecretString`] so that `Debug` output and logs never show them.

use std::{collections::HashMap, net::SocketAddr, str::FromStr, time::Duration};

use chrono_tz::Tz;
use secrecy::SecretString;
use serde::Deserialize;

pub mod error;
pub mod models;

pub use error::ConfigError;
pub use models::{ModelLimit, ModelLimits};

use crate::{
    domain::cost_budget::{BudgetLimits, limit_nanos},
    pricing::{ModelPrice, PriceTable},
    queue::Turns,
};

/// Settings both binaries read.
#[derive(Debug, Clone)]
pub struct Config {
    /// `DATABASE_URL`. `None` means "start the embedded local cluster" (scripts do that, not the binaries).
    pub database_url: Option<SecretString>,
    /// `QUICKACT_BIND`: where the API listens.
    pub bind: SocketAddr,
    /// `QUICKACT_ADMIN_KEY`: an admin user holding this key exists after the API starts.
    pub admin_key: Option<SecretString>,
    /// `QUICKACT_SKIP_MIGRATIONS=1` leaves the schema alone at startup.
    pub skip_migrations: bool,
    /// `QUICKACT_DEFAULT_TZ`: the zone of users created without one.
    pub default_tz: Tz,
    /// `QUICKACT_MAX_ACTIVE_TASKS_PER_USER`: pending + processing tasks a user may have at once.
    pub max_active_tasks_per_user: i64,
    /// `QUICKACT_REFERENCE_TIME_WINDOW_SECS`, default 600: how far a submission's `now` may be from
    /// the server's clock, either way. A wider window lets a client backdate a sentence past the
    /// passed-time rule; a narrower one refuses clients whose clocks drift.
    pub reference_time_window: Duration,
    pub model: ModelConfig,
    pub worker: WorkerConfig,
    pub planner: PlannerConfig,
    pub http: HttpConfig,
    pub sweeper: SweeperConfig,
    /// `QUICKACT_MCP_SERVERS`: MCP servers whose tools the model may call beside the planner's.
    pub mcp_servers: Vec<McpServerConfig>,
    /// `QUICKACT_SECRETS_KEY` and `QUICKACT_SECRETS_PREVIOUS_KEYS`: the keys users' MCP tokens are
    /// encrypted with at rest (see [`crate::secrets`]). Without them no token can be set.
    pub secrets: Option<crate::secrets::SecretKeys>,
    /// `QUICKACT_WEBHOOK*`: webhooks when a task ends (see [`crate::webhooks`]).
    pub webhooks: crate::webhooks::WebhookConfig,
    /// `QUICKACT_TRACE_URL`: a link to a task's trace in the tracing UI, with `{trace_id}` where
    /// the trace id goes (e.g. `https://jaeger.example/trace/{trace_id}`); the admin trace page
    /// links there. Unset: the page shows the id alone (docs/tracing.md).
    pub trace_url: Option<String>,
}

/// What every process's sweeper does and keeps (see [`crate::sweeper`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweeperConfig {
    /// `QUICKACT_SWEEP_SECS`, default 5: how often overdue tasks are looked for.
    pub interval: Duration,
    /// `QUICKACT_KEEP_TASKS_DAYS`, default 90: finished tasks (and their journals) are removed
    /// after this.
    pub keep_tasks: Duration,
    /// `QUICKACT_KEEP_DELETED_ITEMS_DAYS`, default 30: soft-deleted items are removed for good after this.
    pub keep_deleted_items: Duration,
}

/// How the API protects itself and its clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// `QUICKACT_DATABASE_CONNECTIONS`, default 16 for the API: most connections the process opens
    /// to Postgres, its pools and its listener together (see `db::ApiPools`).
    pub database_connections: u32,
    /// `QUICKACT_REQUEST_TIMEOUT_SECS`, default 30: longest a request may take (503 after it).
    /// Requests that may long-poll are bounded by their own wait instead.
    pub request_timeout: Duration,
    /// `QUICKACT_MAX_CONCURRENT_REQUESTS`, default 512: requests (long-polls aside) one API process
    /// serves at once; more are answered 503 at once instead of queueing without bound.
    pub max_concurrent_requests: usize,
    /// `QUICKACT_MAX_LONG_POLLS_PER_USER`, default 100: waits one user may hold open on one API
    /// process; more get 429.
    pub max_long_polls_per_user: usize,
    /// `QUICKACT_SUBMIT_RATE_PER_MINUTE`, default 120: submissions (`POST /api/quick-action`) one
    /// user may make per minute, in bursts of up to as many, across every API process; more get
    /// 429 with `Retry-After`. 0 turns the limit off.
    pub submit_rate_per_minute: u32,
    /// `QUICKACT_CORS_ORIGINS`: browser origins allowed to call the API (comma-separated, or `*`);
    /// empty (the default) sends no CORS headers, so browsers allow only same-origin pages.
    pub cors_origins: Vec<String>,
}

/// Rules of the planner that deployments may tune.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannerConfig {
    /// `QUICKACT_DEFAULT_EVENT_MINUTES`, default 60: how long an event lasts when only its start is given.
    pub default_event_minutes: u32,
    /// `QUICKACT_MAX_ITEMS_PER_USER`, default 10000: live (not deleted) items one user may have;
    /// creating more is refused, so no client or runaway model fills the database.
    pub max_items_per_user: u32,
}

/// How the agent reaches a model and what the model costs.
#[derive(Debug, Clone)]
pub struct ModelConfig {
    /// `OPENAI_BASE_URL`, default `https://api.openai.com/v1`.
    pub base_url: String,
    /// `OPENAI_API_KEY`. Without it the local provider serves every task.
    pub api_key: Option<SecretString>,
    /// `QUICKACT_MODEL`, default `gpt-4o-mini`: the model of users who did not choose one.
    pub model: String,
    /// `QUICKACT_MODEL_TIMEOUT_SECS`, default 60: one HTTP request to the model, connect to last byte.
    pub request_timeout: Duration,
    /// `QUICKACT_MODEL_PRICES`: JSON `{"model": {"input": x, "output": y, "cached_input": z}}`, per million tokens.
    pub prices: PriceTable,
    /// `QUICKACT_CURRENCY`, default `CNY`.
    pub currency: String,
    /// `QUICKACT_BUDGET_PER_DAY`, `QUICKACT_BUDGET_PER_MONTH` (in the currency; unset: no limit):
    /// what a user without limits of their own may spend on model turns per UTC day and month.
    pub budgets: BudgetLimits,
    /// `QUICKACT_FAST_PATH`, default true: with a model configured, sentences the local provider
    /// reads with full confidence still run locally (no tokens); false sends everything to the model.
    pub fast_path: bool,
    /// `QUICKACT_MODEL_LIMITS`: JSON `{"model": {"requests_per_minute": n, "tokens_per_minute": n}}`
    /// (`"*"` for every model without its own entry): what the whole fleet of workers may send each
    /// model, spent from a budget in Postgres. None by default.
    pub limits: ModelLimits,
    /// `QUICKACT_MODEL_FALLBACK`: comma-separated models a run goes on with, in order, when its
    /// model's rate limits or server errors outlast their retries. Empty by default.
    pub fallback: Vec<String>,
}


/// How a worker process takes and runs tasks.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// `QUICKACT_WORKER_CONCURRENCY`, default 256: tasks one worker process runs at once. A run
    /// waiting on a model holds a permit and no connection, so this is sized by the model's
    /// latency (docs/configuration.md, "Worker concurrency"), not by the database.
    pub concurrency: usize,
    /// `QUICKACT_HEARTBEAT_SECS`, default 5: how often a worker says it is alive.
    pub heartbeat: Duration,
    /// `QUICKACT_MISSED_HEARTBEATS`, default 3: silent heartbeats after which a worker counts as dead
    /// and its tasks are handed to another worker (5 s x 3 = 15 s, well inside the 30 s promise).
    pub missed_heartbeats: usize,
    /// `QUICKACT_SHUTDOWN_GRACE_SECS`, default 20: on SIGTERM, how long in-flight tasks may run on
    /// before they are handed back to the queue.
    pub shutdown_grace: Duration,
    /// `QUICKACT_WORKER_NAME`: prefix of this process's worker name (host name by default).
    pub name_prefix: String,
    /// `QUICKACT_DATABASE_CONNECTIONS`, default 25 for a worker: most connections the process
    /// opens to Postgres, all its pools and its listener together (see `db::WorkerPools`).
    pub database_connections: u32,
    /// `QUICKACT_WORKER_METRICS_BIND`: where the worker serves `GET /metrics` (none by default).
    pub metrics_bind: Option<SocketAddr>,
    /// `QUICKACT_MAX_RUNNING_PER_USER` and `QUICKACT_BATCH_AGING_SECS`: how the fetch shares the
    /// workers between users and priorities.
    pub turns: Turns,
}

impl WorkerConfig {
    /// Reads the worker's variables through `get`.
    fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        Ok(WorkerConfig {
            concurrency: parse_positive(get, "QUICKACT_WORKER_CONCURRENCY", "256")?,
            heartbeat: Duration::from_secs(parse_positive(get, "QUICKACT_HEARTBEAT_SECS", "5")? as u64),
            missed_heartbeats: parse_positive(get, "QUICKACT_MISSED_HEARTBEATS", "3")?,
            shutdown_grace: Duration::from_secs(parse_or(get, "QUICKACT_SHUTDOWN_GRACE_SECS", "20")?),
            name_prefix: get("QUICKACT_WORKER_NAME").unwrap_or_else(|| host_name(get)),
            database_connections: database_connections(get, crate::db::WorkerPools::DEFAULT, crate::db::WorkerPools::FEWEST)?,
            metrics_bind: get("QUICKACT_WORKER_METRICS_BIND")
                .map(|value| {
                    value.trim().parse().map_err(|e: std::net::AddrParseError| ConfigError::Invalid {
                        name: "QUICKACT_WORKER_METRICS_BIND",
                        value,
                        reason: e.to_string(),
                    })
                })
                .transpose()?,
            turns: Turns {
                max_running_per_user: parse_positive(get, "QUICKACT_MAX_RUNNING_PER_USER", "16")?.min(i32::MAX as usize) as u32,
                batch_aging: Duration::from_secs(parse_or(get, "QUICKACT_BATCH_AGING_SECS", "10")?),
            },
        })
    }

    /// A task's lease: the time after which another worker may take over a task whose owner stopped
    /// renewing it. Equal to the dead-worker threshold, so both mechanisms agree on "dead".
    pub fn lease(&self) -> Duration {
        self.heartbeat * self.missed_heartbeats as u32
    }
}

/// This host's name (`HOSTNAME`, else `/etc/hostname`): the default prefix of worker names.
fn host_name(get: &impl Fn(&str) -> Option<String>) -> String {
    get("HOSTNAME")
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_owned()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".to_owned())
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads configuration through `lookup`, so tests can build one without touching the environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let secret = |name: &str| get(name).map(SecretString::from);

        let prices = match get("QUICKACT_MODEL_PRICES") {
            Some(raw) => parse_prices(&raw)?,
            None => PriceTable::default(),
        };
        Ok(Config {
            database_url: secret("DATABASE_URL"),
            bind: parse_or(&get, "QUICKACT_BIND", "127.0.0.1:8080")?,
            admin_key: admin_key(get("QUICKACT_ADMIN_KEY"))?,
            skip_migrations: parse_bool(&get, "QUICKACT_SKIP_MIGRATIONS")?,
            default_tz: parse_or(&get, "QUICKACT_DEFAULT_TZ", "Asia/Shanghai")?,
            max_active_tasks_per_user: parse_or(&get, "QUICKACT_MAX_ACTIVE_TASKS_PER_USER", "50")?,
            reference_time_window: Duration::from_secs(parse_positive(&get, "QUICKACT_REFERENCE_TIME_WINDOW_SECS", "600")? as u64),
            model: ModelConfig {
                base_url: get("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into()),
                api_key: secret("OPENAI_API_KEY"),
                model: get("QUICKACT_MODEL").unwrap_or_else(|| "gpt-4o-mini".into()),
                request_timeout: Duration::from_secs(parse_or(&get, "QUICKACT_MODEL_TIMEOUT_SECS", "60")?),
                prices,
                currency: get("QUICKACT_CURRENCY").unwrap_or_else(|| "CNY".into()),
                budgets: BudgetLimits {
                    per_day_nanos: parse_budget(&get, "QUICKACT_BUDGET_PER_DAY")?,
                    per_month_nanos: parse_budget(&get, "QUICKACT_BUDGET_PER_MONTH")?,
                },
                fast_path: !matches!(get("QUICKACT_FAST_PATH").map(|v| v.trim().to_ascii_lowercase()).as_deref(), Some("0" | "false" | "no" | "off")),
                limits: match get("QUICKACT_MODEL_LIMITS") {
                    Some(raw) => models::parse_limits(&raw)?,
                    None => ModelLimits::default(),
                },
                fallback: get("QUICKACT_MODEL_FALLBACK")
                    .map(|models| models.split(',').map(|m| m.trim().to_owned()).filter(|m| !m.is_empty()).collect())
                    .unwrap_or_default(),
            },
            worker: WorkerConfig::from_lookup(&get)?,
            http: HttpConfig {
                database_connections: database_connections(&get, crate::db::ApiPools::DEFAULT, crate::db::ApiPools::FEWEST)?,
                request_timeout: Duration::from_secs(parse_positive(&get, "QUICKACT_REQUEST_TIMEOUT_SECS", "30")? as u64),
                max_concurrent_requests: parse_positive(&get, "QUICKACT_MAX_CONCURRENT_REQUESTS", "512")?,
                max_long_polls_per_user: parse_positive(&get, "QUICKACT_MAX_LONG_POLLS_PER_USER", "100")?,
                submit_rate_per_minute: parse_or(&get, "QUICKACT_SUBMIT_RATE_PER_MINUTE", "120")?,
                cors_origins: get("QUICKACT_CORS_ORIGINS")
                    .map(|origins| origins.split(',').map(|o| o.trim().trim_end_matches('/').to_owned()).filter(|o| !o.is_empty()).collect())
                    .unwrap_or_default(),
            },
            sweeper: SweeperConfig {
                interval: Duration::from_secs(parse_positive(&get, "QUICKACT_SWEEP_SECS", "5")? as u64),
                keep_tasks: Duration::from_secs(parse_positive(&get, "QUICKACT_KEEP_TASKS_DAYS", "90")? as u64 * 86_400),
                keep_deleted_items: Duration::from_secs(parse_positive(&get, "QUICKACT_KEEP_DELETED_ITEMS_DAYS", "30")? as u64 * 86_400),
            },
            webhooks: crate::webhooks::WebhookConfig::from_lookup(&get)?,
            trace_url: trace_url(get("QUICKACT_TRACE_URL"))?,
            planner: PlannerConfig {
                default_event_minutes: parse_positive(&get, "QUICKACT_DEFAULT_EVENT_MINUTES", "60")?.min(24 * 60) as u32,
                max_items_per_user: parse_positive(&get, "QUICKACT_MAX_ITEMS_PER_USER", "10000")? as u32,
            },
            mcp_servers: match get("QUICKACT_MCP_SERVERS") {
                Some(raw) => parse_mcp_servers(&raw)?,
                None => Vec::new(),
            },
            secrets: crate::secrets::SecretKeys::from_lookup(&get)?,
        })
    }
}

/// An MCP server the deployment registered (`QUICKACT_MCP_SERVERS`, see docs/mcp-tools.md): its
/// tools are offered to the model as `<name>__<tool>`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The prefix of its tools' names: letters, digits, `-` and `_`, no `__` (the separator).
    pub name: String,
    /// Its streamable HTTP endpoint, e.g. `https://tools.example.com/mcp`.
    pub url: String,
    /// Longest wait for one call, in seconds (default [`McpServerConfig::DEFAULT_TIMEOUT_SECS`]);
    /// never past the task's deadline.
    #[serde(default = "McpServerConfig::default_timeout_secs")]
    pub timeout_secs: u64,
    /// The HTTP header that carries each user's own token for the server (e.g. `Authorization`):
    /// the server is then offered only to users who set a token.
    #[serde(default)]
    pub header: Option<String>,
    /// The only tools of the server offered (all of them when absent).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
}

impl McpServerConfig {
    pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

    fn default_timeout_secs() -> u64 {
        Self::DEFAULT_TIMEOUT_SECS
    }

    /// Why the server cannot be used as given, if it cannot (the configuration and the admin API
    /// check the same).
    pub fn check(&self) -> Result<(), String> {
        if !McpServerConfig::valid_name(&self.name) {
            return Err(format!("{:?} is not a server name (up to 32 of letters, digits, - and _, without __)", self.name));
        }
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            return Err(format!("the url of {:?} must be http(s)", self.name));
        }
        if !(1..=600).contains(&self.timeout_secs) {
            return Err(format!("the timeout of {:?} must be 1 to 600 seconds", self.name));
        }
        if let Some(header) = &self.header
            && valid_header_name(header).is_none()
        {
            return Err(format!("{header:?} is not an HTTP header name"));
        }
        Ok(())
    }

    /// Whether `name` may name a server: a tool's name the model sees is at most 64 of
    /// `[A-Za-z0-9_-]`, and `__` separates the server's part from the tool's.
    pub fn valid_name(name: &str) -> bool {
        !name.is_empty() && name.len() <= 32 && !name.contains("__") && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    }
}

/// `QUICKACT_MCP_SERVERS`: a JSON array of [`McpServerConfig`].
fn parse_mcp_servers(raw: &str) -> Result<Vec<McpServerConfig>, ConfigError> {
    let name = "QUICKACT_MCP_SERVERS";
    let invalid = |reason: String| ConfigError::Invalid { name, value: raw.to_owned(), reason };
    let servers: Vec<McpServerConfig> = serde_json::from_str(raw).map_err(|e| invalid(e.to_string()))?;
    let mut seen = std::collections::HashSet::new();
    for server in &servers {
        server.check().map_err(invalid)?;
        if !seen.insert(server.name.as_str()) {
            return Err(invalid(format!("the server {:?} is given twice", server.name)));
        }
    }
    Ok(servers)
}

/// `header` if it is a valid HTTP header name (a token: visible ASCII without separators).
fn valid_header_name(header: &str) -> Option<&str> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    (!header.is_empty() && header.chars().all(token)).then_some(header)
}

fn parse_or<T>(get: &impl Fn(&str) -> Option<String>, name: &'static str, default: &str) -> Result<T, ConfigError>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let value = get(name).unwrap_or_else(|| default.to_owned());
    value.trim().parse().map_err(|e: T::Err| ConfigError::Invalid { name, value, reason: e.to_string() })
}

/// `QUICKACT_TRACE_URL`, which must say where the trace id goes: a template without `{trace_id}`
/// would link every task to one page.
fn trace_url(value: Option<String>) -> Result<Option<String>, ConfigError> {
    match value {
        Some(template) if !template.contains("{trace_id}") => Err(ConfigError::Invalid {
            name: "QUICKACT_TRACE_URL",
            value: template,
            reason: "the link must contain {trace_id}, where the trace's id goes".into(),
        }),
        template => Ok(template.map(|t| t.trim().to_owned())),
    }
}

/// `QUICKACT_DATABASE_CONNECTIONS`, with the process's own default and least.
fn database_connections(get: &impl Fn(&str) -> Option<String>, default: u32, fewest: u32) -> Result<u32, ConfigError> {
    let name = "QUICKACT_DATABASE_CONNECTIONS";
    let n: u32 = parse_or(get, name, &default.to_string())?;
    if n < fewest {
        return Err(ConfigError::Invalid { name, value: n.to_string(), reason: format!("this process needs at least {fewest}") });
    }
    Ok(n)
}

fn parse_positive(get: &impl Fn(&str) -> Option<String>, name: &'static str, default: &str) -> Result<usize, ConfigError> {
    let n: usize = parse_or(get, name, default)?;
    if n == 0 {
        return Err(ConfigError::Invalid { name, value: "0".into(), reason: "must be at least 1".into() });
    }
    Ok(n)
}

/// Shortest `QUICKACT_ADMIN_KEY` accepted: it is a password to everyone's data, so a guessable one is
/// refused at startup rather than used.
pub const MIN_ADMIN_KEY_CHARS: usize = 32;

fn admin_key(value: Option<String>) -> Result<Option<SecretString>, ConfigError> {
    match value {
        Some(key) if key.chars().count() < MIN_ADMIN_KEY_CHARS => Err(ConfigError::Invalid {
            name: "QUICKACT_ADMIN_KEY",
            // The value is a secret: never echoed.
            value: "(hidden)".into(),
            reason: format!("must be at least {MIN_ADMIN_KEY_CHARS} characters (e.g. `openssl rand -hex 24`)"),
        }),
        other => Ok(other.map(SecretString::from)),
    }
}

fn parse_bool(get: &impl Fn(&str) -> Option<String>, name: &'static str) -> Result<bool, ConfigError> {
    match get(name).map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(false),
        Some(v) if ["1", "true", "yes", "on"].contains(&v.as_str()) => Ok(true),
        Some(v) if ["0", "false", "no", "off"].contains(&v.as_str()) => Ok(false),
        Some(value) => Err(ConfigError::Invalid { name, value, reason: "expected true or false".into() }),
    }
}

/// A budget in units of the currency (`0.5`), as nano-units; unset is no limit.
fn parse_budget(get: &impl Fn(&str) -> Option<String>, name: &'static str) -> Result<Option<i64>, ConfigError> {
    let Some(value) = get(name) else { return Ok(None) };
    let amount: f64 = value.trim().parse().map_err(|e: std::num::ParseFloatError| ConfigError::Invalid { name, value: value.clone(), reason: e.to_string() })?;
    limit_nanos(amount).map(Some).map_err(|reason| ConfigError::Invalid { name, value, reason })
}

fn parse_prices(raw: &str) -> Result<PriceTable, ConfigError> {
    #[derive(Deserialize)]
    struct RawPrice {
        input: f64,
        output: f64,
        #[serde(default)]
        cached_input: Option<f64>,
    }
    let invalid = |reason: String| ConfigError::Invalid { name: "QUICKACT_MODEL_PRICES", value: raw.to_owned(), reason };
    let parsed: HashMap<String, RawPrice> = serde_json::from_str(raw).map_err(|e| invalid(e.to_string()))?;
    let mut table = PriceTable::default();
    for (model, p) in parsed {
        if p.input < 0.0 || p.output < 0.0 || p.cached_input.is_some_and(|c| c < 0.0) {
            return Err(invalid(format!("negative price for {model}")));
        }
        table.insert(model, ModelPrice::per_million(p.input, p.output, p.cached_input.unwrap_or(p.input)));
    }
    Ok(table)
}


#[cfg(test)]
mod tests {
    use super::*;

    fn config_with(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(|k| vars.get(k).cloned())
    }

    #[test]
    fn defaults_apply_when_nothing_is_set() {
        let config = config_with(&[]).unwrap();
        assert_eq!(config.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(config.worker.concurrency, 256);
        assert_eq!(config.worker.lease(), Duration::from_secs(15));
        assert_eq!(config.model.currency, "CNY");
        assert!(config.model.api_key.is_none());
    }

    #[test]
    fn a_short_admin_key_is_refused_without_echoing_it() {
        let refused = config_with(&[("QUICKACT_ADMIN_KEY", "hunter2")]).unwrap_err().to_string();
        assert!(refused.contains("at least 32 characters") && !refused.contains("hunter2"), "{refused}");
        let long = "k".repeat(MIN_ADMIN_KEY_CHARS);
        assert!(config_with(&[("QUICKACT_ADMIN_KEY", long.as_str())]).unwrap().admin_key.is_some());
    }

    #[test]
    fn a_trace_link_must_say_where_the_trace_id_goes() {
        assert_eq!(config_with(&[]).unwrap().trace_url, None);
        let link = config_with(&[("QUICKACT_TRACE_URL", "https://jaeger.example/trace/{trace_id}")]).unwrap().trace_url;
        assert_eq!(link.as_deref(), Some("https://jaeger.example/trace/{trace_id}"));
        let refused = config_with(&[("QUICKACT_TRACE_URL", "https://jaeger.example/search")]).unwrap_err().to_string();
        assert!(refused.contains("QUICKACT_TRACE_URL") && refused.contains("{trace_id}"), "{refused}");
    }

    #[test]
    fn zero_concurrency_is_rejected() {
        let err = config_with(&[("QUICKACT_WORKER_CONCURRENCY", "0")]).unwrap_err();
        assert!(err.to_string().contains("QUICKACT_WORKER_CONCURRENCY"));
    }

    #[test]
    fn budgets_are_amounts_of_the_currency_and_unset_means_no_limit() {
        let config = config_with(&[("QUICKACT_BUDGET_PER_DAY", "0.5")]).unwrap();
        assert_eq!(config.model.budgets, BudgetLimits { per_day_nanos: Some(500_000_000), per_month_nanos: None });
        assert!(config_with(&[("QUICKACT_BUDGET_PER_MONTH", "-1")]).is_err());
        assert!(config_with(&[("QUICKACT_BUDGET_PER_MONTH", "lots")]).is_err());
    }

    #[test]
    fn prices_parse_from_json_per_million_tokens() {
        let config = config_with(&[("QUICKACT_MODEL_PRICES", r#"{"m": {"input": 2.0, "output": 8.0}}"#)]).unwrap();
        let price = config.model.prices.get("m").unwrap();
        assert_eq!(price.cost_nanos(1_000_000, 0, 0), 2_000_000_000);
        assert_eq!(price.cost_nanos(0, 500_000, 0), 4_000_000_000);
    }

    #[test]
    fn model_limits_and_the_fallback_chain_are_read() {
        let config = config_with(&[
            ("QUICKACT_MODEL_LIMITS", r#"{"m": {"requests_per_minute": 600}, "*": {"tokens_per_minute": 90000}}"#),
            ("QUICKACT_MODEL_FALLBACK", " backup-1, backup-2 ,"),
        ])
        .unwrap();
        assert_eq!(config.model.limits.of("m"), ModelLimit { requests_per_minute: Some(600), tokens_per_minute: None });
        assert_eq!(config.model.limits.of("other"), ModelLimit { requests_per_minute: None, tokens_per_minute: Some(90000) });
        assert_eq!(config.model.fallback, ["backup-1", "backup-2"]);
        for refused in [r#"{"m": {"requests_per_minute": 0}}"#, r#"{"m": {"rpm": 5}}"#, "600"] {
            let err = config_with(&[("QUICKACT_MODEL_LIMITS", refused)]).unwrap_err();
            assert!(err.to_string().contains("QUICKACT_MODEL_LIMITS"), "{refused}: {err}");
        }
    }

    #[test]
    fn mcp_servers_are_read_and_bad_ones_refused() {
        assert!(config_with(&[]).unwrap().mcp_servers.is_empty());
        let config = config_with(&[(
            "QUICKACT_MCP_SERVERS",
            r#"[{"name": "rooms", "url": "http://127.0.0.1:9/mcp", "header": "X-Rooms-Token", "tools": ["book_room"]}, {"name": "crm", "url": "https://crm/mcp", "timeout_secs": 3}]"#,
        )])
        .unwrap();
        assert_eq!(config.mcp_servers.len(), 2);
        assert_eq!(config.mcp_servers[0].timeout_secs, McpServerConfig::DEFAULT_TIMEOUT_SECS);
        assert_eq!(config.mcp_servers[0].header.as_deref(), Some("X-Rooms-Token"));
        assert_eq!(config.mcp_servers[1].timeout_secs, 3);
        for refused in [
            r#"[{"name": "a__b", "url": "http://x"}]"#,
            r#"[{"name": "a", "url": "ftp://x"}]"#,
            r#"[{"name": "a", "url": "http://x"}, {"name": "a", "url": "http://y"}]"#,
            r#"[{"name": "a", "url": "http://x", "timeout_secs": 0}]"#,
            r#"[{"name": "a", "url": "http://x", "header": "bad header"}]"#,
            r#"[{"name": "a", "url": "http://x", "headers": "X"}]"#,
        ] {
            let err = config_with(&[("QUICKACT_MCP_SERVERS", refused)]).unwrap_err();
            assert!(err.to_string().contains("QUICKACT_MCP_SERVERS"), "{refused}: {err}");
        }
    }

    #[test]
    fn secrets_do_not_print() {
        let config = config_with(&[("OPENAI_API_KEY", "sk-very-secret")]).unwrap();
        assert!(!format!("{config:?}").contains("sk-very-secret"));
    }
}
