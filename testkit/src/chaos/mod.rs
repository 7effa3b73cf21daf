//! The chaos suite: the service as it runs in production (the API and three workers as processes,
//! one durable Postgres, a model behind HTTP) under the faults a production database and fleet
//! bring, each scenario checking what must hold whatever happens:
//!
//! - every accepted task reaches exactly one verdict (`lost` counts those that did not);
//! - every tool effect happens once: each task asks for one item with a title of its own, and the
//!   items and their change records (what undo reads) are counted per task (`duplicated`);
//! - no client sees a verdict or a step that is later taken back: what long-polls and SSE streams
//!   saw is compared with what the task holds at the end (`taken back`), and a stream resumed with
//!   `Last-Event-ID` must show every step once;
//! - no answer is a 5xx other than 503, and every 503 says `Retry-After` (`5xx`);
//! - after each fault the service serves again within 5 s (a probe task, submitted and watched
//!   until its verdict, from the moment the fault ends: `recovery`);
//! - memory and database connections return to their level after the faults.
//!
//! `scripts/chaos.sh` runs the full suite (release binaries, the sizes of issue 31) and writes
//! `target/chaos/report.md`; `worker/tests/chaos.rs` runs the short version of every scenario in
//! the test suite.

mod fleet;
mod load;
mod scenarios;

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    path::{Path, PathBuf},
    time::Duration,
};

pub use fleet::Fleet;
pub use load::{Load, LoadPlan, Verified};

/// The faults, one scenario each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scenario {
    /// Postgres crashes (immediate mode) every 5-20 s, down 0-5 s, under load.
    Crashes,
    /// Every client session of the database terminated, listeners included, during long-polls and
    /// SSE streams.
    Purges,
    /// A worker SIGSTOPped mid-run for longer than its lease, then SIGCONTed.
    PausedWorker,
    /// An idle transaction holding the xmin under steady load.
    PinnedSnapshot,
    /// Another client holding every free connection of the server.
    ConnectionsExhausted,
    /// Workers whose clocks are 5 minutes off.
    ClockSkew,
    /// A 429 storm with `Retry-After`, and a model that hangs.
    ModelFaults,
}

impl Scenario {
    pub const ALL: [Scenario; 7] = [
        Scenario::Crashes,
        Scenario::Purges,
        Scenario::PausedWorker,
        Scenario::PinnedSnapshot,
        Scenario::ConnectionsExhausted,
        Scenario::ClockSkew,
        Scenario::ModelFaults,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Crashes => "crashes",
            Scenario::Purges => "purges",
            Scenario::PausedWorker => "paused-worker",
            Scenario::PinnedSnapshot => "pinned-snapshot",
            Scenario::ConnectionsExhausted => "connections-exhausted",
            Scenario::ClockSkew => "clock-skew",
            Scenario::ModelFaults => "model-faults",
        }
    }

    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// How a suite runs.
#[derive(Clone, Debug)]
pub struct ChaosOptions {
    /// The short version (the test suite's): smaller loads, fewer and shorter faults.
    pub short: bool,
    pub api_binary: PathBuf,
    pub worker_binary: PathBuf,
}

impl ChaosOptions {
    /// Picks the short or the full size of a figure.
    pub(crate) fn size<T>(&self, short: T, full: T) -> T {
        if self.short { short } else { full }
    }
}

/// What a scenario found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub scenario: String,
    pub faults: usize,
    pub verified: Verified,
    /// Seconds from the end of each fault to a probe task's verdict.
    pub recoveries: Vec<f64>,
    /// Scenario-specific figures, as (name, value) lines of the report.
    pub figures: Vec<(String, String)>,
    /// Every invariant that did not hold, in words. Empty when the scenario passed.
    pub violations: Vec<String>,
    pub seconds: f64,
}

/// Longest a service may take to serve again after a fault ends.
pub const RECOVERY_GOAL: Duration = Duration::from_secs(5);

