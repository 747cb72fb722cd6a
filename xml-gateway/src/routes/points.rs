//! `GET /gamification/points?userIds=...`: the core's stream of points, streamed on as XML
//! (`<response><userPointsInfo>..`) or as a top-level JSON array (`[{"userId": .., "points": ..}]`).
//! `POST /gamification/points` takes the same filter as a body
//! (`<request><userIds><id>..</id>..</userIds></request>`), for lists longer than a URI holds
//! (up to the core's 10,000 ids; a URI ends at 65,534 bytes, about 1,700 ids).
//!
//! The first result (or error) of the RPC is awaited before answering, so an error status still
//! becomes a proper error response. After that the body is written as results arrive and never
//! held whole in memory; a failure midway aborts the body (the caller sees a truncated
//! transfer, not a well-formed but incomplete list).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body as HttpBody;
use axum::extract::{RawQuery, State};
use bytes::Bytes;
use futures::{FutureExt, Stream};
use lms_proto::v1::{GetPointsRequest, UserPoints};
use lms_runtime::Outage;
use tonic::Streaming;
use tracing::Span;

use crate::body::Body;
use crate::core_client::{Caller, CoreClient, TransportFailure, is_transport_failure};
use crate::error::GatewayError;
use crate::json::{FromJson, JsonError, JsonObject};
use crate::representation::{Answer, Format, Representation};
use crate::routes::{NoQuery, unknown_query_parameter};
use crate::xml::writer::XmlWriter;
use crate::xml::{Element, FromXml, XmlError};

/// Results that are already at hand are written together, up to about this many bytes.
const CHUNK_BYTES: usize = 16 * 1024;

/// The `userIds` filter, from any of `userIds=a,b`, `userIds=a&userIds=b`,
/// `userIds[]=a&userIds[]=b` or `userIds[0]=a&userIds[1]=b` (brackets may be percent-encoded).
/// Parts are trimmed; empty parts are dropped, so an empty filter means "every user the caller
/// may see". Any other parameter is refused, naming it: ignoring a misspelt filter would answer
/// every user instead of the few asked for.
pub(crate) fn parse_user_ids(query: Option<&str>) -> Result<Vec<String>, GatewayError> {
    let Some(query) = query else {
        return Ok(Vec::new());
    };
    let mut ids = Vec::new();
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if !is_user_ids_name(&name) {
            return Err(unknown_query_parameter(&name));
        }
        ids.extend(
            value
                .split(',')
                .map(str::trim)
                .filter(|part| !part.is_empty())
                .map(str::to_owned),
        );
    }
    Ok(ids)
}

/// `userIds`, `userIds[]` or `userIds[N]` (PHP's `http_build_query`, Guzzle, qs).
fn is_user_ids_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("userIds") else {
        return false;
    };
    rest.is_empty()
        || rest
            .strip_prefix('[')
            .and_then(|inner| inner.strip_suffix(']'))
            .is_some_and(|index| index.bytes().all(|byte| byte.is_ascii_digit()))
}

/// The body of `POST /gamification/points`: `userIds` with one `id` per user, or no `userIds`
/// (every user the caller may see). Empty `id` elements are dropped, as empty query parts are.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PointsFilter(pub(crate) Vec<String>);

impl FromXml for PointsFilter {
    const ROOT: &'static str = "request";

    fn from_root(root: &Element) -> Result<Self, XmlError> {
        let Some(user_ids) = root.single_child("userIds")? else {
            return Ok(Self(Vec::new()));
        };
        let mut ids = Vec::new();
        for id in user_ids.children_named("id") {
            let id = id.text_value()?;
            if !id.is_empty() {
                ids.push(id.to_owned());
            }
        }
        Ok(Self(ids))
    }
}

/// `{"userIds": ["..", ..]}`, or no `userIds` (or `null`): every user the caller may see.
impl FromJson for PointsFilter {
    fn from_object(object: &JsonObject<'_>) -> Result<Self, JsonError> {
        let ids = object.optional_text_list("userIds")?.unwrap_or_default();
        Ok(Self(ids.into_iter().filter(|id| !id.is_empty()).collect()))
    }
}

