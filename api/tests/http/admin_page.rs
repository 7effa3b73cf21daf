//! The admin page's session over plain HTTP: who may log in, what the cookie holds, CSRF and
//! origin checks on forms, logout, and a session that ends with its key. (What the pages show is
//! tested in a real browser: `api/tests/browser.rs`.)

use quickact_testkit::TestApp;
use reqwest::{Method, StatusCode, header};

struct Browser {
    client: reqwest::Client,
    base: String,
}

impl Browser {
    fn new(app: &TestApp) -> Self {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Browser { client, base: app.base_url.clone() }
    }

    fn origin(&self) -> &str {
        &self.base
    }

    async fn get(&self, path: &str, cookie: Option<&str>) -> reqwest::Response {
        let mut request = self.client.get(format!("{}{path}", self.base));
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        request.send().await.unwrap()
    }

    async fn post(&self, path: &str, cookie: Option<&str>, origin: Option<&str>, form: &[(&str, &str)], extra: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form).unwrap());
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        if let Some(origin) = origin {
            request = request.header(header::ORIGIN, origin);
        }
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// Logs in with `key`; returns the `Cookie` header to send and the raw `Set-Cookie`.
    async fn log_in(&self, key: &str, extra: &[(&str, &str)]) -> (String, String) {
        let response = self.post("/admin/login", None, Some(self.origin()), &[("key", key)], extra).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        assert_eq!(response.headers()[header::LOCATION], "/admin/tasks");
        let set_cookie = response.headers()[header::SET_COOKIE].to_str().unwrap().to_owned();
        let pair = set_cookie.split(';').next().unwrap().to_owned();
        (pair, set_cookie)
    }
}

