//! Peer-corpus runner: scores the time resolver on the shared eval file
//! (`time-expressions.jsonl`, items from Duckling, chrono and JioNLP test suites).
//!
//! Usage: `cargo run --release --example time_eval [-- [PATH | --file PATH] [--zone TZ] [--quiet]]`
//!
//! Without a path it looks for `shared/eval/time-expressions.jsonl` next to (or above) the
//! workspace root and the current directory, so it works from the service repo and from a
//! standalone checkout. Floating references (no offset) are read as wall-clock time in `--zone`
//! (default UTC); references with an offset use that fixed offset as the zone (Etc/GMT±h).
//! Scoring follows the corpus README: the date exactly (or inside [date, end_date] for fuzzy
//! spans), start/end exactly when expected (not for end-exclusive part-of-day spans), implied
//! part-of-day hours are not scored, and `score_fields` restricts the fields.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, TimeZone};
use chrono_tz::Tz;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use quickact_time::{TimeContext, TimeMatch, find_all};

const FILE: &str = "time-expressions.jsonl";

fn default_path() -> Option<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd);
    }
    roots.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    for root in roots {
        for anc in root.ancestors() {
            for cand in [
                anc.join("shared/eval").join(FILE),
                anc.join("../shared/eval").join(FILE),
            ] {
                if cand.is_file() {
                    return Some(cand);
                }
            }
        }
    }
    None
}

fn zone_for_offset(off: FixedOffset) -> Option<Tz> {
    let secs = off.local_minus_utc();
    if secs % 3600 != 0 {
        return None;
    }
    let h = secs / 3600;
    let name = if h == 0 {
        "Etc/GMT".to_string()
    } else {
        format!("Etc/GMT{:+}", -h)
    };
    name.parse().ok()
}

/// The reference instant and zone of an item.
fn context(rf: &Value, floating_zone: Tz) -> Option<TimeContext> {
    let s = rf.as_str().unwrap_or("2020-01-01T00:00:00");
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        let tz = zone_for_offset(*dt.offset())?;
        return Some(TimeContext::new(dt.to_utc(), tz));
    }
    let naive = NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S").ok()?;
    let local = floating_zone.from_local_datetime(&naive).earliest()?;
    Some(TimeContext::new(local.to_utc(), floating_zone))
}

fn char_index(hay: &str, needle: &str) -> Option<(usize, usize)> {
    let b = hay.find(needle)?;
    let s = hay[..b].chars().count();
    Some((s, s + needle.chars().count()))
}

fn pick(ms: &[TimeMatch], span: Option<(usize, usize)>) -> Option<&TimeMatch> {
    if let Some((s, e)) = span {
        let best = ms
            .iter()
            .map(|m| (m.span.1.min(e) as isize - m.span.0.max(s) as isize, m))
            .filter(|(ov, _)| *ov > 0)
            .max_by_key(|(ov, m)| (*ov, -(m.span.0 as isize)));
        if let Some((_, m)) = best {
            return Some(m);
        }
    }
    ms.iter()
        .max_by_key(|m| (m.span.1 - m.span.0, -(m.span.0 as isize)))
}

fn date(v: &Value, k: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(v.get(k)?.as_str()?, "%Y-%m-%d").ok()
}

fn hm(v: &Value, k: &str) -> Option<String> {
    v.get(k)?.as_str().map(|s| s.to_string())
}

