//! `update_item`: change an item (reschedule, retitle, re-prioritise, ...).

use futures::future::BoxFuture;
use quickact_shared::planner::{
    item::{ItemKind, ItemStatus},
    schedule::{read_duration, read_time_arguments, reschedule, shift},
    store::{ItemFields, update_item},
};
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::{PlannerSettings, PriorityArgument, TimeFields, conflict_outcome, create::changed, owned_item, parse_item_id, passed_outcome, schedule_of, time_properties};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput, typed_arguments};

pub struct UpdateItem {
    pub settings: PlannerSettings,
}

#[derive(Debug, Deserialize)]
struct UpdateArguments {
    id: String,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    priority: Option<PriorityArgument>,
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    shift: Option<String>,
    #[serde(default)]
    allow_conflict: bool,
    #[serde(flatten)]
    time: TimeFields,
}

impl Tool for UpdateItem {
    fn name(&self) -> &'static str {
        "update_item"
    }

    fn description(&self) -> &'static str {
        "Change an item found by search_items. To move it, pass the new time as the user said it in `when` \
         (a time alone keeps the item's day; a new start keeps its duration), or `shift` for \"推迟半小时\" / \
         \"提前1小时\" / \"30 minutes later\". A passed time or a conflict is reported instead of written."
    }

    fn parameters(&self) -> Value {
        let mut properties = time_properties();
        let more = json!({
            "id": { "type": "string", "description": "The item's id from search_items." },
            "kind": { "type": "string", "enum": ["event", "todo", "reminder"] },
            "title": { "type": "string" },
            "description": { "type": "string" },
            "priority": { "type": "integer", "minimum": 1, "maximum": 4 },
            "group": { "type": "string" },
            "status": { "type": "string", "enum": ["open", "completed"] },
            "shift": { "type": "string", "description": "Move by a duration as the user said it: \"半小时\", \"提前1小时\", \"2 days\"." },
            "allow_conflict": { "type": "boolean" }
        });
        properties.extend(more.as_object().cloned().expect("an object"));
        json!({ "type": "object", "properties": properties, "required": ["id"], "additionalProperties": false })
    }

    fn execute<'a>(
        &'a self,
        context: &'a ToolContext<'a>,
        db: &'a mut PgConnection,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: UpdateArguments = typed_arguments(self.name(), arguments)?;
            let id = parse_item_id(&args.id)?;
            let item = owned_item(db, context, id).await?;
            let mut fields = ItemFields::of(&item);

            if let Some(title) = &args.title {
                let title = title.trim();
                if title.is_empty() || title.chars().count() > 500 {
                    return Err(ToolError::InvalidArguments("title must be 1 to 500 characters".into()));
                }
                fields.title = title.to_owned();
            }
            if let Some(description) = &args.description {
                fields.description = Some(description.trim().to_owned()).filter(|d| !d.is_empty());
            }
            if let Some(kind) = &args.kind {
                fields.kind = kind.parse::<ItemKind>().map_err(|_| ToolError::InvalidArguments(format!("kind must be event, todo or reminder, got {kind:?}")))?.as_str().to_owned();
            }
            if let Some(priority) = &args.priority {
                fields.priority = Some(priority.value()?);
            }
            if let Some(group) = &args.group {
                fields.item_group = Some(group.trim().to_owned()).filter(|g| !g.is_empty());
            }
            if let Some(status) = &args.status {
                fields.status = status.parse::<ItemStatus>().map_err(|_| ToolError::InvalidArguments(format!("status must be open or completed, got {status:?}")))?.as_str().to_owned();
            }

            let current = schedule_of(&item);
            let time_args = args.time.as_arguments();
            let mut schedule = current.clone();
            let mut moved = false;
            if !time_args.is_empty() {
                let stated = read_time_arguments(&time_args, &context.time).map_err(ToolError::InvalidArguments)?;
                schedule = reschedule(&schedule, &stated, self.settings.default_event_minutes);
                moved = true;
            }
            if let Some(text) = args.shift.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                let minutes = read_duration(text, &context.time)
                    .ok_or_else(|| ToolError::InvalidArguments(format!("could not read shift {text:?} as a duration (e.g. \"半小时\", \"-30\")")))?;
                schedule = shift(&schedule, minutes).map_err(ToolError::Refused)?;
                moved = true;
            }
            if moved {
                if let Some(outcome) = passed_outcome(&schedule, &context.time, "move") {
                    return Ok(ToolOutput::Result(outcome));
                }
                if fields.kind == "event" && !args.allow_conflict
                    && let Some(outcome) = conflict_outcome(db, context, &schedule, Some(item.id)).await? {
                        return Ok(ToolOutput::Result(outcome));
                    }
                fields.date = schedule.date;
                fields.start_time = schedule.start_time;
                fields.end_time = schedule.end_time;
                fields.segment = schedule.segment.map(|s| s.as_str().to_owned());
                fields.recurrence = schedule.recurrence.clone();
            }
            if fields == ItemFields::of(&item) {
                return Err(ToolError::InvalidArguments("nothing to change: pass the fields to update".into()));
            }
            let updated = update_item(&mut *db, context.user_id, item.id, &fields, Some(context.task_id))
                .await?
                .ok_or_else(|| ToolError::Refused(format!("item {id} no longer exists")))?;
            let mut result = changed("updated", &updated, &schedule.notes);
            result["before"] = item.to_json();
            Ok(ToolOutput::Result(result))
        })
    }
}
