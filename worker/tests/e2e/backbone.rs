use quickact_testkit::{Reply, TestApp};
use reqwest::StatusCode;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_verdict_reaches_a_long_polling_client() {
    let app = TestApp::start().await;
    let (_, key) = app.create_user("alice").await;
    app.fake.script("开会", vec![Reply::finish("action_completed", "已创建会议")]);

    let created = app.submit(&key, "明天下午3点到4点开会").await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.body["status"], "pending");
    let id = created.body["task_id"].as_str().unwrap().to_owned();
    assert_eq!(created.body["status_url"], format!("/api/quick-action/{id}"));

    let task = app.wait_final(&key, &id, 20).await;
    assert_eq!(task["status"], "success", "{task:#}");
    assert_eq!(task["result"]["type"], "action_completed");
    assert_eq!(task["result"]["message"], "已创建会议");
    assert_eq!(task["tokens_used"]["input"], 100);
    assert_eq!(task["tokens_used"]["output"], 20);
    assert_eq!(task["model_used"], "fake-model");
    app.shutdown().await;
}
