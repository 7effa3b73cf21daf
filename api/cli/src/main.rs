//! `quickact`: the HTTP API on the command line.
//!
//! `quickact "明天下午3点开会"` submits the sentence, shows each step live as the worker commits it
//! (from the task's Server-Sent Events stream, resumed with `Last-Event-ID` if the connection
//! drops) and then the verdict; its exit code is the task's (as for `show`, `reply` and `undo`:
//! [`exit`]). `history`, `show`, `items`,
//! `cancel` and `undo` read and act on what is there; `preview` shows how the server reads a
//! sentence without running it (in [`preview`]). Human output by default (times in the
//! user's zone), `--json` for scripts (the API's JSON, times in UTC).

use std::{process::ExitCode, time::Duration};

use chrono::DateTime;
use chrono_tz::Tz;
use clap::{Parser, Subcommand};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

mod preview;

/// Exit codes: what a script needs to tell apart. A command about one task (`submit`, `reply`,
/// `show`, `undo`) exits with that task's code ([`task_code`]), whether it prints text or `--json`;
/// the others exit 0 when they did what was asked (`cancel`: the task is cancelled).
mod exit {
    /// The action was done (or the command did what it was asked).
    pub const DONE: u8 = 0;
    /// The request failed: the server or network, a bad key, an unknown id.
    pub const REQUEST_FAILED: u8 = 1;
    /// A usage error (clap's code, and the CLI's own).
    pub const USAGE: u8 = 2;
    /// The verdict asks a question (`need_clarification`): `quickact reply` answers it.
    pub const CLARIFICATION: u8 = 3;
    /// The verdict is an error (for `preview`: the reading is not certain).
    pub const ERROR: u8 = 4;
    /// The task ran out of time.
    pub const TIMEOUT: u8 = 5;
    /// The task was cancelled.
    pub const CANCELLED: u8 = 6;
    /// The task has no verdict yet (`show` of a pending or running task).
    pub const UNFINISHED: u8 = 7;
}

/// The exit codes as `--help` and docs/api.md list them.
const EXIT_CODES_HELP: &str = "Exit codes (submit, reply, show and undo: their task's; --json does not change them):
  0  done (action_completed), or the command did what was asked (cancel: the task is cancelled)
  1  the request failed: server unreachable, bad key, unknown id (the reason goes to stderr)
  2  usage
  3  the task asks a question (need_clarification): answer it with `quickact reply ID ...`
  4  error verdict (preview: the reading is not certain)
  5  the task timed out
  6  the task was cancelled
  7  no verdict yet (show of a pending or running task)";

