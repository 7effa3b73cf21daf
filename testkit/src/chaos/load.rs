//! The load of a scenario and the checks at its end.
//!
//! Tasks are submitted at a steady rate, spread over the fleet's users, each with an idempotency
//! key and a title of its own: a share are sentences the local provider reads (runs without a
//! model), the rest go to the fake model, which answers after a while with one `create_item` and
//! then `finish`. A client that gets a 503 or no answer submits again with the same key, as a
//! client should. Every accepted task is long-polled until its verdict; every few tasks also have
//! an SSE stream, resumed with `Last-Event-ID` whenever it breaks, and a client polling the task
//! (no wait) to see its steps as they come. At the end every task is read
//! back and compared with what the clients saw, and the items and their change records are counted
//! per task.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use futures::StreamExt;
use rand::Rng;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::{Value, json};
use tokio::{sync::Semaphore, task::JoinSet};

use super::fleet::{Fleet, is_final};
use crate::{Reply, sse_events};

/// What a load does.
#[derive(Clone, Debug)]
pub struct LoadPlan {
    pub tasks: usize,
    /// Submissions per second.
    pub rate: f64,
    /// Share of tasks the local provider runs (the rest ask the model).
    pub local_share: f64,
    /// Every n-th task is also watched through SSE.
    pub sse_every: usize,
    /// Each task's timeout, seconds.
    pub timeout_secs: u64,
    /// Longest an answer may take (beyond a long-poll's own wait); later is a violation (a hang).
    pub answer_within: Option<Duration>,
}

impl Default for LoadPlan {
    fn default() -> Self {
        LoadPlan { tasks: 200, rate: 10.0, local_share: 0.3, sse_every: 5, timeout_secs: 90, answer_within: None }
    }
}

/// The fake model's part of the load: after `delay` (a range of milliseconds), one `create_item`
/// for the title the sentence carries, then `finish` once the tool answered.
pub fn model_reply(request: &Value, delay_ms: (u64, u64)) -> Reply {
    let answered_a_tool = request["messages"].as_array().and_then(|m| m.last()).is_some_and(|m| m["role"] == "tool");
    let reply = if answered_a_tool {
        Reply::finish("action_completed", "done")
    } else {
        let title = title_in(request).unwrap_or_else(|| "zxunknown".to_owned());
        Reply::tool("create_item", json!({ "kind": "todo", "title": title }))
    };
    let delay = rand::rng().random_range(delay_ms.0..=delay_ms.1.max(delay_ms.0));
    reply.delayed(Duration::from_millis(delay))
}

const TOKEN_PREFIX: &str = "zx";
const LETTERS: &[u8] = b"bcdfghjklmnpqrstvwz";
/// Probes are numbered from here, the load's tasks below it.
const FIRST_PROBE: usize = 1_000_000;

/// The title (the task's token) the sentence of a model request carries.
fn title_in(request: &Value) -> Option<String> {
    crate::fake_model::user_text(request).split_whitespace().find(|w| w.starts_with(TOKEN_PREFIX)).map(str::to_owned)
}

/// Whether a model request is a probe's: a scenario whose model misbehaves at random spares the
/// probe, which times the recovery from the scenario's fault, not the luck of the draw.
pub fn is_probe(request: &Value) -> bool {
    let Some(title) = title_in(request) else { return false };
    let digits = &title.as_bytes()[title.len().saturating_sub(5)..];
    let n = digits.iter().try_fold(0usize, |n, d| Some(n * LETTERS.len() + LETTERS.iter().position(|l| l == d)?));
    n.is_some_and(|n| n >= FIRST_PROBE)
}

/// A title no other task has and no reader takes for a word: consonants only (no month, weekday or
/// verb hides in it), the run's code and the task's number.
fn token(run: &str, n: usize) -> String {
    let mut digits = Vec::new();
    let mut n = n;
    for _ in 0..5 {
        digits.push(LETTERS[n % LETTERS.len()]);
        n /= LETTERS.len();
    }
    digits.reverse();
    format!("{TOKEN_PREFIX}{run}{}", String::from_utf8(digits).expect("ascii"))
}

