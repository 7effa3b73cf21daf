//! `resolve_time`: what a time expression means, for the model to check before acting.

use quickact_time::find_all;
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::PgConnection;

use crate::tools::{DatabaseUse, ToolContext, ToolError, ToolOutput, ToolResult, TypedTool, object_schema};

pub struct ResolveTime;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveArguments {
    text: String,
}

impl TypedTool for ResolveTime {
    const NAME: &'static str = crate::tools::names::RESOLVE_TIME;
    const DESCRIPTION: &'static str = "Resolve time expressions (\"大后天晚上8点半\", \"next monday 3pm\") into exact dates and times in the \
         user's time zone, relative to when the sentence was written. Never compute dates yourself.";
    type Arguments = ResolveArguments;
    // The resolver is a pure function of the text and the run's time context.
    const DATABASE_USE: DatabaseUse = DatabaseUse::None;

    fn schema(&self) -> Value {
        object_schema(json!({ "text": { "type": "string" } }), &["text"])
    }

    async fn run(&self, context: &ToolContext<'_>, _db: &mut PgConnection, args: ResolveArguments) -> ToolResult {
        let matches = find_all(&args.text, &context.time);
        if matches.is_empty() {
            return Err(ToolError::InvalidArguments(format!("no time expression found in {:?}", args.text)));
        }
        let now = context.time.now();
        Ok(ToolOutput::Result(json!({
            "now": now.format("%Y-%m-%d %H:%M %A").to_string(),
            "matches": matches.iter().map(|m| json!({ "text": m.text, "resolution": m.resolution })).collect::<Vec<_>>(),
        })))
    }
}
