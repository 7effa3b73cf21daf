//! What a corpus run prints: a failing case's report, the summary (overall and by family) and
//! the TSV of every case's classification.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Classification, Outcome};

/// Everything about a failing case a reader needs to see why: the row, every problem, the
/// verdict, the run's tool calls and the items afterwards.
pub fn case_report(outcome: &Outcome) -> String {
    let case = &outcome.case;
    let task = &outcome.observed.task;
    let result = &task["result"];
    let indent = "\n                 ";
    let problems: Vec<String> = outcome.problems.all().map(|p| format!("- {p}")).collect();
    let question = result["question"].as_str().map(|q| format!(", question {q}")).unwrap_or_default();
    let calls = tool_calls(task);
    let after = &outcome.observed.after;
    format!(
        "{} [{}] {}: {}\n    now:         {} {}\n    setup:       {}\n    expected:    {}\n    problems:    {}\n    verdict:     {} ({}){question}, model {}, {} tokens\n    message:     {}\n    suggestion:  {}\n    tool calls:  {}\n    items after: {}\n",
        case.location(),
        case.kind,
        outcome.classification.as_str(),
        case.text,
        case.now.format("%Y-%m-%d %H:%M"),
        case.time_zone.name(),
        if case.setup_text.is_empty() { "(none)" } else { &case.setup_text },
        case.expect_text,
        problems.join(indent),
        result["type"].as_str().unwrap_or("(none)"),
        task["status"].as_str().unwrap_or("(none)"),
        task["model_used"],
        task["tokens_used"]["total"],
        result["message"],
        result["suggestion"],
        if calls.is_empty() { "(none)".to_owned() } else { calls.join(indent) },
        if after.is_empty() { "(none)".to_owned() } else { after.iter().map(item_line).collect::<Vec<_>>().join(indent) },
    )
}

/// `name {arguments}` of each of the run's tool calls (`result.tool_calls`), in order.
fn tool_calls(task: &Value) -> Vec<String> {
    let calls = task["result"]["tool_calls"].as_array().cloned().unwrap_or_default();
    calls
        .iter()
        .map(|call| {
            let refused = if call["ok"] == false { format!(" -> refused: {}", call["error"]) } else { String::new() };
            format!("{} {}{refused}", call["name"].as_str().unwrap_or("?"), call["arguments"])
        })
        .collect()
}

/// Counts of each classification.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub cases: usize,
    pub counts: BTreeMap<Classification, usize>,
}

impl Tally {
    pub fn add(&mut self, classification: Classification) {
        self.cases += 1;
        *self.counts.entry(classification).or_default() += 1;
    }

    pub fn count(&self, classification: Classification) -> usize {
        self.counts.get(&classification).copied().unwrap_or(0)
    }

    fn share(&self, classification: Classification) -> String {
        let n = self.count(classification);
        let percent = if self.cases == 0 { 0.0 } else { 100.0 * n as f64 / self.cases as f64 };
        format!("{n} ({percent:.1}%)")
    }
}

/// The summary: cases and each classification with its share, overall and for each family.
pub fn summary(outcomes: &[Outcome]) -> String {
    let mut total = Tally::default();
    let mut families: BTreeMap<&str, Tally> = BTreeMap::new();
    for outcome in outcomes {
        total.add(outcome.classification);
        families.entry(outcome.case.family()).or_default().add(outcome.classification);
    }
    let mut out = format!("cases         {}\n", total.cases);
    for classification in Classification::ALL {
        out.push_str(&format!("{:<13} {}\n", classification.as_str(), total.share(classification)));
    }
    out.push_str(&format!(
        "\n{:<10} {:>6} {:>14} {:>14} {:>14} {:>14}\n",
        "family", "cases", "right", "declined", "wrong effect", "wrong answer"
    ));
    for (family, tally) in &families {
        let shares: Vec<String> = Classification::ALL.iter().map(|c| format!("{:>14}", tally.share(*c))).collect();
        out.push_str(&format!("{family:<10} {:>6} {}\n", tally.cases, shares.join(" ")));
    }
    out
}

/// One line a case: `line<TAB>kind<TAB>text<TAB>classification` (the line as `FILE:LINE` when
/// `with_file`, for outcomes of several files).
pub fn tsv(outcomes: &[Outcome], with_file: bool) -> String {
    let mut out = String::from("line\tkind\ttext\tclassification\n");
    for outcome in outcomes {
        let case = &outcome.case;
        let line = if with_file { case.location() } else { case.line.to_string() };
        out.push_str(&format!("{line}\t{}\t{}\t{}\n", case.kind, case.text, outcome.classification.as_str()));
    }
    out
}

/// One item as a line: `[event] 2026-02-08 15:00-16:00 "开会" p1 FREQ=... (completed) — note`.
pub fn item_line(item: &Value) -> String {
    let mut s = format!("[{}] {}", item["kind"].as_str().unwrap_or("?"), item["date"].as_str().unwrap_or("?"));
    match (item["start_time"].as_str(), item["end_time"].as_str(), item["segment"].as_str()) {
        (Some(a), Some(b), _) => s.push_str(&format!(" {a}-{b}")),
        (Some(a), None, _) => s.push_str(&format!(" {a}")),
        (None, _, Some(segment)) => s.push_str(&format!(" ({segment})")),
        _ => {}
    }
    s.push_str(&format!(" {:?}", item["title"].as_str().unwrap_or("?")));
    if let Some(priority) = item["priority"].as_i64() {
        s.push_str(&format!(" p{priority}"));
    }
    if let Some(rrule) = item["recurrence"].as_str() {
        s.push_str(&format!(" {rrule}"));
    }
    if item["status"] == "completed" {
        s.push_str(" (completed)");
    }
    if let Some(note) = item["description"].as_str() {
        s.push_str(&format!(" — {note:?}"));
    }
    s
}

/// Items as lines joined by `; `.
pub fn item_lines<'a>(items: impl IntoIterator<Item = &'a Value>) -> String {
    items.into_iter().map(item_line).collect::<Vec<_>>().join("; ")
}
