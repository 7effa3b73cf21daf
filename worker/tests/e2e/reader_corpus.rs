//! The local provider (no network, deterministic) on the reader corpus, `shared/reader/corpus.tsv`:
//! one-sentence requests in Chinese and English, each with the items it starts with and what it
//! must do (the format: `docs/corpus-format.md`; the runner and its checks:
//! `quickact_testkit::corpus`).
//!
//! Every case runs for a fresh user on its setup items, through the real API, worker and database;
//! its verdict, the task's accounting (`model_used == "local"`, no tokens, no cost) and the items
//! before and after are checked: exactly the items the row names created, completed, deleted or
//! moved, every other item byte-for-byte untouched. One test per family runs that family's cases on
//! an app of its own and reports every case that is not `right`, so one bad case does not hide the
//! others. `quickact-corpus shared/reader/corpus.tsv` scores the same file.

use std::collections::BTreeMap;

use quickact_testkit::{
    TestApp, TestAppOptions,
    corpus::{self, Case, Classification, report},
};

/// The corpus, as the tests and the scorer read it.
fn corpus_cases() -> Vec<Case> {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the worker lives in the workspace");
    corpus::read_corpus(workspace.join("shared/reader/corpus.tsv")).unwrap_or_else(|error| panic!("{error}"))
}

/// Cases run at once on a family's app (each for a user of its own).
const CONCURRENCY: usize = 4;

/// One test per family, each on an app of its own, and [`FAMILIES`] naming every family once.
macro_rules! family_tests {
    ($($test:ident: $family:literal),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $test() {
                run_family($family).await;
            }
        )*
        /// Every family with a test.
        const FAMILIES: &[&str] = &[$($family),*];
    };
}

family_tests! {
    every_create_case_of_the_corpus_leaves_exactly_its_item: "create",
    every_complete_case_of_the_corpus_completes_exactly_its_item: "complete",
    every_delete_case_of_the_corpus_deletes_exactly_its_item: "delete",
    every_move_case_of_the_corpus_moves_exactly_its_item: "move",
    every_list_case_of_the_corpus_lists_exactly_its_items: "list",
    every_select_case_of_the_corpus_picks_exactly_the_item_its_time_or_words_name: "select",
    every_several_case_of_the_corpus_does_each_of_its_clauses: "several",
    every_ask_case_of_the_corpus_asks_and_changes_nothing: "ask",
    every_decline_case_of_the_corpus_declines_and_changes_nothing: "decline",
    every_bulk_case_of_the_corpus_acts_on_every_matching_item_and_no_other: "bulk",
    every_relative_case_of_the_corpus_times_its_item_from_the_other: "relative",
    every_speech_case_of_the_corpus_reads_through_casual_speech: "speech",
}

async fn run_family(family: &str) {
    let cases: Vec<Case> = corpus_cases().into_iter().filter(|case| case.family() == family).collect();
    assert!(!cases.is_empty(), "no {family} case in the corpus");
    // An empty key: no model endpoint is configured, so the local provider serves every task.
    let app = TestApp::start_with(TestAppOptions::default().env("OPENAI_API_KEY", "")).await;
    let outcomes = corpus::run_cases(&app, &cases, CONCURRENCY).await;
    app.shutdown().await;
    let failures: Vec<String> =
        outcomes.iter().filter(|o| o.classification != Classification::Right).map(report::case_report).collect();
    assert!(
        failures.is_empty(),
        "{} of {} {family} cases are not right:\n\n{}\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n"),
        report::summary(&outcomes)
    );
}

/// The corpus parses, its indexes point into the setups, every family has a test and cases in both
/// languages, and it keeps at least the cases the Rust tables had.
#[test]
fn the_corpus_is_well_formed_and_every_family_has_chinese_and_english_cases() {
    let cases = corpus_cases();
    assert!(cases.len() >= 230, "{} cases", cases.len());
    let mut languages: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for case in &cases {
        for i in case.indexes() {
            assert!(i < case.setup.len(), "{}: #{i} points past the setup", case.location());
        }
        assert!(FAMILIES.contains(&case.family()), "{}: the family {:?} has no test", case.location(), case.family());
        let (zh, en) = languages.entry(case.family()).or_default();
        if case.is_chinese() {
            *zh += 1;
        } else {
            *en += 1;
        }
    }
    for family in FAMILIES {
        let (zh, en) = languages.get(family).copied().unwrap_or_default();
        assert!(zh >= 1 && en >= 1, "{family}: {zh} Chinese and {en} English cases");
    }
    // Cases of one kind sit together.
    let mut seen: Vec<&str> = Vec::new();
    for case in &cases {
        if seen.last() != Some(&case.kind.as_str()) {
            assert!(!seen.contains(&case.kind.as_str()), "{}: the kind {:?} is split", case.location(), case.kind);
            seen.push(&case.kind);
        }
    }
}
