//! The reader reads anything without panicking: sentences built at random from its own words, time
//! words, numbers, punctuation, emoji and stray letters, in both scripts and mixed.

use chrono::TimeZone;
use quickact_reader::{lexicon::lexicon, read};
use quickact_time::TimeContext;

/// A small deterministic generator (xorshift), so a failure repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

#[test]
fn random_sentences_of_known_and_stray_words_never_panic() {
    let forms: Vec<&str> = lexicon().entries.iter().map(|e| e.form).collect();
    let extra: &[&str] = &[
        "明天", "下午3点", "tomorrow", "at 5pm", "3", "三", "，", ",", "?", "？", "。", "!", "🎉", "🦷", "'s", "'", "…", "-", ":", "x", "qq", "会",
        "2月8日", "in 10 minutes", "every monday", "到", "把", "the", "it", "那个", " ", "  ", "12:30", "半小时", "30 minutes later",
    ];
    let ctx = TimeContext::new(chrono::Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut read_any = 0;
    for _ in 0..10_000 {
        let words = 1 + rng.next() % 8;
        let mut sentence = String::new();
        for _ in 0..words {
            let word = if rng.next().is_multiple_of(3) { rng.pick(extra) } else { rng.pick(&forms) };
            sentence.push_str(word);
            if rng.next().is_multiple_of(2) {
                sentence.push(' ');
            }
        }
        let reading = read(&sentence, &ctx);
        read_any += usize::from(!reading.frames.is_empty());
    }
    assert!(read_any > 0, "some random sentences read as something");
}
