//! The admin page in a real browser: headless Chromium driven through chromedriver (fantoccini),
//! against the API on port 0 with a worker and the fake model. It logs in, filters the history,
//! opens traces, watches running tasks finish without a reload, cancels and undoes from a trace,
//! reads the stats, creates a user and revokes a key, shows users' spend against their budgets and
//! raises one.
//!
//! `scripts/test.sh` installs Debian's `chromium` and `chromium-driver` when missing, starts
//! chromedriver on a free port and passes it in `QUICKACT_WEBDRIVER_URL` (the browser binary in
//! `QUICKACT_CHROMIUM`). Screenshots for a person to look at are written to `target/screenshots/`
//! of the workspace (names below). Run only these with `scripts/test.sh -p quickact-api --test browser`.

use std::{path::PathBuf, sync::Arc, time::Duration};

use fantoccini::{Client, ClientBuilder, Locator, elements::Element};
use quickact_testkit::{Reply, TestApp, TestAppOptions, wait_for, wait_until};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::{Mutex, MutexGuard, Notify};

/// The moment the seeded sentences were written (Asia/Shanghai), for stable dates.
const NOW: &str = "2026-02-07T09:00:00+08:00";
/// Longest a page may take to show what a step waits for.
const PATIENCE: Duration = Duration::from_secs(20);

/// One browser at a time: the machine has two cores, and each test drives a full Chromium.
static ONE_BROWSER: Mutex<()> = Mutex::const_new(());

struct Browser {
    client: Client,
    base: String,
    profile: PathBuf,
}

