//! `POST /api/v3/token`: the client-credentials grant (contract section 12; RFC 6749 4.4).

use super::Resource;
use super::node::{Node, list, object};
use super::operation::{Media, Operation};
use super::schema::{Others, element, integer, one_of_texts, optional, reference, required, text};

pub(crate) fn resource() -> Resource {
    let oauth_error = |description: &str, extra: Option<Node>| {
        let schema = match extra {
            Some(other) => object! { "anyOf" => list![reference("OAuthError"), other] },
            None => reference("OAuthError"),
        };
        object! {
            "description" => description,
            "headers" => object! { "X-Request-Id" => object! { "$ref" => "#/components/headers/X-Request-Id" } },
            "content" => object! { "application/json" => object! { "schema" => schema } },
        }
    };
    let operations = vec![
        Operation::post("/api/v3/token", "Tokens", "issueToken")
            .token_endpoint()
            .describe(
                "Issue an access token",
                "Exchanges an API client's id and secret for an access token valid for 30 minutes on every core sharing the database. Always answers JSON (RFC 6749), whatever `Accept` says. Wrong secrets are throttled per client like wrong passwords (429 with `Retry-After`). Also served at `/index.php/api/v3/token`.",
            )
            .body(
                "The grant, form-encoded (or JSON with the same keys). Unknown form fields are ignored; a field given twice is `invalid_request`.",
                vec![
                    Media::other("application/x-www-form-urlencoded", reference("TokenRequest"))
                        .example("grant_type=client_credentials&client_id=0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60&client_secret=SECRET"),
                    Media::json(reference("TokenRequest")).example(object! {
                        "grant_type" => "client_credentials",
                        "client_id" => "0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60",
                        "client_secret" => "SECRET",
                    }),
                ],
            )
            .answer(200, "The token.", vec![Media::json(reference("Token"))])
            .raw_answer(
                400,
                oauth_error(
                    "`invalid_request` (a field missing, repeated or unreadable, a body neither form nor JSON) or `unsupported_grant_type`; an unknown query parameter is the gateway's usual error body.",
                    Some(reference("Error")),
                ),
            )
            .raw_answer(
                401,
                oauth_error(
                    "`invalid_client`: an unknown client, a wrong secret, a revoked client or a deactivated user.",
                    None,
                ),
            ),
    ];
    Resource {
        operations,
        schemas: vec![
            ("TokenRequest".into(), token_request()),
            ("Token".into(), token()),
            ("OAuthError".into(), oauth_error_schema()),
        ],
    }
}

fn token_request() -> Node {
    element(
        "request",
        "A client-credentials grant.",
        vec![
            required(
                "grant_type",
                one_of_texts(&["client_credentials"], "The grant; the only one offered."),
            ),
            required("client_id", text("The API client's id.")),
            required(
                "client_secret",
                text("The API client's secret, as shown when it was made."),
            ),
        ],
        Others::Ignored,
    )
}

fn token() -> Node {
    element(
        "response",
        "An access token (RFC 6749 5.1).",
        vec![
            required(
                "access_token",
                text("The token: send it as `Authorization: Bearer <token>`."),
            ),
            required("expires_in", integer("Seconds it stays valid (1800).")),
            required("token_type", one_of_texts(&["bearer"], "Always `bearer`.")),
        ],
        Others::Refused,
    )
}

fn oauth_error_schema() -> Node {
    element(
        "response",
        "A refused grant (RFC 6749 5.2).",
        vec![
            required(
                "error",
                one_of_texts(
                    &[
                        "invalid_request",
                        "invalid_client",
                        "unsupported_grant_type",
                    ],
                    "What was wrong.",
                ),
            ),
            optional(
                "error_description",
                text("For an unreadable JSON body, what the reader found."),
            ),
        ],
        Others::Refused,
    )
}
