//! Clock times to minutes since midnight: am/pm, a part of day, the 24-hour form, and the rules
//! for a bare hour (the earliest not passed today, 1-6 PM on another day); a range's unmarked end.

use crate::dates::add_days;
use crate::segment::SegKind;
use crate::types::{Clock, Mer};
use crate::{Grain, Resolution};
use chrono::{NaiveDate, NaiveTime};


/// How a bare hour (no part of day, no am/pm) is read.
#[derive(Clone, Copy)]
pub(super) enum Mode {
    /// On the reference date: the earliest of h and h+12 not passed (minutes since midnight).
    Reference(u32),
    /// Another date (or a recurrence): 1-6 are PM, 7-12 as written.
    Other,
}

pub(super) fn empty_res(date: NaiveDate, grain: Grain) -> Resolution {
    Resolution::date_only(date, grain)
}

pub(super) fn hm(mins: u32) -> NaiveTime {
    NaiveTime::from_hms_opt((mins / 60) % 24, mins % 60, 0).unwrap_or(NaiveTime::MIN)
}

/// A date plus minutes (possibly past midnight) → (date, time).
pub(super) fn split(date: NaiveDate, mins: u32) -> Option<(NaiveDate, NaiveTime)> {
    let d = add_days(date, (mins / 1440) as i64)?;
    Some((d, hm(mins % 1440)))
}

/// Minutes since midnight of the start date (may exceed 1440: next day).
pub(super) fn clock_minutes(c: &Clock, seg: Option<SegKind>, mode: Mode) -> u32 {
    if c.absolute {
        return c.h * 60 + c.m;
    }
    if let Some(mer) = c.mer {
        let h = match mer {
            Mer::Am => {
                if c.h == 12 {
                    0
                } else {
                    c.h
                }
            }
            Mer::Pm => {
                if c.h < 12 {
                    c.h + 12
                } else {
                    c.h
                }
            }
        };
        return h * 60 + c.m;
    }
    if let Some(v) = seg.and_then(|k| k.read_hour(c.h, c.m)) {
        return v;
    }
    if c.padded {
        return c.h * 60 + c.m;
    }
    match mode {
        Mode::Reference(now) => {
            if c.h == 12 {
                return 12 * 60 + c.m;
            }
            let a = c.h * 60 + c.m;
            if a >= now { a } else { a + 720 }
        }
        Mode::Other => {
            if (1..=6).contains(&c.h) {
                (c.h + 12) * 60 + c.m
            } else {
                c.h * 60 + c.m
            }
        }
    }
}

/// True when the clock is marked (am/pm, 24-hour, part of day).
pub(super) fn marked(c: &Clock, seg: Option<SegKind>) -> bool {
    !c.is_bare() || c.padded || seg.is_some_and(|k| k != SegKind::AllDay)
}

/// The end of a range written without a marker: the earliest reading after `start`.
pub(super) fn after_start(c: &Clock, start: u32) -> u32 {
    let base = c.h * 60 + c.m;
    // 12 may also be midnight ("9~12点" in the evening)
    let mut cands = [base, if c.h <= 12 { base + 720 } else { base }];
    cands.sort_unstable();
    for day in 0..3 {
        for v in cands {
            let v = v + 1440 * day;
            if v > start {
                return v;
            }
        }
    }
    base + 1440
}

pub(super) fn time_grain(c: &Clock) -> Grain {
    if c.has_min {
        Grain::Minute
    } else {
        Grain::Hour
    }
}

/// A bare hour 1-11 (no am/pm, part of day or 24-hour form): which half of the day it is in was
/// chosen by rule, not read.
pub(super) fn half_of_day_guessed(c: &Clock, seg: Option<SegKind>) -> bool {
    !marked(c, seg) && (1..=11).contains(&c.h)
}
