//! Small constructors for JSON Schemas with OpenAPI's `xml` object, so that each resource's
//! shapes read as the element lists they are.
//!
//! The conventions of the interface (neighbours.md 0.3, 0.4) map onto OpenAPI's XML model
//! directly: an entity is an object whose `xml.name` is its element; an id list is an array
//! `wrapped` in its element with `<id>` items; an unpaged list is an array wrapped in
//! `<response>` (in JSON a top-level array); a single entity is wrapped in a `<response>`
//! object in XML and bare in JSON.

use super::node::{Node, list, object};

/// `#/components/schemas/NAME`.
pub(crate) fn reference(name: &str) -> Node {
    object! { "$ref" => format!("#/components/schemas/{name}") }
}

/// A string with a description.
pub(crate) fn text(description: &str) -> Node {
    object! { "type" => "string", "description" => description }
}

/// A string of at most `max` characters.
pub(crate) fn bounded_text(description: &str, max: u64) -> Node {
    object! { "type" => "string", "maxLength" => max, "description" => description }
}

/// A string with a JSON Schema `format`.
pub(crate) fn formatted(format: &str, description: &str) -> Node {
    object! { "type" => "string", "format" => format, "description" => description }
}

/// An identifier as the service writes it: a lower-case UUID.
pub(crate) fn id(description: &str) -> Node {
    formatted("uuid", description)
}

/// An identifier a caller sends: any string (a malformed one is refused by the service, naming
/// the field), shaped like a UUID.
pub(crate) fn id_in(description: &str) -> Node {
    object! {
        "type" => "string",
        "description" => description,
        "examples" => list!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60"],
    }
}

/// A whole number.
pub(crate) fn integer(description: &str) -> Node {
    object! { "type" => "integer", "description" => description }
}

/// A whole number from `min` to `max`.
pub(crate) fn integer_between(description: &str, min: i64, max: i64) -> Node {
    object! {
        "type" => "integer",
        "minimum" => min,
        "maximum" => max,
        "description" => description,
    }
}

/// One of the strings `values`.
pub(crate) fn one_of_texts(values: &[&str], description: &str) -> Node {
    object! { "type" => "string", "enum" => values, "description" => description }
}

/// A flag written as the number 0 or 1 (as iSpring writes `isSmart` and the enrollment flags).
pub(crate) fn digit_flag(description: &str) -> Node {
    object! {
        "type" => "integer",
        "enum" => list![0_i64, 1_i64],
        "description" => description,
    }
}

/// `<NAME><id>…</id>…</NAME>` in XML, an array of strings in JSON.
pub(crate) fn id_list(item: Node, description: &str) -> Node {
    object! {
        "type" => "array",
        "description" => description,
        "items" => with_xml_name(item, "id"),
        "xml" => object! { "wrapped" => true },
    }
}

/// As [`id_list`], bounded in length.
pub(crate) fn bounded_id_list(item: Node, description: &str, min: u64, max: u64) -> Node {
    let mut list = id_list(item, description);
    list.set("minItems", min);
    list.set("maxItems", max);
    list
}

/// `schema` written as the element `name` (where it is an item or a property).
pub(crate) fn with_xml_name(mut schema: Node, name: &str) -> Node {
    schema.set("xml", object! { "name" => name });
    schema
}

/// One property of an [`object`]: its name, schema and whether it is always there.
pub(crate) struct Property {
    name: &'static str,
    schema: Node,
    required: bool,
}

/// A property that is always present (in an answer) or must be sent (in a request).
pub(crate) fn required(name: &'static str, schema: Node) -> Property {
    Property {
        name,
        schema,
        required: true,
    }
}

/// A property that may be left out.
pub(crate) fn optional(name: &'static str, schema: Node) -> Property {
    Property {
        name,
        schema,
        required: false,
    }
}

/// Which other properties an object allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Others {
    /// An answer: exactly these properties, so a client (and a conformance check) meets no
    /// surprise.
    Refused,
    /// A request body: unknown elements and keys are ignored (contract section 5).
    Ignored,
}

/// An object written as the element `element` with its properties in this (the XML's)
/// order.
pub(crate) fn element(
    element: &str,
    description: &str,
    properties: Vec<Property>,
    others: Others,
) -> Node {
    let mut node = object! { "type" => "object", "description" => description };
    let names: Vec<Node> = properties
        .iter()
        .filter(|property| property.required)
        .map(|property| Node::from(property.name))
        .collect();
    if !names.is_empty() {
        node.set("required", names);
    }
    node.set(
        "properties",
        Node::Object(
            properties
                .into_iter()
                .map(|property| (property.name.to_owned(), property.schema))
                .collect(),
        ),
    );
    if others == Others::Refused {
        node.set("additionalProperties", false);
    }
    node.set("xml", object! { "name" => element });
    node
}

/// An unpaged list: in XML the items directly under `<response>`, in JSON a top-level array.
pub(crate) fn whole_list(item: &str, description: &str) -> Node {
    object! {
        "type" => "array",
        "description" => description,
        "items" => reference(item),
        "xml" => object! { "name" => "response", "wrapped" => true },
    }
}

/// The XML document of a single entity: `<response><ELEMENT>…</ELEMENT></response>` (in JSON
/// the entity is bare, [`reference`] to it).
pub(crate) fn response_of(property: &'static str, item: &str) -> Node {
    element(
        "response",
        "The XML answer's wrapper; JSON answers carry the object without it.",
        vec![required(property, reference(item))],
        Others::Refused,
    )
}

/// One page: the rows in the element `rows`, then `nextPageToken` while more pages follow.
pub(crate) fn page(rows: &'static str, item: &str, description: &str) -> Node {
    element(
        "response",
        description,
        vec![
            required(
                rows,
                object! {
                    "type" => "array",
                    "description" => "The page's rows, ascending by id; an empty page is an empty element (`[]`).",
                    "items" => reference(item),
                    "xml" => object! { "wrapped" => true },
                },
            ),
            optional(
                "nextPageToken",
                object! {
                    "type" => "string",
                    "minLength" => 1_u64,
                    "description" => "The token of the next page, present only while more rows follow; pass it as `pageToken`.",
                },
            ),
        ],
        Others::Refused,
    )
}
