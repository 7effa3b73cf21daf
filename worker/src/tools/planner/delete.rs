//! `delete_item`: remove an item (soft deletion: it disappears from every listing).

use quickact_shared::planner::store::delete_item;
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::{ItemIdArguments, item_id_parameters, owned_item, parse_item_id};
use crate::tools::{ToolContext, ToolError, ToolOutput, ToolResult, TypedTool};

pub struct DeleteItem;

impl TypedTool for DeleteItem {
    const NAME: &'static str = crate::tools::names::DELETE_ITEM;
    const DESCRIPTION: &'static str = "Delete an item found by search_items.";
    type Arguments = ItemIdArguments;

    fn schema(&self) -> Value {
        item_id_parameters()
    }

    async fn run(&self, context: &ToolContext<'_>, db: &mut PgConnection, args: ItemIdArguments) -> ToolResult {
        let id = parse_item_id(&args.id)?;
        owned_item(db, context, id).await?;
        let item = delete_item(&mut *db, context.user_id, id, Some(context.task_id))
            .await?
            .ok_or_else(|| ToolError::Refused(format!("item {id} no longer exists")))?;
        let rendered = item.to_json_deleted();
        Ok(ToolOutput::Result(json!({
            "written": true,
            "item": rendered,
            "model_view": { "deleted": item.summary(), "id": item.id },
        })))
    }
}
