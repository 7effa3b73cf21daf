//! The short text each MCP tool answers with before its JSON: what an assistant (or a person
//! reading the call) needs at a glance, the JSON having everything else.

use serde_json::Value;

/// A task: its verdict's message once final, else its status and how to ask again.
pub fn task(task: &Value) -> String {
    let id = text(&task["task_id"]);
    let status = text(&task["status"]);
    match status {
        "pending" | "processing" => format!(
            "Task {id} is still {status}: call get_quick_action with this task_id to wait for its verdict."
        ),
        _ => {
            let result = &task["result"];
            let mut line = match result["type"].as_str() {
                // A clarification asks the user a question (so the CLI and the docs name it): its
                // status is `failed`, but nothing went wrong.
                Some("need_clarification") => format!("question: {}", text(&result["message"])),
                Some(kind) => format!("{status} ({kind}): {}", text(&result["message"])),
                None => format!("Task {id} ended: {status}."),
            };
            if let Some(suggestion) = result["suggestion"].as_str() {
                line.push_str(&format!("\nSuggestion: {suggestion}"));
            }
            for item in result["items"].as_array().into_iter().flatten() {
                line.push_str(&format!("\n- {}", item_line(item)));
            }
            for (n, option) in result["options"].as_array().into_iter().flatten().enumerate() {
                line.push_str(&format!("\n{}. {}", n + 1, item_line(option)));
            }
            line
        }
    }
}

/// A listing of items, one line each.
pub fn items(listing: &Value) -> String {
    let items = listing["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    if items.is_empty() {
        return "No items.".into();
    }
    let mut lines = vec![format!("{} item{}:", items.len(), if items.len() == 1 { "" } else { "s" })];
    lines.extend(items.iter().map(|item| format!("- {}", item_line(item))));
    lines.join("\n")
}

/// An item in one line: `2026-02-08 15:00-16:00 开会 (event, open) [id]`.
fn item_line(item: &Value) -> String {
    let mut when = text(&item["date"]).to_owned();
    match (item["start_time"].as_str(), item["end_time"].as_str(), item["segment"].as_str()) {
        (Some(start), Some(end), _) => when.push_str(&format!(" {start}-{end}")),
        (Some(start), None, _) => when.push_str(&format!(" {start}")),
        (None, _, Some(segment)) => when.push_str(&format!(" ({segment})")),
        _ => {}
    }
    format!("{when} {} ({}, {}) [{}]", text(&item["title"]), text(&item["kind"]), text(&item["status"]), text(&item["id"]))
}

/// The time expressions found, one line each.
pub fn parsed_times(parsed: &Value) -> String {
    let matches = parsed["matches"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut lines = vec![format!(
        "{} time expression{} (read at {} in {}):",
        matches.len(),
        if matches.len() == 1 { "" } else { "s" },
        text(&parsed["now"]),
        text(&parsed["tz"])
    )];
    for found in matches {
        let mut line = format!("- \"{}\": {}", text(&found["text"]), text(&found["date"]));
        for (field, label) in [("start_time", " "), ("end_time", "-"), ("end_date", " to "), ("segment", " ")] {
            if let Some(value) = found[field].as_str() {
                line.push_str(&format!("{label}{value}"));
            }
        }
        if let Some(rule) = found["rrule"].as_str() {
            line.push_str(&format!(", repeating {rule}"));
        }
        lines.push(line);
    }
    lines.join("\n")
}

/// The error envelope's message, with its code.
pub fn error(envelope: &Value) -> String {
    format!("Error ({}): {}", text(&envelope["error"]["code"]), text(&envelope["error"]["message"]))
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_unfinished_task_says_how_to_ask_again() {
        let line = task(&json!({"task_id": "t1", "status": "pending"}));
        assert_eq!(line, "Task t1 is still pending: call get_quick_action with this task_id to wait for its verdict.");
    }

    #[test]
    fn a_verdict_shows_its_message_and_items() {
        let verdict = json!({"task_id": "t1", "status": "success", "result": {
            "type": "action_completed", "message": "Booked.",
            "items": [{"id": "i1", "date": "2026-02-08", "start_time": "15:00", "end_time": "16:00", "title": "开会", "kind": "event", "status": "open"}],
        }});
        assert_eq!(task(&verdict), "success (action_completed): Booked.\n- 2026-02-08 15:00-16:00 开会 (event, open) [i1]");
    }

    #[test]
    fn a_clarification_is_a_question_with_its_options_not_a_failure() {
        let asked = json!({"task_id": "t1", "status": "failed", "result": {
            "type": "need_clarification", "message": "Which meeting?",
            "options": [
                {"id": "i1", "date": "2026-02-08", "start_time": "15:00", "title": "开会", "kind": "event", "status": "open"},
                {"id": "i2", "date": "2026-02-09", "segment": "afternoon", "title": "开会", "kind": "event", "status": "open"},
            ],
        }});
        let line = task(&asked);
        assert_eq!(line, "question: Which meeting?\n1. 2026-02-08 15:00 开会 (event, open) [i1]\n2. 2026-02-09 (afternoon) 开会 (event, open) [i2]");
        assert!(!line.contains("failed") && !line.contains("need_clarification"), "{line}");
        let failed = json!({"task_id": "t2", "status": "failed", "result": {"type": "error", "message": "Nothing found."}});
        assert_eq!(task(&failed), "failed (error): Nothing found.");
    }

    #[test]
    fn parsed_times_show_each_resolution() {
        let parsed = json!({"now": "2026-02-07T09:00:00+08:00", "tz": "Asia/Shanghai", "matches": [
            {"text": "明天下午3点到4点", "date": "2026-02-08", "start_time": "15:00", "end_time": "16:00"},
        ]});
        assert_eq!(
            parsed_times(&parsed),
            "1 time expression (read at 2026-02-07T09:00:00+08:00 in Asia/Shanghai):\n- \"明天下午3点到4点\": 2026-02-08 15:00-16:00"
        );
    }
}
