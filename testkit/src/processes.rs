//! The service's binaries as real processes beside a [`TestApp`]'s database and fake model: for the
//! runs that kill, pause or measure them (the soak run and the chaos suite).

use std::{collections::HashMap, process::Stdio};

use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

use crate::TestApp;

/// Starts a `quickact-api` process on a free port; returns it and its base URL (read from its log).
pub async fn spawn_api(app: &TestApp, binary: &str, env: &[(&str, &str)]) -> (Child, String) {
    spawn_api_with(app.env_vars(), binary, env).await
}

/// [`spawn_api`] with a deployment's environment `deployment` rather than a [`TestApp`]'s (e.g. a
/// deployment whose database no process of this build has migrated yet).
pub async fn spawn_api_with(deployment: &HashMap<String, String>, binary: &str, env: &[(&str, &str)]) -> (Child, String) {
    let mut api = Command::new(binary)
        .envs(deployment)
        .env("QUICKACT_BIND", "127.0.0.1:0")
        .env("QUICKACT_SKIP_MIGRATIONS", "1")
        .env("RUST_LOG", "warn,quickact_api=info")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("start {binary}: {e} (build it with cargo build)"));
    let mut lines = BufReader::new(api.stderr.take().expect("stderr")).lines();
    let address = loop {
        let line = lines.next_line().await.expect("read the API's log").expect("the API exited before it listened");
        if let Some(rest) = line.split("address=").nth(1) {
            break rest.split_whitespace().next().expect("an address").to_owned();
        }
    };
    // Keep draining the log so the API never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (api, format!("http://{address}"))
}

/// Starts a `quickact-worker` process with extra environment variables (its log is dropped unless
/// `RUST_LOG` asks for more than warnings, which then go to this process's stderr).
pub fn spawn_worker(app: &TestApp, binary: &str, env: &[(&str, &str)]) -> Child {
    spawn_worker_with(app.env_vars(), binary, env)
}

/// [`spawn_worker`] with a deployment's environment `deployment` rather than a [`TestApp`]'s.
pub fn spawn_worker_with(deployment: &HashMap<String, String>, binary: &str, env: &[(&str, &str)]) -> Child {
    Command::new(binary)
        .envs(deployment)
        .env("QUICKACT_SKIP_MIGRATIONS", "1")
        .env("RUST_LOG", std::env::var("TEST_LOG").unwrap_or_else(|_| "warn".into()))
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("start {binary}: {e} (build it with cargo build)"))
}

/// Resident memory of a process, in MiB (0 when it is gone).
pub fn rss_mib(child: &Child) -> f64 {
    let Some(pid) = child.id() else { return 0.0 };
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: f64 = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse().ok()).unwrap_or(0.0);
    kib / 1024.0
}