impl Outcome {
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }

    pub fn worst_recovery(&self) -> Option<f64> {
        self.recoveries.iter().copied().reduce(f64::max)
    }

    pub(crate) fn figure(&mut self, name: &str, value: impl ToString) {
        self.figures.push((name.to_owned(), value.to_string()));
    }

    /// Adds the verdicts of the load and of the recoveries to `violations`.
    pub(crate) fn judge(&mut self) {
        let v = &self.verified;
        let mut found = Vec::new();
        if v.lost > 0 {
            found.push(format!("{} accepted tasks never reached a verdict or lost their effect: {:?}", v.lost, v.examples.lost));
        }
        if v.duplicated > 0 {
            found.push(format!("{} tasks applied an effect twice: {:?}", v.duplicated, v.examples.duplicated));
        }
        if v.taken_back > 0 {
            found.push(format!("{} verdicts or steps seen by a client were later taken back: {:?}", v.taken_back, v.examples.taken_back));
        }
        if v.server_errors > 0 {
            found.push(format!("{} answers were a 5xx other than 503, or a 503 without Retry-After: {:?}", v.server_errors, v.examples.server_errors));
        }
        if v.never_accepted > 0 {
            found.push(format!("{} submissions were never accepted, retried for minutes", v.never_accepted));
        }
        if let Some(worst) = self.worst_recovery()
            && worst > RECOVERY_GOAL.as_secs_f64()
        {
            found.push(format!("the service took {worst:.1} s to serve again after a fault (goal: {} s)", RECOVERY_GOAL.as_secs()));
        }
        self.violations.splice(0..0, found);
    }
}

/// Runs one scenario.
pub async fn run(scenario: Scenario, options: &ChaosOptions) -> Outcome {
    let started = std::time::Instant::now();
    let mut outcome = match scenario {
        Scenario::Crashes => scenarios::crashes(options).await,
        Scenario::Purges => scenarios::purges(options).await,
        Scenario::PausedWorker => scenarios::paused_worker(options).await,
        Scenario::PinnedSnapshot => scenarios::pinned_snapshot(options).await,
        Scenario::ConnectionsExhausted => scenarios::connections_exhausted(options).await,
        Scenario::ClockSkew => scenarios::clock_skew(options).await,
        Scenario::ModelFaults => scenarios::model_faults(options).await,
    };
    outcome.scenario = scenario.name().to_owned();
    outcome.seconds = started.elapsed().as_secs_f64();
    outcome.judge();
    outcome
}

/// The report: one table of every scenario's counts, then each scenario's figures and findings.
pub fn report(outcomes: &[Outcome], options: &ChaosOptions) -> String {
    let mut text = String::new();
    let version = if options.short { "short" } else { "full" };
    let _ = writeln!(text, "# Chaos report ({version} version)\n");
    let _ = writeln!(
        text,
        "| scenario | faults | tasks | verdicts | by status | duplicated | lost | taken back | 5xx (not 503) | 503 | worst recovery | took | result |"
    );
    let _ = writeln!(text, "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for o in outcomes {
        let v = &o.verified;
        let by_status = v.by_status.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ");
        let recovery = o.worst_recovery().map_or("-".to_owned(), |s| format!("{s:.1} s"));
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} s | {} |",
            o.scenario,
            o.faults,
            v.tasks,
            v.verdicts,
            by_status,
            v.duplicated,
            v.lost,
            v.taken_back,
            v.server_errors,
            v.unavailable,
            recovery,
            o.seconds,
            if o.passed() { "passed" } else { "FAILED" }
        );
    }
    for o in outcomes {
        let _ = writeln!(text, "\n## {}\n", o.scenario);
        for (name, value) in &o.figures {
            let _ = writeln!(text, "- {name}: {value}");
        }
        let statuses: BTreeMap<_, _> = o.verified.answers.iter().collect();
        let _ = writeln!(text, "- HTTP answers by status: {statuses:?}");
        if !o.recoveries.is_empty() {
            let mut sorted = o.recoveries.clone();
            sorted.sort_by(f64::total_cmp);
            let _ = writeln!(text, "- recovery after each fault (s, sorted): {}", sorted.iter().map(|s| format!("{s:.1}")).collect::<Vec<_>>().join(", "));
        }
        for violation in &o.violations {
            let _ = writeln!(text, "- **violation**: {violation}");
        }
    }
    text
}

/// Writes the report to `dir/report.md` (or `report-short.md`).
pub fn write_report(dir: &Path, outcomes: &[Outcome], options: &ChaosOptions) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create the report's directory");
    let path = dir.join(if options.short { "report-short.md" } else { "report.md" });
    std::fs::write(&path, report(outcomes, options)).expect("write the chaos report");
    path
}

/// The `quickact-api` binary beside a `quickact-worker` binary (cargo builds both into one
/// directory), built first when a narrowed test run did not build it.
pub fn api_binary_beside(worker_binary: &Path) -> PathBuf {
    let api = worker_binary.with_file_name("quickact-api");
    if !api.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let release = worker_binary.parent().and_then(Path::file_name).is_some_and(|d| d == "release");
        let mut build = std::process::Command::new(cargo);
        build.args(["build", "--locked", "-p", "quickact-api", "--bin", "quickact-api"]);
        if release {
            build.arg("--release");
        }
        let status = build.status().expect("run cargo build");
        assert!(status.success() && api.exists(), "could not build {}", api.display());
    }
    api
}
