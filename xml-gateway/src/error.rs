//! The gateway's one error type and its one mapping to HTTP statuses and error messages.
//!
//! Handlers and extractors return [`GatewayError`]. Its `IntoResponse` decides the status, the
//! message and extra headers, and leaves an [`ErrorReport`] on the response; the
//! representation layer (`representation::represent`) then writes the body in the negotiated
//! format, with the request id. This module knows no body format.

use axum::http::header::{CONNECTION, RETRY_AFTER};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use tonic::Code;

use crate::body::BodyRejection;
use crate::json::JsonError;
use crate::settings::BODY_LIMIT_BYTES;
use crate::transport::{CORE_UNREACHABLE_RETRY_AFTER_SECONDS, is_h2_protocol_error};
use crate::xml::XmlError;

/// The one message for every authentication failure, so a caller cannot learn which part was
/// wrong (or which logins exist).
pub(crate) const AUTHENTICATION_FAILED: &str = "Authentication failed: check X-Auth-Account-Url, X-Auth-Email and X-Auth-Password, or \
     the token in Authorization.";
const UNAVAILABLE: &str = "The service is temporarily unavailable.";
const TIMED_OUT: &str = "The service did not answer in time.";
const INTERNAL: &str =
    "An unexpected error occurred. Please quote the request id when reporting it.";

/// Everything that can go wrong while answering a request.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GatewayError {
    /// A credential header is missing, blank or unreadable.
    #[error("authentication failed")]
    Unauthenticated,
    /// The request is malformed; the message names the problem.
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("method {0} not allowed")]
    MethodNotAllowed(Method),
    #[error("request body too large")]
    PayloadTooLarge,
    /// The request body was not complete by its deadline.
    #[error("request body timed out")]
    BodyTimeout,
    /// The request body has a media type other than XML or JSON; holds the offending
    /// Content-Type.
    #[error("unsupported media type {0}")]
    UnsupportedMediaType(String),
    /// `Accept` allows neither XML nor JSON.
    #[error("no acceptable response format")]
    NotAcceptable,
    /// The core answered with an error status.
    #[error("core answered {}: {}", .0.code(), .0.message())]
    Core(tonic::Status),
    /// The core did not answer within the gateway's deadline.
    #[error("core call timed out")]
    CoreTimeout,
    /// A bug or broken invariant; logged with its cause, never shown.
    #[error("internal error: {0:#}")]
    Internal(anyhow::Error),
}

impl From<XmlError> for GatewayError {
    fn from(error: XmlError) -> Self {
        Self::BadRequest(error.to_string())
    }
}

impl From<JsonError> for GatewayError {
    fn from(error: JsonError) -> Self {
        Self::BadRequest(error.to_string())
    }
}

impl From<BodyRejection> for GatewayError {
    fn from(rejection: BodyRejection) -> Self {
        match rejection {
            BodyRejection::UnsupportedMediaType(content_type) => {
                Self::UnsupportedMediaType(content_type)
            }
            BodyRejection::PayloadTooLarge => Self::PayloadTooLarge,
            BodyRejection::Unreadable => {
                Self::BadRequest("The request body could not be read.".to_owned())
            }
            BodyRejection::TimedOut => Self::BodyTimeout,
            BodyRejection::InvalidXml(error) => error.into(),
            BodyRejection::InvalidJson(error) => error.into(),
        }
    }
}

/// The body extractor's refusals are answered through the one mapping table.
impl IntoResponse for BodyRejection {
    fn into_response(self) -> Response {
        GatewayError::from(self).into_response()
    }
}

impl From<tonic::Status> for GatewayError {
    fn from(status: tonic::Status) -> Self {
        Self::Core(status)
    }
}

/// What an error becomes on the wire.
#[derive(Debug)]
struct ErrorParts {
    status: StatusCode,
    message: String,
    retry_after: Option<HeaderValue>,
}

impl ErrorParts {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after: None,
        }
    }
}

impl GatewayError {
    /// The status, message and `Retry-After` of the mapping table, for answers whose error
    /// body is not this interface's (SCIM's, `routes::scim`).
    pub(crate) fn status_message(self) -> (StatusCode, String, Option<HeaderValue>) {
        let parts = self.into_parts();
        (parts.status, parts.message, parts.retry_after)
    }

