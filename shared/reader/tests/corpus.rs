//! Every case of the corpus (`corpus.tsv`), read: the reading must be as sure as the case needs
//! and ask for the actions it names. The worker's end-to-end tests run the same cases through the
//! service and check their effects; this checks the reading alone, in milliseconds.
//!
//! `READER_CORPUS=/path/to/more.tsv` reads another file of the same format instead and prints
//! every case whose reading does not fit (for a blind round's first look, before the service).

use chrono::{NaiveDateTime, TimeZone};
use quickact_reader::{Act, Reading, Verdict, read};
use quickact_time::TimeContext;

/// One case: where it is, the sentence and what it must do.
struct Case {
    line: usize,
    kind: String,
    text: String,
    expect: String,
    now: String,
    tz: String,
}

fn cases(text: &str) -> Vec<Case> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let columns: Vec<&str> = line.split('\t').collect();
        let column = |i: usize, default: &str| columns.get(i).map(|c| c.trim()).filter(|c| !c.is_empty() && *c != "-").unwrap_or(default).to_owned();
        out.push(Case {
            line: n + 1,
            kind: column(0, ""),
            text: column(1, ""),
            expect: column(2, ""),
            now: column(4, "2026-02-07 09:00"),
            tz: column(5, "Asia/Shanghai"),
        });
    }
    out
}

/// The acts a case's expectation needs, in order, or the verdict it needs.
enum Needs {
    Acts(Vec<&'static [Act]>),
    Verdict(Verdict),
    /// Not acting: uncertain or no request.
    NoAction,
}

fn needs(expect: &str) -> Needs {
    const TARGETED: &[Act] = &[Act::Complete, Act::Delete, Act::Move, Act::Shift];
    let one = |effect: &str| -> Option<&'static [Act]> {
        let effect = effect.trim();
        Some(match effect.split_whitespace().next()? {
            "creates" => &[Act::Create],
            "completes" => &[Act::Complete],
            "deletes" => &[Act::Delete],
            "moves" => &[Act::Move, Act::Shift],
            "lists" => &[Act::List],
            // A create whose time hangs on another item searches for it too.
            "not" => &[Act::Complete, Act::Delete, Act::Move, Act::Shift, Act::Create],
            "asks" if effect.starts_with("asks which") => TARGETED,
            "asks" if effect.starts_with("asks what") => return None,
            "asks" => &[Act::Create, Act::Move, Act::Shift],
            _ => return None,
        })
    };
    if expect.starts_with("declines") {
        return Needs::NoAction;
    }
    if expect.starts_with("asks what") {
        return Needs::Verdict(Verdict::Vague);
    }
    match expect.split("&&").map(one).collect::<Option<Vec<_>>>() {
        Some(acts) => Needs::Acts(acts),
        None => panic!("an expectation the test does not know: {expect:?}"),
    }
}

/// What is wrong with the reading of a case, if anything.
fn check(case: &Case) -> Option<String> {
    let tz: chrono_tz::Tz = case.tz.parse().unwrap_or_else(|_| panic!("line {}: zone {:?}", case.line, case.tz));
    let local = NaiveDateTime::parse_from_str(&case.now, "%Y-%m-%d %H:%M").unwrap_or_else(|_| panic!("line {}: now {:?}", case.line, case.now));
    let now = tz.from_local_datetime(&local).earliest().expect("a local time that exists").with_timezone(&chrono::Utc);
    let reading = read(&case.text, &TimeContext::new(now, tz));
    let fits = match needs(&case.expect) {
        Needs::NoAction => !reading.is_certain() && reading.verdict != Verdict::Vague,
        Needs::Verdict(verdict) => reading.verdict == verdict,
        // Several clauses may make one effect ("move X to 2pm, then push it back 15 minutes"),
        // and a question or "not found" may come from any of them.
        Needs::Acts(acts) => {
            reading.is_certain() && reading.frames.len() >= acts.len() && reading.frames.iter().all(|frame| acts.iter().any(|allowed| allowed.contains(&frame.act)))
        }
    };
    (!fits).then(|| format!("line {} [{}] {:?}: expected {:?}, read {}", case.line, case.kind, case.text, case.expect, describe(&reading)))
}

fn describe(reading: &Reading) -> String {
    let frames: Vec<String> = reading
        .frames
        .iter()
        .map(|f| {
            let mut v = serde_json::to_value(f).unwrap();
            v.as_object_mut().unwrap().remove("parts");
            v.to_string()
        })
        .collect();
    let unread: Vec<String> = reading.unread.iter().map(|u| format!("{:?} ({})", u.text, u.reason)).collect();
    format!("{:?} {} unread [{}]", reading.verdict, frames.join(" "), unread.join(", "))
}

#[test]
fn every_case_of_the_corpus_is_read_as_the_action_it_names() {
    let (name, text) = match std::env::var("READER_CORPUS") {
        Ok(path) => (path.clone(), std::fs::read_to_string(&path).expect("the corpus file")),
        Err(_) => ("corpus.tsv".to_owned(), include_str!("../corpus.tsv").to_owned()),
    };
    let cases = cases(&text);
    let failures: Vec<String> = cases.iter().filter_map(check).collect();
    let extra = std::env::var("READER_CORPUS").is_ok();
    println!("{name}: {} of {} cases read as they must be", cases.len() - failures.len(), cases.len());
    if extra {
        for failure in &failures {
            println!("{failure}");
        }
        return;
    }
    assert!(cases.len() >= 200, "{} cases", cases.len());
    assert!(failures.is_empty(), "{} of {} cases:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