impl Browser {
    /// A new headless Chromium with an empty profile, through the chromedriver of this test run.
    async fn open(app: &TestApp) -> Self {
        let webdriver = std::env::var("QUICKACT_WEBDRIVER_URL").expect(
            "QUICKACT_WEBDRIVER_URL is not set: run the browser tests through scripts/test.sh, which installs chromium and \
             chromium-driver and starts chromedriver (or start chromedriver yourself and set it)",
        );
        let binary = std::env::var("QUICKACT_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let profile = std::env::temp_dir().join(format!("quickact-chromium-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&profile).unwrap();
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": binary,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    // This machine's network is closed: background connections would be refused.
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1400,1200", "--lang=en-US",
                    format!("--user-data-dir={}", profile.display()),
                ],
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector).capabilities(capabilities).connect(&webdriver).await.expect("chromedriver opens a session");
        client.set_window_size(1400, 1200).await.unwrap();
        Browser { client, base: app.base_url.clone(), profile }
    }

    async fn goto(&self, path: &str) {
        self.client.goto(&format!("{}{path}", self.base)).await.unwrap();
    }

    /// The element `css` names, once it exists (the page may still be loading or refreshing).
    async fn find(&self, css: &str) -> Element {
        self.client.wait().at_most(PATIENCE).for_element(Locator::Css(css)).await.unwrap_or_else(|e| panic!("no {css} on the page: {e}"))
    }

    /// The text of the element `css` names. The live parts of the page replace their elements as
    /// they refresh, so an element found a moment ago may be gone: find it again until its text
    /// is read.
    async fn text(&self, css: &str) -> String {
        wait_for(&format!("the text of {css}"), PATIENCE, || async { self.find(css).await.text().await.map_err(|err| err.to_string()) }).await
    }

    async fn count(&self, css: &str) -> usize {
        self.client.find_all(Locator::Css(css)).await.unwrap().len()
    }

    async fn path(&self) -> String {
        self.client.current_url().await.unwrap().path().to_owned()
    }

    /// Waits until the browser is on another page than `path` (a form's answer has loaded).
    async fn wait_to_leave(&self, path: &str) {
        wait_until(&format!("the browser to leave {path}"), PATIENCE, || async { self.path().await != path }).await
    }

    /// Waits until the browser's address has `part` in its query (a GET form's answer has loaded).
    async fn wait_for_query(&self, part: &str) {
        wait_for(&format!("{part} in the address"), PATIENCE, || async {
            let url = self.client.current_url().await.unwrap();
            if url.query().is_some_and(|query| query.contains(part)) { Ok(()) } else { Err(url.to_string()) }
        })
        .await
    }

    /// Waits until `css` matches exactly `n` elements (the live table, a filter's answer).
    async fn wait_for_count(&self, css: &str, n: usize) {
        wait_for(&format!("{n} × {css}"), PATIENCE, || async {
            let seen = self.count(css).await;
            if seen == n { Ok(()) } else { Err(seen) }
        })
        .await
    }

    async fn log_in(&self, key: &str) {
        self.goto("/admin/login").await;
        self.find("#key").await.send_keys(key).await.unwrap();
        self.find("#login").await.click().await.unwrap();
        self.find("#tasks").await;
        assert_eq!(self.path().await, "/admin/tasks");
    }

    /// Saves a screenshot of the window as `target/screenshots/<name>.png`; returns its path.
    async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.unwrap();
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, &png).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "a real picture: {} bytes", png.len());
        path
    }

    async fn close(self) {
        let _ = self.client.close().await;
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// What every browser test starts with: its turn at the one browser (held until the guard drops),
/// and the deployment it drives with alice on it (the app and her key).
async fn start_browser_test() -> (MutexGuard<'static, ()>, TestApp, String) {
    // The fast path on: a sentence the local reader understands runs locally, at zero tokens.
    start_browser_test_with(TestAppOptions::default().env("QUICKACT_FAST_PATH", "true")).await
}

async fn start_browser_test_with(options: TestAppOptions) -> (MutexGuard<'static, ()>, TestApp, String) {
    let turn = ONE_BROWSER.lock().await;
    let (app, alice) = TestApp::start_with_options_and_user(options, "alice").await;
    (turn, app, alice)
}

/// A sentence the local reader does not take (no action it knows), so the fake model serves it.
const DENTIST: &str = "hey, could you deal with that dentist thing for me?";

/// A run with a failed model request that was retried, a created item and a verdict naming it.
fn script_dentist(app: &TestApp) {
    app.fake.script(
        "dentist",
        vec![
            Reply::Status(503, "the upstream is busy".into()),
            Reply::tool("create_item", json!({"kind": "event", "title": "Dentist", "when": "next friday 10am"})).with_usage(1800, 60, 1024),
            Reply::finish("action_completed", "Booked the dentist for Friday 10:00.").with_usage(1950, 40, 1536),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_admin_logs_in_filters_the_history_and_opens_a_trace_and_its_item() {
    let (_one, app, alice) = start_browser_test().await;
    let (_, bob) = app.create_user("bob").await;
    script_dentist(&app);
    app.fake.script("weather", vec![Reply::finish("error", "I can only manage your schedule and to-dos.")]);
    let dentist = app.act(&alice, DENTIST, NOW).await;
    assert_eq!((dentist["status"].as_str(), dentist["model_used"].as_str()), (Some("success"), Some("fake-model")), "{dentist:#}");
    app.act(&alice, "what's the weather like", NOW).await;
    let local = app.act(&bob, "明天下午3点到4点开会", NOW).await;
    assert_eq!(local["model_used"], "local");

    let browser = Browser::open(&app).await;
    // Not logged in: the page sends the browser to the login form.
    browser.goto("/admin/tasks").await;
    browser.find("#key").await;
    assert_eq!(browser.path().await, "/admin/login");
    // A user's key is refused.
    browser.find("#key").await.send_keys(&alice).await.unwrap();
    browser.find("#login").await.click().await.unwrap();
    assert!(browser.text("#login-error").await.contains("not an admin"));
    browser.screenshot("01-login-refused").await;

    browser.log_in(&app.admin_key).await;
    browser.wait_for_count("tr.task-row", 3).await;
    assert_eq!(browser.text("#total").await, "3 tasks");
    let first = browser.text("#task-rows tr:first-child").await;
    assert!(first.contains("bob") && first.contains("明天下午3点到4点开会") && first.contains("local"), "newest first: {first}");
    browser.screenshot("02-history").await;

    // Filter: alice's failed tasks.
    browser.find("#f-user").await.select_by_label("alice").await.unwrap();
    browser.find("#f-status").await.select_by_value("failed").await.unwrap();
    browser.find("#apply").await.click().await.unwrap();
    browser.wait_for_count("tr.task-row", 1).await;
    let row = browser.text("tr.task-row").await;
    assert!(row.contains("what's the weather like") && row.contains("error"), "{row}");
    browser.screenshot("03-history-filtered").await;

    // Text search, then the trace.
    browser.goto("/admin/tasks?q=DENTIST").await;
    browser.wait_for_count("tr.task-row", 1).await;
    browser.find("a.task-link").await.click().await.unwrap();
    assert_eq!(browser.text("#sentence").await, format!("“{DENTIST}”"));
    assert_eq!(browser.text("#trace-status").await, "success");
    assert_eq!(browser.text("#trace-tokens").await, "3750 / 2560 / 100");
    // The failed request (attempt shown), the turn that created the item, its call, the last turn, finish.
    assert_eq!(browser.count("#timeline li.step").await, 5);
    assert!(browser.text("#step-0").await.contains("failed request"));
    assert!(browser.text("#step-1").await.contains("request 2"), "the retry answered");
    assert!(browser.text("#step-0").await.contains("the upstream is busy") || browser.text("#step-0").await.contains("503"));
    let create = browser.text("#step-2").await;
    assert!(create.contains("create_item") && create.contains("next friday 10am"), "{create}");
    assert!(browser.text("#step-1").await.contains("tokens 1800 in / 1024 cached / 60 out"));
    assert_eq!(browser.text("#verdict-message").await, "Booked the dentist for Friday 10:00.");
    browser.screenshot("04-trace").await;

    // The verdict's item links to the item as it is now, and to the task that created it.
    browser.find("#verdict-items a").await.click().await.unwrap();
    assert_eq!(browser.text("#item-title").await, "Dentist");
    let changes = browser.text("#item-changes tbody").await;
    assert!(changes.contains("created") && changes.contains(DENTIST), "{changes}");
    browser.screenshot("05-item").await;

    // A task that changed nothing offers no undo.
    let weather = app.call(&alice, Method::GET, "/api/quick-action", None).await.body["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["input_text"] == "what's the weather like")
        .map(|t| t["task_id"].as_str().unwrap().to_owned())
        .unwrap();
    browser.goto(&format!("/admin/tasks/{weather}")).await;
    browser.find("#verdict").await;
    assert_eq!(browser.count("#undo").await, 0, "nothing to undo, no button");

    // The dentist booking changed since (alice moved it by hand): the undo is refused, inside the
    // page, with the way back to the task.
    let id = dentist["task_id"].as_str().unwrap();
    let item_id = dentist["result"]["items"][0]["id"].as_str().unwrap();
    let moved = app.call(&alice, Method::PATCH, &format!("/api/items/{item_id}"), Some(json!({"start_time": "11:00"}))).await;
    assert_eq!(moved.status, StatusCode::OK, "{:#}", moved.body);
    browser.goto(&format!("/admin/tasks/{id}")).await;
    assert!(browser.text("#undo").await.contains("1 item"));
    browser.find("#undo").await.click().await.unwrap();
    assert_eq!(browser.text("#error-status").await, "409 Conflict");
    assert!(browser.text("#error-message").await.contains("\"Dentist\" changed again after this task"));
    assert_eq!(browser.text("#who").await, "admin", "the page's own header, with the admin");
    browser.screenshot("15-undo-refused").await;
    browser.find("#back").await.click().await.unwrap();
    browser.find("#trace").await;
    assert_eq!(browser.path().await, format!("/admin/tasks/{id}"));
    assert!(app.items(&alice).await.iter().any(|item| item["title"] == "Dentist"), "nothing was undone");

    // An unknown task: 404, in the layout too.
    browser.goto("/admin/tasks/0199aaaa-0000-7000-8000-000000000000").await;
    assert_eq!(browser.text("#error-status").await, "404 Not Found");
    assert_eq!(browser.count("header.top nav a").await, 5);
    browser.screenshot("16-task-not-found").await;
    browser.close().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn running_tasks_finish_live_in_the_history_and_the_trace_and_can_be_cancelled() {
    let (_one, app, alice) = start_browser_test().await;
    let first_gate = Arc::new(Notify::new());
    let second_gate = Arc::new(Notify::new());
    let never = Arc::new(Notify::new());
    app.fake.script("first slow", vec![Reply::Gated(first_gate.clone(), Box::new(Reply::look_up_and_finish("First one done.")))]);
    app.fake.script("second slow", vec![Reply::Gated(second_gate.clone(), Box::new(Reply::look_up_and_finish("Second one done.")))]);
    app.fake.script("never answered", vec![Reply::Gated(never, Box::new(Reply::finish("error", "unreachable")))]);

    let browser = Browser::open(&app).await;
    browser.log_in(&app.admin_key).await;
    // The first page is live: a task submitted now appears without a reload, running...
    let first = app.submit_id(&alice, "first slow sentence").await;
    app.fake.wait_for_requests("first slow", 1, PATIENCE).await;
    let row = format!("#task-{first}");
    browser.find(&format!("{row}[data-status=processing]")).await;
    assert_eq!(browser.text("#total").await, "1 tasks", "the count refreshes with the rows");
    browser.screenshot("06-history-running").await;
    // ...and finishes there.
    first_gate.notify_one();
    browser.find(&format!("{row}[data-status=success]")).await;
    assert!(browser.text(&row).await.contains("success"));

    // A trace opened while the task runs shows its verdict when it comes, without a reload.
    let second = app.submit_id(&alice, "second slow sentence").await;
    app.fake.wait_for_requests("second slow", 1, PATIENCE).await;
    browser.goto(&format!("/admin/tasks/{second}")).await;
    browser.find("#trace[data-status=processing]").await;
    assert!(browser.count("#verdict").await == 0);
    browser.screenshot("07-trace-running").await;
    second_gate.notify_one();
    browser.find("#trace[data-status=success]").await;
    assert_eq!(browser.text("#verdict-message").await, "Second one done.");
    assert_eq!(browser.path().await, format!("/admin/tasks/{second}"), "no navigation happened");
    browser.screenshot("08-trace-finished").await;

    // Cancel from the trace.
    let stuck = app.submit_id(&alice, "never answered").await;
    app.fake.wait_for_requests("never answered", 1, PATIENCE).await;
    browser.goto(&format!("/admin/tasks/{stuck}")).await;
    browser.find("#cancel").await.click().await.unwrap();
    browser.find("#trace[data-status=cancelled]").await;
    let task = app.wait_final(&alice, &stuck, 10).await;
    assert_eq!(task["status"], "cancelled");
    assert_eq!(browser.count("#cancel").await, 0, "a finished task has no cancel button");
    browser.close().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stats_users_keys_undo_and_logout_work_from_the_page() {
    let (_one, app, alice) = start_browser_test().await;
    script_dentist(&app);
    app.fake.script("weather", vec![Reply::finish("error", "I can only manage your schedule and to-dos.")]);
    let dentist = app.act(&alice, DENTIST, NOW).await;
    assert_eq!(dentist["model_used"], "fake-model", "{dentist:#}");
    app.act(&alice, "what's the weather like", NOW).await;
    app.act(&alice, "明天下午3点到4点开会", NOW).await;

    let browser = Browser::open(&app).await;
    browser.log_in(&app.admin_key).await;

    browser.goto("/admin/stats").await;
    assert_eq!(browser.text("#tile-tasks .value").await, "3");
    assert_eq!(browser.text("#tile-success .value").await, "66.7%");
    assert_eq!(browser.text("#tile-error .value").await, "33.3%");
    assert_eq!(browser.text("#tile-fast-path .value").await, "33.3%");
    // 1800 + 60 and 1950 + 40 for the dentist, 100 + 20 for the weather.
    assert_eq!(browser.text("#tile-tokens .value").await, "3970");
    assert!(browser.text("#tile-workers .value").await == "1");
    assert!(browser.count(".chart svg rect").await >= 2, "the charts have bars");
    // Only today had tasks: the latency line has today's three dots (p50, p95, p99) and nothing
    // at 0 ms on the other days of the window.
    assert_eq!(browser.count("svg[aria-label='latency per day'] circle").await, 3);
    assert!(browser.text("#usage").await.contains("fake-model"));
    browser.screenshot("09-stats").await;
    browser.find("#group-by").await.select_by_value("model").await.unwrap();
    browser.find("#stats-filters button").await.click().await.unwrap();
    browser.wait_for_query("group_by=model").await;
    let groups = browser.text("#groups").await;
    assert!(groups.contains("fake-model") && groups.contains("local"), "{groups}");

    // Undo the dentist booking from its trace: the undo is a task of its own.
    let id = dentist["task_id"].as_str().unwrap();
    browser.goto(&format!("/admin/tasks/{id}")).await;
    browser.find("#undo").await.click().await.unwrap();
    // The page being left is a finished trace too: wait for the undo task's page first.
    browser.wait_to_leave(&format!("/admin/tasks/{id}")).await;
    browser.find("#trace[data-status=success]").await;
    assert!(app.items(&alice).await.iter().all(|item| item["title"] != "Dentist"), "the item is gone");
    assert_eq!(browser.text("#undoes").await, id);
    assert!(browser.text("#verdict-items").await.contains("deleted"), "the item it removed shows as deleted");
    browser.screenshot("10-undo").await;

    // The booking is undone: its trace says by which task and offers no second undo.
    browser.find("#undoes").await.click().await.unwrap();
    browser.find("#undone-by").await;
    assert_eq!(browser.count("#undo").await, 0);
    // Its item, deleted by the undo, is shown as it was, with both tasks.
    browser.find("#verdict-items a").await.click().await.unwrap();
    assert!(browser.text("#item-deleted").await.starts_with("Deleted at"));
    assert_eq!(browser.count("h1#item-title.deleted").await, 1);
    let changes = browser.text("#item-changes tbody").await;
    assert!(changes.contains("created") && changes.contains("deleted") && changes.contains("(an undo)"), "{changes}");
    browser.screenshot("17-item-deleted-by-undo").await;

    // The undo ran no model, so the fast path is still one of the three tasks that could have
    // gone to one.
    browser.goto("/admin/stats").await;
    assert_eq!(browser.text("#tile-tasks .value").await, "4");
    assert_eq!(browser.text("#tile-fast-path .value").await, "33.3%");
    assert_eq!(browser.text("#tile-fast-path .sub").await, "1 of 3 served locally");

    // Create a user; the key is shown once and works.
    browser.goto("/admin/users").await;
    browser.find("#new-name").await.send_keys("dana").await.unwrap();
    browser.find("#create").await.click().await.unwrap();
    let key = browser.text("#new-key").await;
    assert!(key.starts_with("qa_"), "{key}");
    assert_eq!(app.call(&key, Method::GET, "/api/quick-action", None).await.status, StatusCode::OK);
    browser.screenshot("11-user-created").await;

    // Revoke it from the user's page.
    browser.find("#users a[href^='/admin/users/']:not([href$='keys'])").await;
    let dana_link = browser
        .client
        .find_all(Locator::Css("#users td:first-child a"))
        .await
        .unwrap();
    let mut opened = false;
    for link in dana_link {
        if link.text().await.unwrap() == "dana" {
            link.click().await.unwrap();
            opened = true;
            break;
        }
    }
    assert!(opened, "dana is listed");
    assert!(browser.text("#user-name").await.starts_with("dana"));
    browser.find("button.revoke").await.click().await.unwrap();
    browser.find("#keys .badge.err").await;
    assert_eq!(app.call(&key, Method::GET, "/api/quick-action", None).await.status, StatusCode::UNAUTHORIZED);
    browser.screenshot("12-key-revoked").await;

    // Log out: the page asks for a key again.
    browser.find("#logout").await.click().await.unwrap();
    browser.find("#key").await;
    browser.goto("/admin/stats").await;
    browser.find("#key").await;
    assert_eq!(browser.path().await, "/admin/login");
    let cookies: Value = json!(browser.client.get_all_cookies().await.unwrap().iter().map(|c| c.name().to_owned()).collect::<Vec<_>>());
    assert!(!cookies.as_array().unwrap().iter().any(|c| c == "quickact_admin"), "{cookies}");
    browser.close().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_api_reference_lists_every_operation_from_files_the_binary_serves() {
    let (_one, app, _alice) = start_browser_test().await;
    let described: Value = app.client.get(format!("{}/api/openapi.json", app.base_url)).send().await.unwrap().json().await.unwrap();
    let operations: Vec<String> = described["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |method| format!("{} {path}", method.to_uppercase())))
        .collect();

    let browser = Browser::open(&app).await;
    // No key and no login: the reference is as public as the description it reads.
    browser.goto("/api/docs").await;
    browser.wait_for_count(".opblock", operations.len()).await;
    let mut shown = Vec::new();
    for block in browser.client.find_all(Locator::Css(".opblock")).await.unwrap() {
        let method = block.find(Locator::Css(".opblock-summary-method")).await.unwrap().text().await.unwrap();
        let path = block.find(Locator::Css(".opblock-summary-path")).await.unwrap().attr("data-path").await.unwrap().unwrap_or_default();
        shown.push(format!("{method} {path}"));
    }
    for operation in &operations {
        assert!(shown.contains(operation), "{operation} is not on the page: {shown:?}");
    }
    assert!(browser.text("#swagger-ui").await.contains("quickact"), "the description's title");
    // Everything the page loaded came from the API itself: no CDN, no validator badge.
    let loaded = browser.client.execute("return performance.getEntriesByType('resource').map(e => e.name)", vec![]).await.unwrap();
    let loaded: Vec<String> = serde_json::from_value(loaded).unwrap();
    assert!(loaded.iter().any(|url| url.ends_with("/api/docs/swagger-ui-bundle.js")), "{loaded:?}");
    assert!(loaded.iter().all(|url| url.starts_with(&app.base_url)), "{loaded:?}");
    browser.screenshot("13-api-docs").await;

    // An operation opens with its parameters and answers.
    let submit = ".opblock-post:has(.opblock-summary-path[data-path='/api/quick-action'])";
    browser.find(&format!("{submit} .opblock-summary-control")).await.click().await.unwrap();
    browser.find(&format!("{submit} .responses-table")).await;
    browser.screenshot("14-api-docs-operation").await;
    browser.close().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_trace_shows_each_action_of_a_sentence_and_items_show_the_tasks_that_changed_them() {
    // No model configured: the local provider serves every sentence, clause by clause.
    let (_one, app, alice) = start_browser_test_with(TestAppOptions::default().env("OPENAI_API_KEY", "")).await;
    let gym = app.create_item(&alice, json!({"kind": "event", "title": "健身", "date": "2026-02-08", "start_time": "19:00"})).await;
    app.create_item(&alice, json!({"kind": "event", "title": "周会", "date": "2026-02-09", "start_time": "10:00", "end_time": "11:00"})).await;
    // The local reader does both clauses: one deletes, one moves.
    let sentence = "删除明天的健身，然后把周会推迟半小时";
    let task = app.act(&alice, sentence, NOW).await;
    assert_eq!(task["result"]["actions"].as_array().map(Vec::len), Some(2), "{task:#}");
    let id = task["task_id"].as_str().unwrap();

    let browser = Browser::open(&app).await;
    browser.log_in(&app.admin_key).await;
    browser.goto(&format!("/admin/tasks/{id}")).await;
    assert_eq!(browser.count("#actions li.action").await, 2);
    let first = browser.text("#action-1").await;
    assert!(first.contains("删除明天的健身") && first.contains("action_completed") && first.contains("健身"), "{first}");
    assert_eq!(browser.count("#action-1 li.item-link.deleted .deleted-badge").await, 1, "the gym is shown as deleted");
    let second = browser.text("#action-2").await;
    assert!(second.contains("周会") && second.contains("10:30-11:30") && !second.contains("deleted"), "{second}");
    browser.screenshot("18-trace-actions").await;

    // The deleted gym: as it was, when it was deleted and by which task; it was made by hand.
    browser.find("#action-1 li.item-link a").await.click().await.unwrap();
    assert!(browser.path().await.ends_with(&format!("/items/{}", gym["id"].as_str().unwrap())));
    assert!(browser.text("#item-deleted").await.starts_with("Deleted at"));
    assert_eq!(browser.text("#item-title").await, "健身");
    assert_eq!(browser.count("#item-changes tr.change").await, 1);
    assert!(browser.text("#item-changes").await.contains("deleted"));
    assert!(browser.text("main").await.contains("created through the item routes"));
    browser.screenshot("19-item-deleted").await;
    browser.find("#item-changes a").await.click().await.unwrap();
    browser.find("#actions").await;
    assert_eq!(browser.path().await, format!("/admin/tasks/{id}"));
    browser.close().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn times_show_in_the_zone_picked_with_utc_on_hover_and_costs_fit_on_one_line() {
    let (_one, app, alice) = start_browser_test().await;
    script_dentist(&app);
    app.act(&alice, DENTIST, NOW).await;
    app.act(&alice, "明天下午3点到4点开会", NOW).await;

    let browser = Browser::open(&app).await;
    // Narrow, as on a laptop beside an editor: nothing numeric may wrap.
    browser.client.set_window_size(1000, 1000).await.unwrap();
    browser.log_in(&app.admin_key).await;
    browser.wait_for_count("tr.task-row", 2).await;
    let newest = "#task-rows tr:first-child";
    let stamp = browser.find(&format!("{newest} time")).await;
    let utc: chrono::DateTime<chrono::Utc> = stamp.attr("datetime").await.unwrap().unwrap().parse().unwrap();
    let title = stamp.attr("title").await.unwrap().unwrap();
    assert_eq!(title, format!("{} UTC", utc.format("%Y-%m-%d %H:%M:%S")), "UTC on hover");

    // Pick Shanghai: every time moves to UTC+8, at once and after a reload.
    browser.find("#tz-picker").await.select_by_value("Asia/Shanghai").await.unwrap();
    let shanghai = (utc + chrono::Duration::hours(8)).format("%Y-%m-%d %H:%M:%S").to_string();
    wait_until("the time in Shanghai", PATIENCE, || async { browser.text(&format!("{newest} time")).await == shanghai }).await;
    browser.goto("/admin/tasks").await;
    browser.wait_for_count("tr.task-row", 2).await;
    wait_until("the time in Shanghai after a reload", PATIENCE, || async { browser.text(&format!("{newest} time")).await == shanghai }).await;
    // The live table refreshes every 2 s: the new rows keep the zone.
    browser.goto("/admin/tasks").await;
    let third = app.act(&alice, "明天下午5点到6点开会", NOW).await;
    let row = format!("#task-{} time", third["task_id"].as_str().unwrap());
    let third_utc: chrono::DateTime<chrono::Utc> = third["created_at"].as_str().unwrap().parse().unwrap();
    let third_shanghai = (third_utc + chrono::Duration::hours(8)).format("%Y-%m-%d %H:%M:%S").to_string();
    wait_until("the new row in Shanghai", PATIENCE, || async { browser.count(&row).await == 1 && browser.text(&row).await == third_shanghai }).await;

    // Costs: as many digits as they need, each on one line.
    let costs: Vec<String> = {
        let mut texts = Vec::new();
        for cell in browser.client.find_all(Locator::Css("#task-rows td.cost")).await.unwrap() {
            texts.push(cell.text().await.unwrap());
        }
        texts
    };
    assert!(costs.iter().any(|c| c == "0 CNY"), "the local tasks cost nothing: {costs:?}");
    let model_cost = costs.iter().find(|c| *c != "0 CNY").expect("the dentist's cost");
    let digits = model_cost.trim_end_matches(" CNY").trim_start_matches(['0', '.']);
    assert!(!digits.is_empty() && digits.len() <= 3, "three significant digits at most: {model_cost}");
    let lines: Vec<i64> = serde_json::from_value(
        browser
            .client
            .execute(
                "return [...document.querySelectorAll('#task-rows td.cost, #task-rows time')].map(cell => { const r = document.createRange(); r.selectNodeContents(cell); return new Set([...r.getClientRects()].map(rect => Math.round(rect.top))).size; })",
                vec![],
            )
            .await
            .unwrap(),
    )
    .unwrap();
    assert!(!lines.is_empty() && lines.iter().all(|n| *n == 1), "every cost and time on one line: {lines:?}");
    browser.screenshot("20-history-in-shanghai").await;

    // The stats count days in the zone picked.
    browser.goto("/admin/stats").await;
    assert!(browser.text("#window").await.ends_with("days in Asia/Shanghai"), "{}", browser.text("#window").await);
    browser.screenshot("21-stats-in-shanghai").await;
    browser.close().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_users_page_shows_spend_against_budgets_and_an_admin_raises_one() {
    let (_one, app, alice) = start_browser_test_with(TestAppOptions::default().env("QUICKACT_BUDGET_PER_MONTH", "50")).await;
    let (erin, erin_key) = app.create_user("erin").await;
    let erin_id = erin["id"].as_str().unwrap().to_owned();
    // Less than one turn (0.00036 CNY): her first task runs, the next is refused.
    let path = format!("/api/admin/users/{erin_id}/budget");
    assert_eq!(app.call(&app.admin_key, Method::PUT, &path, Some(json!({"per_day": 0.0003}))).await.status, StatusCode::OK);
    app.fake.script("erin one", vec![Reply::look_up_and_finish("done")]);
    app.fake.script("erin two", vec![Reply::look_up_and_finish("never asked")]);
    app.fake.script("erin three", vec![Reply::look_up_and_finish("done again")]);
    app.fake.script("alice one", vec![Reply::look_up_and_finish("done")]);
    let mut refused = None;
    for (key, text) in [(&erin_key, "erin one"), (&erin_key, "erin two"), (&alice, "alice one")] {
        let id = app.submit_id(key, text).await;
        let task = app.wait_final(key, &id, 30).await;
        if task["result"]["reason"] == "budget_exhausted" {
            refused = Some(id);
        }
    }
    let refused = refused.expect("erin's second task is refused");

    let browser = Browser::open(&app).await;
    browser.log_in(&app.admin_key).await;
    browser.goto("/admin/users").await;
    assert_eq!(browser.text("#refusals-today").await, "1");
    assert_eq!(browser.text("#refusals-month").await, "1");
    assert!(browser.text("#budget-summary").await.contains("no limit a day, 50 CNY a month"));
    let row = browser.text(&format!("#user-{erin_id}")).await;
    assert!(row.contains("0.00036 CNY / 0.0003 CNY (own)") && row.contains("exhausted"), "{row}");
    assert!(row.contains("0.00036 CNY / 50 CNY"), "the month follows the default: {row}");
    browser.screenshot("22-users-budgets").await;

    // The refused task's trace says why, and when the budget renews.
    browser.goto(&format!("/admin/tasks/{refused}")).await;
    assert_eq!(browser.text("#verdict-reason").await, "budget_exhausted");
    assert!(browser.text("#verdict-renews").await.starts_with("The budget renews at"));
    browser.screenshot("24-trace-budget-exhausted").await;

    // Her page: the budget is used up; raise the daily one.
    browser.goto(&format!("/admin/users/{erin_id}")).await;
    browser.find("#budget-exhausted").await;
    let per_day = browser.find("#budget-per-day").await;
    assert_eq!(per_day.prop("value").await.unwrap().as_deref(), Some("0.0003"));
    per_day.clear().await.unwrap();
    per_day.send_keys("abc").await.unwrap();
    browser.find("#save-budget").await.click().await.unwrap();
    assert!(browser.text("#budget-error").await.contains("not a number"));
    let per_day = browser.find("#budget-per-day").await;
    per_day.clear().await.unwrap();
    per_day.send_keys("1").await.unwrap();
    browser.find("#save-budget").await.click().await.unwrap();
    wait_until("the raised budget shows", PATIENCE, || async { browser.count("#budget-exhausted").await == 0 && browser.count("#budget-error").await == 0 }).await;
    let budget = browser.text("#budget").await;
    assert!(budget.contains("1 CNY (own)") && budget.contains("50 CNY (default)"), "{budget}");
    browser.screenshot("23-user-budget-raised").await;

    let id = app.submit_id(&erin_key, "erin three").await;
    assert_eq!(app.wait_final(&erin_key, &id, 30).await["status"], "success");
    browser.close().await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_webhooks_page_shows_a_failing_delivery_and_sends_it_again() {
    use quickact_testkit::{WebhookReceiver, webhook_receiver::Answer};
    // A failed attempt waits ten minutes for its retry: only the page's button sends it sooner.
    let options = TestAppOptions::default().env("QUICKACT_WEBHOOK_ALLOW_PRIVATE", "true").env("QUICKACT_WEBHOOK_RETRY_BASE_MS", "600000");
    let (_one, app, alice) = start_browser_test_with(options).await;
    let receiver = WebhookReceiver::start().await;
    receiver.answer(Answer::Status(500));
    let created = app.call(&alice, Method::POST, "/api/webhooks", Some(json!({ "url": receiver.url }))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:#}", created.body);
    receiver.set_secret(created.body["secret"].as_str().unwrap());
    app.fake.script("look up my week", vec![Reply::look_up_and_finish("nothing this week")]);
    let task = app.submit_id(&alice, "look up my week").await;
    assert_eq!(app.wait_final(&alice, &task, 30).await["status"], "success");
    receiver.wait_for_received(1, PATIENCE).await;

    let browser = Browser::open(&app).await;
    browser.log_in(&app.admin_key).await;
    browser.goto("/admin/webhooks").await;
    let row = wait_for("the failed attempt on the page", PATIENCE, || async {
        browser.goto("/admin/webhooks").await;
        let rows = browser.count(".delivery-pending").await;
        let text = if rows == 1 { browser.text(".delivery-pending").await } else { String::new() };
        if text.contains("the receiver answered 500") { Ok(text) } else { Err(text) }
    })
    .await;
    assert!(row.contains(&task), "the delivery names its task: {row}");
    assert!(browser.text("main").await.contains(&receiver.url), "the endpoint is listed");
    browser.screenshot("25-webhooks-failing").await;

    receiver.answer(Answer::Status(200));
    browser.find(".delivery-pending button.resend").await.click().await.unwrap();
    let got = receiver.wait_for_accepted(1, PATIENCE).await;
    assert!(got[0].verified && got[0].body["task_id"] == task.as_str(), "{got:#?}");
    wait_until("the delivery shows as delivered", PATIENCE, || async {
        browser.goto("/admin/webhooks").await;
        browser.count(".delivery-delivered").await == 1
    })
    .await;
    browser.screenshot("26-webhooks-sent-again").await;
    browser.close().await;
    app.shutdown().await;
}
