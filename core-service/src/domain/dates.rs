//! The dates administrators write: an enrollment's access and due dates and a result's
//! completion date.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

use super::{Invalid, Reason};

/// `YYYY-MM-DD HH:MM:SS` (the documented form; UTC, as the zone is not stated), the same with
/// a `T`, `YYYY-MM-DD` (midnight UTC), or RFC 3339 with an offset (C11 sends ISO 8601);
/// surrounding blanks ignored.
pub fn parse_administrator_date(field: &'static str, raw: &str) -> Result<DateTime<Utc>, Invalid> {
    let raw = raw.trim();
    let naive = |format| NaiveDateTime::parse_from_str(raw, format).ok();
    DateTime::parse_from_rfc3339(raw)
        .map(|at| at.to_utc())
        .ok()
        .or_else(|| naive("%Y-%m-%d %H:%M:%S").map(|at| at.and_utc()))
        .or_else(|| naive("%Y-%m-%dT%H:%M:%S").map(|at| at.and_utc()))
        .or_else(|| {
            NaiveDate::parse_from_str(raw, "%Y-%m-%d")
                .ok()
                .and_then(|day| day.and_hms_opt(0, 0, 0))
                .map(|at| at.and_utc())
        })
        .ok_or_else(|| {
            Invalid::new(
                field,
                Reason::NotAnEnrollmentDate {
                    raw: raw.to_owned(),
                },
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_read_in_the_documented_and_iso_forms_as_utc() {
        for (text, expected) in [
            ("2019-09-26 10:30:00", "2019-09-26T10:30:00+00:00"),
            (" 2019-09-26T10:30:00 ", "2019-09-26T10:30:00+00:00"),
            ("2019-09-26T12:30:00+02:00", "2019-09-26T10:30:00+00:00"),
            ("2019-09-26T10:30:00Z", "2019-09-26T10:30:00+00:00"),
            ("2019-09-26", "2019-09-26T00:00:00+00:00"),
        ] {
            assert_eq!(
                parse_administrator_date("accessDate", text)
                    .unwrap()
                    .to_rfc3339(),
                expected
            );
        }
        let err = parse_administrator_date("accessDate", "26.09.2019").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("accessDate '26.09.2019' must be a date")
        );
    }
}