#[derive(Parser)]
#[command(
    name = "quickact",
    version,
    about = "Tell quickact what to do with your schedule, in one sentence",
    subcommand_precedence_over_arg = true,
    after_help = EXIT_CODES_HELP
)]
struct Cli {
    /// The quickact server.
    #[arg(long, env = "QUICKACT_URL", default_value = "http://127.0.0.1:8080", global = true)]
    url: String,
    /// Your API key.
    #[arg(long, env = "QUICKACT_KEY", hide_env_values = true, global = true)]
    key: Option<String>,
    /// Print JSON (the API's answer) instead of text for people.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Option<Command>,
    /// The sentence to execute (same as `quickact submit ...`).
    text: Vec<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Submit a sentence and watch it run.
    Submit {
        text: Vec<String>,
        /// Seconds the task may take (1-120).
        #[arg(long)]
        timeout: Option<u32>,
        /// Time zone of the sentence (IANA name), instead of your own.
        #[arg(long)]
        tz: Option<String>,
        /// Submit as batch work (a script's): served after interactive tasks until it has waited
        /// the server's aging time.
        #[arg(long)]
        batch: bool,
    },
    /// Your tasks, newest first, with the time each was submitted in your time zone.
    History {
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// The `next_cursor` of a previous page.
        #[arg(long)]
        cursor: Option<String>,
        /// Show times in this zone (an IANA name such as Europe/Paris) instead of yours.
        #[arg(long)]
        tz: Option<String>,
    },
    /// One task, with its steps; exits with the task's code, as `submit` does (3 a question, 7 no
    /// verdict yet).
    Show { id: String },
    /// Your items.
    Items {
        /// Only this day (YYYY-MM-DD).
        #[arg(long, conflicts_with_all = ["from", "to"])]
        date: Option<String>,
        #[arg(long)]
        from: Option<String>,
        #[arg(long)]
        to: Option<String>,
        /// event, todo or reminder.
        #[arg(long)]
        kind: Option<String>,
        /// open, completed or all.
        #[arg(long)]
        status: Option<String>,
        /// Words in the title or description.
        #[arg(short, long)]
        query: Option<String>,
    },
    /// Cancel a pending or running task.
    Cancel { id: String },
    /// Undo the item changes a task made.
    Undo { id: String },
    /// Answer a task's question: an option's number or id (`quickact reply ID 2`), or a few
    /// words (`quickact reply ID the second one`, `quickact reply ID 改到明天`); runs as a new task.
    Reply {
        id: String,
        answer: Vec<String>,
        /// Seconds the reply's task may take (1-120).
        #[arg(long)]
        timeout: Option<u32>,
        /// Time zone of the reply (IANA name), instead of your own.
        #[arg(long)]
        tz: Option<String>,
    },
    /// How the server reads a sentence, without running it: each request in it, the part of the
    /// sentence each piece came from, and the words it could not read. Exits 0 when the reading is
    /// certain, 4 when not.
    Preview {
        text: Vec<String>,
        /// Time zone of the sentence (IANA name), instead of your own.
        #[arg(long)]
        tz: Option<String>,
    },
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    let Some(key) = cli.key.clone() else {
        eprintln!("quickact: no API key: set QUICKACT_KEY or pass --key");
        return ExitCode::from(exit::REQUEST_FAILED);
    };
    let client = Client { http: reqwest::Client::new(), base: cli.url.trim_end_matches('/').to_owned(), key, json: cli.json };
    let outcome = match cli.command {
        Some(Command::Submit { text, timeout, tz, batch }) => client.submit(&text.join(" "), timeout, tz, batch).await,
        None if !cli.text.is_empty() => client.submit(&cli.text.join(" "), None, None, false).await,
        None => {
            eprintln!("quickact: say what to do, e.g. quickact \"明天下午3点开会\" (see --help)");
            return ExitCode::from(exit::USAGE);
        }
        Some(Command::History { limit, cursor, tz }) => client.history(limit, cursor, tz).await,
        Some(Command::Show { id }) => client.show(&id).await,
        Some(Command::Items { date, from, to, kind, status, query }) => {
            let (from, to) = match date {
                Some(day) => (Some(day.clone()), Some(day)),
                None => (from, to),
            };
            let filters = [("date_from", from), ("date_to", to), ("kind", kind), ("status", status), ("q", query)];
            client.items(filters.into_iter().filter_map(|(name, value)| value.map(|v| (name, v))).collect()).await
        }
        Some(Command::Cancel { id }) => client.act_on(&id, "cancel", StatusCode::OK).await.map(|_| exit::DONE),
        Some(Command::Undo { id }) => client.act_on(&id, "undo", StatusCode::CREATED).await,
        Some(Command::Reply { id, answer, timeout, tz }) => client.reply(&id, &answer.join(" "), timeout, tz).await,
        Some(Command::Preview { text, tz }) => client.preview(&text.join(" "), tz).await,
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("quickact: {message}");
            ExitCode::from(exit::REQUEST_FAILED)
        }
    }
}

struct Client {
    http: reqwest::Client,
    base: String,
    key: String,
    json: bool,
}

/// Times the event stream is reopened after a dropped connection before giving up.
const STREAM_RETRIES: u32 = 5;

