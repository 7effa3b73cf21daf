//! `update_item`: change an item (reschedule, retitle, re-prioritise, ...).

use quickact_shared::planner::{
    item::{ItemFields, ItemKind},
    patch::{ItemPatch, parse_kind, parse_status},
    schedule::{read_duration, read_time_arguments, reschedule, shift},
    store::update_item,
};
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::{PlannerConfig, PriorityArgument, TimeFields, changed, check_sentence_dates, conflict_outcome, roll_a_passed_weekday, invalid, owned_item, parse_item_id, passed_outcome, schedule_of, schema_with_time};
use crate::tools::{ToolContext, ToolError, ToolOutput, ToolResult, TypedTool};

pub struct UpdateItem {
    pub settings: PlannerConfig,
}

#[derive(Debug, Deserialize)]
pub struct UpdateArguments {
    id: String,
    kind: Option<String>,
    title: Option<String>,
    description: Option<String>,
    priority: Option<PriorityArgument>,
    group: Option<String>,
    status: Option<String>,
    shift: Option<String>,
    #[serde(default)]
    allow_conflict: bool,
    #[serde(flatten)]
    time: TimeFields,
}

impl TypedTool for UpdateItem {
    const NAME: &'static str = crate::tools::names::UPDATE_ITEM;
    const DESCRIPTION: &'static str = "Change an item found by search_items. To move it, pass the new time as the user said it in `when` \
         (a clock time or part of day alone keeps the item's day, and a bare hour such as \"4点\" its half of the day; \
         a new start keeps its duration), or `shift` for \"推迟半小时\" / \
         \"提前1小时\" / \"30 minutes later\". A passed time or a conflict is reported instead of written.";
    type Arguments = UpdateArguments;

    fn schema(&self) -> Value {
        schema_with_time(
            json!({
            "id": { "type": "string", "description": "The item's id from search_items." },
            "kind": { "type": "string", "enum": ["event", "todo", "reminder"] },
            "title": { "type": "string" },
            "description": { "type": "string" },
            "priority": { "type": "integer", "minimum": 1, "maximum": 4 },
            "group": { "type": "string" },
            "status": { "type": "string", "enum": ["open", "completed"] },
            "shift": { "type": "string", "description": "Move by a duration as the user said it: \"半小时\", \"提前1小时\", \"2 days\"." },
            "allow_conflict": { "type": "boolean" }
            }),
            &["id"],
        )
    }

    async fn run(&self, context: &ToolContext<'_>, db: &mut PgConnection, args: UpdateArguments) -> ToolResult {
        let id = parse_item_id(&args.id)?;
        let item = owned_item(db, context, id).await?;
        let mut patch = ItemPatch {
            kind: args.kind.as_deref().map(parse_kind).transpose().map_err(invalid)?,
            title: args.title,
            description: args.description.map(Some),
            priority: args.priority.as_ref().map(|p| Some(p.number())),
            group: args.group.map(Some),
            status: args.status.as_deref().map(parse_status).transpose().map_err(invalid)?,
            ..ItemPatch::default()
        };

        let time_args = args.time.as_arguments();
        let mut schedule = schedule_of(&item);
        let mut moved = false;
        if !time_args.is_empty() {
            let stated = read_time_arguments(&time_args, &context.time).map_err(ToolError::InvalidArguments)?;
            schedule = reschedule(&schedule, &stated, self.settings.default_event_minutes);
            roll_a_passed_weekday(&mut schedule, &args.time, &context.time);
            moved = true;
        }
        if let Some(text) = args.shift.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            // Said in the shift's own language: the local provider shows tool errors to the user.
            let minutes = read_duration(text, &context.time).ok_or_else(|| {
                ToolError::InvalidArguments(if quickact_time::is_chinese(text) {
                    format!("无法把“{text}”读成一段时长（例如“半小时”“3天”“-30”）")
                } else {
                    format!("could not read shift {text:?} as a duration (e.g. \"30 minutes\", \"2 days\", \"-30\")")
                })
            })?;
            schedule = shift(&schedule, minutes).map_err(ToolError::Refused)?;
            moved = true;
        }
        if moved {
            check_sentence_dates(context)?;
            patch.date = Some(schedule.date);
            patch.start_time = Some(schedule.start_time);
            patch.end_time = Some(schedule.end_time);
            patch.segment = Some(schedule.segment);
            if schedule.recurrence != item.recurrence {
                patch.recurrence = Some(schedule.recurrence.clone());
            }
        }
        let mut fields = ItemFields::of(&item);
        patch.apply(&mut fields, &context.time).map_err(invalid)?;
        if moved {
            if let Some(outcome) = passed_outcome(&schedule, &context.time, "move") {
                return Ok(ToolOutput::Result(outcome));
            }
            if fields.kind == ItemKind::Event && !args.allow_conflict
                && let Some(outcome) = conflict_outcome(db, context, &schedule, Some(item.id)).await? {
                    return Ok(ToolOutput::Result(outcome));
                }
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
    }
}
