//! Prints the generated tables of `docs/local-provider.md`, each between its marker comments: the
//! rules of [`RULES`] in the order they are tried, and the phrase kinds of `corpus.tsv` with their
//! number of cases and their first sentence.
//!
//! `cargo run -q -p quickact-reader --example doc_tables`. The test `tests/doc_tables.rs` includes
//! this file and fails when the doc's marked sections differ from what it prints;
//! `QUICKACT_WRITE_DOCS=1 cargo test -p quickact-reader --test doc_tables` rewrites them.

use quickact_reader::rules::RULES;

/// The corpus, as the crate's tests read it.
pub const CORPUS: &str = include_str!("../corpus.tsv");

/// How many examples of a rule its row shows.
const EXAMPLES_SHOWN: usize = 2;

fn main() {
    let sections: Vec<String> = sections().iter().map(|(name, table)| marked(name, table)).collect();
    println!("{}", sections.join("\n\n"));
}

/// The generated sections of the doc: the marker name and the table.
pub fn sections() -> [(&'static str, String); 2] {
    [("rules", rules_table()), ("kinds", kinds_table(CORPUS))]
}

/// A table with its markers, as the doc holds it: `<!-- name:begin -->`, the table,
/// `<!-- name:end -->`.
pub fn marked(name: &str, table: &str) -> String {
    format!("{}\n{table}{}", begin(name), end(name))
}

pub fn begin(name: &str) -> String {
    format!("<!-- {name}:begin -->")
}

pub fn end(name: &str) -> String {
    format!("<!-- {name}:end -->")
}

/// One row per rule, in the order they are tried: its name, what it reads, its first examples.
pub fn rules_table() -> String {
    let mut out = String::from("| rule | reads | examples |\n|---|---|---|\n");
    for rule in RULES {
        let examples: Vec<String> = rule.examples.iter().take(EXAMPLES_SHOWN).copied().map(code).collect();
        out.push_str(&format!("| {} | {} | {} |\n", code(rule.name), text(rule.reads), examples.join("<br>")));
    }
    out
}

/// One row per phrase kind of a corpus (its first column), in the order the kinds first appear:
/// the kind, its number of cases, its first case's sentence.
pub fn kinds_table(corpus: &str) -> String {
    let mut out = String::from("| kind | cases | first case |\n|---|---:|---|\n");
    for (kind, count, first) in kinds(corpus) {
        out.push_str(&format!("| {} | {count} | {} |\n", code(kind), code(first)));
    }
    out
}

/// The kinds of a corpus with their number of cases and first sentence. Only the first two
/// columns are read; `#` lines and blank lines are comments.
pub fn kinds(corpus: &str) -> Vec<(&str, usize, &str)> {
    let mut kinds: Vec<(&str, usize, &str)> = Vec::new();
    for line in corpus.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut columns = line.split('\t').map(str::trim);
        let kind = columns.next().unwrap_or_default();
        let sentence = columns.next().unwrap_or_default();
        match kinds.iter_mut().find(|(k, _, _)| *k == kind) {
            Some((_, count, _)) => *count += 1,
            None => kinds.push((kind, 1, sentence)),
        }
    }
    kinds
}

/// Plain text in a table cell: a `|` would end the cell, a `<` could open an HTML tag.
pub fn text(s: &str) -> String {
    s.replace('|', "\\|").replace('<', "&lt;")
}

/// Text in a code span in a table cell (`|` still escaped: tables are split before code spans).
pub fn code(s: &str) -> String {
    let s = s.replace('|', "\\|");
    if s.contains('`') { format!("`` {s} ``") } else { format!("`{s}`") }
}