    /// The mapping table: status, message and extra headers. Logs what operators must see.
    fn into_parts(self) -> ErrorParts {
        match self {
            Self::Unauthenticated => {
                ErrorParts::new(StatusCode::UNAUTHORIZED, AUTHENTICATION_FAILED)
            }
            Self::BadRequest(message) => ErrorParts::new(StatusCode::BAD_REQUEST, message),
            Self::NotFound(message) => ErrorParts::new(StatusCode::NOT_FOUND, message),
            Self::MethodNotAllowed(method) => ErrorParts::new(
                StatusCode::METHOD_NOT_ALLOWED,
                format!(
                    "Method {} is not allowed on this resource; see the Allow header.",
                    crate::clip::clip(method.as_str())
                ),
            ),
            Self::PayloadTooLarge => ErrorParts::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("The request body is larger than 1 MiB ({BODY_LIMIT_BYTES} bytes)."),
            ),
            Self::BodyTimeout => ErrorParts::new(
                StatusCode::REQUEST_TIMEOUT,
                "The request body did not arrive in time; send it whole, without pauses.",
            ),
            Self::UnsupportedMediaType(content_type) => ErrorParts::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "Content-Type {content_type} is not accepted; send application/xml, \
                     text/xml or application/json in UTF-8."
                ),
            ),
            Self::NotAcceptable => ErrorParts::new(
                StatusCode::NOT_ACCEPTABLE,
                "Accept allows no format this service answers in; accept application/xml, \
                 text/xml or application/json.",
            ),
            Self::Core(status) => core_status_parts(status),
            Self::CoreTimeout => {
                tracing::warn!("the core did not answer within the gateway's deadline");
                ErrorParts::new(StatusCode::GATEWAY_TIMEOUT, TIMED_OUT)
            }
            Self::Internal(error) => {
                tracing::error!(error = format!("{error:#}"), "internal error");
                ErrorParts::new(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL)
            }
        }
    }
}

/// gRPC status → HTTP. 4xx carry the core's message (written for the caller); 5xx never do.
fn core_status_parts(status: tonic::Status) -> ErrorParts {
    let caller_error = |http: StatusCode| ErrorParts::new(http, status.message());
    let mut parts = match status.code() {
        Code::Unauthenticated => ErrorParts::new(StatusCode::UNAUTHORIZED, AUTHENTICATION_FAILED),
        Code::PermissionDenied => caller_error(StatusCode::FORBIDDEN),
        Code::InvalidArgument => caller_error(StatusCode::BAD_REQUEST),
        Code::NotFound => caller_error(StatusCode::NOT_FOUND),
        Code::FailedPrecondition | Code::Aborted | Code::AlreadyExists => {
            caller_error(StatusCode::CONFLICT)
        }
        // tonic reports some HTTP/2 failures of the connection itself as RESOURCE_EXHAUSTED
        // ("h2 protocol error: ..."); that is a broken transport, never the caller's rate.
        Code::ResourceExhausted if is_h2_protocol_error(&status) => {
            tracing::warn!(grpc.message = status.message(), "the core is unavailable");
            ErrorParts::new(StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE)
        }
        Code::ResourceExhausted => caller_error(StatusCode::TOO_MANY_REQUESTS),
        Code::Unavailable => {
            // Also what a call that never reached the core becomes (`CoreClient::settle`).
            // Outages are logged once where they are seen, not once per request here.
            tracing::debug!(grpc.message = status.message(), "the core is unavailable");
            ErrorParts::new(StatusCode::SERVICE_UNAVAILABLE, UNAVAILABLE)
        }
        // tonic reports a passed `grpc-timeout` as CANCELLED ("Timeout expired"), on the
        // client side and in the core alike; the gateway never cancels a call otherwise.
        Code::DeadlineExceeded | Code::Cancelled => {
            tracing::warn!(
                grpc.message = status.message(),
                "the core call passed its deadline"
            );
            ErrorParts::new(StatusCode::GATEWAY_TIMEOUT, TIMED_OUT)
        }
        code => {
            tracing::error!(
                grpc.code = ?code,
                grpc.message = status.message(),
                "the core answered with an unexpected status"
            );
            ErrorParts::new(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL)
        }
    };
    if matches!(
        parts.status,
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
    ) {
        parts.retry_after = retry_after(&status);
    }
    if parts.status == StatusCode::SERVICE_UNAVAILABLE && parts.retry_after.is_none() {
        parts.retry_after = Some(HeaderValue::from(CORE_UNREACHABLE_RETRY_AFTER_SECONDS));
    }
    parts
}

