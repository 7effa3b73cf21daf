//! The API on port 0 and workers in process, on a fresh database, talking to a fake model.

use std::{collections::HashMap, sync::Arc, time::Duration};

use quickact_shared::config::Config;
use quickact_worker::runner::Runner;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;
use tokio::{sync::oneshot, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use crate::{fake_model::FakeModel, held_reads::HeldTaskReads, held_writes::HeldWrites, postgres::create_test_database};

/// Knobs of a test deployment.
#[derive(Clone)]
pub struct TestAppOptions {
    /// Workers started with the app.
    pub workers: usize,
    /// Extra or overriding environment variables.
    pub env: HashMap<String, String>,
    /// Use this database instead of a fresh one on the shared server.
    pub database_url: Option<String>,
}

impl Default for TestAppOptions {
    fn default() -> Self {
        TestAppOptions { workers: 1, env: HashMap::new(), database_url: None }
    }
}

impl TestAppOptions {
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = n;
        self
    }

    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.insert(name.to_owned(), value.to_owned());
        self
    }

    pub fn database_url(mut self, url: String) -> Self {
        self.database_url = Some(url);
        self
    }
}

/// A running worker in this process.
pub struct TestWorker {
    pub runner: Arc<Runner>,
    shutdown: Option<oneshot::Sender<()>>,
    handle: JoinHandle<()>,
    stop: CancellationToken,
}

impl TestWorker {
    /// Graceful stop, as on SIGTERM.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.handle).await;
        self.stop.cancel();
    }

    /// Abrupt stop: the worker's tasks are dropped mid-flight, like a crashed process (its
    /// database state and leases stay as they were).
    pub fn abort(self) {
        self.handle.abort();
        self.stop.cancel();
    }
}

/// A process whose stderr is captured (see [`TestApp::spawn_logged_worker_process`]).
pub struct LoggedProcess {
    pub child: std::process::Child,
    lines: Arc<std::sync::Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl LoggedProcess {
    /// The lines it has written to stderr so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("log lines lock").clone()
    }

    /// Stops it with SIGTERM and waits for it to exit and for its last line to be read.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let _ = std::process::Command::new("kill").args(["-TERM", &pid]).status();
        let status = self.child.wait().expect("wait for the process");
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        status
    }
}

