//! External tools: the tools of MCP servers the deployment registered, which the model may call
//! beside the planner's, over streamable HTTP with `rmcp`, the official SDK (see
//! docs/mcp-tools.md). Servers come from the configuration (`QUICKACT_MCP_SERVERS`, for every
//! user) and from admins through the API (`mcp_servers`, for every user or for one; read again at
//! most [`REGISTERED_TTL`] after the last read, so a change reaches every worker that soon).
//!
//! - Names: the model sees a server's tool `t` as `<server>__<tool>`, so no server can shadow a
//!   tool of the contract (no contract tool has `__` in its name) nor another server's.
//! - Listing: a server's tools/list is cached for [`LIST_TTL`] (per user token when the server
//!   takes one: a server may list different tools per user). A server that cannot be listed is
//!   left out of the run's tools, with a logged warning: the planner's tools still work.
//! - Per-user token: a server with a `header` gets, as that header, the calling user's own token
//!   (`PUT /api/mcp-servers/{name}/token`), verbatim; it is offered only to users who set one.
//!   Tokens are stored encrypted (`quickact_shared::secrets`): one this worker cannot decrypt (its
//!   key not configured here, or changed; an altered row) leaves the server's tools out of the run
//!   with a logged warning, and fails a call to them with an error that says why (never the token).
//! - Calls: each carries `_meta` with the idempotency key `<task_id>:<step>` (and
//!   `quickact/task_id`, `quickact/step`), the same on every try of the same journal step, so a
//!   server that keys its effects by it makes each one once (see `crate::agent::external_call`
//!   for the journal's side), and is bounded by the server's timeout and the task's deadline.
//!
//! A connection (an MCP session: `initialize`, the request, the session's end) is made per list
//! and per call, not kept: a session carries one user's header, a call is seconds apart from the
//! next, and nothing is left open in a worker that may be killed at any moment. The cost is one
//! `initialize` round trip per call.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use quickact_shared::{
    config::McpServerConfig,
    secrets::{OpenError, SecretKeys},
    store::{
        mcp_servers::{RegisteredMcpServer, list_servers},
        mcp_tokens,
    },
};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::{
    ServiceExt,
    model::{CallToolRequestParams, RequestMetaObject},
    service::RunningService,
    transport::{StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig},
};
use secrecy::ExposeSecret;
use serde_json::{Map, Value, json};
use sqlx::PgPool;
use tokio::time::Instant;
use uuid::Uuid;

/// Between a server's name and its tool's in the name the model sees.
pub const SEPARATOR: &str = "__";
/// How long a server's listed tools are reused: new tools appear within this, and a run does not
/// pay a listing round trip per turn.
pub const LIST_TTL: Duration = Duration::from_secs(60);
/// Longest wait for a server's tools/list (or its server's timeout, if shorter): a run waits for
/// its listings before its first model turn.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(5);
/// The `_meta` key of a call's idempotency key.
pub const IDEMPOTENCY_KEY: &str = "idempotency_key";
/// Largest answer read from a server: a tool's result is journaled whole (the model reads it
/// capped), so a runaway answer fails the call instead of filling the journal.
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;
/// How long the admin-registered servers read from the database are reused.
pub const REGISTERED_TTL: Duration = Duration::from_secs(10);
/// The key, in an external call's journaled result, of its server: what marks the step as an
/// external call's (its other keys: [`IDEMPOTENCY_KEY`], and the tool's answer).
pub const RESULT_SERVER: &str = "mcp_server";
/// The key, in an external call's journaled result, that marks the call as made and not answered
/// yet (see `crate::agent::external_call`).
pub use quickact_shared::store::steps::IN_FLIGHT;