/// The CSRF token in a page's forms.
fn csrf_of(page: &str) -> String {
    let start = page.find(r#"name="csrf" value=""#).expect("a form with a CSRF token") + r#"name="csrf" value=""#.len();
    page[start..].split('"').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_admin_keys_log_in_and_the_browser_keeps_a_session_cookie_not_the_key() {
    let (app, user_key) = TestApp::start_with_options_and_user(quickact_testkit::TestAppOptions::default().workers(0), "alice").await;
    let browser = Browser::new(&app);

    let anonymous = browser.get("/admin/tasks", None).await;
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
    assert_eq!(anonymous.headers()[header::LOCATION], "/admin/login");
    let htmx = browser.client.get(format!("{}/admin/tasks", app.base_url)).header("hx-request", "true").send().await.unwrap();
    assert_eq!(htmx.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(htmx.headers()["hx-redirect"], "/admin/login");

    let origin = Some(browser.origin());
    for (key, status) in [(user_key.as_str(), StatusCode::FORBIDDEN), ("qa_not_a_key", StatusCode::UNAUTHORIZED), ("", StatusCode::UNAUTHORIZED)] {
        let refused = browser.post("/admin/login", None, origin, &[("key", key)], &[]).await;
        assert_eq!(refused.status(), status, "{key}");
        assert!(refused.headers().get(header::SET_COOKIE).is_none());
        assert!(refused.text().await.unwrap().contains("login-error"));
    }
    let cross_site = browser.post("/admin/login", None, Some("http://evil.example"), &[("key", &app.admin_key)], &[]).await;
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
    assert!(cross_site.headers().get(header::SET_COOKIE).is_none());

    let (cookie, set_cookie) = browser.log_in(&app.admin_key, &[]).await;
    assert!(cookie.starts_with("quickact_admin="), "{set_cookie}");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/admin", "Max-Age="] {
        assert!(set_cookie.contains(attribute), "{attribute} in {set_cookie}");
    }
    assert!(!set_cookie.contains("Secure"), "plain http: no Secure flag ({set_cookie})");
    assert!(!set_cookie.contains(&app.admin_key), "the key never reaches the browser");
    // Only the token's hash is stored.
    let token = cookie.trim_start_matches("quickact_admin=");
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM admin_sessions WHERE token_hash = sha256(convert_to($1, 'UTF8'))")
        .bind(token)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(stored, 1);
    let (_, behind_tls) = browser.log_in(&app.admin_key, &[("x-forwarded-proto", "https")]).await;
    assert!(behind_tls.contains("Secure"), "{behind_tls}");

    let page = browser.get("/admin/tasks", Some(&cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let csp = page.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    let page = page.text().await.unwrap();
    assert!(page.contains("History") && page.contains("/admin/assets/htmx.min.js"));
    let htmx = browser.get("/admin/assets/htmx.min.js", None).await;
    assert_eq!(htmx.status(), StatusCode::OK);
    assert!(htmx.text().await.unwrap().contains("htmx"), "htmx is served from the binary");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forms_need_the_sessions_csrf_token_and_this_origin_and_logout_ends_the_session() {
    let app = TestApp::start_with(quickact_testkit::TestAppOptions::default().workers(0)).await;
    let browser = Browser::new(&app);
    let (cookie, _) = browser.log_in(&app.admin_key, &[]).await;
    let csrf = csrf_of(&browser.get("/admin/users", Some(&cookie)).await.text().await.unwrap());
    let origin = Some(browser.origin());

    let no_token = browser.post("/admin/users", Some(&cookie), origin, &[("name", "mallory")], &[]).await;
    assert_eq!(no_token.status(), StatusCode::FORBIDDEN);
    let wrong_token = browser.post("/admin/users", Some(&cookie), origin, &[("csrf", "forged"), ("name", "mallory")], &[]).await;
    assert_eq!(wrong_token.status(), StatusCode::FORBIDDEN);
    let other_site = browser.post("/admin/users", Some(&cookie), Some("http://evil.example"), &[("csrf", &csrf), ("name", "mallory")], &[]).await;
    assert_eq!(other_site.status(), StatusCode::FORBIDDEN);
    let no_origin = browser.post("/admin/users", Some(&cookie), None, &[("csrf", &csrf), ("name", "mallory")], &[]).await;
    assert_eq!(no_origin.status(), StatusCode::FORBIDDEN);
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE name = 'mallory'").fetch_one(&app.pool).await.unwrap();
    assert_eq!(users, 0, "no refused form changed anything");

    // The right token from this origin creates the user; their key, shown once, works on the API.
    let created = browser.post("/admin/users", Some(&cookie), origin, &[("csrf", &csrf), ("name", "carol")], &[]).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let page = created.text().await.unwrap();
    let start = page.find(r#"id="new-key">"#).unwrap() + r#"id="new-key">"#.len();
    let key = page[start..].split('<').next().unwrap().trim().to_owned();
    assert!(key.starts_with("qa_"), "{key}");
    assert_eq!(app.call(&key, Method::GET, "/api/quick-action", None).await.status, StatusCode::OK);
    // A bad name is refused with the reason, on the page.
    let refused = browser.post("/admin/users", Some(&cookie), origin, &[("csrf", &csrf), ("name", "  ")], &[]).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(refused.text().await.unwrap().contains("create-error"));

    let logout = browser.post("/admin/logout", Some(&cookie), origin, &[("csrf", &csrf)], &[]).await;
    assert_eq!(logout.status(), StatusCode::SEE_OTHER);
    let cleared = logout.headers()[header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(cleared.starts_with("quickact_admin=;") && cleared.contains("Max-Age=0"), "{cleared}");
    let after = browser.get("/admin/tasks", Some(&cookie)).await;
    assert_eq!(after.status(), StatusCode::SEE_OTHER, "the old cookie no longer opens the page");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_session_ends_when_its_key_is_revoked() {
    let app = TestApp::start_with(quickact_testkit::TestAppOptions::default().workers(0)).await;
    let created = app.call(&app.admin_key, Method::POST, "/api/admin/users", Some(serde_json::json!({"name": "ops", "is_admin": true}))).await;
    let ops_key = created.body["api_key"].as_str().unwrap().to_owned();
    let ops_id = created.body["user"]["id"].as_str().unwrap().to_owned();
    let browser = Browser::new(&app);
    let (cookie, _) = browser.log_in(&ops_key, &[]).await;
    assert_eq!(browser.get("/admin/stats", Some(&cookie)).await.status(), StatusCode::OK);

    let keys = app.call(&app.admin_key, Method::GET, &format!("/api/admin/users/{ops_id}/keys"), None).await;
    let key_id = keys.body["keys"][0]["id"].as_str().unwrap().to_owned();
    let revoked = app.call(&app.admin_key, Method::DELETE, &format!("/api/admin/keys/{key_id}"), None).await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT);
    assert_eq!(browser.get("/admin/stats", Some(&cookie)).await.status(), StatusCode::SEE_OTHER);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_stats_page_and_metrics_show_each_models_budget_pause_and_fallbacks() {
    use quickact_shared::{config::ModelLimit, store::providers};
    use quickact_testkit::TestAppOptions;
    use std::time::Duration;

    let options = TestAppOptions::default().workers(0).env("QUICKACT_MODEL_LIMITS", r#"{"fake-model": {"requests_per_minute": 600}}"#);
    let app = TestApp::start_with(options).await;
    let limit = ModelLimit { requests_per_minute: Some(600), tokens_per_minute: None };
    for _ in 0..30 {
        providers::take_provider_request(&app.pool, "fake-model", limit, Duration::ZERO, Duration::from_secs(5)).await.unwrap();
    }
    providers::pause_provider(&app.pool, "fake-model", Duration::from_secs(60)).await.unwrap();
    providers::count_fallback(&app.pool, "fake-model").await.unwrap();

    let browser = Browser::new(&app);
    let (cookie, _) = browser.log_in(&app.admin_key, &[]).await;
    let page = browser.get("/admin/stats", Some(&cookie)).await.text().await.unwrap();
    let panel = &page[page.find(r#"<table id="providers">"#).expect("a providers panel")..];
    let row = &panel[panel.find("fake-model").expect("a row of the model")..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains("30 of 600 a minute") || row.contains("29 of 600 a minute"), "30 requests spent, less the time since: {row}");
    assert!(row.contains("<time"), "paused until a moment: {row}");
    assert!(row.contains("30 / 0 / 1") && row.contains(r#"<td class="num">1</td>"#), "{row}");

    let text = app.request(&app.admin_key, Method::GET, "/metrics").send().await.unwrap().text().await.unwrap();
    let gauge = |series: &str| -> f64 {
        let line = text.lines().find(|l| l.starts_with(series)).unwrap_or_else(|| panic!("no {series} in {text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(gauge(r#"quickact_provider_paused_seconds{model="fake-model"}"#) > 50.0);
    let used = gauge(r#"quickact_provider_budget_used_ratio{model="fake-model",budget="requests"}"#);
    assert!((0.04..=0.05).contains(&used), "30 of 600 spent: {used}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_webhooks_page_shows_each_endpoints_failures_and_sends_a_delivery_again() {
    use quickact_testkit::{WebhookReceiver, webhook_receiver::Answer};
    use serde_json::json;
    // A failed attempt waits ten minutes for its retry: only the page's button sends it sooner.
    let options = quickact_testkit::TestAppOptions::default()
        .env("QUICKACT_WEBHOOK_ALLOW_PRIVATE", "true")
        .env("QUICKACT_WEBHOOK_RETRY_BASE_MS", "600000");
    let (app, key) = TestApp::start_with_options_and_user(options.workers(0), "hooked").await;
    let receiver = WebhookReceiver::start().await;
    receiver.answer(Answer::Status(500));
    let created = app.call(&key, Method::POST, "/api/webhooks", Some(json!({ "url": receiver.url }))).await;
    receiver.set_secret(created.body["secret"].as_str().unwrap());
    let endpoint_id = created.body["id"].as_str().unwrap().to_owned();
    let task_id = app.submit_id(&key, "明天下午3点开会").await;
    app.call(&key, Method::POST, &format!("/api/quick-action/{task_id}/cancel"), None).await;
    let mut app = app;
    app.start_worker().await;
    receiver.wait_for_received(1, std::time::Duration::from_secs(30)).await;
    let delivery = quickact_testkit::wait_for("the failed attempt recorded", std::time::Duration::from_secs(30), || async {
        let listed = app.call(&key, Method::GET, &format!("/api/webhooks/{endpoint_id}/deliveries"), None).await;
        let delivery = listed.body["deliveries"][0].clone();
        if delivery["attempt_log"].as_array().is_some_and(|log| !log.is_empty()) { Ok(delivery) } else { Err(listed.body) }
    })
    .await;
    let delivery_id = delivery["id"].as_str().unwrap();

    let browser = Browser::new(&app);
    let (cookie, _) = browser.log_in(&app.admin_key, &[]).await;
    let page = browser.get("/admin/webhooks", Some(&cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains(&receiver.url), "the endpoint is listed");
    assert!(page.contains(&format!(r#"id="delivery-{delivery_id}" class="delivery-pending""#)), "{page}");
    assert!(page.contains("the receiver answered 500"), "the failure is shown");
    assert!(page.contains(r#"<span class="pending">1</span> pending"#), "{page}");

    receiver.answer(Answer::Status(200));
    let csrf = csrf_of(&page);
    let resent = browser.post(&format!("/admin/webhook-deliveries/{delivery_id}/resend"), Some(&cookie), Some(browser.origin()), &[("csrf", &csrf)], &[]).await;
    assert_eq!(resent.status(), StatusCode::SEE_OTHER);
    assert_eq!(resent.headers()[header::LOCATION], "/admin/webhooks");
    let got = receiver.wait_for_accepted(1, std::time::Duration::from_secs(30)).await;
    assert!(got.iter().all(|d| d.verified && d.event_id == got[0].event_id));
    let forged = browser.post(&format!("/admin/webhook-deliveries/{delivery_id}/resend"), Some(&cookie), Some(browser.origin()), &[("csrf", "forged")], &[]).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_page_links_a_traced_task_to_its_trace_and_shows_no_trace_for_an_untraced_one() {
    use quickact_testkit::TestAppOptions;

    let options = TestAppOptions::default().workers(0).env("QUICKACT_TRACE_URL", "https://jaeger.example/trace/{trace_id}");
    let (app, key) = TestApp::start_with_options_and_user(options, "alice").await;
    let traced = app.submit_id(&key, "a traced sentence").await;
    let untraced = app.submit_id(&key, "an untraced sentence").await;
    // What an API exporting traces stores with a task (this in-process API exports none; the
    // processes that do are tested in worker/tests/e2e/traces.rs).
    sqlx::query("UPDATE quick_action_tasks SET trace_parent = $2 WHERE id = $1::uuid")
        .bind(&traced)
        .bind("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        .execute(&app.pool)
        .await
        .unwrap();

    let browser = Browser::new(&app);
    let (cookie, _) = browser.log_in(&app.admin_key, &[]).await;
    let page = browser.get(&format!("/admin/tasks/{traced}"), Some(&cookie)).await.text().await.unwrap();
    assert!(
        page.contains(r#"<a href="https://jaeger.example/trace/4bf92f3577b34da6a3ce929d0e0e4736" id="trace-id""#),
        "a link to the trace: {page}"
    );
    let page = browser.get(&format!("/admin/tasks/{untraced}"), Some(&cookie)).await.text().await.unwrap();
    assert!(page.contains("an untraced sentence") && !page.contains("trace-id"), "no trace: {page}");
    let answer = app.call(&key, Method::GET, &format!("/api/quick-action/{traced}"), None).await;
    assert_eq!(answer.body["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    app.shutdown().await;
}
