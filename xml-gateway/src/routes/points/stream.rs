//! The body of the points read: the core's stream written on as XML
//! (`<response><userPointsInfo>..`) or as a top-level JSON array
//! (`[{"userId": .., "points": ..}]`), never held whole in memory. A failure midway aborts the
//! body (the caller sees a truncated transfer, not a well-formed but incomplete list).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body as HttpBody;
use bytes::Bytes;
use futures::{FutureExt, Stream};
use lms_proto::v1::UserPoints;
use lms_runtime::Outage;
use tonic::Streaming;
use tracing::Span;

use crate::representation::{Format, Representation};
use crate::transport::{TransportFailure, is_transport_failure};
use crate::xml::writer::XmlWriter;

/// Results that are already at hand are written together, up to about this many bytes.
const CHUNK_BYTES: usize = 16 * 1024;

/// The opened stream of points, written in whichever format the caller negotiated.
pub(super) struct PointsStream {
    stream: Streaming<UserPoints>,
    first: Option<UserPoints>,
    idle_timeout: Duration,
    outage: Arc<Outage>,
    span: Span,
}

impl PointsStream {
    pub(super) fn new(
        stream: Streaming<UserPoints>,
        first: Option<UserPoints>,
        idle_timeout: Duration,
        outage: Arc<Outage>,
        span: Span,
    ) -> Self {
        Self {
            stream,
            first,
            idle_timeout,
            outage,
            span,
        }
    }
}

impl Representation for PointsStream {
    fn into_body(self: Box<Self>, format: Format) -> HttpBody {
        let Self {
            stream,
            first,
            idle_timeout,
            outage,
            span,
        } = *self;
        HttpBody::from_stream(points_body(
            format,
            stream,
            first,
            idle_timeout,
            outage,
            span,
        ))
    }
}

/// One piece of the points body in the negotiated format: the opening, the results that are
/// at hand, and the closing, which a failure midway never writes.
struct PointsWriter {
    format: Format,
    out: String,
    /// Whether a result was written before, in this piece or an earlier one (JSON commas).
    written_any: bool,
}

impl PointsWriter {
    fn new(format: Format, written_any: bool) -> Self {
        Self {
            format,
            out: String::new(),
            written_any,
        }
    }

    fn open(&mut self) {
        match self.format {
            Format::Xml => {
                let mut xml = XmlWriter::document();
                xml.open("response");
                self.out.push_str(&xml.finish());
            }
            Format::Json => self.out.push('['),
        }
    }

    fn points(&mut self, points: &UserPoints) {
        match self.format {
            Format::Xml => {
                let mut xml = XmlWriter::fragment();
                xml.open("userPointsInfo")
                    .text_element("userId", &points.user_id)
                    .text_element("points", &points.points.to_string())
                    .close("userPointsInfo");
                self.out.push_str(&xml.finish());
            }
            Format::Json => {
                if self.written_any {
                    self.out.push(',');
                }
                self.out
                    .push_str(&crate::representation::json_text(&PointsJson {
                        user_id: &points.user_id,
                        points: points.points,
                    }));
            }
        }
        self.written_any = true;
    }

    fn close(&mut self) {
        match self.format {
            Format::Xml => self.out.push_str("</response>"),
            Format::Json => self.out.push(']'),
        }
    }

    fn len(&self) -> usize {
        self.out.len()
    }

