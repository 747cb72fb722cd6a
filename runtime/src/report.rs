//! How a binary that fails says why: the error and each cause once, for a user to act on.
//!
//! anyhow's own report prints every cause in the chain, but many errors (sea-orm's, sqlx's,
//! `thiserror` ones written as `"cannot read {file}: {source}"`) already include their source
//! in their message, so the same words came out two or three times under `Caused by`. A cause
//! whose text the line above already contains is left out.

use std::fmt;

/// The error a `main` returns: `fn main() -> Result<(), Report>`, and `?` works on anything
/// anyhow takes. Rust prints a returned error with `Debug`, which is this report.
pub struct Report(anyhow::Error);

impl<E: Into<anyhow::Error>> From<E> for Report {
    fn from(error: E) -> Self {
        Self(error.into())
    }
}

impl Report {
    /// The messages to print: the error, then each cause not already said by the one before.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        for cause in self.0.chain() {
            let text = cause.to_string();
            if text.is_empty() || lines.last().is_some_and(|above| above.contains(&text)) {
                continue;
            }
            lines.push(text);
        }
        lines
    }
}

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = self.lines();
        let mut lines = lines.iter();
        if let Some(first) = lines.next() {
            write!(f, "{first}")?;
        }
        let causes: Vec<_> = lines.collect();
        if !causes.is_empty() {
            write!(f, "\n\nCaused by:")?;
            for cause in causes {
                write!(f, "\n    {cause}")?;
            }
        }
        // A developer who asked for a backtrace (RUST_BACKTRACE=1) still gets it.
        let backtrace = self.0.backtrace();
        if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            write!(f, "\n\nStack backtrace:\n{backtrace}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context as _;

    #[derive(Debug)]
    struct Wrapping(std::io::Error);

    impl fmt::Display for Wrapping {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "cannot read a.json: {}", self.0)
        }
    }

    impl std::error::Error for Wrapping {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_above_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let error = Err::<(), _>(Wrapping(io))
            .context("import refused")
            .unwrap_err();
        let report = Report::from(error);
        assert_eq!(
            report.lines(),
            ["import refused", "cannot read a.json: No such file"]
        );
        let printed = format!("{report:?}");
        assert_eq!(printed.matches("No such file").count(), 1, "{printed}");
        assert!(
            printed.contains("Caused by:\n    cannot read a.json"),
            "{printed}"
        );
    }

    #[test]
    fn distinct_causes_are_all_kept() {
        let error = anyhow::anyhow!("connection refused")
            .context("cannot connect")
            .context("start failed");
        assert_eq!(
            Report::from(error).lines(),
            ["start failed", "cannot connect", "connection refused"]
        );
    }
}
