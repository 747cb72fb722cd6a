//! A streamed body: the core's stream written on as the rows arrive, so that neither the
//! gateway nor the core holds the answer whole. Two layouts: a whole list, rows directly in
//! the document (`<response><department>…</department>…</response>`, a top-level JSON array),
//! and a page read in parts, rows inside the list's element and the next page's token after
//! them (`<response><results>…</results><nextPageToken>…</nextPageToken></response>`,
//! `{"results":[…],"nextPageToken":"…"}`), exactly as a page written whole. A failure midway
//! aborts the body (the caller sees a truncated transfer, not a well-formed but incomplete
//! answer).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body as HttpBody;
use bytes::Bytes;
use futures::{FutureExt, Stream};
use lms_runtime::Outage;
use tonic::Streaming;
use tracing::Span;

use super::{Form, Listing, PagedInParts, Streamed};
use crate::representation::{Format, Representation, push_json};
use crate::transport::{TransportFailure, is_transport_failure};
use crate::xml::writer::XmlWriter;

/// Rows that are already at hand are written together, up to about this many bytes (one
/// message of the core, up to 1,000 rows, is always written whole).
pub(crate) const CHUNK_BYTES: usize = 16 * 1024;

/// What a streamed body is made of: the messages of one core stream, and where their rows go.
pub(super) trait Parts: Send + 'static {
    type List: Listing;
    type Message: Send + 'static;
    /// A page's list element, or `None` for a whole list.
    const PAGE_ELEMENT: Option<&'static str>;
    /// The rows a message carries, and the next page's token it carries (empty but on a
    /// page's last part).
    fn split(message: Self::Message) -> (Vec<<Self::List as Listing>::Item>, String);
}

/// The parts of a whole list.
pub(super) struct WholeOf<L>(std::marker::PhantomData<L>);

impl<L: Streamed> Parts for WholeOf<L> {
    type List = L;
    type Message = L::Message;
    const PAGE_ELEMENT: Option<&'static str> = None;
    fn split(message: L::Message) -> (Vec<L::Item>, String) {
        (L::rows(message), String::new())
    }
}

/// The parts of one page.
pub(super) struct PageOf<L>(std::marker::PhantomData<L>);

impl<L: PagedInParts> Parts for PageOf<L> {
    type List = L;
    type Message = L::PartMessage;
    const PAGE_ELEMENT: Option<&'static str> = Some(L::PAGE_ELEMENT);
    fn split(message: L::PartMessage) -> (Vec<L::Item>, String) {
        L::part_of(message)
    }
}

/// The opened stream of a list or a page, written in whichever format the caller negotiated.
pub(super) struct StreamedBody<P: Parts> {
    pub(super) stream: Streaming<P::Message>,
    /// The first message, awaited before answering so that an error is still a whole answer.
    pub(super) first: Option<P::Message>,
    /// The longest wait for the next message.
    pub(super) idle_timeout: Duration,
    pub(super) outage: Arc<Outage>,
    pub(super) span: Span,
}

impl<P: Parts> Representation for StreamedBody<P> {
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
    fn opening(format: Format, page_element: Option<&str>) -> Self {
        match format {
            Format::Xml => {
                let mut xml = XmlWriter::document();
                xml.open("response");
                if let Some(element) = page_element {
                    xml.open(element);
                }
                Self::Xml(xml)
            }
            Format::Json => {
                let mut out = String::new();
                if let Some(element) = page_element {
                    out.push('{');
                    push_json(&mut out, element);
                    out.push(':');
                }
                out.push('[');
                Self::Json {
                    out,
                    written_any: false,
                }
            }
        }
    }

