//! The values of learner results (results.md sections 1, 3 and 8): the nine completion
//! statuses, scores in hundredths, the dates results are written and filtered with, and a
//! tracked result whose fields agree with each other ([`TrackedResult`]).

use std::fmt;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};

use super::{Invalid, Reason, ids::clip};

/// A result's completion status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CompletionStatus {
    NotStarted,
    InProgress,
    Pending,
    Complete,
    Passed,
    Accepted,
    Incomplete,
    Failed,
    Declined,
}

/// The nine names, as messages list them.
pub const STATUS_NAMES: &str =
    "not_started, in_progress, pending, complete, passed, accepted, incomplete, failed, declined";

impl CompletionStatus {
    pub const ALL: [CompletionStatus; 9] = [
        CompletionStatus::NotStarted,
        CompletionStatus::InProgress,
        CompletionStatus::Pending,
        CompletionStatus::Complete,
        CompletionStatus::Passed,
        CompletionStatus::Accepted,
        CompletionStatus::Incomplete,
        CompletionStatus::Failed,
        CompletionStatus::Declined,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CompletionStatus::NotStarted => "not_started",
            CompletionStatus::InProgress => "in_progress",
            CompletionStatus::Pending => "pending",
            CompletionStatus::Complete => "complete",
            CompletionStatus::Passed => "passed",
            CompletionStatus::Accepted => "accepted",
            CompletionStatus::Incomplete => "incomplete",
            CompletionStatus::Failed => "failed",
            CompletionStatus::Declined => "declined",
        }
    }

    /// Exactly as written (lower case).
    pub fn from_name(raw: &str) -> Option<CompletionStatus> {
        Self::ALL.into_iter().find(|status| status.as_str() == raw)
    }

    /// One of the nine, or INVALID naming `field`.
    pub fn parse(field: &'static str, raw: &str) -> Result<CompletionStatus, Invalid> {
        Self::from_name(raw).ok_or_else(|| {
            Invalid::new(
                field,
                Reason::NotOneOf {
                    raw: raw.to_owned(),
                    allowed: STATUS_NAMES.to_owned(),
                },
            )
        })
    }

    /// Finished statuses have a completion date; a tracked one is never undone but by a
    /// reset.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            CompletionStatus::Complete
                | CompletionStatus::Passed
                | CompletionStatus::Accepted
                | CompletionStatus::Failed
                | CompletionStatus::Declined
        )
    }

    /// Finished successfully: what `COURSE_COMPLETED_SUCCESSFULLY` announces a move into
    /// (webhooks.md section 7).
    pub fn is_successful(self) -> bool {
        matches!(
            self,
            CompletionStatus::Complete | CompletionStatus::Passed | CompletionStatus::Accepted
        )
    }
}

impl fmt::Display for CompletionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A score from 0 to 100 in hundredths of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Score(i32);

impl Score {
    pub fn from_hundredths(hundredths: i32) -> Score {
        Score(hundredths)
    }

    pub fn hundredths(self) -> i32 {
        self.0
    }

    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 100.0
    }

    /// `value` rounded half away from zero to two decimals, as the number was written:
    /// `83.335` is `83.34` although its nearest double is a little below. `None` outside
    /// 0 to 100 or not a number.
    pub fn from_f64(value: f64) -> Option<Score> {
        if !value.is_finite() || !(0.0..=100.0).contains(&value) {
            return None;
        }
        // The shortest decimal that reads back as `value` is what the client wrote.
        let text = format!("{value}");
        let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
        let whole: i32 = whole.parse().ok()?;
        let digit = |n: usize| {
            fraction
                .as_bytes()
                .get(n)
                .map_or(0, |d| i32::from(d - b'0'))
        };
        let mut hundredths = whole * 100 + digit(0) * 10 + digit(1);
        if digit(2) >= 5 {
            hundredths += 1;
        }
        (hundredths <= 10_000).then_some(Score(hundredths))
    }

    /// A number as text (an import's or a query's), read as [`Score::from_f64`].
    pub fn parse(field: &'static str, value: f64) -> Result<Score, Invalid> {
        Score::from_f64(value).ok_or(Invalid::new(field, Reason::NotAScore))
    }
}

