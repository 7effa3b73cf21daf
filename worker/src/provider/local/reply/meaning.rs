//! What a reply says, read against the question it answers: the option(s) it points at (its
//! number, an ordinal, a pointer, the option's id, time or title), a new time, a force despite the
//! conflict, or a plain yes. Its words are the lexicon's: the replies of `lexicon/replies.tsv` and
//! the glue sets of `lexicon/glue.tsv`.

use std::sync::LazyLock;

use chrono::NaiveTime;
use quickact_shared::{domain::task::Question as QuestionKind, planner::selector::TimeOfDay};
use quickact_time::{Segment, TimeContext, find_all, is_chinese};
use serde_json::Value;

use quickact_reader::lexicon::{Category, Glue, lexicon};

use crate::agent::question::Question;

/// The words of replies, from the lexicon (`lexicon/replies.tsv`), by what they say.
struct ReplyWords {
    /// Move to a new time rather than point at an option by its time (`sub=move`).
    moves: Vec<&'static str>,
    /// Write the change despite the conflict (`sub=force`).
    force: Vec<&'static str>,
    /// Accept the suggestion (a passed time: the next occurrence; a conflict: as proposed).
    yes: Vec<&'static str>,
    /// No: a reply with one picks nothing ("都不是", "不是第二个", "neither"), except inside words
    /// that say to go ahead despite the conflict ("不管冲突", "没关系").
    no: Vec<&'static str>,
    /// Every option. A bare 都 is none: "都可以" / "都行" (either is fine) is no choice.
    all: Vec<&'static str>,
}

static WORDS: LazyLock<ReplyWords> = LazyLock::new(|| {
    let of = |sub: &str| lexicon().forms_of(Category::Reply, sub);
    ReplyWords { moves: of("move"), force: of("force"), yes: of("yes"), no: of("no"), all: of("all") }
});

/// What a reply says.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Reply {
    /// The options it chose (indexes), when it points at some.
    pub(super) picked: Vec<usize>,
    /// A new time, as written.
    pub(super) new_time: Option<String>,
    /// Write the change despite the conflict.
    pub(super) force: bool,
    /// A plain yes: take the suggestion.
    pub(super) yes: bool,
}

impl Reply {
    pub(super) fn read(said: &str, number: Option<usize>, question: &Question, time: &TimeContext) -> Reply {
        let text = said.trim().trim_matches(|c: char| "。.!！?？~～，,".contains(c)).trim();
        let lower = text.to_lowercase();
        let count = question.options.len();
        let mut reply = Reply::default();
        let times: Vec<_> = find_all(text, time).into_iter().filter(|m| !is_ordinal_word(&m.text)).collect();
        let words = &*WORDS;
        let moves = words.moves.iter().any(|m| lower.contains(m));
        // A time that answers a conflict or a passed time is the new time; among options, only
        // with a word that moves ("改到明天", "tomorrow instead"), else it points at an option.
        let time_is_new = question.kind != QuestionKind::WhichItem || moves;
        if time_is_new && let Some(first) = times.first() {
            let last = times.last().expect("one at least");
            let chars: Vec<char> = text.chars().collect();
            reply.new_time = Some(chars[first.span.0..last.span.1].iter().collect::<String>().trim().to_owned());
        }
        // "不管冲突" and "没关系" say to go ahead: their negation is not the reply's.
        let unforced = words.force.iter().fold(lower.clone(), |rest, w| rest.replace(w, " "));
        let said_words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric() && c != '\'').collect();
        let negated = words.no.iter().any(|w| if is_chinese(w) { unforced.contains(w) } else { said_words.contains(w) });
        reply.force = !negated && words.force.iter().any(|w| lower.contains(w));
        if negated {
            // Nothing picked, nothing accepted: the run says how to answer, and changes nothing.
            reply.new_time = None;
            return reply;
        }
        reply.yes = is_yes(&lower);
        if count == 0 {
            return reply;
        }
        if let Some(number) = number.or_else(|| bare_number(text)).filter(|n| (1..=count).contains(n)) {
            reply.picked = vec![number - 1];
            return reply;
        }
        if let Some(at) = question.options.iter().position(|o| o["id"].as_str().is_some_and(|id| lower.contains(&id.to_lowercase()))) {
            reply.picked = vec![at];
            return reply;
        }
        if let Some(at) = ordinal(&lower, count) {
            reply.picked = vec![at];
            return reply;
        }
        if words.all.iter().any(|w| if w.contains(' ') || is_chinese(w) { lower.contains(w) } else { lower.split(|c: char| !c.is_alphanumeric()).any(|word| word == *w) }) {
            reply.picked = (0..count).collect();
            return reply;
        }
        if !time_is_new
            && let Some(at) = by_time(question, &times) {
                reply.picked = vec![at];
                return reply;
            }
        if let Some(at) = by_title(question, text, &times) {
            reply.picked = vec![at];
        }
        reply
    }
}