/// Score one item: (ok, reason).
fn score(item: &Value, m: Option<&TimeMatch>) -> (bool, String) {
    let Some(m) = m else {
        return (false, "no match".into());
    };
    let r = &m.resolution;
    let exp = &item["expect"];
    let fields: Option<Vec<String>> =
        item.get("score_fields")
            .and_then(|f| f.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            });
    let want = |f: &str| fields.as_ref().is_none_or(|fs| fs.iter().any(|x| x == f));
    let end_excl = exp
        .get("end_exclusive")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let cat = item["category"].as_str().unwrap_or("");
    let mut errs = Vec::new();
    if want("date") {
        let d = date(exp, "date");
        let ed = date(exp, "end_date");
        let has_end = exp.get("end").is_some();
        let ok = match (d, ed) {
            (Some(d), Some(ed)) if !has_end => {
                if cat == "range" || cat == "weekday" {
                    r.date == d && r.end_date == Some(ed)
                } else {
                    (r.date >= d && r.date <= ed) || (r.date == d && r.end_date == Some(ed))
                }
            }
            (Some(d), _) => r.date == d,
            _ => false,
        };
        if !ok {
            errs.push("date");
        }
    }
    let fmt = |t: Option<chrono::NaiveTime>| t.map(|t| t.format("%H:%M").to_string());
    if !end_excl {
        if let Some(s) = hm(exp, "start")
            && want("start")
            && fmt(r.start_time).as_deref() != Some(s.as_str())
        {
            errs.push("start");
        }
        if let Some(e) = hm(exp, "end")
            && want("end")
        {
            let ed_ok = match date(exp, "end_date") {
                Some(ed) => r.end_date.unwrap_or(r.date) == ed,
                None => r.end_date.is_none_or(|x| x == r.date),
            };
            if fmt(r.end_time).as_deref() != Some(e.as_str()) || !ed_ok {
                errs.push("end");
            }
        }
    }
    (errs.is_empty(), errs.join(","))
}

#[derive(Default)]
struct Tally {
    ok: usize,
    n: usize,
}

fn report(title: &str, map: &BTreeMap<String, Tally>) {
    println!("{title}:");
    for (k, t) in map {
        println!(
            "  {:<28} {:>4}/{:<4} {:6.1}%",
            k,
            t.ok,
            t.n,
            100.0 * t.ok as f64 / t.n.max(1) as f64
        );
    }
}

fn main() {
    let mut path: Option<PathBuf> = None;
    let mut zone: Tz = chrono_tz::UTC;
    let mut quiet = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--file" => path = args.next().map(PathBuf::from),
            "--zone" => {
                zone = args.next().and_then(|z| z.parse().ok()).unwrap_or_else(|| {
                    eprintln!("--zone needs an IANA zone name");
                    std::process::exit(2)
                })
            }
            "--quiet" => quiet = true,
            _ => path = Some(PathBuf::from(a)),
        }
    }
    let Some(path) = path.or_else(default_path) else {
        eprintln!("cannot find shared/eval/{FILE}; pass its path (or --file PATH)");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(Path::new(&path)).unwrap_or_else(|e| {
        eprintln!("cannot read {}: {e}", path.display());
        std::process::exit(2)
    });
    let mut by_source: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_lang: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_cat: BTreeMap<String, Tally> = BTreeMap::new();
    let mut total = Tally::default();
    let mut failures = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let item: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("bad line: {e}");
                continue;
            }
        };
        let text = item["text"].as_str().unwrap_or("");
        let Some(ctx) = context(&item["ref"], zone) else {
            eprintln!("bad ref in {}", item["id"]);
            continue;
        };
        let ms = find_all(text, &ctx);
        let span = item
            .get("span")
            .and_then(|s| s.as_str())
            .and_then(|s| char_index(text, s));
        let m = pick(&ms, span);
        let (ok, why) = score(&item, m);
        for (map, key) in [
            (&mut by_source, item["source"].as_str().unwrap_or("?")),
            (&mut by_lang, item["lang"].as_str().unwrap_or("?")),
            (&mut by_cat, item["category"].as_str().unwrap_or("?")),
        ] {
            let t = map.entry(key.to_string()).or_default();
            t.n += 1;
            t.ok += ok as usize;
        }
        total.n += 1;
        total.ok += ok as usize;
        if !ok {
            let got = m
                .map(|m| {
                    format!(
                        "{:?} {}",
                        m.text,
                        serde_json::to_string(&m.resolution).unwrap_or_default()
                    )
                })
                .unwrap_or_else(|| "-".into());
            failures.push(format!(
                "{} [{}] {:?} ref={} expected={} got={}",
                item["id"].as_str().unwrap_or("?"),
                why,
                text,
                item["ref"],
                item["expect"],
                got
            ));
        }
    }
    println!("file: {}", path.display());
    report("by source", &by_source);
    report("by language", &by_lang);
    report("by category", &by_cat);
    println!(
        "overall: {}/{} = {:.1}%",
        total.ok,
        total.n,
        100.0 * total.ok as f64 / total.n.max(1) as f64
    );
    if !quiet {
        println!("failures ({}):", failures.len());
        for f in &failures {
            println!("  {f}");
        }
    }
}
