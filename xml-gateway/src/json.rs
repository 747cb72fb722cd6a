//! JSON request bodies (contract section 11): the XML element names as keys, `null` or an
//! absent key for an absent optional field, an array for a list, optionally wrapped in
//! `{"request": {...}}`. Values get the XML reader's treatment (surrounding whitespace trimmed),
//! and the core validates them the same way, so both formats are refused with the same
//! messages wherever the core decides. A key given twice in one object is refused, as an
//! element given twice is: which of the two values was meant cannot be known. A text holding
//! a character XML cannot carry is refused, as the XML reader refuses it.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::clip::{MAX_QUOTED_CHARS, clip, clip_to};

/// `Content-Type` of every JSON body the gateway writes.
pub(crate) const JSON_CONTENT_TYPE: &str = "application/json";

/// A request body type read from a JSON object.
pub(crate) trait FromJson: Sized {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError>;
}

/// Why a JSON body was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JsonError {
    #[error("The request body is empty; a JSON document is expected.")]
    Empty,
    /// serde_json's description, which ends with the line and column.
    #[error("The request body is not valid JSON: {0}.")]
    Syntax(String),
    #[error("The request body must be a JSON object.")]
    NotObject,
    #[error("Field \"{0}\" is given twice.")]
    Duplicate(String),
    #[error("Field \"{0}\" must be a string or null.")]
    NotText(String),
    #[error("Field \"{0}\" must be an array of strings.")]
    NotTextList(String),
    #[error("Field \"{0}\" is required.")]
    Missing(String),
    #[error(
        "Field \"{0}\" must be an object of texts or an array of {{\"name\": …, \"value\": …}} objects."
    )]
    NotFields(String),
    /// A field's value the representation itself cannot read; the sentence names the field.
    #[error("{0}.")]
    Invalid(String),
    #[error("Field \"{field}\" contains U+{code:04X}, a character XML cannot carry.")]
    Uncarried { field: String, code: u32 },
}

/// The object a body's fields are read from (the `request` wrapper already removed).
#[derive(Debug)]
pub(crate) struct JsonObject<'a>(&'a Map<String, Value>);

impl JsonObject<'_> {
    /// A single-valued field: `None` when absent or `null`, else its trimmed text. Numbers and
    /// booleans are read as their text, as an XML element holding them would be.
    pub(crate) fn optional_text(&self, name: &str) -> Result<Option<String>, JsonError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(trim(text).to_owned())),
            Some(Value::Number(number)) => Ok(Some(number.to_string())),
            Some(Value::Bool(flag)) => Ok(Some(flag.to_string())),
            Some(_) => Err(JsonError::NotText(clip(name))),
        }
    }

    /// A field as it came, for shapes the helpers here do not read; `None` when absent.
    pub(crate) fn value(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// A list of ids: `None` when absent or `null`.
    pub(crate) fn optional_text_list(&self, name: &str) -> Result<Option<Vec<String>>, JsonError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(text) => Ok(trim(text).to_owned()),
                    _ => Err(JsonError::NotTextList(clip(name))),
                })
                .collect::<Result<_, _>>()
                .map(Some),
            Some(_) => Err(JsonError::NotTextList(clip(name))),
        }
    }

    pub(crate) fn required_text_list(&self, name: &str) -> Result<Vec<String>, JsonError> {
        self.optional_text_list(name)?
            .ok_or_else(|| JsonError::Missing(clip(name)))
    }
}

/// XML's whitespace, so a value reads the same in either format.
fn trim(text: &str) -> &str {
    crate::xml::reader::trim_xml_whitespace(text)
}

