//! The OpenAPI description: generated from the handlers, served without a key, and committed as
//! `api/openapi.json`, which must not drift from the code.

use quickact_testkit::{TestApp, TestAppOptions};
use reqwest::StatusCode;
use serde_json::Value;

const COMMITTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json");

/// Fails when the committed description differs from the code's; `QUICKACT_WRITE_OPENAPI=1`
/// rewrites the file instead (then commit it).
#[test]
fn the_committed_description_matches_the_code() {
    let generated = quickact_api::openapi().to_pretty_json().unwrap() + "\n";
    if std::env::var_os("QUICKACT_WRITE_OPENAPI").is_some() {
        std::fs::write(COMMITTED, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(COMMITTED).unwrap_or_default();
    assert!(
        committed == generated,
        "api/openapi.json is out of date with the code: run `QUICKACT_WRITE_OPENAPI=1 bash scripts/test.sh openapi` and commit it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_description_is_served_without_a_key_and_covers_the_contract() {
    let app = TestApp::start_with(TestAppOptions::default().workers(0)).await;
    let response = app.client.get(format!("{}/api/openapi.json", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let served: Value = response.json().await.unwrap();
    assert_eq!(served, serde_json::to_value(quickact_api::openapi()).unwrap());
    assert!(served["openapi"].as_str().unwrap().starts_with("3.1"), "{}", served["openapi"]);

    let operations: Vec<String> = served["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |method| format!("{} {path}", method.to_uppercase())))
        .collect();
    for expected in [
        "POST /api/quick-action",
        "GET /api/quick-action",
        "GET /api/quick-action/{id}",
        "POST /api/quick-action/{id}/cancel",
        "POST /api/quick-action/{id}/undo",
        "GET /api/quick-action/{id}/events",
        "GET /api/admin/quick-actions",
        "POST /api/admin/users",
        "GET /api/items",
        "POST /api/items",
        "GET /api/items/{id}",
        "PATCH /api/items/{id}",
        "DELETE /api/items/{id}",
        "POST /api/parse-time",
        "POST /api/quick-action/preview",
        "GET /api/keys",
        "POST /api/keys",
        "DELETE /api/keys/{id}",
        "GET /health",
        "GET /ready",
    ] {
        assert!(operations.contains(&expected.to_owned()), "{expected} is not described: {operations:?}");
    }
    // Every answer under /api names its errors in the one envelope, and asks for the bearer key.
    let submit = &served["paths"]["/api/quick-action"]["post"];
    for status in ["201", "400", "401", "413", "422", "429", "503"] {
        assert!(submit["responses"].get(status).is_some(), "POST /api/quick-action lacks {status}");
    }
    assert_eq!(submit["responses"]["401"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/ErrorBody");
    assert_eq!(submit["security"][0]["bearer"], serde_json::json!([]));
    assert!(served["paths"]["/health"]["get"].get("security").is_none());
    assert!(served["paths"]["/api/admin/users"]["post"]["responses"].get("403").is_some());
    app.shutdown().await;
}
