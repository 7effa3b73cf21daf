//! SQL on items. Every function is scoped to one user: an item of another user is invisible, as if
//! it did not exist.

use std::cmp::Ordering;

use chrono::{Duration, NaiveDate, NaiveDateTime};
use quickact_time::Segment;
use sqlx::PgExecutor;
use uuid::Uuid;

pub use super::query::{ItemQuery, SortKey};
use super::query::Alternatives;
use super::{
    item::{FoundItem, ItemFields, ItemKind, ItemRecord, ItemStatus},
    patch::ItemError,
    recurrence::occurrence_dates,
};

/// `sqlx::query_as!` into [`ItemRecord`] with the one column list of an item row between `$before`
/// (literals joined by `+`) and `$after` (the query macros take the SQL as string literals, which
/// `+` joins, so the list is written once and every query is still checked at build time).
macro_rules! query_items {
    ($before:literal $(+ $more:literal)*, $after:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ItemRecord,
            $before $(+ $more)*
                + r#" id, user_id, kind AS "kind: ItemKind", title, description, date, start_time, end_time,
                      segment AS "segment: Segment", priority, item_group, status AS "status: ItemStatus",
                      completed_at, recurrence, time_zone, created_by_task, updated_by_task, created_at, updated_at "#
                + $after
            $(, $arg)*
        )
    };
}

/// [`query_items!`] for a statement that writes every field of an item: `$1` and `$2` are `$a` and
/// `$b`, `$3`..`$13` and `$15` the [`ItemFields`], `$14` the task that writes, and any `$extra`
/// from `$16` on.
macro_rules! write_item {
    ($sql:literal $(+ $more:literal)*, $a:expr, $b:expr, $fields:expr, $task_id:expr $(, $extra:expr)*) => {
        query_items!(
            $sql $(+ $more)*,
            "",
            $a,
            $b,
            $fields.kind.as_str(),
            $fields.title,
            $fields.description,
            $fields.date,
            $fields.start_time,
            $fields.end_time,
            $fields.segment.map(|s| s.as_str()),
            $fields.priority,
            $fields.item_group,
            $fields.status.as_str(),
            $fields.recurrence,
            $task_id,
            $fields.time_zone,
            $($extra,)*
        )
    };
}

/// [`write_item!`] creating item `$id` of `$user` when the CTE `$room` (a statement `WITH room AS
/// (...)`, whose row has the user's `live` items) allows it by `$condition` (over `room`, and `$16`
/// the quota): the one INSERT of every create, returning nothing when the room refuses.
macro_rules! insert_item {
    ($room:literal, $condition:literal, $id:expr, $user:expr, $fields:expr, $task_id:expr $(, $extra:expr)*) => {
        write_item!(
            $room
                + r#" INSERT INTO items (id, user_id, kind, title, description, date, start_time, end_time, segment, priority,
                                         item_group, status, completed_at, recurrence, time_zone, created_by_task, updated_by_task)
                      SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                             CASE WHEN $12 = 'completed' THEN now() END, $13, $15, $14, $14
                      FROM room WHERE "#
                + $condition
                + " RETURNING",
            $id,
            $user,
            $fields,
            $task_id
            $(, $extra)*
        )
    };
}

/// Serialises changes to one user's items until the transaction ends: every writer takes this lock
/// first, then reads what it changes. Without it two concurrent writers both read the old item and
/// the second write loses the first (a lost update), or both find a time slot free and both take it
/// (a double booking). A transaction-scoped advisory lock keyed by the user: it blocks nothing else
/// (reads, other users, inserts of tasks) and is released at commit or rollback.
pub async fn lock_user_items(db: impl PgExecutor<'_>, user_id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!("SELECT pg_advisory_xact_lock(hashtextextended('quickact.items:' || $1::uuid::text, 0))", user_id)
        .execute(db)
        .await?;
    Ok(())
}