/// The deployment's MCP servers.
pub struct McpServers {
    /// From the configuration, for every user.
    configured: Vec<McpServerConfig>,
    /// Registered by admins, as last read, and when.
    registered: Mutex<Option<(Instant, Arc<Vec<RegisteredMcpServer>>)>>,
    /// Listed definitions (already namespaced), by server, its URL and the token they were listed
    /// with.
    listed: Mutex<HashMap<ListKey, Listed>>,
    http: reqwest::Client,
    /// The keys users' tokens are encrypted with (`QUICKACT_SECRETS_KEY`); none: only tokens an
    /// older build stored in plain text can be read.
    secrets: Option<SecretKeys>,
}

/// A server's name, URL and the token a listing was made with.
type ListKey = (String, String, Option<String>);
/// A server's definitions, and when they were listed.
type Listed = (Instant, Arc<Vec<Value>>);

/// A call's tool: its server and its name there.
#[derive(Clone)]
pub struct ExternalTool {
    pub server: McpServerConfig,
    pub tool: String,
}

/// A call's idempotency key: the task and the journal step the call is recorded in.
pub fn idempotency_key(task_id: Uuid, step: i32) -> String {
    format!("{task_id}:{step}")
}

impl McpServers {
    /// The configured servers (`configs`) and those admins register; users' tokens are decrypted
    /// with `secrets`.
    pub fn new(configs: &[McpServerConfig], secrets: Option<SecretKeys>) -> Arc<Self> {
        let http = reqwest::Client::builder().connect_timeout(Duration::from_secs(5)).build().expect("an HTTP client");
        let listed = Mutex::new(HashMap::new());
        Arc::new(McpServers { configured: configs.to_vec(), registered: Mutex::new(None), listed, http, secrets })
    }

    /// The servers `user_id`'s tasks may call: the configured ones, then those admins registered
    /// for everyone or for the user.
    pub async fn servers_for(&self, pool: &PgPool, user_id: Uuid) -> Result<Vec<McpServerConfig>, sqlx::Error> {
        let registered = self.registered(pool).await?;
        let mut servers = self.configured.clone();
        servers.extend(registered.iter().filter(|server| server.serves(user_id)).map(RegisteredMcpServer::config));
        Ok(servers)
    }

    /// The admin-registered servers, read at most [`REGISTERED_TTL`] ago.
    async fn registered(&self, pool: &PgPool) -> Result<Arc<Vec<RegisteredMcpServer>>, sqlx::Error> {
        if let Some((at, servers)) = self.registered.lock().expect("registered servers").as_ref()
            && at.elapsed() < REGISTERED_TTL
        {
            return Ok(servers.clone());
        }
        let servers = Arc::new(list_servers(pool).await?);
        *self.registered.lock().expect("registered servers") = Some((Instant::now(), servers.clone()));
        Ok(servers)
    }

    /// The external tool the model means by `name`, if `name` is `<server>__<tool>` of a server
    /// `user_id` may call, whose allow-list (if any) has the tool. Names without `__` (the
    /// planner's) are answered without reading anything.
    pub async fn find(&self, pool: &PgPool, user_id: Uuid, name: &str) -> Result<Option<ExternalTool>, sqlx::Error> {
        let Some((server, tool)) = name.split_once(SEPARATOR) else { return Ok(None) };
        let Some(server) = self.servers_for(pool, user_id).await?.into_iter().find(|s| s.name == server) else { return Ok(None) };
        let allowed = server.tools.as_ref().is_none_or(|tools| tools.iter().any(|t| t == tool));
        Ok((allowed && !tool.is_empty()).then(|| ExternalTool { server, tool: tool.to_owned() }))
    }

    /// The definitions (chat-completions `tools` format) of every server's tools `user_id` may call,
    /// listed at most [`LIST_TTL`] ago; the servers are listed at once, each within its time.
    pub async fn definitions(&self, pool: &PgPool, user_id: Uuid) -> Vec<Value> {
        let servers = match self.servers_for(pool, user_id).await {
            Ok(servers) => servers,
            Err(err) => {
                tracing::warn!(error = %err, "could not read the registered MCP servers; only the configured ones are offered");
                self.configured.clone()
            }
        };
        let lists = futures::future::join_all(servers.iter().map(|server| self.definitions_of(server, pool, user_id))).await;
        lists.into_iter().flat_map(|list| list.iter().cloned().collect::<Vec<_>>()).collect()
    }

