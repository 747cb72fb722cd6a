//! Writing a list's answers from messages in the tests of each listing: a whole list through
//! the real stream body, over real gRPC-framed bytes (no core involved), and a page as the
//! representation layer writes it.

use axum::http::{HeaderMap, HeaderValue};
use bytes::Bytes;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use std::sync::Arc;
use std::time::Duration;
use tonic::Streaming;
use tracing::Span;

use super::query::{QueryShape, parse_query};
pub(crate) use super::stream::CHUNK_BYTES;
use super::stream::WholeList;
use super::{Page, Paged, Streamed};
use crate::representation::{Format, Representation};

/// A response stream of `messages` ending with `end` as its status.
pub(crate) fn grpc_stream<M>(messages: &[M], end: tonic::Code) -> Streaming<M>
where
    M: prost::Message + Default + Send + 'static,
{
    let mut frames: Vec<Result<Frame<Bytes>, std::io::Error>> = messages
        .iter()
        .map(|message| {
            let encoded = message.encode_to_vec();
            let mut frame = vec![0u8];
            frame.extend_from_slice(&u32::try_from(encoded.len()).unwrap().to_be_bytes());
            frame.extend_from_slice(&encoded);
            Ok(Frame::data(Bytes::from(frame)))
        })
        .collect();
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from(end as i32));
    trailers.insert("grpc-message", HeaderValue::from_static("boom"));
    frames.push(Ok(Frame::trailers(trailers)));
    Streaming::new_response(
        tonic_prost::ProstDecoder::<M>::default(),
        StreamBody::new(futures::stream::iter(frames)),
        axum::http::StatusCode::OK,
        None,
        None,
    )
}

/// The chunks of the whole list's body over `messages`, and the error that aborted it, if
/// one did.
pub(crate) async fn whole_chunks<L: Streamed>(
    messages: &[L::Message],
    end: tonic::Code,
    format: Format,
) -> (Vec<Bytes>, Option<String>)
where
    L::Message: prost::Message + Default,
{
    let mut stream = grpc_stream(messages, end);
    let first = stream.message().await.unwrap_or_default();
    let list = WholeList::<L> {
        stream,
        first,
        idle_timeout: Duration::from_secs(5),
        outage: Arc::new(lms_runtime::Outage::new("the core", Duration::ZERO)),
        span: Span::none(),
    };
    let mut body = Box::new(list).into_body(format);
    let mut chunks = Vec::new();
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => chunks.extend(frame.into_data().ok()),
            Err(error) => return (chunks, Some(error.to_string())),
        }
    }
    (chunks, None)
}

/// The whole list's body over `messages`, which must end cleanly.
pub(crate) async fn whole_text<L: Streamed>(messages: &[L::Message], format: Format) -> String
where
    L::Message: prost::Message + Default,
{
    let (chunks, error) = whole_chunks::<L>(messages, tonic::Code::Ok, format).await;
    assert_eq!(error, None);
    joined(&chunks)
}

pub(crate) fn joined(chunks: &[Bytes]) -> String {
    chunks
        .iter()
        .map(|chunk| std::str::from_utf8(chunk).unwrap())
        .collect()
}

/// The body of one page of `items`.
pub(crate) async fn page_text<L: Paged>(
    items: Vec<L::Item>,
    next_page_token: &str,
    format: Format,
) -> String {
    let page = Page::<L> {
        counts: Vec::new(),
        items,
        next_page_token: next_page_token.to_owned(),
    };
    let body = Box::new(page).into_body(format);
    let bytes = body.collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// The filters and the page of a query string of listing `L`'s pages.
pub(crate) fn query<L: super::Listing>(
    query: &str,
) -> (super::Filters, lms_proto::v1::PageRequest) {
    try_query::<L>(query).unwrap()
}

/// The same, or the refusal of the query.
pub(crate) fn try_query<L: super::Listing>(
    query: &str,
) -> Result<(super::Filters, lms_proto::v1::PageRequest), crate::error::GatewayError> {
    parse_query(query, QueryShape::of::<L>(true))
}