/// [`lock_user_items`], then refuses a new item when `user_id` already has `max` live items: one
/// call (`quickact_lock_items`, `migrations/functions/items.sql`), which counts once the lock is
/// held, so concurrent creations cannot pass the check together.
pub async fn lock_items_for_create(db: impl PgExecutor<'_>, user_id: Uuid, max: u32) -> Result<Result<(), ItemError>, sqlx::Error> {
    let live = sqlx::query_scalar!(r#"SELECT quickact_lock_items($1) AS "live!""#, user_id).fetch_one(db).await?;
    Ok(if live >= i64::from(max) { Err(ItemError::TooManyItems(max)) } else { Ok(()) })
}

/// How many live (not deleted) items `user_id` has: what the item quota counts. Kept by triggers
/// on `items` (see the `live_item_counts` migration), so this reads one row however many items.
pub async fn count_live_items(db: impl PgExecutor<'_>, user_id: Uuid) -> Result<i64, sqlx::Error> {
    let live = sqlx::query_scalar!("SELECT live FROM live_item_counts WHERE user_id = $1", user_id).fetch_optional(db).await?;
    Ok(live.unwrap_or(0))
}

/// Creates an item of `user_id` unless the user has `max` live items already: the lock, the quota's
/// count once it is held (`quickact_lock_items`) and the insert, in one statement (each round trip
/// is spent holding the user's lock). A caller that reads first (a conflict check) locks first.
pub async fn create_item(
    db: impl PgExecutor<'_>,
    user_id: Uuid,
    fields: &ItemFields,
    task_id: Option<Uuid>,
    max: u32,
) -> Result<Result<ItemRecord, ItemError>, sqlx::Error> {
    let created = insert_item!(
        "WITH room AS (SELECT quickact_lock_items($2) AS live)",
        "room.live < $16",
        Uuid::now_v7(),
        user_id,
        fields,
        task_id,
        i64::from(max)
    )
    .fetch_optional(db)
    .await?;
    Ok(created.ok_or(ItemError::TooManyItems(max)))
}

/// [`create_item`] for an event at `start..end` unless an open event of the user may overlap it:
/// the lock, the quota's count, the check (`quickact_lock_items_for_event`, which reads both once
/// the lock is held) and the insert, in one statement. `None`: nothing was written, because the
/// quota is reached or an event may overlap; the caller, holding the lock, reads which.
pub async fn create_event_if_free(
    db: impl PgExecutor<'_>,
    user_id: Uuid,
    fields: &ItemFields,
    task_id: Option<Uuid>,
    max: u32,
    start: NaiveDateTime,
    end: NaiveDateTime,
) -> Result<Option<ItemRecord>, sqlx::Error> {
    insert_item!(
        "WITH room AS (SELECT live, busy FROM quickact_lock_items_for_event($2, $17, $18))",
        "room.live < $16 AND NOT room.busy",
        Uuid::now_v7(),
        user_id,
        fields,
        task_id,
        i64::from(max),
        start,
        end
    )
    .fetch_optional(db)
    .await
}

/// A live (not deleted) item of `user_id`.
pub async fn find_item(db: impl PgExecutor<'_>, user_id: Uuid, id: Uuid) -> Result<Option<ItemRecord>, sqlx::Error> {
    query_items!(
        "SELECT",
        r#"FROM items WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL"#,
        id,
        user_id,
    )
    .fetch_optional(db)
    .await
}

/// An item of `user_id` whether or not it was deleted (when it was, the record is its last
/// state, and [`super::history::provenance`] says when), for those who look back at what tasks did.
pub async fn find_item_even_deleted(db: impl PgExecutor<'_>, user_id: Uuid, id: Uuid) -> Result<Option<ItemRecord>, sqlx::Error> {
    query_items!("SELECT", r#"FROM items WHERE id = $1 AND user_id = $2"#, id, user_id).fetch_optional(db).await
}

/// Replaces the fields of a live item. `completed_at` follows `status`: set when it becomes
/// completed, kept while it stays completed, cleared when it is reopened. `updated_by_task` becomes
/// `task_id` (`None`: changed by hand), and a change by a task is recorded for undo (see
/// [`super::undo`]).
pub async fn update_item(
    db: impl PgExecutor<'_>,
    user_id: Uuid,
    id: Uuid,
    fields: &ItemFields,
    task_id: Option<Uuid>,
) -> Result<Option<ItemRecord>, sqlx::Error> {
    write_item!(
        r#"UPDATE items SET kind = $3, title = $4, description = $5, date = $6, start_time = $7, end_time = $8,
                  segment = $9, priority = $10, item_group = $11, status = $12,
                  completed_at = CASE WHEN $12 = 'completed' THEN coalesce(completed_at, now()) END,
                  recurrence = $13, time_zone = $15, updated_by_task = $14, updated_at = now()
           WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL
           RETURNING"#,
        id,
        user_id,
        fields,
        task_id
    )
    .fetch_optional(db)
    .await
}

/// Soft-deletes a live item; returns it as it was.
pub async fn delete_item(
    db: impl PgExecutor<'_>,
    user_id: Uuid,
    id: Uuid,
    task_id: Option<Uuid>,
) -> Result<Option<ItemRecord>, sqlx::Error> {
    query_items!(
        r#"UPDATE items SET deleted_at = now(), updated_at = now(), updated_by_task = $3
           WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL
           RETURNING"#,
        "",
        id,
        user_id,
        task_id,
    )
    .fetch_optional(db)
    .await
}

/// Puts item `id` back as it was in `before` (a row of `items` as JSON, from `item_changes`):
/// every field a writer sets, its status and whether it was deleted. Written by `task_id`.
pub async fn restore_item(
    db: impl PgExecutor<'_>,
    user_id: Uuid,
    id: Uuid,
    before: &serde_json::Value,
    task_id: Uuid,
) -> Result<Option<ItemRecord>, sqlx::Error> {
    query_items!(
        r#"UPDATE items SET (kind, title, description, date, start_time, end_time, segment, priority, item_group,
                             status, completed_at, recurrence, time_zone, deleted_at)
                 = (SELECT b.kind, b.title, b.description, b.date, b.start_time, b.end_time, b.segment, b.priority,
                           b.item_group, b.status, b.completed_at, b.recurrence, b.time_zone, b.deleted_at
                    FROM jsonb_populate_record(NULL::items, $3) b),
               updated_by_task = $4, updated_at = now()
           WHERE id = $1 AND user_id = $2
           RETURNING"#,
        "",
        id,
        user_id,
        before,
        task_id,
    )
    .fetch_optional(db)
    .await
}

/// Most rows a search with a time window reads before it expands recurrences and pages in code (a
/// person's items in one window; beyond it `total` is a lower bound).
const WINDOW_FETCH_CAP: i64 = 1000;

/// One page of a search and how many items match in all. With a time window, a recurring item
/// matches when one of its occurrences falls in the window (it is found on that date), so the
/// window's rows are read, expanded and paged here rather than by `LIMIT`.
pub async fn search_items(
    db: &mut sqlx::PgConnection,
    user_id: Uuid,
    query: &ItemQuery,
) -> Result<(Vec<FoundItem>, i64), sqlx::Error> {
    // A time of day is checked here on each occurrence, so it reads rows as a window does.
    let windowed = query.from.is_some() || query.to.is_some() || query.at.is_some();
    // Each term and its synonyms, flattened, with the term's number: one of each group must match.
    let Alternatives { patterns, words, fuzzy, groups } = query.alternatives();
    let items = query_items!(
        "SELECT",
        r#"FROM items
           WHERE user_id = $1 AND deleted_at IS NULL
             AND ($2::text IS NULL OR kind = $2)
             AND ($3::text IS NULL OR status = $3)
             AND ($4::timestamp IS NULL OR ends_at >= $4 OR recurrence IS NOT NULL)
             AND ($5::timestamp IS NULL OR starts_at <= $5)
             AND (SELECT coalesce(bool_and(hit), true) FROM (
                    SELECT bool_or(
                        CASE WHEN $10 AND fuzzy
                             THEN (SELECT count(*) FROM regexp_split_to_table(lower(t), '') AS c WHERE strpos(lower(title), c) > 0) * 2 >= char_length(t)
                             ELSE title ILIKE p OR coalesce(description, '') ILIKE p END) AS hit
                    FROM unnest($6::text[], $11::text[], $12::bool[], $13::int4[]) AS x(p, t, fuzzy, g)
                    GROUP BY g) AS terms)
           ORDER BY
             CASE WHEN $7 = 'priority' AND $8 THEN coalesce(priority, 5) END ASC,
             CASE WHEN $7 = 'priority' AND NOT $8 THEN coalesce(priority, 5) END DESC,
             CASE WHEN $7 = 'priority' OR ($7 = 'deadline' AND NOT $8) THEN starts_at END ASC,
             CASE WHEN $7 = 'deadline' AND $8 THEN starts_at END DESC,
             CASE WHEN $7 <> 'priority' AND $8 THEN id END DESC,
             id ASC
           LIMIT $9"#,
        user_id,
        query.kind.map(ItemKind::as_str),
        query.status.map(ItemStatus::as_str),
        query.from,
        query.to,
        &patterns,
        query.sort.as_str(),
        query.descending,
        if windowed { WINDOW_FETCH_CAP } else { query.limit },
        query.relaxed,
        &words,
        &fuzzy,
        &groups,
    )
    .fetch_all(&mut *db)
    .await?;
    if windowed {
        return Ok(windowed_page(items, query));
    }
    // A page that is not full holds every match: no need to count them again.
    if (items.len() as i64) < query.limit {
        let total = items.len() as i64;
        return Ok((items.into_iter().map(FoundItem::on_its_date).collect(), total));
    }
    let total = count_matches(db, user_id, query, &Alternatives { patterns, words, fuzzy, groups }).await?;
    Ok((items.into_iter().map(FoundItem::on_its_date).collect(), total))
}

/// A windowed search's page: the rows the window fetched, each on its occurrence in the window
/// (at the time of day asked, if any), in the query's order, and how many there are in all.
fn windowed_page(items: Vec<ItemRecord>, query: &ItemQuery) -> (Vec<FoundItem>, i64) {
    let mut found: Vec<FoundItem> = items
        .into_iter()
        .filter(|item| query.at.is_none_or(|at| at.selects(item.start_time, item.segment)))
        .filter_map(|item| in_window(item, query.from, query.to))
        .collect();
    found.sort_by(|a, b| search_order(a, b, query.sort, query.descending));
    let total = found.len() as i64;
    found.truncate(query.limit.max(0) as usize);
    (found, total)
}

/// How many of `user_id`'s items match `query` (its terms as `alternatives`), for a full page.
async fn count_matches(db: &mut sqlx::PgConnection, user_id: Uuid, query: &ItemQuery, alternatives: &Alternatives) -> Result<i64, sqlx::Error> {
    let Alternatives { patterns, words, fuzzy, groups } = alternatives;
    sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM items
           WHERE user_id = $1 AND deleted_at IS NULL
             AND ($2::text IS NULL OR kind = $2)
             AND ($3::text IS NULL OR status = $3)
             AND ($4::timestamp IS NULL OR ends_at >= $4)
             AND ($5::timestamp IS NULL OR starts_at <= $5)
             AND (SELECT coalesce(bool_and(hit), true) FROM (
                    SELECT bool_or(
                        CASE WHEN $7 AND fuzzy
                             THEN (SELECT count(*) FROM regexp_split_to_table(lower(t), '') AS c WHERE strpos(lower(title), c) > 0) * 2 >= char_length(t)
                             ELSE title ILIKE p OR coalesce(description, '') ILIKE p END) AS hit
                    FROM unnest($6::text[], $8::text[], $9::bool[], $10::int4[]) AS x(p, t, fuzzy, g)
                    GROUP BY g) AS terms)"#,
        user_id,
        query.kind.map(ItemKind::as_str),
        query.status.map(ItemStatus::as_str),
        query.from,
        query.to,
        patterns,
        query.relaxed,
        words,
        fuzzy,
        groups,
    )
    .fetch_one(db)
    .await
}

