//! `search_items`: find the user's items by words, kind, status and time.

use quickact_shared::{
    planner::{
        item::{FoundItem, ItemStatus},
        patch::parse_kind,
        rules::{explicit_count, search_limit, widen_from, widen_to},
        selector::TimeOfDay,
        store::{ItemQuery, SortKey, search_items},
    },
};
use quickact_reader::lexicon::lexicon;
use quickact_time::resolve;
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::compact;
use crate::tools::{DatabaseUse, ToolContext, ToolError, ToolOutput, ToolResult, TypedTool, object_schema};

pub struct SearchItems;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArguments {
    query: Option<String>,
    kind: Option<String>,
    status: Option<String>,
    date: Option<String>,
    time: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
    limit: Option<i64>,
    sort: Option<String>,
    order: Option<String>,
    position: Option<i64>,
}

impl TypedTool for SearchItems {
    const NAME: &'static str = crate::tools::names::SEARCH_ITEMS;
    const DESCRIPTION: &'static str = "Search the user's items (events, to-dos, reminders). Use it before changing, completing or \
         deleting an item, and to answer questions like \"明天有什么安排\". Returns at most `limit` items \
         (default 5, max 20); when the sentence states a count (\"前3个\", \"top 5\") that count is used. When the \
         user names the item by its time (\"the 3pm meeting\", \"上午的那个会\"), pass that time in `time`; by its place \
         among several (\"the second call\"), pass `position`. Words match their synonyms in both languages (a \
         \"meeting\" finds 会议). To act on every match (\"cancel all my meetings on friday\"), search with limit 20 \
         and act on each; when `total` is over 20, ask instead.";
    type Arguments = SearchArguments;
    const DATABASE_USE: DatabaseUse = DatabaseUse::Reads;

    fn schema(&self) -> Value {
        object_schema(
            json!({
                "query": { "type": "string", "description": "Words from the item's title, e.g. \"会议\", \"dentist\". Leave out time words." },
                "kind": { "type": "string", "enum": ["event", "todo", "reminder"] },
                "status": { "type": "string", "enum": ["open", "completed", "all"], "description": "Default open." },
                "date": { "type": "string", "description": "The day or period as the user said it: \"明天\", \"2月8日\", \"下周\", \"this weekend\"." },
                "time": { "type": "string", "description": "The time of day the user picks the item out by, as said: \"下午3点\", \"3pm\", \"上午\", \"tonight\", \"the 10:30\" (\"把明天下午3点的会改到4点\": time \"明天下午3点\"). Only items starting at that clock time (a bare hour: either half of the day) or within that part of the day match; a day in it (\"明天\", \"tonight\") also selects the day when `date` is not given." },
                "date_from": { "type": "string", "description": "Start of a period (text or YYYY-MM-DD)." },
                "date_to": { "type": "string", "description": "End of a period (text or YYYY-MM-DD), inclusive." },
                "limit": { "type": "integer", "minimum": 1, "maximum": 20 },
                "sort": { "type": "string", "enum": ["deadline", "priority", "id"], "description": "deadline: by date and time; priority: most important first; id: by creation." },
                "order": { "type": "string", "enum": ["asc", "desc"] },
                "position": { "type": "integer", "description": "Only the item at this place among the matches in time order: 1 the first, 2 the second, -1 the last (\"the second call on monday\": query \"call\", date \"monday\", position 2; \"周四第一个会\": position 1)." }
            }),
            &[],
        )
    }

    async fn run(&self, context: &ToolContext<'_>, db: &mut PgConnection, args: SearchArguments) -> ToolResult {
        let mut query = build_query(&args, context)?;
        if args.position.is_some() {
            // A place among all the matches, whatever the page size.
            query.limit = 20;
        }
        let (mut items, mut total) = search_items(db, context.user_id, &query).await?;
        if items.is_empty() && query.terms.iter().any(|t| lexicon().is_generic(t)) && query.terms.iter().any(|t| !lexicon().is_generic(t)) {
            // "the dentist appointment" of an item titled "dentist": words that only say what kind
            // of thing it is may be missing from its title.
            let keep: Vec<usize> = (0..query.terms.len()).filter(|&i| !lexicon().is_generic(&query.terms[i])).collect();
            query.terms = keep.iter().map(|&i| query.terms[i].clone()).collect();
            query.synonyms = keep.iter().map(|&i| query.synonyms.get(i).cloned().unwrap_or_default()).collect();
            query.endings = keep.iter().map(|&i| query.endings.get(i).cloned().unwrap_or_default()).collect();
            (items, total) = search_items(db, context.user_id, &query).await?;
        }
        if items.is_empty() && query.can_relax() {
            // Nothing has these exact words: look for items sharing most of their characters, and
            // of those the ones sharing the most ("体检预约" is 预约体检 before 拿体检报告).
            query.relaxed = true;
            (items, total) = search_items(db, context.user_id, &query).await?;
            let best = items.iter().map(|item| shared_characters(&query.terms, &item.item.title)).max().unwrap_or(0);
            if items.len() > 1 && items.len() as i64 == total {
                items.retain(|item| shared_characters(&query.terms, &item.item.title) == best);
                total = items.len() as i64;
            }
        }
        if items.is_empty() && query.at.is_some() {
            // Nothing of that day is at that time: a to-do due that day, or an all-day item, is
            // what a person may mean by it ("完成今天下午的报告"); a time without a day is today's
            // ("完成晚上的跑步").
            if query.from.is_none() && query.to.is_none() {
                let today = context.time.today();
                (query.from, query.to) = (Some(widen_from(today)), Some(widen_to(today)));
            }
            query.at = Some(TimeOfDay::Untimed);
            query.relaxed = false;
            (items, total) = search_items(db, context.user_id, &query).await?;
        }
        if let Some(position) = args.position {
            items = at_position(items, position);
            total = items.len() as i64;
        }
        Ok(ToolOutput::Result(search_result(&items, total, &query)))
    }
}