    async fn definitions_of(&self, server: &McpServerConfig, pool: &PgPool, user_id: Uuid) -> Arc<Vec<Value>> {
        let name = &server.name;
        let token = match self.token(server, pool, user_id).await {
            Ok(Token::Missing) => return Arc::default(),
            Ok(Token::Some(token)) => Some(token),
            Ok(Token::NotNeeded) => None,
            Ok(Token::Unreadable(err)) => {
                tracing::warn!(server = %name, %user_id, error = %err, "the user's token for an MCP server cannot be decrypted; its tools are left out");
                return Arc::default();
            }
            Err(err) => {
                tracing::warn!(server = %name, error = %err, "could not read the user's token for an MCP server; its tools are left out");
                return Arc::default();
            }
        };
        let key = (server.name.clone(), server.url.clone(), token);
        if let Some((at, list)) = self.listed.lock().expect("listing cache").get(&key)
            && at.elapsed() < LIST_TTL
        {
            return list.clone();
        }
        let wait = LIST_TIMEOUT.min(Duration::from_secs(server.timeout_secs));
        let listed = tokio::time::timeout(wait, self.list(server, key.2.as_deref())).await;
        let list = match listed {
            Ok(Ok(list)) => Arc::new(list),
            Ok(Err(err)) => {
                tracing::warn!(server = %name, error = %err, "could not list an MCP server's tools; they are left out of the run");
                return Arc::default();
            }
            Err(_) => {
                tracing::warn!(server = %name, "an MCP server did not list its tools in {wait:?}; they are left out of the run");
                return Arc::default();
            }
        };
        let mut cache = self.listed.lock().expect("listing cache");
        cache.retain(|_, (at, _)| at.elapsed() < LIST_TTL);
        cache.insert(key, (Instant::now(), list.clone()));
        list
    }

