//! Names and codes with the bounds of contract sections 6 and 7.

use super::{
    invalid::{Invalid, Reason},
    text::{MAX_NAME_CHARS, required_text},
};

pub const MAX_CODE_CHARS: usize = 64;

/// A department name: not blank, at most 255 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepartmentName(String);

impl DepartmentName {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        required_text("name", raw, MAX_NAME_CHARS).map(Self)
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// A group name: not blank, at most 255 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupName(String);

impl GroupName {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        required_text("name", raw, MAX_NAME_CHARS).map(Self)
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// A project name: not blank, at most 255 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectName(String);

impl ProjectName {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        required_text("name", raw, MAX_NAME_CHARS).map(Self)
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// A department code: at most 64 characters; empty means "no code".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DepartmentCode(Option<String>);

impl DepartmentCode {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let code = raw.trim();
        if code.chars().count() > MAX_CODE_CHARS {
            return Err(Invalid::new(
                "code",
                Reason::TooLong {
                    max: MAX_CODE_CHARS,
                },
            ));
        }
        if code.chars().any(char::is_control) {
            return Err(Invalid::new("code", Reason::ControlCharacters));
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
