//! The OpenAPI 3.1 description of the contract, generated from the code (utoipa).
//!
//! Each handler carries its `#[utoipa::path]` (route, parameters, body, answers) and the router
//! registers handlers through `utoipa_axum`, so a route cannot be served without being described.
//! [`finish`] adds what every route shares: the bearer scheme and the error answers any request
//! may get (401, 400, 413, 503; 403 for admin routes). The description is served at
//! `GET /api/openapi.json` and committed as `api/openapi.json` (a test fails when they drift).
//!
//! Most answers are typed views that derive their schema; the few bodies built as JSON in place
//! are described by the `*Doc` shapes below.

use chrono::{DateTime, Utc};
pub use quickact_shared::views::{StepDoc, StepTokensDoc};
use quickact_shared::{
    domain::user::{ApiKey, User},
    planner::item::ItemView,
};
use utoipa::{
    Modify, OpenApi, ToSchema,
    openapi::{
        ContentBuilder, RefOr, ResponseBuilder,
        security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme},
    },
};
use uuid::Uuid;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "quickact",
        description = "One sentence about your schedule or to-dos, in Chinese or English, executed by an agent. \
                       Submit it, then long-poll or stream the task until its verdict.",
        license(name = "MIT")
    ),
    tags(
        (name = "quick actions", description = "Submit sentences, read, stream, cancel and undo tasks"),
        (name = "items", description = "The caller's events, to-dos and reminders"),
        (name = "time", description = "The time-expression resolver"),
        (name = "keys", description = "The caller's API keys"),
        (name = "budgets", description = "The caller's cost budgets and spend"),
        (name = "mcp", description = "The deployment's MCP servers and the caller's tokens for them"),
        (name = "webhooks", description = "The caller's webhook endpoints, told of each task's ending, and their deliveries"),
        (name = "admin", description = "Admins only: everyone's tasks, users and keys"),
        (name = "health", description = "Liveness and readiness, without a key"),
    ),
    components(schemas(ErrorBody, StepDoc, StatusEventDoc))
)]
pub struct ApiDoc;

/// Every error answer: `{"error": {"code", "message"}}`.
#[derive(ToSchema)]
#[schema(example = json!({"error": {"code": "not_found", "message": "no such task"}}))]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(ToSchema)]
pub struct ErrorDetail {
    /// Stable, machine-readable (`invalid_input`, `not_found`, `changed_since`, ...).
    pub code: String,
    /// For people.
    pub message: String,
}

/// One event of `GET /api/quick-action/{id}/events`: its name, its id (steps only) and its `data`,
/// a JSON text: a StatusEvent (`status`), a Step (`step`) or the Task (`verdict`).
pub struct TaskEventDoc;

impl utoipa::PartialSchema for TaskEventDoc {
    fn schema() -> RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::{
            Ref,
            schema::{AnyOfBuilder, ObjectBuilder, Type},
        };
        let text = || ObjectBuilder::new().schema_type(Type::String);
        let data = AnyOfBuilder::new()
            .item(Ref::from_schema_name("StatusEvent"))
            .item(Ref::from_schema_name("Step"))
            .item(Ref::from_schema_name("Task"));
        ObjectBuilder::new()
            .property("event", text().enum_values(Some(["status", "step", "verdict"])))
            .property("id", text().description(Some("A step's seq; send it back as Last-Event-ID to resume")))
            .property("data", text().content_media_type("application/json").content_schema(Some(data)))
            .required("event")
            .required("data")
            .into()
    }
}

impl ToSchema for TaskEventDoc {
    fn name() -> std::borrow::Cow<'static, str> {
        "TaskEvent".into()
    }
}

/// The data of a `status` event: the state of an unfinished task.
#[derive(ToSchema)]
#[schema(as = StatusEvent)]
pub struct StatusEventDoc {
    pub status: quickact_shared::domain::task::TaskStatus,
    pub attempts: i32,
    pub started_at: Option<DateTime<Utc>>,
}

/// `{"items": [...]}`
#[derive(ToSchema)]
#[schema(as = ItemList)]
pub struct ItemListDoc<'a> {
    pub items: Vec<ItemView<'a>>,
}

/// The fields of an item to create (`kind` and `title` required) or change (any subset; `null`
/// clears an optional field). `date` is `YYYY-MM-DD`, times `HH:MM`; `recurrence` is an RRULE or a
/// repetition in words ("每周一", "every weekday").
#[derive(ToSchema)]
#[schema(as = ItemInput, example = json!({"kind": "event", "title": "周会", "date": "2026-02-09", "start_time": "10:00", "end_time": "11:00"}))]
pub struct ItemInputDoc {
    #[schema(value_type = Option<quickact_shared::planner::item::ItemKind>)]
    pub kind: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub date: Option<String>,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    #[schema(schema_with = quickact_shared::planner::item::segment_schema)]
    pub segment: Option<String>,
    pub priority: Option<i64>,
    pub group: Option<String>,
    #[schema(value_type = Option<quickact_shared::planner::item::ItemStatus>)]
    pub status: Option<String>,
    pub recurrence: Option<String>,
}

