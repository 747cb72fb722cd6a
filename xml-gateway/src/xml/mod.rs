//! XML in and out: [`FromXml`] request bodies, and the writer of response documents.
//!
//! Layout: [`reader`] turns bytes into an element tree under the contract's rules; [`writer`]
//! builds response documents. Reading the body itself (media type, size, deadline) is the
//! format-neutral `body` module's job. Nothing here depends on the gateway's error type.

pub(crate) mod reader;
pub(crate) mod writer;

use bytes::Bytes;

pub(crate) use reader::{Element, XmlError};

/// `Content-Type` of every XML body the gateway writes.
pub(crate) const XML_CONTENT_TYPE: &str = "application/xml; charset=utf-8";

/// A request body type read from an XML document with a fixed root element.
pub(crate) trait FromXml: Sized {
    /// The name the root element must have.
    const ROOT: &'static str;

    /// Reads the fields from the (already checked) root element.
    fn from_root(root: &Element) -> Result<Self, XmlError>;
}

/// Bodies above this size are parsed on the blocking pool rather than on a runtime worker.
///
/// Parsing is linear in the body (every per-element check is capped), so a body of up to 1 MiB
/// costs milliseconds; off the workers, even those milliseconds never delay other requests.
/// Small bodies, the usual case, skip the hand-over.
const INLINE_PARSE_BYTES: usize = 16 * 1024;

pub(crate) async fn parse_off_the_runtime(
    body: Bytes,
    root: &'static str,
) -> Result<Element, XmlError> {
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