impl Drop for LoggedProcess {
    fn drop(&mut self) {
        // A test that panics must not leave the process behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A deployment for one test.
pub struct TestApp {
    pub base_url: String,
    pub database_url: String,
    pub pool: PgPool,
    pub fake: FakeModel,
    pub admin_key: String,
    pub client: reqwest::Client,
    pub workers: Vec<TestWorker>,
    /// The API's batching loop for submissions (to see how many wait for the next batch).
    pub submissions: quickact_api::submit::Submissions,
    /// The API's batching loops for task reads (to see how many wait for the next batch).
    pub reads: quickact_api::reads::Reads,
    env: HashMap<String, String>,
    api_shutdown: Option<oneshot::Sender<()>>,
    api_handle: Option<JoinHandle<()>>,
    api_stop: CancellationToken,
}

/// A response: status, headers and JSON body (`Value::Null` when the body is not JSON).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl TestApp {
    pub async fn start() -> Self {
        Self::start_with(TestAppOptions::default()).await
    }

    /// A fresh deployment with one user on it (most tests' start): the app and the user's key.
    pub async fn start_with_user(name: &str) -> (Self, String) {
        Self::start_with_options_and_user(TestAppOptions::default(), name).await
    }

    /// [`TestApp::start_with_user`] on a deployment with these options.
    pub async fn start_with_options_and_user(options: TestAppOptions, name: &str) -> (Self, String) {
        let app = Self::start_with(options).await;
        let (_, key) = app.create_user(name).await;
        (app, key)
    }

    pub async fn start_with(options: TestAppOptions) -> Self {
        init_logging();
        quickact_worker::install_crypto_provider();
        let database_url = match options.database_url {
            Some(url) => url,
            None => create_test_database().await,
        };
        let fake = FakeModel::start().await;
        let admin_key = format!("qa_test_admin_{}", uuid::Uuid::new_v4().simple());
        let mut env: HashMap<String, String> = [
            ("DATABASE_URL", database_url.as_str()),
            ("QUICKACT_ADMIN_KEY", admin_key.as_str()),
            ("OPENAI_BASE_URL", &fake.base_url()),
            ("OPENAI_API_KEY", "sk-test"),
            ("QUICKACT_MODEL", "fake-model"),
            ("QUICKACT_MODEL_PRICES", r#"{"fake-model": {"input": 2.0, "output": 8.0, "cached_input": 0.5}}"#),
            ("QUICKACT_HEARTBEAT_SECS", "1"),
            ("QUICKACT_MISSED_HEARTBEATS", "3"),
            ("QUICKACT_SHUTDOWN_GRACE_SECS", "5"),
            ("QUICKACT_WORKER_CONCURRENCY", "4"),
            ("QUICKACT_MODEL_TIMEOUT_SECS", "30"),
            ("QUICKACT_WORKER_NAME", "test"),
            // Tests script the fake model; the local fast path is tested on purpose where wanted.
            ("QUICKACT_FAST_PATH", "false"),
            // Tests write sentences at fixed moments (e.g. 2026-02-07 09:00) for deterministic dates;
            // the window itself is tested with a deployment that sets it back to its default.
            ("QUICKACT_REFERENCE_TIME_WINDOW_SECS", "3153600000"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        env.extend(options.env);

        let config = config_from(&env);
        let api_stop = CancellationToken::new();
        let state = quickact_api::prepare(config.clone(), api_stop.clone()).await.expect("prepare the API");
        let pool = state.pool.clone();
        let submissions = state.submissions.clone();
        let reads = state.reads.clone();
        assert!(state.notifications.wait_connected(Duration::from_secs(10)).await, "the API's listener connects");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let (api_shutdown, rx) = oneshot::channel::<()>();
        let api_handle = tokio::spawn(async move {
            quickact_api::run(listener, state, async {
                let _ = rx.await;
            })
            .await
            .expect("serve the API");
        });

        let mut app = TestApp {
            base_url,
            database_url,
            pool,
            fake,
            admin_key,
            client: reqwest::Client::builder().timeout(Duration::from_secs(150)).build().unwrap(),
            submissions,
            reads,
            workers: Vec::new(),
            env,
            api_shutdown: Some(api_shutdown),
            api_handle: Some(api_handle),
            api_stop,
        };
        for _ in 0..options.workers {
            app.start_worker().await;
        }
        app
    }

    /// The configuration this app's processes run with.
    pub fn config(&self) -> Config {
        config_from(&self.env)
    }

    /// Environment variables for a worker or API process of this deployment.
    pub fn env_vars(&self) -> &HashMap<String, String> {
        &self.env
    }

    /// Starts one more in-process worker.
    pub async fn start_worker(&mut self) -> &TestWorker {
        let stop = CancellationToken::new();
        let runner = quickact_worker::build_runner(&self.config(), self.pool.clone(), stop.clone()).expect("build a worker");
        self.start_worker_with(runner, stop).await
    }

    /// Starts an in-process worker around a runner the test built (e.g. with its own provider
    /// choice, to inject faults).
    pub async fn start_worker_with(&mut self, runner: Arc<Runner>, stop: CancellationToken) -> &TestWorker {
        assert!(runner.notifications.wait_connected(Duration::from_secs(10)).await, "the worker's listener connects");
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(quickact_worker::serve(runner.clone(), async {
            let _ = rx.await;
        }));
        self.workers.push(TestWorker { runner, shutdown: Some(tx), handle, stop });
        self.workers.last().unwrap()
    }

    /// Starts a `quickact-worker` process (the binary at `binary`) against this deployment.
    pub fn spawn_worker_process(&self, binary: &str) -> std::process::Child {
        std::process::Command::new(binary)
            .envs(&self.env)
            .env("RUST_LOG", std::env::var("TEST_LOG").unwrap_or_else(|_| "warn".into()))
            .env("QUICKACT_SKIP_MIGRATIONS", "1")
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawn the worker binary")
    }

    /// Starts a `quickact-worker` process with extra environment variables and its stderr (the
    /// log) captured line by line, e.g. to read its JSON logs or the address it serves metrics on.
    pub fn spawn_logged_worker_process(&self, binary: &str, env: &[(&str, &str)]) -> LoggedProcess {
        let mut child = std::process::Command::new(binary)
            .envs(&self.env)
            .env("RUST_LOG", "info")
            .env("QUICKACT_SKIP_MIGRATIONS", "1")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn the worker binary");
        let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("piped stderr");
        let sink = lines.clone();
        // A thread drains the pipe so the process never blocks on a full one.
        let reader = std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().expect("log lines lock").push(line);
            }
        });
        LoggedProcess { child, lines, reader: Some(reader) }
    }

    /// Creates a user through the admin API; returns `(user, api_key)`.
    pub async fn create_user(&self, name: &str) -> (Value, String) {
        let answer = self.call(&self.admin_key, Method::POST, "/api/admin/users", Some(json!({ "name": name }))).await;
        assert_eq!(answer.status, StatusCode::CREATED, "create user: {:?}", answer.body);
        let key = answer.body["api_key"].as_str().unwrap().to_owned();
        (answer.body["user"].clone(), key)
    }

    /// A request to the API with a bearer key, for the caller to finish (headers, a raw body) and send.
    pub fn request(&self, key: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, format!("{}{path}", self.base_url)).bearer_auth(key)
    }