    /// The whole body of an answer without rows: `<response/>` or `[]` for a whole list (as
    /// an empty page's list element is written), `<response><results/></response>` or
    /// `{"results":[]}` for a page.
    fn nothing(format: Format, page_element: Option<&str>) -> Bytes {
        Bytes::from(match (format, page_element) {
            (Format::Xml, element) => {
                let mut xml = XmlWriter::document();
                match element {
                    None => {
                        xml.empty("response");
                    }
                    Some(element) => {
                        xml.open("response").empty(element).close("response");
                    }
                }
                xml.finish()
            }
            (Format::Json, None) => "[]".to_owned(),
            (Format::Json, Some(element)) => {
                let mut out = String::from("{");
                push_json(&mut out, element);
                out.push_str(":[]}");
                out
            }
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

    /// Writes the message's rows; keeps the token it carries in `token`.
    fn rows<P: Parts>(&mut self, message: P::Message, token: &mut String) {
        let items = take::<P>(message, token);
        self.write::<P>(items);
    }

    fn write<P: Parts>(&mut self, items: Vec<<P::List as Listing>::Item>) {
        let form = if P::PAGE_ELEMENT.is_some() {
            Form::Page
        } else {
            Form::Whole
        };
        for item in items {
            match self {
                Self::Xml(xml) => P::List::write_xml(xml, &item, form),
                Self::Json { out, written_any } => {
                    if *written_any {
                        out.push(',');
                    }
                    P::List::write_json(out, &item, form);
                    *written_any = true;
                }
            }
        }
    }

    /// The end: the list's element and the page's token (when one came), then the document's.
    fn close(&mut self, page_element: Option<&str>, token: &str) {
        match self {
            Self::Xml(xml) => {
                if let Some(element) = page_element {
                    xml.close(element);
                    if !token.is_empty() {
                        xml.text_element("nextPageToken", token);
                    }
                }
                xml.close("response");
            }
            Self::Json { out, .. } => {
                out.push(']');
                if page_element.is_some() {
                    if !token.is_empty() {
                        out.push_str(",\"nextPageToken\":");
                        push_json(out, token);
                    }
                    out.push('}');
                }
            }
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

/// The rows of `message`; the token it carries, if any, replaces `token`.
fn take<P: Parts>(message: P::Message, token: &mut String) -> Vec<<P::List as Listing>::Item> {
    let (items, carried) = P::split(message);
    if !carried.is_empty() {
        *token = carried;
    }
    items
}

/// Where the body is.
enum State<M> {
    /// Nothing written yet; the first message (if any) is at hand.
    Start {
        stream: Streaming<M>,
        first: Option<M>,
    },
    /// The opening is out; more messages may come; the page's token, once one came.
    Streaming(Streaming<M>, String),
    /// Rows were written, then the core failed; the next item aborts the body.
    Failed(tonic::Status),
    Done,
}

/// The body: the opening, every row, the closing.
fn body<P: Parts>(
    list: StreamedBody<P>,
    format: Format,
) -> impl Stream<Item = Result<Bytes, tonic::Status>> + Send + 'static {
    let StreamedBody {
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
                    let mut token = String::new();
                    let items = first.map(|message| take::<P>(message, &mut token));
                    // A page's first part is empty only when the page is (it is then its last).
                    let Some(items) =
                        items.filter(|items| !(items.is_empty() && P::PAGE_ELEMENT.is_some()))
                    else {
                        return Some((Ok(Piece::nothing(format, P::PAGE_ELEMENT)), State::Done));
                    };
                    let mut out = Piece::opening(format, P::PAGE_ELEMENT);
                    out.write::<P>(items);
                    let next = write_ready::<P>(stream, &mut out, token);
                    Some((Ok(out.finish()), next))
                }
                State::Streaming(mut stream, mut token) => {
                    let mut out = Piece::next(format);
                    match tokio::time::timeout(idle_timeout, stream.message()).await {
                        Ok(Ok(Some(message))) => {
                            out.rows::<P>(message, &mut token);
                            let next = write_ready::<P>(stream, &mut out, token);
                            Some((Ok(out.finish()), next))
                        }
                        Ok(Ok(None)) => {
                            out.close(P::PAGE_ELEMENT, &token);
                            Some((Ok(out.finish()), State::Done))
                        }
                        Ok(Err(status)) => {
                            Some((Err(abort::<P>(status, &outage, &span)), State::Done))
                        }
                        Err(_elapsed) => {
                            let status = tonic::Status::deadline_exceeded(
                                "no rows arrived from the core within the deadline",
                            );
                            Some((Err(abort::<P>(status, &outage, &span)), State::Done))
                        }
                    }
                }
                State::Failed(status) => {
                    Some((Err(abort::<P>(status, &outage, &span)), State::Done))
                }
                State::Done => None,
            }
        }
    })
}

/// Writes the messages that are already available without waiting, up to [`CHUNK_BYTES`], so
/// a fast core does not produce one small chunk per message; then says what comes next.
fn write_ready<P: Parts>(
    mut stream: Streaming<P::Message>,
    out: &mut Piece,
    mut token: String,
) -> State<P::Message> {
    while out.len() < CHUNK_BYTES {
        // `message()` only polls the stream, so dropping it when not ready loses nothing.
        match stream.message().now_or_never() {
            None => break,
            Some(Ok(Some(message))) => out.rows::<P>(message, &mut token),
            Some(Ok(None)) => {
                out.close(P::PAGE_ELEMENT, &token);
                return State::Done;
            }
            // What is written so far goes out first; the next item aborts the body.
            Some(Err(status)) => return State::Failed(status),
        }
    }
    State::Streaming(stream, token)
}

/// Logs a failure midway once; the returned error makes hyper abort the body.
fn abort<P: Parts>(status: tonic::Status, outage: &Outage, span: &Span) -> tonic::Status {
    span.in_scope(|| {
        // The core dying mid-stream is part of an outage, logged once there.
        if is_transport_failure(&status) {
            outage.failed(&TransportFailure(&status));
            return;
        }
        tracing::error!(
            list = P::List::NAME,
            grpc.code = ?status.code(),
            grpc.message = status.message(),
            "the stream of a list failed midway; aborting the response body"
        );
    });
    status
}
