//! Scheduled status changes (provisioning.md section 6): which change ([`ScheduleKind`]) and
//! its day ([`ScheduledDate`]), and what "today" is for them ([`today`]).

use chrono::{Days, NaiveDate, Utc};

use super::{Invalid, Reason};

/// The two changes a date can be stored for; each kind holds at most one date per user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScheduleKind {
    /// Status 3, for an active user only.
    Deactivation,
    /// Status 5, from 1 or 3.
    Termination,
}

impl ScheduleKind {
    pub const ALL: [ScheduleKind; 2] = [ScheduleKind::Deactivation, ScheduleKind::Termination];

    /// The profile's (and the audit record's) name of the stored date.
    pub fn date_field(self) -> &'static str {
        match self {
            ScheduleKind::Deactivation => "scheduledDeactivationDate",
            ScheduleKind::Termination => "scheduledTerminationDate",
        }
    }
}

/// A UTC day given exactly as `YYYY-MM-DD` that exists in the calendar: `2026-1-5`,
/// `2026-02-30` and ` 2026-01-05` are refused (chrono alone would take the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ScheduledDate(NaiveDate);

impl ScheduledDate {
    pub fn parse(field: &'static str, raw: &str) -> Result<Self, Invalid> {
        if raw.is_empty() {
            return Err(Invalid::new(field, Reason::Missing));
        }
        let refused = || {
            Invalid::new(
                field,
                Reason::NotACalendarDate {
                    raw: raw.to_owned(),
                },
            )
        };
        let shaped = raw.len() == 10
            && raw.bytes().enumerate().all(|(at, byte)| match at {
                4 | 7 => byte == b'-',
                _ => byte.is_ascii_digit(),
            });
        if !shaped {
            return Err(refused());
        }
        NaiveDate::parse_from_str(raw, "%Y-%m-%d")
            .map(Self)
            .map_err(|_| refused())
    }

    pub fn day(self) -> NaiveDate {
        self.0
    }
}

/// The UTC date now plus `offset_days` (`--scheduler-date-offset-days`, to rehearse a coming
/// date): the day section 6 calls "today".
pub fn today(offset_days: i32) -> NaiveDate {
    shifted(Utc::now().date_naive(), offset_days)
}

fn shifted(day: NaiveDate, offset_days: i32) -> NaiveDate {
    let days = Days::new(u64::from(offset_days.unsigned_abs()));
    let moved = if offset_days >= 0 {
        day.checked_add_days(days)
    } else {
        day.checked_sub_days(days)
    };
    // The offset is at most ten years (the setting's range): far inside chrono's calendar.
    moved.unwrap_or(day)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn only_real_days_written_in_full_are_dates() {
        let day = ScheduledDate::parse("date", "2026-12-31").unwrap();
        assert_eq!(day.day(), NaiveDate::from_ymd_opt(2026, 12, 31).unwrap());
        assert!(ScheduledDate::parse("date", "2028-02-29").is_ok());
        for raw in [
            "2026-02-30",
            "2026-1-5",
            "2026-01-5",
            "26-01-05",
            "2026/01/05",
            "2026-01-05T00:00:00Z",
            " 2026-01-05",
            "2027-02-29",
            "2026-13-01",
            "+2026-01-0",
        ] {
            let err = ScheduledDate::parse("date", raw).unwrap_err();
            assert_eq!(err.field, "date", "{raw}");
            assert!(err.to_string().contains("YYYY-MM-DD"), "{raw}: {err}");
        }
        let missing = ScheduledDate::parse("date", "").unwrap_err();
        assert_eq!(missing.to_string(), "date is required");
    }

    #[test]
    fn today_moves_by_the_offset_in_whole_days() {
        let day = NaiveDate::from_ymd_opt(2026, 2, 28).unwrap();
        assert_eq!(
            shifted(day, 1),
            NaiveDate::from_ymd_opt(2026, 3, 1).unwrap()
        );
        assert_eq!(
            shifted(day, -59),
            NaiveDate::from_ymd_opt(2025, 12, 31).unwrap()
        );
        assert_eq!(shifted(day, 0), day);
        assert_eq!(
            shifted(day, 3650),
            NaiveDate::from_ymd_opt(2036, 2, 26).unwrap()
        );
    }

    proptest! {
        #[test]
        fn every_day_reads_back_from_its_own_text(days in 0_i64..3_000_000) {
            let day = NaiveDate::from_ymd_opt(1, 1, 1).unwrap() + chrono::TimeDelta::days(days);
            let text = day.format("%Y-%m-%d").to_string();
            prop_assume!(text.len() == 10);
            prop_assert_eq!(ScheduledDate::parse("date", &text).unwrap().day(), day);
        }

        #[test]
        fn no_text_panics(raw in "\\PC{0,12}") {
            let _ = ScheduledDate::parse("date", &raw);
        }
    }
}