/// `2025-02-01T12:30:00+00:00`: UTC, whole seconds, a numeric offset (never `Z`).
///
/// Written field by field: a results page formats a few thousand of these, and a `strftime`
/// pattern is parsed again on every call.
pub fn format_date(at: DateTime<Utc>) -> String {
    use chrono::{Datelike as _, Timelike as _};
    use std::fmt::Write as _;
    let mut text = String::with_capacity(25);
    let year = at.year();
    // Years outside 0..=9999 keep chrono's spelling (a sign, more digits).
    if (0..=9999).contains(&year) {
        let _ = write!(
            text,
            "{year:04}-{:02}-{:02}T{:02}:{:02}:{:02}+00:00",
            at.month(),
            at.day(),
            at.hour(),
            at.minute(),
            at.second()
        );
    } else {
        let _ = write!(text, "{}", at.format("%Y-%m-%dT%H:%M:%S+00:00"));
    }
    text
}

/// An RFC 3339 date-time (a record's dates), in UTC.
pub fn parse_rfc3339(field: &'static str, raw: &str) -> Result<DateTime<Utc>, Invalid> {
    DateTime::parse_from_rfc3339(raw)
        .map(|at| at.to_utc())
        .map_err(|_| {
            Invalid::new(
                field,
                Reason::NotADateTime {
                    raw: raw.to_owned(),
                },
            )
        })
}

/// A window of instants, both ends inclusive; either may be open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DateWindow {
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
}

/// The names one window's parameters go by: `accessDate`, `accessDate[startDate]`, …
#[derive(Debug, Clone, Copy)]
pub struct WindowFields {
    pub window: &'static str,
    pub start: &'static str,
    pub end: &'static str,
}

impl DateWindow {
    /// The window of two bounds as a query gives them; an empty bound counts as absent.
    pub fn parse(
        fields: WindowFields,
        start: Option<&str>,
        end: Option<&str>,
    ) -> Result<DateWindow, Invalid> {
        let start = present(start)
            .map(|raw| bound(fields.start, raw, false))
            .transpose()?;
        let end = present(end)
            .map(|raw| bound(fields.end, raw, true))
            .transpose()?;
        if let (Some(start), Some(end)) = (start, end)
            && start > end
        {
            return Err(Invalid::new(fields.window, Reason::WindowReversed));
        }
        Ok(DateWindow { start, end })
    }

    pub fn is_open(&self) -> bool {
        self.start.is_none() && self.end.is_none()
    }

    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        self.start.is_none_or(|start| at >= start) && self.end.is_none_or(|end| at <= end)
    }
}

fn present(raw: Option<&str>) -> Option<&str> {
    raw.filter(|raw| !raw.trim().is_empty())
}

/// One bound: `YYYY-MM-DD` (a start at 00:00:00 UTC, an end at the last instant of the day)
/// or RFC 3339, where a space stands for the `+` of an offset (an unencoded `+`).
fn bound(field: &'static str, raw: &str, end: bool) -> Result<DateTime<Utc>, Invalid> {
    let raw = raw.trim();
    if let Ok(day) = NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        && raw.len() == 10
    {
        let midnight = day.and_hms_opt(0, 0, 0).map(|at| at.and_utc());
        let at = if end {
            midnight.map(|at| at + TimeDelta::days(1) - TimeDelta::microseconds(1))
        } else {
            midnight
        };
        if let Some(at) = at {
            return Ok(at);
        }
    }
    let with_plus = match raw.rfind(' ') {
        Some(space) if space > 10 => format!("{}+{}", &raw[..space], &raw[space + 1..]),
        _ => raw.to_owned(),
    };
    DateTime::parse_from_rfc3339(&with_plus)
        .map(|at| at.to_utc())
        .map_err(|_| {
            Invalid::new(
                field,
                Reason::NotAWindowBound {
                    raw: clip(raw).to_string(),
                },
            )
        })
}

/// A field of a tracked result, as the import (camel case) and gRPC (snake case) name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultField {
    EnrollmentId,
    CompletionStatus,
    Progress,
    AwardedScore,
    PassingScore,
    TimeSpent,
    ViewsCount,
    CompletionDate,
    LastViewDate,
}

impl ResultField {
    pub fn camel(self) -> &'static str {
        match self {
            ResultField::EnrollmentId => "enrollmentId",
            ResultField::CompletionStatus => "completionStatus",
            ResultField::Progress => "progress",
            ResultField::AwardedScore => "awardedScore",
            ResultField::PassingScore => "passingScore",
            ResultField::TimeSpent => "timeSpent",
            ResultField::ViewsCount => "viewsCount",
            ResultField::CompletionDate => "completionDate",
            ResultField::LastViewDate => "lastViewDate",
        }
    }

    pub fn snake(self) -> &'static str {
        match self {
            ResultField::EnrollmentId => "enrollment_id",
            ResultField::CompletionStatus => "completion_status",
            ResultField::Progress => "progress",
            ResultField::AwardedScore => "awarded_score",
            ResultField::PassingScore => "passing_score",
            ResultField::TimeSpent => "time_spent",
            ResultField::ViewsCount => "views_count",
            ResultField::CompletionDate => "completion_date",
            ResultField::LastViewDate => "last_view_date",
        }
    }
}

