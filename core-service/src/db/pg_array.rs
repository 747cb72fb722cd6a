//! PostgreSQL arrays, bound as one parameter each: the array's text (`{…,…}`), cast in SQL
//! to the element type (`$1::text::uuid[]`).
//!
//! One idiom for every array the core binds (ids of `= ANY(…)`, the columns of a multi-row
//! `INSERT … SELECT * FROM UNNEST(…)`, the items of a batched read): a text parameter binds
//! the same through SeaORM's statements and sqlx's queries, and holds NULL elements, which
//! the driver's typed arrays cannot. One parameter instead of one per element: binding and
//! planning a statement of thousands of parameters costs the server more than parsing an
//! array text.
//!
//! A long array matched in a `WHERE` clause is cast inside a scalar subquery,
//! `"id" = ANY((SELECT $2::text::uuid[])::uuid[])`: PostgreSQL does not fold the text-to-array
//! cast, so where the plan filters rows by it (rather than using it as an index condition) it
//! would parse the whole array again for every row, 12 s for 700 rows and 10,000 ids; as a
//! subquery it is an init plan, parsed once.

use std::fmt::Write as _;

use chrono::{DateTime, Datelike as _, Timelike as _, Utc};
use sea_orm::{DbErr, Value, prelude::Uuid};

/// An array text being written, element by element.
pub struct ArrayText(String);

impl ArrayText {
    /// An empty array with room for `elements` elements of about `width` characters.
    pub fn with_capacity(elements: usize, width: usize) -> Self {
        let mut text = String::with_capacity(2 + elements * (width + 1));
        text.push('{');
        Self(text)
    }

    /// Appends `value` in PostgreSQL's array syntax: strings quoted with `"` and `\`
    /// escaped, `NULL` bare.
    pub fn push(&mut self, value: &Value) -> Result<(), DbErr> {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        let array = &mut self.0;
        let written = match value {
            Value::Uuid(Some(id)) => {
                array.push_str(id.hyphenated().encode_lower(&mut Uuid::encode_buffer()));
                Ok(())
            }
            Value::BigInt(Some(n)) => write!(array, "{n}"),
            Value::Int(Some(n)) => write!(array, "{n}"),
            Value::Bool(Some(b)) => write!(array, "{}", if *b { 't' } else { 'f' }),
            Value::ChronoDateTimeUtc(Some(at)) => write_timestamp(array, at),
            Value::String(Some(text)) => {
                array.push('"');
                for c in text.chars() {
                    if c == '"' || c == '\\' {
                        array.push('\\');
                    }
                    array.push(c);
                }
                array.push('"');
                Ok(())
            }
            Value::Uuid(None)
            | Value::BigInt(None)
            | Value::Int(None)
            | Value::Bool(None)
            | Value::ChronoDateTimeUtc(None)
            | Value::String(None) => write!(array, "NULL"),
            other => {
                return Err(DbErr::Custom(format!(
                    "a value of type {other:?} has no array form"
                )));
            }
        };
        written.map_err(|err| DbErr::Custom(err.to_string()))
    }

    /// The text, to bind as the parameter.
    pub fn finish(self) -> String {
        let mut text = self.0;
        text.push('}');
        text
    }
}

/// `at` quoted, to microseconds (cut as the driver cuts a bound timestamp), UTC.
///
/// Written field by field: a write of 10,000 results carries 40,000 of these, and a
/// `strftime` pattern is parsed again on every call.
fn write_timestamp(array: &mut String, at: &DateTime<Utc>) -> std::fmt::Result {
    let year = at.year();
    if !(0..=9999).contains(&year) || at.nanosecond() >= 1_000_000_000 {
        // A sign or a fifth digit, or a leap second: chrono's spelling.
        return write!(array, "\"{}\"", at.format("%Y-%m-%dT%H:%M:%S%.6f%:z"));
    }
    write!(
        array,
        "\"{year:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}+00:00\"",
        at.month(),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.timestamp_subsec_micros()
    )
}

/// The array text of `ids`: bound where the SQL says `$n::text::uuid[]`.
pub fn uuids(ids: &[Uuid]) -> String {
    let mut array = ArrayText::with_capacity(ids.len(), UUID_WIDTH);
    for id in ids {
        array
            .push(&Value::from(*id))
            .unwrap_or_else(|_| unreachable!("a UUID has an array form"));
    }
    array.finish()
}

/// Characters of a hyphenated UUID.
pub const UUID_WIDTH: usize = 36;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_written_in_postgresql_array_syntax() {
        let id = Uuid::from_u128(0x0192_0000_0005_7000_8000_0000_0000_00ab);
        assert_eq!(
            uuids(&[id, Uuid::from_u128(1)]),
            format!("{{{id},00000000-0000-0000-0000-000000000001}}")
        );
        assert_eq!(uuids(&[]), "{}");
        let values = [
            Value::from("a \"quoted\" \\ name".to_owned()),
            Value::String(None),
            Value::from(true),
            Value::from(false),
            Value::from(7_i64),
        ];
        let mut array = ArrayText::with_capacity(values.len(), 8);
        for value in &values {
            array.push(value).unwrap();
        }
        assert_eq!(
            array.finish(),
            "{\"a \\\"quoted\\\" \\\\ name\",NULL,t,f,7}"
        );
        assert!(
            ArrayText::with_capacity(1, 8)
                .push(&Value::from(1.5_f64))
                .is_err()
        );
    }

    #[test]
    fn timestamps_are_written_as_chrono_writes_them_to_the_microsecond() {
        use chrono::TimeZone as _;
        let instants = [
            Utc.with_ymd_and_hms(2025, 12, 31, 23, 59, 59).unwrap(),
            Utc.timestamp_opt(1_700_000_000, 123_456_789).unwrap(),
            Utc.timestamp_opt(0, 1_000).unwrap(),
            Utc.with_ymd_and_hms(12_345, 1, 2, 3, 4, 5).unwrap(),
            Utc.with_ymd_and_hms(-44, 3, 15, 12, 0, 0).unwrap(),
        ];
        for at in instants {
            let mut written = String::new();
            write_timestamp(&mut written, &at).unwrap();
            assert_eq!(
                written,
                format!("\"{}\"", at.format("%Y-%m-%dT%H:%M:%S%.6f%:z")),
                "{at:?}"
            );
        }
    }
}