impl Client {
    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base)).bearer_auth(&self.key)
    }

    /// Sends a request; the JSON answer when its status is `expected`, else the error envelope's
    /// message.
    async fn call(&self, request: reqwest::RequestBuilder, expected: StatusCode) -> Result<Value, String> {
        let response = request.send().await.map_err(|e| format!("cannot reach the server: {e}"))?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if status == expected {
            return Ok(body);
        }
        let error = &body["error"];
        Err(match (error["message"].as_str(), error["code"].as_str()) {
            (Some(message), Some(code)) => format!("{message} ({code}, HTTP {})", status.as_u16()),
            _ => format!("the server answered HTTP {status}"),
        })
    }

    async fn submit(&self, text: &str, timeout: Option<u32>, tz: Option<String>, batch: bool) -> Result<u8, String> {
        let mut body = json!({ "text": text });
        if batch {
            body["priority"] = json!("batch");
        }
        if let Some(timeout) = timeout {
            body["timeout"] = json!(timeout);
        }
        if let Some(tz) = tz {
            body["tz"] = json!(tz);
        }
        self.run(Method::POST, "/api/quick-action", body).await
    }

    /// Replies to task `id`'s question: a bare number or an item id is an option, anything else
    /// the reply's words; then watches the reply run as [`Client::submit`] does.
    async fn reply(&self, id: &str, answer: &str, timeout: Option<u32>, tz: Option<String>) -> Result<u8, String> {
        let answer = answer.trim();
        let mut body = if answer.parse::<u32>().is_ok() || looks_like_id(answer) {
            json!({ "option": answer })
        } else {
            json!({ "text": answer })
        };
        if let Some(timeout) = timeout {
            body["timeout"] = json!(timeout);
        }
        if let Some(tz) = tz {
            body["tz"] = json!(tz);
        }
        self.run(Method::POST, &format!("/api/quick-action/{id}/reply"), body).await
    }

    /// Posts a task (`body` to `path`), then follows it to its verdict and prints it.
    async fn run(&self, method: Method, path: &str, body: Value) -> Result<u8, String> {
        let task = self.call(self.request(method, path).json(&body), StatusCode::CREATED).await?;
        let id = task["task_id"].as_str().ok_or("the server's answer has no task_id")?.to_owned();
        if !self.json {
            println!("task {id}");
        }
        let task = self.follow(&id).await?;
        if self.json {
            print_json(&task);
        } else {
            print!("{}", verdict_text(&task));
        }
        Ok(task_code(&task))
    }

    /// Shows the task's steps as they commit and returns the finished task (the `verdict` event).
    async fn follow(&self, id: &str) -> Result<Value, String> {
        let mut last_seen: Option<String> = None;
        let mut failures = 0;
        loop {
            let mut request = self.request(Method::GET, &format!("/api/quick-action/{id}/events"));
            if let Some(seq) = &last_seen {
                request = request.header("last-event-id", seq);
            }
            let response = request.send().await.map_err(|e| format!("cannot reach the server: {e}"))?;
            if !response.status().is_success() {
                return self.call(self.request(Method::GET, &format!("/api/quick-action/{id}")), StatusCode::OK).await;
            }
            let mut events = response.bytes_stream().eventsource();
            while let Some(event) = events.next().await {
                let Ok(event) = event else { break };
                let data: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
                match event.event.as_str() {
                    "verdict" => return Ok(data),
                    "step" => {
                        last_seen = Some(event.id.clone());
                        if !self.json {
                            println!("  {}", step_line(&data));
                        }
                    }
                    "status" if !self.json => println!("  … {}", data["status"].as_str().unwrap_or("?")),
                    _ => {}
                }
            }
            // The stream ended without a verdict (a dropped connection, a server restarting):
            // reopen it after the last step seen.
            failures += 1;
            if failures > STREAM_RETRIES {
                return Err("lost the task's event stream; see `quickact show` for how it ends".into());
            }
            tokio::time::sleep(Duration::from_millis(500 * u64::from(failures))).await;
        }
    }

    async fn history(&self, limit: u32, cursor: Option<String>, tz: Option<String>) -> Result<u8, String> {
        let mut query = vec![("limit", limit.to_string())];
        query.extend(cursor.map(|c| ("cursor", c)));
        let page = self.call(self.request(Method::GET, "/api/quick-action").query(&query), StatusCode::OK).await?;
        if self.json {
            print_json(&page);
            return Ok(exit::DONE);
        }
        let zone = match tz {
            Some(name) => name.trim().parse::<Tz>().map_err(|_| format!("{name:?} is not an IANA time zone (e.g. Asia/Shanghai)"))?,
            None => self.own_zone().await?,
        };
        for task in page["tasks"].as_array().into_iter().flatten() {
            println!("{}", history_line(task, zone));
        }
        if let Some(cursor) = page["next_cursor"].as_str() {
            println!("more: quickact history --cursor {cursor}");
        }
        Ok(exit::DONE)
    }

    /// The caller's time zone: `POST /api/parse-time` reads a text in it when given none, and says
    /// which it used.
    async fn own_zone(&self) -> Result<Tz, String> {
        let parsed = self.call(self.request(Method::POST, "/api/parse-time").json(&json!({ "text": "" })), StatusCode::OK).await?;
        let name = text(&parsed["tz"]);
        name.parse().map_err(|_| format!("the server named an unknown time zone {name:?}"))
    }

    /// Exits with the task's code, as `submit` does when it ends ([`task_code`]).
    async fn show(&self, id: &str) -> Result<u8, String> {
        let task = self.call(self.request(Method::GET, &format!("/api/quick-action/{id}")), StatusCode::OK).await?;
        if self.json {
            print_json(&task);
            return Ok(task_code(&task));
        }
        println!("{}", task_heading(&task));
        println!("  \"{}\"", text(&task["input_text"]));
        for step in task["steps"].as_array().into_iter().flatten() {
            println!("  {}", step_line(step));
        }
        if task["result"].is_object() {
            print!("{}", verdict_text(&task));
        }
        Ok(task_code(&task))
    }

    async fn items(&self, filters: Vec<(&str, String)>) -> Result<u8, String> {
        let items = self.call(self.request(Method::GET, "/api/items").query(&filters), StatusCode::OK).await?;
        if self.json {
            print_json(&items);
            return Ok(exit::DONE);
        }
        let list = items["items"].as_array().cloned().unwrap_or_default();
        if list.is_empty() {
            println!("no items");
        }
        for item in &list {
            println!("{}  {}", item_line(item), text(&item["id"]));
        }
        Ok(exit::DONE)
    }

    /// `cancel` and `undo`: a POST on the task; the answer is a task (the cancelled one, or the
    /// undo), whose code this returns.
    async fn act_on(&self, id: &str, action: &str, expected: StatusCode) -> Result<u8, String> {
        let task = self.call(self.request(Method::POST, &format!("/api/quick-action/{id}/{action}")), expected).await?;
        if self.json {
            print_json(&task);
        } else {
            println!("{}", task_heading(&task));
            print!("{}", verdict_text(&task));
        }
        Ok(task_code(&task))
    }
}

