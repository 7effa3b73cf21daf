//! `complete_todo`: mark an item as done.

use quickact_shared::planner::{
    item::{ItemFields, ItemStatus},
    store::update_item,
};
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::{ItemIdArguments, changed, item_id_parameters, owned_item, parse_item_id};
use crate::tools::{ToolContext, ToolError, ToolOutput, ToolResult, TypedTool};

pub struct CompleteTodo;

impl TypedTool for CompleteTodo {
    const NAME: &'static str = crate::tools::names::COMPLETE_TODO;
    const DESCRIPTION: &'static str = "Mark an item found by search_items as completed (\"完成报告提交\", \"mark buy milk as done\").";
    type Arguments = ItemIdArguments;

    fn schema(&self) -> Value {
        item_id_parameters()
    }

    async fn run(&self, context: &ToolContext<'_>, db: &mut PgConnection, args: ItemIdArguments) -> ToolResult {
        let id = parse_item_id(&args.id)?;
        let item = owned_item(db, context, id).await?;
        if item.status == ItemStatus::Completed {
            let mut result = changed("already_completed", &item, &[]);
            result["written"] = json!(false);
            return Ok(ToolOutput::Result(result));
        }
        let fields = ItemFields { status: ItemStatus::Completed, ..ItemFields::of(&item) };
        let done = update_item(&mut *db, context.user_id, id, &fields, Some(context.task_id))
            .await?
            .ok_or_else(|| ToolError::Refused(format!("item {id} no longer exists")))?;
        Ok(ToolOutput::Result(changed("completed", &done, &[])))
    }
}
