//! The tools the model may call, behind one registry.
//!
//! A tool is a JSON-schema definition (what the model sees) plus an executor. Executors run inside
//! the transaction that also records their journal step, so a tool's change to the database and its
//! record commit together or not at all. Every failure a model can cause (unknown tool, malformed
//! or schema-violating arguments, a refused action) becomes a tool result that says what was wrong;
//! none of them ends the run.
//!
//! - [`names`]: the tools' names (a leaf the local provider uses too).
//! - [`planner`]: the tools on the user's items (search, create, update, delete, complete, resolve a time).
//! - [`finish`]: the terminal tool, the only source of a verdict.
//! - [`state`]: what earlier tool calls of the run observed (candidates of the last search, items
//!   changed), rebuilt from the journal on replay.

pub mod finish;
pub mod names;
pub mod planner;
pub mod state;

use std::{collections::BTreeMap, sync::Arc};

use futures::future::BoxFuture;
use quickact_shared::domain::task::Verdict;
use quickact_time::TimeContext;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

pub use state::RunState;

pub use names::{FINISH, SEARCH_ITEMS};

/// What a tool may know about the run it serves. The user comes from the task, never from the
/// model, so a tool can only see and change the task owner's items.
pub struct ToolContext<'a> {
    pub task_id: Uuid,
    pub user_id: Uuid,
    pub input_text: &'a str,
    /// The moment the user wrote the sentence, in their zone: dates resolve against it.
    pub time: TimeContext,
    pub state: &'a RunState,
}

/// A successful tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// A result for the model.
    Result(Value),
    /// The run's verdict (only `finish` returns this).
    Finish(Verdict),
}

/// What a tool call comes to.
pub type ToolResult = Result<ToolOutput, ToolError>;

/// A failed tool call.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's schema; the message tells the model what to fix.
    #[error("{0}")]
    InvalidArguments(String),
    /// The arguments are fine but the action is not allowed (a rule of the service); the message
    /// says why and what to do instead.
    #[error("{0}")]
    Refused(String),
    /// The database failed underneath the tool.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

/// What a tool does with the connection it is given, which decides how a run calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatabaseUse {
    /// It sends no statement.
    None,
    /// It only reads: called with nothing open, it needs no transaction (its step is recorded in
    /// one statement after it); inside a transaction it gets a savepoint, so a failed read does
    /// not fail the transaction.
    Reads,
    /// It changes data: it runs inside the transaction that records its step (the change and the
    /// step commit together, or neither), in a savepoint of its own, so a failure leaves no
    /// partial change behind.
    Writes,
}

/// One tool.
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// JSON schema of the arguments.
    fn parameters(&self) -> Value;
    /// What the tool does with the connection it gets (see [`DatabaseUse`]).
    fn database_use(&self) -> DatabaseUse;
    /// Runs the tool inside the caller's transaction.
    fn execute<'a>(
        &'a self,
        context: &'a ToolContext<'a>,
        db: &'a mut PgConnection,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// A tool whose arguments are read into a typed form before it runs. Implementing it gives the
/// registry's [`Tool`]: the JSON arguments, already checked against [`TypedTool::schema`], are
/// deserialised into [`TypedTool::Arguments`] (serde's message names the offending field).
pub trait TypedTool: Send + Sync {
    const NAME: &'static str;
    /// What the model reads about the tool.
    const DESCRIPTION: &'static str;
    type Arguments: DeserializeOwned + Send;
    /// See [`Tool::database_use`].
    const DATABASE_USE: DatabaseUse = DatabaseUse::Writes;
    /// JSON schema of the arguments.
    fn schema(&self) -> Value;
    /// Runs the tool inside the caller's transaction.
    fn run(&self, context: &ToolContext<'_>, db: &mut PgConnection, arguments: Self::Arguments) -> impl Future<Output = ToolResult> + Send;
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }

    fn parameters(&self) -> Value {
        self.schema()
    }

    fn database_use(&self) -> DatabaseUse {
        T::DATABASE_USE
    }

    fn execute<'a>(
        &'a self,
        context: &'a ToolContext<'a>,
        db: &'a mut PgConnection,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { self.run(context, db, typed_arguments(T::NAME, arguments)?).await })
    }
}

/// The tools of a run, by name.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<&'static str, Arc<dyn Tool>>,
    /// The tools' definitions, made once: every model turn sends them.
    definitions: Arc<Vec<Value>>,
    /// The deployment's MCP servers, whose tools a run with a model may call too (see
    /// [`crate::mcp`]); they are listed per run, not registered here.
    external: Option<Arc<crate::mcp::McpServers>>,
}

