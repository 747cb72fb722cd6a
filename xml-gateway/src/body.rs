//! Request bodies in either format (contract sections 5 and 11): the [`Body`] extractor checks
//! the media type (XML, none at all, or JSON), the declared and actual size, and the body
//! deadline, then reads `T` with [`FromXml`] or [`FromJson`]. Its refusals are a
//! [`BodyRejection`], which `error` converts like any other refusal.

use axum::body::Body as HttpBody;
use axum::extract::{FromRequest, Request};
use axum::http::HeaderMap;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use tokio::time::Instant;

use crate::clip::clip;
use crate::json::{FromJson, JsonError, parse_json};
use crate::settings::{BODY_LIMIT_BYTES, DEFAULT_BODY_TIMEOUT_MS};
use crate::xml::{FromXml, XmlError, parse_off_the_runtime};

/// Extractor: the request body parsed as `T`, from XML or JSON by its `Content-Type`.
#[derive(Debug)]
pub(crate) struct Body<T>(pub(crate) T);

/// The media type of a request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyFormat {
    /// `application/xml`, `text/xml`, or no `Content-Type` at all (the interface's default).
    Xml,
    /// `application/json`.
    Json,
}

/// Why a request body was not accepted.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyRejection {
    /// The body has a media type other than XML or JSON; holds the offending `Content-Type`.
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
    /// The body is not an XML document of the expected shape.
    #[error(transparent)]
    InvalidXml(#[from] XmlError),
    /// The body is not a JSON object of the expected shape.
    #[error(transparent)]
    InvalidJson(#[from] JsonError),
}

impl<T: FromXml + FromJson, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = BodyRejection;

    async fn from_request(request: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let format = body_format(request.headers())?;
        let body = read_body(request).await?;
        match format {
            BodyFormat::Xml => {
                let root = parse_off_the_runtime(body, T::ROOT).await?;
                Ok(Self(T::from_root(&root)?))
            }
            BodyFormat::Json => Ok(Self(parse_json(&body)?)),
        }
    }
}

/// Extractor: as [`Body`], but an empty body (nothing but whitespace) is `None`, whatever its
/// `Content-Type`, for writes whose fields may come in the query string instead. A body that
/// is there is read exactly as [`Body`] reads it.
#[derive(Debug)]
pub(crate) struct MaybeBody<T>(pub(crate) Option<T>);

impl<T: FromXml + FromJson, S: Send + Sync> FromRequest<S> for MaybeBody<T> {
    type Rejection = BodyRejection;

    async fn from_request(request: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let headers = request.headers().clone();
        let body = read_body(request).await?;
        if body.trim_ascii().is_empty() {
            return Ok(Self(None));
        }
        match body_format(&headers)? {
            BodyFormat::Xml => {
                let root = parse_off_the_runtime(body, T::ROOT).await?;
                Ok(Self(Some(T::from_root(&root)?)))
            }
            BodyFormat::Json => Ok(Self(Some(parse_json(&body)?))),
        }
    }
}

/// The whole body, within the size limit and the body deadline, whatever its media type.
pub(crate) async fn read_body(request: Request) -> Result<Bytes, BodyRejection> {
    let declared_too_large = check_declared_length(request.headers())?;
    let deadline = request
        .extensions()
        .get::<BodyDeadline>()
        .map_or_else(BodyDeadline::from_now, |deadline| deadline.0);
    tokio::time::timeout_at(
        deadline,
        read_limited(request.into_body(), declared_too_large),
    )
    .await
    .map_err(|_elapsed| BodyRejection::TimedOut)?
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

/// `application/xml`, `text/xml` or `application/json`, optionally with `charset=utf-8`, or no
/// `Content-Type` (XML).
///
/// `Content-Type` given more than once is read as one value when every copy is the same, and
/// refused otherwise: which of two media types the body has cannot be known.
pub(crate) fn body_format(headers: &HeaderMap) -> Result<BodyFormat, BodyRejection> {
    let mut values = headers.get_all(CONTENT_TYPE).iter();
    let Some(value) = values.next() else {
        return Ok(BodyFormat::Xml);
    };
    if values.any(|other| other.as_bytes().trim_ascii() != value.as_bytes().trim_ascii()) {
        return Err(BodyRejection::UnsupportedMediaType(
            "given more than once with different values".to_owned(),
        ));
    }
    let refuse = || {
        BodyRejection::UnsupportedMediaType(format!(
            "\"{}\"",
            clip(&String::from_utf8_lossy(value.as_bytes()))
        ))
    };
    let text = value.to_str().map_err(|_| refuse())?;
    let mut parts = text.split(';');
    let essence = parts.next().unwrap_or_default().trim();
    let format = if essence.eq_ignore_ascii_case("application/xml")
        || essence.eq_ignore_ascii_case("text/xml")
    {
        BodyFormat::Xml
    } else if essence.eq_ignore_ascii_case("application/json") {
        BodyFormat::Json
    } else {
        return Err(refuse());
    };
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
    Ok(format)
}

/// How much of a body over the limit is still read, and thrown away, before the 413.
///
/// A client still sending when the server answers and closes meets a reset connection and
/// usually never reads the answer; reading what it sends (within this bound, and within the
/// body deadline) lets it see the 413 and its message.
const DRAIN_LIMIT_BYTES: usize = 4 * BODY_LIMIT_BYTES;

/// Whether a declared `Content-Length` is over the limit; past the draining bound the body is
/// refused at once, unread.
fn check_declared_length(headers: &HeaderMap) -> Result<bool, BodyRejection> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    match declared {
        Some(length) if length > DRAIN_LIMIT_BYTES as u64 => Err(BodyRejection::PayloadTooLarge),
        Some(length) => Ok(length > BODY_LIMIT_BYTES as u64),
        None => Ok(false),
    }
}

/// Reads the body up to the limit (chunked bodies declare no length). A body over it is
/// refused, after reading and dropping what arrives up to [`DRAIN_LIMIT_BYTES`].
async fn read_limited(mut body: HttpBody, too_large: bool) -> Result<Bytes, BodyRejection> {
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
                return Err(BodyRejection::Unreadable);
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
        return Err(BodyRejection::PayloadTooLarge);
    }
    Ok(kept.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

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
            assert_eq!(
                body_format(&with_content_type(value)).ok(),
                Some(BodyFormat::Xml),
                "{value}"
            );
        }
        assert_eq!(body_format(&HeaderMap::new()).ok(), Some(BodyFormat::Xml));
        for value in ["application/json", "Application/JSON; charset=UTF-8"] {
            assert_eq!(
                body_format(&with_content_type(value)).ok(),
                Some(BodyFormat::Json),
                "{value}"
            );
        }
    }

    #[test]
    fn other_media_types_and_charsets_are_refused() {
        for value in [
            "application/json; charset=latin1",
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
                    body_format(&with_content_type(value)),
                    Err(BodyRejection::UnsupportedMediaType(_))
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
            Err(BodyRejection::PayloadTooLarge)
        ));
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_after_it_was_read() {
        let body = HttpBody::from(vec![b'x'; BODY_LIMIT_BYTES + 1]);
        assert!(matches!(
            read_limited(body, false).await,
            Err(BodyRejection::PayloadTooLarge)
        ));
        let body = HttpBody::from(vec![b'x'; BODY_LIMIT_BYTES]);
        assert_eq!(
            read_limited(body, false)
                .await
                .map(|bytes| bytes.len())
                .ok(),
            Some(BODY_LIMIT_BYTES)
        );
    }
}
