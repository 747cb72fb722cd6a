//! One module per resource of the interface; each handler is a thin translation of one HTTP
//! operation into one `lms.v1` RPC.

pub(crate) mod content;
pub(crate) mod department;
pub(crate) mod enrollment;
pub(crate) mod fallback;
pub(crate) mod group;
pub(crate) mod points;
pub(crate) mod results;
pub(crate) mod scim;
pub(crate) mod scim_tokens;
pub(crate) mod token;
pub(crate) mod user;
pub(crate) mod webhook;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

use crate::clip::clip;
use crate::error::GatewayError;

/// A query parameter the operation does not know: refused rather than ignored, since ignoring
/// a misspelt filter would silently answer more than was asked for (contract section 8).
pub(crate) fn unknown_query_parameter(name: &str) -> GatewayError {
    GatewayError::BadRequest(format!(
        "Query parameter \"{}\" is not known to this operation.",
        clip(name)
    ))
}

/// `refusal`, the gateway's own, unless the core refuses the caller outright: who may call
/// comes before what was sent (results.md section 3), and only the core knows who may.
/// `probe` is a call of the same operation that the core refuses for a caller without the
/// right, and otherwise answers or refuses without changing anything (the core checks the
/// permission before the input, and writes nothing on a refusal).
pub(crate) async fn permission_first<T>(
    refusal: GatewayError,
    probe: impl Future<Output = Result<T, GatewayError>>,
) -> GatewayError {
    match probe.await {
        Err(GatewayError::Core(status))
            if matches!(
                status.code(),
                tonic::Code::PermissionDenied | tonic::Code::Unauthenticated
            ) =>
        {
            GatewayError::Core(status)
        }
        _ => refusal,
    }
}

/// Extractor for operations that take no query parameters: any parameter is a 400 naming it.
#[derive(Debug)]
pub(crate) struct NoQuery;

impl<S: Send + Sync> FromRequestParts<S> for NoQuery {
    type Rejection = GatewayError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        match form_urlencoded::parse(query.as_bytes()).next() {
            Some((name, _)) => Err(unknown_query_parameter(&name)),
            None => Ok(Self),
        }
    }
}

/// The one identifier in a route's path, passed to the core as given (the core answers 404 for
/// a malformed one). A path segment that does not even decode to text is a 404 here.
#[derive(Debug)]
pub(crate) struct PathId(pub(crate) String);

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = GatewayError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(id)| Self(id))
            .map_err(|_| {
                GatewayError::NotFound("The identifier in the path names nothing.".to_owned())
            })
    }
}