/// `#2 ...` (how the API stores an option): its number and the rest.
pub(super) fn option_prefix(sentence: &str) -> (Option<usize>, &str) {
    let trimmed = sentence.trim();
    let Some(rest) = trimmed.strip_prefix('#') else { return (None, trimmed) };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    match rest[..digits].parse() {
        Ok(number) => (Some(number), rest[digits..].trim()),
        Err(_) => (None, trimmed),
    }
}

/// A reply that is only a number ("2", "２", "2号", "option 2", "no. 2", "number 2").
fn bare_number(text: &str) -> Option<usize> {
    let lower = text.to_lowercase();
    let core = Glue::OptionLead.words().iter().fold(lower.trim(), |t, w| t.strip_prefix(w).unwrap_or(t).trim());
    let core = Glue::OptionTail.words().iter().fold(core, |t, w| t.strip_suffix(w).unwrap_or(t).trim());
    let digits: String = core.chars().map(|c| if ('０'..='９').contains(&c) { char::from(b'0' + (c as u32 - '０' as u32) as u8) } else { c }).collect();
    digits.parse().ok()
}

/// A word the resolver may read as a time but that counts options ("第二个", "the second one").
fn is_ordinal_word(text: &str) -> bool {
    let lower = text.to_lowercase();
    Glue::OrdinalMark.words().iter().chain(Glue::OrdinalTime.words()).any(|w| lower.contains(w))
}

/// An ordinal or a pointer to a place in the list: "第二个", "第2个", "倒数第二个", "最后一个",
/// "后面那个", "前面那个", "the second one", "the 2nd", "the last one", "the former", "the latter".
fn ordinal(lower: &str, count: usize) -> Option<usize> {
    let from_end = Glue::FromEnd.words().iter().any(|w| lower.contains(w));
    let place = |n: usize| -> Option<usize> {
        if !(1..=count).contains(&n) {
            return None;
        }
        Some(if from_end { count - n } else { n - 1 })
    };
    // The count an ordinal word carries in its set (`zh_number`, `ordinal`), as a place.
    let counted = |set: Glue, word: &str| set.value(word).and_then(|n| usize::try_from(n).ok()).and_then(place);
    if let Some(rest) = Glue::OrdinalMark.words().iter().find_map(|mark| lower.find(mark).map(|at| &lower[at + mark.len()..])) {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse::<usize>() {
            return place(n);
        }
        if let Some(number) = Glue::ZhNumber.words().iter().find(|w| rest.starts_with(*w)) {
            return counted(Glue::ZhNumber, number);
        }
    }
    if let Some(pointer) = Glue::ZhPointer.words().iter().find(|w| lower.contains(*w)) {
        return pointed(Glue::ZhPointer, pointer, count);
    }
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    if Glue::BeforeLast.words().iter().all(|w| words.contains(w)) {
        return (count >= 2).then(|| count - 2);
    }
    if let Some(pointer) = Glue::Pointer.words().iter().find(|w| words.contains(w)) {
        return pointed(Glue::Pointer, pointer, count);
    }
    Glue::Ordinal.words().iter().find(|w| words.contains(w)).and_then(|w| counted(Glue::Ordinal, w))
}

/// The option a pointer points at among `count`: its value in `set`, 1 the first, -1 the last.
fn pointed(set: Glue, pointer: &str, count: usize) -> Option<usize> {
    let place = set.value(pointer)?;
    let at = if place < 0 { count.checked_sub(place.unsigned_abs() as usize) } else { usize::try_from(place - 1).ok() };
    at.filter(|at| *at < count)
}

/// The one option at the time (and day) the reply names: "the one at 3pm", "下午3点那个", "明天那个".
/// An option is at a time of day as a search by time picks items ([`TimeOfDay`]).
fn by_time(question: &Question, times: &[quickact_time::TimeMatch]) -> Option<usize> {
    let stated = times.first()?;
    let resolution = &stated.resolution;
    let date = resolution.day_stated.then(|| resolution.date.to_string());
    let at = TimeOfDay::of(resolution);
    if date.is_none() && at.is_none() {
        return None;
    }
    the_one_option(question, |option| {
        let field = |key: &str| option.get(key).and_then(Value::as_str);
        let start = field("start_time").and_then(|s| NaiveTime::parse_from_str(s, "%H:%M").ok());
        let segment = field("segment").and_then(|s| s.parse::<Segment>().ok());
        date.as_deref().is_none_or(|d| field("date") == Some(d)) && at.is_none_or(|at| at.selects(start, segment))
    })
}

/// The index of the one option `fits`, `None` when none or several do.
fn the_one_option(question: &Question, fits: impl Fn(&Value) -> bool) -> Option<usize> {
    let mut fitting = question.options.iter().enumerate().filter(|(_, option)| fits(option)).map(|(at, _)| at);
    let first = fitting.next()?;
    fitting.next().is_none().then_some(first)
}

