//! `delete_item`: remove an item (soft deletion: it disappears from every listing).

use futures::future::BoxFuture;
use quickact_shared::planner::store::delete_item;
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::{ItemIdArguments, item_id_parameters, owned_item, parse_item_id};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput, typed_arguments};

pub struct DeleteItem;

impl Tool for DeleteItem {
    fn name(&self) -> &'static str {
        "delete_item"
    }

    fn description(&self) -> &'static str {
        "Delete an item found by search_items."
    }

    fn parameters(&self) -> Value {
        item_id_parameters()
    }

    fn execute<'a>(
        &'a self,
        context: &'a ToolContext<'a>,
        db: &'a mut PgConnection,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: ItemIdArguments = typed_arguments(self.name(), arguments)?;
            let id = parse_item_id(&args.id)?;
            owned_item(db, context, id).await?;
            let item = delete_item(&mut *db, context.user_id, id, Some(context.task_id))
                .await?
                .ok_or_else(|| ToolError::Refused(format!("item {id} no longer exists")))?;
            let mut rendered = item.to_json();
            rendered["deleted"] = json!(true);
            Ok(ToolOutput::Result(json!({
                "written": true,
                "item": rendered,
                "model_view": { "deleted": item.summary(), "id": item.id },
            })))
        })
    }
}
