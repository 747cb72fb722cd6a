//! PatchOp bodies (RFC 7644 section 3.5.2): `Operations`, each an `op` (add, replace or
//! remove, in any case: Entra sends `Replace`), an optional `path` and a `value`. What a path
//! means is the resource's business (`users`, `groups`); here only its form.

use serde_json::Value;

use super::{ScimError, ScimResult, body_object, strip_core_schema};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Add,
    Replace,
    Remove,
}

/// One operation; `path` lower-case, without a core schema's prefix and with the spaces of a
/// value filter removed (as `filter` normalizes attributes).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Operation {
    pub(super) op: Op,
    pub(super) path: Option<String>,
    pub(super) value: Option<Value>,
}

/// The operations of a PatchOp body, in order; an empty or missing `Operations`, an unknown
/// `op` or a `path` that cannot be parsed is refused before anything is applied.
pub(super) fn parse(body: &str) -> ScimResult<Vec<Operation>> {
    let object = body_object(body)?;
    let operations = object
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case("Operations"))
        .map(|(_, value)| value);
    let Some(Value::Array(operations)) = operations else {
        return Err(ScimError::invalid_syntax(
            "a PATCH body needs an Operations array",
        ));
    };
    if operations.is_empty() {
        return Err(ScimError::invalid_syntax("Operations is empty"));
    }
    operations
        .iter()
        .enumerate()
        .map(|(index, operation)| parse_operation(index, operation))
        .collect()
}

fn parse_operation(index: usize, operation: &Value) -> ScimResult<Operation> {
    let Value::Object(operation) = operation else {
        return Err(ScimError::invalid_syntax(format!(
            "Operations[{index}] must be an object"
        )));
    };
    let field = |name: &str| {
        operation
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    };
    let op = match field("op")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
    {
        Some(op) if op == "add" => Op::Add,
        Some(op) if op == "replace" => Op::Replace,
        Some(op) if op == "remove" => Op::Remove,
        other => {
            return Err(ScimError::invalid_syntax(format!(
                "Operations[{index}].op must be add, replace or remove, not {}",
                other.map_or("missing".to_owned(), |op| format!(
                    "\"{}\"",
                    crate::domain::ids::clip(&op)
                ))
            )));
        }
    };
    let path = match field("path") {
        None | Some(Value::Null) => None,
        Some(Value::String(path)) => Some(normalize_path(index, path)?),
        Some(_) => {
            return Err(ScimError::invalid_path(format!(
                "Operations[{index}].path must be a string"
            )));
        }
    };
    let value = field("value").cloned().filter(|value| !value.is_null());
    if op != Op::Remove && value.is_none() {
        return Err(ScimError::invalid_value(format!(
            "Operations[{index}].value is required for {}",
            if op == Op::Add { "add" } else { "replace" }
        )));
    }
    if op == Op::Remove && path.is_none() && value.is_none() {
        return Err(ScimError::invalid_path(format!(
            "Operations[{index}]: remove needs a path"
        )));
    }
    Ok(Operation { op, path, value })
}

/// `raw` as [`Operation::path`] holds it, or `invalidPath` when it is not an attribute path
/// (empty, unbalanced brackets or quotes, characters no path holds).
fn normalize_path(index: usize, raw: &str) -> ScimResult<String> {
    let mut depth = 0i32;
    let mut in_string = false;
    let mut well_formed = raw
        .trim()
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic());
    for c in raw.chars() {
        match c {
            '"' => in_string = !in_string,
            '[' if !in_string => depth += 1,
            ']' if !in_string => depth -= 1,
            c if in_string || c.is_ascii_alphanumeric() || " .:_-$".contains(c) => {}
            _ => well_formed = false,
        }
        if !(0..=1).contains(&depth) {
            well_formed = false;
        }
    }
    if !well_formed || depth != 0 || in_string {
        return Err(ScimError::invalid_path(format!(
            "Operations[{index}].path \"{}\" cannot be parsed",
            crate::domain::ids::clip(raw)
        )));
    }
    let compact: String = raw
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    Ok(strip_core_schema(&compact).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entra_and_okta_forms_parse_alike() {
        let entra = parse(
            r#"{"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "Replace", "path": "active", "value": "False"}]}"#,
        )
        .unwrap();
        assert_eq!(entra[0].op, Op::Replace);
        assert_eq!(entra[0].path.as_deref(), Some("active"));
        let okta =
            parse(r#"{"Operations": [{"op": "replace", "value": {"active": false}}]}"#).unwrap();
        assert_eq!(okta[0].path, None);
        let filtered = parse(
            r#"{"Operations": [{"op": "add", "path": "emails[type eq \"work\"].value", "value": "a@b"}]}"#,
        )
        .unwrap();
        assert_eq!(
            filtered[0].path.as_deref(),
            Some(super::super::filter::WORK_EMAIL)
        );
    }

    #[test]
    fn bad_bodies_are_refused_with_their_scim_type() {
        let scim_type = |body: &str| match parse(body).unwrap_err() {
            ScimError::Refused { scim_type, .. } => scim_type,
            other => panic!("{other:?}"),
        };
        assert_eq!(scim_type("[]"), Some("invalidSyntax"));
        assert_eq!(scim_type(r#"{"Operations": []}"#), Some("invalidSyntax"));
        assert_eq!(
            scim_type(r#"{"Operations": [{"op": "move", "path": "a", "value": 1}]}"#),
            Some("invalidSyntax")
        );
        assert_eq!(
            scim_type(r#"{"Operations": [{"op": "add", "path": "members[value eq", "value": 1}]}"#),
            Some("invalidPath")
        );
    }
}