    fn finish(self) -> Bytes {
        Bytes::from(self.out)
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PointsJson<'a> {
    user_id: &'a str,
    points: i64,
}

/// Where the body stream is.
enum BodyState {
    /// Nothing written yet; the first result is at hand.
    Start {
        stream: Streaming<UserPoints>,
        first: Option<UserPoints>,
    },
    /// The opening is out; more results may come.
    Streaming(Streaming<UserPoints>),
    /// Results were written, then the core failed; the next item aborts the body.
    Failed(tonic::Status),
    Done,
}

/// The body: the opening, one entry per result, the closing.
fn points_body(
    format: Format,
    stream: Streaming<UserPoints>,
    first: Option<UserPoints>,
    idle_timeout: Duration,
    outage: Arc<Outage>,
    span: Span,
) -> impl Stream<Item = Result<Bytes, tonic::Status>> + Send + 'static {
    futures::stream::unfold(BodyState::Start { stream, first }, move |state| {
        let span = span.clone();
        let outage = outage.clone();
        async move {
            match state {
                BodyState::Start { stream, first } => {
                    let mut out = PointsWriter::new(format, false);
                    out.open();
                    let Some(points) = first else {
                        out.close();
                        return Some((Ok(out.finish()), BodyState::Done));
                    };
                    out.points(&points);
                    let next = write_ready(stream, &mut out);
                    Some((Ok(out.finish()), next))
                }
                BodyState::Streaming(mut stream) => {
                    let mut out = PointsWriter::new(format, true);
                    match tokio::time::timeout(idle_timeout, stream.message()).await {
                        Ok(Ok(Some(points))) => {
                            out.points(&points);
                            let next = write_ready(stream, &mut out);
                            Some((Ok(out.finish()), next))
                        }
                        Ok(Ok(None)) => {
                            out.close();
                            Some((Ok(out.finish()), BodyState::Done))
                        }
                        Ok(Err(status)) => {
                            Some((Err(abort(status, &outage, &span)), BodyState::Done))
                        }
                        Err(_elapsed) => {
                            let status = tonic::Status::deadline_exceeded(
                                "no points arrived from the core within the deadline",
                            );
                            Some((Err(abort(status, &outage, &span)), BodyState::Done))
                        }
                    }
                }
                BodyState::Failed(status) => {
                    Some((Err(abort(status, &outage, &span)), BodyState::Done))
                }
                BodyState::Done => None,
            }
        }
    })
}

/// Writes the results that are already available without waiting, up to [`CHUNK_BYTES`], so a
/// fast core does not produce one tiny chunk per user; then says what comes next.
fn write_ready(mut stream: Streaming<UserPoints>, out: &mut PointsWriter) -> BodyState {
    while out.len() < CHUNK_BYTES {
        // `message()` only polls the stream, so dropping it when not ready loses nothing.
        match stream.message().now_or_never() {
            None => break,
            Some(Ok(Some(points))) => out.points(&points),
            Some(Ok(None)) => {
                out.close();
                return BodyState::Done;
            }
            // What is written so far goes out first; the next item aborts the body.
            Some(Err(status)) => return BodyState::Failed(status),
        }
    }
    BodyState::Streaming(stream)
}

/// Logs a mid-stream failure once; the returned error makes hyper abort the body.
fn abort(status: tonic::Status, outage: &Outage, span: &Span) -> tonic::Status {
    span.in_scope(|| {
        // The core dying mid-stream is part of an outage, logged once there.
        if is_transport_failure(&status) {
            outage.failed(&TransportFailure(&status));
            return;
        }
        tracing::error!(
            grpc.code = ?status.code(),
            grpc.message = status.message(),
            "the points stream failed midway; aborting the response body"
        );
    });
    status
}