#[tracing::instrument(skip_all, fields(filter = tracing::field::Empty))]
pub(crate) async fn get_points(
    State(core): State<CoreClient>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer, GatewayError> {
    let user_ids = parse_user_ids(query.as_deref())?;
    stream_points(core, caller, user_ids).await
}

#[tracing::instrument(skip_all, fields(filter = tracing::field::Empty))]
pub(crate) async fn post_points(
    State(core): State<CoreClient>,
    caller: Caller,
    _: NoQuery,
    Body(PointsFilter(user_ids)): Body<PointsFilter>,
) -> Result<Answer, GatewayError> {
    stream_points(core, caller, user_ids).await
}

async fn stream_points(
    core: CoreClient,
    caller: Caller,
    user_ids: Vec<String>,
) -> Result<Answer, GatewayError> {
    Span::current().record("filter", user_ids.len());
    // No grpc-timeout: a long list may take longer than one deadline to stream. The gateway
    // bounds the wait for the first result and for each next one instead.
    let message = GetPointsRequest { user_ids };
    let opened = tokio::time::timeout(
        core.timeout(),
        core.on_a_replica(|mut admin| {
            let request = caller.request(message.clone(), None);
            async move {
                let mut stream = admin.get_points(request).await?.into_inner();
                let first = stream.message().await?;
                Ok::<_, tonic::Status>((stream, first))
            }
        }),
    )
    .await;
    let (stream, first) = match opened {
        Ok(result) => core.settle(result)?,
        Err(_elapsed) => return Err(GatewayError::CoreTimeout),
    };
    Ok(Answer::ok(PointsStream {
        stream,
        first,
        idle_timeout: core.timeout(),
        outage: core.outage(),
        span: Span::current(),
    }))
}

/// The opened stream of points, written in whichever format the caller negotiated.
struct PointsStream {
    stream: Streaming<UserPoints>,
    first: Option<UserPoints>,
    idle_timeout: Duration,
    outage: Arc<Outage>,
    span: Span,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(body: &str) -> Result<PointsFilter, XmlError> {
        let root = crate::xml::reader::parse_document(body.as_bytes(), PointsFilter::ROOT)?;
        PointsFilter::from_root(&root)
    }

    #[test]
    fn a_body_filter_lists_its_ids_in_order_and_drops_empty_ones() {
        assert_eq!(
            filter("<request><userIds><id> b </id><id/><id>a</id></userIds></request>").unwrap(),
            PointsFilter(vec!["b".to_owned(), "a".to_owned()])
        );
        assert_eq!(filter("<request/>").unwrap(), PointsFilter(Vec::new()));
        assert!(filter("<request><userIds/><userIds/></request>").is_err());
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::super::parse_user_ids;
        use crate::fuzz::config;

        fn encoded(text: &str) -> String {
            form_urlencoded::byte_serialize(text.as_bytes()).collect()
        }

        proptest! {
            #![proptest_config(config(2_000))]

            #[test]
            fn fuzz_any_query_gives_trimmed_non_empty_ids(query in "\\PC{0,200}") {
                for id in parse_user_ids(Some(&query)).unwrap_or_default() {
                    prop_assert!(!id.is_empty());
                    prop_assert_eq!(id.trim(), id.as_str());
                    prop_assert!(!id.contains(','));
                }
            }

            #[test]
            fn fuzz_every_spelling_of_a_list_gives_the_same_ids(
                ids in proptest::collection::vec("[^,\\s]{1,12}", 0..20)
            ) {
                let comma = format!(
                    "userIds={}",
                    ids.iter().map(|id| encoded(id)).collect::<Vec<_>>().join(",")
                );
                let spell = |key: &str| {
                    ids.iter()
                        .map(|id| format!("{key}={}", encoded(id)))
                        .collect::<Vec<_>>()
                        .join("&")
                };
                let expected = if ids.is_empty() { Vec::new() } else { ids.clone() };
                let indexed = ids
                    .iter()
                    .enumerate()
                    .map(|(index, id)| format!("userIds%5B{index}%5D={}", encoded(id)))
                    .collect::<Vec<_>>()
                    .join("&");
                for query in [
                    comma,
                    spell("userIds"),
                    spell("userIds[]"),
                    spell("userIds%5B%5D"),
                    indexed,
                ] {
                    prop_assert_eq!(
                        parse_user_ids(Some(&query)).unwrap(),
                        expected.clone(),
                        "{}",
                        query
                    );
                }
            }
        }
    }

    fn ids(query: &str) -> Vec<String> {
        parse_user_ids(Some(query)).unwrap()
    }

    #[test]
    fn no_query_or_no_user_ids_means_no_filter() {
        assert!(parse_user_ids(None).unwrap().is_empty());
        assert!(ids("").is_empty());
        assert!(ids("userIds=").is_empty());
        assert!(ids("userIds=,%20,").is_empty());
    }

    #[test]
    fn comma_separated_ids_are_split_and_trimmed() {
        assert_eq!(ids("userIds=a,b"), ["a", "b"]);
        assert_eq!(ids("userIds=%20a%20,,b+,"), ["a", "b"]);
        assert_eq!(ids("userIds=a%2Cb"), ["a", "b"]);
    }

    #[test]
    fn repeated_parameters_are_joined() {
        assert_eq!(ids("userIds=a&userIds=b"), ["a", "b"]);
        assert_eq!(ids("userIds=a,b&userIds=c"), ["a", "b", "c"]);
    }

    #[test]
    fn bracketed_parameters_plain_or_percent_encoded_are_accepted() {
        assert_eq!(ids("userIds[]=a&userIds[]=b"), ["a", "b"]);
        assert_eq!(ids("userIds%5B%5D=a&userIds%5b%5d=b"), ["a", "b"]);
        assert_eq!(ids("userIds[]=a&userIds=b,c"), ["a", "b", "c"]);
    }

    #[test]
    fn indexed_parameters_are_accepted() {
        assert_eq!(ids("userIds[0]=a&userIds[1]=b"), ["a", "b"]);
        assert_eq!(ids("userIds%5B0%5D=a&userIds%5B12%5D=b,c"), ["a", "b", "c"]);
    }

    #[test]
    fn any_other_parameter_is_refused_naming_it() {
        for (query, name) in [
            ("userids=a", "userids"),
            ("UserIds=b", "UserIds"),
            ("userIds=a&userId=d", "userId"),
            ("userIds[x]=a", "userIds[x]"),
            ("userIds[0][1]=a", "userIds[0][1]"),
            ("other=1", "other"),
        ] {
            let error = parse_user_ids(Some(query)).unwrap_err();
            assert!(
                matches!(&error, GatewayError::BadRequest(message) if message.contains(&format!("\"{name}\""))),
                "{query}: {error:?}"
            );
        }
    }

    #[test]
    fn upper_case_uuids_are_passed_on_as_given() {
        assert_eq!(
            ids("userIds=0190F6C2-AAAA-7BBB-8CCC-123456789ABC"),
            ["0190F6C2-AAAA-7BBB-8CCC-123456789ABC"]
        );
    }
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
