//! Credentials that must never reach a log line.

use std::fmt;

/// A value whose `Debug` prints `<redacted>`, so a struct holding a password can derive
/// `Debug` and still be logged. The value is read only through [`Secret::expose`], which makes
/// every use visible in review.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    pub const fn new(value: T) -> Self {
        Self(value)
    }

    /// The value itself; keep it out of log fields and error messages.
    pub fn expose(&self) -> &T {
        &self.0
    }

    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Login {
        email: String,
        password: Secret<String>,
    }

    #[test]
    fn debug_output_never_shows_the_value() {
        let login = Login {
            email: "owner@acme.example.com".to_owned(),
            password: Secret::new("hunter22".to_owned()),
        };
        let shown = format!("{login:?} {login:#?}");
        assert!(!shown.contains("hunter22"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
        assert!(shown.contains(&login.email), "{shown}");
        assert_eq!(login.password.expose(), "hunter22");
    }
}