/// The item as found in `[from, to]`: a plain item as the query found it, a recurring one on its
/// first occurrence overlapping the window (`None` when it has none there).
fn in_window(item: ItemRecord, from: Option<NaiveDateTime>, to: Option<NaiveDateTime>) -> Option<FoundItem> {
    let Some(rule) = item.recurrence.as_deref() else { return Some(FoundItem::on_its_date(item)) };
    // An occurrence the day before the window may run past midnight into it.
    let first_day = from.map_or(item.date, |from| from.date() - Duration::days(1));
    let last_day = to.map_or(first_day + Duration::days(366), |to| to.date());
    let date = occurrence_dates(rule, item.date, first_day, last_day)
        .into_iter()
        .find(|&date| from.is_none_or(|from| item.ends_on(date) >= from) && to.is_none_or(|to| item.starts_on(date) <= to))?;
    Some(FoundItem::on(item, date))
}

/// The order of [`search_items`]' SQL, for pages assembled in code: by priority (most important
/// first when descending), by start (soonest first unless descending), by id.
fn search_order(a: &FoundItem, b: &FoundItem, sort: SortKey, descending: bool) -> Ordering {
    let by_id = |reverse: bool| if reverse { b.item.id.cmp(&a.item.id) } else { a.item.id.cmp(&b.item.id) };
    match sort {
        SortKey::Priority => {
            let (pa, pb) = (a.item.priority.unwrap_or(5), b.item.priority.unwrap_or(5));
            let by_priority = if descending { pa.cmp(&pb) } else { pb.cmp(&pa) };
            by_priority.then(a.starts().cmp(&b.starts())).then(by_id(false))
        }
        SortKey::Deadline if descending => b.starts().cmp(&a.starts()).then(by_id(true)),
        SortKey::Deadline => a.starts().cmp(&b.starts()).then(by_id(false)),
        SortKey::Id => by_id(descending),
    }
}