/// A new user and their first key, shown this once.
#[derive(ToSchema)]
#[schema(as = UserCreated)]
pub struct UserCreatedDoc {
    pub user: User,
    pub api_key: String,
}

/// An API key as listed: never the secret. `current`: the key of this request (own keys only).
#[derive(ToSchema)]
#[schema(as = KeyListed)]
pub struct KeyListedDoc {
    pub id: Uuid,
    pub user_id: Uuid,
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub current: Option<bool>,
}

/// `{"keys": [...]}`, newest first.
#[derive(ToSchema)]
#[schema(as = KeyList)]
pub struct KeyListDoc {
    pub keys: Vec<KeyListedDoc>,
}

/// A new key, shown this once, and the key it replaced when rotating.
#[derive(ToSchema)]
#[schema(as = KeyCreated)]
pub struct KeyCreatedDoc {
    pub key: ApiKey,
    pub api_key: String,
    pub revoked: Option<ApiKey>,
}

/// `{"status": "ok"}`
#[derive(ToSchema)]
#[schema(as = Health)]
pub struct HealthDoc {
    pub status: String,
}

/// Whether the database answers and the notification listener is connected.
#[derive(ToSchema)]
#[schema(as = Readiness)]
pub struct ReadinessDoc {
    pub database: bool,
    pub listener: bool,
    pub ready: bool,
}

/// Every time expression found in a text.
#[derive(ToSchema)]
#[schema(as = ParsedTimes)]
pub struct ParsedTimesDoc {
    /// The reference moment (RFC 3339).
    pub now: String,
    pub tz: String,
    pub matches: Vec<TimeMatchDoc>,
}

/// One expression: its span in code points (end exclusive), its text and its resolution.
#[derive(ToSchema)]
#[schema(as = TimeMatch)]
pub struct TimeMatchDoc {
    pub span: Vec<u32>,
    pub text: String,
    /// `YYYY-MM-DD`
    pub date: Option<String>,
    /// `HH:MM`
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub end_date: Option<String>,
    #[schema(schema_with = quickact_shared::planner::item::segment_schema)]
    pub segment: Option<String>,
    pub duration_minutes: Option<i64>,
    pub rrule: Option<String>,
}

/// How the local reader reads a sentence (`POST /api/quick-action/preview`); nothing is run.
#[derive(ToSchema)]
#[schema(as = Preview)]
pub struct PreviewDoc {
    /// The sentence, as sent.
    pub text: String,
    /// The reference moment (RFC 3339).
    pub now: String,
    pub tz: String,
    pub verdict: PreviewVerdictDoc,
    /// The verdict is `certain`: every word is accounted for, and the frames are what a run of
    /// the sentence would do without asking a model.
    pub certain: bool,
    /// One frame per request in the sentence, left to right.
    pub frames: Vec<PreviewFrameDoc>,
    /// The words the reader could not read, left to right.
    pub unread: Vec<UnreadDoc>,
}

/// How sure a reading is: `certain` (every word accounted for), `vague` (something to put down
/// without saying what), `no_request` (greetings, thanks), `uncertain` (some words unread).
#[derive(ToSchema)]
#[schema(as = PreviewVerdict, rename_all = "snake_case")]
pub enum PreviewVerdictDoc {
    Certain,
    Vague,
    NoRequest,
    Uncertain,
}

/// One request of the sentence: what to do, to which item, with what, and the parts of the
/// sentence each piece came from.
#[derive(ToSchema)]
#[schema(as = PreviewFrame)]
pub struct PreviewFrameDoc {
    pub act: quickact_reader::Act,
    /// The clause it was read from, as written.
    pub text: String,
    /// The clause's span in code points (end exclusive).
    pub span: Vec<u32>,
    /// The named rule that read it.
    pub rule: String,
    /// The item(s) acted on (move, shift, complete, delete).
    pub target: Option<SelectorDoc>,
    /// The item to create.
    pub item: Option<NewItemDoc>,
    /// The new time (move) or the length to move by (shift).
    pub change: Option<ChangeDoc>,
    /// What to list.
    pub listing: Option<ListingDoc>,
    /// Each piece of the frame and the span it came from: what a client highlights.
    pub parts: Vec<PartDoc>,
    /// No unread word lies within its clause, and it says what it is about (a frame to create
    /// something unnamed is not certain).
    pub certain: bool,
}