/// Where a task stands, as the CLI tells it to people: from its lifecycle `status` and, once it
/// ended, its verdict (`result.type`). The API's `status` is `failed` for a question as for an
/// error (the contract's, for the original design's clients); people need them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    Pending,
    Running,
    Done,
    Question,
    Error,
    TimedOut,
    Cancelled,
}

impl Standing {
    fn of(task: &Value) -> Standing {
        match (task["status"].as_str(), task["result"]["type"].as_str()) {
            (Some("pending"), _) => Standing::Pending,
            (Some("processing"), _) => Standing::Running,
            (Some("timeout"), _) => Standing::TimedOut,
            (Some("cancelled"), _) => Standing::Cancelled,
            (_, Some("action_completed")) => Standing::Done,
            (_, Some("need_clarification")) => Standing::Question,
            _ => Standing::Error,
        }
    }

    /// The label in `history` and in a task's heading: the same words whatever the sentence's
    /// language (a column of the CLI's own, like its options).
    fn label(self) -> &'static str {
        match self {
            Standing::Pending => "pending",
            Standing::Running => "running",
            Standing::Done => "done",
            Standing::Question => "question",
            Standing::Error => "error",
            Standing::TimedOut => "timeout",
            Standing::Cancelled => "cancelled",
        }
    }

    /// The mark before a verdict's message: a symbol, so that the line is the server's sentence
    /// alone, in its own language, and says nothing twice ("已创建：…", "与已有日程冲突：…" need no
    /// heading in words).
    fn mark(self) -> &'static str {
        match self {
            Standing::Pending | Standing::Running => "…",
            Standing::Done => "✓",
            Standing::Question => "?",
            Standing::Error | Standing::TimedOut | Standing::Cancelled => "✗",
        }
    }

    fn exit_code(self) -> u8 {
        match self {
            Standing::Pending | Standing::Running => exit::UNFINISHED,
            Standing::Done => exit::DONE,
            Standing::Question => exit::CLARIFICATION,
            Standing::Error => exit::ERROR,
            Standing::TimedOut => exit::TIMEOUT,
            Standing::Cancelled => exit::CANCELLED,
        }
    }
}

