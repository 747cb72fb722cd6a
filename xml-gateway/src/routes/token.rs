//! `POST /api/v3/token`: the OAuth 2.0 client-credentials grant (RFC 6749 §4.4; contract
//! section 12). The body is form-encoded (or JSON) with `client_id`, `client_secret` and
//! `grant_type=client_credentials`; the answer and its failures are RFC 6749's JSON, whatever
//! `Accept` says, since that is what every token client reads. Failures the grant does not
//! describe (a body too large, the core out of reach, a throttled client) are the gateway's
//! usual errors.

use axum::extract::{Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, PRAGMA};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use lms_proto::v1::IssueTokenRequest;
use lms_runtime::Secret;
use serde_json::{Value, json};
use tonic::Code;

use crate::body::read_body;
use crate::core_client::{CoreClient, request_to_core};
use crate::error::GatewayError;
use crate::json::{FromJson, JSON_CONTENT_TYPE, JsonError, JsonObject, parse_json};
use crate::request_id::RequestId;
use crate::routes::NoQuery;

/// The one grant this endpoint offers.
const CLIENT_CREDENTIALS: &str = "client_credentials";

/// The fields of a token request, as sent.
#[derive(Debug, Default)]
struct TokenRequest {
    client_id: Option<String>,
    client_secret: Option<Secret<String>>,
    grant_type: Option<String>,
}

/// RFC 6749 §5.2 error codes this endpoint answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OAuthError {
    InvalidRequest,
    /// `invalid_request` for a JSON body the gateway's reader refuses, which it describes
    /// (`error_description`) as it would for any other JSON body.
    UnreadableJson(JsonError),
    InvalidClient,
    UnsupportedGrantType,
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let (status, code) = match &self {
            Self::InvalidRequest | Self::UnreadableJson(_) => {
                (StatusCode::BAD_REQUEST, "invalid_request")
            }
            Self::InvalidClient => (StatusCode::UNAUTHORIZED, "invalid_client"),
            Self::UnsupportedGrantType => (StatusCode::BAD_REQUEST, "unsupported_grant_type"),
        };
        match self {
            Self::UnreadableJson(error) => json_response(
                status,
                &json!({ "error": code, "error_description": error.to_string() }),
            ),
            _ => json_response(status, &json!({ "error": code })),
        }
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [
            (CONTENT_TYPE, HeaderValue::from_static(JSON_CONTENT_TYPE)),
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (PRAGMA, HeaderValue::from_static("no-cache")),
        ],
        body.to_string(),
    )
        .into_response()
}

#[tracing::instrument(skip_all)]
pub(crate) async fn issue_token(
    State(core): State<CoreClient>,
    request_id: RequestId,
    _: NoQuery,
    request: Request,
) -> Result<Response, GatewayError> {
    let json = match request
        .headers()
        .get(CONTENT_TYPE)
        .map(|value| value.to_str().unwrap_or_default())
    {
        None => false,
        Some(value) => match essence(value).as_str() {
            "application/x-www-form-urlencoded" => false,
            "application/json" => true,
            _ => return Ok(OAuthError::InvalidRequest.into_response()),
        },
    };
    let body = read_body(request).await?;
    let fields = if json {
        json_fields(&body)
    } else {
        form_fields(&body)
    };
    let (client_id, client_secret) = match fields.and_then(checked) {
        Ok(credentials) => credentials,
        Err(error) => return Ok(error.into_response()),
    };
    let message = IssueTokenRequest {
        client_id,
        client_secret: client_secret.expose().clone(),
    };
    let attempts = core.on_a_replica(|mut admin| {
        let call = request_to_core(message.clone(), &request_id, Some(core.timeout()));
        async move { admin.issue_token(call).await }
    });
    let answered = match tokio::time::timeout(core.timeout(), attempts).await {
        Ok(result) => core.settle(result),
        Err(_elapsed) => Err(GatewayError::CoreTimeout),
    };
    match answered {
        Ok(issued) => {
            let issued = issued.into_inner();
            Ok(json_response(
                StatusCode::OK,
                &json!({
                    "access_token": issued.access_token,
                    "expires_in": issued.expires_in,
                    "token_type": "bearer",
                }),
            ))
        }
        Err(GatewayError::Core(status)) if status.code() == Code::Unauthenticated => {
            Ok(OAuthError::InvalidClient.into_response())
        }
        Err(GatewayError::Core(status)) if status.code() == Code::InvalidArgument => {
            Ok(OAuthError::InvalidRequest.into_response())
        }
        Err(error) => Err(error),
    }
}

