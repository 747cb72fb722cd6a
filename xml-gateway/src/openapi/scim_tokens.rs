//! SCIM tokens (provisioning.md section 7): made, listed and revoked by owners and account
//! administrators; each authenticates `/scim/v2` only.

use super::Resource;
use super::node::object;
use super::operation::{Media, Operation};
use super::schema::{
    Others, digit_flag, element, id, optional, reference, required, response_of, text, whole_list,
};

const TAG: &str = "Tokens";

const EXAMPLE_ID: &str = "0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60";

const WHO: &str = "Account owners and account administrators; anyone else gets 403.";

pub(crate) fn resource() -> Resource {
    let operations = vec![
        Operation::post("/scim_tokens", TAG, "createScimToken")
            .describe(
                "Make a SCIM token",
                &format!(
                    "A SCIM token for an identity provider (Entra ID, Okta): 64 hex characters, shown in this answer only, stored as a SHA-256 hash, without expiry. It authenticates `/scim/v2` only (`Authorization: Bearer <token>`), acting as `userId` (absent or empty: the caller) on the whole account; `/api/v3/token` and every other route refuse it. 400 naming `userId` unless it names an active account owner or administrator of the account. Audited as `api_client.create`. {WHO}"
                ),
            )
            .body(
                "Optional. The XML root is `request`.",
                vec![
                    Media::xml(reference("ScimTokenRequest"))
                        .example(format!("<request><userId>{EXAMPLE_ID}</userId></request>")),
                    Media::json(reference("ScimTokenRequest"))
                        .example(object! { "userId" => EXAMPLE_ID }),
                ],
            )
            .answer(
                201,
                "The token: in XML inside `<response>`, in JSON the bare object.",
                vec![
                    Media::xml(reference("NewScimTokenDocument")),
                    Media::json(reference("NewScimToken")),
                ],
            )
            .errors(&[403]),
        Operation::get("/scim_tokens", TAG, "listScimTokens")
            .describe(
                "List SCIM tokens",
                &format!(
                    "The account's SCIM clients, revoked ones included, ascending `clientId`, without their tokens. {WHO}"
                ),
            )
            .answer(
                200,
                "`<response><scimToken>…</scimToken>…</response>`; in JSON a top-level array.",
                vec![
                    Media::xml(reference("ScimTokens")),
                    Media::json(reference("ScimTokens")),
                ],
            )
            .errors(&[403]),
        Operation::delete("/scim_tokens/{client_id}", TAG, "revokeScimToken")
            .describe(
                "Revoke a SCIM token",
                &format!(
                    "Its next request gets 401. Revoking twice answers 204 again; 404 for anything but a SCIM client of the account. Audited as `api_client.revoke`. {WHO}"
                ),
            )
            .path_id("client_id", "The SCIM client.")
            .empty(204, "Revoked; no body.")
            .errors(&[403]),
    ];
    Resource {
        operations,
        schemas: vec![
            (
                "ScimTokenRequest".into(),
                element(
                    "request",
                    "Whom the token acts as.",
                    vec![optional(
                        "userId",
                        id(
                            "An active account owner or administrator; absent or empty: the caller.",
                        ),
                    )],
                    Others::Ignored,
                ),
            ),
            (
                "NewScimToken".into(),
                element(
                    "scimToken",
                    "A SCIM token just made.",
                    vec![
                        required("clientId", id("The API client holding the token.")),
                        required("userId", id("The user it acts as.")),
                        required(
                            "token",
                            text("The token, 64 hex characters; shown this once."),
                        ),
                    ],
                    Others::Refused,
                ),
            ),
            (
                "NewScimTokenDocument".into(),
                response_of("scimToken", "NewScimToken"),
            ),
            (
                "ScimToken".into(),
                element(
                    "scimToken",
                    "A SCIM client, without its token.",
                    vec![
                        required("clientId", id("The API client.")),
                        required("userId", id("The user it acts as.")),
                        required("revoked", digit_flag("1 once revoked, else 0.")),
                    ],
                    Others::Refused,
                ),
            ),
            (
                "ScimTokens".into(),
                whole_list(
                    "ScimToken",
                    "The account's SCIM clients, ascending `clientId`.",
                ),
            ),
        ],
    }
}
