//! A case run on a [`TestApp`]: a fresh user, its setup items, the sentence, and what it left.

use std::collections::HashMap;

use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::{
    Classification, Outcome,
    case::Case,
    check::{Observed, Problems, check, classify},
};
use crate::TestApp;

/// How long a sentence may take, in seconds (the task's timeout and the long-poll's).
const SENTENCE_TIMEOUT_SECS: u64 = 60;

/// Runs `cases` on `app`, `concurrency` at a time (each for a user of its own, so they cannot
/// touch each other's items); the outcomes in the cases' order.
pub async fn run_cases(app: &TestApp, cases: &[Case], concurrency: usize) -> Vec<Outcome> {
    futures::stream::iter(cases.iter().map(|case| run_case(app, case))).buffered(concurrency.max(1)).collect().await
}

/// Runs one case for a fresh user and classifies it.
pub async fn run_case(app: &TestApp, case: &Case) -> Outcome {
    let observed = match observe(app, case).await {
        Ok(observed) => observed,
        Err((problem, observed)) => {
            // The case could not run as written (a setup item refused, the sentence not taken): no
            // reading to judge, and nothing right about it.
            let problems = Problems { effect: vec![], answer: vec![problem] };
            return Outcome { case: case.clone(), classification: Classification::WrongAnswer, problems, observed };
        }
    };
    let problems = check(case, &observed);
    let classification = classify(case, &observed, &problems);
    Outcome { case: case.clone(), classification, problems, observed }
}

/// The setup created, the sentence run to its verdict, and the items before and after.
async fn observe(app: &TestApp, case: &Case) -> Result<Observed, (String, Observed)> {
    let name = format!("corpus{}_{}", case.line, &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let (_, key) = app.create_user(&name).await;
    let mut observed = Observed::default();
    for (i, item) in case.setup.iter().enumerate() {
        let answer = app.call(&key, Method::POST, "/api/items", Some(item.json())).await;
        if answer.status != StatusCode::CREATED {
            return Err((format!("setup item #{i} {} was refused: {} {}", item.json(), answer.status, answer.body), observed));
        }
        observed.seeded.push(answer.body);
    }
    observed.before = app.items(&key).await;

    let body = json!({
        "text": case.text, "now": case.now_rfc3339(), "tz": case.time_zone.name(), "wait": true, "timeout": SENTENCE_TIMEOUT_SECS,
    });
    let answer = app.call(&key, Method::POST, "/api/quick-action", Some(body)).await;
    let Some(task_id) = answer.body["task_id"].as_str().filter(|_| answer.status == StatusCode::CREATED) else {
        return Err((format!("POST /api/quick-action answered {} {}", answer.status, answer.body), observed));
    };
    let path = format!("/api/quick-action/{task_id}?wait=true&timeout={SENTENCE_TIMEOUT_SECS}");
    observed.task = app.call(&key, Method::GET, &path, None).await.body;
    observed.after = app.items(&key).await;
    observed.gone = gone_items(app, &key, &observed.before, &observed.after).await;
    Ok(observed)
}

/// What `GET /api/items/{id}` answers for each item of `before` missing from `after`.
async fn gone_items(app: &TestApp, key: &str, before: &[Value], after: &[Value]) -> HashMap<String, u16> {
    let mut gone = HashMap::new();
    for item in before {
        let id = item["id"].as_str().unwrap_or_default();
        if !after.iter().any(|a| a["id"] == id) {
            let answer = app.call(key, Method::GET, &format!("/api/items/{id}"), None).await;
            gone.insert(id.to_owned(), answer.status.as_u16());
        }
    }
    gone
}
