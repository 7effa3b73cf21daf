//! `quickact`: the HTTP API on the command line.
//!
//! `quickact "明天下午3点开会"` submits the sentence, shows each step live as the worker commits it
//! (from the task's Server-Sent Events stream, resumed with `Last-Event-ID` if the connection
//! drops) and then the verdict; its exit code is the verdict's. `history`, `show`, `items`,
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

/// Exit codes: what a script needs to tell apart.
mod exit {
    /// The action was done (or the command did what it was asked).
    pub const DONE: u8 = 0;
    /// The request failed: the server or network, a bad key, an unknown id.
    pub const REQUEST_FAILED: u8 = 1;
    // 2 is clap's, for a usage error.
    /// The verdict asks for clarification.
    pub const CLARIFICATION: u8 = 3;
    /// The verdict is an error (for `preview`: the reading is not certain).
    pub const ERROR: u8 = 4;
    /// The task ran out of time.
    pub const TIMEOUT: u8 = 5;
    /// The task was cancelled.
    pub const CANCELLED: u8 = 6;
}

#[derive(Parser)]
#[command(
    name = "quickact",
    version,
    about = "Tell quickact what to do with your schedule, in one sentence",
    subcommand_precedence_over_arg = true,
    after_help = "Exit codes: 0 done, 1 request failed, 2 usage, 3 needs clarification, 4 error verdict (preview: not certain), 5 timeout, 6 cancelled."
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
    /// One task, with its steps.
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
            return ExitCode::from(2);
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
        Some(Command::Cancel { id }) => client.act_on(&id, "cancel", StatusCode::OK).await,
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
            print_verdict(&task);
        }
        Ok(verdict_code(&task))
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
            let verdict = task["result"]["type"].as_str().unwrap_or("");
            println!(
                "{}  {:<10} {:<18} {}  {}",
                text(&task["task_id"]),
                text(&task["status"]),
                verdict,
                local_time(text(&task["created_at"]), zone),
                text(&task["input_text"])
            );
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

    async fn show(&self, id: &str) -> Result<u8, String> {
        let task = self.call(self.request(Method::GET, &format!("/api/quick-action/{id}")), StatusCode::OK).await?;
        if self.json {
            print_json(&task);
            return Ok(exit::DONE);
        }
        println!("task {}  {}", text(&task["task_id"]), text(&task["status"]));
        println!("  \"{}\"", text(&task["input_text"]));
        for step in task["steps"].as_array().into_iter().flatten() {
            println!("  {}", step_line(step));
        }
        if task["result"].is_object() {
            print_verdict(&task);
        }
        Ok(exit::DONE)
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

    /// `cancel` and `undo`: a POST on the task; the answer is a task.
    async fn act_on(&self, id: &str, action: &str, expected: StatusCode) -> Result<u8, String> {
        let task = self.call(self.request(Method::POST, &format!("/api/quick-action/{id}/{action}")), expected).await?;
        if self.json {
            print_json(&task);
        } else {
            println!("task {}  {}", text(&task["task_id"]), text(&task["status"]));
            print_verdict(&task);
        }
        Ok(exit::DONE)
    }
}

fn verdict_code(task: &Value) -> u8 {
    match (task["status"].as_str(), task["result"]["type"].as_str()) {
        (Some("timeout"), _) => exit::TIMEOUT,
        (Some("cancelled"), _) => exit::CANCELLED,
        (_, Some("action_completed")) => exit::DONE,
        (_, Some("need_clarification")) => exit::CLARIFICATION,
        _ => exit::ERROR,
    }
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

/// Whether `text` is Chinese (it has a CJK ideograph): the verdict is then headed in Chinese, as
/// the server writes its answer in the sentence's language.
fn is_chinese(text: &str) -> bool {
    text.chars().any(|c| matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{20000}'..='\u{2FA1F}'))
}

/// The heading of a verdict: what happened or, for a question, what kind of question it is
/// (`result.question`), in the sentence's language.
fn verdict_heading(result: &Value, chinese: bool) -> &'static str {
    let pick = |zh: &'static str, en: &'static str| if chinese { zh } else { en };
    match result["type"].as_str() {
        Some("action_completed") => pick("完成：", "done:"),
        Some("need_clarification") => match result["question"].as_str() {
            Some("conflict") => pick("时间冲突：", "time conflict:"),
            Some("time_passed") => pick("时间已过：", "time has passed:"),
            Some("details") => pick("需要更多信息：", "need more detail:"),
            Some("which_item") => pick("请问是哪一个？", "which one?"),
            // A server that does not name the kind: options mean a choice among them.
            _ if result["options"].as_array().is_some_and(|o| !o.is_empty()) => pick("请问是哪一个？", "which one?"),
            _ => pick("需要更多信息：", "need more detail:"),
        },
        _ => pick("出错：", "error:"),
    }
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

fn print_verdict(task: &Value) {
    let result = &task["result"];
    let chinese = is_chinese(text(&task["input_text"]));
    // A Chinese heading ends in full-width punctuation, which needs no space after it.
    let space = if chinese { "" } else { " " };
    println!("{}{space}{}", verdict_heading(result, chinese), text(&result["message"]));
    for item in result["items"].as_array().into_iter().flatten() {
        println!("  {}", verdict_item_line(item, chinese));
    }
    for (n, option) in result["options"].as_array().into_iter().flatten().enumerate() {
        println!("  {}. {}", n + 1, verdict_item_line(option, chinese));
    }
    if let Some(suggestion) = result["suggestion"].as_str() {
        println!("  {}{space}{suggestion}", if chinese { "建议：" } else { "suggestion:" });
    }
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

    #[test]
    fn a_question_is_headed_by_its_kind_in_the_sentences_language() {
        let question = |kind: &str| json!({"type": "need_clarification", "question": kind, "message": "m"});
        for (kind, en, zh) in [
            ("which_item", "which one?", "请问是哪一个？"),
            ("conflict", "time conflict:", "时间冲突："),
            ("time_passed", "time has passed:", "时间已过："),
            ("details", "need more detail:", "需要更多信息："),
        ] {
            assert_eq!(verdict_heading(&question(kind), false), en);
            assert_eq!(verdict_heading(&question(kind), true), zh);
        }
        // A server that does not name the kind.
        let older = json!({"type": "need_clarification", "message": "m", "options": [{"id": "a"}, {"id": "b"}]});
        assert_eq!(verdict_heading(&older, false), "which one?");
        assert_eq!(verdict_heading(&json!({"type": "error"}), true), "出错：");
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
