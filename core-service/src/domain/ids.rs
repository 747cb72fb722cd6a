//! Identifiers are UUIDs in hyphenated form, accepted in any case and written lower-case.

use std::collections::BTreeSet;

use uuid::Uuid;

use super::invalid::{Invalid, Reason};

/// Ids one call may name in a list (members, authors, managed departments, enrollments,
/// users whose points are read): bounded so one request cannot hold the database long.
pub const MAX_LIST_IDS: usize = 10_000;

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
pub fn parse_field_id(field: &'static str, raw: &str) -> Result<Uuid, Invalid> {
    parse_uuid(raw).ok_or_else(|| {
        let reason = if raw.trim().is_empty() {
            Reason::Missing
        } else {
            Reason::NotAnId { raw: clip(raw) }
        };
        Invalid::new(field, reason)
    })
}

/// An optional identifier field: absent or blank means none.
pub fn parse_optional_field_id(
    field: &'static str,
    raw: Option<&str>,
) -> Result<Option<Uuid>, Invalid> {
    raw.filter(|raw| !raw.trim().is_empty())
        .map(|raw| parse_field_id(field, raw))
        .transpose()
}

/// The identifier of the resource a call addresses, as given. Parsing cannot fail: a
/// malformed id names nothing, so it answers NOT_FOUND like an unknown one, and only
/// after the request's fields were judged ([`ResourceRef::id`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRef {
    raw: String,
    id: Option<Uuid>,
}

impl ResourceRef {
    pub fn parse(raw: impl Into<String>) -> Self {
        let raw = raw.into();
        let id = parse_uuid(&raw);
        Self { raw, id }
    }

    /// The id, or [`NotFound`] for `what` (`"Group"`) when it cannot name anything.
    pub fn id(&self, what: &str) -> Result<Uuid, NotFound> {
        self.id.ok_or_else(|| not_found(what, &self.raw))
    }

    /// [`NotFound`] for `what`, echoing the id as the caller gave it.
    pub fn not_found(&self, what: &str) -> NotFound {
        not_found(what, &self.raw)
    }
}

/// Ids of a list field: each a UUID, repeated ids counted once, at most
/// [`MAX_LIST_IDS`] given. Ascending.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdList(Vec<Uuid>);

impl IdList {
    pub fn parse(field: &'static str, raw_ids: &[String]) -> Result<Self, Invalid> {
        if raw_ids.len() > MAX_LIST_IDS {
            return Err(Invalid::new(
                field,
                Reason::TooManyIds {
                    max: MAX_LIST_IDS,
                    given: raw_ids.len(),
                },
            ));
        }
        let ids: BTreeSet<Uuid> = raw_ids
            .iter()
            .map(|raw| {
                parse_uuid(raw)
                    .ok_or_else(|| Invalid::new(field, Reason::NotAnIdInList { raw: clip(raw) }))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self(ids.into_iter().collect()))
    }

    /// Like [`IdList::parse`], and refusing an empty list.
    pub fn parse_non_empty(field: &'static str, raw_ids: &[String]) -> Result<Self, Invalid> {
        if raw_ids.is_empty() {
            return Err(Invalid::new(field, Reason::NoIds));
        }
        Self::parse(field, raw_ids)
    }

    pub fn as_slice(&self) -> &[Uuid] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_inner(self) -> Vec<Uuid> {
        self.0
    }
}

/// A resource the caller named does not exist in its account (NOT_FOUND); the message
/// names what was looked for and echoes the id as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotFound(String);

impl NotFound {
    pub fn into_message(self) -> String {
        self.0
    }
}

/// The one "does not exist" message, used both for malformed ids and for ids of other accounts.
pub fn not_found(what: &str, raw: &str) -> NotFound {
    NotFound(format!("{what} '{}' was not found.", clip(raw)))
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
        assert_eq!(err.to_string(), "parentDepartmentId is required");
    }

    #[test]
    fn echoed_input_is_clipped() {
        let long = "x".repeat(1000);
        assert!(clip(&long).chars().count() <= 65);
    }

    #[test]
    fn id_lists_are_deduplicated_and_name_the_field_of_a_bad_id() {
        let a = Uuid::now_v7();
        let ids = IdList::parse("userIds", &[a.to_string(), a.to_string().to_uppercase()]).unwrap();
        assert_eq!(ids.into_inner(), vec![a]);
        let err = IdList::parse("userIds", &["x".into()]).unwrap_err();
        assert_eq!(err.to_string(), "userIds: 'x' is not a valid identifier");
    }

    #[test]
    fn id_lists_are_bounded_and_may_be_required_to_name_one() {
        let too_many = vec![Uuid::nil().to_string(); MAX_LIST_IDS + 1];
        let err = IdList::parse("userIds", &too_many).unwrap_err();
        assert!(err.to_string().contains("at most 10000 ids"), "{err}");
        assert!(IdList::parse("userIds", &[]).unwrap().is_empty());
        let err = IdList::parse_non_empty("enrollmentIds", &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "enrollmentIds must contain at least one id"
        );
    }

    #[test]
    fn a_resource_ref_answers_not_found_only_when_asked() {
        let malformed = ResourceRef::parse("nope");
        let err = malformed.id("Group").unwrap_err();
        assert_eq!(err.to_string(), "Group 'nope' was not found.");
        let id = Uuid::now_v7();
        assert_eq!(ResourceRef::parse(id.to_string()).id("Group").unwrap(), id);
    }
}
