//! One described operation: its route and method, parameters, body and every answer it can
//! give. The answers every interface operation shares (authentication, negotiation, the core
//! out of reach) are added here from what the operation has (a path id, a body), so a resource
//! names only its own.

use super::node::{Node, list, object};
use super::schema::reference;

/// An HTTP method the document describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Method {
    Get,
    Post,
    Delete,
}

impl Method {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Post => "post",
            Method::Delete => "delete",
        }
    }
}

/// How an operation is reached and answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The XML/JSON interface: credentials, `Accept` negotiation, the error body in the
    /// negotiated format.
    Interface,
    /// The token endpoint: no credentials, always JSON.
    Token,
    /// Outside the interface: no credentials, no negotiation.
    Public,
}

/// A media type of a request or answer body and its schema (and example).
pub(crate) struct Media {
    media_type: &'static str,
    schema: Node,
    example: Option<Node>,
}

impl Media {
    pub(crate) fn xml(schema: Node) -> Self {
        Self {
            media_type: "application/xml",
            schema,
            example: None,
        }
    }

    pub(crate) fn json(schema: Node) -> Self {
        Self {
            media_type: "application/json",
            schema,
            example: None,
        }
    }

    pub(crate) fn other(media_type: &'static str, schema: Node) -> Self {
        Self {
            media_type,
            schema,
            example: None,
        }
    }

    pub(crate) fn example(mut self, example: impl Into<Node>) -> Self {
        self.example = Some(example.into());
        self
    }

    fn into_entry(self) -> (String, Node) {
        let mut node = object! { "schema" => self.schema };
        if let Some(example) = self.example {
            node.set("example", example);
        }
        (self.media_type.to_owned(), node)
    }
}

/// Both formats of an answer or body with one schema (the shapes whose JSON is their XML
/// without framing: lists, pages, errors, bare ids).
pub(crate) fn both(schema: &str) -> Vec<Media> {
    vec![
        Media::xml(reference(schema)),
        Media::json(reference(schema)),
    ]
}

/// One operation of the document.
pub(crate) struct Operation {
    pub(crate) path: &'static str,
    pub(crate) method: Method,
    kind: Kind,
    id: &'static str,
    tag: &'static str,
    summary: &'static str,
    description: String,
    parameters: Vec<Node>,
    body: Option<Node>,
    answers: Vec<(String, Node)>,
    errors: Vec<u16>,
    path_id: bool,
}

impl Operation {
    fn new(method: Method, path: &'static str, tag: &'static str, id: &'static str) -> Self {
        Self {
            path,
            method,
            kind: Kind::Interface,
            id,
            tag,
            summary: "",
            description: String::new(),
            parameters: Vec::new(),
            body: None,
            answers: Vec::new(),
            errors: Vec::new(),
            path_id: false,
        }
    }

    pub(crate) fn get(path: &'static str, tag: &'static str, id: &'static str) -> Self {
        Self::new(Method::Get, path, tag, id)
    }

    pub(crate) fn post(path: &'static str, tag: &'static str, id: &'static str) -> Self {
        Self::new(Method::Post, path, tag, id)
    }

    pub(crate) fn delete(path: &'static str, tag: &'static str, id: &'static str) -> Self {
        Self::new(Method::Delete, path, tag, id)
    }

    /// No credentials, no negotiation: the probes and this document.
    pub(crate) fn public(mut self) -> Self {
        self.kind = Kind::Public;
        self
    }

    /// The token endpoint: no credentials, every answer JSON.
    pub(crate) fn token_endpoint(mut self) -> Self {
        self.kind = Kind::Token;
        self
    }

    /// A one-line summary and the paragraph that says what the operation does and who may.
    pub(crate) fn describe(mut self, summary: &'static str, description: &str) -> Self {
        self.summary = summary;
        self.description = description.to_owned();
        self
    }

    /// The path's one identifier: passed to the core as given; a malformed or unknown one
    /// (or one of another account) is 404.
    pub(crate) fn path_id(mut self, name: &'static str, what: &str) -> Self {
        self.parameters.push(object! {
            "name" => name,
            "in" => "path",
            "required" => true,
            "description" => format!("{what} A malformed id, or one that names nothing in the caller's account, is 404."),
            "schema" => object! { "type" => "string" },
            "example" => "0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60",
        });
        self.path_id = true;
        self
    }

    /// A query parameter (or a `$ref` to a shared one).
    pub(crate) fn query(mut self, parameter: Node) -> Self {
        self.parameters.push(parameter);
        self
    }

    /// The request body, in the media types given.
    pub(crate) fn body(mut self, description: &str, media: Vec<Media>) -> Self {
        self.body = Some(object! {
            "required" => true,
            "description" => description,
            "content" => Node::Object(media.into_iter().map(Media::into_entry).collect()),
        });
        self
    }

