//! The dates of holidays that move from year to year by a rule of their own: Easter (the
//! Gregorian computus) and the festivals of the Chinese lunar calendar (春节, 元宵, 端午, 七夕,
//! 中秋, 重阳, 腊八, 除夕), read from the maintained tables of `chinese-lunisolar-calendar`
//! (lunar years 1901-2100). Fixed-date holidays are a month and a day, and those on an n-th
//! weekday (Thanksgiving, Mother's Day) an ordinal of a month: neither needs this module.

use super::dates::add_days;
use super::types::{DateParts, Holiday, MonthSpec, YearSpec};
use chinese_lunisolar_calendar::LunisolarDate;
use chrono::{Datelike, NaiveDate};

/// How a holiday's date is found.
#[derive(Clone, Copy)]
pub(crate) enum Rule {
    /// Month and day.
    Fixed(u32, u32),
    /// The n-th (or with -1 the last) weekday (0 = Monday) of a month.
    Nth(i8, u8, u32),
    Moving(Holiday),
}

/// The date parts of a holiday's rule, in year `year` when one is given.
pub(crate) fn holiday_parts(rule: Rule, year: Option<YearSpec>) -> DateParts {
    let mut d = DateParts { year, ..Default::default() };
    match rule {
        Rule::Fixed(m, day) => {
            d.month = Some(MonthSpec::Abs(m));
            d.day = Some(day);
        }
        Rule::Nth(n, wd, m) => {
            d.month = Some(MonthSpec::Abs(m));
            d.nth = Some((n, wd));
        }
        Rule::Moving(h) => d.holiday = Some(h),
    }
    d
}

/// The holiday's date in (Gregorian or lunar) year `y`: the lunar festivals of the lunar year that
/// begins in `y`, 除夕 the eve of that year's 春节.
pub(crate) fn in_year(h: Holiday, y: i32) -> Option<NaiveDate> {
    match h {
        Holiday::Easter(shift) => add_days(easter_sunday(y)?, shift as i64),
        Holiday::Lunar(m, d) => lunar(y, m, d),
        Holiday::LunarNewYearEve => add_days(lunar(y, 1, 1)?, -1),
    }
}

/// The next date of the holiday on or after `from` (today counts).
pub(crate) fn next(h: Holiday, from: NaiveDate) -> Option<NaiveDate> {
    // the lunar year that holds `from` may have begun in the Gregorian year before
    (from.year() - 1..=from.year() + 1).find_map(|y| in_year(h, y).filter(|d| *d >= from))
}

/// A day of the lunar calendar in lunar year `y` (the year whose first month starts in Gregorian
/// year `y`), not a leap month.
fn lunar(y: i32, m: u8, d: u8) -> Option<NaiveDate> {
    let y = u16::try_from(y).ok()?;
    LunisolarDate::from_ymd(y, m, false, d).ok().map(|x| x.to_naive_date())
}

/// Easter Sunday of year `y` by the anonymous Gregorian algorithm (Meeus/Jones/Butcher).
fn easter_sunday(y: i32) -> Option<NaiveDate> {
    let a = y % 19;
    let (b, c) = (y / 100, y % 100);
    let (d, e) = (b / 4, b % 4);
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let (i, k) = (c / 4, c % 4);
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    NaiveDate::from_ymd_opt(y, month as u32, day as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn easter_falls_on_the_published_sundays() {
        for (y, m, d) in [(2024, 3, 31), (2025, 4, 20), (2026, 4, 5), (2027, 3, 28), (2038, 4, 25)] {
            assert_eq!(easter_sunday(y), Some(date(y, m, d)), "{y}");
        }
    }

    #[test]
    fn lunar_festivals_come_from_the_lunar_calendar() {
        assert_eq!(in_year(Holiday::Lunar(1, 1), 2026), Some(date(2026, 2, 17)));
        assert_eq!(in_year(Holiday::LunarNewYearEve, 2026), Some(date(2026, 2, 16)));
        assert_eq!(in_year(Holiday::Lunar(8, 15), 2026), Some(date(2026, 9, 25)));
        // said after 2026's 重阳 (18 October), the next one is 2027's
        assert_eq!(next(Holiday::Lunar(9, 9), date(2026, 10, 19)), Some(date(2027, 10, 8)));
        // 元宵 of the lunar year that began in the Gregorian year before
        assert_eq!(next(Holiday::Lunar(1, 15), date(2026, 2, 20)), Some(date(2026, 3, 3)));
    }
}
