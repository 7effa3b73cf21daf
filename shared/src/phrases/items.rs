//! An item as words in an answer: when (the weekday and the date, "today" or "tomorrow" when it
//! is), the part of the day in the language's words, what, and whether it repeats or is done. It
//! reads the item as clients see it (`ItemRecord::to_json`), so whatever a tool answered can be
//! put in words without another query.

use chrono::{Datelike, NaiveDate};
use serde_json::Value;

use super::{Language, recurrence};

const WEEKDAYS_ZH: [&str; 7] = ["周一", "周二", "周三", "周四", "周五", "周六", "周日"];
const WEEKDAYS_EN: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS_EN: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// How to word an item.
#[derive(Debug, Clone, Copy)]
pub struct ItemWords {
    pub language: Language,
    /// The user's today, when known: dates on it (and the day after) read "today" / "tomorrow",
    /// and the year is written only when it is not today's.
    pub today: Option<NaiveDate>,
}

impl ItemWords {
    /// A date as a person says it: `周五（2月13日）`, `今天（周六，2月7日）` / `Friday (Feb 13)`,
    /// `today (Saturday, Feb 7)`.
    pub fn date(&self, date: NaiveDate) -> String {
        let weekday = date.weekday().num_days_from_monday() as usize;
        let same_year = self.today.is_none_or(|today| today.year() == date.year());
        let relative = self.today.and_then(|today| match (date - today).num_days() {
            0 => Some(self.language.pick("今天", "today")),
            1 => Some(self.language.pick("明天", "tomorrow")),
            _ => None,
        });
        match self.language {
            Language::Chinese => {
                let day = if same_year {
                    format!("{}月{}日", date.month(), date.day())
                } else {
                    format!("{}年{}月{}日", date.year(), date.month(), date.day())
                };
                match relative {
                    Some(word) => format!("{word}（{}，{day}）", WEEKDAYS_ZH[weekday]),
                    None => format!("{}（{day}）", WEEKDAYS_ZH[weekday]),
                }
            }
            Language::English => {
                let mut day = format!("{} {}", MONTHS_EN[date.month0() as usize], date.day());
                if !same_year {
                    day.push_str(&format!(", {}", date.year()));
                }
                match relative {
                    Some(word) => format!("{word} ({}, {day})", WEEKDAYS_EN[weekday]),
                    None => format!("{} ({day})", WEEKDAYS_EN[weekday]),
                }
            }
        }
    }

    /// A part of the day by its contract name (`morning`), in words: 早上 / morning.
    pub fn segment(&self, segment: &str) -> String {
        let (zh, en) = match segment {
            "all_day" => ("全天", "all day"),
            "early_morning" => ("凌晨", "early morning"),
            "morning" => ("早上", "morning"),
            "forenoon" => ("上午", "late morning"),
            "noon" => ("中午", "midday"),
            "afternoon" => ("下午", "afternoon"),
            "evening" => ("晚上", "evening"),
            other => (other, other),
        };
        self.language.pick(zh, en).to_owned()
    }