/// Most conflicts reported at once.
const MAX_CONFLICTS: usize = 5;

/// Open events of `user_id` with a concrete time range overlapping `[start, end)`:
/// `existing.start < new.end AND existing.end > new.start`, occurrences of recurring events
/// included (found on the date that overlaps).
pub async fn find_conflicts(
    db: impl PgExecutor<'_>,
    user_id: Uuid,
    start: NaiveDateTime,
    end: NaiveDateTime,
    except: Option<Uuid>,
) -> Result<Vec<FoundItem>, sqlx::Error> {
    let candidates = query_items!(
        "SELECT",
        "FROM items WHERE id = ANY (quickact_event_candidates($1, $2, $3, $4, $5)) ORDER BY starts_at",
        user_id,
        start,
        end,
        except,
        WINDOW_FETCH_CAP,
    )
    .fetch_all(db)
    .await?;
    let overlaps = |item: &ItemRecord, date: NaiveDate| item.starts_on(date) < end && item.ends_on(date) > start;
    let mut conflicts: Vec<FoundItem> = candidates
        .into_iter()
        .filter_map(|item| match item.recurrence.as_deref() {
            None => Some(FoundItem::on_its_date(item)),
            Some(rule) => {
                let date = occurrence_dates(rule, item.date, start.date() - Duration::days(1), end.date())
                    .into_iter()
                    .find(|&date| overlaps(&item, date))?;
                Some(FoundItem::on(item, date))
            }
        })
        .collect();
    conflicts.sort_by_key(FoundItem::starts);
    conflicts.truncate(MAX_CONFLICTS);
    Ok(conflicts)
}