/// The body writer over real gRPC-framed bytes (no core involved): document shape, batching of
/// ready results, and aborting on a failure midway.
#[cfg(test)]
mod body_tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue};
    use http_body::Frame;
    use http_body_util::{BodyExt, StreamBody};
    use prost::Message;

    fn grpc_frame(points: &UserPoints) -> Bytes {
        let message = points.encode_to_vec();
        let mut frame = vec![0u8];
        frame.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
        frame.extend_from_slice(&message);
        Bytes::from(frame)
    }

    fn trailers(code: tonic::Code) -> HeaderMap {
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from(code as i32));
        trailers.insert("grpc-message", HeaderValue::from_static("boom"));
        trailers
    }

    fn user(n: usize) -> UserPoints {
        UserPoints {
            user_id: format!("u-{n:05}"),
            points: i64::try_from(n).unwrap() * 10 - 5,
        }
    }

    /// A response stream of `count` results ending with `end` as its status.
    fn grpc_stream(count: usize, end: tonic::Code) -> Streaming<UserPoints> {
        let mut frames: Vec<Result<Frame<Bytes>, std::io::Error>> = (0..count)
            .map(|n| Ok(Frame::data(grpc_frame(&user(n)))))
            .collect();
        frames.push(Ok(Frame::trailers(trailers(end))));
        Streaming::new_response(
            tonic_prost::ProstDecoder::<UserPoints>::default(),
            StreamBody::new(futures::stream::iter(frames)),
            axum::http::StatusCode::OK,
            None,
            None,
        )
    }

    async fn body_of(count: usize, end: tonic::Code) -> (Vec<Bytes>, Option<String>) {
        body_in(Format::Xml, count, end).await
    }

    async fn body_in(
        format: Format,
        count: usize,
        end: tonic::Code,
    ) -> (Vec<Bytes>, Option<String>) {
        let mut stream = grpc_stream(count, end);
        let first = stream.message().await.unwrap();
        let mut body = HttpBody::from_stream(points_body(
            format,
            stream,
            first,
            Duration::from_secs(5),
            Arc::new(Outage::new("the core", Duration::ZERO)),
            Span::none(),
        ));
        let mut chunks = Vec::new();
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => chunks.extend(frame.into_data().ok()),
                Err(error) => return (chunks, Some(error.to_string())),
            }
        }
        (chunks, None)
    }

    fn joined(chunks: &[Bytes]) -> String {
        chunks
            .iter()
            .map(|chunk| std::str::from_utf8(chunk).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn results_are_written_in_order_inside_one_response_element() {
        let (chunks, error) = body_of(3, tonic::Code::Ok).await;
        assert_eq!(error, None);
        assert_eq!(
            joined(&chunks),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response>\
             <userPointsInfo><userId>u-00000</userId><points>-5</points></userPointsInfo>\
             <userPointsInfo><userId>u-00001</userId><points>5</points></userPointsInfo>\
             <userPointsInfo><userId>u-00002</userId><points>15</points></userPointsInfo>\
             </response>"
        );
    }

    #[tokio::test]
    async fn in_json_the_results_are_one_top_level_array() {
        let (chunks, error) = body_in(Format::Json, 2, tonic::Code::Ok).await;
        assert_eq!(error, None);
        assert_eq!(
            joined(&chunks),
            r#"[{"userId":"u-00000","points":-5},{"userId":"u-00001","points":5}]"#
        );
        let (chunks, _) = body_in(Format::Json, 0, tonic::Code::Ok).await;
        assert_eq!(joined(&chunks), "[]");
        let (chunks, error) = body_in(Format::Json, 5_000, tonic::Code::Ok).await;
        assert_eq!(error, None);
        let parsed: serde_json::Value = serde_json::from_str(&joined(&chunks)).unwrap();
        assert_eq!(parsed.as_array().unwrap().len(), 5_000);
        let (chunks, error) = body_in(Format::Json, 3, tonic::Code::Unavailable).await;
        assert!(error.is_some());
        assert!(!joined(&chunks).ends_with(']'));
    }

    #[tokio::test]
    async fn no_results_give_an_empty_response_element() {
        let (chunks, error) = body_of(0, tonic::Code::Ok).await;
        assert_eq!(error, None);
        assert_eq!(
            joined(&chunks),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response></response>"
        );
    }

    #[tokio::test]
    async fn many_results_are_sent_in_bounded_chunks() {
        let (chunks, error) = body_of(5_000, tonic::Code::Ok).await;
        assert_eq!(error, None);
        assert!(chunks.len() > 1, "one chunk for 5000 results");
        assert!(chunks.iter().all(|chunk| chunk.len() < CHUNK_BYTES + 256));
        let document = joined(&chunks);
        assert_eq!(document.matches("<userPointsInfo>").count(), 5_000);
        assert!(document.ends_with("<points>49985</points></userPointsInfo></response>"));
    }

    #[tokio::test]
    async fn a_failure_midway_aborts_the_body_without_closing_the_document() {
        let (chunks, error) = body_of(3, tonic::Code::Unavailable).await;
        assert!(error.is_some(), "the body ended cleanly");
        let document = joined(&chunks);
        assert!(document.contains("<userId>u-00002</userId>"), "{document}");
        assert!(!document.contains("</response>"), "{document}");
    }
}