/// Parses `body` (UTF-8, a BOM allowed) and reads `T` from its object, unwrapping
/// `{"request": {...}}`.
pub(crate) fn parse_json<T: FromJson>(body: &[u8]) -> Result<T, JsonError> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(JsonError::Empty);
    }
    let Strict(value) = serde_json::from_slice(body).map_err(|error| {
        let text = error.to_string();
        match text.strip_prefix(DUPLICATE_KEY) {
            Some(rest) if error.is_data() => JsonError::Duplicate(clip(
                rest.rsplit_once(" at line ").map_or(rest, |(key, _)| key),
            )),
            _ => JsonError::Syntax(clip_to(&text, MAX_QUOTED_CHARS * 4)),
        }
    })?;
    let Value::Object(object) = &value else {
        return Err(JsonError::NotObject);
    };
    let object = match object.get(crate::xml::reader::ANY_WRITE_ROOT) {
        Some(Value::Object(inner)) if object.len() == 1 => inner,
        _ => object,
    };
    check_carried(object)?;
    T::from_object(&JsonObject(object))
}

/// Refuses a text holding a character XML 1.0 cannot carry (a C0 control, U+FFFE, U+FFFF),
/// naming the field it is in, as the XML reader refuses the same character: what either
/// format stores, both can read back.
fn check_carried(object: &Map<String, Value>) -> Result<(), JsonError> {
    match object
        .iter()
        .find_map(|(name, value)| first_uncarried(value, name))
    {
        Some((field, ch)) => Err(JsonError::Uncarried {
            field: clip(field),
            code: u32::from(ch),
        }),
        None => Ok(()),
    }
}