/// The one option whose title holds the words of the reply ("the dentist one", "牙医那个").
fn by_title(question: &Question, text: &str, times: &[quickact_time::TimeMatch]) -> Option<usize> {
    let spans: Vec<(usize, usize)> = times.iter().map(|m| m.span).collect();
    let rest = remove_spans(text, &spans).to_lowercase();
    let words: Vec<String> = if is_chinese(&rest) {
        let squashed: String = rest.split_whitespace().collect();
        // The Chinese fillers only: "i" or "one" may stand inside a word of the title.
        let core = Glue::TitleFiller.words().iter().filter(|w| is_chinese(w)).fold(squashed, |t, w| t.replace(w, ""));
        if core.chars().count() < 1 { return None }
        vec![core]
    } else {
        rest.split(|c: char| !c.is_alphanumeric() && c != '\'').filter(|w| !w.is_empty() && !Glue::TitleFiller.has(w)).map(str::to_owned).collect()
    };
    if words.is_empty() {
        return None;
    }
    the_one_option(question, |option| {
        let title = option.get("title").and_then(Value::as_str).unwrap_or("").to_lowercase();
        words.iter().all(|w| title.contains(w.as_str()))
    })
}

fn is_yes(lower: &str) -> bool {
    let core = lower.trim_matches(|c: char| !c.is_alphanumeric());
    WORDS.yes.iter().any(|w| core == *w || core.starts_with(&format!("{w} ")) || (is_chinese(w) && core.starts_with(w) && core.chars().count() <= 3))
}

/// `text` without the code-point ranges `spans` (sorted, apart), each replaced by a space.
fn remove_spans(text: &str, spans: &[(usize, usize)]) -> String {
    text.chars().enumerate().map(|(i, c)| if spans.iter().any(|(a, b)| (*a..*b).contains(&i)) { ' ' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use serde_json::json;

    use super::*;

    fn time() -> TimeContext {
        TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai)
    }

    fn which(options: &[(&str, &str, &str, Option<&str>)]) -> Question {
        Question {
            sentence: "删除会议".into(),
            reference_time: time().now().with_timezone(&Utc),
            asked_reference_time: time().now().with_timezone(&Utc),
            time_zone: chrono_tz::Asia::Shanghai,
            earlier_replies: vec![],
            kind: QuestionKind::WhichItem,
            message: String::new(),
            suggestion: None,
            options: options
                .iter()
                .map(|(id, title, date, start)| json!({ "id": id, "title": title, "date": date, "start_time": start }))
                .collect(),
            proposed: None,
        }
    }

    fn picked(question: &Question, said: &str) -> Vec<usize> {
        let (number, said) = option_prefix(said);
        Reply::read(said, number, question, &time()).picked
    }

    #[test]
    fn ordinals_numbers_and_pointers_pick_one_option() {
        let q = which(&[
            ("a1", "项目会议", "2026-02-07", Some("10:00")),
            ("b2", "牙医 dentist", "2026-02-08", Some("15:00")),
            ("c3", "周会", "2026-02-08", Some("20:00")),
        ]);
        for (said, want) in [
            ("#2", 1), ("3", 2), ("２", 1), ("第二个", 1), ("第3个", 2), ("就第一个吧", 0), ("最后一个", 2), ("后面那个", 2), ("倒数第二个", 1),
            ("the second one", 1), ("the 3rd", 2), ("the last one", 2), ("first", 0), ("option 2", 1), ("b2", 1),
            ("the one at 3pm", 1), ("下午3点那个", 1), ("晚上8点的", 2), ("今天那个", 0), ("the dentist one", 1), ("周会那个", 2),
            ("上午那个", 0), ("the morning one", 0), ("下午的", 1), ("the evening one", 2),
        ] {
            assert_eq!(picked(&q, said), vec![want], "{said}");
        }
    }

    #[test]
    fn a_reply_that_names_no_single_option_picks_none() {
        let q = which(&[("a1", "项目会议", "2026-02-07", Some("10:00")), ("b2", "周会", "2026-02-08", Some("10:00"))]);
        for said in ["10点那个", "上午的", "第五个", "the fourth one", "随便", "whatever", "7", "the one tonight"] {
            assert!(picked(&q, said).is_empty(), "{said}");
        }
        for said in ["都不是", "不是第二个", "别删第一个", "neither", "not the first one", "none of them", "都可以", "都行"] {
            assert!(picked(&q, said).is_empty(), "{said}");
        }
        assert_eq!(picked(&q, "都删了"), vec![0, 1]);
        assert_eq!(picked(&q, "both"), vec![0, 1]);
    }

    #[test]
    fn a_conflict_reply_reads_a_new_time_or_a_force() {
        let mut q = which(&[]);
        q.kind = QuestionKind::Conflict;
        let read = |said: &str| Reply::read(said, None, &q, &time());
        assert!(read("冲突也要添加").force);
        assert!(read("add it anyway").force);
        assert_eq!(read("改到明天").new_time.as_deref(), Some("明天"));
        assert_eq!(read("tomorrow at 4 instead").new_time.as_deref(), Some("tomorrow at 4"));
        assert_eq!(read("那就下午5点吧").new_time.as_deref(), Some("下午5点"));
        assert!(read("yes").yes && read("好的").yes && !read("好的，改到明天").yes);
        assert!(read("不管冲突，加上").force && read("没关系").force);
        let no = read("不要加了");
        assert!(!no.force && !no.yes && no.new_time.is_none());
        assert!(!read("don't add it").force && !read("no, not anyway").force);
    }
}
