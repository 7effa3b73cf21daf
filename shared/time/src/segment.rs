//! Parts of the day: the public [`Segment`] and the richer internal [`SegKind`] that also
//! decides how an hour written after the word is read (下午3点 = 15:00, 晚上12点 = 24:00).

use chrono::NaiveTime;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A named part of the day. With the `sqlx` feature it maps to a Postgres `text` column holding
/// the snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "sqlx", derive(sqlx::Type), sqlx(type_name = "text", rename_all = "snake_case"))]
pub enum Segment {
    AllDay,
    EarlyMorning,
    Morning,
    Forenoon,
    Noon,
    Afternoon,
    Evening,
}

impl Segment {
    pub const ALL: [Segment; 7] = [
        Segment::AllDay,
        Segment::EarlyMorning,
        Segment::Morning,
        Segment::Forenoon,
        Segment::Noon,
        Segment::Afternoon,
        Segment::Evening,
    ];

    /// snake_case name, as serialised.
    pub fn as_str(&self) -> &'static str {
        match self {
            Segment::AllDay => "all_day",
            Segment::EarlyMorning => "early_morning",
            Segment::Morning => "morning",
            Segment::Forenoon => "forenoon",
            Segment::Noon => "noon",
            Segment::Afternoon => "afternoon",
            Segment::Evening => "evening",
        }
    }

    /// The Chinese word for the segment.
    pub fn zh_word(&self) -> &'static str {
        match self {
            Segment::AllDay => "全天",
            Segment::EarlyMorning => "凌晨",
            Segment::Morning => "早上",
            Segment::Forenoon => "上午",
            Segment::Noon => "中午",
            Segment::Afternoon => "下午",
            Segment::Evening => "晚上",
        }
    }

    /// Inclusive bounds of the segment.
    pub fn bounds(&self) -> (NaiveTime, NaiveTime) {
        let (a, b) = self.bounds_minutes();
        (hm(a), hm(b))
    }

    /// Inclusive bounds in minutes since midnight.
    pub(crate) fn bounds_minutes(&self) -> (u32, u32) {
        match self {
            Segment::AllDay => (0, 23 * 60 + 59),
            Segment::EarlyMorning => (0, 5 * 60 + 59),
            Segment::Morning => (6 * 60, 8 * 60 + 59),
            Segment::Forenoon => (9 * 60, 11 * 60 + 59),
            Segment::Noon => (12 * 60, 13 * 60 + 59),
            Segment::Afternoon => (14 * 60, 17 * 60 + 59),
            Segment::Evening => (18 * 60, 23 * 60 + 59),
        }
    }
}

fn hm(m: u32) -> NaiveTime {
    NaiveTime::from_hms_opt(m / 60, m % 60, 0).unwrap_or(NaiveTime::MIN)
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error of [`Segment::from_str`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseSegmentError(pub String);

impl fmt::Display for ParseSegmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown part of day: {:?}", self.0)
    }
}

impl std::error::Error for ParseSegmentError {}

impl FromStr for Segment {
    type Err = ParseSegmentError;

    /// Accepts the snake_case names and the Chinese/English words
    /// ("afternoon", "下午", "early morning", "凌晨", "tonight", "晚上", "all day", ...).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm: String = s
            .trim()
            .chars()
            .map(|c| match c {
                '-' | ' ' => '_',
                c => c.to_ascii_lowercase(),
            })
            .collect();
        let seg = match norm.as_str() {
            "all_day" | "allday" | "whole_day" | "全天" | "整天" | "白天" => Segment::AllDay,
            "early_morning" | "凌晨" | "黎明" | "清晨" | "后半夜" | "後半夜" => {
                Segment::EarlyMorning
            }
            "morning" | "早上" | "早晨" | "早" | "今早" => Segment::Morning,
            "forenoon" | "late_morning" | "上午" => Segment::Forenoon,
            "noon" | "lunch" | "midday" | "中午" | "正午" => Segment::Noon,
            "afternoon" | "下午" | "午后" | "午後" => Segment::Afternoon,
            "evening" | "night" | "tonight" | "晚上" | "今晚" | "夜里" | "夜裡" | "夜晚"
            | "傍晚" | "晚" => Segment::Evening,
            _ => return Err(ParseSegmentError(s.to_string())),
        };
        Ok(seg)
    }
}

/// Internal part-of-day words, finer than [`Segment`] because they read hours differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SegKind {
    /// 凌晨: hours as written, 12 = 00:00.
    EarlyMorning,
    /// 黎明 (dawn).
    Dawn,
    /// 后半夜 (small hours).
    LateNight,
    /// 早上/早晨/morning: as written.
    Morning,
    /// 上午.
    Forenoon,
    /// 中午/lunch: 1-5 are PM.
    Noon,
    /// 下午/afternoon: PM.
    Afternoon,
    /// 晚上/evening/tonight: PM, 12 = 24:00, 1-4 = small hours after the evening.
    Evening,
    /// 夜里/night: like evening.
    Night,
    /// 白天 (daytime): 1-6 PM.
    Daytime,
    /// 全天/all day.
    AllDay,
}

impl SegKind {
    pub(crate) fn segment(self) -> Segment {
        match self {
            SegKind::EarlyMorning | SegKind::Dawn | SegKind::LateNight => Segment::EarlyMorning,
            SegKind::Morning => Segment::Morning,
            SegKind::Forenoon => Segment::Forenoon,
            SegKind::Noon => Segment::Noon,
            SegKind::Afternoon => Segment::Afternoon,
            SegKind::Evening | SegKind::Night => Segment::Evening,
            SegKind::Daytime | SegKind::AllDay => Segment::AllDay,
        }
    }

    /// Minutes since midnight (may exceed 24h for the small hours after an evening) of hour `h`
    /// (0..=12 as written) and minute `m` read within this part of the day.
    /// `None` means the word does not fix AM/PM (all day).
    pub(crate) fn read_hour(self, h: u32, m: u32) -> Option<u32> {
        let h = match self {
            SegKind::EarlyMorning | SegKind::Dawn | SegKind::LateNight => {
                if h == 12 {
                    0
                } else {
                    h
                }
            }
            SegKind::Morning | SegKind::Forenoon => h,
            SegKind::Noon => {
                if (1..=5).contains(&h) {
                    h + 12
                } else {
                    h
                }
            }
            SegKind::Afternoon => {
                if h < 12 {
                    h + 12
                } else {
                    h
                }
            }
            SegKind::Evening | SegKind::Night => match h {
                12 => 24,
                0 => 24,
                1..=4 => 24 + h,
                _ => h + 12,
            },
            SegKind::Daytime => {
                if (1..=6).contains(&h) {
                    h + 12
                } else {
                    h
                }
            }
            SegKind::AllDay => return None,
        };
        Some(h * 60 + m)
    }

    /// Last minute (inclusive) of the part of day, to decide whether it has passed.
    pub(crate) fn end_minute(self) -> u32 {
        self.segment().bounds_minutes().1
    }
}