/// The first character XML cannot carry in the texts of `value`, with the field (the nearest
/// key) it is in.
fn first_uncarried<'a>(value: &'a Value, field: &'a str) -> Option<(&'a str, char)> {
    match value {
        Value::String(text) => text
            .chars()
            .find(|&ch| !crate::xml::reader::is_xml_char(ch))
            .map(|ch| (field, ch)),
        Value::Array(items) => items.iter().find_map(|item| first_uncarried(item, field)),
        Value::Object(object) => object
            .iter()
            .find_map(|(name, value)| first_uncarried(value, name)),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// How the reader's own refusal of a repeated key starts, before the key.
const DUPLICATE_KEY: &str = "duplicate key: ";

/// A JSON value read like `serde_json::Value`, except that a key repeated in one object is an
/// error (serde_json keeps the last one silently). serde_json's nesting limit still applies.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(value) = map.next_value()?;
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!("{DUPLICATE_KEY}{key}")));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Fields {
        name: Option<String>,
        ids: Option<Vec<String>>,
    }

    impl FromJson for Fields {
        fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
            Ok(Self {
                name: object.optional_text("name")?,
                ids: object.optional_text_list("ids")?,
            })
        }
    }

    #[test]
    fn fields_are_read_wrapped_or_not_and_null_is_absent() {
        let expected = Fields {
            name: Some("Sales".into()),
            ids: Some(vec!["a".into(), "b".into()]),
        };
        for body in [
            r#"{"name": " Sales ", "ids": ["a", " b"]}"#,
            r#"{"request": {"name": "Sales", "ids": ["a", "b"], "colour": 1}}"#,
            "\u{FEFF}{\"name\":\"Sales\",\"ids\":[\"a\",\"b\"]}",
        ] {
            assert_eq!(
                parse_json::<Fields>(body.as_bytes()).unwrap(),
                expected,
                "{body}"
            );
        }
        assert_eq!(
            parse_json::<Fields>(br#"{"name": null, "ids": null}"#).unwrap(),
            Fields {
                name: None,
                ids: None
            }
        );
    }

    #[test]
    fn malformed_bodies_are_refused_with_a_reason() {
        assert_eq!(parse_json::<Fields>(b"  ").unwrap_err(), JsonError::Empty);
        assert_eq!(
            parse_json::<Fields>(b"[1]").unwrap_err(),
            JsonError::NotObject
        );
        assert!(matches!(
            parse_json::<Fields>(b"{\"name\": }").unwrap_err(),
            JsonError::Syntax(detail) if detail.ends_with("line 1 column 10")
        ));
        assert_eq!(
            parse_json::<Fields>(br#"{"name": {"x": 1}}"#).unwrap_err(),
            JsonError::NotText("name".into())
        );
        assert_eq!(
            parse_json::<Fields>(br#"{"ids": "a,b"}"#).unwrap_err(),
            JsonError::NotTextList("ids".into())
        );
        assert_eq!(
            parse_json::<Fields>(br#"{"ids": [1]}"#).unwrap_err(),
            JsonError::NotTextList("ids".into())
        );
        assert_eq!(
            parse_json::<Fields>(br#"{"name": "a", "ids": [], "name": "b"}"#).unwrap_err(),
            JsonError::Duplicate("name".into())
        );
        assert_eq!(
            parse_json::<Fields>(br#"{"request": {"name": "a", "name": "a"}}"#).unwrap_err(),
            JsonError::Duplicate("name".into())
        );
        assert_eq!(
            parse_json::<Fields>(br#"{"name": 1.5e3, "ids": ["a"]}"#).unwrap(),
            Fields {
                name: Some("1500.0".into()),
                ids: Some(vec!["a".into()])
            }
        );
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::*;
        use crate::fuzz::config;

        /// Text built from JSON pieces, so the generator reaches deep into the reader.
        fn json_like() -> impl Strategy<Value = String> {
            proptest::collection::vec(
                prop_oneof![
                    Just("{".to_owned()),
                    Just("}".to_owned()),
                    Just("[".to_owned()),
                    Just("]".to_owned()),
                    Just(",".to_owned()),
                    Just(":".to_owned()),
                    Just("null".to_owned()),
                    Just("\"name\"".to_owned()),
                    Just("\"ids\"".to_owned()),
                    Just("\"request\"".to_owned()),
                    "\"[^\"\\\\]{0,8}\"",
                    "-?[0-9]{1,30}(\\.[0-9]{1,5})?",
                    Just("\"\\ud800\"".to_owned()),
                ],
                0..60,
            )
            .prop_map(|pieces| pieces.concat())
        }

        fn check(body: &[u8]) -> Result<(), TestCaseError> {
            match parse_json::<Fields>(body) {
                Ok(fields) => {
                    for text in fields.name.iter().chain(fields.ids.iter().flatten()) {
                        prop_assert_eq!(trim(text), text.as_str());
                    }
                }
                Err(error) => prop_assert!(error.to_string().chars().count() < 400, "{}", error),
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(config(2_000))]

            #[test]
            fn fuzz_any_bytes_are_read_or_refused_briefly(
                body in proptest::collection::vec(any::<u8>(), 0..300)
            ) {
                check(&body)?;
            }

            #[test]
            fn fuzz_json_shaped_text_is_read_or_refused_briefly(body in json_like()) {
                check(body.as_bytes())?;
            }
        }
    }

    #[test]
    fn characters_xml_cannot_carry_are_refused_naming_the_field() {
        for (body, field, code) in [
            (r#"{"name": "a\uFFFEb"}"#, "name", 0xFFFE),
            (r#"{"request": {"ids": ["ok", "\uFFFF"]}}"#, "ids", 0xFFFF),
            (r#"{"name": "tab\tand\u0001"}"#, "name", 0x1),
            (r#"{"fields": {"first_name": "\u0000"}}"#, "first_name", 0x0),
        ] {
            assert_eq!(
                parse_json::<Fields>(body.as_bytes()).unwrap_err(),
                JsonError::Uncarried {
                    field: field.into(),
                    code
                },
                "{body}"
            );
        }
        assert_eq!(
            JsonError::Uncarried {
                field: "name".into(),
                code: 0xFFFE
            }
            .to_string(),
            "Field \"name\" contains U+FFFE, a character XML cannot carry."
        );
        // Tabs, line breaks, U+FFFD and characters beyond the BMP are carried.
        let carried =
            parse_json::<Fields>("{\"name\": \"a\\tb\\nc\u{FFFD}\u{1F600}\"}".as_bytes()).unwrap();
        assert_eq!(carried.name.as_deref(), Some("a\tb\nc\u{FFFD}\u{1F600}"));
    }

    #[test]
    fn deep_nesting_is_refused_without_overflowing_the_stack() {
        let body = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(
            parse_json::<Fields>(body.as_bytes()),
            Err(JsonError::Syntax(_))
        ));
    }
}
