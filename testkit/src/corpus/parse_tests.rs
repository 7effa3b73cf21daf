//! The corpus format's reader on rows written by hand: what each column reads as, and the error
//! each kind of malformed row gets.

use super::{
    case::{Case, Effect, Expect, When},
    parse::parse_corpus,
};

fn one(row: &str) -> Result<Case, String> {
    parse_corpus(row).map(|mut cases| cases.remove(0)).map_err(|errors| errors[0].to_string())
}

#[test]
fn a_row_with_every_column_reads_as_written() {
    let case = one("create/evening zone\tdinner with Ana at 7\tcreates event \"dinner with Ana\" 2026-03-10 19:00-20:00\t-\t2026-03-10 15:00\tAmerica/New_York").unwrap();
    assert_eq!(case.family(), "create");
    assert_eq!(case.now_rfc3339(), "2026-03-10T15:00:00-04:00");
    let Expect::Effects(effects) = &case.expect else { panic!("{case:?}") };
    let Effect::Creates(new) = &effects[0] else { panic!("{effects:?}") };
    assert_eq!((new.titles.clone(), new.when.clone()), (vec!["dinner with Ana".to_owned()], Some(When::Range("19:00".into(), "20:00".into()))));
    assert!(case.setup.is_empty());
}

#[test]
fn left_out_columns_take_the_defaults() {
    let case = one("move/to a new time\t把周会改到下午3点\tmoves #0 to 2026-02-09 15:00-16:00\tevent \"周会\" 2026-02-09 10:00-11:00").unwrap();
    assert_eq!(case.now_rfc3339(), "2026-02-07T09:00:00+08:00");
    assert_eq!(case.setup[0].json()["end_time"], "11:00");
    assert!(case.is_chinese());
}

#[test]
fn setup_items_take_priorities_states_recurrences_and_parts_of_day() {
    let case = one("list/x\tx\tlists in order #1 #0\ttodo \"a\" 2026-02-09 p2 done ; event \"b\" 2026-02-09 evening every FREQ=WEEKLY;BYDAY=MO").unwrap();
    assert_eq!(case.setup[0].json(), serde_json::json!({"kind": "todo", "title": "a", "date": "2026-02-09", "priority": 2, "status": "completed"}));
    assert_eq!(case.setup[1].json()["recurrence"], "FREQ=WEEKLY;BYDAY=MO");
    assert_eq!(case.expect, Expect::Lists { items: vec![1, 0], ordered: true });
}

#[test]
fn effects_join_and_alternative_titles_and_notes_are_read() {
    let case = one("several/x\tx\tdeletes #0 && creates event \"开周会\"|\"周会\" 2026-02-09 09:00-10:00 note \"bring it\"\ttodo \"a\" 2026-02-07").unwrap();
    let Expect::Effects(effects) = &case.expect else { panic!() };
    assert_eq!(effects[0], Effect::Deletes(vec![0]));
    let Effect::Creates(new) = &effects[1] else { panic!() };
    assert_eq!((new.titles.len(), new.note.as_deref()), (2, Some("bring it")));
}

#[test]
fn malformed_rows_are_each_reported_with_their_line() {
    let text = "# comment\n\nx/y\ttext\tdeletes #1\ttodo \"a\" 2026-02-07\nx\ttext\tdeclines\nx/y\ttext\tasks whom\nx/y\ttext\n";
    let errors = parse_corpus(text).unwrap_err();
    let lines: Vec<usize> = errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![3, 4, 5, 6]);
    assert!(errors[0].message.contains("#1 points past the setup"), "{}", errors[0]);
    assert!(errors[1].message.contains("family/kind"), "{}", errors[1]);
    assert!(errors[3].message.contains("2 tab-separated columns"), "{}", errors[3]);
}

#[test]
fn bad_fields_say_what_is_wrong() {
    for (row, words) in [
        ("a/b\tt\tcreates event 开会 2026-02-08", "not in double quotes"),
        ("a/b\tt\tcreates event \"开会\" 2026-02-30", "not YYYY-MM-DD"),
        ("a/b\tt\tcreates event \"开会\" 2026-02-08 25:00", "not HH:MM"),
        ("a/b\tt\tcreates todo \"x\" 2026-02-08 p5", "p1..p4"),
        ("a/b\tt\tlists && declines", "only effects"),
        ("a/b\tt\tdeletes #0 && completes #0\ttodo \"a\" 2026-02-07", "named by two effects"),
        ("a/b\tt\tdeclines\t-\t2026-03-08 02:30\tAmerica/New_York", "does not exist"),
        ("a/b\tt\tdeclines\t-\t-\tMars/Olympus", "not an IANA zone"),
        ("a/b\tt\tcreates todo \"x 2026-02-08", "never closed"),
        ("a/b\tt\tcreates todo \"x\"2026-02-08", "runs into"),
    ] {
        let error = one(row).unwrap_err();
        assert!(error.contains(words), "{row:?}: {error}");
    }
}
