//! `create_item`: add an event, to-do or reminder.

use futures::future::BoxFuture;
use quickact_shared::planner::{
    item::{ItemKind, ItemRecord},
    schedule::{read_time_arguments, schedule_for_new_item},
    store::{ItemFields, insert_item},
};
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::{PlannerSettings, PriorityArgument, TimeFields, conflict_outcome, passed_outcome, time_properties};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput, typed_arguments};

pub struct CreateItem {
    pub settings: PlannerSettings,
}

#[derive(Debug, Deserialize)]
struct CreateArguments {
    #[serde(default)]
    kind: Option<String>,
    title: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    priority: Option<PriorityArgument>,
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    allow_conflict: bool,
    #[serde(flatten)]
    time: TimeFields,
}

impl Tool for CreateItem {
    fn name(&self) -> &'static str {
        "create_item"
    }

    fn description(&self) -> &'static str {
        "Create an item. event: something at a time (a range, or a part of the day); todo: something to do \
         by a date; reminder: something to be reminded of. Pass the time as the user said it in `when`. \
         Without a date the item is for today; an event without an end lasts the default duration. A time \
         that has passed or a conflict with another event is reported instead of written; set \
         allow_conflict only when the user said to add it anyway."
    }

    fn parameters(&self) -> Value {
        let mut properties = time_properties();
        let more = json!({
            "kind": { "type": "string", "enum": ["event", "todo", "reminder"] },
            "title": { "type": "string", "description": "Short title in the user's language, without the time words (\"开会\", \"dentist appointment\")." },
            "description": { "type": "string" },
            "priority": { "type": "integer", "minimum": 1, "maximum": 4, "description": "1 important+urgent, 2 important not urgent, 3 urgent not important, 4 neither." },
            "group": { "type": "string", "description": "A list or project name." },
            "allow_conflict": { "type": "boolean", "description": "Create even if it overlaps another event (only when the user said so)." }
        });
        properties.extend(more.as_object().cloned().expect("an object"));
        json!({ "type": "object", "properties": properties, "required": ["title"], "additionalProperties": false })
    }

    fn execute<'a>(
        &'a self,
        context: &'a ToolContext<'a>,
        db: &'a mut PgConnection,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: CreateArguments = typed_arguments(self.name(), arguments)?;
            let title = args.title.trim();
            if title.is_empty() || title.chars().count() > 500 {
                return Err(ToolError::InvalidArguments("title must be 1 to 500 characters".into()));
            }
            let stated = read_time_arguments(&args.time.as_arguments(), &context.time).map_err(ToolError::InvalidArguments)?;
            let kind = match args.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
                Some(kind) => kind.parse::<ItemKind>().map_err(|_| ToolError::InvalidArguments(format!("kind must be event, todo or reminder, got {kind:?}")))?,
                // Something at a clock time or part of day is an event; anything else a to-do.
                None if stated.start_time.is_some() || stated.segment.is_some() => ItemKind::Event,
                None => ItemKind::Todo,
            };
            let priority = args.priority.as_ref().map(PriorityArgument::value).transpose()?;
            let schedule = schedule_for_new_item(&stated, &context.time, kind == ItemKind::Event, self.settings.default_event_minutes);

            if let Some(outcome) = passed_outcome(&schedule, &context.time, "create") {
                return Ok(ToolOutput::Result(outcome));
            }
            if kind == ItemKind::Event && !args.allow_conflict
                && let Some(outcome) = conflict_outcome(db, context, &schedule, None).await? {
                    return Ok(ToolOutput::Result(outcome));
                }
            let fields = ItemFields {
                kind: kind.as_str().to_owned(),
                title: title.to_owned(),
                description: args.description.as_deref().map(str::trim).filter(|d| !d.is_empty()).map(str::to_owned),
                date: schedule.date,
                start_time: schedule.start_time,
                end_time: schedule.end_time,
                segment: schedule.segment.map(|s| s.as_str().to_owned()),
                priority,
                item_group: args.group.as_deref().map(str::trim).filter(|g| !g.is_empty()).map(str::to_owned),
                status: "open".to_owned(),
                recurrence: schedule.recurrence.clone(),
            };
            let item = insert_item(&mut *db, context.user_id, &fields, Some(context.task_id)).await?;
            Ok(ToolOutput::Result(changed("created", &item, &schedule.notes)))
        })
    }
}

/// The result of a successful change: the item for the verdict, and a line for the model.
pub fn changed(verb: &str, item: &ItemRecord, notes: &[String]) -> Value {
    json!({
        "written": true,
        "item": item.to_json(),
        "notes": notes,
        "model_view": { verb: item.summary(), "id": item.id, "notes": notes },
    })
}
