//! Identifiers are UUIDs in hyphenated form, accepted in any case and written lower-case.

use uuid::Uuid;

use crate::error::{ServiceError, ServiceResult};

/// A new identifier: UUID v7, so ids of new rows sort by creation time.
pub fn new_id() -> Uuid {
    Uuid::now_v7()
}

/// Parses a hyphenated UUID (36 characters, any case); other UUID spellings are refused
/// so that one resource has one written form.
/// Nothing is trimmed here: the XML reader trims element text, and a path segment with
/// spaces does not name a resource.
pub fn parse_uuid(raw: &str) -> Option<Uuid> {
    if raw.len() != 36 {
        return None;
    }
    Uuid::try_parse(raw).ok()
}

/// An identifier given in a request field: malformed is a client error naming the field.
pub fn parse_field_id(field: &str, raw: &str) -> ServiceResult<Uuid> {
    parse_uuid(raw).ok_or_else(|| {
        if raw.trim().is_empty() {
            ServiceError::invalid(format!("{field} is required."))
        } else {
            ServiceError::invalid(format!(
                "{field} '{}' is not a valid identifier.",
                clip(raw)
            ))
        }
    })
}

/// The identifier of the resource a call addresses: malformed means it names nothing.
pub fn parse_resource_id(what: &str, raw: &str) -> ServiceResult<Uuid> {
    parse_uuid(raw).ok_or_else(|| not_found(what, raw))
}

/// The one "does not exist" message, used both for malformed ids and for ids of other accounts.
pub fn not_found(what: &str, raw: &str) -> ServiceError {
    ServiceError::not_found(format!("{what} '{}' was not found.", clip(raw)))
}

/// Echoing caller input into messages is useful, but never unboundedly.
pub fn clip(raw: &str) -> String {
    const MAX: usize = 64;
    let raw = raw.trim();
    if raw.chars().count() <= MAX {
        raw.to_owned()
    } else {
        let head: String = raw.chars().take(MAX).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_accepted_in_any_case_and_only_hyphenated() {
        let id = parse_uuid("0192F3A4-5B6C-7D8E-9F00-112233445566").unwrap();
        assert_eq!(id.to_string(), "0192f3a4-5b6c-7d8e-9f00-112233445566");
        assert!(parse_uuid("0192f3a45b6c7d8e9f00112233445566").is_none());
        assert!(parse_uuid("{0192f3a4-5b6c-7d8e-9f00-112233445566}").is_none());
        assert!(parse_uuid("not-a-uuid").is_none());
        assert!(parse_uuid(" 0192f3a4-5b6c-7d8e-9f00-112233445566").is_none());
    }

    #[test]
    fn field_errors_name_the_field() {
        let err = parse_field_id("parentDepartmentId", "nope").unwrap_err();
        assert!(err.to_string().contains("parentDepartmentId"));
        let err = parse_field_id("parentDepartmentId", "  ").unwrap_err();
        assert_eq!(err.to_string(), "parentDepartmentId is required.");
    }

    #[test]
    fn echoed_input_is_clipped() {
        let long = "x".repeat(1000);
        assert!(clip(&long).chars().count() <= 65);
    }
}
