//! The OpenAPI 3.1 document of the whole HTTP interface, served at `GET /openapi.json` and
//! committed as `docs/openapi.json`.
//!
//! It is built here, in Rust, from one module per resource: each lists its operations (route,
//! method, parameters, bodies in XML and JSON with examples, every answer) and the schemas they
//! name. Element names, list filters and page elements come from the route modules' own
//! constants where they have them. Adding a route is adding one `Operation` to its resource's
//! list; a test walks the router and fails while a route is undescribed (or a described one is
//! not served).
//!
//! - `node`: the document's JSON, keys kept in the order written (the XML element order).
//! - `schema`: JSON Schema constructors with OpenAPI's `xml` object.
//! - `operation`: one operation and the answers every operation of its kind shares.
//! - `components`: the error body and answers, paging parameters, list filters, security.
//! - one module per resource, and `service` for the probes and this document.

mod components;
mod content;
mod departments;
mod enrollments;
mod groups;
mod node;
mod operation;
mod points;
mod provisioning;
mod results;
mod schema;
mod scim_tokens;
mod service;
mod token;
mod users;
mod webhooks;

use std::sync::LazyLock;

use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use self::node::{Node, list, object};
use self::operation::Operation;
use crate::json::JSON_CONTENT_TYPE;

/// What one resource contributes: its operations and the schemas they name.
pub(crate) struct Resource {
    operations: Vec<Operation>,
    schemas: Vec<(String, Node)>,
}

/// The document's text, built once.
static DOCUMENT: LazyLock<String> = LazyLock::new(|| document().to_pretty_text());

/// `GET /openapi.json`.
pub(crate) async fn serve() -> Response {
    (
        StatusCode::OK,
        [(CONTENT_TYPE, HeaderValue::from_static(JSON_CONTENT_TYPE))],
        DOCUMENT.as_str(),
    )
        .into_response()
}

/// The document as JSON text, as it is served.
pub fn openapi_json() -> &'static str {
    DOCUMENT.as_str()
}

fn resources() -> Vec<Resource> {
    vec![
        departments::resource(),
        users::resource(),
        provisioning::resource(),
        scim_tokens::resource(),
        groups::resource(),
        enrollments::resource(),
        content::resource(),
        points::resource(),
        results::resource(),
        webhooks::resource(),
        token::resource(),
        service::resource(),
    ]
}

fn document() -> Node {
    let mut paths: Vec<(String, Node)> = Vec::new();
    let mut schemas = Vec::new();
    for resource in resources() {
        schemas.extend(resource.schemas);
        for operation in resource.operations {
            let (path, method) = (operation.path, operation.method);
            let item = match paths.iter_mut().find(|(given, _)| given == path) {
                Some((_, item)) => item,
                None => {
                    paths.push((path.to_owned(), object! {}));
                    let last = paths.len() - 1;
                    &mut paths[last].1
                }
            };
            item.set(method.as_str(), operation.into_node());
        }
    }
    object! {
        "openapi" => "3.1.0",
        "info" => object! {
            "title" => "lms administration interface",
            "version" => env!("CARGO_PKG_VERSION"),
            "summary" => "Departments, users, groups, enrollments, content and gamification points of a learning management account, in XML or JSON.",
            "description" => INFO,
        },
        "servers" => list![
            object! { "url" => "/", "description" => "The service's own paths." },
            object! { "url" => "/api/v2", "description" => "The same interface under the prefix iSpring clients use." },
            object! { "url" => "/index.php/api/v2", "description" => "The same interface under the prefix PHP clients use." },
        ],
        "security" => components::security(),
        "tags" => tags(),
        "paths" => Node::Object(paths),
        "components" => components::components(schemas),
    }
}

