//! The planner tools: search, create, update, delete, complete, and resolve_time.
//!
//! Time arguments are text ("明天下午3点", "next friday 3pm") or structured values; the
//! deterministic resolver reads them in the user's zone relative to the moment the sentence was
//! written. The rules of the planner are enforced here: no date means today, a start without an end
//! gets the default duration (and the result says so), a passed time is not written (the result
//! suggests the next occurrence), a conflicting event is not written unless the request says so.
//! Results carry the items as the backend renders them (`item` / `items`); a compact `model_view`
//! is what the model reads.

mod complete;
mod create;
mod delete;
mod resolve_time;
mod search;
mod update;

use std::sync::Arc;

use chrono::NaiveTime;
pub use quickact_shared::config::PlannerConfig;
use quickact_shared::planner::{
    item::{FoundItem, ItemRecord},
    patch::ItemError,
    schedule::{Schedule, TimeArguments, unread_date_part},
    store::{find_conflicts, find_item, lock_user_items},
};
use quickact_time::TimeContext;
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

pub use complete::CompleteTodo;
pub use create::CreateItem;
pub use delete::DeleteItem;
pub use resolve_time::ResolveTime;
pub use search::SearchItems;
pub use update::UpdateItem;

use super::{Tool, ToolContext, ToolError, object_schema};

/// Every planner tool.
pub fn tools(settings: PlannerConfig) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(SearchItems),
        Arc::new(CreateItem { settings }),
        Arc::new(UpdateItem { settings }),
        Arc::new(DeleteItem),
        Arc::new(CompleteTodo),
        Arc::new(ResolveTime),
    ]
}

/// The time arguments shared by create_item and update_item.
#[derive(Debug, Default, Deserialize)]
pub struct TimeFields {
    pub when: Option<String>,
    pub date: Option<String>,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub segment: Option<String>,
    pub duration_minutes: Option<i64>,
    pub recurrence: Option<String>,
}

impl TimeFields {
    pub fn as_arguments(&self) -> TimeArguments<'_> {
        TimeArguments {
            when: self.when.as_deref(),
            date: self.date.as_deref(),
            start_time: self.start_time.as_deref(),
            end_time: self.end_time.as_deref(),
            segment: self.segment.as_deref(),
            duration_minutes: self.duration_minutes,
            recurrence: self.recurrence.as_deref(),
        }
    }
}

/// The JSON schema of a tool taking [`TimeFields`] and the `properties` given.
fn schema_with_time(properties: Value, required: &[&str]) -> Value {
    let mut all = time_properties();
    all.extend(properties.as_object().cloned().expect("properties are an object"));
    object_schema(Value::Object(all), required)
}

/// JSON-schema properties of [`TimeFields`].
fn time_properties() -> serde_json::Map<String, Value> {
    let props = json!({
        "when": { "type": "string", "description": "The time as the user said it, e.g. \"明天下午3点到4点\", \"next friday 3pm\", \"每周一早上9点\". Do not convert it." },
        "date": { "type": "string", "description": "A date as text (\"2月8日\", \"明天\") or YYYY-MM-DD." },
        "start_time": { "type": "string", "description": "Start as text (\"下午3点\") or HH:MM." },
        "end_time": { "type": "string", "description": "End as text or HH:MM." },
        "segment": { "type": "string", "enum": ["all_day", "early_morning", "morning", "forenoon", "noon", "afternoon", "evening"], "description": "A part of the day, when no clock time is given." },
        "duration_minutes": { "type": "integer", "minimum": 1, "description": "Length of the event, when the user states one (\"开2小时的会\" = 120)." },
        "recurrence": { "type": "string", "description": "Repetition as text (\"每周一\", \"every weekday\") or an RRULE." }
    });
    props.as_object().cloned().expect("an object")
}

/// A priority: 1-4, or "p1".."p4".
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum PriorityArgument {
    Number(i64),
    Text(String),
}

impl PriorityArgument {
    /// The number the model meant ("p2" is 2); 0 when it is not a number, which the planner core
    /// then refuses like any other number outside 1-4.
    pub fn number(&self) -> i64 {
        match self {
            PriorityArgument::Number(n) => *n,
            PriorityArgument::Text(t) => t.trim().trim_start_matches(['p', 'P']).parse().unwrap_or(0),
        }
    }
}

/// Refuses to act on a time when the user's sentence has a date part the resolver could not read
/// ("99999年" of "改到99999年1月1日"): the time passed may be only the part that was read, and acting
/// on it would write another date than the one the user gave.
pub fn check_sentence_dates(context: &ToolContext<'_>) -> Result<(), ToolError> {
    match unread_date_part(context.input_text, &context.time) {
        Some(piece) => Err(ToolError::Refused(format!(
            "{piece:?} in the sentence is not a date or time that can be read (out of range); nothing was written"
        ))),
        None => Ok(()),
    }
}

/// A value the planner core refused, told to the model as an argument to fix.
pub fn invalid(err: ItemError) -> ToolError {
    ToolError::InvalidArguments(err.to_string())
}

/// The arguments of a tool that acts on one item by id (delete_item, complete_todo).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemIdArguments {
    pub id: String,
}

/// The JSON schema of [`ItemIdArguments`].
pub fn item_id_parameters() -> Value {
    object_schema(json!({ "id": { "type": "string", "description": "The item's id from search_items." } }), &["id"])
}

/// Reads an item id argument.
pub fn parse_item_id(text: &str) -> Result<Uuid, ToolError> {
    text.trim().parse().map_err(|_| ToolError::InvalidArguments(format!("{text:?} is not an item id; ids come from search_items")))
}