/// A refusal of one field of a tracked result: the field and what is wrong, a sentence
/// that follows the field's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultProblem {
    pub field: ResultField,
    pub problem: String,
}

/// A tracked result as a record or an import entry states it, every field as given.
#[derive(Debug, Clone, Default)]
pub struct RawTrackedResult<'a> {
    pub completion_status: &'a str,
    pub progress: i64,
    pub awarded_score: f64,
    pub passing_score: f64,
    pub time_spent: i64,
    pub views_count: i64,
    pub completion_date: Option<&'a str>,
    pub last_view_date: Option<&'a str>,
}

/// A whole tracked result whose fields agree: a completion date exactly when finished, and
/// `not_started` untouched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackedResult {
    pub status: CompletionStatus,
    pub progress: i32,
    pub awarded_score: Score,
    pub passing_score: Score,
    pub time_spent: i64,
    pub views_count: i64,
    pub completed_at: Option<DateTime<Utc>>,
    pub last_viewed_at: Option<DateTime<Utc>>,
}

impl TrackedResult {
    pub fn parse(raw: &RawTrackedResult<'_>) -> Result<TrackedResult, ResultProblem> {
        let problem = |field, problem: String| ResultProblem { field, problem };
        let status = CompletionStatus::from_name(raw.completion_status).ok_or_else(|| {
            problem(
                ResultField::CompletionStatus,
                format!(
                    "'{}' is not one of {STATUS_NAMES}",
                    clip(raw.completion_status)
                ),
            )
        })?;
        let progress = i32::try_from(raw.progress)
            .ok()
            .filter(|p| (0..=100).contains(p))
            .ok_or_else(|| {
                problem(
                    ResultField::Progress,
                    "must be a whole number from 0 to 100".into(),
                )
            })?;
        let score = |field, value| {
            Score::from_f64(value)
                .ok_or_else(|| problem(field, "must be a number from 0 to 100".into()))
        };
        let awarded_score = score(ResultField::AwardedScore, raw.awarded_score)?;
        let passing_score = score(ResultField::PassingScore, raw.passing_score)?;
        let count = |field, value: i64| {
            (value >= 0)
                .then_some(value)
                .ok_or_else(|| problem(field, "must be a whole number of at least 0".into()))
        };
        let time_spent = count(ResultField::TimeSpent, raw.time_spent)?;
        let views_count = count(ResultField::ViewsCount, raw.views_count)?;
        let date = |field, raw: Option<&str>| {
            raw.map(|raw| {
                DateTime::parse_from_rfc3339(raw)
                    .map(|at| at.to_utc())
                    .map_err(|_| {
                        problem(
                            field,
                            format!(
                                "'{}' must be a date and time with an offset, e.g. 2025-02-01T12:30:00+00:00",
                                clip(raw)
                            ),
                        )
                    })
            })
            .transpose()
        };
        let completed_at = date(ResultField::CompletionDate, raw.completion_date)?;
        let last_viewed_at = date(ResultField::LastViewDate, raw.last_view_date)?;
        match (status.is_finished(), completed_at) {
            (true, None) => {
                return Err(problem(
                    ResultField::CompletionDate,
                    format!("is required for the finished status {status}"),
                ));
            }
            (false, Some(_)) => {
                return Err(problem(
                    ResultField::CompletionDate,
                    format!("must not be given for the unfinished status {status}"),
                ));
            }
            _ => {}
        }
        if status == CompletionStatus::NotStarted {
            let numbers = [
                (ResultField::Progress, i64::from(progress)),
                (
                    ResultField::AwardedScore,
                    i64::from(awarded_score.hundredths()),
                ),
                (
                    ResultField::PassingScore,
                    i64::from(passing_score.hundredths()),
                ),
                (ResultField::TimeSpent, time_spent),
                (ResultField::ViewsCount, views_count),
            ];
            if let Some((field, _)) = numbers.iter().find(|(_, n)| *n != 0) {
                return Err(problem(
                    *field,
                    "must be 0 for not_started (an untouched result)".into(),
                ));
            }
            if last_viewed_at.is_some() {
                return Err(problem(
                    ResultField::LastViewDate,
                    "must not be given for not_started (an untouched result)".into(),
                ));
            }
        }
        Ok(TrackedResult {
            status,
            progress,
            awarded_score,
            passing_score,
            time_spent,
            views_count,
            completed_at,
            last_viewed_at,
        })
    }

