//! Everyday ways of saying things the other readers expect in a plainer form: "w/" for "with",
//! a verb with its particle before the object ("push back the 1:1 with Alex 30 minutes", "call off
//! the offsite", "put off the review until friday"), a bare errand with no time or verb ("买菜",
//! "buy milk", "renew passport"), gatherings that are events even without a clock time ("明天开会",
//! "今天参加同学聚会", "dinner with Sam on friday"), and requests too vague to act on ("帮我安排一下",
//! "schedule something").

use quickact_time::{TimeContext, find_all};

use super::words::is_question;
use crate::provider::local::text::find_any;

/// The sentence in the plainer form the readers expect (English only; Chinese is returned as is).
pub(super) fn plain(text: &str, chinese: bool) -> String {
    if chinese {
        return polite_zh(without_lead_clause(text));
    }
    let mut out = with_for_w(&on_the_calendar(&polite_en(without_interjection(text))));
    out = particle_after_verb(&out);
    out
}

/// "帮我记一下，周五下午三点看房": a clause that only says "note this down" before the request.
fn without_lead_clause(text: &str) -> &str {
    const LEADS: [&str; 12] =
        ["帮我记一下", "帮我记下", "帮我记个事", "记一下", "记下", "帮我加一下", "帮我添加一下", "帮我安排一下", "安排一下", "帮个忙", "帮我个忙", "对了"];
    for lead in LEADS {
        if let Some(rest) = text.strip_prefix(lead)
            && let Some(rest) = ["，", ",", "：", ":", " "].iter().find_map(|p| rest.strip_prefix(p))
            && !rest.trim().is_empty()
        {
            return rest.trim();
        }
    }
    text
}

/// "hey, can you ...", "ok so ...": a word of greeting before the request says nothing.
fn without_interjection(text: &str) -> &str {
    let lower = text.to_ascii_lowercase();
    for word in ["hey there", "hey", "hi", "hello", "ok so", "okay so", "ok", "okay", "so", "um", "oh"] {
        if lower.starts_with(word) {
            let rest = &text[word.len()..];
            if let Some(rest) = [",", "!", " -", " "].iter().find_map(|p| rest.strip_prefix(p)).filter(|r| !r.trim().is_empty()) {
                return rest.trim_start_matches([',', ' ']);
            }
        }
    }
    text
}

/// "put a call with the accountant on my calendar for friday at 10": the item and its time; the
/// calendar is where every item goes ("add X to my schedule" is "add X").
fn on_the_calendar(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    for place in [
        " on my calendar", " in my calendar", " to my calendar", " from my calendar", " off my calendar", " on my schedule", " to my schedule",
        " in my schedule", " from my schedule", " on my agenda", " to my agenda", " to the calendar", " on the calendar", " from the calendar",
    ] {
        if let Some(at) = lower.find(place) {
            let before = &text[..at];
            let after = &text[at + place.len()..];
            // "take X off my calendar", "remove X from my schedule": X goes.
            if place.starts_with(" from") || place.starts_with(" off") {
                let before = ["take ", "remove ", "delete ", "drop ", "get "].iter().find(|v| lower.starts_with(**v)).map_or(before, |v| &before[v.len()..]);
                return format!("remove {before}{after}");
            }
            let before = ["put ", "pop ", "stick ", "get "].iter().find(|v| lower.starts_with(**v)).map_or(before, |v| &before[v.len()..]);
            return format!("{before}{after}");
        }
    }
    text.to_owned()
}

/// "能帮我把周会推迟半小时吗" -> "帮我把周会推迟半小时": a polite request is a request, not a question.
fn polite_zh(text: &str) -> String {
    const LEADS: [&str; 9] = ["能不能帮我", "可不可以帮我", "可以帮我", "能帮我", "麻烦你帮我", "麻烦帮我", "请你帮我", "你能帮我", "你可以帮我"];
    let Some(rest) = LEADS.iter().find_map(|lead| text.strip_prefix(lead)) else { return text.to_owned() };
    let rest = rest.trim_end_matches(['?', '？', '。']);
    let rest = ["好吗", "可以吗", "行吗", "好不好", "吗", "呢"].iter().find_map(|tail| rest.strip_suffix(tail)).unwrap_or(rest);
    format!("帮我{}", rest.trim_end_matches(['，', ',']))
}

/// "can you add lunch with Sam tomorrow at noon" -> "add lunch with Sam tomorrow at noon".
fn polite_en(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let leads = ["can you please ", "could you please ", "would you please ", "can you ", "could you ", "would you ", "will you ", "can u ", "could u ", "pls ", "plz "];
    match leads.iter().find(|lead| lower.starts_with(**lead)) {
        Some(lead) => text[lead.len()..].trim_end_matches(['?', ' ']).to_owned(),
        None => text.to_owned(),
    }
}

