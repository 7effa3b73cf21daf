//! A weekly series said with a date starts that day ("从5月1号开始每两周交水电费", "every 2 weeks
//! from may 1"): `resolve` joins the two expressions into one series whose first day is the date.

use chrono::{NaiveDate, TimeZone};
use quickact_time::{TimeContext, resolve};

fn at_march_4(zone: chrono_tz::Tz) -> TimeContext {
    TimeContext::new(zone.with_ymd_and_hms(2026, 3, 4, 10, 0, 0).unwrap().with_timezone(&chrono::Utc), zone)
}

#[test]
fn a_weekly_series_with_a_date_starts_that_day() {
    for (text, zone) in [("从5月1号开始每两周", chrono_tz::Asia::Shanghai), ("every 2 weeks from may 1", chrono_tz::America::Chicago), ("5月1号起每两周", chrono_tz::Asia::Taipei)] {
        let r = resolve(text, &at_march_4(zone)).unwrap_or_else(|| panic!("{text} is read"));
        assert_eq!((r.date, r.rrule.as_deref()), (NaiveDate::from_ymd_opt(2026, 5, 1).unwrap(), Some("FREQ=WEEKLY;INTERVAL=2")), "{text}");
    }
}

#[test]
fn a_series_on_weekdays_or_by_the_month_keeps_its_own_days() {
    let ctx = at_march_4(chrono_tz::Asia::Shanghai);
    assert_eq!(resolve("每月1号", &ctx).and_then(|r| r.rrule), Some("FREQ=MONTHLY;BYMONTHDAY=1".into()));
    assert_eq!(resolve("每周一", &ctx).and_then(|r| r.rrule), Some("FREQ=WEEKLY;BYDAY=MO".into()));
}
