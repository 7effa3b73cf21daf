use chrono::TimeZone;
use quickact_reader::{lexicon::lexicon, tokens::{Sentence, Tag}};
use quickact_time::TimeContext;

fn main() {
    let ctx = TimeContext::new(chrono::Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
    for text in std::env::args().skip(1) {
        let s = Sentence::read(&text, &ctx);
        for t in &s.tokens {
            let what = match t.tag {
                Tag::Word { entry, typo } => {
                    let e = lexicon().entry(entry);
                    format!("{:?}{}", e.senses.iter().map(|s| format!("{:?}", s.category)).collect::<Vec<_>>(), if typo { " typo" } else { "" })
                }
                other => format!("{other:?}"),
            };
            println!("{:>3}-{:<3} {:<20} {}", t.start, t.end, s.text_of(t), what);
        }
        println!();
    }
}
