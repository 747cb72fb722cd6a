//! XML in and out: the [`Xml`] body extractor and the [`XmlDocument`] response.
//!
//! Layout: [`reader`] turns bytes into an element tree under the contract's rules; [`writer`]
//! builds response documents; this module checks `Content-Type` and size, and ties both to axum.
//! Nothing here depends on the gateway's error type: the extractor refuses with an
//! [`XmlRejection`], which `error` converts into a `GatewayError` like any other refusal.

pub(crate) mod reader;
pub(crate) mod writer;

use axum::body::Body;
use axum::extract::{FromRequest, Request};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use tokio::time::Instant;

pub(crate) use reader::{Element, XmlError};

use crate::clip::clip;
use crate::settings::{BODY_LIMIT_BYTES, DEFAULT_BODY_TIMEOUT_MS};

/// `Content-Type` of every XML body the gateway writes.
pub(crate) const XML_CONTENT_TYPE: &str = "application/xml; charset=utf-8";

/// A request body type read from an XML document with a fixed root element.
pub(crate) trait FromXml: Sized {
    /// The name the root element must have.
    const ROOT: &'static str;

    /// Reads the fields from the (already checked) root element.
    fn from_root(root: &Element) -> Result<Self, XmlError>;
}

/// Extractor: the request body parsed as `T`. Every rejection becomes a `GatewayError` when it
/// is answered, so it gets the same XML error body as everything else.
#[derive(Debug)]
pub(crate) struct Xml<T>(pub(crate) T);

/// Why a request body was not accepted as XML.
#[derive(Debug, thiserror::Error)]
pub(crate) enum XmlRejection {
    /// The body has a media type other than XML; holds the offending `Content-Type`.
    #[error("unsupported media type {0}")]
    UnsupportedMediaType(String),
    #[error("request body too large")]
    PayloadTooLarge,
    /// The body stream failed before it was complete.
    #[error("the request body could not be read")]
    Unreadable,
    /// The body was not complete by the request's [`BodyDeadline`].
    #[error("the request body did not arrive in time")]
    TimedOut,
    /// The body is not a document of the expected shape.
    #[error(transparent)]
    Invalid(#[from] XmlError),
}

impl<T: FromXml, S: Send + Sync> FromRequest<S> for Xml<T> {
    type Rejection = XmlRejection;

    async fn from_request(request: Request, _state: &S) -> Result<Self, Self::Rejection> {
        check_content_type(request.headers())?;
        let declared_too_large = check_declared_length(request.headers())?;
        let deadline = request
            .extensions()
            .get::<BodyDeadline>()
            .map_or_else(BodyDeadline::from_now, |deadline| deadline.0);
        let body = tokio::time::timeout_at(
            deadline,
            read_limited(request.into_body(), declared_too_large),
        )
        .await
        .map_err(|_elapsed| XmlRejection::TimedOut)??;
        let root = parse_off_the_runtime(body, T::ROOT).await?;
        Ok(Self(T::from_root(&root)?))
    }
}

/// When the whole request body must have arrived; set by the HTTP server when the request head
/// is read. Without it (a router driven directly) the default applies from the extractor's start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyDeadline(pub(crate) Instant);

impl BodyDeadline {
    fn from_now() -> Instant {
        Instant::now() + std::time::Duration::from_millis(DEFAULT_BODY_TIMEOUT_MS)
    }
}

/// Bodies above this size are parsed on the blocking pool rather than on a runtime worker.
///
/// Parsing is linear in the body (every per-element check is capped), so a body of up to 1 MiB
/// costs milliseconds; off the workers, even those milliseconds never delay other requests.
/// Small bodies, the usual case, skip the hand-over.
const INLINE_PARSE_BYTES: usize = 16 * 1024;

async fn parse_off_the_runtime(body: Bytes, root: &'static str) -> Result<Element, XmlError> {
    if body.len() <= INLINE_PARSE_BYTES {
        return reader::parse_document(&body, root);
    }
    match tokio::task::spawn_blocking(move || reader::parse_document(&body, root)).await {
        Ok(parsed) => parsed,
        // Parsing does not panic (the fuzz tests hold it to that); if it ever did, the request
        // fails like any other panicking handler would.
        Err(join_error) => std::panic::resume_unwind(join_error.into_panic()),
    }
}

/// `application/xml` or `text/xml`, optionally with `charset=utf-8`, or no `Content-Type`.
///
/// `Content-Type` given more than once is read as one value when every copy is the same, and
/// refused otherwise: which of two media types the body has cannot be known.
pub(crate) fn check_content_type(headers: &HeaderMap) -> Result<(), XmlRejection> {
    let mut values = headers.get_all(CONTENT_TYPE).iter();
    let Some(value) = values.next() else {
        return Ok(());
    };
    if values.any(|other| other.as_bytes().trim_ascii() != value.as_bytes().trim_ascii()) {
        return Err(XmlRejection::UnsupportedMediaType(
            "given more than once with different values".to_owned(),
        ));
    }
    let refuse = || {
        XmlRejection::UnsupportedMediaType(format!(
            "\"{}\"",
            clip(&String::from_utf8_lossy(value.as_bytes()))
        ))
    };
    let text = value.to_str().map_err(|_| refuse())?;
    let mut parts = text.split(';');
    let essence = parts.next().unwrap_or_default().trim();
    if !(essence.eq_ignore_ascii_case("application/xml")
        || essence.eq_ignore_ascii_case("text/xml"))
    {
        return Err(refuse());
    }
    for parameter in parts {
        let Some((name, value)) = parameter.split_once('=') else {
            if parameter.trim().is_empty() {
                continue;
            }
            return Err(refuse());
        };
        if name.trim().eq_ignore_ascii_case("charset") {
            let charset = value.trim().trim_matches('"');
            if !charset.eq_ignore_ascii_case("utf-8") {
                return Err(refuse());
            }
        }
    }
    Ok(())
}

/// How much of a body over the limit is still read, and thrown away, before the 413.
///
/// A client still sending when the server answers and closes meets a reset connection and
/// usually never reads the answer; reading what it sends (within this bound, and within the
/// body deadline) lets it see the 413 and its message.
const DRAIN_LIMIT_BYTES: usize = 4 * BODY_LIMIT_BYTES;

/// Whether a declared `Content-Length` is over the limit; past the draining bound the body is
/// refused at once, unread.
fn check_declared_length(headers: &HeaderMap) -> Result<bool, XmlRejection> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    match declared {
        Some(length) if length > DRAIN_LIMIT_BYTES as u64 => Err(XmlRejection::PayloadTooLarge),
        Some(length) => Ok(length > BODY_LIMIT_BYTES as u64),
        None => Ok(false),
    }
}