/// The exit code of a command about one task.
fn task_code(task: &Value) -> u8 {
    Standing::of(task).exit_code()
}

/// `task 0193...  ? question`
fn task_heading(task: &Value) -> String {
    let standing = Standing::of(task);
    format!("task {}  {} {}", text(&task["task_id"]), standing.mark(), standing.label())
}

/// A row of `history`: `0193...  ? question   2026-02-08 15:00:03 CST  删除周会`.
fn history_line(task: &Value, zone: Tz) -> String {
    let standing = Standing::of(task);
    format!(
        "{}  {} {:<9} {}  {}",
        text(&task["task_id"]),
        standing.mark(),
        standing.label(),
        local_time(text(&task["created_at"]), zone),
        text(&task["input_text"])
    )
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).expect("JSON prints"));
}

/// `model gpt-4o-mini  1830 in / 96 out  812 ms`, `create_item {"title": ...}  ok  12 ms`.
fn step_line(step: &Value) -> String {
    let latency = step["latency_ms"].as_i64().unwrap_or(0);
    let mark = if step["ok"].as_bool() == Some(true) { "ok" } else { "failed" };
    let mut line = if step["kind"] == "model_turn" {
        let tokens = &step["tokens"];
        format!("model {}  {} in / {} out  {latency} ms", text(&step["name"]), tokens["input"], tokens["output"])
    } else {
        format!("{} {}  {mark}  {latency} ms", text(&step["name"]), step["arguments"])
    };
    if let Some(error) = step["error"].as_str() {
        line.push_str(&format!("  ({error})"));
    }
    line
}

/// An RFC 3339 moment as `2026-02-08 15:00:03 CST`, in `zone` (as it came when it cannot be read).
fn local_time(rfc3339: &str, zone: Tz) -> String {
    match DateTime::parse_from_rfc3339(rfc3339) {
        Ok(at) => at.with_timezone(&zone).format("%Y-%m-%d %H:%M:%S %Z").to_string(),
        Err(_) => rfc3339.to_owned(),
    }
}

