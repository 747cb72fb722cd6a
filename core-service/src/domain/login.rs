//! Logins and plain-text passwords: both travel in headers (`X-Auth-Email`,
//! `X-Auth-Password`), so both must be sendable there.

use std::fmt;

use super::invalid::{Invalid, Reason};

pub const MAX_EMAIL_CHARS: usize = 255;
/// The one password minimum, for passwords set over gRPC and given in an import.
pub const MIN_PASSWORD_CHARS: usize = 8;
pub const MAX_PASSWORD_CHARS: usize = 1_024;

/// Logins are compared case-insensitively (contract section 2): this is the form they
/// are stored and looked up in.
pub fn email_key(email: &str) -> String {
    email.trim().to_lowercase()
}

/// A login: trimmed, 1 to 255 characters of visible ASCII, since it travels in the
/// `X-Auth-Email` header. The contract's logins (the directory's, the import's) are e-mail
/// addresses ([`Login::parse`]); a login set over HTTP may be any such name
/// ([`Login::parse_name`], neighbours 4.1 shows `owner`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login(String);

impl Login {
    /// A login that must be an e-mail address (reported as field `email`).
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        address("email", raw).map(Self)
    }

    /// A login that may be any name (reported as field `login`).
    pub fn parse_name(raw: &str) -> Result<Self, Invalid> {
        header_text("login", raw).map(|name| Self(name.to_owned()))
    }

    /// Whether the login is an e-mail address (then it is the profile's `EMAIL` too,
    /// unless another address is given).
    pub fn is_address(&self) -> bool {
        address("email", &self.0).is_ok()
    }

    /// The login as given (trimmed): what is shown back.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The form logins are compared in.
    pub fn key(&self) -> String {
        email_key(&self.0)
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// An e-mail address shown in a profile (`EMAIL`) apart from the login: the same form as an
/// address login, compared case-insensitively too, but not used to sign in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailAddress(String);

impl EmailAddress {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        address("email", raw).map(Self)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn key(&self) -> String {
        email_key(&self.0)
    }
}

/// `raw` trimmed, if it can travel in a header: 1 to 255 visible ASCII characters.
fn header_text<'a>(field: &'static str, raw: &'a str) -> Result<&'a str, Invalid> {
    let invalid = |reason| Invalid::new(field, reason);
    let text = raw.trim();
    if text.is_empty() {
        return Err(invalid(Reason::Blank));
    }
    if text.chars().count() > MAX_EMAIL_CHARS {
        return Err(invalid(Reason::TooLong {
            max: MAX_EMAIL_CHARS,
        }));
    }
    if !text.chars().all(|c| c.is_ascii_graphic()) {
        return Err(invalid(Reason::NotVisibleAscii {
            raw: text.to_owned(),
        }));
    }
    Ok(text)
}

/// `raw` trimmed, if it is a header text with one `@` between a local part and a domain.
fn address(field: &'static str, raw: &str) -> Result<String, Invalid> {
    let text = header_text(field, raw)?;
    match text.split_once('@') {
        Some((local, domain))
            if !local.is_empty() && !domain.is_empty() && !domain.contains('@') =>
        {
            Ok(text.to_owned())
        }
        _ => Err(Invalid::new(
            field,
            Reason::NotAnAddress {
                raw: text.to_owned(),
            },
        )),
    }
}

/// A plain-text password: 8 to 1,024 printable ASCII characters without leading or
/// trailing spaces, since it travels in the `X-Auth-Password` header (which is trimmed).
/// Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct PlainPassword(String);

impl PlainPassword {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let invalid = |reason| Invalid::new("password", reason);
        if raw.is_empty() {
            return Err(invalid(Reason::Empty));
        }
        let chars = raw.chars().count();
        if chars < MIN_PASSWORD_CHARS {
            return Err(invalid(Reason::TooShort {
                min: MIN_PASSWORD_CHARS,
            }));
        }
        if chars > MAX_PASSWORD_CHARS {
            return Err(invalid(Reason::TooLong {
                max: MAX_PASSWORD_CHARS,
            }));
        }
        if !raw.chars().all(|c| c == ' ' || c.is_ascii_graphic()) {
            return Err(invalid(Reason::NotPrintableAscii));
        }
        if raw.starts_with(' ') || raw.ends_with(' ') {
            return Err(invalid(Reason::PaddedWithSpaces));
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PlainPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PlainPassword(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_must_be_addresses_that_fit_in_a_header() {
        assert_eq!(
            Login::parse("  Bob@Example.com ").unwrap().as_str(),
            "Bob@Example.com"
        );
        assert_eq!(
            Login::parse("Bob@Example.com").unwrap().key(),
            "bob@example.com"
        );
        for bad in [
            "",
            "   ",
            "bob",
            "@example.com",
            "bob@",
            "bo b@example.com",
            "bób@example.com",
            "a@b@c",
        ] {
            let err = Login::parse(bad).unwrap_err();
            assert!(err.to_string().contains("email"), "{bad}: {err}");
        }
        let long = format!("{}@example.com", "a".repeat(250));
        assert!(Login::parse(&long).unwrap_err().to_string().contains("255"));
    }

    #[test]
    fn passwords_need_eight_printable_ascii_characters() {
        assert!(PlainPassword::parse("correct horse").is_ok());
        for bad in [
            "",
            "short",
            " padded password",
            "padded password ",
            "pässwörter",
            "tab\there!",
        ] {
            let err = PlainPassword::parse(bad).unwrap_err();
            assert!(err.to_string().contains("password"), "{bad:?}: {err}");
        }
        assert!(PlainPassword::parse(&"x".repeat(MAX_PASSWORD_CHARS + 1)).is_err());
    }

    #[test]
    fn debug_output_never_shows_a_password() {
        let password = PlainPassword::parse("hunter22!").unwrap();
        assert!(!format!("{password:?}").contains("hunter22"));
    }
}
