//! `docs/local-provider.md` holds two generated tables (the rules, the corpus's phrase kinds), each
//! between marker comments; `examples/doc_tables.rs` prints them. This fails when the doc's marked
//! sections differ from what it would print now; `QUICKACT_WRITE_DOCS=1` rewrites them instead.

#[path = "../examples/doc_tables.rs"]
#[allow(dead_code)]
mod doc_tables;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/local-provider.md");
const REWRITE: &str = "QUICKACT_WRITE_DOCS=1 cargo test -p quickact-reader --test doc_tables";

/// `doc` with the section between `name`'s markers replaced by `table`.
fn splice(doc: &str, name: &str, table: &str) -> Result<String, String> {
    let (begin, end) = (doc_tables::begin(name), doc_tables::end(name));
    let start = doc.find(&begin).ok_or_else(|| format!("no {begin} in the doc"))?;
    let stop = doc[start..].find(&end).map(|at| start + at + end.len()).ok_or_else(|| format!("no {end} after {begin} in the doc"))?;
    Ok(format!("{}{}{}", &doc[..start], doc_tables::marked(name, table), &doc[stop..]))
}

/// Fails when the doc's generated tables are out of date; `QUICKACT_WRITE_DOCS=1` rewrites them
/// (then commit the doc).
#[test]
fn the_docs_generated_tables_match_the_rules_and_the_corpus() {
    let doc = std::fs::read_to_string(DOC).unwrap_or_else(|e| panic!("{DOC}: {e}"));
    let mut generated = doc.clone();
    let mut stale = Vec::new();
    for (name, table) in doc_tables::sections() {
        let spliced = splice(&generated, name, &table).unwrap_or_else(|e| panic!("docs/local-provider.md: {e}"));
        if spliced != generated {
            stale.push(name);
        }
        generated = spliced;
    }
    if std::env::var_os("QUICKACT_WRITE_DOCS").is_some() {
        std::fs::write(DOC, &generated).unwrap_or_else(|e| panic!("{DOC}: {e}"));
        return;
    }
    assert!(stale.is_empty(), "the generated tables {stale:?} of docs/local-provider.md are out of date: run `{REWRITE}` and commit the doc");
}

#[test]
fn kinds_are_counted_in_the_order_they_first_appear() {
    let corpus = "# a comment\tnot\ta case\n\ncreate/a\tone\tcreates todo\ncreate/a\ttwo\ndelete/b\tthree\n  \ncreate/a\tfour\n";
    assert_eq!(doc_tables::kinds(corpus), [("create/a", 3, "one"), ("delete/b", 1, "three")]);
}

#[test]
fn a_cell_escapes_what_would_break_the_table() {
    assert_eq!(doc_tables::text("a|b <length>"), "a\\|b &lt;length>");
    assert_eq!(doc_tables::code("\"x\"|\"y\""), "`\"x\"\\|\"y\"`");
    assert_eq!(doc_tables::code("a `b`"), "`` a `b` ``");
}

#[test]
fn splicing_replaces_only_the_marked_section() {
    let doc = "intro\n<!-- rules:begin -->\nold\n<!-- rules:end -->\nafter\n";
    assert_eq!(splice(doc, "rules", "new\n").unwrap(), "intro\n<!-- rules:begin -->\nnew\n<!-- rules:end -->\nafter\n");
    assert!(splice(doc, "kinds", "x\n").is_err());
}
