//! Answers for requests no route handles: unknown path (404) and wrong method (405; axum adds
//! the `Allow` header).

use axum::http::{Method, Uri};

use crate::clip::clip;
use crate::error::GatewayError;

pub(crate) async fn unknown_route(method: Method, uri: Uri) -> GatewayError {
    GatewayError::NotFound(format!(
        "There is no resource at {} {}.",
        clip(method.as_str()),
        clip(uri.path())
    ))
}

pub(crate) async fn method_not_allowed(method: Method) -> GatewayError {
    GatewayError::MethodNotAllowed(method)
}