    /// Lists `server`'s tools as namespaced definitions (those its allow-list names, whose names
    /// fit a model's function names).
    async fn list(&self, server: &McpServerConfig, token: Option<&str>) -> Result<Vec<Value>, String> {
        let client = self.connect(server, token).await?;
        let tools = client.peer().list_all_tools().await.map_err(|e| format!("tools/list failed: {e}"));
        close(client);
        let definitions = tools?
            .into_iter()
            .filter(|tool| server.tools.as_ref().is_none_or(|allowed| allowed.iter().any(|a| a == &tool.name)))
            .filter_map(|tool| {
                let name = format!("{}{SEPARATOR}{}", server.name, tool.name);
                let fits = name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if !fits {
                    tracing::warn!(server = %server.name, tool = %tool.name, "an MCP tool's name does not fit a model's function name; left out");
                    return None;
                }
                let description = tool.description.as_deref().unwrap_or("").to_owned();
                let parameters = Value::Object((*tool.input_schema).clone());
                Some(json!({
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": format!("[external tool of {}] {description}", server.name),
                        "parameters": parameters,
                    },
                }))
            })
            .collect();
        Ok(definitions)
    }

    /// Calls `tool` for `user_id` with `arguments` and the idempotency key of journal step `step`
    /// of task `task_id`, within `timeout`. `Ok`: the tool's result as data (its text content and
    /// structured content); `Err`: why the call failed (the server's error text, a timeout, an
    /// unreachable server), naming the tool.
    pub async fn call(
        &self,
        pool: &PgPool,
        user_id: Uuid,
        tool: &ExternalTool,
        arguments: Value,
        (task_id, step): (Uuid, i32),
        timeout: Duration,
    ) -> Result<Value, String> {
        let name = format!("{}{SEPARATOR}{}", tool.server.name, tool.tool);
        let token = match self.token(&tool.server, pool, user_id).await {
            Ok(Token::Some(token)) => Some(token),
            Ok(Token::NotNeeded) => None,
            Ok(Token::Missing) => {
                return Err(format!("{name} failed: no token is set for the server {} (PUT /api/mcp-servers/{}/token)", tool.server.name, tool.server.name));
            }
            Ok(Token::Unreadable(err)) => return Err(format!("{name} failed: the user's token for the server {} cannot be read: {err}", tool.server.name)),
            Err(err) => return Err(format!("{name} failed: could not read the user's token ({err})")),
        };
        let mut meta = Map::new();
        meta.insert(IDEMPOTENCY_KEY.into(), json!(idempotency_key(task_id, step)));
        meta.insert("quickact/task_id".into(), json!(task_id));
        meta.insert("quickact/step".into(), json!(step));
        let mut params = CallToolRequestParams::new(tool.tool.clone());
        params.arguments = match arguments {
            Value::Object(arguments) => Some(arguments),
            _ => Some(Map::new()),
        };
        params.meta = Some(RequestMetaObject::from(meta));
        let call = async {
            let client = self.connect(&tool.server, token.as_deref()).await?;
            let result = client.peer().call_tool(params).await;
            close(client);
            result.map_err(|e| e.to_string())
        };
        let result = match tokio::time::timeout(timeout, call).await {
            Err(_) => return Err(format!("{name} failed: no answer within {:.1} s", timeout.as_secs_f64())),
            Ok(Err(err)) => return Err(format!("{name} failed: {err}")),
            Ok(Ok(result)) => result,
        };
        let text: Vec<&str> = result.content.iter().filter_map(|block| block.as_text().map(|t| t.text.as_str())).collect();
        if result.is_error == Some(true) {
            return Err(format!("{name} failed: {}", text.join("\n")));
        }
        let mut value = json!({ "content": text.join("\n") });
        if let Some(structured) = result.structured_content {
            value["structured"] = structured;
        }
        Ok(value)
    }

    /// Connects to `server` (an MCP session), with `token` as its header.
    async fn connect(&self, server: &McpServerConfig, token: Option<&str>) -> Result<RunningService<rmcp::RoleClient, ()>, String> {
        let mut headers = HashMap::new();
        if let (Some(header), Some(token)) = (&server.header, token) {
            let name = HeaderName::from_bytes(header.as_bytes()).map_err(|e| format!("bad header name: {e}"))?;
            let mut value = HeaderValue::from_str(token).map_err(|_| "the user's token is not a valid header value".to_owned())?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let config = StreamableHttpClientTransportConfig::with_uri(server.url.as_str())
            .custom_headers(headers)
            .max_json_response_size(MAX_RESPONSE_BYTES)
            .max_sse_event_size(MAX_RESPONSE_BYTES);
        let transport = StreamableHttpClientTransport::with_client(self.http.clone(), config);
        ().serve(transport).await.map_err(|e| format!("cannot connect to the MCP server {}: {e}", server.name))
    }

    /// The token `user_id`'s calls to `server` carry.
    async fn token(&self, server: &McpServerConfig, pool: &PgPool, user_id: Uuid) -> Result<Token, sqlx::Error> {
        if server.header.is_none() {
            return Ok(Token::NotNeeded);
        }
        Ok(match mcp_tokens::stored_token(pool, user_id, &server.name).await? {
            Some(stored) => match stored.open(self.secrets.as_ref(), user_id, &server.name) {
                Ok(token) => Token::Some(token.expose_secret().to_owned()),
                Err(err) => Token::Unreadable(err),
            },
            None => Token::Missing,
        })
    }
}

/// Ends an MCP session in the background: a call's answer is in hand, and a server slow to end
/// the session must not turn it into a timeout (the model would be told the call failed, and might
/// make it again under a new key).
fn close(client: RunningService<rmcp::RoleClient, ()>) {
    tokio::spawn(async move {
        let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
    });
}

enum Token {
    NotNeeded,
    Missing,
    Some(String),
    /// Stored encrypted, and no key here decrypts it.
    Unreadable(OpenError),
}
