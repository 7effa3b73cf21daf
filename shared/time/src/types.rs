//! The pieces ("atoms") the lexers produce and the grammar combines.

use super::segment::SegKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum YearSpec {
    Abs(i32),
    Rel(i32),
    /// Two-digit year: 20xx unless that is more than 20 years ahead, then 19xx.
    Short(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MonthSpec {
    /// A month name or number: the next one not passed when no year is given.
    Abs(u32),
    /// Relative to the reference month (下个月 = 1).
    Rel(i32),
    /// "next March": the next March strictly after the current month.
    NextAbs(u32),
    /// "last March": the last March strictly before the current month.
    LastAbs(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MonthPart {
    Begin,
    Mid,
    End,
    /// A third of the month, a span: 1 = 上旬/early (1st-10th), 2 = 中旬 (11th-20th), 3 = 下旬/late
    /// (21st to the last day).
    Third(u8),
    /// The n-th week of the month as seven days from its 1st (1 = 1st-7th, 2 = 8th-14th ...), or
    /// with -1 its last seven days: "the first week of december", "the last week of next month".
    Week(i8),
    /// A half of the month: 1 = 1st-15th, 2 = 16th to the last day ("the first half of march").
    Half(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Day,
    /// Monday to Friday ("3 business days", "3个工作日后").
    BusinessDay,
    Week,
    Month,
    Year,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Freq {
    /// "every 30 minutes", 每半小时 (FREQ=MINUTELY;INTERVAL=30).
    Minutely,
    Hourly,
    Daily,
    Weekly,
    Monthly,
    Yearly,
}

/// A recurrence as lexed ("每周一三五", "every other day").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Recur {
    pub freq: Freq,
    pub interval: u32,
    /// Bit 0 = Monday .. bit 6 = Sunday.
    pub byday: u8,
    /// The last day of the month (BYMONTHDAY=-1).
    pub last_day: bool,
}

impl Recur {
    pub(crate) fn new(freq: Freq) -> Recur {
        Recur {
            freq,
            interval: 1,
            byday: 0,
            last_day: false,
        }
    }
    pub(crate) const WORKDAYS: u8 = 0b0011111;
    pub(crate) const WEEKEND: u8 = 0b1100000;
}

/// The "weekday" of [`DateParts::nth`] that stands for any day Monday to Friday.
pub(crate) const BUSINESS_DAY: u8 = 7;

/// Everything that pins a date, accumulated field by field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct DateParts {
    pub rel_day: Option<i32>,
    /// The last day of a span of relative days: 明后天 = rel_day 1, rel_end 2; 今明两天 = 0..1.
    pub rel_end: Option<i32>,
    /// 次日/翌日: the day after the anchor date.
    pub next_day: bool,
    pub year: Option<YearSpec>,
    pub month: Option<MonthSpec>,
    pub day: Option<u32>,
    pub part: Option<MonthPart>,
    /// 0 = Monday .. 6 = Sunday.
    pub weekday: Option<u8>,
    /// The n-th weekday of the month (n = 1..=5, or -1 for the last, -2 for the second to last):
    /// "the third Wednesday of
    /// next month", "下个月的第三个周三", "last Friday of this month". (n, weekday); the weekday
    /// [`BUSINESS_DAY`] counts business days ("the first business day of next month",
    /// 下个月第一个工作日), which may also be of a week (下周的最后一个工作日).
    pub nth: Option<(i8, u8)>,
    /// "friday after next".
    pub after_next: bool,
    /// Week relative to the current Monday-start week.
    pub week: Option<i32>,
    /// A half of that week, a span: 1 = its start ("early next week", 下周初: Monday-Wednesday),
    /// 2 = its end ("late this week", "later in the week": Thursday-Sunday), 3 = what is left of it
    /// ("the rest of the week": today to Sunday), 4 = its working days ("next business week":
    /// Monday-Friday).
    pub week_half: Option<u8>,
    /// English "this <weekday>": said on a Sunday, when the Monday-start week has no day left
    /// but that one, it means the coming weekday.
    pub this_named: bool,
    pub weekend: bool,
    /// With `weekend`: both its days, Saturday to Sunday (周末两天, "all weekend").
    pub weekend_both: bool,
    /// Signed offset in units.
    pub offset: Option<(i32, Unit)>,
    /// The last offset of a span of them, in the same unit: "三天内" = 0..3 days, "三四天后" = 3..4.
    pub offset_end: Option<i32>,
    /// The offset is counted from another date in the same expression ("a week after tomorrow").
    pub needs_base: bool,
    /// A default chose between readings the text leaves open: day and month written as two
    /// numbers that could be read either way (05.04.2027), the Friday of "end of the week".
    pub guessed: bool,
    pub recur: Option<Recur>,
    /// A holiday whose date moves from year to year by a rule of its own (Easter, the lunar
    /// festivals); fixed-date ones are a month and a day, those of an n-th weekday are `nth`.
    pub holiday: Option<Holiday>,
}

/// A holiday whose date is computed, not written as a month and a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holiday {
    /// Easter Sunday plus this many days (Good Friday -2, Easter Monday 1).
    Easter(i8),
    /// A day of the Chinese lunar calendar: (month, day), 春节 = (1, 1), 中秋 = (8, 15).
    Lunar(u8, u8),
    /// 除夕: the last day of the lunar year, the eve of 春节.
    LunarNewYearEve,
}

impl DateParts {
    pub(crate) fn is_empty(&self) -> bool {
        *self == DateParts::default()
    }

    /// A relative period and nothing else (下个月, 下周, 明年, next week): its shift in units, for
    /// "the same day" or "the same time" in it ("下周的这个时候" = 7 days on).
    pub(crate) fn period_shift(&self) -> Option<(i32, Unit)> {
        if self.rel_day.is_some() || self.weekday.is_some() || self.offset.is_some() || self.recur.is_some() {
            return None;
        }
        let (shift, only) = match (self.week, self.month, self.year) {
            (Some(w), None, None) => ((w, Unit::Week), DateParts { week: Some(w), ..Default::default() }),
            (None, Some(MonthSpec::Rel(n)), None) => {
                ((n, Unit::Month), DateParts { month: self.month, ..Default::default() })
            }
            (None, None, Some(YearSpec::Rel(n))) => ((n, Unit::Year), DateParts { year: self.year, ..Default::default() }),
            _ => return None,
        };
        (*self == only).then_some(shift)
    }

    /// A date `n` units from the reference date (or, with `needs_base`, from another date).
    pub(crate) fn shifted(n: i32, u: Unit) -> DateParts {
        DateParts {
            offset: Some((n, u)),
            ..Default::default()
        }
    }

    pub(crate) fn has_ymd(&self) -> bool {
        self.year.is_some() || self.month.is_some() || self.day.is_some() || self.part.is_some() || self.holiday.is_some()
    }

    /// Merge `o` into `self` when no field is set twice and the result is coherent.
    pub(crate) fn merge(&mut self, o: &DateParts) -> bool {
        let mut m = *self;
        let mut o = *o;
        macro_rules! take {
            ($f:ident) => {
                if o.$f.is_some() {
                    if m.$f.is_some() {
                        return false;
                    }
                    m.$f = o.$f;
                }
            };
        }
        // "biweekly on mondays": an interval and the weekdays of one weekly recurrence
        if let (Some(a), Some(b)) = (m.recur, o.recur)
            && a.freq == Freq::Weekly
            && b.freq == Freq::Weekly
            && !a.last_day
            && !b.last_day
            && (a.byday == 0) != (b.byday == 0)
            && (a.interval == 1 || b.interval == 1)
        {
            m.recur = Some(Recur {
                interval: a.interval.max(b.interval),
                byday: a.byday | b.byday,
                ..a
            });
            o.recur = None;
        }
        take!(rel_day);
        take!(rel_end);
        take!(year);
        take!(month);
        take!(day);
        take!(part);
        take!(weekday);
        take!(week);
        take!(week_half);
        take!(offset);
        take!(offset_end);
        take!(recur);
        take!(nth);
        take!(holiday);
        if o.next_day {
            if m.next_day {
                return false;
            }
            m.next_day = true;
        }
        if o.weekend {
            if m.weekend {
                return false;
            }
            m.weekend = true;
        }
        m.weekend_both |= o.weekend_both;
        m.after_next |= o.after_next;
        m.this_named |= o.this_named;
        m.needs_base |= o.needs_base;
        m.guessed |= o.guessed;
        if !m.coherent() {
            return false;
        }
        *self = m;
        true
    }

    /// Which combinations make sense together.
    pub(crate) fn coherent(&self) -> bool {
        let relday = self.rel_day.is_some() || self.next_day;
        let ymd = self.has_ymd();
        if self.rel_day.is_some() && self.next_day {
            return false;
        }
        if let Some(r) = self.recur {
            if relday
                || self.week.is_some()
                || self.weekend
                || self.offset.is_some()
                || self.part.is_some()
                || self.holiday.is_some()
            {
                return false;
            }
            if self.weekday.is_some() && (r.byday != 0 || r.freq != super::types::Freq::Weekly) {
                return false;
            }
            // "每月第一个周一", "the last friday of every month": monthly only
            if self.nth.is_some() && (r.freq != Freq::Monthly || self.day.is_some() || r.last_day) {
                return false;
            }
            return match r.freq {
                super::types::Freq::Monthly => self.month.is_none() && self.year.is_none(),
                super::types::Freq::Yearly => self.year.is_none(),
                // "从5月1号开始每两周", "every 2 weeks from may 1": the date is where it starts.
                super::types::Freq::Weekly => !ymd || self.month.is_some() && self.day.is_some() && self.weekday.is_none() && r.byday == 0,
                _ => !ymd,
            };
        }
        if self.offset_end.is_some() && (self.offset.is_none() || self.needs_base) {
            return false;
        }
        if self.offset.is_some() && !self.needs_base {
            return !(relday
                || ymd
                || self.weekday.is_some()
                || self.week.is_some()
                || self.weekend);
        }
        if relday && (ymd || self.week.is_some() || self.weekend || self.nth.is_some()) {
            return false;
        }
        if self.weekend && (ymd || self.weekday.is_some()) {
            return false;
        }
        if self.week.is_some() && ymd {
            return false;
        }
        if self.week_half.is_some() && (self.week.is_none() || self.weekday.is_some() || self.weekend || self.nth.is_some()) {
            return false;
        }
        if self.part.is_some() && self.day.is_some() {
            return false;
        }
        // a holiday is a day of its own: "2027年春节", not "春节5号"
        if self.holiday.is_some() && (self.month.is_some() || self.day.is_some() || self.part.is_some() || self.nth.is_some() || self.weekday.is_some()) {
            return false;
        }
        if let Some((_, wd)) = self.nth {
            // business days may be counted in a week too ("下周的最后一个工作日"), not weekdays
            let week_ok = wd == BUSINESS_DAY && !self.has_ymd();
            if self.day.is_some()
                || self.part.is_some()
                || self.weekday.is_some()
                || self.weekend
                || (self.week.is_some() && !week_ok)
            {
                return false;
            }
        }
        if self.year.is_some() && self.day.is_some() && self.month.is_none() {
            return false;
        }
        true
    }
}

/// A part of day, possibly with its own day ("今晚" = today evening) or as a daily recurrence
/// ("every morning").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SegAtom {
    pub kind: SegKind,
    pub day: Option<i32>,
    pub daily: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mer {
    Am,
    Pm,
}

/// A clock time as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Clock {
    /// 0..=24 (24 = midnight at the end of the day).
    pub h: u32,
    pub m: u32,
    pub has_min: bool,
    pub mer: Option<Mer>,
    /// Written unambiguously (24-hour form, noon, midnight).
    pub absolute: bool,
    /// Written with a leading zero ("09:00"): 24-hour form unless a part of day says otherwise.
    pub padded: bool,
    /// The hour is a convention, not written: "EOD", "close of business" = 17:00.
    pub guessed: bool,
}

impl Clock {
    pub(crate) fn bare(h: u32) -> Clock {
        Clock {
            h,
            m: 0,
            has_min: false,
            mer: None,
            absolute: h > 12 || h == 0,
            padded: false,
            guessed: false,
        }
    }
    pub(crate) fn midnight() -> Clock {
        Clock {
            absolute: true,
            ..Clock::bare(24)
        }
    }
    pub(crate) fn noon() -> Clock {
        Clock {
            absolute: true,
            ..Clock::bare(12)
        }
    }
    /// The end of the working day ("EOD", "close of business"): 17:00 by convention.
    pub(crate) fn end_of_day() -> Clock {
        Clock {
            guessed: true,
            ..Clock::bare(17)
        }
    }
    /// No part of day, am/pm or 24-hour form decides the half of the day.
    pub(crate) fn is_bare(&self) -> bool {
        self.mer.is_none() && !self.absolute
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conn {
    /// 到 至 - ~ to until through
    To,
    /// "and" (only after "between")
    And,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prefix {
    /// 从 由 from
    From,
    /// between
    Between,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Glue {
    /// at, @
    At,
    /// around, about, approximately, roughly, circa: an hour after it is approximate but still
    /// an hour ("around 3"), when no other word follows the number ("about 3 people" is a count)
    Approx,
    /// on, of, 的, comma
    Soft,
    /// for, 开始, 持续, 历时, 为期 (before a duration)
    Dur,
    /// 又 (between two durations: "两个星期又一天")
    Plus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Atom {
    Date(DateParts),
    Seg(SegAtom),
    Clock(Clock),
    /// Offset from the reference instant in minutes (hour/minute units).
    TimeOffset(i64),
    /// A span of offsets from the reference instant in minutes: "两小时内" = (0, 120), "五六个小时后"
    /// = (300, 360); the flag: the amount is a convention ("a few minutes", 几个小时 = 2 to 4). An
    /// end of [`REST_OF_DAY`] is the coming midnight ("later today").
    TimeSpan(i64, i64, bool),
    Duration(u32),
    Now,
    /// "这个时候", "this time", "the same time": the reference time of day, on the date written
    /// with it ("明天这个时候", "same time next week").
    SameTime,
    /// A number not yet known to be an hour or a day.
    Bare(u32),
    Conn(Conn),
    Prefix(Prefix),
    Glue(Glue),
}

/// The end of an [`Atom::TimeSpan`] that runs to the coming local midnight, however far off it is.
pub(crate) const REST_OF_DAY: i64 = i64::MAX;

/// An atom with its span in code points.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tok {
    pub s: usize,
    pub e: usize,
    pub a: Atom,
}

/// Collects the longest lexer candidate at one position.
pub(crate) struct Best {
    pub end: usize,
    pub atom: Option<Atom>,
}

impl Best {
    pub(crate) fn new(start: usize) -> Best {
        Best {
            end: start,
            atom: None,
        }
    }
    #[inline]
    pub(crate) fn offer(&mut self, end: usize, atom: Atom) {
        if end > self.end {
            self.end = end;
            self.atom = Some(atom);
        }
    }
    pub(crate) fn offer_opt(&mut self, cand: Option<(usize, Atom)>) {
        if let Some((e, a)) = cand {
            self.offer(e, a);
        }
    }
}

pub(crate) fn date_atom(f: impl FnOnce(&mut DateParts)) -> Atom {
    let mut d = DateParts::default();
    f(&mut d);
    Atom::Date(d)
}