/// "dinner w/ Sam" -> "dinner with Sam" ("w/o" is "without").
fn with_for_w(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let lower = text.to_ascii_lowercase();
    let mut i = 0;
    while i < text.len() {
        let at_word_start = i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphanumeric();
        if at_word_start && lower[i..].starts_with("w/o") && !lower[i + 3..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
            out.push_str("without");
            i += 3;
        } else if at_word_start && lower[i..].starts_with("w/") {
            out.push_str("with");
            i += 2;
            if !text[i..].starts_with(' ') {
                out.push(' ');
            }
        } else {
            let c = text[i..].chars().next().expect("inside the text");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Phrasal verbs whose particle comes before the object, and how they move an item.
const PHRASAL: [(&str, Phrasal); 12] = [
    ("call off", Phrasal::Cancel),
    ("push back", Phrasal::Later),
    ("push out", Phrasal::Later),
    ("put off", Phrasal::Later),
    ("move back", Phrasal::Later),
    ("bump back", Phrasal::Later),
    ("move up", Phrasal::Earlier),
    ("bump up", Phrasal::Earlier),
    ("bring forward", Phrasal::Earlier),
    ("pull forward", Phrasal::Earlier),
    ("move forward", Phrasal::Earlier),
    ("pull in", Phrasal::Earlier),
];

#[derive(Clone, Copy)]
enum Phrasal {
    Cancel,
    Later,
    Earlier,
}

/// "push back the 1:1 with Alex 30 minutes" -> "move the 1:1 with Alex 30 minutes later", "move up
/// the review to 2pm" -> "move the review to 2pm", "call off the offsite" -> "cancel the offsite":
/// the particle must not end up in the item's name.
fn particle_after_verb(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let (lead, body) = ["please ", "can you ", "could you "].iter().find_map(|p| lower.strip_prefix(p).map(|_| text.split_at(p.len()))).unwrap_or(("", text));
    let body_lower = body.to_ascii_lowercase();
    for (verb, how) in PHRASAL {
        let Some(rest) = body_lower.strip_prefix(verb).filter(|rest| rest.starts_with(' ')) else { continue };
        let object = body[body.len() - rest.len()..].trim();
        let object_lower = rest.trim();
        if object.is_empty() {
            return text.to_owned();
        }
        let plain = match how {
            Phrasal::Cancel => format!("cancel {object}"),
            _ if find_any(object_lower, &["to", "until", "till"]).is_some() => {
                let object = object_lower_to(object);
                format!("move {object}")
            }
            _ if object_lower.ends_with("later") || object_lower.ends_with("earlier") => format!("move {object}"),
            Phrasal::Later => format!("move {object} later"),
            Phrasal::Earlier => format!("move {object} earlier"),
        };
        return format!("{lead}{plain}");
    }
    // "bump the review to 4pm", "slide standup to 10": other words for a move.
    for verb in ["bump ", "slide "] {
        if body_lower.starts_with(verb) && find_any(&body_lower, &["to", "until", "later", "earlier"]).is_some() {
            return format!("{lead}move {}", &body[verb.len()..]);
        }
    }
    // "push standup 15 minutes later": a shift said with later/earlier is a move.
    let trimmed = body_lower.trim_end();
    if trimmed.ends_with(" later") || trimmed.ends_with(" earlier") {
        for verb in ["push ", "postpone ", "delay "] {
            if body_lower.starts_with(verb) {
                return format!("{lead}move {}", &body[verb.len()..]);
            }
        }
    }
    text.to_owned()
}

/// " till " reads as " to ".
fn object_lower_to(object: &str) -> String {
    object.replace(" till ", " to ")
}

/// Gatherings: with a day and no clock time they are still events ("明天开会", "dinner with Sam on
/// friday"), not to-dos.
const ZH_GATHERINGS: &[&str] = &[
    "开会", "会议", "例会", "周会", "晨会", "评审会", "研讨会", "发布会", "年会", "聚会", "聚餐", "饭局", "约饭", "吃饭", "面试", "看电影", "电影",
    "约会", "见面", "派对", "婚礼", "演唱会", "音乐会", "讲座", "团建", "有个会", "有会", "开个会", "面谈", "会面", "拜访", "见客户", "相亲",
    "家长会", "组会", "答辩", "沙龙", "看展", "看演出", "话剧", "喝咖啡", "喝茶", "唱K", "K歌", "打球", "生日宴", "婚宴", "酒局", "茶话会",
    "座谈会", "见面会", "同学会", "联欢会", "晚宴", "午宴", "约了", "吃午饭", "吃晚饭", "午餐", "晚餐",
];
const EN_GATHERINGS: &[&str] = &[
    "meeting", "meetup", "meet-up", "party", "dinner with", "lunch with", "breakfast with", "brunch with", "drinks with", "coffee with",
    "interview", "movie", "movies", "date with", "wedding", "concert", "conference", "appointment", "standup", "stand-up", "1:1",
    "one-on-one", "catch up with", "appt", "gathering", "reunion", "game night", "happy hour", "dinner party", "birthday party", "bbq",
    "barbecue", "picnic", "webinar", "workshop", "seminar", "lecture", "hangout", "hang out with", "get-together", "drinks", "sync with",
    "call with", "date night", "playdate", "recital", "match", "dinner", "lunch", "brunch", "supper",
];

pub(super) fn is_gathering(text: &str, chinese: bool) -> bool {
    if chinese { ZH_GATHERINGS.iter().any(|w| text.contains(w)) } else { find_any(text, EN_GATHERINGS).is_some() }
}

/// "I have a meeting at 9am tomorrow", "我明天上午有个会": saying one has something is asking to
/// put it down. The words before the thing, and what the thing is called.
pub(super) fn having(title: &str, chinese: bool) -> Option<String> {
    if chinese {
        let rest = ["我有个", "我有一个", "我有", "有个", "有一个", "有场", "有一场", "有"].iter().find_map(|p| title.strip_prefix(p))?;
        let rest = rest.trim();
        return Some(match rest {
            "" => return None,
            "会" | "会要开" => "开会".to_owned(),
            _ => rest.to_owned(),
        });
    }
    let lower = title.to_ascii_lowercase();
    let cut = ["i have got a", "i have got an", "i've got a", "i've got an", "i have a", "i have an", "i got a", "i got an", "got a", "got an", "there's a", "there is a", "we have a", "we've got a", "i have to", "i've got to", "i gotta", "i must", "i should"]
        .iter()
        .filter(|p| lower.starts_with(*p) && lower[p.len()..].starts_with(' '))
        .map(|p| p.len())
        .max()?;
    let rest = title[cut..].trim();
    (!rest.is_empty()).then(|| rest.to_owned())
}

/// Errand verbs: a short phrase that starts with one is a to-do for today even with no time or
/// command word ("买菜", "交房租", "buy milk", "renew passport").
const ZH_ERRANDS: &[&str] = &[
    "买", "交", "缴", "付", "取", "寄", "还", "办", "续", "订", "预约", "挂号", "洗", "修", "换", "充", "打扫", "整理", "收拾", "准备", "复习",
    "练", "背", "跑步", "健身", "遛狗", "喂", "浇", "接", "送", "拿", "打印", "扔", "倒垃圾", "剪头发", "理发", "体检", "看牙", "看医生", "去医院",
    "去银行", "给", "打电话", "回复", "回电话", "发邮件", "报名", "提交", "去超市", "去药店", "去邮局", "去健身房", "去取",
];
const EN_ERRANDS: &[&str] = &[
    "buy", "pay", "renew", "return", "pick up", "drop off", "call", "email", "text", "book", "order", "clean", "wash", "fix", "repair",
    "water", "walk", "feed", "submit", "send", "mail", "post", "print", "file", "pack", "prepare", "review", "get", "grab", "collect",
    "take out", "do the", "do laundry", "shop for", "sign up", "register", "reply to", "follow up", "check in", "visit", "study",
    "practice", "vacuum", "refill",
];

/// A bare to-do: a short errand with no time, command or question ("买菜", "buy milk").
pub(super) fn bare_errand(text: &str, ctx: &TimeContext, chinese: bool) -> bool {
    if is_question(text, chinese) || !find_all(text, ctx).is_empty() {
        return false;
    }
    if chinese {
        // "帮我写一首诗" asks the assistant to do something now, not to note it.
        let short = (2..=12).contains(&text.chars().count());
        let asks_the_assistant = ["帮我", "请", "给我", "你"].iter().any(|w| text.starts_with(w));
        short && !asks_the_assistant && ZH_ERRANDS.iter().any(|w| text.starts_with(w) && text.chars().count() > w.chars().count())
    } else {
        let words = text.split_whitespace().count();
        let lower = text.to_ascii_lowercase();
        (2..=6).contains(&words) && EN_ERRANDS.iter().any(|w| lower.starts_with(w) && lower[w.len()..].starts_with(' '))
    }
}

/// Requests that ask for something to be put down without saying what ("帮我安排一下", "schedule
/// something", "add a reminder", "提醒我一下").
pub(super) fn is_vague(title: &str, chinese: bool) -> bool {
    let title = title.trim().to_lowercase();
    if chinese {
        // "安排个时间", "新建一个日程", "记一下": a measure word and a word for any entry say nothing.
        let mut rest = title.as_str();
        // "记点东西", "加个事": a verb of putting down before the measure word says nothing either.
        for verb in ["记", "加", "写", "弄", "安排"] {
            if let Some(after) = rest.strip_prefix(verb).filter(|after| ["个", "些", "点", "一"].iter().any(|m| after.starts_with(m))) {
                rest = after;
            }
        }
        for lead in ["一个", "一些", "一点", "一下", "个", "些", "点", "下"] {
            rest = rest.strip_prefix(lead).unwrap_or(rest);
        }
        let rest = rest.strip_suffix("一下").unwrap_or(rest);
        ["", "事", "事情", "什么", "东西", "日程", "安排", "时间", "提醒", "待办", "任务", "记", "记录"].contains(&rest)
    } else {
        title.is_empty()
            || ["something", "anything", "stuff", "things", "a thing", "thing", "it", "one", "something for me", "sth", "some time", "set", "set a", "set an"].contains(&title.as_str())
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn ctx() -> TimeContext {
        TimeContext::new(Utc.with_ymd_and_hms(2026, 2, 7, 1, 0, 0).unwrap(), chrono_tz::Asia::Shanghai)
    }

    #[test]
    fn shorthand_and_particles_take_their_plain_form() {
        assert_eq!(plain("lunch w/ Priya friday", false), "lunch with Priya friday");
        assert_eq!(plain("coffee w/Jo", false), "coffee with Jo");
        assert_eq!(plain("pasta w/o cheese", false), "pasta without cheese");
        assert_eq!(plain("push back the budget review 45 minutes", false), "move the budget review 45 minutes later");
        assert_eq!(plain("please move up the design sync by an hour", false), "please move the design sync by an hour earlier");
        assert_eq!(plain("bump up the vet visit to 9am", false), "move the vet visit to 9am");
        assert_eq!(plain("call off the offsite", false), "cancel the offsite");
        assert_eq!(plain("put off the retro till monday", false), "move the retro to monday");
        assert_eq!(plain("push the standup back 10 minutes", false), "push the standup back 10 minutes", "already plain");
        assert_eq!(plain("push the standup 10 minutes later", false), "move the standup 10 minutes later");
        assert_eq!(plain("bump the review to 4pm", false), "move the review to 4pm");
        assert_eq!(plain("bump into Sam", false), "bump into Sam");
        assert_eq!(plain("把会推迟", true), "把会推迟");
        assert_eq!(plain("能帮我把周会推迟半小时吗", true), "帮我把周会推迟半小时");
        assert_eq!(plain("可以帮我加个明天下午3点的会吗", true), "帮我加个明天下午3点的会");
        assert_eq!(plain("can you add lunch with Sam friday at noon", false), "add lunch with Sam friday at noon");
        assert_eq!(plain("could you please push back the retro 15 minutes", false), "move the retro 15 minutes later");
        assert_eq!(plain("明天会下雨吗", true), "明天会下雨吗");
    }

    #[test]
    fn a_short_errand_is_a_to_do_and_a_request_to_the_assistant_is_not() {
        for errand in ["买菜", "交房租", "取快递", "buy milk", "renew passport", "pick up the dry cleaning", "pay the phone bill"] {
            assert!(bare_errand(errand, &ctx(), quickact_time::is_chinese(errand)), "{errand}");
        }
        for not in ["帮我写一首诗", "你好", "买", "tell me a joke", "what's the weather like", "buy", "asdfgh", "今天天气怎么样", "买什么好呢"] {
            assert!(!bare_errand(not, &ctx(), quickact_time::is_chinese(not)), "{not}");
        }
    }

    #[test]
    fn saying_one_has_something_names_it() {
        assert_eq!(having("有个会", true).as_deref(), Some("开会"));
        assert_eq!(having("有个面试", true).as_deref(), Some("面试"));
        assert_eq!(having("I have a meeting", false).as_deref(), Some("meeting"));
        assert_eq!(having("I've got a dentist appointment", false).as_deref(), Some("dentist appointment"));
        assert_eq!(having("haircut", false), None);
        assert_eq!(having("I have to call mom", false).as_deref(), Some("call mom"));
    }
}
