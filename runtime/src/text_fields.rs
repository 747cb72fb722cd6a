//! How the text log writes the fields of an event or span: `name=value`, separated by spaces,
//! the message bare, strings quoted as `Debug` quotes them, and every value on one line (a
//! newline inside a value, as in a multi-line error message, is written as `\n`), so one event
//! is one line for whatever reads the log.
//!
//! Every request writes two lines of a dozen fields each, so the common cases take a short
//! way: a string of plain printable ASCII is written between quotes as it is, which is
//! exactly what `Debug` would write, without `Debug`'s character-by-character escaping; and
//! line breaks are looked for byte by byte. The output is the same as formatting every value
//! with `Debug` and escaping line breaks afterwards.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::{FormatFields, format::Writer};

/// The text log's field formatter (see the module's documentation).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OneLineFields;

impl<'w> FormatFields<'w> for OneLineFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'w>, fields: R) -> fmt::Result {
        let mut visitor = Visitor {
            line: OneLine(writer),
            first: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct Visitor<'w> {
    line: OneLine<'w>,
    first: bool,
    result: fmt::Result,
}

impl Visitor<'_> {
    /// Writes the separator and `name=` (nothing for the message); false once writing failed.
    fn start(&mut self, field: &Field) -> bool {
        if self.result.is_err() {
            return false;
        }
        if !std::mem::take(&mut self.first) {
            self.result = self.line.0.write_char(' ');
        }
        if self.result.is_ok() && field.name() != "message" {
            self.result = self
                .line
                .0
                .write_str(field.name())
                .and_then(|()| self.line.0.write_char('='));
        }
        self.result.is_ok()
    }
}

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !plain(value) {
            return self.record_debug(field, &value);
        }
        if self.start(field) {
            // What `Debug` writes for a string with nothing to escape; no line break either.
            let writer = &mut self.line.0;
            self.result = writer
                .write_char('"')
                .and_then(|()| writer.write_str(value))
                .and_then(|()| writer.write_char('"'));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.start(field) {
            self.result = write!(self.line, "{value:?}");
        }
    }
}

/// Printable ASCII with nothing `Debug` escapes (`"` and `\`).
fn plain(text: &str) -> bool {
    text.bytes()
        .all(|byte| (b' '..=b'~').contains(&byte) && byte != b'"' && byte != b'\\')
}

/// Writes through, escaping line breaks.
struct OneLine<'w>(Writer<'w>);

impl fmt::Write for OneLine<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let mut rest = text;
        while let Some(at) = rest.bytes().position(|byte| byte == b'\n' || byte == b'\r') {
            self.0.write_str(&rest[..at])?;
            self.0.write_str(if rest.as_bytes()[at] == b'\n' {
                "\\n"
            } else {
                "\\r"
            })?;
            rest = &rest[at + 1..];
        }
        self.0.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt as _;

    /// A writer into a shared buffer, for reading what the log layer wrote.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn logged(log: impl FnOnce()) -> String {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(move || writer.clone())
                .with_ansi(false)
                .without_time()
                .fmt_fields(OneLineFields),
        );
        tracing::subscriber::with_default(subscriber, log);
        String::from_utf8(captured.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn a_multi_line_error_is_logged_on_one_text_line() {
        let text = logged(|| {
            let error = "connection refused\nCaused by: os error 111\r";
            tracing::error!(error, "cannot reach\nthe database");
        });
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains(r"cannot reach\nthe database"), "{text}");
        assert!(
            text.contains(r#"error="connection refused\nCaused by: os error 111\r""#),
            "{text}"
        );
    }

    #[test]
    fn values_are_written_as_debug_writes_them() {
        let text = logged(|| {
            let quoted = "say \"hi\" \\ there";
            let accented = "Zoë";
            let path = "/group/01920000-0005-7000-8000-000000000000";
            tracing::info!(
                method = "GET",
                path,
                quoted,
                accented,
                status = 200,
                latency_ms = 0.25,
                ok = true,
                client = %"127.0.0.1:5",
                "request finished"
            );
        });
        let expected = format!(
            "request finished method=\"GET\" path={:?} quoted={:?} accented={:?} status=200 \
             latency_ms=0.25 ok=true client=127.0.0.1:5",
            "/group/01920000-0005-7000-8000-000000000000", "say \"hi\" \\ there", "Zoë"
        );
        assert!(text.trim_end().ends_with(&expected), "{text}");
    }
}