/// Reads the body up to the limit (chunked bodies declare no length). A body over it is
/// refused, after reading and dropping what arrives up to [`DRAIN_LIMIT_BYTES`].
async fn read_limited(mut body: Body, too_large: bool) -> Result<Bytes, XmlRejection> {
    let mut kept = BytesMut::new();
    let mut seen = 0_usize;
    let mut too_large = too_large;
    while let Some(frame) = body.frame().await {
        let data = match frame {
            Ok(frame) => match frame.into_data() {
                Ok(data) => data,
                Err(_trailers) => continue,
            },
            // Once the body is known to be too large, that is the answer, however it ends.
            Err(_) if too_large => break,
            Err(error) => {
                tracing::debug!(error = %error, "reading the request body failed");
                return Err(XmlRejection::Unreadable);
            }
        };
        seen = seen.saturating_add(data.len());
        too_large |= seen > BODY_LIMIT_BYTES;
        if too_large {
            if seen > DRAIN_LIMIT_BYTES {
                break;
            }
        } else {
            kept.extend_from_slice(&data);
        }
    }
    if too_large {
        return Err(XmlRejection::PayloadTooLarge);
    }
    Ok(kept.freeze())
}

/// A complete XML response document with its status.
#[derive(Debug)]
pub(crate) struct XmlDocument {
    pub(crate) status: StatusCode,
    pub(crate) body: String,
}

impl XmlDocument {
    pub(crate) fn ok(body: String) -> Self {
        Self {
            status: StatusCode::OK,
            body,
        }
    }
}

impl IntoResponse for XmlDocument {
    fn into_response(self) -> Response {
        (
            self.status,
            [(CONTENT_TYPE, HeaderValue::from_static(XML_CONTENT_TYPE))],
            self.body,
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_content_type(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn xml_media_types_are_accepted_in_any_case_with_a_utf8_charset() {
        for value in [
            "application/xml",
            "text/xml",
            "Application/XML",
            "TEXT/XML",
            "application/xml; charset=utf-8",
            "application/xml;charset=UTF-8",
            "text/xml; charset=\"utf-8\"",
            "application/xml; charset=utf-8;",
        ] {
            assert!(
                check_content_type(&with_content_type(value)).is_ok(),
                "{value}"
            );
        }
        assert!(check_content_type(&HeaderMap::new()).is_ok());
    }

    #[test]
    fn other_media_types_and_charsets_are_refused() {
        for value in [
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
            "application/xhtml+xml",
            "application/xml; charset=iso-8859-1",
            "text/xml; charset=utf-16",
            "",
            "xml",
        ] {
            assert!(
                matches!(
                    check_content_type(&with_content_type(value)),
                    Err(XmlRejection::UnsupportedMediaType(_))
                ),
                "{value}"
            );
        }
    }

    #[test]
    fn a_declared_length_over_the_limit_is_drained_and_far_over_it_refused_up_front() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_LENGTH, HeaderValue::from(BODY_LIMIT_BYTES as u64));
        assert!(matches!(check_declared_length(&headers), Ok(false)));
        headers.insert(
            CONTENT_LENGTH,
            HeaderValue::from(BODY_LIMIT_BYTES as u64 + 1),
        );
        assert!(matches!(check_declared_length(&headers), Ok(true)));
        headers.insert(
            CONTENT_LENGTH,
            HeaderValue::from(DRAIN_LIMIT_BYTES as u64 + 1),
        );
        assert!(matches!(
            check_declared_length(&headers),
            Err(XmlRejection::PayloadTooLarge)
        ));
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_after_it_was_read() {
        let body = Body::from(vec![b'x'; BODY_LIMIT_BYTES + 1]);
        assert!(matches!(
            read_limited(body, false).await,
            Err(XmlRejection::PayloadTooLarge)
        ));
        let body = Body::from(vec![b'x'; BODY_LIMIT_BYTES]);
        assert_eq!(
            read_limited(body, false)
                .await
                .map(|bytes| bytes.len())
                .ok(),
            Some(BODY_LIMIT_BYTES)
        );
    }
}
