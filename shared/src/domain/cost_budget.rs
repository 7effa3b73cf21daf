//! Cost budgets: how much a user may spend on paid model turns per UTC day and per UTC month, and
//! the verdict of a task a budget refuses.
//!
//! A user's limit for a period is their own (set by an admin) or the deployment's default
//! (`QUICKACT_BUDGET_PER_DAY`, `QUICKACT_BUDGET_PER_MONTH`); none means no limit. Amounts are kept
//! in nano-units of the deployment's currency, like every recorded cost. A run asks before each
//! paid model turn (see `worker/src/agent/budget.rs`); a budget refuses the turn when the user's
//! spend in a period, counting what the run has not recorded yet, has reached the period's limit.
//! A turn's cost is known only once the model answered, so the turn that crosses a limit is paid
//! for, and the next one is refused. Turns that cost nothing (the local provider) are never asked
//! about: a limit bounds money, and a limit of 0 means "no paid model turns".

use chrono::{DateTime, Datelike, Months, NaiveTime, TimeZone, Utc};
use serde::Serialize;

use super::task::Verdict;
use crate::{
    phrases::Language,
    pricing::{amount_text, nanos_to_amount},
};

/// `result.reason` of a verdict a budget refused.
pub const BUDGET_EXHAUSTED: &str = "budget_exhausted";

/// Nano-units in one unit of the currency.
pub const NANOS_PER_UNIT: i64 = 1_000_000_000;

/// The largest limit accepted, in units of the currency: far above any model bill, and far below what
/// nano-units in an `i64` hold (9.2 x 10^9 units).
pub const MAX_LIMIT_UNITS: f64 = 1e9;

/// A period a budget counts over, in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BudgetPeriod {
    Day,
    Month,
}

impl BudgetPeriod {
    pub const ALL: [BudgetPeriod; 2] = [BudgetPeriod::Day, BudgetPeriod::Month];

    pub fn as_str(self) -> &'static str {
        match self {
            BudgetPeriod::Day => "day",
            BudgetPeriod::Month => "month",
        }
    }

    /// When the period holding `now` began (UTC midnight, of the month's first day for a month).
    pub fn start(self, now: DateTime<Utc>) -> DateTime<Utc> {
        let date = now.date_naive();
        let first = match self {
            BudgetPeriod::Day => date,
            BudgetPeriod::Month => date.with_day(1).expect("every month has a first day"),
        };
        Utc.from_utc_datetime(&first.and_time(NaiveTime::MIN))
    }

    /// When the period holding `now` ends and the budget renews: the next period's start.
    pub fn renews_at(self, now: DateTime<Utc>) -> DateTime<Utc> {
        let start = self.start(now);
        match self {
            BudgetPeriod::Day => start + chrono::Days::new(1),
            BudgetPeriod::Month => start.checked_add_months(Months::new(1)).expect("a month after a date chrono holds"),
        }
    }

    /// The period in a sentence: "daily" or "monthly".
    fn adjective(self) -> &'static str {
        match self {
            BudgetPeriod::Day => "daily",
            BudgetPeriod::Month => "monthly",
        }
    }

    /// "today" or "this month".
    fn this(self) -> &'static str {
        match self {
            BudgetPeriod::Day => "today",
            BudgetPeriod::Month => "this month",
        }
    }
}

/// Limits per period in nano-units; `None` is no limit (or, for a user's own, "the deployment's").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BudgetLimits {
    pub per_day_nanos: Option<i64>,
    pub per_month_nanos: Option<i64>,
}

impl BudgetLimits {
    /// A user's own limits (`self`) over the deployment's defaults: each period's own limit if set.
    pub fn over(self, defaults: BudgetLimits) -> BudgetLimits {
        BudgetLimits {
            per_day_nanos: self.per_day_nanos.or(defaults.per_day_nanos),
            per_month_nanos: self.per_month_nanos.or(defaults.per_month_nanos),
        }
    }

    pub fn of(&self, period: BudgetPeriod) -> Option<i64> {
        match period {
            BudgetPeriod::Day => self.per_day_nanos,
            BudgetPeriod::Month => self.per_month_nanos,
        }
    }
}

