//! Throughput of the time resolver (`harness = false`, plain `std::time::Instant`).
//!
//! Runs `find_all` over a realistic mix of Chinese and English inputs — bare expressions,
//! tool arguments and whole sentences, some with no time in them — for several rounds and prints
//! the median expressions/second. `cargo bench --bench time_resolver` (or
//! `cargo run --release --bench time_resolver`). Set `TIME_BENCH_ROUNDS` to change the round count.

use chrono::TimeZone;
use std::hint::black_box;
use std::time::{Duration, Instant};
use quickact_time::{TimeContext, find_all, resolve};

const MIX: &[&str] = &[
    "明天下午3点",
    "大后天晚上8点半",
    "下午3点到5点",
    "每周一",
    "每周一早上9点开例会",
    "明天下午3点到4点开会",
    "把2月8日的会议改到晚上8点",
    "完成报告提交",
    "下周三下午两点半在会议室",
    "3天后",
    "半小时后提醒我",
    "2026年3月5日",
    "三月五号上午十点",
    "今晚8点",
    "周五晚上吃饭",
    "每个工作日早上8点半",
    "下个月3号",
    "月底之前交报告",
    "１５：３０开会",
    "下午3点开始，持续2小时",
    "晚上11点到凌晨2点",
    "买牛奶",
    "这周末去爬山",
    "上周五的会议纪要",
    "明天上午9点到11点，下午2点到4点",
    "next monday 3pm",
    "move my dentist appointment to Friday 10am",
    "tomorrow at 9am",
    "in 2 hours",
    "3 days ago",
    "every weekday at 9:30am",
    "buy milk",
    "mark it done",
    "lunch with Tom on Friday",
    "from 3 to 5",
    "3:30 to 6 PM",
    "the day after tomorrow at 8pm",
    "end of the month",
    "March 5th",
    "Feb 8 2026",
    "call john at 5pm about the quarterly report and send the slides",
    "remind me in 45 minutes to check the oven",
    "July 13-15",
    "2026-03-05 15:30",
    "every other day",
    "next week",
    "tonight",
    "this afternoon at 3",
];

fn main() {
    let tz: chrono_tz::Tz = "Asia/Shanghai".parse().expect("zone");
    let now = tz
        .with_ymd_and_hms(2026, 3, 4, 10, 0, 0)
        .single()
        .expect("time")
        .to_utc();
    let ctx = TimeContext::new(now, tz);
    let rounds: usize = std::env::var("TIME_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(9);

    // sanity: the mix really contains expressions
    let matched = MIX.iter().filter(|s| !find_all(s, &ctx).is_empty()).count();
    assert!(
        matched * 10 >= MIX.len() * 8,
        "only {matched} of {} inputs matched",
        MIX.len()
    );
    assert!(resolve("明天下午3点", &ctx).is_some());

    // warm up
    for _ in 0..200 {
        for s in MIX {
            black_box(find_all(black_box(s), &ctx));
        }
    }
    let target = Duration::from_millis(300);
    let mut rates = Vec::with_capacity(rounds);
    let mut total_matches = 0usize;
    for round in 0..rounds {
        let start = Instant::now();
        let mut n = 0usize;
        while start.elapsed() < target {
            for s in MIX {
                total_matches += black_box(find_all(black_box(s), &ctx)).len();
            }
            n += MIX.len();
        }
        let secs = start.elapsed().as_secs_f64();
        let rate = n as f64 / secs;
        println!(
            "round {:>2}: {:>9} inputs in {:.3}s = {:>10.0} expressions/s",
            round + 1,
            n,
            secs,
            rate
        );
        rates.push(rate);
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    let median = rates[rates.len() / 2];
    println!(
        "time_resolver: median {:.0} expressions/second ({:.2} µs each) over {} rounds of a {}-input mix ({} matches)",
        median,
        1e6 / median,
        rounds,
        MIX.len(),
        black_box(total_matches)
    );
}
