//! `complete_todo`: mark an item as done.

use futures::future::BoxFuture;
use quickact_shared::planner::store::{ItemFields, update_item};
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::{ItemIdArguments, create::changed, item_id_parameters, owned_item, parse_item_id};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput, typed_arguments};

pub struct CompleteTodo;

impl Tool for CompleteTodo {
    fn name(&self) -> &'static str {
        "complete_todo"
    }

    fn description(&self) -> &'static str {
        "Mark an item found by search_items as completed (\"完成报告提交\", \"mark buy milk as done\")."
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
            let item = owned_item(db, context, id).await?;
            if item.status == "completed" {
                let mut result = changed("already_completed", &item, &[]);
                result["written"] = json!(false);
                return Ok(ToolOutput::Result(result));
            }
            let fields = ItemFields { status: "completed".to_owned(), ..ItemFields::of(&item) };
            let done = update_item(&mut *db, context.user_id, id, &fields, Some(context.task_id))
                .await?
                .ok_or_else(|| ToolError::Refused(format!("item {id} no longer exists")))?;
            Ok(ToolOutput::Result(changed("completed", &done, &[])))
        })
    }
}