/// What a user spent, read at `now` (the database's clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spend {
    pub day_nanos: i64,
    pub month_nanos: i64,
    pub now: DateTime<Utc>,
}

impl Spend {
    pub fn of(&self, period: BudgetPeriod) -> i64 {
        match period {
            BudgetPeriod::Day => self.day_nanos,
            BudgetPeriod::Month => self.month_nanos,
        }
    }
}

/// A budget that refuses more paid work: which period, its limit, what was spent, when it renews.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetRefusal {
    pub period: BudgetPeriod,
    pub limit_nanos: i64,
    pub spent_nanos: i64,
    pub renews_at: DateTime<Utc>,
    pub currency: String,
}

/// Whether `limits` refuse the next paid turn of a user who spent `spend`, plus `unrecorded_nanos` the
/// run has paid but not written yet: the refusing period that renews last (when both are used up,
/// the user can go on only once both renewed), or `None`.
pub fn refusal(limits: BudgetLimits, spend: &Spend, unrecorded_nanos: i64, currency: &str) -> Option<BudgetRefusal> {
    BudgetPeriod::ALL
        .into_iter()
        .filter_map(|period| {
            let limit = limits.of(period)?;
            let spent = spend.of(period).saturating_add(unrecorded_nanos);
            (spent >= limit).then(|| BudgetRefusal {
                period,
                limit_nanos: limit,
                spent_nanos: spent,
                renews_at: period.renews_at(spend.now),
                currency: currency.to_owned(),
            })
        })
        .max_by_key(|refusal| refusal.renews_at)
}

impl BudgetRefusal {
    /// The error verdict, in `language` (the sentence's): what happened, when the budget renews
    /// (also as `renews_at`), and what to do.
    pub fn verdict(&self, language: Language) -> Verdict {
        let money = |nanos: i64| format!("{} {}", amount_text(nanos_to_amount(nanos)), self.currency);
        let renews = self.renews_at.format("%Y-%m-%d %H:%M UTC");
        let (message, suggestion) = match language {
            Language::English => (
                format!(
                    "Your {} budget of {} is used up ({} spent {}), so the request was not carried out. It renews at {renews}.",
                    self.period.adjective(),
                    money(self.limit_nanos),
                    money(self.spent_nanos),
                    self.period.this(),
                ),
                format!("Submit the request again after {renews}, or ask an administrator to raise your budget."),
            ),
            Language::Chinese => {
                let (period, this) = match self.period {
                    BudgetPeriod::Day => ("每日", "今天"),
                    BudgetPeriod::Month => ("每月", "本月"),
                };
                (
                    format!(
                        "你的{period}预算 {} 已用完（{this}已花费 {}），所以这个请求没有执行。预算将在 {renews} 重置。",
                        money(self.limit_nanos),
                        money(self.spent_nanos),
                    ),
                    format!("请在 {renews} 之后再提交，或请管理员提高你的预算。"),
                )
            }
        };
        Verdict { reason: Some(BUDGET_EXHAUSTED.to_owned()), renews_at: Some(self.renews_at), ..Verdict::error(message, Some(suggestion)) }
    }
}