    /// Calls the API with a bearer key and an optional JSON body.
    pub async fn call(&self, key: &str, method: Method, path: &str, body: Option<Value>) -> Answer {
        let mut request = self.request(key, method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        Answer::from(request.send().await.expect("the API answers")).await
    }

    /// Submits a sentence (default options); returns the answer.
    pub async fn submit(&self, key: &str, text: &str) -> Answer {
        self.call(key, Method::POST, "/api/quick-action", Some(json!({ "text": text }))).await
    }

    /// Submits a sentence (default options), checks it was accepted, and returns the task id.
    pub async fn submit_id(&self, key: &str, text: &str) -> String {
        let answer = self.submit(key, text).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        answer.body["task_id"].as_str().unwrap().to_owned()
    }

    /// Long-polls a task until it is final (or `timeout_secs` pass) and returns its JSON.
    pub async fn wait_final(&self, key: &str, task_id: &str, timeout_secs: u64) -> Value {
        let answer = self.call(key, Method::GET, &format!("/api/quick-action/{task_id}?wait=true&timeout={timeout_secs}"), None).await;
        assert_eq!(answer.status, StatusCode::OK, "long-poll: {:?}", answer.body);
        answer.body
    }

    /// The caller's items (`GET /api/items`).
    pub async fn items(&self, key: &str) -> Vec<Value> {
        let answer = self.call(key, Method::GET, "/api/items", None).await;
        assert_eq!(answer.status, StatusCode::OK, "GET /api/items: {}", answer.body);
        answer.body["items"].as_array().cloned().unwrap_or_default()
    }

    /// Starts a long-poll (`?wait=true&timeout=60`) in the background and returns once the server
    /// has read the task for it, so the waiter is surely waiting there. The handle yields its status,
    /// body and how long it waited.
    pub async fn long_poll_in_server(&self, key: &str, task_id: &str) -> JoinHandle<(StatusCode, Value, Duration)> {
        let held = self.hold_task_reads().await;
        let request = self.client.get(format!("{}/api/quick-action/{task_id}?wait=true&timeout=60", self.base_url)).bearer_auth(key);
        let waiter = tokio::spawn(async move {
            let started = std::time::Instant::now();
            let response = request.send().await.expect("the API answers");
            (response.status(), response.json::<Value>().await.expect("a JSON body"), started.elapsed())
        });
        held.release_after_a_read(Duration::from_secs(20)).await;
        waiter
    }

    /// Starts another API process of this deployment (same database, its own port and listener);
    /// it serves until `stop` is cancelled. Returns its base URL.
    pub async fn start_another_api(&self, stop: CancellationToken) -> String {
        let state = quickact_api::prepare(self.config(), stop.clone()).await.expect("prepare the API");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { quickact_api::run(listener, state, stop.cancelled_owned()).await.expect("serve the API") });
        base_url
    }

    /// Holds back reads of tasks, to catch the next request that reads one (see [`HeldTaskReads`]).
    pub async fn hold_task_reads(&self) -> HeldTaskReads {
        HeldTaskReads::hold(&self.pool).await
    }

    /// Holds back writes to `table`, to line concurrent writers up (see [`HeldWrites`]).
    pub async fn hold_writes(&self, table: &str) -> HeldWrites {
        HeldWrites::hold(&self.pool, table).await
    }

