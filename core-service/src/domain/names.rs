//! Names and codes with the bounds of contract sections 6 and 7.

use crate::error::{ServiceError, ServiceResult};

const MAX_NAME_CHARS: usize = 255;
const MAX_CODE_CHARS: usize = 64;

fn parse_name(field: &str, raw: &str) -> ServiceResult<String> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(ServiceError::invalid(format!("{field} must not be blank.")));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(ServiceError::invalid(format!(
            "{field} must be at most {MAX_NAME_CHARS} characters."
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(ServiceError::invalid(format!(
            "{field} must not contain control characters."
        )));
    }
    Ok(name.to_owned())
}

/// A department name: not blank, at most 255 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepartmentName(String);

impl DepartmentName {
    pub fn parse(raw: &str) -> ServiceResult<Self> {
        parse_name("name", raw).map(Self)
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// A group name: not blank, at most 255 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupName(String);

impl GroupName {
    pub fn parse(raw: &str) -> ServiceResult<Self> {
        parse_name("name", raw).map(Self)
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// A department code: at most 64 characters; empty means "no code".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepartmentCode(Option<String>);

impl DepartmentCode {
    pub fn parse(raw: &str) -> ServiceResult<Self> {
        let code = raw.trim();
        if code.chars().count() > MAX_CODE_CHARS {
            return Err(ServiceError::invalid(format!(
                "code must be at most {MAX_CODE_CHARS} characters."
            )));
        }
        if code.chars().any(char::is_control) {
            return Err(ServiceError::invalid(
                "code must not contain control characters.",
            ));
        }
        Ok(Self((!code.is_empty()).then(|| code.to_owned())))
    }

    pub fn into_inner(self) -> Option<String> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(
            DepartmentName::parse("  Sales ").unwrap().into_inner(),
            "Sales"
        );
        assert!(DepartmentName::parse("   ").is_err());
        assert!(GroupName::parse(&"é".repeat(255)).is_ok());
        let err = GroupName::parse(&"é".repeat(256)).unwrap_err();
        assert!(err.to_string().contains("name"));
    }

    #[test]
    fn an_empty_code_means_no_code() {
        assert_eq!(DepartmentCode::parse(" ").unwrap().into_inner(), None);
        assert_eq!(
            DepartmentCode::parse("S-1").unwrap().into_inner(),
            Some("S-1".into())
        );
        assert!(DepartmentCode::parse(&"c".repeat(65)).is_err());
    }
}
