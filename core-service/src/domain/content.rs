//! Values of content items: when one was added and where it is viewed (contract section 8).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::invalid::{Invalid, Reason};

pub const MAX_URL_CHARS: usize = 2_048;

/// When a content item was added: RFC 3339 / ISO 8601 with an offset, kept in UTC to
/// the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddedDate(DateTime<Utc>);

impl AddedDate {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        DateTime::parse_from_rfc3339(raw.trim())
            .map(|at| Self::at(at.with_timezone(&Utc)))
            .map_err(|_| {
                Invalid::new(
                    "addedDate",
                    Reason::NotADateTime {
                        raw: raw.to_owned(),
                    },
                )
            })
    }

    /// Absent or blank means now.
    pub fn parse_or_now(raw: Option<&str>) -> Result<Self, Invalid> {
        match raw.filter(|raw| !raw.trim().is_empty()) {
            Some(raw) => Self::parse(raw),
            None => Ok(Self::at(Utc::now())),
        }
    }

    fn at(at: DateTime<Utc>) -> Self {
        Self(DateTime::from_timestamp(at.timestamp(), 0).unwrap_or(at))
    }

    pub fn into_inner(self) -> DateTime<Utc> {
        self.0
    }
}

/// Stored in UTC, so the offset is always `+00:00` (never `Z`).
pub fn format_added_date(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S+00:00").to_string()
}

/// Where a content item is viewed: an absolute `http` or `https` URL with a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewUrl(String);

impl ViewUrl {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let raw = raw.trim();
        let invalid = || {
            Invalid::new(
                "viewUrl",
                Reason::NotAnHttpUrl {
                    raw: raw.to_owned(),
                },
            )
        };
        if raw.chars().count() > MAX_URL_CHARS {
            return Err(Invalid::new(
                "viewUrl",
                Reason::TooLong { max: MAX_URL_CHARS },
            ));
        }
        let uri: http::Uri = raw.parse().map_err(|_| invalid())?;
        let scheme_ok = uri
            .scheme_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"));
        let host_ok = uri.host().is_some_and(|h| !h.is_empty());
        if scheme_ok && host_ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(invalid())
        }
    }

    /// Absent or blank means none: the item is then viewed at [`default_view_url`].
    pub fn parse_optional(raw: Option<&str>) -> Result<Option<Self>, Invalid> {
        raw.filter(|raw| !raw.trim().is_empty())
            .map(Self::parse)
            .transpose()
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// `{account URL}/view/{contentItemId}`.
pub fn default_view_url(account_url: &str, id: Uuid) -> String {
    format!("{}/view/{id}", account_url.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;

    use super::*;

    #[test]
    fn added_dates_have_seconds_and_a_numeric_offset() {
        let at = Utc.with_ymd_and_hms(2019, 3, 26, 6, 34, 57).unwrap()
            + chrono::Duration::milliseconds(789);
        assert_eq!(format_added_date(at), "2019-03-26T06:34:57+00:00");
    }

    #[test]
    fn added_dates_are_stored_in_utc_to_the_second() {
        let at = AddedDate::parse("2019-03-26T08:34:57.789+02:00")
            .unwrap()
            .into_inner();
        assert_eq!(format_added_date(at), "2019-03-26T06:34:57+00:00");
        assert!(AddedDate::parse("2019-03-26T06:34:57").is_err());
        assert!(
            AddedDate::parse("yesterday")
                .unwrap_err()
                .to_string()
                .contains("addedDate")
        );
    }

    #[test]
    fn view_urls_are_absolute_http_urls() {
        assert!(ViewUrl::parse("https://cdn.example.com/view/1?x=2").is_ok());
        assert!(ViewUrl::parse("HTTP://cdn.example.com").is_ok());
        for bad in [
            "/view/1",
            "ftp://cdn.example.com/x",
            "https://",
            "https://exa mple.com",
            "view",
        ] {
            let err = ViewUrl::parse(bad).unwrap_err();
            assert!(err.to_string().contains("viewUrl"), "{bad}: {err}");
        }
    }

    #[test]
    fn view_urls_hang_off_the_account_url() {
        let id = Uuid::nil();
        assert_eq!(
            default_view_url("https://a.example.com/", id),
            "https://a.example.com/view/00000000-0000-0000-0000-000000000000"
        );
    }
}