const INFO: &str = "The XML-over-HTTP administration interface (docs/spec/interface.md, neighbours.md, contract.md), with JSON beside XML.\n\n\
**Formats.** An answer is JSON when `Accept` prefers `application/json` to `application/xml` and `text/xml`, else XML (also for `*/*` and no `Accept`); an `Accept` that allows neither is 406. XML answers start with `<?xml version=\"1.0\" encoding=\"UTF-8\"?>` and have the root `response` (errors: `error`); JSON answers are the XML's data without the `response` wrapper. A write's body is XML (`application/xml` or `text/xml`, or no `Content-Type`) or JSON (`application/json`), UTF-8, at most 1 MiB; the XML root is `request` or the root an operation names, and a JSON body may be wrapped in `{\"request\": {…}}`. Unknown elements and keys are ignored; an element given twice is 400. In JSON, `null` is an absent field, and a text field may be given as a number.\n\n\
**Paths.** Every operation also answers under `/api/v2` and `/index.php/api/v2` and with a trailing `/`; the token endpoint also as `/index.php/api/v3/token`.\n\n\
**Authentication.** Every operation of the interface takes either the three headers `X-Auth-Account-Url`, `X-Auth-Email` and `X-Auth-Password` together, or an access token in `Authorization` from `POST /api/v3/token`. Each failure is 401 with the same message.\n\n\
**Ids** are UUIDs, written lower-case; an id in a path that names nothing in the caller's account is 404, one in a body 400 naming the field. Another account's ids behave as ids of nothing.\n\n\
**Lists** come whole (`GET /department`, streamed as read) or by pages (`GET /departments`: `pageSize`, `pageToken`, and `nextPageToken` while more rows follow). A query parameter an operation does not know is 400 naming it.";

fn tags() -> Node {
    let tag =
        |name: &str, description: &str| object! { "name" => name, "description" => description };
    list![
        tag(
            "Departments",
            "The department tree (neighbours.md section 3)."
        ),
        tag("Users", "User profiles (neighbours.md section 4)."),
        tag(
            "Groups",
            "Groups and their members (interface 4.3, 4.4; neighbours.md section 7)."
        ),
        tag(
            "Enrollments",
            "Learners enrolled in content items (interface 4.5; neighbours.md section 5)."
        ),
        tag(
            "Content",
            "Content items such as courses (interface 4.6; neighbours.md section 6)."
        ),
        tag(
            "Gamification points",
            "Points of users (interface 4.7; neighbours.md section 8)."
        ),
        tag(
            "Tokens",
            "Access tokens for API clients (contract section 12)."
        ),
        tag(
            "Service",
            "Probes and this document, outside authentication."
        ),
    ]
}

/// Every operation described, as `(METHOD, path)`, for the router's own checks.
#[cfg(test)]
fn described() -> Vec<(String, String)> {
    resources()
        .into_iter()
        .flat_map(|resource| resource.operations)
        .map(|operation| {
            (
                operation.method.as_str().to_ascii_uppercase(),
                operation.path.to_owned(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_described_path_is_one_the_router_registers() {
        let templates = crate::app::route_templates();
        for (method, path) in described() {
            assert!(
                templates.contains(&path.as_str()),
                "{method} {path} is described but not a route"
            );
        }
    }

    #[test]
    fn every_reference_names_something_the_document_holds() {
        let text = openapi_json();
        let document: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut missing = Vec::new();
        for (at, _) in text.match_indices("\"$ref\": \"#/") {
            let rest = &text[at + "\"$ref\": \"#".len()..];
            let pointer = &rest[..rest.find('"').unwrap()];
            if document.pointer(pointer).is_none() {
                missing.push(pointer.to_owned());
            }
        }
        assert!(missing.is_empty(), "{missing:?}");
    }

    #[test]
    fn every_operation_has_a_summary_a_description_and_a_unique_id() {
        let mut ids = Vec::new();
        for resource in resources() {
            for operation in resource.operations {
                let (method, path) = (operation.method, operation.path);
                let node = operation.into_node();
                for key in ["summary", "description", "operationId"] {
                    assert!(
                        matches!(node.get(key), Some(Node::Text(text)) if !text.is_empty()),
                        "{method:?} {path} has no {key}"
                    );
                }
                ids.push(node.get("operationId").cloned());
            }
        }
        let count = ids.len();
        ids.dedup();
        ids.sort_by_key(|id| format!("{id:?}"));
        ids.dedup();
        assert_eq!(ids.len(), count, "operation ids repeat");
    }
}