    /// A successful answer with a body.
    pub(crate) fn answer(mut self, status: u16, description: &str, media: Vec<Media>) -> Self {
        let mut answer = object! { "description" => description };
        if self.kind != Kind::Public {
            answer.set("headers", request_id_header());
        }
        answer.set(
            "content",
            Node::Object(media.into_iter().map(Media::into_entry).collect()),
        );
        self.answers.push((status.to_string(), answer));
        self
    }

    /// A successful answer without a body.
    pub(crate) fn empty(mut self, status: u16, description: &str) -> Self {
        self.answers.push((
            status.to_string(),
            object! { "description" => description, "headers" => request_id_header() },
        ));
        self
    }

    /// An answer described in full by the resource (the token endpoint's RFC 6749 errors).
    pub(crate) fn raw_answer(mut self, status: u16, answer: Node) -> Self {
        self.answers.push((status.to_string(), answer));
        self
    }

    /// Errors this operation gives beyond those every operation of its kind gives (403 when
    /// permissions apply, 409 for a conflicting write).
    pub(crate) fn errors(mut self, statuses: &[u16]) -> Self {
        self.errors.extend_from_slice(statuses);
        self
    }

    /// The statuses of every error the operation can answer, ascending.
    fn error_statuses(&self) -> Vec<u16> {
        let mut statuses = self.errors.clone();
        match self.kind {
            Kind::Public => {}
            Kind::Token => statuses.extend([408, 413, 414, 429, 431, 500, 503, 504]),
            Kind::Interface => {
                // 400: an unknown query parameter is refused on every operation; 414 and 431:
                // the HTTP server's own bounds on the request head.
                statuses.extend([400, 401, 406, 414, 429, 431, 500, 503, 504]);
                if self.body.is_some() {
                    statuses.extend([408, 413, 415]);
                }
                if self.path_id {
                    statuses.push(404);
                }
            }
        }
        statuses.sort_unstable();
        statuses.dedup();
        statuses
    }

    pub(crate) fn into_node(self) -> Node {
        let mut node = object! {
            "tags" => list![self.tag],
            "summary" => self.summary,
            "description" => self.description.as_str(),
            "operationId" => self.id,
        };
        if !self.parameters.is_empty() {
            node.set("parameters", Node::List(self.parameters.clone()));
        }
        if let Some(body) = &self.body {
            node.set("requestBody", body.clone());
        }
        let mut answers = self.answers.clone();
        for status in self.error_statuses() {
            if answers
                .iter()
                .any(|(given, _)| *given == status.to_string())
            {
                continue;
            }
            let answer = match self.kind {
                Kind::Token if !super::components::always_xml(status) => token_error(status),
                Kind::Token => {
                    object! { "$ref" => format!("#/components/responses/{}", error_name(status)) }
                }
                Kind::Interface | Kind::Public => {
                    object! { "$ref" => format!("#/components/responses/{}", error_name(status)) }
                }
            };
            answers.push((status.to_string(), answer));
        }
        answers.sort_by(|(a, _), (b, _)| a.cmp(b));
        node.set("responses", Node::Object(answers));
        if self.kind != Kind::Interface {
            node.set("security", list![]);
        }
        node
    }
}

fn request_id_header() -> Node {
    object! { "X-Request-Id" => object! { "$ref" => "#/components/headers/X-Request-Id" } }
}

/// The name of the shared answer for an error status (`#/components/responses/NAME`).
pub(crate) fn error_name(status: u16) -> &'static str {
    match status {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        406 => "NotAcceptable",
        408 => "RequestTimeout",
        409 => "Conflict",
        413 => "PayloadTooLarge",
        414 => "UriTooLong",
        415 => "UnsupportedMediaType",
        429 => "TooManyRequests",
        431 => "HeaderFieldsTooLarge",
        503 => "Unavailable",
        504 => "GatewayTimeout",
        _ => "InternalError",
    }
}

/// The token endpoint's answers to failures RFC 6749 does not describe: the gateway's error
/// body, always in JSON.
fn token_error(status: u16) -> Node {
    let mut answer = object! {
        "description" => super::components::error_meaning(status),
        "headers" => request_id_header(),
    };
    if matches!(status, 429 | 503) {
        answer.set(
            "headers",
            object! {
                "X-Request-Id" => object! { "$ref" => "#/components/headers/X-Request-Id" },
                "Retry-After" => object! { "$ref" => "#/components/headers/Retry-After" },
            },
        );
    }
    answer.set(
        "content",
        object! { "application/json" => object! { "schema" => reference("Error") } },
    );
    answer
}
