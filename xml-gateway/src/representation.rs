//! The one representation layer (contract section 11): every answer's format, XML or JSON, is
//! chosen here once per request from `Accept`, and every body is written here in it.
//!
//! Handlers return an [`Answer`]: a status and a typed [`Representation`] that knows how to
//! write itself in either format, but not which one the caller wants. Errors leave their
//! message on the response (`error::ErrorReport`). The [`represent`] middleware negotiates
//! (406 when `Accept` allows neither format), runs the route, and writes the body.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::{ErrorReport, GatewayError, generic_message};
use crate::json::JSON_CONTENT_TYPE;
use crate::request_id::RequestId;
use crate::xml::XML_CONTENT_TYPE;
use crate::xml::writer::XmlWriter;

/// The format of a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Xml,
    Json,
}

impl Format {
    /// The format `Accept` prefers: JSON when it ranks `application/json` above both XML types
    /// (by q-value, then by order), else XML, which is also the answer to no `Accept` and to
    /// `*/*`. `None` when it allows neither (406).
    pub(crate) fn negotiate(headers: &HeaderMap) -> Option<Self> {
        let ranges: Vec<MediaRange<'_>> = headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(MediaRange::parse)
            .collect();
        if ranges.is_empty() {
            return Some(Self::Xml);
        }
        let json = preference(&ranges, "application", "json");
        let xml = [
            preference(&ranges, "application", "xml"),
            preference(&ranges, "text", "xml"),
        ]
        .into_iter()
        .flatten()
        .max_by_key(|preference| preference.key());
        match (json, xml) {
            (None, None) => None,
            (Some(json), Some(xml)) if json.key() > xml.key() => Some(Self::Json),
            (Some(_), None) => Some(Self::Json),
            _ => Some(Self::Xml),
        }
    }

    pub(crate) fn content_type(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            Self::Xml => XML_CONTENT_TYPE,
            Self::Json => JSON_CONTENT_TYPE,
        })
    }
}

/// One element of `Accept`.
#[derive(Debug)]
struct MediaRange<'a> {
    kind: &'a str,
    subtype: &'a str,
    /// In thousandths, as RFC 9110 allows three decimals.
    quality: u16,
}

impl<'a> MediaRange<'a> {
    fn parse(text: &'a str) -> Option<Self> {
        let mut parts = text.split(';');
        let (kind, subtype) = parts.next()?.trim().split_once('/')?;
        let mut quality = 1_000;
        for parameter in parts {
            if let Some((name, value)) = parameter.split_once('=')
                && name.trim().eq_ignore_ascii_case("q")
            {
                quality = parse_quality(value.trim())?;
            }
        }
        Some(Self {
            kind: kind.trim(),
            subtype: subtype.trim(),
            quality,
        })
    }

    /// How specifically this range names `kind/subtype`: 2 exactly, 1 as `kind/*`, 0 as `*/*`.
    fn specificity(&self, kind: &str, subtype: &str) -> Option<u8> {
        match (self.kind, self.subtype) {
            ("*", "*") => Some(0),
            (k, "*") if k.eq_ignore_ascii_case(kind) => Some(1),
            (k, s) if k.eq_ignore_ascii_case(kind) && s.eq_ignore_ascii_case(subtype) => Some(2),
            _ => None,
        }
    }
}

/// `0`, `0.5`, `1.000` → thousandths; anything else makes the range unreadable (ignored).
fn parse_quality(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let thousandths = format!("{fraction:0<3}").parse::<u16>().ok()?;
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1_000),
        _ => None,
    }
}

/// How much `Accept` wants `kind/subtype`: the quality of the most specific range naming it
/// (RFC 9110 §12.5.1) and that range's position. `None` when no range names it or its quality
/// is 0.
fn preference(ranges: &[MediaRange<'_>], kind: &str, subtype: &str) -> Option<Preference> {
    let (_, position, quality) = ranges
        .iter()
        .enumerate()
        .filter_map(|(position, range)| {
            Some((range.specificity(kind, subtype)?, position, range.quality))
        })
        .max_by_key(|(specificity, position, _)| (*specificity, std::cmp::Reverse(*position)))?;
    (quality > 0).then_some(Preference { quality, position })
}

/// Ranked by quality, then by coming earlier in `Accept`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Preference {
    quality: u16,
    position: usize,
}