/// `[event] 2026-02-08 15:00-16:00 开会`
fn item_line(item: &Value) -> String {
    let mut line = format!("[{}] {}", text(&item["kind"]), text(&item["date"]));
    match (item["start_time"].as_str(), item["end_time"].as_str(), item["segment"].as_str()) {
        (Some(start), Some(end), _) => line.push_str(&format!(" {start}-{end}")),
        (Some(start), None, _) => line.push_str(&format!(" {start}")),
        (None, _, Some(segment)) => line.push_str(&format!(" ({segment})")),
        _ => {}
    }
    line.push_str(&format!(" {}", text(&item["title"])));
    match text(&item["status"]) {
        "completed" => line.push_str(" (done)"),
        "deleted" => line.push_str(" (deleted)"),
        _ => {}
    }
    line
}

/// Whether `text` is Chinese (it has a CJK ideograph).
fn is_chinese(text: &str) -> bool {
    text.chars().any(|c| matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{20000}'..='\u{2FA1F}'))
}

/// Whether a text is written in Chinese rather than English, or `None` when it has no words to
/// tell by ("#2"). Quoted words are left out, since either language quotes the other's (an
/// English answer names the item "看牙医"); then it is Chinese when it has more CJK ideographs than
/// Latin words.
fn written_in_chinese(text: &str) -> Option<bool> {
    let mut unquoted = String::new();
    let mut closing = None;
    for c in text.chars() {
        match (closing, c) {
            (None, '"') => closing = Some('"'),
            (None, '“') => closing = Some('”'),
            (None, '「') => closing = Some('」'),
            (Some(end), c) if c == end => closing = None,
            (None, c) => unquoted.push(c),
            (Some(_), _) => {}
        }
    }
    let ideographs = unquoted.chars().filter(|&c| is_chinese(&c.to_string())).count();
    let words = unquoted.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| !w.is_empty()).count();
    (ideographs + words > 0).then_some(ideographs > words)
}

/// The language of a verdict: its message's (the server writes it in the sentence's language; a
/// reply's sentence is `#2`, an undo's names another task's), else the sentence's.
fn verdict_is_chinese(task: &Value) -> bool {
    written_in_chinese(text(&task["result"]["message"]))
        .or_else(|| written_in_chinese(text(&task["input_text"])))
        .unwrap_or(false)
}

/// An item under a verdict, in the verdict's language: `[日程] 2026-02-08 上午 带伞（已完成）`.
fn verdict_item_line(item: &Value, chinese: bool) -> String {
    if !chinese {
        return item_line(item);
    }
    let kind = match text(&item["kind"]) {
        "event" => "日程",
        "todo" => "待办",
        "reminder" => "提醒",
        other => other,
    };
    let mut line = format!("[{kind}] {}", text(&item["date"]));
    match (item["start_time"].as_str(), item["end_time"].as_str(), item["segment"].as_str()) {
        (Some(start), Some(end), _) => line.push_str(&format!(" {start}-{end}")),
        (Some(start), None, _) => line.push_str(&format!(" {start}")),
        (None, _, Some(segment)) => line.push_str(&format!(
            " {}",
            match segment {
                "all_day" => "全天",
                "early_morning" => "凌晨",
                "morning" => "早上",
                "forenoon" => "上午",
                "noon" => "中午",
                "afternoon" => "下午",
                "evening" => "晚上",
                other => other,
            }
        )),
        _ => {}
    }
    line.push_str(&format!(" {}", text(&item["title"])));
    match text(&item["status"]) {
        "completed" => line.push_str("（已完成）"),
        "deleted" => line.push_str("（已删除）"),
        _ => {}
    }
    line
}

/// A verdict for people, one line a piece, each ending in a newline:
///
/// ```text
/// ? 与已有日程冲突：周会，没有创建。
///   [日程] 2026-02-09 15:00-16:00 周会
///   → 换一个时间，或说明“冲突也要添加”。
/// ```
///
/// The message as the server wrote it after a mark ([`Standing::mark`]), the items it is about
/// and the numbered options of a question in the message's language, then the suggestion.
fn verdict_text(task: &Value) -> String {
    let result = &task["result"];
    let chinese = verdict_is_chinese(task);
    let mut out = format!("{} {}\n", Standing::of(task).mark(), text(&result["message"]));
    for item in result["items"].as_array().into_iter().flatten() {
        out.push_str(&format!("  {}\n", verdict_item_line(item, chinese)));
    }
    for (n, option) in result["options"].as_array().into_iter().flatten().enumerate() {
        out.push_str(&format!("  {}. {}\n", n + 1, verdict_item_line(option, chinese)));
    }
    if let Some(suggestion) = result["suggestion"].as_str().filter(|s| !s.trim().is_empty()) {
        out.push_str(&format!("  → {suggestion}\n"));
    }
    out
}

