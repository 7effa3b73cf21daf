//! Every rule reads the sentences it names as its examples: the reading is certain and its first
//! frame comes from that rule. A rule's examples are its documentation (docs/local-provider.md
//! lists them), so they must stay true.

use chrono::TimeZone;
use quickact_reader::{read, rules::RULES};
use quickact_time::TimeContext;

#[test]
fn every_rule_reads_its_own_examples() {
    let ctx = TimeContext::new(chrono::Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
    let mut wrong = Vec::new();
    for rule in RULES {
        assert!(!rule.examples.is_empty(), "{} has no example", rule.name);
        for example in rule.examples {
            let reading = read(example, &ctx);
            let first = reading.frames.iter().map(|f| f.rule).next();
            if !reading.is_certain() || !reading.frames.iter().any(|f| f.rule == rule.name) {
                wrong.push(format!("{}: {example:?} read by {first:?}, {:?}, unread {:?}", rule.name, reading.verdict, reading.unread.iter().map(|u| &u.text).collect::<Vec<_>>()));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn rule_names_are_unique_and_say_their_family() {
    let mut names: Vec<&str> = RULES.iter().map(|r| r.name).collect();
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "two rules share a name");
    for rule in RULES {
        let family = rule.name.split('.').next().unwrap_or_default();
        assert!(["create", "move", "shift", "delete", "complete", "list"].contains(&family), "{}", rule.name);
        assert!(!rule.reads.is_empty(), "{} says what it reads", rule.name);
    }
}