impl Preference {
    fn key(self) -> (u16, std::cmp::Reverse<usize>) {
        (self.quality, std::cmp::Reverse(self.position))
    }
}

/// A typed answer that can write itself in either format.
pub(crate) trait Representation: Send + 'static {
    fn into_body(self: Box<Self>, format: Format) -> Body;
}

/// An answer written whole: its XML (inside the `<response>` element, which is written here)
/// and its JSON text (the same data without the wrapper, keys in the XML's element order).
pub(crate) trait Document: Send + 'static {
    /// About how many bytes the XML takes, so that it is written into one buffer.
    fn xml_bytes_hint(&self) -> usize {
        256
    }

    fn write_xml(&self, xml: &mut XmlWriter);
    fn to_json(&self) -> String;
}

impl<T: Document> Representation for T {
    fn into_body(self: Box<Self>, format: Format) -> Body {
        match format {
            Format::Xml => {
                let mut xml = XmlWriter::document_with_capacity(self.xml_bytes_hint());
                xml.open("response");
                self.write_xml(&mut xml);
                xml.close("response");
                xml.finish().into()
            }
            Format::Json => self.to_json().into(),
        }
    }
}

/// `value` as JSON text. Our answers are plain structs of strings and numbers, which always
/// serialize; should one ever fail, the body says so instead of the process panicking.
pub(crate) fn json_text(value: &(impl serde::Serialize + ?Sized)) -> String {
    serde_json::to_string(value).unwrap_or_else(|error| {
        tracing::error!(error = %error, "an answer could not be written as JSON");
        "null".to_owned()
    })
}

/// Appends `value` as JSON text to a body being written piece by piece.
pub(crate) fn push_json(out: &mut String, value: &(impl serde::Serialize + ?Sized)) {
    out.push_str(&json_text(value));
}

/// A route's answer with a body: its status and what to write.
pub(crate) struct Answer {
    status: StatusCode,
    body: Box<dyn Representation>,
}

impl Answer {
    pub(crate) fn new(status: StatusCode, body: impl Representation) -> Self {
        Self {
            status,
            body: Box::new(body),
        }
    }

    pub(crate) fn ok(body: impl Representation) -> Self {
        Self::new(StatusCode::OK, body)
    }
}

/// The body still to be written, carried on the response to [`represent`]. (Response
/// extensions must be `Clone + Sync`; the body is taken out once.)
#[derive(Clone)]
struct Pending(Arc<Mutex<Option<Box<dyn Representation>>>>);

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        let mut response = self.status.into_response();
        response
            .extensions_mut()
            .insert(Pending(Arc::new(Mutex::new(Some(self.body)))));
        response
    }
}

/// Middleware: chooses the format (406 when none is acceptable), runs the route, and writes
/// its answer or its error in that format, with the request id in every error.
pub(crate) async fn represent(request: Request, next: Next) -> Response {
    let Some(format) = Format::negotiate(request.headers()) else {
        let request_id = request.extensions().get::<RequestId>().cloned();
        let response = GatewayError::NotAcceptable.into_response();
        return write_body(response, Format::Xml, request_id.as_ref());
    };
    run_in(format, request, next).await
}

/// Middleware for routes that answer JSON whatever `Accept` says: the token endpoint, whose
/// answers and errors RFC 6749 defines as JSON and whose clients send any `Accept` (or a
/// browser's).
pub(crate) async fn represent_as_json(request: Request, next: Next) -> Response {
    run_in(Format::Json, request, next).await
}

async fn run_in(format: Format, mut request: Request, next: Next) -> Response {
    let request_id = request.extensions().get::<RequestId>().cloned();
    request.extensions_mut().insert(format);
    let response = next.run(request).await;
    write_body(response, format, request_id.as_ref())
}

fn write_body(mut response: Response, format: Format, request_id: Option<&RequestId>) -> Response {
    let pending = response
        .extensions_mut()
        .remove::<Pending>()
        .and_then(|Pending(body)| body.lock().ok()?.take());
    if let Some(body) = pending {
        response
            .headers_mut()
            .insert(CONTENT_TYPE, format.content_type());
        *response.body_mut() = body.into_body(format);
        return response;
    }
    let status = response.status();
    let message = match response.extensions_mut().remove::<ErrorReport>() {
        Some(ErrorReport(message)) => message,
        None if (status.is_client_error() || status.is_server_error())
            && !has_own_body(&response) =>
        {
            generic_message(status)
        }
        None => return response,
    };
    let body = error_body(format, status, &message, request_id);
    let headers = response.headers_mut();
    headers.remove(CONTENT_LENGTH);
    headers.insert(CONTENT_TYPE, format.content_type());
    *response.body_mut() = body.into();
    response
}