/// A live item of the task's user, read under the user's item lock (so nobody changes it before
/// this transaction commits), or a refusal that tells the model to search.
pub async fn owned_item(db: &mut PgConnection, context: &ToolContext<'_>, id: Uuid) -> Result<ItemRecord, ToolError> {
    lock_user_items(&mut *db, context.user_id).await?;
    find_item(&mut *db, context.user_id, id)
        .await?
        .ok_or_else(|| ToolError::Refused(format!("there is no item with id {id}; call search_items to find the right one")))
}

/// The schedule an item has now.
pub fn schedule_of(item: &ItemRecord) -> Schedule {
    Schedule {
        date: item.date,
        start_time: item.start_time,
        end_time: item.end_time,
        segment: item.segment,
        recurrence: item.recurrence.clone(),
        notes: Vec::new(),
    }
}

/// "move lunch to sunday" (or "gym sunday 10am") said on a Sunday after that time: the Sunday to
/// come, not a time that has passed.
pub fn roll_a_passed_weekday(schedule: &mut Schedule, time_args: &TimeFields, time: &TimeContext) {
    let said = [time_args.when.as_deref(), time_args.date.as_deref()];
    if passed_outcome(schedule, time, "move").is_some() && said.into_iter().flatten().any(|t| is_bare_weekday(t, time)) {
        schedule.date += chrono::Duration::days(7);
    }
}
/// Whether `text` is a weekday said alone ("sunday", "周日下午3点") on that very weekday: read a day later
/// it is a week on, where a day said any other way ("today", a date) is not.
fn is_bare_weekday(text: &str, time: &quickact_time::TimeContext) -> bool {
    let today = time.today();
    let tomorrow = quickact_time::TimeContext::new(time.now().with_timezone(&chrono::Utc) + chrono::Duration::days(1), time.tz());
    let read = |ctx: &quickact_time::TimeContext| quickact_time::resolve(text, ctx).filter(|r| r.end_date.is_none()).map(|r| r.date);
    read(time) == Some(today) && read(&tomorrow) == Some(today + chrono::Duration::days(7))
}

/// If `schedule` lies in the past (a time today that has passed, or an earlier day), the outcome to
/// report instead of writing it, with the next occurrence as a suggestion.
pub fn passed_outcome(schedule: &Schedule, time: &TimeContext, verb: &str) -> Option<Value> {
    let now = time.now().naive_local();
    let today = time.today();
    let passed = if schedule.date < today {
        true
    } else if schedule.date > today {
        false
    } else if let Some(start) = schedule.start_time {
        schedule.date.and_time(start) < now
    } else if let Some(segment) = schedule.segment {
        schedule.date.and_time(segment.bounds().1) < now
    } else {
        false
    };
    if !passed {
        return None;
    }
    let (suggestion, next) = if schedule.date == today {
        let tomorrow = today.succ_opt().expect("a next day");
        let when = describe_when(tomorrow, schedule.start_time, schedule.segment.map(|s| s.zh_word()));
        (format!("That time has already passed today. Say \"明天{}\" ({when}) to {verb} it tomorrow.", zh_time(schedule)), json!({ "date": tomorrow.to_string(), "start_time": schedule.start_time.map(hhmm) }))
    } else {
        ("That date has already passed. Give a future date.".to_owned(), Value::Null)
    };
    Some(json!({
        "outcome": "time_passed",
        "written": false,
        "message": format!("{} is in the past (it is now {}); nothing was written.", describe_when(schedule.date, schedule.start_time, schedule.segment.map(|s| s.as_str())), now.format("%Y-%m-%d %H:%M")),
        "suggestion": suggestion,
        "next_occurrence": next,
    }))
}

/// If `schedule` is a concrete range overlapping the user's open events, the outcome to report
/// instead of writing it.
pub async fn conflict_outcome(
    db: &mut PgConnection,
    context: &ToolContext<'_>,
    schedule: &Schedule,
    except: Option<Uuid>,
) -> Result<Option<Value>, ToolError> {
    let Some((start, end)) = schedule.range() else { return Ok(None) };
    let conflicts = find_conflicts(&mut *db, context.user_id, start, end, except).await?;
    if conflicts.is_empty() {
        return Ok(None);
    }
    let lines: Vec<String> = conflicts.iter().map(FoundItem::summary).collect();
    Ok(Some(json!({
        "outcome": "conflict",
        "written": false,
        "message": format!("{} overlaps {}; nothing was written.", describe_when(schedule.date, schedule.start_time, None), lines.join("; ")),
        "conflicts": conflicts.iter().map(FoundItem::to_json).collect::<Vec<_>>(),
        "suggestion": "Choose another time, or say that it should be added despite the conflict.",
    })))
}

fn hhmm(time: NaiveTime) -> String {
    time.format("%H:%M").to_string()
}

fn zh_time(schedule: &Schedule) -> String {
    match (schedule.start_time, schedule.segment) {
        (Some(start), _) => hhmm(start),
        (None, Some(segment)) => segment.zh_word().to_owned(),
        _ => String::new(),
    }
}

fn describe_when(date: chrono::NaiveDate, start: Option<NaiveTime>, segment: Option<&str>) -> String {
    match (start, segment) {
        (Some(start), _) => format!("{date} {}", hhmm(start)),
        (None, Some(segment)) => format!("{date} ({segment})"),
        _ => date.to_string(),
    }
}

/// The compact form of found items the model reads.
pub fn compact(items: &[FoundItem]) -> Vec<Value> {
    items
        .iter()
        .map(|found| {
            let item = &found.item;
            let mut v = json!({ "id": item.id, "title": item.title, "summary": found.summary() });
            if let Some(priority) = item.priority {
                v["priority"] = json!(priority);
            }
            v
        })
        .collect()
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
