//! SCIM tokens (provisioning.md section 7): `POST /scim_tokens` (201, the token shown once),
//! `GET /scim_tokens` (the account's SCIM clients, without tokens) and
//! `DELETE /scim_tokens/{clientId}` (204). Owners and account administrators only; the core
//! decides.

use axum::extract::State;
use axum::http::StatusCode;
use lms_proto::v1::{
    ApiClient, CreateScimTokenRequest, CreateScimTokenResponse, ListScimTokensRequest,
    RevokeScimTokenRequest,
};
use serde::Serialize;

use crate::body::{BodyRejection, MaybeBody};
use crate::core_client::{Caller, CoreClient};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::{Answer, Document, json_text};
use crate::routes::{NoQuery, PathId};
use crate::xml::writer::XmlWriter;
use crate::xml::{Element, FromXml, XmlError};

/// `<request><userId>…</userId></request>` / `{"userId": "…"}`; absent or empty: the caller.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct TokenUser(Option<String>);

impl FromXml for TokenUser {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        root.optional_text("userId").map(Self)
    }
}

impl FromJson for TokenUser {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        object.optional_text("userId").map(Self)
    }
}

/// The token just made.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewToken {
    client_id: String,
    user_id: String,
    token: String,
}

impl Document for NewToken {
    fn write_xml(&self, xml: &mut XmlWriter) {
        xml.open("scimToken")
            .text_element("clientId", &self.client_id)
            .text_element("userId", &self.user_id)
            .text_element("token", &self.token)
            .close("scimToken");
    }

    fn to_json(&self) -> String {
        json_text(self)
    }
}

/// One SCIM client as the list shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedToken {
    client_id: String,
    user_id: String,
    revoked: u8,
}

struct Tokens(Vec<ListedToken>);

impl Document for Tokens {
    fn xml_bytes_hint(&self) -> usize {
        128 + 160 * self.0.len()
    }

    fn write_xml(&self, xml: &mut XmlWriter) {
        for token in &self.0 {
            xml.open("scimToken")
                .text_element("clientId", &token.client_id)
                .text_element("userId", &token.user_id)
                .text_element("revoked", &token.revoked.to_string())
                .close("scimToken");
        }
    }

    fn to_json(&self) -> String {
        json_text(&self.0)
    }
}

#[tracing::instrument(skip_all)]
pub(crate) async fn create_scim_token(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    body: Result<MaybeBody<TokenUser>, BodyRejection>,
) -> Result<Answer, GatewayError> {
    let user_id = body?.0.and_then(|user| user.0).unwrap_or_default();
    let message = CreateScimTokenRequest { user_id };
    let made: CreateScimTokenResponse = core
        .unary(&caller, message, |mut admin, request| async move {
            admin.create_scim_token(request).await
        })
        .await?;
    Ok(Answer::new(
        StatusCode::CREATED,
        NewToken {
            client_id: made.client_id,
            user_id: made.user_id,
            token: made.token,
        },
    ))
}

#[tracing::instrument(skip_all)]
pub(crate) async fn list_scim_tokens(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
) -> Result<Answer, GatewayError> {
    let listed = core
        .unary(
            &caller,
            ListScimTokensRequest {},
            |mut admin, request| async move { admin.list_scim_tokens(request).await },
        )
        .await?;
    let tokens = listed
        .scim_tokens
        .into_iter()
        .map(|client: ApiClient| ListedToken {
            client_id: client.client_id,
            user_id: client.user_id,
            revoked: u8::from(client.revoked),
        })
        .collect();
    Ok(Answer::ok(Tokens(tokens)))
}

#[tracing::instrument(skip_all, fields(client_id = %client_id))]
pub(crate) async fn revoke_scim_token(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    PathId(client_id): PathId,
) -> Result<StatusCode, GatewayError> {
    let message = RevokeScimTokenRequest { client_id };
    core.unary(&caller, message, |mut admin, request| async move {
        admin.revoke_scim_token(request).await
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
