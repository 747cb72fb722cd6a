//! The one error of every `parse` in [`crate::domain`]: which field, and what is wrong
//! with it. The service maps it to INVALID_ARGUMENT and the import to a refusal naming
//! the entry, both with the same wording, so the two paths can never drift apart.

use std::fmt;

use super::{account_url::AccountUrlError, ids::clip};

/// A value that breaks its rule; `Display` reads as a sentence without its full stop,
/// e.g. `name must not be blank`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Invalid {
    /// The field as the interface names it (`email`, `parentDepartmentId`).
    pub field: &'static str,
    pub reason: Reason,
}

/// What is wrong with a field. Echoed input is clipped when shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// Absent or blank where a value is needed.
    Missing,
    /// Given but blank after trimming.
    Blank,
    /// Given but empty, where spaces would count (passwords).
    Empty,
    TooLong {
        max: usize,
    },
    TooShort {
        min: usize,
    },
    ControlCharacters,
    NulCharacters,
    NotAnId {
        raw: String,
    },
    /// One entry of an id list is not an identifier.
    NotAnIdInList {
        raw: String,
    },
    NoIds,
    /// Not one of a closed set of names (`allowed`, comma-separated).
    NotOneOf {
        raw: String,
        allowed: String,
    },
    /// Needed in this combination of fields, e.g. `role is custom`.
    RequiredWhen(&'static str),
    /// Allowed only in this combination of fields.
    OnlyWhen(&'static str),
    TooManyIds {
        max: usize,
        given: usize,
    },
    /// A login must fit the `X-Auth-Email` header.
    NotVisibleAscii {
        raw: String,
    },
    NotAnAddress {
        raw: String,
    },
    /// A password must fit the `X-Auth-Password` header.
    NotPrintableAscii,
    /// Header values are trimmed, so the edges of a password would be lost.
    PaddedWithSpaces,
    /// A secret must be sendable as a form field or header without escaping surprises.
    NotVisibleAsciiSecret,
    /// A random secret of that length uses many different characters.
    TooFewDistinctCharacters {
        min: usize,
    },
    NotADateTime {
        raw: String,
    },
    NotAnHttpUrl {
        raw: String,
    },
    AccountUrl(AccountUrlError),
    /// A number outside its range (both ends allowed).
    OutOfRange {
        min: u64,
        max: u64,
    },
    /// Not a page token of the listing it was sent to.
    NotAPageToken {
        listing: &'static str,
    },
    /// Two id lists whose every pair is one row, making more rows than allowed.
    TooManyPairs {
        other: &'static str,
        max: usize,
        given: usize,
    },
    /// Not a date in any of the forms enrollment writes take.
    NotAnEnrollmentDate {
        raw: String,
    },
    /// A list with more entries than allowed.
    TooManyEntries {
        max: usize,
    },
    /// One entry of a user's profile fields is wrong; `problem` says how.
    ProfileField {
        name: String,
        problem: String,
    },
    /// Not a score: a number from 0 to 100.
    NotAScore,
    /// Not a bound of a date window.
    NotAWindowBound {
        raw: String,
    },
    /// A window whose start is later than its end.
    WindowReversed,
    /// A rule of its own field, said as a sentence after the field's name.
    Rule(String),
    /// Not a day of the calendar written exactly as `YYYY-MM-DD`.
    NotACalendarDate {
        raw: String,
    },
}

impl Invalid {
    pub fn new(field: &'static str, reason: Reason) -> Self {
        Self { field, reason }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = self.field;
        match &self.reason {
            Reason::Missing => write!(f, "{field} is required"),
            Reason::Blank => write!(f, "{field} must not be blank"),
            Reason::Empty => write!(f, "{field} must not be empty"),
            Reason::TooLong { max } => write!(f, "{field} must be at most {max} characters"),
            Reason::TooShort { min } => write!(f, "{field} must be at least {min} characters"),
            Reason::ControlCharacters => {
                write!(f, "{field} must not contain control characters")
            }
            Reason::NulCharacters => write!(f, "{field} must not contain NUL characters"),
            Reason::NotAnId { raw } => {
                write!(f, "{field} '{}' is not a valid identifier", clip(raw))
            }
            Reason::NotAnIdInList { raw } => {
                write!(f, "{field}: '{}' is not a valid identifier", clip(raw))
            }
            Reason::NoIds => write!(f, "{field} must contain at least one id"),
            Reason::OutOfRange { min, max } => {
                write!(f, "{field} must be a whole number from {min} to {max}")
            }
            Reason::NotAPageToken { listing } => write!(
                f,
                "{field} is not a page token of this listing ({listing}); send the nextPageToken \
                 of the previous page, or none for the first page"
            ),
            Reason::NotOneOf { raw, allowed } => {
                write!(f, "{field} '{}' is not one of {allowed}", clip(raw))
            }
            Reason::RequiredWhen(condition) => write!(f, "{field} is required when {condition}"),
            Reason::OnlyWhen(condition) => write!(f, "{field} may be given only when {condition}"),
            Reason::TooManyIds { max, given } => write!(
                f,
                "{field} must contain at most {max} ids; {given} were given"
            ),
            Reason::NotVisibleAscii { raw } => write!(
                f,
                "{field} '{}' must consist of visible ASCII characters (no spaces), as it is sent in the X-Auth-Email header",
                clip(raw)
            ),
            Reason::NotAnAddress { raw } => write!(
                f,
                "{field} '{}' must be an address of the form name@domain",
                clip(raw)
            ),
            Reason::NotPrintableAscii => write!(
                f,
                "{field} must consist of printable ASCII characters, as it is sent in the X-Auth-Password header"
            ),
            Reason::PaddedWithSpaces => write!(
                f,
                "{field} must not start or end with a space, as header values are trimmed"
            ),
            Reason::NotVisibleAsciiSecret => write!(
                f,
                "{field} must consist of visible ASCII characters (no spaces)"
            ),
            Reason::TooFewDistinctCharacters { min } => write!(
                f,
                "{field} must use at least {min} different characters, as a random secret does"
            ),
            Reason::NotADateTime { raw } => write!(
                f,
                "{field} '{}' must be a date and time with an offset, e.g. 2019-03-26T06:34:57+00:00",
                clip(raw)
            ),
            Reason::NotAnHttpUrl { raw } => write!(
                f,
                "{field} '{}' must be an absolute http or https URL",
                clip(raw)
            ),
            Reason::AccountUrl(err) => write!(f, "{field}: {err}"),
            Reason::TooManyPairs { other, max, given } => write!(
                f,
                "{other} × {field} must make at most {max} enrollments in one request; {given} were asked for"
            ),
            Reason::TooManyEntries { max } => write!(f, "{field} must hold at most {max} entries"),
            Reason::ProfileField { name, problem } => {
                write!(f, "{field}: field '{}' {problem}", clip(name))
            }
            Reason::NotAScore => write!(f, "{field} must be a number from 0 to 100"),
            Reason::NotAWindowBound { raw } => write!(
                f,
                "{field} '{}' must be a date (YYYY-MM-DD) or a date and time with an offset, e.g. 2025-02-01T12:30:00+00:00",
                clip(raw)
            ),
            Reason::WindowReversed => {
                write!(f, "{field}: startDate must not be later than endDate")
            }
            Reason::Rule(problem) => write!(f, "{field}: {problem}"),
            Reason::NotACalendarDate { raw } => write!(
                f,
                "{field} '{}' must be a day of the calendar written as YYYY-MM-DD, e.g. 2026-12-31",
                clip(raw)
            ),
            Reason::NotAnEnrollmentDate { raw } => write!(
                f,
                "{field} '{}' must be a date as YYYY-MM-DD HH:MM:SS (UTC), YYYY-MM-DD or with an offset, e.g. 2019-09-26T10:30:00+00:00",
                clip(raw)
            ),
        }
    }
}
