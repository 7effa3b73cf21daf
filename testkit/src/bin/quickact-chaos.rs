//! The chaos suite, on demand: `scripts/chaos.sh [--short] [scenario ...]` (see
//! `quickact_testkit::chaos`). Runs the scenarios one after another, prints each outcome, writes
//! the report (`target/chaos/report.md`, or `report-short.md`) and exits non-zero when a scenario
//! found a violation.

use std::path::PathBuf;

use clap::Parser;
use quickact_testkit::chaos::{self, ChaosOptions, Scenario};

#[derive(Parser)]
#[command(about = "Runs the chaos suite against the API and worker binaries")]
struct Args {
    /// The short version (the test suite's sizes).
    #[arg(long)]
    short: bool,
    #[arg(long, default_value = "target/release/quickact-api")]
    api_binary: PathBuf,
    #[arg(long, default_value = "target/release/quickact-worker")]
    worker_binary: PathBuf,
    /// Where the report goes.
    #[arg(long, default_value = "target/chaos")]
    out: PathBuf,
    /// Scenarios to run (all when none): crashes, purges, paused-worker, pinned-snapshot,
    /// connections-exhausted, clock-skew, model-faults.
    scenarios: Vec<String>,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = Args::parse();
    let scenarios: Vec<Scenario> = if args.scenarios.is_empty() {
        Scenario::ALL.to_vec()
    } else {
        args.scenarios.iter().map(|name| Scenario::from_name(name).unwrap_or_else(|| panic!("no scenario named {name}"))).collect()
    };
    let options = ChaosOptions { short: args.short, api_binary: args.api_binary, worker_binary: args.worker_binary };
    let mut outcomes = Vec::new();
    for scenario in scenarios {
        println!("chaos: {} ...", scenario.name());
        let outcome = chaos::run(scenario, &options).await;
        println!("{}", chaos::report(std::slice::from_ref(&outcome), &options));
        outcomes.push(outcome);
        // Each scenario's report is kept as the suite goes, so a long run that stops keeps them.
        chaos::write_report(&args.out, &outcomes, &options);
    }
    let path = chaos::write_report(&args.out, &outcomes, &options);
    println!("report: {}", path.display());
    std::process::exit(i32::from(!outcomes.iter().all(|o| o.passed())));
}
