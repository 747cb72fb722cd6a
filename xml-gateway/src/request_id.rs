//! Request ids: the caller's `X-Request-Id` when it sent a usable one, else a new UUID; put on
//! the request (for handlers, logs and the core) and on every response.

use std::convert::Infallible;

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

pub(crate) const X_REQUEST_ID: HeaderName =
    HeaderName::from_static(lms_proto::metadata::REQUEST_ID);

/// Longest caller-supplied request id that is kept; longer ones are replaced.
const MAX_LEN: usize = 128;

/// The id of one request; always visible ASCII, so it is also a valid gRPC metadata value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestId(HeaderValue);

impl RequestId {
    /// The caller's id, when it is 1 to 128 visible ASCII characters.
    pub(crate) fn from_caller(value: &HeaderValue) -> Option<Self> {
        let bytes = value.as_bytes();
        let usable = !bytes.is_empty()
            && bytes.len() <= MAX_LEN
            && bytes.iter().all(|byte| byte.is_ascii_graphic());
        usable.then(|| Self(value.clone()))
    }

    /// A new UUIDv7: the time in milliseconds, then random bits from this thread's generator
    /// (`Uuid::now_v7` asks the kernel for them, a system call on every request).
    pub(crate) fn generate() -> Self {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            });
        let id = uuid::Builder::from_unix_timestamp_millis(millis, &rand::random()).into_uuid();
        let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
        let text = id.hyphenated().encode_lower(&mut text);
        // A hyphenated UUID is always a valid header value.
        Self(HeaderValue::from_str(text).unwrap_or_else(|_| HeaderValue::from_static("unknown")))
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only visible ASCII gets in, so this never falls back.
        self.0.to_str().unwrap_or_default()
    }

    pub(crate) fn header_value(&self) -> &HeaderValue {
        &self.0
    }
}

/// Middleware: decides the request id, stores it in the request's extensions and headers, and
/// stamps it on the response.
pub(crate) async fn assign_request_id(mut request: Request, next: Next) -> Response {
    let request_id = request
        .headers()
        .get(X_REQUEST_ID)
        .and_then(RequestId::from_caller)
        .unwrap_or_else(RequestId::generate);
    request
        .headers_mut()
        .insert(X_REQUEST_ID, request_id.header_value().clone());
    request.extensions_mut().insert(request_id.clone());
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(X_REQUEST_ID, request_id.header_value().clone());
    response
}

impl<S: Send + Sync> FromRequestParts<S> for RequestId {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        // The middleware always sets one; a handler mounted without it still gets a fresh id.
        Ok(parts
            .extensions
            .get::<RequestId>()
            .cloned()
            .unwrap_or_else(RequestId::generate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_usable_caller_id_is_kept() {
        let id = RequestId::from_caller(&HeaderValue::from_static("abc-123_XYZ.42"));
        assert_eq!(
            id.map(|id| id.as_str().to_owned()).as_deref(),
            Some("abc-123_XYZ.42")
        );
    }

    #[test]
    fn unusable_caller_ids_are_refused() {
        assert!(RequestId::from_caller(&HeaderValue::from_static("")).is_none());
        assert!(RequestId::from_caller(&HeaderValue::from_static("has space")).is_none());
        let long = "a".repeat(MAX_LEN + 1);
        assert!(RequestId::from_caller(&HeaderValue::from_str(&long).unwrap()).is_none());
        let non_ascii = HeaderValue::from_bytes("é".as_bytes()).unwrap();
        assert!(RequestId::from_caller(&non_ascii).is_none());
    }

    #[test]
    fn generated_ids_are_uuids() {
        let id = RequestId::generate();
        let parsed = uuid::Uuid::parse_str(id.as_str()).unwrap();
        assert_eq!(parsed.get_version_num(), 7, "{parsed}");
        assert_ne!(id, RequestId::generate());
    }
}
