//! Scores reader corpus files (`docs/corpus-format.md`) against the local provider:
//!
//! ```sh
//! quickact-corpus FILE [FILE...] [--out PATH] [--concurrency N]
//! ```
//!
//! The cases run against an API and a worker in this process with no model key (every task is the
//! local provider's), on a fresh database: on the server `DATABASE_URL` names, or, when it is unset,
//! on a throwaway Postgres cluster started for the run (from the installed binaries, as
//! `scripts/pg.sh` does) and removed at the end. It prints each failing case's report, then the
//! summary: cases, right, declined, wrong effect and wrong answer, overall and by family. `--out`
//! writes a TSV of every case (line, kind, text, classification; the line as `FILE:LINE` when
//! several files are scored).
//!
//! Exit status: 0 when the cases ran, whatever they scored (it is a scoring tool); 2 when a file
//! cannot be read or has a malformed row (each one printed with its line), or the arguments are wrong.

use std::{path::PathBuf, process::ExitCode, time::Instant};

use clap::Parser;
use quickact_testkit::{
    TestApp, TestAppOptions,
    corpus::{self, Classification, report},
    postgres::{PgCluster, create_test_database_on},
};

#[derive(Parser)]
#[command(name = "quickact-corpus", about = "Score reader corpus files against the local provider")]
struct Args {
    /// Corpus files, in the format of CORPUS-FORMAT.md.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Write a TSV of every case's line, kind, text and classification to this path.
    #[arg(long)]
    out: Option<PathBuf>,
    /// How many cases run at once (each for a user of its own).
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> ExitCode {
    let args = Args::parse();
    let mut cases = Vec::new();
    let mut malformed = false;
    for file in &args.files {
        match corpus::read_corpus(file) {
            Ok(mut some) => cases.append(&mut some),
            Err(error) => {
                eprintln!("{error}");
                malformed = true;
            }
        }
    }
    if malformed {
        return ExitCode::from(2);
    }

    // Without DATABASE_URL, a cluster of this run's own, stopped and removed when it is dropped.
    let cluster = match std::env::var("DATABASE_URL").ok().filter(|url| !url.trim().is_empty()) {
        Some(_) => None,
        None => Some(PgCluster::start().expect("start a throwaway Postgres cluster (or set DATABASE_URL)")),
    };
    let mut options = TestAppOptions::default().env("OPENAI_API_KEY", "");
    if let Some(cluster) = &cluster {
        options = options.database_url(create_test_database_on(&cluster.url("postgres")).await);
    }
    let started = Instant::now();
    let app = TestApp::start_with(options).await;
    eprintln!("running {} cases from {} file(s)", cases.len(), args.files.len());
    let outcomes = corpus::run_cases(&app, &cases, args.concurrency).await;
    app.shutdown().await;
    drop(cluster);

    for outcome in outcomes.iter().filter(|o| o.classification != Classification::Right) {
        println!("{}", report::case_report(outcome));
    }
    print!("{}", report::summary(&outcomes));
    println!("({:.1} s)", started.elapsed().as_secs_f64());
    if let Some(out) = &args.out {
        if let Err(error) = std::fs::write(out, report::tsv(&outcomes, args.files.len() > 1)) {
            eprintln!("{}: {error}", out.display());
            return ExitCode::from(1);
        }
        eprintln!("wrote {}", out.display());
    }
    ExitCode::SUCCESS
}