/// The `retry-after` metadata of a status, when it holds a number of seconds.
fn retry_after(status: &tonic::Status) -> Option<HeaderValue> {
    let seconds = status
        .metadata()
        .get(lms_proto::metadata::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(HeaderValue::from(seconds))
}

/// The message an error response will carry; left on the response for the representation
/// layer.
#[derive(Debug, Clone)]
pub(crate) struct ErrorReport(pub(crate) String);

impl IntoResponse for GatewayError {
    fn into_response(self) -> Response {
        let parts = self.into_parts();
        let mut response = parts.status.into_response();
        if let Some(retry_after) = parts.retry_after {
            response.headers_mut().insert(RETRY_AFTER, retry_after);
        }
        if parts.status == StatusCode::REQUEST_TIMEOUT {
            // The rest of a late body is not read; the connection cannot carry another request.
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
        }
        response.extensions_mut().insert(ErrorReport(parts.message));
        response
    }
}

/// The message of an error response made outside our handlers (a layer or framework
/// extractor), by its status.
pub(crate) fn generic_message(status: StatusCode) -> String {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => {
            format!("The request body is larger than 1 MiB ({BODY_LIMIT_BYTES} bytes).")
        }
        StatusCode::SERVICE_UNAVAILABLE => UNAVAILABLE.to_owned(),
        StatusCode::GATEWAY_TIMEOUT => TIMED_OUT.to_owned(),
        status if status.is_server_error() => INTERNAL.to_owned(),
        status => format!(
            "The request was refused: {}.",
            status.canonical_reason().unwrap_or("client error")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::metadata::MetadataValue;

    fn parts_of(status: tonic::Status) -> ErrorParts {
        GatewayError::Core(status).into_parts()
    }

    #[test]
    fn grpc_codes_map_to_the_contracts_http_statuses() {
        let cases = [
            (Code::Unauthenticated, StatusCode::UNAUTHORIZED),
            (Code::PermissionDenied, StatusCode::FORBIDDEN),
            (Code::InvalidArgument, StatusCode::BAD_REQUEST),
            (Code::NotFound, StatusCode::NOT_FOUND),
            (Code::Unavailable, StatusCode::SERVICE_UNAVAILABLE),
            (Code::DeadlineExceeded, StatusCode::GATEWAY_TIMEOUT),
            (Code::Cancelled, StatusCode::GATEWAY_TIMEOUT),
            (Code::ResourceExhausted, StatusCode::TOO_MANY_REQUESTS),
            (Code::FailedPrecondition, StatusCode::CONFLICT),
            (Code::Aborted, StatusCode::CONFLICT),
            (Code::Internal, StatusCode::INTERNAL_SERVER_ERROR),
            (Code::Unknown, StatusCode::INTERNAL_SERVER_ERROR),
            (Code::DataLoss, StatusCode::INTERNAL_SERVER_ERROR),
            (Code::Unimplemented, StatusCode::INTERNAL_SERVER_ERROR),
        ];
        for (code, http) in cases {
            assert_eq!(
                parts_of(tonic::Status::new(code, "x")).status,
                http,
                "{code:?}"
            );
        }
    }

    #[test]
    fn client_errors_carry_the_cores_message() {
        let parts = parts_of(tonic::Status::invalid_argument(
            "Field name must not be blank.",
        ));
        assert_eq!(parts.message, "Field name must not be blank.");
        let parts = parts_of(tonic::Status::permission_denied(
            "You may not read this group.",
        ));
        assert_eq!(parts.message, "You may not read this group.");
    }

    #[test]
    fn server_errors_never_reveal_the_cores_message() {
        for code in [
            Code::Internal,
            Code::Unknown,
            Code::Unavailable,
            Code::DeadlineExceeded,
        ] {
            let parts = parts_of(tonic::Status::new(code, "SELECT * FROM users failed"));
            assert!(
                !parts.message.contains("SELECT"),
                "{code:?}: {}",
                parts.message
            );
        }
    }

    #[test]
    fn unauthenticated_from_the_core_has_the_gateways_single_message() {
        let parts = parts_of(tonic::Status::unauthenticated("wrong password"));
        assert_eq!(parts.message, AUTHENTICATION_FAILED);
        assert_eq!(
            GatewayError::Unauthenticated.into_parts().message,
            AUTHENTICATION_FAILED
        );
    }

    #[test]
    fn resource_exhausted_copies_retry_after_from_the_status_metadata() {
        let mut status = tonic::Status::resource_exhausted("Too many failed logins.");
        status.metadata_mut().insert(
            lms_proto::metadata::RETRY_AFTER,
            MetadataValue::from_static("42"),
        );
        let response = GatewayError::Core(status).into_response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers().get(RETRY_AFTER).unwrap(), "42");
    }

    #[test]
    fn an_http2_failure_reported_as_resource_exhausted_is_not_a_429() {
        // What tonic makes of an h2 GOAWAY with ENHANCE_YOUR_CALM from the core's server.
        let status = tonic::Status::resource_exhausted(
            "h2 protocol error: http2 error: connection error received: not a result of an error",
        );
        let parts = parts_of(status);
        assert_ne!(parts.status, StatusCode::TOO_MANY_REQUESTS);
        assert!(parts.status.is_server_error(), "{:?}", parts.status);
        assert!(!parts.message.contains("h2"), "{}", parts.message);
    }

    #[test]
    fn a_malformed_retry_after_is_left_out() {
        let mut status = tonic::Status::resource_exhausted("Too many failed logins.");
        status.metadata_mut().insert(
            lms_proto::metadata::RETRY_AFTER,
            MetadataValue::from_static("soon"),
        );
        let response = GatewayError::Core(status).into_response();
        assert!(response.headers().get(RETRY_AFTER).is_none());
    }
}