/// What was checked at the end of a load.
#[derive(Debug, Default, Clone)]
pub struct Verified {
    /// Accepted tasks (the probes included).
    pub tasks: usize,
    /// Tasks that reached a verdict.
    pub verdicts: usize,
    pub by_status: BTreeMap<String, usize>,
    pub duplicated: usize,
    pub lost: usize,
    pub taken_back: usize,
    /// 5xx answers other than 503, 503s without `Retry-After`, and requests never answered.
    pub server_errors: usize,
    /// 503 answers (with `Retry-After`).
    pub unavailable: usize,
    pub never_accepted: usize,
    /// Every HTTP answer by status (0: no answer).
    pub answers: BTreeMap<u16, usize>,
    /// Runs served by the local provider and by the model.
    pub local_runs: usize,
    pub model_runs: usize,
    /// Tasks run more than once (a claim taken over).
    pub rerun: usize,
    pub examples: Examples,
}

#[derive(Debug, Default, Clone)]
pub struct Examples {
    pub lost: Vec<String>,
    pub duplicated: Vec<String>,
    pub taken_back: Vec<String>,
    pub server_errors: Vec<String>,
}

fn example(list: &mut Vec<String>, text: String) {
    if list.len() < 5 {
        list.push(text);
    }
}

struct Accepted {
    id: String,
    token: String,
    key: usize,
}

#[derive(Default)]
struct Streamed {
    steps: Vec<Value>,
    verdict: Option<Value>,
    problems: Vec<String>,
}

#[derive(Default)]
struct Records {
    answers: BTreeMap<u16, usize>,
    server_errors: Vec<String>,
    server_error_count: usize,
    accepted: Vec<Accepted>,
    never_accepted: usize,
    /// The task as its long-poll first saw it final.
    seen: HashMap<String, Value>,
    streamed: HashMap<String, Streamed>,
    /// Steps a polling client saw while the task ran, each as first seen.
    polled: HashMap<String, Vec<Value>>,
    /// (submitted, seconds from submission to the verdict seen by the long-poll).
    latencies: Vec<(Instant, f64)>,
}

struct Shared {
    client: reqwest::Client,
    base: String,
    keys: Vec<String>,
    run: String,
    plan: LoadPlan,
    records: Mutex<Records>,
    watch_slots: Semaphore,
    probes: AtomicUsize,
}

/// A running load.
pub struct Load {
    shared: Arc<Shared>,
    submitter: tokio::task::JoinHandle<()>,
    watchers: Arc<tokio::sync::Mutex<JoinSet<()>>>,
}

impl Load {
    /// Starts submitting `plan.tasks` tasks to `fleet`.
    pub fn start(fleet: &Fleet, plan: LoadPlan) -> Load {
        let run = token("", rand::rng().random_range(0..19 * 19))[TOKEN_PREFIX.len() + 3..].to_owned();
        let shared = Arc::new(Shared {
            client: fleet.client.clone(),
            base: fleet.base.clone(),
            keys: fleet.keys.clone(),
            run,
            plan,
            records: Mutex::new(Records::default()),
            watch_slots: Semaphore::new(200),
            probes: AtomicUsize::new(0),
        });
        let watchers = Arc::new(tokio::sync::Mutex::new(JoinSet::new()));
        let submitter = tokio::spawn(submit_all(shared.clone(), watchers.clone()));
        Load { shared, submitter, watchers }
    }

    /// Tasks accepted so far.
    pub fn accepted(&self) -> usize {
        self.shared.records.lock().unwrap().accepted.len()
    }

    /// Whether every task has been submitted.
    pub fn submitted_all(&self) -> bool {
        self.submitter.is_finished()
    }

    /// Submits a task the local provider runs and waits for its verdict, retrying every 100 ms
    /// whatever the answer: how long the service takes to serve, from now. The probe is a task of
    /// the load (checked like the others).
    ///
    /// `local`: a task the local provider runs; else one that asks the model.
    pub async fn probe(&self, local: bool) -> f64 {
        let started = Instant::now();
        let n = self.shared.probes.fetch_add(1, Ordering::Relaxed);
        let number = FIRST_PROBE + n;
        let give_up = started + Duration::from_secs(120);
        let Some(accepted) = submit(&self.shared, number, local, give_up, Duration::from_millis(100)).await else {
            return started.elapsed().as_secs_f64();
        };
        let id = accepted.id.clone();
        let key = accepted.key;
        self.shared.records.lock().unwrap().accepted.push(accepted);
        watch(&self.shared, &id, key, started, give_up, Duration::from_millis(100)).await;
        started.elapsed().as_secs_f64()
    }

