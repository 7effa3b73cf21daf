//! An RRULE as words: the forms the time resolver writes (`shared/time/src/recurrence.rs`) and the
//! ones a client may store through the items API: daily, weekly on days, every weekday, monthly
//! on a day, on the n-th (or last) weekday, on the n-th business day, on the last day, yearly on a
//! date, each with an interval. A rule outside these reads "重复" / "repeats", never nothing.

use super::Language;

const DAY_CODES: [&str; 7] = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
const DAYS_ZH: [&str; 7] = ["周一", "周二", "周三", "周四", "周五", "周六", "周日"];
const DAYS_EN: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS_EN: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// The parts of a rule this renderer reads.
#[derive(Debug, Default)]
struct Rule<'a> {
    freq: &'a str,
    interval: u32,
    /// `BYDAY` entries: an optional ordinal (`-1`, `2`) and a weekday (0 = Monday).
    days: Vec<(Option<i32>, usize)>,
    set_position: Option<i32>,
    month: Option<u32>,
    month_day: Option<i32>,
    /// A part this renderer does not know (COUNT, UNTIL, BYHOUR...): the words would leave it out.
    unknown: bool,
}

fn parse(rrule: &str) -> Option<Rule<'_>> {
    let mut rule = Rule { interval: 1, ..Rule::default() };
    for part in rrule.trim().trim_start_matches("RRULE:").split(';').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=')?;
        match key.trim().to_ascii_uppercase().as_str() {
            "FREQ" => rule.freq = value.trim(),
            "INTERVAL" => rule.interval = value.trim().parse().ok().filter(|n| *n >= 1)?,
            "BYDAY" => {
                for day in value.split(',') {
                    let day = day.trim();
                    let (ordinal, code) = day.split_at(day.len().checked_sub(2)?);
                    let weekday = DAY_CODES.iter().position(|c| c.eq_ignore_ascii_case(code))?;
                    let ordinal = if ordinal.is_empty() { None } else { Some(ordinal.trim_start_matches('+').parse().ok()?) };
                    rule.days.push((ordinal, weekday));
                }
            }
            "BYSETPOS" => rule.set_position = Some(value.trim().parse().ok()?),
            "BYMONTH" => rule.month = Some(value.trim().parse().ok().filter(|m| (1..=12).contains(m))?),
            "BYMONTHDAY" => rule.month_day = Some(value.trim().parse().ok()?),
            "WKST" => {}
            _ => rule.unknown = true,
        }
    }
    Some(rule)
}

/// How often an item repeats, in words: "每周一" / "every Monday".
pub fn describe(rrule: &str, language: Language) -> String {
    parse(rrule)
        .filter(|rule| !rule.unknown)
        .and_then(|rule| match language {
            Language::Chinese => chinese(&rule),
            Language::English => english(&rule),
        })
        .unwrap_or_else(|| language.pick("重复", "repeats").to_owned())
}

fn weekdays_only(rule: &Rule) -> bool {
    rule.days.len() == 5 && rule.days.iter().all(|(n, d)| n.is_none() && *d < 5)
}

fn weekend_only(rule: &Rule) -> bool {
    rule.days.len() == 2 && rule.days.iter().all(|(n, d)| n.is_none() && *d >= 5)
}

fn chinese(rule: &Rule) -> Option<String> {
    let every = |unit: &str| if rule.interval == 1 { format!("每{unit}") } else { format!("每{}{unit}", rule.interval) };
    let ordinal = |n: i32| if n == -1 { "最后一个".to_owned() } else if n < 0 { format!("倒数第{}个", -n) } else { format!("第{n}个") };
    let plain_days = || rule.days.iter().map(|(_, d)| DAYS_ZH[*d]).collect::<Vec<_>>().join("、");
    Some(match rule.freq.to_ascii_uppercase().as_str() {
        "HOURLY" => every("小时"),
        "DAILY" => every("天"),
        "WEEKLY" if rule.days.is_empty() => every("周"),
        "WEEKLY" if weekdays_only(rule) && rule.interval == 1 => "每个工作日".into(),
        "WEEKLY" if weekend_only(rule) && rule.interval == 1 => "每个周末".into(),
        "WEEKLY" if rule.interval == 1 => format!("每{}", plain_days()),
        "WEEKLY" => format!("每{}周的{}", rule.interval, plain_days()),
        "MONTHLY" => {
            let month = if rule.interval == 1 { "每月".to_owned() } else { format!("每{}个月", rule.interval) };
            match (rule.month_day, rule.days.as_slice(), rule.set_position) {
                (Some(-1), [], _) => format!("{month}最后一天"),
                (Some(day), [], _) if day > 0 => format!("{month}{day}日"),
                (None, [(Some(n), day)], None) => format!("{month}{}{}", ordinal(*n), DAYS_ZH[*day]),
                (None, _, Some(n)) if weekdays_only(rule) => format!("{month}{}工作日", ordinal(n)),
                (None, [], None) => month,
                _ => return None,
            }
        }
        "YEARLY" => {
            let year = if rule.interval == 1 { "每年".to_owned() } else { format!("每{}年", rule.interval) };
            match (rule.month, rule.month_day) {
                (Some(month), Some(day)) if day > 0 => format!("{year}{month}月{day}日"),
                (Some(month), None) => format!("{year}{month}月"),
                (None, None) => year,
                _ => return None,
            }
        }
        _ => return None,
    })
}

fn english_ordinal(n: i32) -> String {
    match n {
        -1 => "last".into(),
        -2 => "second to last".into(),
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        4 => "fourth".into(),
        5 => "fifth".into(),
        _ => format!("{n}th"),
    }
}