    /// A new result, and one started over.
    pub fn untouched() -> TrackedResult {
        TrackedResult {
            status: CompletionStatus::NotStarted,
            progress: 0,
            awarded_score: Score::default(),
            passing_score: Score::default(),
            time_spent: 0,
            views_count: 0,
            completed_at: None,
            last_viewed_at: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_written_as_chrono_writes_them_with_a_numeric_offset() {
        use chrono::TimeZone as _;
        for at in [
            Utc.with_ymd_and_hms(2025, 2, 1, 12, 30, 0).unwrap(),
            Utc.with_ymd_and_hms(1970, 1, 1, 0, 0, 0).unwrap(),
            Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(12345, 6, 7, 8, 9, 10).unwrap(),
            Utc.with_ymd_and_hms(-5, 6, 7, 8, 9, 10).unwrap(),
        ] {
            assert_eq!(
                format_date(at),
                at.format("%Y-%m-%dT%H:%M:%S+00:00").to_string()
            );
        }
        let fraction = Utc.timestamp_opt(1_700_000_000, 999_999_999).unwrap();
        assert_eq!(format_date(fraction), "2023-11-14T22:13:20+00:00");
    }

    #[test]
    fn scores_round_half_away_from_zero_as_written() {
        for (value, hundredths) in [
            (0.0, 0),
            (80.0, 8000),
            (92.5, 9250),
            (83.333, 8333),
            (83.335, 8334),
            (99.995, 10000),
            (100.0, 10000),
            (0.005, 1),
        ] {
            assert_eq!(Score::from_f64(value), Some(Score(hundredths)), "{value}");
        }
        for value in [-0.01, 100.01, 100.005, f64::NAN, f64::INFINITY] {
            assert_eq!(Score::from_f64(value), None, "{value}");
        }
        assert_eq!(Score(8333).as_f64().to_string(), "83.33");
    }

    const ACCESS: WindowFields = WindowFields {
        window: "accessDate",
        start: "accessDate[startDate]",
        end: "accessDate[endDate]",
    };

    #[test]
    fn window_bounds_take_dates_and_date_times_and_a_space_for_plus() {
        let window = DateWindow::parse(ACCESS, Some("2025-02-01"), Some("2025-02-01")).unwrap();
        assert_eq!(
            window.start.map(format_date).as_deref(),
            Some("2025-02-01T00:00:00+00:00")
        );
        let last = DateTime::parse_from_rfc3339("2025-02-01T23:59:59.999Z")
            .unwrap()
            .to_utc();
        assert!(window.contains(last));
        let window = DateWindow::parse(ACCESS, Some("2025-02-01T12:30:00 02:00"), None).unwrap();
        assert_eq!(
            window.start.map(format_date).as_deref(),
            Some("2025-02-01T10:30:00+00:00")
        );
        assert!(
            DateWindow::parse(ACCESS, Some(""), Some(""))
                .unwrap()
                .is_open()
        );
        let err = DateWindow::parse(ACCESS, Some("yesterday"), None).unwrap_err();
        assert_eq!(err.field, "accessDate[startDate]");
        let err = DateWindow::parse(ACCESS, Some("2025-02-02"), Some("2025-02-01")).unwrap_err();
        assert_eq!(err.field, "accessDate");
    }

    fn raw(status: &str) -> RawTrackedResult<'_> {
        RawTrackedResult {
            completion_status: status,
            ..Default::default()
        }
    }

    #[test]
    fn a_tracked_result_has_a_completion_date_exactly_when_finished() {
        let err = TrackedResult::parse(&raw("passed")).unwrap_err();
        assert_eq!(err.field, ResultField::CompletionDate);
        let err = TrackedResult::parse(&RawTrackedResult {
            completion_date: Some("2025-02-01T12:30:00+00:00"),
            ..raw("in_progress")
        })
        .unwrap_err();
        assert_eq!(err.field, ResultField::CompletionDate);
        let err = TrackedResult::parse(&RawTrackedResult {
            views_count: 1,
            ..raw("not_started")
        })
        .unwrap_err();
        assert_eq!(err.field, ResultField::ViewsCount);
        assert_eq!(
            TrackedResult::parse(&raw("not_started")).unwrap(),
            TrackedResult::untouched()
        );
        let err = TrackedResult::parse(&raw("done")).unwrap_err();
        assert_eq!(err.field, ResultField::CompletionStatus);
    }
}
