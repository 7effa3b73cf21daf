//! [`check`] and [`classify`] on runs written by hand: each classification, and where the lines
//! between them fall.

use serde_json::{Value, json};

use super::{
    Classification::{self, *},
    check::{Observed, check, classify},
    parse::parse_corpus,
};

fn todo(id: &str, title: &str) -> Value {
    json!({"id": id, "kind": "todo", "title": title, "date": "2026-02-07", "status": "open"})
}

/// A local run's task with this verdict, these `result.items` / `options` ids and these tool calls.
fn task(result_type: &str, items: &[&Value], options: &[&Value], tools: &[&str]) -> Value {
    let status = if result_type == "action_completed" { "success" } else { "failed" };
    let question = match (result_type, options.len()) {
        ("need_clarification", 0) => json!("details"),
        ("need_clarification", _) => json!("which_item"),
        _ => Value::Null,
    };
    json!({
        "status": status, "model_used": "local", "tokens_used": {"total": 0}, "cost": {"amount": 0.0},
        "result": {
            "type": result_type, "message": "...", "question": question,
            "suggestion": if status == "failed" { json!("try again") } else { Value::Null },
            "items": items, "options": options.iter().map(|o| json!({"id": o["id"]})).collect::<Vec<_>>(),
            "tool_calls": tools.iter().map(|name| json!({"name": name, "arguments": {}})).collect::<Vec<_>>(),
        },
    })
}

/// Classifies a run of `row` (setup: to-dos "a" and "b", ids 1 and 2) that left `after`.
fn classify_row(row: &str, after: Vec<Value>, task: Value) -> (Classification, Vec<String>) {
    let case = parse_corpus(&format!("{row}\ttodo \"a\" 2026-02-07 ; todo \"b\" 2026-02-07")).unwrap().remove(0);
    let before = vec![todo("1", "a"), todo("2", "b")];
    let seen = Observed { task, seeded: before.clone(), before, after, ..Observed::default() };
    let problems = check(&case, &seen);
    (classify(&case, &seen, &problems), problems.all().cloned().collect())
}

fn done(mut item: Value) -> Value {
    item["status"] = json!("completed");
    item["completed_at"] = json!("2026-02-07T01:00:00Z");
    item
}

#[test]
fn the_expected_change_told_right_is_right() {
    let (a, b) = (todo("1", "a"), todo("2", "b"));
    let a_done = done(a);
    let run = task("action_completed", &[&a_done], &[], &["search_items", "complete_todo", "finish"]);
    assert_eq!(classify_row("complete/x\tdone a\tcompletes #0", vec![a_done.clone(), b], run), (Right, vec![]));
}

#[test]
fn an_error_or_a_question_that_changed_nothing_is_declined_where_something_was_expected() {
    let (a, b) = (todo("1", "a"), todo("2", "b"));
    let error = task("error", &[], &[], &["finish"]);
    assert_eq!(classify_row("complete/x\tdone a\tcompletes #0", vec![a.clone(), b.clone()], error.clone()).0, Declined);
    assert_eq!(classify_row("list/x\tlist\tlists #0 #1", vec![a.clone(), b.clone()], error).0, Declined);
    let which = task("need_clarification", &[], &[&a, &b], &["search_items", "finish"]);
    assert_eq!(classify_row("delete/x\tdelete\tasks conflict #0", vec![a, b], which).0, Declined);
}

#[test]
fn a_change_not_expected_or_only_half_of_one_is_a_wrong_effect() {
    let (a, b) = (todo("1", "a"), todo("2", "b"));
    let run = task("action_completed", &[&a], &[], &["search_items", "delete_item", "finish"]);
    let (class, problems) = classify_row("complete/x\tdone a\tcompletes #0", vec![b.clone()], run.clone());
    assert_eq!(class, WrongEffect, "{problems:?}");
    assert_eq!(classify_row("complete/x\tdone a\tcompletes #0 #1", vec![done(a.clone()), b.clone()], run).0, WrongEffect);
    // A success claims an effect where an error or a question was expected.
    let listed = task("action_completed", &[&a, &b], &[], &["search_items", "finish"]);
    assert_eq!(classify_row("decline/x\thello\tdeclines", vec![a, b], listed).0, WrongEffect);
}

#[test]
fn a_wrong_answer_about_nothing_changed_or_about_the_right_change_is_a_wrong_answer() {
    let (a, b) = (todo("1", "a"), todo("2", "b"));
    let listed = task("action_completed", &[&a], &[], &["search_items", "finish"]);
    assert_eq!(classify_row("list/x\tlist\tlists #0 #1", vec![a.clone(), b.clone()], listed).0, WrongAnswer);
    let which = task("need_clarification", &[], &[&a, &b], &["search_items", "finish"]);
    assert_eq!(classify_row("complete/x\tdone\tasks which #0", vec![a.clone(), b.clone()], which).0, WrongAnswer);
    // `not found` looked for something; a decline did not.
    let not_found = task("error", &[], &[], &["search_items", "finish"]);
    let (class, problems) = classify_row("decline/x\thello\tdeclines", vec![a.clone(), b.clone()], not_found);
    assert_eq!(class, WrongAnswer);
    assert!(problems[0].contains("not a decline"), "{problems:?}");
    let declined = task("error", &[], &[], &["finish"]);
    assert_eq!(classify_row("complete/x\tdone c\tnot found", vec![a.clone(), b.clone()], declined).0, WrongAnswer);
    // The right change, but the verdict does not show the item.
    let a_done = done(a);
    let silent = task("action_completed", &[], &[], &["search_items", "complete_todo", "finish"]);
    let (class, problems) = classify_row("complete/x\tdone a\tcompletes #0", vec![a_done, b], silent);
    assert_eq!((class, problems), (WrongAnswer, vec!["result.items does not hold the changed item".to_owned()]));
}