fn has_own_body(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value.starts_with(XML_CONTENT_TYPE) || value.starts_with(JSON_CONTENT_TYPE)
        })
}

/// `<error><code>..</code><message>..</message><requestId>..</requestId></error>`, or
/// `{"code": .., "message": "..", "requestId": ".."}`.
pub(crate) fn error_body(
    format: Format,
    status: StatusCode,
    message: &str,
    request_id: Option<&RequestId>,
) -> String {
    match format {
        Format::Xml => {
            let mut xml = XmlWriter::document();
            xml.open("error")
                .text_element("code", status.as_str())
                .text_element("message", message);
            if let Some(request_id) = request_id {
                xml.text_element("requestId", request_id.as_str());
            }
            xml.close("error");
            xml.finish()
        }
        Format::Json => {
            let mut body = json!({"code": status.as_u16(), "message": message});
            if let Some(request_id) = request_id {
                body["requestId"] = Value::from(request_id.as_str());
            }
            body.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn negotiated(accept: &[&'static str]) -> Option<Format> {
        let mut headers = HeaderMap::new();
        for value in accept {
            headers.append(ACCEPT, HeaderValue::from_static(value));
        }
        Format::negotiate(&headers)
    }

    #[test]
    fn xml_is_the_default() {
        for accept in [
            &[][..],
            &["*/*"],
            &["application/xml"],
            &["text/xml"],
            &["application/xml, application/json"],
            &["application/json;q=0.5, application/xml"],
            &["application/*"],
            &["text/html, */*;q=0.8"],
            &["application/json;q=0.9, */*"],
            &[""],
        ] {
            assert_eq!(negotiated(accept), Some(Format::Xml), "{accept:?}");
        }
    }

    #[test]
    fn json_when_preferred_by_order_or_quality() {
        for accept in [
            &["application/json"][..],
            &["application/json, text/plain, */*"],
            &["application/json, application/xml"],
            &["application/xml;q=0.5, application/json"],
            &["Application/JSON"],
            &["text/html", "application/json"],
            &["application/xml;q=0, application/*"],
            &["*/*;q=0.1, application/json;q=0.2"],
        ] {
            assert_eq!(negotiated(accept), Some(Format::Json), "{accept:?}");
        }
    }

    #[test]
    fn neither_format_allowed_is_not_acceptable() {
        for accept in [
            &["text/html"][..],
            &["image/png, text/plain"],
            &["application/json;q=0, application/xml;q=0, text/xml;q=0"],
            &["*/*;q=0"],
        ] {
            assert_eq!(negotiated(accept), None, "{accept:?}");
        }
    }

    #[test]
    fn errors_are_written_in_either_format() {
        assert_eq!(
            error_body(Format::Json, StatusCode::BAD_REQUEST, "No \"x\".", None),
            r#"{"code":400,"message":"No \"x\"."}"#
        );
        assert_eq!(
            error_body(Format::Xml, StatusCode::BAD_REQUEST, "a<b", None),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><error><code>400</code>\
             <message>a&lt;b</message></error>"
        );
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::*;
        use crate::fuzz::config;

        proptest! {
            #![proptest_config(config(2_000))]

            #[test]
            fn fuzz_any_accept_header_is_negotiated_without_panic(
                accept in "([a-z*]{0,12}/[a-z*+.]{0,12}(;\\s?q=[0-9.]{0,6})?(;[a-z]{0,4}=[a-z0-9]{0,4})?,?\\s?){0,6}"
            ) {
                let Ok(value) = HeaderValue::from_str(&accept) else {
                    return Ok(());
                };
                let mut headers = HeaderMap::new();
                headers.insert(ACCEPT, value);
                if Format::negotiate(&headers) == Some(Format::Json) {
                    prop_assert!(accept.contains('*') || accept.contains("json"), "{}", accept);
                }
            }
        }
    }
}