/// The media type without parameters, lower-cased.
fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// A field given twice is a malformed request (RFC 6749 §3.2: parameters must not repeat).
fn set_once<T>(slot: &mut Option<T>, value: T) -> Result<(), OAuthError> {
    if slot.is_some() {
        return Err(OAuthError::InvalidRequest);
    }
    *slot = Some(value);
    Ok(())
}

fn form_fields(body: &[u8]) -> Result<TokenRequest, OAuthError> {
    let mut fields = TokenRequest::default();
    for (name, value) in form_urlencoded::parse(body) {
        let value = value.into_owned();
        match name.as_ref() {
            "client_id" => set_once(&mut fields.client_id, value)?,
            "client_secret" => set_once(&mut fields.client_secret, Secret::new(value))?,
            "grant_type" => set_once(&mut fields.grant_type, value)?,
            // RFC 6749 §3.2: unknown parameters are ignored (`scope` among them).
            _ => {}
        }
    }
    Ok(fields)
}

/// Read by the gateway's JSON reader, so a key given twice is refused as in every other
/// JSON body; the values are taken as sent (a secret is not trimmed).
fn json_fields(body: &[u8]) -> Result<TokenRequest, OAuthError> {
    parse_json(body).map_err(OAuthError::UnreadableJson)
}

impl FromJson for TokenRequest {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        let text = |name: &str| match object.value(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(JsonError::NotText(name.to_owned())),
        };
        Ok(Self {
            client_id: text("client_id")?,
            client_secret: text("client_secret")?.map(Secret::new),
            grant_type: text("grant_type")?,
        })
    }
}

/// The client's id and secret once the request is a well-formed client-credentials grant.
fn checked(fields: TokenRequest) -> Result<(String, Secret<String>), OAuthError> {
    match fields.grant_type.as_deref().map(str::trim) {
        None | Some("") => return Err(OAuthError::InvalidRequest),
        Some(CLIENT_CREDENTIALS) => {}
        Some(_) => return Err(OAuthError::UnsupportedGrantType),
    }
    let client_id = fields
        .client_id
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
        .ok_or(OAuthError::InvalidRequest)?;
    let client_secret = fields
        .client_secret
        .filter(|secret| !secret.expose().is_empty())
        .ok_or(OAuthError::InvalidRequest)?;
    Ok((client_id, client_secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(body: &str) -> Result<(String, Secret<String>), OAuthError> {
        form_fields(body.as_bytes()).and_then(checked)
    }

    #[test]
    fn a_client_credentials_grant_is_read_from_a_form_or_json() {
        let (id, secret) =
            form("grant_type=client_credentials&client_id=c-1&client_secret=s%2B1&scope=x")
                .unwrap();
        assert_eq!((id.as_str(), secret.expose().as_str()), ("c-1", "s+1"));
        let (id, secret) = json_fields(
            br#"{"grant_type": "client_credentials", "client_id": "c-1", "client_secret": "s"}"#,
        )
        .and_then(checked)
        .unwrap();
        assert_eq!((id.as_str(), secret.expose().as_str()), ("c-1", "s"));
    }

    #[test]
    fn malformed_grants_get_rfc_6749_errors() {
        for (body, error) in [
            ("client_id=c&client_secret=s", OAuthError::InvalidRequest),
            (
                "grant_type=password&client_id=c&client_secret=s",
                OAuthError::UnsupportedGrantType,
            ),
            (
                "grant_type=client_credentials&client_secret=s",
                OAuthError::InvalidRequest,
            ),
            (
                "grant_type=client_credentials&client_id=c",
                OAuthError::InvalidRequest,
            ),
            (
                "grant_type=client_credentials&client_id=c&client_id=d&client_secret=s",
                OAuthError::InvalidRequest,
            ),
        ] {
            assert_eq!(form(body).err(), Some(error), "{body}");
        }
        assert_eq!(
            json_fields(b"[1]").err(),
            Some(OAuthError::UnreadableJson(JsonError::NotObject))
        );
        assert_eq!(
            json_fields(
                br#"{"grant_type": "client_credentials", "client_id": "c", "client_id": "d"}"#
            )
            .err(),
            Some(OAuthError::UnreadableJson(JsonError::Duplicate(
                "client_id".into()
            )))
        );
        assert_eq!(
            json_fields(br#"{"client_id": 7}"#).err(),
            Some(OAuthError::UnreadableJson(JsonError::NotText(
                "client_id".into()
            )))
        );
    }
}
