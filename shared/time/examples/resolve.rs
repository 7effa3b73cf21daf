//! Prints the resolver's reading of each argument at 2026-02-07 09:00 Asia/Shanghai:
//! `cargo run -p quickact-time --example resolve -- "下周同一时间" "next friday 3pm"`.
use chrono::TimeZone;

fn main() {
    let ctx = quickact_time::TimeContext::new(chrono::Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
    for text in std::env::args().skip(1) {
        match quickact_time::resolve(&text, &ctx) {
            Some(r) => println!("{text}\n  {}", serde_json::to_string(&r).unwrap_or_default()),
            None => println!("{text}\n  (not read)"),
        }
    }
}