fn day_of_month(day: i32) -> String {
    let suffix = match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{day}{suffix}")
}

fn english(rule: &Rule) -> Option<String> {
    let every = |one: &str, many: &str| if rule.interval == 1 { format!("every {one}") } else { format!("every {} {many}", rule.interval) };
    let days: Vec<&str> = rule.days.iter().map(|(_, d)| DAYS_EN[*d]).collect();
    Some(match rule.freq.to_ascii_uppercase().as_str() {
        "HOURLY" => every("hour", "hours"),
        "DAILY" => every("day", "days"),
        "WEEKLY" if rule.days.is_empty() => every("week", "weeks"),
        "WEEKLY" if weekdays_only(rule) && rule.interval == 1 => "every weekday".into(),
        "WEEKLY" if weekend_only(rule) && rule.interval == 1 => "every weekend".into(),
        "WEEKLY" if rule.interval == 1 => format!("every {}", Language::English.join_list(&days)),
        "WEEKLY" => format!("every {} weeks on {}", rule.interval, Language::English.join_list(&days)),
        "MONTHLY" => {
            let month = if rule.interval == 1 { "every month".to_owned() } else { format!("every {} months", rule.interval) };
            match (rule.month_day, rule.days.as_slice(), rule.set_position) {
                (Some(-1), [], _) => format!("on the last day of {month}"),
                (Some(day), [], _) if day > 0 => format!("{month} on the {}", day_of_month(day)),
                (None, [(Some(n), day)], None) => format!("on the {} {} of {month}", english_ordinal(*n), DAYS_EN[*day]),
                (None, _, Some(n)) if weekdays_only(rule) => format!("on the {} weekday of {month}", english_ordinal(n)),
                (None, [], None) => month,
                _ => return None,
            }
        }
        "YEARLY" => {
            let year = if rule.interval == 1 { "every year".to_owned() } else { format!("every {} years", rule.interval) };
            match (rule.month, rule.month_day) {
                (Some(month), Some(day)) if day > 0 => format!("{year} on {} {day}", MONTHS_EN[month as usize - 1]),
                (Some(month), None) => format!("{year} in {}", MONTHS_EN[month as usize - 1]),
                (None, None) => year,
                _ => return None,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Language::{Chinese as Zh, English as En};

    #[test]
    fn weekly_rules_name_their_days() {
        assert_eq!(describe("FREQ=WEEKLY;BYDAY=MO", Zh), "每周一");
        assert_eq!(describe("FREQ=WEEKLY;BYDAY=MO", En), "every Monday");
        assert_eq!(describe("FREQ=WEEKLY;BYDAY=TU,TH", Zh), "每周二、周四");
        assert_eq!(describe("FREQ=WEEKLY;BYDAY=MO,WE,FR", En), "every Monday, Wednesday and Friday");
        assert_eq!(describe("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", Zh), "每个工作日");
        assert_eq!(describe("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", En), "every weekday");
        assert_eq!(describe("FREQ=WEEKLY;BYDAY=SA,SU", En), "every weekend");
        assert_eq!(describe("FREQ=WEEKLY;INTERVAL=2;BYDAY=WE", Zh), "每2周的周三");
        assert_eq!(describe("FREQ=WEEKLY;INTERVAL=2;BYDAY=WE", En), "every 2 weeks on Wednesday");
        assert_eq!(describe("FREQ=WEEKLY", En), "every week");
    }

    #[test]
    fn daily_monthly_and_yearly_rules_read_as_words() {
        assert_eq!(describe("FREQ=DAILY", Zh), "每天");
        assert_eq!(describe("FREQ=DAILY;INTERVAL=3", En), "every 3 days");
        assert_eq!(describe("FREQ=MONTHLY;BYMONTHDAY=5", Zh), "每月5日");
        assert_eq!(describe("FREQ=MONTHLY;BYMONTHDAY=22", En), "every month on the 22nd");
        assert_eq!(describe("FREQ=MONTHLY;BYMONTHDAY=-1", En), "on the last day of every month");
        assert_eq!(describe("FREQ=MONTHLY;BYDAY=-1FR", Zh), "每月最后一个周五");
        assert_eq!(describe("FREQ=MONTHLY;BYDAY=2MO", En), "on the second Monday of every month");
        assert_eq!(describe("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1", Zh), "每月第1个工作日");
        assert_eq!(describe("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1", En), "on the first weekday of every month");
        assert_eq!(describe("FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=8", Zh), "每年3月8日");
        assert_eq!(describe("FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=8", En), "every year on Mar 8");
    }

    #[test]
    fn a_rule_it_cannot_read_still_says_it_repeats() {
        assert_eq!(describe("FREQ=WEEKLY;COUNT=4", Zh), "重复");
        assert_eq!(describe("nonsense", En), "repeats");
        assert_eq!(describe("FREQ=SECONDLY", En), "repeats");
    }

    #[test]
    fn every_rule_the_resolver_writes_reads_as_words() {
        let context = quickact_time::TimeContext::new(chrono::Utc::now(), chrono_tz::UTC);
        for text in ["每周一", "每个工作日", "每天早上8点", "每月5号", "每月最后一个周五", "every Tuesday", "every weekday", "every other week", "每年3月8日"] {
            let rrule = quickact_time::find_all(text, &context).into_iter().find_map(|m| m.resolution.rrule);
            let rrule = rrule.unwrap_or_else(|| panic!("{text} reads as a recurrence"));
            for language in [Zh, En] {
                let words = describe(&rrule, language);
                assert!(words != "重复" && words != "repeats", "{text} -> {rrule} -> {words}");
            }
        }
    }
}
