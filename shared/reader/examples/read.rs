//! Prints how the reader reads each argument: `cargo run -p quickact-reader --example read -- "明天下午3点开会"`.
use chrono::TimeZone;
use quickact_time::TimeContext;

fn main() {
    let ctx = TimeContext::new(chrono::Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
    for text in std::env::args().skip(1) {
        let reading = quickact_reader::read(&text, &ctx);
        println!("{text}\n  {:?}", reading.verdict);
        for frame in &reading.frames {
            let mut f = serde_json::to_value(frame).unwrap();
            f.as_object_mut().unwrap().remove("parts");
            println!("  {f}");
        }
        for u in &reading.unread {
            println!("  unread {:?} {}", u.text, u.reason);
        }
    }
}
