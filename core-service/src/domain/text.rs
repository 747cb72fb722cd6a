//! Free text with the bounds of contract sections 6 to 8: names, titles, types and
//! descriptions.

use super::invalid::{Invalid, Reason};

/// Names and titles (departments, groups, projects, custom roles, content items).
pub const MAX_NAME_CHARS: usize = 255;
/// A content item's type.
pub const MAX_TYPE_CHARS: usize = 255;
pub const MAX_DESCRIPTION_CHARS: usize = 65_535;

/// Trimmed text that is not blank, at most `max` characters, without control characters.
pub fn required_text(field: &'static str, raw: &str, max: usize) -> Result<String, Invalid> {
    let text = raw.trim();
    if text.is_empty() {
        return Err(Invalid::new(field, Reason::Blank));
    }
    if text.chars().count() > max {
        return Err(Invalid::new(field, Reason::TooLong { max }));
    }
    if text.chars().any(char::is_control) {
        return Err(Invalid::new(field, Reason::ControlCharacters));
    }
    Ok(text.to_owned())
}

/// A content item's description: kept as given (line breaks are fine, and blank is
/// allowed), at most [`MAX_DESCRIPTION_CHARS`], and without NUL, which PostgreSQL
/// cannot store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Description(String);

impl Description {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        if raw.chars().count() > MAX_DESCRIPTION_CHARS {
            return Err(Invalid::new(
                "description",
                Reason::TooLong {
                    max: MAX_DESCRIPTION_CHARS,
                },
            ));
        }
        if raw.contains('\0') {
            return Err(Invalid::new("description", Reason::NulCharacters));
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_text_is_trimmed_bounded_and_free_of_control_characters() {
        assert_eq!(required_text("title", "  Intro ", 255).unwrap(), "Intro");
        for (raw, needle) in [
            ("   ", "title must not be blank"),
            ("a\u{7}b", "title must not contain control characters"),
            (
                &"é".repeat(256) as &str,
                "title must be at most 255 characters",
            ),
        ] {
            let err = required_text("title", raw, 255).unwrap_err();
            assert_eq!(err.to_string(), needle);
        }
    }

    #[test]
    fn descriptions_keep_line_breaks_and_refuse_nul() {
        assert_eq!(
            Description::parse(" two\nlines ").unwrap().into_inner(),
            " two\nlines "
        );
        assert!(Description::parse("").is_ok());
        assert!(Description::parse("a\0b").is_err());
        assert!(Description::parse(&"d".repeat(MAX_DESCRIPTION_CHARS + 1)).is_err());
    }
}