/// Nano-units of an amount of the currency, for a limit: refuses what is negative, not a number, or
/// above [`MAX_LIMIT_UNITS`].
pub fn limit_nanos(amount: f64) -> Result<i64, String> {
    if !amount.is_finite() || amount < 0.0 {
        return Err(format!("a budget must be a number of at least 0, not {amount}"));
    }
    if amount > MAX_LIMIT_UNITS {
        return Err(format!("a budget must be at most {MAX_LIMIT_UNITS}"));
    }
    Ok((amount * NANOS_PER_UNIT as f64).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn periods_renew_at_the_next_utc_midnight_and_month() {
        let now = at("2026-12-31T23:59:59Z");
        assert_eq!(BudgetPeriod::Day.start(now), at("2026-12-31T00:00:00Z"));
        assert_eq!(BudgetPeriod::Day.renews_at(now), at("2027-01-01T00:00:00Z"));
        assert_eq!(BudgetPeriod::Month.start(now), at("2026-12-01T00:00:00Z"));
        assert_eq!(BudgetPeriod::Month.renews_at(now), at("2027-01-01T00:00:00Z"));
        assert_eq!(BudgetPeriod::Month.renews_at(at("2026-02-10T08:00:00Z")), at("2026-03-01T00:00:00Z"));
    }

    #[test]
    fn a_user_limit_overrides_the_default_of_its_period_only() {
        let defaults = BudgetLimits { per_day_nanos: Some(5), per_month_nanos: Some(50) };
        let own = BudgetLimits { per_day_nanos: Some(9), per_month_nanos: None };
        assert_eq!(own.over(defaults), BudgetLimits { per_day_nanos: Some(9), per_month_nanos: Some(50) });
    }

    #[test]
    fn a_budget_refuses_once_the_spend_reaches_it_counting_what_the_run_has_not_written() {
        let spend = Spend { day_nanos: 90, month_nanos: 90, now: at("2026-11-27T13:00:00Z") };
        let limits = BudgetLimits { per_day_nanos: Some(100), per_month_nanos: None };
        assert_eq!(refusal(limits, &spend, 0, "CNY"), None);
        let refused = refusal(limits, &spend, 10, "CNY").expect("spent 100 of 100");
        assert_eq!((refused.period, refused.spent_nanos, refused.renews_at), (BudgetPeriod::Day, 100, at("2026-11-28T00:00:00Z")));
        assert_eq!(refusal(BudgetLimits::default(), &spend, 1 << 40, "CNY"), None, "no limit, no refusal");
    }

    #[test]
    fn when_both_periods_are_used_up_the_later_renewal_is_told() {
        let spend = Spend { day_nanos: 10, month_nanos: 10, now: at("2026-11-27T13:00:00Z") };
        let limits = BudgetLimits { per_day_nanos: Some(5), per_month_nanos: Some(10) };
        let refused = refusal(limits, &spend, 0, "CNY").unwrap();
        assert_eq!((refused.period, refused.renews_at), (BudgetPeriod::Month, at("2026-12-01T00:00:00Z")));
    }

    #[test]
    fn a_zero_limit_refuses_even_before_anything_was_spent() {
        let spend = Spend { day_nanos: 0, month_nanos: 0, now: at("2026-11-27T13:00:00Z") };
        assert!(refusal(BudgetLimits { per_day_nanos: Some(0), per_month_nanos: None }, &spend, 0, "CNY").is_some());
    }

    #[test]
    fn the_refusal_verdict_names_its_reason_and_renewal() {
        let refused = BudgetRefusal {
            period: BudgetPeriod::Day,
            limit_nanos: 500_000_000,
            spent_nanos: 520_000_000,
            renews_at: at("2026-11-28T00:00:00Z"),
            currency: "CNY".into(),
        };
        let verdict = serde_json::to_value(refused.verdict(crate::phrases::Language::English)).unwrap();
        assert_eq!(verdict["type"], "error");
        assert_eq!(verdict["reason"], BUDGET_EXHAUSTED);
        assert_eq!(verdict["renews_at"], "2026-11-28T00:00:00Z");
        let message = verdict["message"].as_str().unwrap();
        assert!(message.contains("daily budget of 0.5 CNY") && message.contains("0.52 CNY spent today"), "{message}");
        assert!(verdict["suggestion"].as_str().unwrap().contains("2026-11-28 00:00 UTC"));

        // For a Chinese sentence, in Chinese (the currency and the zone keep their codes).
        let chinese = refused.verdict(crate::phrases::Language::Chinese);
        assert_eq!(chinese.reason.as_deref(), Some(BUDGET_EXHAUSTED));
        assert!(chinese.message.contains("每日预算 0.5 CNY 已用完") && chinese.message.contains("今天已花费 0.52 CNY"), "{}", chinese.message);
        let words = chinese.message.replace("CNY", "").replace("UTC", "");
        assert!(words.split(|c: char| !c.is_ascii_alphabetic()).all(|w| w.len() < 2), "{}", chinese.message);
    }

    #[test]
    fn limits_are_numbers_from_zero_to_a_billion() {
        assert_eq!(limit_nanos(0.5), Ok(500_000_000));
        assert_eq!(limit_nanos(0.0), Ok(0));
        assert!(limit_nanos(-1.0).is_err() && limit_nanos(f64::NAN).is_err() && limit_nanos(2e9).is_err());
    }
}