    /// Submits `text`, written at `now` in Asia/Shanghai, waits for its verdict and returns the task
    /// with its journal (`GET /api/quick-action/{id}`).
    pub async fn act(&self, key: &str, text: &str, now: &str) -> Value {
        let body = json!({ "text": text, "now": now, "tz": "Asia/Shanghai", "wait": true });
        let answer = self.call(key, Method::POST, "/api/quick-action", Some(body)).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        assert!(answer.body["status"] != "pending" && answer.body["status"] != "processing", "{:#}", answer.body);
        let id = answer.body["task_id"].as_str().unwrap();
        self.call(key, Method::GET, &format!("/api/quick-action/{id}"), None).await.body
    }

    /// Which transaction wrote task `task_id`'s row as it is now, and which wrote each step of its
    /// journal, in order (`xmin`; a call a turn's row carries was written with it): tells what one
    /// commit wrote together.
    pub async fn writers(&self, task_id: &str) -> (String, Vec<String>) {
        let task = sqlx::query_scalar("SELECT xmin::text FROM quick_action_tasks WHERE id = $1::uuid")
            .bind(task_id)
            .fetch_one(&self.pool)
            .await
            .expect("the task's writer");
        let steps = sqlx::query_scalar(
            "SELECT s.xmin::text FROM quick_action_steps s, generate_series(0, coalesce(jsonb_array_length(s.calls), 0)) AS n
             WHERE s.task_id = $1::uuid ORDER BY s.seq, n",
        )
            .bind(task_id)
            .fetch_all(&self.pool)
            .await
            .expect("the steps' writers");
        (task, steps)
    }

    /// An item as it is now (`GET /api/items/{id}` of an item as an earlier answer showed it).
    pub async fn item_now(&self, key: &str, item: &Value) -> Value {
        let id = item["id"].as_str().expect("an item with an id");
        self.call(key, Method::GET, &format!("/api/items/{id}"), None).await.body
    }

    /// Creates an item through `POST /api/items`; returns it.
    pub async fn create_item(&self, key: &str, item: Value) -> Value {
        let answer = self.call(key, Method::POST, "/api/items", Some(item)).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        answer.body
    }

    /// Opens the live step stream of a task (`GET /api/quick-action/{id}/events`), resuming after
    /// `last_event_id` when given. The response is returned as it is, for its status and headers;
    /// [`sse_events`] reads its events.
    pub async fn open_events(&self, key: &str, task_id: &str, last_event_id: Option<&str>) -> reqwest::Response {
        let mut request = self.client.get(format!("{}/api/quick-action/{task_id}/events", self.base_url)).bearer_auth(key);
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        request.send().await.expect("the API answers")
    }

    /// Stops the API and every worker gracefully.
    pub async fn shutdown(mut self) {
        for worker in std::mem::take(&mut self.workers) {
            worker.stop().await;
        }
        if let Some(tx) = self.api_shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(handle) = self.api_handle.take() {
            let _ = handle.await;
        }
        self.api_stop.cancel();
    }
}

impl Answer {
    async fn from(response: reqwest::Response) -> Self {
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.unwrap_or_default();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Answer { status, headers, body }
    }
}

fn config_from(env: &HashMap<String, String>) -> Config {
    Config::from_lookup(|name| env.get(name).cloned()).expect("a valid test configuration")
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("TEST_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
}

/// The Server-Sent Events of a response, parsed; the stream ends when the response does.
pub fn sse_events(response: reqwest::Response) -> futures::stream::BoxStream<'static, eventsource_stream::Event> {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    response.bytes_stream().eventsource().map(|event| event.expect("a well-formed event stream")).boxed()
}

/// The journal's calls of tool `name` in a task's JSON, in order.
pub fn tool_steps<'a>(task: &'a Value, name: &str) -> Vec<&'a Value> {
    task["steps"].as_array().expect("a task with its steps").iter().filter(|s| s["kind"] == "tool_call" && s["name"] == name).collect()
}

/// The first call of tool `name` in a task's journal.
pub fn tool_step<'a>(task: &'a Value, name: &str) -> &'a Value {
    tool_steps(task, name).into_iter().next().unwrap_or_else(|| panic!("no {name} call in {task:#}"))
}

/// Checks that a journal step failed, with an error that says `words`.
pub fn assert_step_refused(step: &Value, words: &str) {
    assert_eq!(step["ok"], false, "{step:#}");
    assert!(step["error"].as_str().unwrap().contains(words), "{step:#}");
}
