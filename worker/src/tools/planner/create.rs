//! `create_item`: add an event, to-do or reminder.

use quickact_shared::planner::{
    item::ItemKind,
    patch::{ItemError, ItemPatch, inferred_kind, parse_kind},
    schedule::{read_time_arguments, schedule_for_new_item},
    store::{create_event_if_free, create_item, lock_items_for_create},
};
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::{PlannerConfig, PriorityArgument, TimeFields, changed, check_sentence_dates, conflict_outcome, invalid, passed_outcome, roll_a_passed_weekday, schema_with_time};
use crate::tools::{ToolContext, ToolError, ToolOutput, ToolResult, TypedTool};

pub struct CreateItem {
    pub settings: PlannerConfig,
}

#[derive(Debug, Deserialize)]
pub struct CreateArguments {
    kind: Option<String>,
    title: String,
    description: Option<String>,
    priority: Option<PriorityArgument>,
    group: Option<String>,
    #[serde(default)]
    allow_conflict: bool,
    /// The user tells what already happened on an earlier day: write it on that day.
    #[serde(default)]
    record: bool,
    #[serde(flatten)]
    time: TimeFields,
}

impl TypedTool for CreateItem {
    const NAME: &'static str = crate::tools::names::CREATE_ITEM;
    const DESCRIPTION: &'static str = "Create an item. event: something at a time (a range, or a part of the day); todo: something to do \
         by a date; reminder: something to be reminded of. Pass the time as the user said it in `when`. \
         Without a date the item is for today; an event without an end lasts the default duration. A time \
         that has passed or a conflict with another event is reported instead of written; set \
         allow_conflict only when the user said to add it anyway, and record when the user tells what \
         already happened on an earlier day (\"昨天上午去了牙医\", \"log yesterday's run\").";
    type Arguments = CreateArguments;

    fn schema(&self) -> Value {
        schema_with_time(
            json!({
            "kind": { "type": "string", "enum": ["event", "todo", "reminder"] },
            "title": { "type": "string", "description": "Short title in the user's language, without the time words (\"开会\", \"dentist appointment\")." },
            "description": { "type": "string" },
            "priority": { "type": "integer", "minimum": 1, "maximum": 4, "description": "1 important+urgent, 2 important not urgent, 3 urgent not important, 4 neither." },
            "group": { "type": "string", "description": "A list or project name." },
            "allow_conflict": { "type": "boolean", "description": "Create even if it overlaps another event (only when the user said so)." },
            "record": { "type": "boolean", "description": "The user tells what already happened on an earlier day: write it on that past day. A passed time today is still reported." }
            }),
            &["title"],
        )
    }

    async fn run(&self, context: &ToolContext<'_>, db: &mut PgConnection, args: CreateArguments) -> ToolResult {
        let stated = read_time_arguments(&args.time.as_arguments(), &context.time).map_err(ToolError::InvalidArguments)?;
        if !args.time.as_arguments().is_empty() {
            check_sentence_dates(context)?;
        }
        let kind = match args.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
            Some(kind) => parse_kind(kind).map_err(invalid)?,
            None => inferred_kind(stated.start_time, stated.segment),
        };
        let mut schedule = schedule_for_new_item(&stated, &context.time, kind == ItemKind::Event, self.settings.default_event_minutes);
        roll_a_passed_weekday(&mut schedule, &args.time, &context.time);
        let patch = ItemPatch {
            kind: Some(kind),
            title: Some(args.title),
            description: Some(args.description),
            start_time: Some(schedule.start_time),
            end_time: Some(schedule.end_time),
            segment: Some(schedule.segment),
            priority: Some(args.priority.as_ref().map(PriorityArgument::number)),
            group: Some(args.group),
            recurrence: Some(schedule.recurrence.clone()),
            ..ItemPatch::default()
        };
        let fields = patch.create(schedule.date, &context.time).map_err(invalid)?;

        // A day before today stated as a record is what happened, not a mistake; a passed time
        // today keeps the rule (it may be a slip for tomorrow).
        let recorded = args.record && schedule.date < context.time.today();
        if !recorded && let Some(outcome) = passed_outcome(&schedule, &context.time, "create") {
            return Ok(ToolOutput::Result(outcome));
        }
        let refused = |err: ItemError| ToolError::Refused(err.to_string());
        let max = self.settings.max_items_per_user;
        if kind == ItemKind::Event
            && !args.allow_conflict
            && let Some((start, end)) = schedule.range()
        {
            // The user's items stay locked until the run's step commits: no other writer can take
            // the slot between the check and the insert. With no event that may overlap, both are
            // one statement.
            if let Some(item) = create_event_if_free(&mut *db, context.user_id, &fields, Some(context.task_id), max, start, end).await? {
                return Ok(ToolOutput::Result(changed("created", &item, &schedule.notes)));
            }
            // Nothing was written: the quota is told before a conflict, and a recurring event that
            // only may overlap (its occurrences are told apart here) lets the create go on.
            lock_items_for_create(&mut *db, context.user_id, max).await?.map_err(refused)?;
            if let Some(outcome) = conflict_outcome(db, context, &schedule, None).await? {
                return Ok(ToolOutput::Result(outcome));
            }
        }
        let item = create_item(&mut *db, context.user_id, &fields, Some(context.task_id), max).await?.map_err(refused)?;
        Ok(ToolOutput::Result(changed("created", &item, &schedule.notes)))
    }
}