/// An item id as the server writes it (a UUID: 8-4-4-4-12 hex digits).
fn looks_like_id(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12]) && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn task(status: &str, result: Value) -> Value {
        json!({"task_id": "0193aaaa-0000-7000-8000-000000000001", "status": status, "input_text": "明天下午3点开会",
               "created_at": "2026-02-08T07:00:03Z", "result": result})
    }

    #[test]
    fn each_status_and_verdict_has_its_label_mark_and_exit_code() {
        let cases = [
            ("pending", Value::Null, "pending", "…", exit::UNFINISHED),
            ("processing", Value::Null, "running", "…", exit::UNFINISHED),
            ("success", json!({"type": "action_completed"}), "done", "✓", exit::DONE),
            // The API's status is failed for a question and an error alike: the CLI tells them apart.
            ("failed", json!({"type": "need_clarification"}), "question", "?", exit::CLARIFICATION),
            ("failed", json!({"type": "error"}), "error", "✗", exit::ERROR),
            ("failed", Value::Null, "error", "✗", exit::ERROR),
            ("timeout", json!({"type": "error"}), "timeout", "✗", exit::TIMEOUT),
            ("cancelled", json!({"type": "error"}), "cancelled", "✗", exit::CANCELLED),
        ];
        for (status, result, label, mark, code) in cases {
            let task = task(status, result);
            let standing = Standing::of(&task);
            assert_eq!((standing.label(), standing.mark(), task_code(&task)), (label, mark, code), "{status} {}", task["result"]);
            assert_eq!(task_heading(&task), format!("task 0193aaaa-0000-7000-8000-000000000001  {mark} {label}"));
        }
        let codes = [exit::DONE, exit::REQUEST_FAILED, exit::USAGE, exit::CLARIFICATION, exit::ERROR, exit::TIMEOUT, exit::CANCELLED, exit::UNFINISHED];
        assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn history_shows_a_question_as_a_question_not_as_failed() {
        let asked = task("failed", json!({"type": "need_clarification", "message": "请问是哪一个？"}));
        let line = history_line(&asked, chrono_tz::Asia::Shanghai);
        assert_eq!(line, "0193aaaa-0000-7000-8000-000000000001  ? question  2026-02-08 15:00:03 CST  明天下午3点开会");
        assert!(!line.contains("failed") && !line.contains("need_clarification"), "{line}");
        let failed = history_line(&task("failed", json!({"type": "error"})), chrono_tz::UTC);
        assert!(failed.contains("  ✗ error     2026-02-08 07:00:03 UTC  "), "{failed}");
    }

    #[test]
    fn the_help_lists_every_exit_code() {
        use clap::CommandFactory;
        let help = Cli::command().render_long_help().to_string();
        for code in 0..=7 {
            assert!(help.contains(&format!("\n  {code}  ")), "exit code {code} in {help}");
        }
        assert!(help.contains("show") && help.contains("--json does not change them"), "{help}");
    }

    #[test]
    fn a_verdict_is_the_servers_message_after_a_mark_never_headed_twice() {
        // The local provider's conflict: the message says what the question is.
        let conflict = task(
            "failed",
            json!({"type": "need_clarification", "question": "conflict", "message": "与已有日程冲突：周会，没有创建。",
                   "suggestion": "换一个时间，或说明“冲突也要添加”。", "items": [],
                   "options": [{"kind": "event", "date": "2026-02-09", "start_time": "15:00", "end_time": "16:00", "title": "周会", "status": "open"}]}),
        );
        assert_eq!(verdict_text(&conflict), "? 与已有日程冲突：周会，没有创建。\n  1. [日程] 2026-02-09 15:00-16:00 周会\n  → 换一个时间，或说明“冲突也要添加”。\n");
        let done = task("success", json!({"type": "action_completed", "message": "已创建：明天（周一，2月9日）15:00-16:00 开会。"}));
        assert_eq!(verdict_text(&done), "✓ 已创建：明天（周一，2月9日）15:00-16:00 开会。\n");
        let error = task("failed", json!({"type": "error", "message": "Nothing found.", "suggestion": " "}));
        assert_eq!(verdict_text(&error), "✗ Nothing found.\n", "a blank suggestion is left out");
    }

    #[test]
    fn a_verdict_follows_its_messages_language_not_the_sentences() {
        let moved = json!({"kind": "event", "date": "2026-02-13", "start_time": "10:00", "end_time": "11:00", "title": "周会", "status": "open"});
        // A reply's sentence is "#2": its verdict is in Chinese all the same.
        let mut reply = task("success", json!({"type": "action_completed", "message": "已改期：周会。", "items": [moved.clone()]}));
        reply["input_text"] = json!("#2");
        let shown = verdict_text(&reply);
        assert_eq!(shown, "✓ 已改期：周会。\n  [日程] 2026-02-13 10:00-11:00 周会\n");
        assert!(!shown.contains("done") && !shown.contains("[event]"), "{shown}");
        // An English answer to a Chinese sentence (a model's) is shown in English.
        let english = task("success", json!({"type": "action_completed", "message": "Rescheduled the meeting.", "items": [moved]}));
        assert_eq!(verdict_text(&english), "✓ Rescheduled the meeting.\n  [event] 2026-02-13 10:00-11:00 周会\n");
        // No message (an older server's ending): the sentence decides.
        assert!(verdict_is_chinese(&task("failed", json!({"type": "error"}))));
        // An English answer that quotes a Chinese title is English; a Chinese one that quotes
        // the sentence or names an English title is Chinese.
        let dentist = json!({"kind": "event", "date": "2026-12-04", "start_time": "10:00", "end_time": "11:00", "title": "看牙医", "status": "open"});
        let mut english = task("success", json!({"type": "action_completed", "message": "Rescheduled: \"看牙医\" Friday (Dec 4), 10:00-11:00.", "items": [dentist]}));
        english["input_text"] = json!("move my dentist appointment to Friday 10am");
        assert_eq!(verdict_text(&english), "✓ Rescheduled: \"看牙医\" Friday (Dec 4), 10:00-11:00.\n  [event] 2026-12-04 10:00-11:00 看牙医\n");
        for (message, chinese) in [
            ("已撤销“把明天的会改到下午5点”：“开会”恢复为原来的样子。", Some(true)),
            ("已创建：明天（周一，11月30日）15:00-16:00 standup meeting。", Some(true)),
            ("Created: 开会 tomorrow", Some(false)),
            ("Deleted \"周会\" on Friday", Some(false)),
            ("#2", None),
        ] {
            assert_eq!(written_in_chinese(message), chinese, "{message}");
        }
    }

    #[test]
    fn an_item_under_a_chinese_verdict_has_no_english_words() {
        let item = json!({"kind": "event", "date": "2026-02-09", "segment": "morning", "title": "带伞", "status": "completed"});
        let line = verdict_item_line(&item, true);
        assert_eq!(line, "[日程] 2026-02-09 早上 带伞（已完成）");
        assert_eq!(verdict_item_line(&item, false), "[event] 2026-02-09 (morning) 带伞 (done)");
        assert!(is_chinese("把周会改到3点") && !is_chinese("move standup to 3pm"));
    }
}