    /// One item as words: `周五（2月13日）15:00-16:00 开会（每周五）` / `"meeting" Friday (Feb 13),
    /// 15:00-16:00 (every Friday)`. With `with_status`, a done or deleted item says so (leave it out
    /// where the sentence says it already: "已完成：…").
    pub fn line(&self, item: &Value, with_status: bool) -> String {
        let text = |field: &str| item.get(field).and_then(Value::as_str);
        let date = text("occurrence").or(text("date")).and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok());
        let when = match (text("start_time"), text("end_time"), text("segment")) {
            (Some(start), Some(end), _) => Some(format!("{start}-{end}")),
            (Some(start), None, _) => Some(start.to_owned()),
            (None, _, Some(segment)) => Some(self.segment(segment)),
            _ => None,
        };
        let title = text("title").unwrap_or_default();
        let mut notes = Vec::new();
        if let Some(rrule) = text("recurrence") {
            notes.push(recurrence::describe(rrule, self.language));
        }
        if with_status {
            match text("status") {
                Some("completed") => notes.push(self.language.pick("已完成", "done").to_owned()),
                Some("deleted") => notes.push(self.language.pick("已删除", "deleted").to_owned()),
                _ => {}
            }
        }
        match self.language {
            Language::Chinese => {
                let mut line = date.map(|d| self.date(d)).unwrap_or_default();
                if let Some(when) = when {
                    line.push_str(&when);
                }
                // A title after a time is set apart by a space; after a closing bracket it needs none.
                if !line.is_empty() && !line.ends_with('）') {
                    line.push(' ');
                }
                line.push_str(title);
                if !notes.is_empty() {
                    line.push_str(&format!("（{}）", notes.join("，")));
                }
                line
            }
            Language::English => {
                let mut line = format!("\"{title}\"");
                if let Some(date) = date {
                    line.push_str(&format!(" {}", self.date(date)));
                }
                if let Some(when) = when {
                    line.push_str(&format!(", {when}"));
                }
                if !notes.is_empty() {
                    line.push_str(&format!(" ({})", notes.join(", ")));
                }
                line
            }
        }
    }

    /// Several items as one listing: their lines joined ([`Language::join_lines`]).
    pub fn lines(&self, items: &[Value], with_status: bool) -> String {
        let lines: Vec<String> = items.iter().map(|item| self.line(item, with_status)).collect();
        self.language.join_lines(&lines)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn words(language: Language) -> ItemWords {
        ItemWords { language, today: NaiveDate::from_ymd_opt(2026, 2, 7) }
    }

    #[test]
    fn dates_name_their_weekday_and_today() {
        let zh = words(Language::Chinese);
        let en = words(Language::English);
        let friday = NaiveDate::from_ymd_opt(2026, 2, 13).unwrap();
        assert_eq!(zh.date(friday), "周五（2月13日）");
        assert_eq!(en.date(friday), "Friday (Feb 13)");
        assert_eq!(zh.date(NaiveDate::from_ymd_opt(2026, 2, 7).unwrap()), "今天（周六，2月7日）");
        assert_eq!(en.date(NaiveDate::from_ymd_opt(2026, 2, 8).unwrap()), "tomorrow (Sunday, Feb 8)");
        assert_eq!(zh.date(NaiveDate::from_ymd_opt(2027, 1, 4).unwrap()), "周一（2027年1月4日）");
        assert_eq!(en.date(NaiveDate::from_ymd_opt(2027, 1, 4).unwrap()), "Monday (Jan 4, 2027)");
    }

    #[test]
    fn a_line_is_all_in_one_language() {
        let item = json!({"title": "带伞", "date": "2026-02-09", "segment": "morning", "status": "completed"});
        let zh = words(Language::Chinese).line(&item, true);
        assert_eq!(zh, "周一（2月9日）早上 带伞（已完成）");
        assert!(!zh.chars().any(|c| c.is_ascii_alphabetic()), "{zh}");
        let item = json!({"title": "standup", "date": "2026-02-09", "start_time": "10:00", "end_time": "10:15",
                          "recurrence": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "status": "open"});
        assert_eq!(words(Language::English).line(&item, true), "\"standup\" Monday (Feb 9), 10:00-10:15 (every weekday)");
        assert_eq!(words(Language::Chinese).line(&item, true), "周一（2月9日）10:00-10:15 standup（每个工作日）");
    }

    #[test]
    fn a_found_occurrence_is_shown_on_its_date_and_a_deleted_item_says_so() {
        let item = json!({"title": "周会", "date": "2026-02-02", "occurrence": "2026-02-09", "start_time": "09:00",
                          "recurrence": "FREQ=WEEKLY;BYDAY=MO", "status": "deleted"});
        assert_eq!(words(Language::Chinese).line(&item, true), "周一（2月9日）09:00 周会（每周一，已删除）");
        assert_eq!(words(Language::Chinese).line(&item, false), "周一（2月9日）09:00 周会（每周一）");
        assert_eq!(words(Language::English).line(&item, true), "\"周会\" Monday (Feb 9), 09:00 (every Monday, deleted)");
    }
}
