//! The reader corpus: sentence cases as data (`docs/corpus-format.md`, e.g.
//! `shared/reader/corpus.tsv`), run against a real [`TestApp`] and classified, for the e2e tests
//! (`worker/tests/e2e/reader_corpus.rs`) and for scoring (`quickact-corpus`).
//!
//! Each case runs for a fresh user: its setup items created through `POST /api/items`, the sentence
//! through `POST /api/quick-action` (`now` in the row's zone, `tz`, `wait: true`), then `GET
//! /api/items` and the task checked against the row: the verdict, the accounting of a local run,
//! exactly the named items changed and every other item byte-for-byte untouched, the listing, the
//! question and its options, the suggestion.
//!
//! # Layout
//! - [`case`]: a case as data.
//! - [`parse`]: the format read into cases; a malformed row is reported with its line.
//! - [`mod@run`]: a case run on a [`TestApp`].
//! - [`check`]: a run checked against its row, and classified.
//! - [`report`]: a failing case's report, the summary by family, the TSV of classifications.

pub mod case;
pub mod check;
pub mod parse;
pub mod report;
pub mod run;

#[cfg(test)]
mod classify_tests;
#[cfg(test)]
mod parse_tests;

use std::path::Path;

pub use case::{Case, Effect, Expect, Item, NewItem, Slot, When};
pub use check::{Observed, Problems};
pub use parse::{ParseError, parse_corpus};
pub use run::{run_case, run_cases};

#[cfg(doc)]
use crate::TestApp;

/// How a case went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Classification {
    /// Everything as the row says.
    Right,
    /// The verdict is an error or a question and nothing changed, where the row expected an
    /// effect, a listing or another question.
    Declined,
    /// An item created, changed, completed or deleted that the row did not expect (or only part of
    /// what it expected), or a success where the row expected a question, `not found` or `declines`.
    WrongEffect,
    /// Nothing wrong with the items, but the answer is: a listing of the wrong items, a question
    /// with the wrong options, the wrong error, a right change told wrongly.
    WrongAnswer,
}

impl Classification {
    pub const ALL: [Classification; 4] =
        [Classification::Right, Classification::Declined, Classification::WrongEffect, Classification::WrongAnswer];

    pub fn as_str(self) -> &'static str {
        match self {
            Classification::Right => "right",
            Classification::Declined => "declined",
            Classification::WrongEffect => "wrong effect",
            Classification::WrongAnswer => "wrong answer",
        }
    }
}

/// A case after its run.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub case: Case,
    pub classification: Classification,
    pub problems: Problems,
    pub observed: Observed,
}

/// A corpus file that could not be read, or its malformed rows.
#[derive(Debug)]
pub struct CorpusError {
    pub path: String,
    pub errors: Vec<ParseError>,
    /// The file itself could not be read.
    pub io: Option<std::io::Error>,
}

impl std::fmt::Display for CorpusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(io) = &self.io {
            return write!(f, "{}: {io}", self.path);
        }
        let lines: Vec<String> = self.errors.iter().map(|e| format!("{}:{}: {}", self.path, e.line, e.message)).collect();
        write!(f, "{}", lines.join("\n"))
    }
}

impl std::error::Error for CorpusError {}

/// Every case of the corpus file at `path` (each case's `file` is `path`).
pub fn read_corpus(path: impl AsRef<Path>) -> Result<Vec<Case>, CorpusError> {
    let path = path.as_ref();
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|io| CorpusError { path: shown.clone(), errors: vec![], io: Some(io) })?;
    let cases = parse_corpus(&text).map_err(|errors| CorpusError { path: shown.clone(), errors, io: None })?;
    Ok(cases.into_iter().map(|case| Case { file: shown.clone(), ..case }).collect())
}
