//! The body of a whole list: the core's stream written on as XML
//! (`<response><department>…</department>…</response>`) or as a top-level JSON array, as the
//! rows arrive, so that neither the gateway nor the core ever holds an account's list whole. A
//! failure midway aborts the body (the caller sees a truncated transfer, not a well-formed but
//! incomplete list).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body as HttpBody;
use bytes::Bytes;
use futures::{FutureExt, Stream};
use lms_runtime::Outage;
use tonic::Streaming;
use tracing::Span;

use super::{Form, Streamed};
use crate::representation::{Format, Representation};
use crate::transport::{TransportFailure, is_transport_failure};
use crate::xml::writer::XmlWriter;

/// Rows that are already at hand are written together, up to about this many bytes (one
/// message of the core, up to 1,000 rows, is always written whole).
pub(crate) const CHUNK_BYTES: usize = 16 * 1024;

/// The opened stream of a list, written in whichever format the caller negotiated.
pub(super) struct WholeList<L: Streamed> {
    pub(super) stream: Streaming<L::Message>,
    /// The first message, awaited before answering so that an error is still a whole answer.
    pub(super) first: Option<L::Message>,
    /// The longest wait for the next message.
    pub(super) idle_timeout: Duration,
    pub(super) outage: Arc<Outage>,
    pub(super) span: Span,
}

impl<L: Streamed> Representation for WholeList<L> {
    fn into_body(self: Box<Self>, format: Format) -> HttpBody {
        HttpBody::from_stream(body(*self, format))
    }
}

/// One piece of the body in the negotiated format: the opening, the rows at hand, and the
/// closing, which a failure midway never writes.
enum Piece {
    Xml(XmlWriter),
    Json {
        out: String,
        /// Whether a row was written before, in this piece or an earlier one (commas).
        written_any: bool,
    },
}

impl Piece {
    fn opening(format: Format) -> Self {
        match format {
            Format::Xml => {
                let mut xml = XmlWriter::document();
                xml.open("response");
                Self::Xml(xml)
            }
            Format::Json => Self::Json {
                out: "[".to_owned(),
                written_any: false,
            },
        }
    }

    /// The whole body of a list without rows: `<response/>`, as an empty page's list element
    /// is written, or `[]`.
    fn nothing(format: Format) -> Bytes {
        Bytes::from(match format {
            Format::Xml => {
                let mut xml = XmlWriter::document();
                xml.empty("response");
                xml.finish()
            }
            Format::Json => "[]".to_owned(),
        })
    }

    fn next(format: Format) -> Self {
        match format {
            Format::Xml => Self::Xml(XmlWriter::fragment()),
            Format::Json => Self::Json {
                out: String::new(),
                written_any: true,
            },
        }
    }

    fn rows<L: Streamed>(&mut self, message: L::Message) {
        for item in L::rows(message) {
            match self {
                Self::Xml(xml) => L::write_xml(xml, &item, Form::Whole),
                Self::Json { out, written_any } => {
                    if *written_any {
                        out.push(',');
                    }
                    L::write_json(out, &item, Form::Whole);
                    *written_any = true;
                }
            }
        }
    }

    fn close(&mut self) {
        match self {
            Self::Xml(xml) => {
                xml.close("response");
            }
            Self::Json { out, .. } => out.push(']'),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Xml(xml) => xml.len(),
            Self::Json { out, .. } => out.len(),
        }
    }

    fn finish(self) -> Bytes {
        Bytes::from(match self {
            Self::Xml(xml) => xml.finish(),
            Self::Json { out, .. } => out,
        })
    }
}

/// Where the body is.
enum State<M> {
    /// Nothing written yet; the first message (if any) is at hand.
    Start {
        stream: Streaming<M>,
        first: Option<M>,
    },
    /// The opening is out; more messages may come.
    Streaming(Streaming<M>),
    /// Rows were written, then the core failed; the next item aborts the body.
    Failed(tonic::Status),
    Done,
}

/// The body: the opening, every row, the closing.
fn body<L: Streamed>(
    list: WholeList<L>,
    format: Format,
) -> impl Stream<Item = Result<Bytes, tonic::Status>> + Send + 'static {
    let WholeList {
        stream,
        first,
        idle_timeout,
        outage,
        span,
    } = list;
    let start = State::Start { stream, first };
    futures::stream::unfold(start, move |state| {
        let span = span.clone();
        let outage = outage.clone();
        async move {
            match state {
                State::Start { stream, first } => {
                    let Some(message) = first else {
                        return Some((Ok(Piece::nothing(format)), State::Done));
                    };
                    let mut out = Piece::opening(format);
                    out.rows::<L>(message);
                    let next = write_ready::<L>(stream, &mut out);
                    Some((Ok(out.finish()), next))
                }
                State::Streaming(mut stream) => {
                    let mut out = Piece::next(format);
                    match tokio::time::timeout(idle_timeout, stream.message()).await {
                        Ok(Ok(Some(message))) => {
                            out.rows::<L>(message);
                            let next = write_ready::<L>(stream, &mut out);
                            Some((Ok(out.finish()), next))
                        }
                        Ok(Ok(None)) => {
                            out.close();
                            Some((Ok(out.finish()), State::Done))
                        }
                        Ok(Err(status)) => {
                            Some((Err(abort::<L>(status, &outage, &span)), State::Done))
                        }
                        Err(_elapsed) => {
                            let status = tonic::Status::deadline_exceeded(
                                "no rows arrived from the core within the deadline",
                            );
                            Some((Err(abort::<L>(status, &outage, &span)), State::Done))
                        }
                    }
                }
                State::Failed(status) => {
                    Some((Err(abort::<L>(status, &outage, &span)), State::Done))
                }
                State::Done => None,
            }
        }
    })
}

/// Writes the messages that are already available without waiting, up to [`CHUNK_BYTES`], so
/// a fast core does not produce one small chunk per message; then says what comes next.
fn write_ready<L: Streamed>(
    mut stream: Streaming<L::Message>,
    out: &mut Piece,
) -> State<L::Message> {
    while out.len() < CHUNK_BYTES {
        // `message()` only polls the stream, so dropping it when not ready loses nothing.
        match stream.message().now_or_never() {
            None => break,
            Some(Ok(Some(message))) => out.rows::<L>(message),
            Some(Ok(None)) => {
                out.close();
                return State::Done;
            }
            // What is written so far goes out first; the next item aborts the body.
            Some(Err(status)) => return State::Failed(status),
        }
    }
    State::Streaming(stream)
}

/// Logs a failure midway once; the returned error makes hyper abort the body.
fn abort<L: Streamed>(status: tonic::Status, outage: &Outage, span: &Span) -> tonic::Status {
    span.in_scope(|| {
        // The core dying mid-stream is part of an outage, logged once there.
        if is_transport_failure(&status) {
            outage.failed(&TransportFailure(&status));
            return;
        }
        tracing::error!(
            list = L::NAME,
            grpc.code = ?status.code(),
            grpc.message = status.message(),
            "the stream of a whole list failed midway; aborting the response body"
        );
    });
    status
}