/// The item(s) a sentence points at; flags that are false and fields it does not say are left out.
#[derive(ToSchema)]
#[schema(as = Selector)]
pub struct SelectorDoc {
    /// Words of the title (search terms).
    pub words: Vec<String>,
    pub kind: Option<quickact_shared::planner::item::ItemKind>,
    /// The day and/or time of day the item is on, as written.
    pub when: Option<String>,
    /// `when` names a time of day, not only a day.
    pub timed: Option<bool>,
    /// The n-th of the matching items by time (1-based; negative from the end).
    pub position: Option<i8>,
    /// Every matching item.
    pub all: Option<bool>,
    #[schema(minimum = 1, maximum = 4)]
    pub priority: Option<u8>,
    /// The words name an event ("the meeting"): a move or deletion looks among events.
    pub event: Option<bool>,
    /// A word that tells candidates apart without being needed to find them.
    pub hint: Option<String>,
    /// The item the clause before acted on ("it", 它).
    pub previous: Option<bool>,
}

/// An item to create, as the arguments of `create_item` (what the sentence does not say is left out).
#[derive(ToSchema)]
#[schema(as = NewItem)]
pub struct NewItemDoc {
    pub kind: quickact_shared::planner::item::ItemKind,
    pub title: String,
    /// A note the sentence adds to the item.
    pub description: Option<String>,
    /// The time as written, for the resolver.
    pub when: Option<String>,
    #[schema(schema_with = quickact_shared::planner::item::segment_schema)]
    pub segment: Option<String>,
    pub duration_minutes: Option<u32>,
    #[schema(minimum = 1, maximum = 4)]
    pub priority: Option<u8>,
    /// The sentence puts it on a day before today: a record of what happened.
    pub record: Option<bool>,
    /// A time given relative to another item ("half an hour after the standup").
    pub anchor: Option<AnchorDoc>,
}

/// The item a new item's time hangs on.
#[derive(ToSchema)]
#[schema(as = Anchor)]
pub struct AnchorDoc {
    pub target: SelectorDoc,
    /// After the anchor's end (true) or before its start.
    pub after: bool,
    /// The length between, as written; absent: right at it.
    pub offset: Option<String>,
}

/// How a move changes the item's time: `{"to": "friday 3pm"}` (a new time as written) or
/// `{"by": "半小时"}` (a length as written, negative for earlier).
#[derive(ToSchema)]
#[schema(as = Change, rename_all = "snake_case")]
pub enum ChangeDoc {
    To(String),
    By(String),
}

/// What a listing asks for; flags that are false and fields it does not say are left out.
#[derive(ToSchema)]
#[schema(as = Listing)]
pub struct ListingDoc {
    /// The day or period as written.
    pub when: Option<String>,
    pub kind: Option<quickact_shared::planner::item::ItemKind>,
    /// Most important first.
    pub by_priority: Option<bool>,
    /// What the items are about.
    pub query: Option<String>,
    /// What is done rather than what is open.
    pub completed: Option<bool>,
    /// How many the sentence asks for.
    pub limit: Option<u32>,
    /// It asks how many.
    pub count: Option<bool>,
    /// It asks whether the user is free then ("am I free at 3"): what is at that time.
    pub free: Option<bool>,
    /// Only what is still to come ("what's next", "how many are left this week").
    pub from_now: Option<bool>,
}

/// A piece of a frame: its role and the span of the sentence it came from (code points, end
/// exclusive).
#[derive(ToSchema)]
#[schema(as = Part)]
pub struct PartDoc {
    pub role: quickact_reader::Role,
    pub span: Vec<u32>,
    pub text: String,
}

/// Words the reader could not read, and why.
#[derive(ToSchema)]
#[schema(as = Unread)]
pub struct UnreadDoc {
    /// Code points, end exclusive.
    pub span: Vec<u32>,
    pub text: String,
    pub reason: String,
}

/// Adds the bearer scheme and the error answers every route shares.
pub fn finish(doc: &mut utoipa::openapi::OpenApi) {
    Shared.modify(doc);
}

struct Shared;

impl Modify for Shared {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
        let error = |description: &str| -> RefOr<utoipa::openapi::Response> {
            ResponseBuilder::new()
                .description(description)
                .content("application/json", ContentBuilder::new().schema(Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name("ErrorBody")))).build())
                .build()
                .into()
        };
        for (path, item) in doc.paths.paths.iter_mut() {
            let public = !path.starts_with("/api/") || path == "/api/openapi.json";
            let admin = path.starts_with("/api/admin/");
            let operations = [&mut item.get, &mut item.post, &mut item.put, &mut item.patch, &mut item.delete];
            for operation in operations.into_iter().flatten() {
                let responses = &mut operation.responses.responses;
                let mut add = |status: &str, description: &str| {
                    responses.entry(status.to_owned()).or_insert_with(|| error(description));
                };
                add("503", "The database is unreachable (`unavailable`) or this process is overloaded (`overloaded`); see `Retry-After`");
                if public {
                    continue;
                }
                operation.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new())]);
                add("401", "No API key, or an unknown or revoked one");
                add("400", "Malformed request: bad JSON, wrong types, unknown fields or bad query parameters");
                if operation.request_body.is_some() {
                    add("413", "The text or the body is too long");
                }
                if admin {
                    add("403", "The caller is not an admin");
                }
            }
        }
    }
}
