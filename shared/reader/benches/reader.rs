//! Throughput of the local reader (`harness = false`, plain `std::time::Instant`): every sentence
//! of the corpus (`corpus.tsv`, Chinese, English and mixed, one to three clauses), read whole
//! (the resolver's pass included), for several rounds; prints the median sentences per second on
//! one thread. `cargo bench -p quickact-reader --bench reader`; `READER_BENCH_ROUNDS` sets the
//! round count. The goal is at least 20,000 sentences/s.

use std::{
    hint::black_box,
    time::{Duration, Instant},
};

use chrono::TimeZone;
use quickact_reader::read;
use quickact_time::TimeContext;

fn main() {
    let sentences: Vec<&str> = include_str!("../corpus.tsv")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split('\t').nth(1))
        .collect();
    assert!(sentences.len() >= 200, "the corpus has {} sentences", sentences.len());
    let ctx = TimeContext::new(chrono::Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
    let rounds: usize = std::env::var("READER_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(9);
    // The lexicon is built on first use: not part of a sentence's cost.
    let certain = sentences.iter().filter(|s| read(s, &ctx).is_certain()).count();
    for _ in 0..3 {
        for s in &sentences {
            black_box(read(black_box(s), &ctx));
        }
    }
    let target = Duration::from_millis(500);
    let mut rates = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let start = Instant::now();
        let mut n = 0usize;
        while start.elapsed() < target {
            for s in &sentences {
                black_box(read(black_box(s), &ctx));
            }
            n += sentences.len();
        }
        let secs = start.elapsed().as_secs_f64();
        let rate = n as f64 / secs;
        println!("round {:>2}: {n:>8} sentences in {secs:.3}s = {rate:>9.0} sentences/s", round + 1);
        rates.push(rate);
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    let median = rates[rates.len() / 2];
    println!(
        "reader: median {median:.0} sentences/second ({:.1} µs each) over {rounds} rounds of the corpus's {} sentences ({certain} read with certainty)",
        1e6 / median,
        sentences.len()
    );
}
