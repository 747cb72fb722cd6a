//! What every operation shares: the error body and its answers by status (contract section
//! 4), the paging parameters (neighbours.md 0.5), the list filters' encodings, the headers
//! every answer carries, and the ways to authenticate (contract sections 2 and 12).

use super::node::{Node, list, object};
use super::schema::{Others, element, integer, reference, required, text};
use crate::auth::{MAX_ACCOUNT_URL_BYTES, MAX_EMAIL_BYTES, MAX_PASSWORD_BYTES};
use crate::settings::BODY_LIMIT_BYTES;

/// The page size the core uses when none is given, and the largest it serves.
const DEFAULT_PAGE_SIZE: i64 = 1_000;
const MAX_PAGE_SIZE: i64 = 10_000;

/// The error statuses with a shared answer, ascending.
const ERROR_STATUSES: [u16; 15] = [
    400, 401, 403, 404, 406, 408, 409, 413, 414, 415, 429, 431, 500, 503, 504,
];

/// Whether the error answer is XML whatever `Accept` says: 406 (no format was acceptable) and
/// the answers the HTTP server writes before routing (a request head over its bounds).
pub(crate) fn always_xml(status: u16) -> bool {
    matches!(status, 406 | 414 | 431)
}

/// What an error status means here.
pub(crate) fn error_meaning(status: u16) -> String {
    match status {
        400 => "The request is malformed: an unknown or repeated query parameter, a body that is not well-formed or lacks a required element, a value that breaks its rule (the message names the parameter, element or field).".to_owned(),
        401 => "Authentication failed: a credential header is missing, blank or wrong, or the token is expired, revoked or unknown. The message is the same for every cause.".to_owned(),
        403 => "The caller's role or scope does not allow this operation on this target (contract section 3).".to_owned(),
        404 => "The id in the path is malformed or names nothing in the caller's account.".to_owned(),
        406 => "`Accept` allows neither XML nor JSON. This answer is always XML.".to_owned(),
        408 => "The request body did not arrive whole in time; the connection is closed.".to_owned(),
        409 => "The write conflicts with the account's data (a login or e-mail address already taken, the last active owner, a concurrent change); the message says which.".to_owned(),
        413 => format!("The request body is larger than 1 MiB ({BODY_LIMIT_BYTES} bytes)."),
        414 => "The request URI is longer than 65,534 bytes (a long id list goes in a body). Answered before routing: always XML.".to_owned(),
        431 => "The request head has more than 100 header fields or about 400 KB of them (a long query string counts). Answered before routing: always XML.".to_owned(),
        415 => "`Content-Type` is neither XML (`application/xml`, `text/xml`) nor `application/json`, or is not UTF-8.".to_owned(),
        429 => "Too many failed sign-ins for this login (or secrets for this client): wait `Retry-After` seconds.".to_owned(),
        503 => "The service or its database is temporarily unavailable: retry after `Retry-After` seconds.".to_owned(),
        504 => "The service did not answer within its deadline.".to_owned(),
        _ => "An unexpected error; quote the request id when reporting it. Never reveals internals.".to_owned(),
    }
}

/// `#/components`.
pub(crate) fn components(schemas: Vec<(String, Node)>) -> Node {
    let mut all = vec![("Error".to_owned(), error_schema())];
    all.extend(schemas);
    object! {
        "schemas" => Node::Object(all),
        "responses" => Node::Object(
            ERROR_STATUSES
                .iter()
                .map(|&status| (super::operation::error_name(status).to_owned(), error_answer(status)))
                .collect(),
        ),
        "parameters" => object! {
            "pageSize" => object! {
                "name" => "pageSize",
                "in" => "query",
                "required" => false,
                "description" => format!("How many rows a page holds, {DEFAULT_PAGE_SIZE} when absent or empty. Anything but a whole number from 1 to {MAX_PAGE_SIZE} is 400."),
                "schema" => object! {
                    "type" => "integer",
                    "minimum" => 1_i64,
                    "maximum" => MAX_PAGE_SIZE,
                    "default" => DEFAULT_PAGE_SIZE,
                },
            },
            "pageToken" => object! {
                "name" => "pageToken",
                "in" => "query",
                "required" => false,
                "description" => "The `nextPageToken` of the previous page; absent or empty asks for the first page. Opaque: a token this list did not give is 400.",
                "schema" => object! { "type" => "string" },
            },
        },
        "headers" => object! {
            "X-Request-Id" => object! {
                "description" => "The request's id: the caller's `X-Request-Id` when it sent a usable one, else a new one. Quote it when reporting a problem.",
                "schema" => object! { "type" => "string" },
            },
            "Retry-After" => object! {
                "description" => "Seconds to wait before trying again.",
                "schema" => object! { "type" => "integer", "minimum" => 0_i64 },
            },
        },
        "securitySchemes" => security_schemes(),
    }
}