fn build_query(args: &SearchArguments, context: &ToolContext<'_>) -> Result<ItemQuery, ToolError> {
    let invalid = |m: String| ToolError::InvalidArguments(m);
    let kind = match args.kind.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        Some(kind) => Some(parse_kind(kind).map_err(super::invalid)?),
        None => None,
    };
    let status = match args.status.as_deref().map(str::trim).unwrap_or("open") {
        "all" | "any" | "" => None,
        other => Some(other.parse::<ItemStatus>().map_err(|_| invalid(format!("status must be open, completed or all, got {other:?}")))?),
    };
    let sort = match args.sort.as_deref().map(str::trim) {
        None | Some("") | Some("deadline") => SortKey::Deadline,
        Some("priority") => SortKey::Priority,
        Some("id") => SortKey::Id,
        Some(other) => return Err(invalid(format!("sort must be deadline, priority or id, got {other:?}"))),
    };
    let descending = match args.order.as_deref().map(str::trim) {
        // Default: soonest first, most important first, newest first.
        None | Some("") => sort != SortKey::Deadline,
        Some("asc") => false,
        Some("desc") => true,
        Some(other) => return Err(invalid(format!("order must be asc or desc, got {other:?}"))),
    };

    let (mut from, mut to) = (None, None);
    let mut at = None;
    if let Some(text) = args.time.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        let r = resolve(text, &context.time).ok_or_else(|| invalid(format!("could not read time {text:?} as a time of day")))?;
        at = TimeOfDay::of(&r);
        // "明天下午3点", "tonight": the day it names is the item's day (the whole day: the time of
        // day is `at`'s to check).
        if r.day_stated {
            let last_day = r.end_date.unwrap_or(r.date);
            (from, to) = (Some(widen_from(r.date)), Some(widen_to(last_day)));
        }
    }
    if let Some(text) = args.date.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        let r = read_period(text, context)?;
        (from, to) = (Some(r.0), Some(r.1));
    }
    if let Some(text) = args.date_from.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        from = Some(read_period(text, context)?.0);
    }
    if let Some(text) = args.date_to.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        // "until friday 3pm" ends at 3pm, not at the end of friday.
        let moment = resolve(text, &context.time).filter(|r| r.end_time.is_none() && r.end_date.is_none()).and_then(|r| r.start_time.map(|t| r.date.and_time(t)));
        to = Some(match moment {
            Some(moment) => moment,
            None => read_period(text, context)?.1,
        });
    }
    if let (Some(f), Some(t)) = (from, to)
        && f > t {
            return Err(invalid("date_from is after date_to".into()));
        }
    let terms: Vec<String> = args.query.as_deref().unwrap_or_default().split_whitespace().map(singular).collect();
    let synonyms = terms.iter().map(|t| lexicon().synonyms(t).into_iter().map(str::to_owned).collect()).collect();
    let endings = terms.iter().map(|t| lexicon().head_nouns(t).into_iter().map(str::to_owned).collect()).collect();
    let limit = search_limit(args.limit, explicit_count(context.input_text));
    Ok(ItemQuery { kind, status, from, to, terms, synonyms, endings, sort, descending, limit: i64::from(limit), relaxed: false, at })
}

/// How many characters of the search's words a title holds.
fn shared_characters(terms: &[String], title: &str) -> usize {
    let title = title.to_lowercase();
    terms.iter().map(|term| term.to_lowercase().chars().filter(|c| !c.is_whitespace() && title.contains(*c)).count()).sum()
}

/// The item at `position` (1-based, negative from the end) of items in time order.
fn at_position(mut items: Vec<FoundItem>, position: i64) -> Vec<FoundItem> {
    let index = if position > 0 { usize::try_from(position - 1).ok() } else { items.len().checked_sub(usize::try_from(-position).unwrap_or(usize::MAX)) };
    match index.filter(|&i| i < items.len()) {
        Some(i) => vec![items.swap_remove(i)],
        None => Vec::new(),
    }
}