impl ToolRegistry {
    /// Every tool of the contract.
    pub fn standard(settings: planner::PlannerConfig) -> Self {
        let mut registry = ToolRegistry::default();
        registry.register(Arc::new(finish::FinishTool));
        for tool in planner::tools(settings) {
            registry.register(tool);
        }
        registry
    }

    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.name(), tool);
        self.definitions = Arc::new(
            self.tools
                .values()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": { "name": tool.name(), "description": tool.description(), "parameters": tool.parameters() },
                    })
                })
                .collect(),
        );
    }

    /// This registry, with the deployment's MCP servers (if any).
    pub fn with_external(mut self, servers: Option<Arc<crate::mcp::McpServers>>) -> Self {
        self.external = servers;
        self
    }

    /// The deployment's MCP servers, if any.
    pub fn external(&self) -> Option<&crate::mcp::McpServers> {
        self.external.as_deref()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.tools.keys().copied().collect()
    }

    /// Definitions in the chat-completions `tools` format.
    pub fn definitions(&self) -> Arc<Vec<Value>> {
        self.definitions.clone()
    }
}

/// The JSON schema of a tool's arguments: an object with `properties`, of which `required` must be
/// given, and nothing else.
pub fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

/// Reads a tool call's raw argument text as a JSON object. Empty text means "no arguments".
pub fn parse_arguments_text(raw: &str) -> Result<Value, ToolError> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Ok(json!({}));
    }
    let value: Value = serde_json::from_str(trimmed)
        .map_err(|e| ToolError::InvalidArguments(format!("the arguments are not valid JSON ({e}); send one JSON object")))?;
    if !value.is_object() {
        return Err(ToolError::InvalidArguments("the arguments must be a JSON object".into()));
    }
    Ok(value)
}

/// Checks arguments against a tool's JSON schema: unknown properties (when the schema forbids
/// them), missing required ones, wrong JSON types and values outside an enum. Serde then reads the
/// checked value into the tool's typed form.
pub fn check_against_schema(tool: &str, schema: &Value, arguments: &Value) -> Result<(), ToolError> {
    let invalid = |m: String| Err(ToolError::InvalidArguments(format!("invalid arguments for {tool}: {m}")));
    let Some(object) = arguments.as_object() else { return invalid("expected a JSON object".into()) };
    let properties = schema.get("properties").and_then(Value::as_object);
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        for key in object.keys() {
            if !properties.is_some_and(|p| p.contains_key(key)) {
                let known: Vec<&String> = properties.map(|p| p.keys().collect()).unwrap_or_default();
                return invalid(format!("unknown argument {key:?}; the arguments are {known:?}"));
            }
        }
    }
    for required in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        if object.get(required).is_none_or(Value::is_null) {
            return invalid(format!("missing required argument {required:?}"));
        }
    }
    for (key, value) in object {
        let Some(spec) = properties.and_then(|p| p.get(key)) else { continue };
        if value.is_null() {
            continue;
        }
        let expected = spec.get("type").and_then(Value::as_str).unwrap_or("any");
        let fits = match expected {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => true,
        };
        if !fits {
            return invalid(format!("{key:?} must be of type {expected}, got {value}"));
        }
        if let (Some(allowed), Some(text)) = (spec.get("enum").and_then(Value::as_array), value.as_str())
            && !allowed.iter().any(|a| a.as_str() == Some(text)) {
                return invalid(format!("{key:?} must be one of {allowed:?}, got {text:?}"));
            }
    }
    Ok(())
}

/// Deserialises arguments into a tool's typed form; serde's message names the offending field.
fn typed_arguments<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolError> {
    serde_json::from_value(arguments).map_err(|e| ToolError::InvalidArguments(format!("invalid arguments for {tool}: {e}")))
}

/// Prepares a model's arguments for a tool: nulls mean "not given", integers sent as text ("3") or
/// as 3.0 become integers where the schema wants one, then the result is checked against the schema.
pub fn prepare_arguments(tool: &dyn Tool, mut arguments: Value) -> Result<Value, ToolError> {
    let schema = tool.parameters();
    if let Some(object) = arguments.as_object_mut() {
        object.retain(|_, v| !v.is_null());
        for (key, value) in object.iter_mut() {
            let wants_integer = schema.pointer(&format!("/properties/{key}/type")).and_then(Value::as_str) == Some("integer");
            if !wants_integer {
                continue;
            }
            if let Some(n) = value.as_str().and_then(|s| s.trim().parse::<i64>().ok()) {
                *value = Value::from(n);
            } else if let Some(f) = value.as_f64().filter(|f| f.fract() == 0.0 && !value.is_i64() && !value.is_u64()) {
                *value = Value::from(f as i64);
            }
        }
    }
    check_against_schema(tool.name(), &schema, &arguments)?;
    Ok(arguments)
}