/// `<error><code/><message/><requestId/></error>`, in JSON the same keys.
fn error_schema() -> Node {
    element(
        "error",
        "Every error answer's body (contract section 4), in the request's format: the XML element `error`, or the same keys in a JSON object.",
        vec![
            required("code", integer("The HTTP status, repeated.")),
            required(
                "message",
                text(
                    "A sentence a person can act on, naming the offending header, parameter, element or value.",
                ),
            ),
            required("requestId", text("The request's id, as in `X-Request-Id`.")),
        ],
        Others::Refused,
    )
}

fn error_answer(status: u16) -> Node {
    let mut headers = object! {
        "X-Request-Id" => object! { "$ref" => "#/components/headers/X-Request-Id" },
    };
    if matches!(status, 429 | 503) {
        headers.set(
            "Retry-After",
            object! { "$ref" => "#/components/headers/Retry-After" },
        );
    }
    let xml = object! { "schema" => reference("Error") };
    let content = if always_xml(status) {
        object! { "application/xml" => xml }
    } else {
        object! {
            "application/xml" => xml,
            "application/json" => object! { "schema" => reference("Error") },
        }
    };
    object! {
        "description" => error_meaning(status),
        "headers" => headers,
        "content" => content,
    }
}

/// A list filter in the query: every spelling clients use reads alike (contract section 8).
pub(crate) fn list_filter(name: &str, description: &str) -> Node {
    object! {
        "name" => name,
        "in" => "query",
        "required" => false,
        "description" => format!(
            "{description} Values may be given repeated (`{name}=a&{name}=b`), comma-separated \
             (`{name}=a,b`), as `{name}[]=a` or `{name}[0]=a` (brackets plain or \
             percent-encoded); empty values are dropped. Within the filter any value matches."
        ),
        "style" => "form",
        "explode" => true,
        "schema" => object! { "type" => "array", "items" => object! { "type" => "string" } },
    }
}

/// `#/components/parameters/NAME`.
pub(crate) fn parameter(name: &str) -> Node {
    object! { "$ref" => format!("#/components/parameters/{name}") }
}

/// The three `X-Auth-*` headers (one requirement of all three), an access token (bearer, or
/// the raw token), and the client-credentials grant that issues tokens.
fn security_schemes() -> Node {
    let header = |name: &str, what: String| {
        object! {
            "type" => "apiKey",
            "in" => "header",
            "name" => name,
            "description" => what,
        }
    };
    object! {
        "accountUrl" => header(
            "X-Auth-Account-Url",
            format!("The account's URL (at most {MAX_ACCOUNT_URL_BYTES} bytes), matched up to its scheme, the case of its host, a default port and a trailing `/`. Sent together with `X-Auth-Email` and `X-Auth-Password`."),
        ),
        "login" => header(
            "X-Auth-Email",
            format!("The caller's login (at most {MAX_EMAIL_BYTES} bytes), compared case-insensitively."),
        ),
        "password" => header(
            "X-Auth-Password",
            format!("The caller's password (at most {MAX_PASSWORD_BYTES} bytes). After 10 failures for one login within 5 minutes, attempts are answered 429 until the window passes."),
        ),
        "bearerToken" => object! {
            "type" => "http",
            "scheme" => "bearer",
            "description" => "An access token from `POST /api/v3/token`, valid for 30 minutes: `Authorization: Bearer <token>` (the raw `Authorization: <token>` is accepted too). A request with a token is authenticated by it alone; it acts as its client's user, with that user's role and scope.",
        },
        "clientCredentials" => object! {
            "type" => "oauth2",
            "description" => "The OAuth 2.0 client-credentials grant (RFC 6749 section 4.4) that issues the bearer tokens: `client_id` and `client_secret` of an API client, form-encoded.",
            "flows" => object! {
                "clientCredentials" => object! {
                    "tokenUrl" => "/api/v3/token",
                    "scopes" => object! {},
                },
            },
        },
    }
}

/// The document-wide requirement: the three headers together, or a token.
pub(crate) fn security() -> Node {
    list![
        object! { "accountUrl" => list![], "login" => list![], "password" => list![] },
        object! { "bearerToken" => list![] },
        object! { "clientCredentials" => list![] },
    ]
}
