//! A user's profile fields beyond login, e-mail and names (neighbours 4.1, 4.6): `JOB_TITLE`,
//! `PHONE`, `COUNTRY`, `USER_DEFINED_FIELDn` and whatever else an account's clients send.
//!
//! Writes name them in lower case (`<job_title>`), reads in upper case (`JOB_TITLE`); the
//! stored and compared form is upper case. Login, e-mail and names have their own columns,
//! so their names are refused here rather than stored twice.

use super::invalid::{Invalid, Reason};

pub const MAX_FIELDS: usize = 100;
pub const MAX_NAME_CHARS: usize = 64;
pub const MAX_VALUE_CHARS: usize = 1_000;
/// The fields with columns of their own.
pub const RESERVED: [&str; 4] = ["LOGIN", "EMAIL", "FIRST_NAME", "LAST_NAME"];

/// One field: an upper-case name and a trimmed value; an empty value, in an update,
/// removes the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileField {
    pub name: String,
    pub value: String,
}

/// Distinct, well-formed fields, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfileFields(Vec<ProfileField>);

impl ProfileFields {
    pub fn parse<'a>(given: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self, Invalid> {
        let bad = |name: &str, problem: String| {
            Invalid::new(
                "fields",
                Reason::ProfileField {
                    name: name.to_owned(),
                    problem,
                },
            )
        };
        let mut fields = Vec::new();
        for (raw_name, raw_value) in given {
            let name = raw_name.trim().to_ascii_uppercase();
            let well_formed = !name.is_empty()
                && name.len() <= MAX_NAME_CHARS
                && name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
            if !well_formed {
                return Err(bad(
                    raw_name,
                    format!(
                        "must be a name of 1 to {MAX_NAME_CHARS} letters, digits and underscores"
                    ),
                ));
            }
            if RESERVED.contains(&name.as_str()) {
                return Err(bad(
                    raw_name,
                    "has its own element; give it there".to_owned(),
                ));
            }
            let value = raw_value.trim();
            if value.chars().count() > MAX_VALUE_CHARS {
                return Err(bad(
                    raw_name,
                    format!("must be at most {MAX_VALUE_CHARS} characters long"),
                ));
            }
            if value.chars().any(char::is_control) {
                return Err(bad(raw_name, "must not hold control characters".to_owned()));
            }
            fields.push(ProfileField {
                name,
                value: value.to_owned(),
            });
        }
        if fields.len() > MAX_FIELDS {
            return Err(Invalid::new(
                "fields",
                Reason::TooManyEntries { max: MAX_FIELDS },
            ));
        }
        fields.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(twice) = fields.windows(2).find(|pair| pair[0].name == pair[1].name) {
            return Err(bad(&twice[0].name, "is given more than once".to_owned()));
        }
        Ok(Self(fields))
    }

    pub fn as_slice(&self) -> &[ProfileField] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_upper_cased_and_sorted() {
        let fields = ProfileFields::parse([("phone", " 555 "), ("job_title", "Clerk")]).unwrap();
        assert_eq!(
            fields.as_slice(),
            [
                ProfileField {
                    name: "JOB_TITLE".into(),
                    value: "Clerk".into()
                },
                ProfileField {
                    name: "PHONE".into(),
                    value: "555".into()
                },
            ]
        );
    }

    #[test]
    fn bad_fields_are_refused_naming_them() {
        let long = "x".repeat(MAX_VALUE_CHARS + 1);
        for (given, needle) in [
            (vec![("job title", "x")], "field 'job title' must be a name"),
            (vec![("", "x")], "must be a name"),
            (vec![("email", "a@b")], "field 'email' has its own element"),
            (
                vec![("PHONE", "1"), ("phone", "2")],
                "'PHONE' is given more than once",
            ),
            (vec![("phone", long.as_str())], "at most 1000 characters"),
            (vec![("phone", "a\u{7}b")], "control characters"),
        ] {
            let err = ProfileFields::parse(given).unwrap_err().to_string();
            assert!(err.starts_with("fields"), "{err}");
            assert!(err.contains(needle), "{err}");
        }
        let many: Vec<String> = (0..=MAX_FIELDS).map(|n| format!("F{n}")).collect();
        let err = ProfileFields::parse(many.iter().map(|name| (name.as_str(), "v"))).unwrap_err();
        assert!(err.to_string().contains("at most 100"), "{err}");
    }
}