    /// POST-to-verdict percentiles (p50, p99, count) of tasks submitted in `[from, to)`.
    pub fn latencies(&self, from: Instant, to: Instant) -> (f64, f64, usize) {
        let records = self.shared.records.lock().unwrap();
        let mut secs: Vec<f64> = records.latencies.iter().filter(|(at, _)| *at >= from && *at < to).map(|(_, s)| *s).collect();
        secs.sort_by(f64::total_cmp);
        let pick = |q: f64| if secs.is_empty() { 0.0 } else { secs[((secs.len() as f64 - 1.0) * q).round() as usize] };
        (pick(0.5), pick(0.99), secs.len())
    }

    /// Waits for every submission and watcher, then reads every task back and checks it.
    pub async fn finish(self, fleet: &Fleet) -> Verified {
        let _ = self.submitter.await;
        let mut watchers = std::mem::take(&mut *self.watchers.lock().await);
        while watchers.join_next().await.is_some() {}
        verify(&self.shared, fleet).await
    }
}

async fn submit_all(shared: Arc<Shared>, watchers: Arc<tokio::sync::Mutex<JoinSet<()>>>) {
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / shared.plan.rate));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut submissions = JoinSet::new();
    for n in 0..shared.plan.tasks {
        ticker.tick().await;
        let shared = shared.clone();
        let watchers = watchers.clone();
        // Each submission on its own: one waiting out an outage does not hold the next back.
        submissions.spawn(async move {
            let share = shared.plan.local_share;
            let local = ((n + 1) as f64 * share).floor() > (n as f64 * share).floor();
            let started = Instant::now();
            let give_up = started + Duration::from_secs(300);
            let Some(accepted) = submit(&shared, n, local, give_up, Duration::ZERO).await else {
                shared.records.lock().unwrap().never_accepted += 1;
                return;
            };
            let (id, key) = (accepted.id.clone(), accepted.key);
            shared.records.lock().unwrap().accepted.push(accepted);
            let watch_until = started + Duration::from_secs(shared.plan.timeout_secs + 240);
            let mut set = watchers.lock().await;
            if shared.plan.sse_every > 0 && n % shared.plan.sse_every == 0 {
                let (shared, id) = (shared.clone(), id.clone());
                set.spawn(async move { stream(&shared, &id, key, watch_until).await });
            }
            if shared.plan.sse_every > 1 && n % shared.plan.sse_every == 1 {
                let (shared, id) = (shared.clone(), id.clone());
                set.spawn(async move { poll(&shared, &id, key, watch_until).await });
            }
            let shared = shared.clone();
            set.spawn(async move {
                let _slot = shared.watch_slots.acquire().await.expect("the semaphore stays open");
                watch(&shared, &id, key, started, watch_until, Duration::ZERO).await;
            });
        });
    }
    while submissions.join_next().await.is_some() {}
}

/// Submits task `n`; retries (same idempotency key) on 503s and missing answers until `give_up`.
/// `pause` overrides `Retry-After` when set (probes retry fast).
async fn submit(shared: &Shared, n: usize, local: bool, give_up: Instant, pause: Duration) -> Option<Accepted> {
    let token = token(&shared.run, n);
    let text = if local { format!("add todo {token}") } else { format!("please keep {token} somewhere sensible for me") };
    let probes_user = shared.keys.len() - 1;
    let key = if n >= FIRST_PROBE { probes_user } else { n % probes_user };
    let idempotency = format!("chaos-{}-{n}", shared.run);
    let body = json!({ "text": text, "timeout": shared.plan.timeout_secs });
    let (status, answer) = send(
        shared,
        || {
            shared
                .client
                .post(format!("{}/api/quick-action", shared.base))
                .bearer_auth(&shared.keys[key])
                .header("Idempotency-Key", &idempotency)
                .json(&body)
        },
        give_up,
        pause,
        shared.plan.answer_within,
    )
    .await?;
    if status != StatusCode::CREATED && status != StatusCode::OK {
        server_error(shared, format!("submission {n} answered {status}: {answer}"));
        return None;
    }
    let id = answer["task_id"].as_str()?.to_owned();
    Some(Accepted { id, token, key })
}

