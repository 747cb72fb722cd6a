//! The filters of provisioning.md section 10.2: one or more `attribute eq "value"` joined by
//! `and`; operators, `and` and attribute names in any case, attribute names possibly
//! schema-qualified, values JSON strings. Anything else (`or`, `not`, parentheses, other
//! operators, numbers) is `invalidFilter` saying what was not understood.
//!
//! The grammar is this small on purpose: each accepted filter is one index lookup (section
//! 15). The SCIM filter crates on crates.io parse the whole RFC 7644 grammar into trees this
//! service would then have to refuse most of, with less precise messages; a hand parser of
//! the subset is shorter than the refusals would be (docs/decisions.md, "SCIM filters").

use super::{ScimError, ScimResult, strip_core_schema};

/// `attribute eq "value"`: the attribute lower-case, without its schema, with the spaces of a
/// value filter removed (`emails[type eq "work"].value` is `emails[typeeq"work"].value`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Comparison {
    pub(super) attribute: String,
    pub(super) value: String,
}

/// The user filter `emails[type eq "work"].value`, as [`Comparison::attribute`] holds it.
pub(super) const WORK_EMAIL: &str = "emails[typeeq\"work\"].value";

/// The comparisons of `raw`, all of which must hold.
pub(super) fn parse(raw: &str) -> ScimResult<Vec<Comparison>> {
    let mut rest = raw.trim_start();
    if rest.is_empty() {
        return Err(ScimError::invalid_filter("the filter is empty"));
    }
    let mut comparisons = Vec::new();
    loop {
        let (attribute, after) = attribute_path(rest)?;
        let (operator, after) = word(after.trim_start());
        if !operator.eq_ignore_ascii_case("eq") {
            let shown = if operator.is_empty() { after } else { operator };
            return Err(ScimError::invalid_filter(format!(
                "only the operator eq is supported, not \"{}\" (after {attribute})",
                clip(shown)
            )));
        }
        let (value, after) = string_value(after.trim_start(), &attribute)?;
        comparisons.push(Comparison {
            attribute: normalize(&attribute),
            value,
        });
        rest = after.trim_start();
        if rest.is_empty() {
            return Ok(comparisons);
        }
        let (joiner, after) = word(rest);
        if !joiner.eq_ignore_ascii_case("and") {
            return Err(ScimError::invalid_filter(format!(
                "comparisons may be joined only by and, not \"{}\"",
                clip(if joiner.is_empty() { rest } else { joiner })
            )));
        }
        rest = after.trim_start();
    }
}

/// An attribute path up to the next space outside brackets, with the text after it.
fn attribute_path(text: &str) -> ScimResult<(String, &str)> {
    if text.starts_with('(')
        || text.to_ascii_lowercase().starts_with("not") && text[3..].trim_start().starts_with('(')
    {
        return Err(ScimError::invalid_filter(
            "parentheses and not are not supported",
        ));
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut end = text.len();
    for (at, c) in text.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '[' if !in_string => depth += 1,
            ']' if !in_string => depth = depth.saturating_sub(1),
            c if c.is_whitespace() && depth == 0 && !in_string => {
                end = at;
                break;
            }
            _ => {}
        }
    }
    let path = &text[..end];
    let well_formed = !path.is_empty()
        && depth == 0
        && !in_string
        && path
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic());
    if !well_formed {
        return Err(ScimError::invalid_filter(format!(
            "\"{}\" is not an attribute path",
            clip(path)
        )));
    }
    Ok((path.to_owned(), &text[end..]))
}

/// The letters at the start of `text`, and the rest.
fn word(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    (&text[..end], &text[end..])
}

/// A JSON string at the start of `text`, decoded, and the rest.
fn string_value<'a>(text: &'a str, attribute: &str) -> ScimResult<(String, &'a str)> {
    let not_a_string = || {
        ScimError::invalid_filter(format!(
            "the value compared with {attribute} must be a JSON string in double quotes"
        ))
    };
    if !text.starts_with('"') {
        return Err(not_a_string());
    }
    let mut escaped = false;
    for (at, c) in text.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => {
                let literal = &text[..=at];
                let value: String = serde_json::from_str(literal).map_err(|_| not_a_string())?;
                return Ok((value, &text[at + 1..]));
            }
            _ => escaped = false,
        }
    }
    Err(not_a_string())
}

/// The attribute as [`Comparison::attribute`] holds it.
fn normalize(attribute: &str) -> String {
    let lower: String = attribute
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    strip_core_schema(&lower).to_owned()
}

fn clip(text: &str) -> String {
    crate::domain::ids::clip(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparisons(raw: &str) -> Vec<(String, String)> {
        parse(raw)
            .unwrap()
            .into_iter()
            .map(|c| (c.attribute, c.value))
            .collect()
    }

    fn refusal(raw: &str) -> String {
        match parse(raw).unwrap_err() {
            ScimError::Refused {
                status: 400,
                scim_type: Some("invalidFilter"),
                detail,
            } => detail,
            other => panic!("{raw}: {other:?}"),
        }
    }

    #[test]
    fn eq_comparisons_joined_by_and_in_any_case_and_schema_qualified() {
        assert_eq!(
            comparisons(r#"userName eq "Ann@Acme.example.com""#),
            [("username".into(), "Ann@Acme.example.com".into())]
        );
        assert_eq!(
            comparisons(
                r#"urn:ietf:params:scim:schemas:core:2.0:User:externalId EQ "a \"b\"" AND emails[type eq "work"].value eq "x@y""#
            ),
            [
                ("externalid".into(), "a \"b\"".into()),
                (WORK_EMAIL.into(), "x@y".into())
            ]
        );
    }

    #[test]
    fn anything_else_is_an_invalid_filter_saying_what() {
        assert!(refusal(r#"userName co "a""#).contains("co"));
        assert!(refusal(r#"userName eq "a" or id eq "b""#).contains("or"));
        assert!(refusal(r#"(userName eq "a")"#).contains("parentheses"));
        assert!(refusal(r#"not (userName eq "a")"#).contains("not"));
        assert!(refusal("userName eq 5").contains("JSON string"));
        assert!(refusal(r#"userName eq "open"#).contains("JSON string"));
        assert!(refusal("userName pr").contains("eq"));
        assert!(refusal("").contains("empty"));
    }
}