/// Whether `text` is a weekend read as its Saturday ("this weekend", 周末).
fn names_a_weekend(text: &str, r: &quickact_time::Resolution) -> bool {
    use chrono::Datelike;
    const WEEKEND: [&str; 4] = ["weekend", "周末", "週末", "wknd"];
    r.date.weekday() == chrono::Weekday::Sat && r.end_date.is_none() && WEEKEND.iter().any(|w| text.to_lowercase().contains(w))
}

/// An English plural as the stem it shares with its singular, so "taxes" finds "tax receipts",
/// "meetings" a "team meeting" and "groceries" both "grocery run" and "groceries" (terms match
/// inside titles, so the stem finds both forms); other words as they are.
fn singular(word: &str) -> String {
    let lower = word.to_ascii_lowercase();
    if word.len() < 4 || !word.chars().all(|c| c.is_ascii_alphabetic()) {
        return word.to_owned();
    }
    // The stem both forms share: "parties" and "party" both hold "part".
    let cut = if lower.ends_with("ies") {
        3
    } else if ["sses", "ches", "shes", "xes", "zes"].iter().any(|end| lower.ends_with(end)) {
        2
    } else if lower.ends_with('s') && !["ss", "us", "is"].iter().any(|end| lower.ends_with(end)) {
        1
    } else {
        0
    };
    word[..word.len() - cut].to_owned()
}

/// The local bounds of a day or period named by `text`: a date-only bound covers the whole day
/// (00:00 to 23:59:59), a span covers all its days, a clock time or part of day narrows it.
fn read_period(text: &str, context: &ToolContext<'_>) -> Result<(chrono::NaiveDateTime, chrono::NaiveDateTime), ToolError> {
    if let Ok(date) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok((widen_from(date), widen_to(date)));
    }
    let r = resolve(text, &context.time).ok_or_else(|| ToolError::InvalidArguments(format!("could not read {text:?} as a date or period")))?;
    let last_day = r.end_date.unwrap_or(r.date);
    // "this weekend" is its Saturday to put something on, both its days to look in.
    let last_day = if names_a_weekend(text, &r) { last_day.max(r.date + chrono::Duration::days(1)) } else { last_day };
    Ok(match (r.start_time, r.end_time, r.segment) {
        (Some(start), Some(end), _) => (r.date.and_time(start), last_day.and_time(end)),
        (Some(start), None, _) => (r.date.and_time(start), widen_to(r.date)),
        (None, _, Some(segment)) => (r.date.and_time(segment.bounds().0), last_day.and_time(segment.bounds().1)),
        _ => (widen_from(r.date), widen_to(last_day)),
    })
}

fn search_result(items: &[FoundItem], total: i64, query: &ItemQuery) -> Value {
    let mut model_view = json!({ "count": items.len(), "total": total, "items": compact(items) });
    if items.is_empty() {
        model_view["hint"] = json!("nothing matched; try fewer or other words, another kind or status, or no date");
    } else if query.at == Some(TimeOfDay::Untimed) {
        model_view["hint"] = json!("no item of that day is at that time; these items of the day have no time of day: act only if one is clearly meant");
    } else if query.relaxed {
        model_view["hint"] = json!("no exact match: these items share most characters with the words; act only if one is clearly meant");
    } else if items.len() >= 2 {
        model_view["hint"] = json!("several items matched: act on the one the sentence means, or finish with need_clarification listing their ids");
    }
    json!({
        "items": items.iter().map(FoundItem::to_json).collect::<Vec<_>>(),
        "count": items.len(),
        "total": total,
        "limit": query.limit,
        "filters": {
            "kind": query.kind, "status": query.status,
            "from": query.from.map(|d| d.to_string()), "to": query.to.map(|d| d.to_string()),
            "terms": query.terms, "time": query.at.map(describe_time_of_day), "sort": query.sort.as_str(), "order": if query.descending { "desc" } else { "asc" },
            "relaxed": query.relaxed,
        },
        "model_view": model_view,
    })
}

/// A time-of-day filter as the result's `filters` show it: "15:00" ("03:00|15:00" for a bare hour)
/// or the part of day's name.
fn describe_time_of_day(at: TimeOfDay) -> String {
    match at {
        TimeOfDay::Clock { time, either_half: false } => time.format("%H:%M").to_string(),
        TimeOfDay::Clock { time, either_half: true } => {
            let mut both = [time, quickact_shared::planner::selector::other_half(time)];
            both.sort();
            format!("{}|{}", both[0].format("%H:%M"), both[1].format("%H:%M"))
        }
        TimeOfDay::Part(segment) => segment.as_str().to_owned(),
        TimeOfDay::Untimed => "untimed".to_owned(),
    }
}

#[cfg(test)]
mod singular_tests {
    use super::singular;

    #[test]
    fn english_plurals_search_as_their_singular() {
        for (word, want) in [("taxes", "tax"), ("meetings", "meeting"), ("parties", "part"), ("groceries", "grocer"), ("glasses", "glass"), ("bus", "bus"), ("class", "class"), ("会议", "会议"), ("1:1s", "1:1s"), ("yes", "yes")] {
            assert_eq!(singular(word), want, "{word}");
        }
    }
}