/// Long-polls a task until it is final; records what it saw then.
async fn watch(shared: &Shared, id: &str, key: usize, submitted: Instant, give_up: Instant, pause: Duration) {
    loop {
        let path = format!("{}/api/quick-action/{id}?wait=true&timeout=20", shared.base);
        let within = shared.plan.answer_within.map(|d| d + Duration::from_secs(20));
        let Some((status, task)) = send(shared, || shared.client.get(&path).bearer_auth(&shared.keys[key]), give_up, pause, within).await else {
            return;
        };
        if status != StatusCode::OK {
            server_error(shared, format!("a long-poll of {id} answered {status}: {task}"));
            return;
        }
        if is_final(&task) {
            let mut records = shared.records.lock().unwrap();
            records.latencies.push((submitted, submitted.elapsed().as_secs_f64()));
            records.seen.insert(id.to_owned(), task);
            return;
        }
        if Instant::now() > give_up {
            return;
        }
    }
}

/// Reads a task (no wait) every 300 ms until it is final, keeping each step as first seen.
async fn poll(shared: &Shared, id: &str, key: usize, give_up: Instant) {
    let mut seen: Vec<Value> = Vec::new();
    let path = format!("{}/api/quick-action/{id}", shared.base);
    while let Some((StatusCode::OK, task)) = send(shared, || shared.client.get(&path).bearer_auth(&shared.keys[key]), give_up, Duration::ZERO, None).await {
        if is_final(&task) {
            break;
        }
        let steps = task["steps"].as_array().cloned().unwrap_or_default();
        seen.extend(steps.into_iter().skip(seen.len()));
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    shared.records.lock().unwrap().polled.insert(id.to_owned(), seen);
}

/// Follows a task's SSE stream to its verdict, resuming with `Last-Event-ID` whenever it breaks;
/// records every step once and notes a step repeated or skipped.
async fn stream(shared: &Shared, id: &str, key: usize, give_up: Instant) {
    let mut seen = Streamed::default();
    'connect: while Instant::now() < give_up {
        let mut request = shared.client.get(format!("{}/api/quick-action/{id}/events", shared.base)).bearer_auth(&shared.keys[key]);
        if let Some(last) = seen.steps.last() {
            request = request.header("Last-Event-ID", last["seq"].to_string());
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(_) => {
                count(shared, 0);
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let status = response.status();
        count(shared, status.as_u16());
        if status != StatusCode::OK {
            if status != StatusCode::SERVICE_UNAVAILABLE || response.headers().get("retry-after").is_none() {
                server_error(shared, format!("the event stream of {id} answered {status}"));
            }
            if !status.is_server_error() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        let mut events = sse_events(response);
        while let Some(event) = events.next().await {
            match event.event.as_str() {
                "step" => {
                    let Ok(step) = serde_json::from_str::<Value>(&event.data) else {
                        seen.problems.push(format!("a step that is not JSON: {}", event.data));
                        continue;
                    };
                    let expected = seen.steps.len() as u64;
                    match step["seq"].as_u64() {
                        Some(seq) if seq == expected => seen.steps.push(step),
                        Some(seq) if seq < expected => seen.problems.push(format!("step {seq} sent twice")),
                        other => {
                            seen.problems.push(format!("step {other:?} sent when {expected} was next"));
                            seen.steps.push(step);
                        }
                    }
                }
                "verdict" => {
                    seen.verdict = serde_json::from_str(&event.data).ok();
                    break 'connect;
                }
                _ => {}
            }
        }
        // The stream broke (a purge, a restart, a shutdown): resume after the last step.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    shared.records.lock().unwrap().streamed.insert(id.to_owned(), seen);
}

/// Sends a request until it is answered with anything but a 503 or 429, or `give_up` passes.
/// Records every answer; a 5xx other than 503 (or a 503 without `Retry-After`), and an answer later
/// than `within`, are violations.
async fn send(
    shared: &Shared,
    build: impl Fn() -> RequestBuilder,
    give_up: Instant,
    pause: Duration,
    within: Option<Duration>,
) -> Option<(StatusCode, Value)> {
    loop {
        if Instant::now() > give_up {
            return None;
        }
        let sent = Instant::now();
        let answer = build().send().await;
        if let Some(within) = within
            && sent.elapsed() > within
        {
            server_error(shared, format!("an answer took {:.1} s (the bound is {} s)", sent.elapsed().as_secs_f64(), within.as_secs()));
        }
        let response = match answer {
            Ok(response) => response,
            Err(err) => {
                count(shared, 0);
                server_error(shared, format!("no answer: {err}"));
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let status = response.status();
        count(shared, status.as_u16());
        let retry_after = response.headers().get("retry-after").and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            let body = response.text().await.unwrap_or_default();
            if status.is_server_error() && (status != StatusCode::SERVICE_UNAVAILABLE || retry_after.is_none()) {
                server_error(shared, format!("{status} {body}"));
            }
            let wait = if pause.is_zero() { Duration::from_secs(retry_after.unwrap_or(1).min(2)) } else { pause };
            tokio::time::sleep(wait).await;
            continue;
        }
        match response.json::<Value>().await {
            Ok(body) => return Some((status, body)),
            Err(err) => {
                server_error(shared, format!("{status} with a body that broke off: {err}"));
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

fn count(shared: &Shared, status: u16) {
    *shared.records.lock().unwrap().answers.entry(status).or_default() += 1;
}

fn server_error(shared: &Shared, text: String) {
    let mut records = shared.records.lock().unwrap();
    records.server_error_count += 1;
    if records.server_errors.len() < 5 {
        records.server_errors.push(text);
    }
}

/// Reads every accepted task back (through the API) and the items (from the database), and
/// compares them with what the clients saw.
async fn verify(shared: &Shared, fleet: &Fleet) -> Verified {
    let mut v = Verified::default();
    let accepted: Vec<(String, String, usize)> =
        shared.records.lock().unwrap().accepted.iter().map(|a| (a.id.clone(), a.token.clone(), a.key)).collect();
    v.tasks = accepted.len();
    let mut finals = HashMap::new();
    for (id, _, key) in &accepted {
        // A task may still be on its way (a long-poll gave up): wait for it, within reason.
        let give_up = Instant::now() + Duration::from_secs(60);
        let path = format!("{}/api/quick-action/{id}?wait=true&timeout=30", fleet.base);
        let task = loop {
            let answer = send(shared, || shared.client.get(&path).bearer_auth(&shared.keys[*key]), give_up, Duration::ZERO, None).await;
            match answer {
                Some((StatusCode::OK, task)) if is_final(&task) || Instant::now() > give_up => break Some(task),
                Some((StatusCode::OK, _)) => continue,
                _ => break None,
            }
        };
        let Some(task) = task.filter(is_final) else {
            v.lost += 1;
            example(&mut v.examples.lost, format!("task {id} has no verdict"));
            continue;
        };
        v.verdicts += 1;
        *v.by_status.entry(task["status"].as_str().unwrap_or("?").to_owned()).or_default() += 1;
        if task["model_used"] == "local" {
            v.local_runs += 1;
        } else {
            v.model_runs += 1;
        }
        if task["attempts"].as_i64().unwrap_or(1) > 1 {
            v.rerun += 1;
        }
        finals.insert(id.clone(), task);
    }

    let records = std::mem::take(&mut *shared.records.lock().unwrap());
    for (id, seen) in &records.seen {
        let Some(task) = finals.get(id) else { continue };
        for field in ["status", "result", "completed_at", "steps"] {
            if seen[field] != task[field] {
                v.taken_back += 1;
                example(&mut v.examples.taken_back, format!("task {id}: its long-poll saw {field} = {}, it ended with {}", seen[field], task[field]));
                break;
            }
        }
    }
    for (id, polled) in &records.polled {
        let Some(task) = finals.get(id) else { continue };
        let steps = task["steps"].as_array().cloned().unwrap_or_default();
        for step in polled {
            let seq = step["seq"].as_u64().unwrap_or(u64::MAX) as usize;
            if steps.get(seq) != Some(step) {
                v.taken_back += 1;
                example(&mut v.examples.taken_back, format!("task {id} showed a polling client step {step}, it ended with {:?}", steps.get(seq)));
            }
        }
    }
    for (id, streamed) in &records.streamed {
        let Some(task) = finals.get(id) else { continue };
        let steps = task["steps"].as_array().cloned().unwrap_or_default();
        for problem in &streamed.problems {
            v.taken_back += 1;
            example(&mut v.examples.taken_back, format!("task {id}'s stream: {problem}"));
        }
        for step in &streamed.steps {
            let seq = step["seq"].as_u64().unwrap_or(u64::MAX) as usize;
            if steps.get(seq) != Some(step) {
                v.taken_back += 1;
                example(&mut v.examples.taken_back, format!("task {id}'s stream showed step {step}, it ended with {:?}", steps.get(seq)));
            }
        }
        match &streamed.verdict {
            Some(verdict) => {
                if streamed.steps.len() != steps.len() {
                    v.lost += 1;
                    example(&mut v.examples.lost, format!("task {id}'s stream showed {} of its {} steps", streamed.steps.len(), steps.len()));
                }
                if verdict["status"] != task["status"] || verdict["result"] != task["result"] {
                    v.taken_back += 1;
                    example(&mut v.examples.taken_back, format!("task {id}'s stream ended with {verdict}, the task with {}", task["result"]));
                }
            }
            None => {
                v.lost += 1;
                example(&mut v.examples.lost, format!("task {id}'s stream never showed its verdict"));
            }
        }
    }

    // Effects: each task asked for one item titled with its token; its creation is recorded once
    // in item_changes (what undo reads).
    let ids: Vec<uuid::Uuid> = accepted.iter().map(|(id, _, _)| id.parse().expect("a task id")).collect();
    let tokens: Vec<String> = accepted.iter().map(|(_, token, _)| token.clone()).collect();
    let counts: Vec<(uuid::Uuid, String, i64, i64)> = loop {
        let rows = sqlx::query_as(
            "SELECT x.id, t.status,
                    (SELECT count(*) FROM item_changes c WHERE c.task_id = x.id AND c.before IS NULL),
                    (SELECT count(*) FROM items i WHERE i.user_id = t.user_id AND strpos(i.title, x.token) > 0)
             FROM unnest($1::uuid[], $2::text[]) AS x(id, token) JOIN quick_action_tasks t ON t.id = x.id",
        )
        .bind(&ids)
        .bind(&tokens)
        .fetch_all(&fleet.app.pool)
        .await;
        match rows {
            Ok(rows) => break rows,
            Err(err) => {
                tracing::warn!(error = %err, "counting items failed; retrying");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    };
    if counts.len() != ids.len() {
        v.lost += ids.len() - counts.len();
        example(&mut v.examples.lost, format!("{} accepted tasks have no row", ids.len() - counts.len()));
    }
    for (id, status, created, items) in counts {
        if created > 1 || items > 1 {
            v.duplicated += 1;
            example(&mut v.examples.duplicated, format!("task {id}: {created} creations recorded, {items} items"));
        } else if created != items {
            v.lost += 1;
            example(&mut v.examples.lost, format!("task {id}: {items} items but {created} change records"));
        } else if status == "success" && items == 0 {
            v.lost += 1;
            example(&mut v.examples.lost, format!("task {id} succeeded without its item"));
        }
    }

    v.answers = records.answers;
    v.unavailable = v.answers.get(&503).copied().unwrap_or(0);
    v.server_errors = records.server_error_count;
    v.examples.server_errors = records.server_errors;
    v.never_accepted = records.never_accepted;
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request_for(n: usize) -> Value {
        json!({ "messages": [{ "role": "user", "content": format!("add {} to my list", token("kq", n)) }] })
    }

    #[test]
    fn a_probes_model_requests_are_told_from_the_loads() {
        assert!(is_probe(&request_for(FIRST_PROBE)));
        assert!(is_probe(&request_for(FIRST_PROBE + 17)));
        assert!(!is_probe(&request_for(0)));
        assert!(!is_probe(&request_for(FIRST_PROBE - 1)));
        assert!(!is_probe(&json!({ "messages": [{ "role": "user", "content": "no token here" }] })));
    }
}
