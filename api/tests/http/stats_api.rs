//! `GET /api/admin/stats`: outcomes, latency, tokens and cost of a window grouped by day, model or
//! user; the queue and the workers with their running tasks.

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use quickact_testkit::{Reply, TestApp, TestAppOptions};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio::sync::Notify;

async fn stats(app: &TestApp, query: &str) -> Value {
    let answer = app.call(&app.admin_key, Method::GET, &format!("/api/admin/stats{query}"), None).await;
    assert_eq!(answer.status, StatusCode::OK, "{query}: {:#}", answer.body);
    answer.body
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stats_count_what_tasks_did_and_cost_by_model_user_and_day_and_show_running_work() {
    // The fast path on: a sentence the local reader understands runs locally at zero tokens.
    let (app, alice) = TestApp::start_with_options_and_user(TestAppOptions::default().env("QUICKACT_FAST_PATH", "true"), "alice").await;
    let (_, bob) = app.create_user("bob").await;
    app.fake.script("stats one", vec![Reply::look_up_and_finish("done")]);
    app.fake.script("stats two", vec![Reply::finish("error", "cannot")]);
    let gate = Arc::new(Notify::new());
    app.fake.script("stats slow", vec![Reply::Gated(gate.clone(), Box::new(Reply::finish("error", "late")))]);

    let mut created = Vec::new();
    for (key, text) in [(&alice, "stats one"), (&alice, "stats two"), (&bob, "明天下午3点到4点开会")] {
        let id = app.submit_id(key, text).await;
        let task = app.wait_final(key, &id, 30).await;
        created.push(task);
    }
    assert_eq!(created[0]["status"], "success");
    assert_eq!(created[1]["status"], "failed");
    assert_eq!(created[2]["model_used"], "local", "{:#}", created[2]);

    // A task held by the model shows as processing, in its worker's running list.
    let slow = app.submit_id(&bob, "stats slow").await;
    app.fake.wait_for_requests("stats slow", 1, Duration::from_secs(20)).await;
    let report = stats(&app, "").await;
    assert_eq!(report["queue"]["processing"], 1, "{:#}", report["queue"]);
    assert_eq!(report["queue"]["pending"], 0);
    let workers = report["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 1, "one worker process is alive: {workers:#?}");
    assert!(workers[0]["name"].as_str().unwrap().starts_with("test-"), "{workers:#?}");
    let running = workers[0]["running"].as_array().unwrap();
    assert_eq!(running.len(), 1, "{running:#?}");
    assert_eq!(running[0]["task_id"], slow.as_str());
    assert_eq!(running[0]["input_text"], "stats slow");
    assert_eq!(report["totals"]["by_status"]["processing"], 1);

    let cancel = app.call(&bob, Method::POST, &format!("/api/quick-action/{slow}/cancel"), None).await;
    assert_eq!(cancel.status, StatusCode::OK, "{:#}", cancel.body);
    gate.notify_waiters();
    created.push(app.wait_final(&bob, &slow, 30).await);

    // By model: two tasks on the fake model (one turn each: 100 input + 20 output tokens at 2 and 8
    // per million), one local, and the cancelled one that no model answered.
    let report = stats(&app, "?group_by=model").await;
    assert_eq!(report["group_by"], "model");
    assert_eq!(report["currency"], "CNY");
    let totals = &report["totals"];
    assert_eq!(totals["tasks"], 4, "{totals:#}");
    assert_eq!(totals["finished"], 4);
    assert_eq!(totals["by_status"]["success"], 2);
    assert_eq!(totals["by_status"]["error"], 1);
    assert_eq!(totals["by_status"]["cancelled"], 1);
    assert_eq!(totals["by_status"]["need_clarification"], 0);
    assert!(close(&totals["rates"]["success"], 0.5) && close(&totals["rates"]["error"], 0.25), "{totals:#}");
    assert!(close(&totals["rates"]["cancelled"], 0.25) && close(&totals["rates"]["timeout"], 0.0), "{totals:#}");
    assert_eq!(totals["fast_path"]["tasks"], 1);
    assert_eq!(totals["fast_path"]["eligible"], 4, "every finished task could have gone to a model");
    assert!(close(&totals["fast_path"]["share"], 0.25));
    assert_eq!(totals["tokens"]["input"], 200);
    assert_eq!(totals["tokens"]["output"], 40);
    assert_eq!(totals["tokens"]["total"], 240);
    assert!(close(&totals["cost"], 2.0 * (100.0 * 2.0 + 20.0 * 8.0) / 1e6), "{totals:#}");
    let latency = &totals["latency_ms"];
    let (p50, p95, p99) = (latency["p50"].as_f64().unwrap(), latency["p95"].as_f64().unwrap(), latency["p99"].as_f64().unwrap());
    assert!(0.0 < p50 && p50 <= p95 && p95 <= p99, "{latency:#}");
    let groups = report["groups"].as_array().unwrap();
    let by_key = |key: &str| groups.iter().find(|g| g["key"] == key).unwrap_or_else(|| panic!("no group {key}: {groups:#?}"));
    assert_eq!(groups.len(), 3, "{groups:#?}");
    assert_eq!(groups[0]["key"], "fake-model", "busiest first");
    assert_eq!(by_key("fake-model")["tasks"], 2);
    assert_eq!(by_key("fake-model")["tokens"]["input"], 200);
    assert_eq!(by_key("local")["tasks"], 1);
    assert_eq!(by_key("local")["tokens"]["total"], 0);
    assert_eq!(by_key("(none)")["by_status"]["cancelled"], 1);
    let usage = report["usage"].as_array().unwrap();
    let models: Vec<&str> = usage.iter().map(|u| u["model"].as_str().unwrap()).collect();
    assert!(models.contains(&"fake-model") && models.contains(&"local") && usage.len() >= 2, "{usage:#?}");
    let fake_usage: i64 = usage.iter().filter(|u| u["model"] == "fake-model").map(|u| u["tokens"]["output"].as_i64().unwrap()).sum();
    assert_eq!(fake_usage, 40);
    assert_eq!(report["queue"]["processing"], 0);
    assert_eq!(report["workers"][0]["running"].as_array().unwrap().len(), 0);

    // By user: names as labels.
    let report = stats(&app, "?group_by=user").await;
    let groups = report["groups"].as_array().unwrap();
    let labels: Vec<(&str, i64)> = groups.iter().map(|g| (g["label"].as_str().unwrap(), g["tasks"].as_i64().unwrap())).collect();
    assert_eq!(labels, [("alice", 2), ("bob", 2)]);

    // By day (UTC by default): the days the tasks were submitted on, in order.
    let report = stats(&app, "?group_by=day").await;
    let days: BTreeSet<String> = created.iter().map(|t| t["created_at"].as_str().unwrap()[..10].to_owned()).collect();
    let keys: Vec<String> = report["groups"].as_array().unwrap().iter().map(|g| g["key"].as_str().unwrap().to_owned()).collect();
    assert_eq!(keys, days.into_iter().collect::<Vec<_>>());

    // A window before the tasks has none of them.
    let report = stats(&app, "?since=2020-01-01&until=2020-01-02").await;
    assert_eq!(report["totals"]["tasks"], 0);
    assert!(report["totals"]["latency_ms"].is_null());
    assert!(close(&report["totals"]["rates"]["success"], 0.0));
    assert_eq!(report["groups"].as_array().unwrap().len(), 0);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stats_refuse_bad_windows_and_groupings_and_non_admins() {
    let (app, alice) = TestApp::start_with_options_and_user(TestAppOptions::default().workers(0), "alice").await;
    for query in ["?group_by=week", "?since=2026-02-02&until=2026-02-01", "?since=yesterday", "?since=2020-01-01&until=2026-01-01", "?tz=Mars/Base"] {
        let answer = app.call(&app.admin_key, Method::GET, &format!("/api/admin/stats{query}"), None).await;
        let expected = if query.starts_with("?tz") { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::BAD_REQUEST };
        assert_eq!(answer.status, expected, "{query}: {:#}", answer.body);
        assert!(answer.body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    let forbidden = app.call(&alice, Method::GET, "/api/admin/stats", None).await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN);
    // With nothing submitted, every figure is zero and the window defaults to the last 7 days.
    let report = stats(&app, "?tz=Asia/Shanghai").await;
    assert_eq!(report["totals"]["tasks"], 0);
    assert_eq!(report["tz"], "Asia/Shanghai");
    let since = chrono::DateTime::parse_from_rfc3339(report["since"].as_str().unwrap()).unwrap();
    let until = chrono::DateTime::parse_from_rfc3339(report["until"].as_str().unwrap()).unwrap();
    assert_eq!((until - since).num_days(), 7);
    app.shutdown().await;
}
