//! One module per resource of the interface; each handler is a thin translation of one HTTP
//! operation into one `lms.v1` RPC.

pub(crate) mod content;
pub(crate) mod department;
pub(crate) mod enrollment;
pub(crate) mod fallback;
pub(crate) mod group;
pub(crate) mod points;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

use crate::error::GatewayError;

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
