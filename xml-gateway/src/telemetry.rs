//! What the gateway tells about each HTTP request: a SERVER span following the OpenTelemetry
//! HTTP conventions (`http.request.method`, `http.route`, `http.response.status_code` as an
//! integer, error status on 5xx), continuing the caller's W3C trace; one log line (method,
//! path, route, status, latency, request id, client address); and the RED metrics per route.
//! Each call to the core gets a CLIENT span ([`CoreCallLayer`]), whose context travels to
//! the core in `traceparent`. Building and installing the subscriber is
//! [`lms_runtime::Telemetry`]'s job.

use std::{
    collections::HashMap,
    net::SocketAddr,
    pin::Pin,
    sync::{OnceLock, RwLock},
    task::{Context, Poll},
    time::{Duration, Instant},
};

use axum::extract::{ConnectInfo, MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use lms_runtime::propagation::continue_trace;
use metrics::{Counter, Histogram};
use opentelemetry::propagation::Injector;
use opentelemetry::trace::TraceContextExt as _;
use tracing::{Instrument as _, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::request_id::RequestId;
use crate::transport::MAX_TRACESTATE_BYTES;

pub(crate) const HTTP_REQUESTS: &str = "http_server_requests_total";
pub(crate) const HTTP_DURATION: &str = "http_server_request_duration_seconds";

/// The label of a request no route serves (404, 405), so a scan of random paths or methods
/// cannot grow the label set.
const UNMATCHED: &str = "unmatched";

/// The labels of one request: its route template and its SERVER span's name (`GET
/// /group/{group_id}`), or [`UNMATCHED`] and the method alone when no route matched.
#[derive(Debug, Clone, Copy)]
struct Labels {
    route: &'static str,
    span_name: &'static str,
}

impl Labels {
    fn unmatched(method: &'static str) -> Self {
        Self {
            route: UNMATCHED,
            span_name: method,
        }
    }
}

/// The labels of a request the router matched to `template` (axum's [`MatchedPath`], so the
/// router's own registrations are the only list of routes). Made once per template, all
/// methods at once; bounded, since a matched path is always one of the router's templates.
fn labels(method: MethodLabel, template: &str) -> Labels {
    type Known = RwLock<HashMap<&'static str, [Labels; METHODS.len()]>>;
    static KNOWN: OnceLock<Known> = OnceLock::new();
    let known = KNOWN.get_or_init(RwLock::default);
    if let Some(labels) = known
        .read()
        .ok()
        .and_then(|map| map.get(template).map(|labels| labels[method.0]))
    {
        return labels;
    }
    let route: &'static str = Box::leak(template.into());
    let made = METHODS.map(|name| Labels {
        route,
        span_name: Box::leak(format!("{name} {route}").into_boxed_str()),
    });
    if let Ok(mut map) = known.write() {
        // Another request may have made them meanwhile: keep the first, leak no more.
        return map.entry(route).or_insert(made)[method.0];
    }
    made[method.0]
}

/// Longest part of a path written in a log line or span (a URI may be 64 KiB long).
const MAX_LOGGED_PATH: usize = 256;

/// The first `max` bytes of `text`, cut at a character boundary.
fn head(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The method labels, standard methods by name; anything a client invents is `_OTHER` (the
/// HTTP conventions' spelling), so it cannot grow the label set either.
const METHODS: [&str; 10] = [
    "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT", "_OTHER",
];

/// A request's method, as an index into [`METHODS`].
#[derive(Debug, Clone, Copy)]
struct MethodLabel(usize);

impl MethodLabel {
    fn of(method: &http::Method) -> Self {
        Self(match *method {
            http::Method::GET => 0,
            http::Method::POST => 1,
            http::Method::PUT => 2,
            http::Method::DELETE => 3,
            http::Method::HEAD => 4,
            http::Method::OPTIONS => 5,
            http::Method::PATCH => 6,
            http::Method::TRACE => 7,
            http::Method::CONNECT => 8,
            _ => 9,
        })
    }

    fn label(self) -> &'static str {
        METHODS[self.0]
    }
}

/// The labels of `request`, from the route the router matched it to.
fn labels_of(request: &Request) -> (&'static str, Labels) {
    let method = MethodLabel::of(request.method());
    let labels = match request.extensions().get::<MatchedPath>() {
        Some(matched) => labels(method, matched.as_str()),
        None => Labels::unmatched(method.label()),
    };
    (method.label(), labels)
}

/// A matched path with a method it does not serve is answered 405 by the route's fallback:
/// no route served it, so it is labelled like a 404.
fn served(labels: Labels, method: &'static str, status: u16) -> Labels {
    if status == 405 {
        Labels::unmatched(method)
    } else {
        labels
    }
}

/// Middleware around every route: span, log line and metrics of one request. The latency is
/// to the response head (a streamed body goes on after it).
pub(crate) async fn observe(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let (method, labels) = labels_of(&request);
    // Clones share the bytes: no copy of the id or the path per request.
    let request_id = request.extensions().get::<RequestId>().cloned();
    let uri = request.uri().clone();
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| *addr);
    let path = head(uri.path(), MAX_LOGGED_PATH);
    let request_id = request_id.as_ref().map_or("", RequestId::as_str);
    let span = tracing::info_span!(
        "http.server",
        otel.name = labels.span_name,
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        http.request.method = method,
        // Recorded with the status: a 405 turns out to be unmatched only then.
        http.route = tracing::field::Empty,
        url.path = %path,
        http.response.status_code = tracing::field::Empty,
        client.address = tracing::field::Empty,
        request_id,
    );
    if let Some(client) = client {
        span.record("client.address", tracing::field::display(client.ip()));
    }
    continue_trace(&span, request.headers());
    let response = next.run(request).instrument(span.clone()).await;
    let status = response.status().as_u16();
    let latency = started.elapsed();
    let Labels { route, span_name } = served(labels, method, status);
    if span_name != labels.span_name {
        // The span has started by now, and a started span takes its name only this way.
        span.context().span().update_name(span_name);
    }
    span.record("http.route", route);
    span.record("http.response.status_code", i64::from(status));
    if status >= 500 {
        span.record("otel.status_code", "ERROR");
    }
    record(route, method, status, latency);
    let latency_ms = latency.as_secs_f64() * 1000.0;
    let client = client.map(tracing::field::display);
    tracing::info!(
        // Its own fields say it all; the span around it would repeat them on the line.
        parent: None,
        method,
        path = %path,
        route,
        status,
        latency_ms,
        request_id,
        client,
        "request finished"
    );
    response
}

/// Middleware around the probes: a probe (an orchestrator asks every few seconds) is counted,
/// but neither traced (the core's health check it makes is not either) nor logged above
/// DEBUG: it would bury the requests.
pub(crate) async fn observe_probe(request: Request, next: Next) -> Response {
    use tracing::instrument::WithSubscriber as _;
    let started = Instant::now();
    let (method, labels) = labels_of(&request);
    let response = next
        .run(request)
        .with_subscriber(tracing::subscriber::NoSubscriber::default())
        .await;
    let status = response.status().as_u16();
    let latency = started.elapsed();
    let route = served(labels, method, status).route;
    record(route, method, status, latency);
    tracing::debug!(
        route,
        status,
        latency_ms = latency.as_secs_f64() * 1000.0,
        "probe answered"
    );
    response
}

/// Counts the request and its duration, through handles kept per label set.
fn record(route: &'static str, method: &'static str, status: u16, latency: Duration) {
    if !lms_runtime::metrics::installed() {
        return;
    }
    type Handles = RwLock<HashMap<(&'static str, &'static str, u16), (Counter, Histogram)>>;
    static HANDLES: OnceLock<Handles> = OnceLock::new();
    let handles = HANDLES.get_or_init(RwLock::default);
    let key = (route, method, status);
    let cached = handles.read().ok().and_then(|map| map.get(&key).cloned());
    let (count, duration) = cached.unwrap_or_else(|| {
        let status = status.to_string();
        let made = (
            metrics::counter!(HTTP_REQUESTS, "route" => route, "method" => method, "status" => status),
            metrics::histogram!(HTTP_DURATION, "route" => route, "method" => method),
        );
        if let Ok(mut map) = handles.write() {
            map.insert(key, made.clone());
        }
        made
    });
    count.increment(1);
    duration.record(latency.as_secs_f64());
}

/// Describes the gateway's metrics (`# HELP` lines).
pub(crate) fn describe_metrics() {
    metrics::describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by route, method and status"
    );
    metrics::describe_histogram!(
        HTTP_DURATION,
        metrics::Unit::Seconds,
        "HTTP request duration to the response head, by route and method"
    );
}

/// A CLIENT span around each call to the core (OpenTelemetry RPC conventions), whose trace
/// context replaces the one the request carried, so the core's SERVER span is its child.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CoreCallLayer;

impl<S> tower::Layer<S> for CoreCallLayer {
    type Service = CoreCall<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CoreCall { inner }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct CoreCall<S> {
    inner: S,
}

impl<S, B, R> tower::Service<http::Request<B>> for CoreCall<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: http_body::Body + Unpin + Send + 'static,
{
    type Response = http::Response<CallBody<R>>;
    type Error = S::Error;
    type Future =
        Pin<Box<dyn std::future::Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let path = request.uri().path();
        let (service, method) = path
            .trim_start_matches('/')
            .split_once('/')
            .unwrap_or(("", ""));
        let span = tracing::info_span!(
            "grpc.client",
            otel.name = path.trim_start_matches('/'),
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            rpc.system = "grpc",
            rpc.service = service,
            rpc.method = method,
            rpc.grpc.status_code = tracing::field::Empty,
        );
        let context = span.context();
        let headers = request.headers_mut();
        opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.inject_context(&context, &mut HeaderInjector(headers));
        });
        // A caller's oversized `tracestate` stays behind.
        if headers
            .get(lms_proto::metadata::TRACESTATE)
            .is_some_and(|value| value.len() > MAX_TRACESTATE_BYTES)
        {
            headers.remove(lms_proto::metadata::TRACESTATE);
        }
        let future = self.inner.call(request);
        Box::pin(async move {
            match future.instrument(span.clone()).await {
                Ok(response) => {
                    // A refusal carries its status in the headers (trailers-only); otherwise
                    // the trailers do, and the span lasts until they have been read.
                    let in_head = response
                        .headers()
                        .get("grpc-status")
                        .and_then(|value| value.to_str().ok()?.parse::<i64>().ok());
                    let span = match in_head {
                        Some(code) => {
                            record_code(&span, code);
                            None
                        }
                        None => Some(span),
                    };
                    Ok(response.map(|inner| CallBody { inner, span }))
                }
                Err(error) => {
                    record_code(&span, tonic::Code::Unavailable as i64);
                    Err(error)
                }
            }
        })
    }
}

/// Statuses that are the core's failure mark the CLIENT span as an error (the gateway answers
/// 5xx for them); a caller's mistake does not.
fn record_code(span: &Span, code: i64) {
    span.record("rpc.grpc.status_code", code);
    let code = tonic::Code::from(i32::try_from(code).unwrap_or(2));
    if matches!(
        code,
        tonic::Code::Unknown
            | tonic::Code::DeadlineExceeded
            | tonic::Code::Unimplemented
            | tonic::Code::Internal
            | tonic::Code::Unavailable
            | tonic::Code::DataLoss
    ) {
        span.record("otel.status_code", "ERROR");
    }
}

/// The core's answer, read inside the CLIENT span, which ends with the trailers.
pub(crate) struct CallBody<B> {
    inner: B,
    span: Option<Span>,
}

impl<B: http_body::Body + Unpin> http_body::Body for CallBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let polled = match &this.span {
            Some(span) => span.in_scope(|| Pin::new(&mut this.inner).poll_frame(cx)),
            None => Pin::new(&mut this.inner).poll_frame(cx),
        };
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(trailers) = frame.trailers_ref()
                    && let Some(span) = this.span.take()
                {
                    let code = trailers
                        .get("grpc-status")
                        .and_then(|value| value.to_str().ok()?.parse::<i64>().ok())
                        .unwrap_or(tonic::Code::Unknown as i64);
                    record_code(&span, code);
                }
            }
            Poll::Ready(Some(Err(_))) => {
                if let Some(span) = this.span.take() {
                    record_code(&span, tonic::Code::Unavailable as i64);
                }
            }
            Poll::Ready(None) => this.span = None,
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Lets an OpenTelemetry propagator write HTTP headers.
struct HeaderInjector<'a>(&'a mut http::HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(key.as_bytes()),
            http::HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::{Arc, Mutex};

    use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
    use tower::{Layer as _, Service as _};
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    /// The headers of the one call made through a [`CoreCall`] inside a SERVER span that
    /// continues a caller's trace carrying `tracestate`, and that span's context.
    async fn call_headers(
        tracestate: &str,
    ) -> (http::HeaderMap, opentelemetry::trace::SpanContext) {
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        let _default = tracing::subscriber::set_default(subscriber);
        let seen = Arc::new(Mutex::new(http::HeaderMap::new()));
        let sink = seen.clone();
        let core = tower::service_fn(move |request: http::Request<()>| {
            *sink.lock().unwrap() = request.headers().clone();
            async {
                Ok::<_, Infallible>(http::Response::new(
                    http_body_util::Empty::<bytes::Bytes>::new(),
                ))
            }
        });
        let mut call = CoreCallLayer.layer(core);
        let mut incoming = http::HeaderMap::new();
        incoming.insert(
            "traceparent",
            http::HeaderValue::from_static(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
        );
        incoming.insert(
            "tracestate",
            http::HeaderValue::from_str(tracestate).unwrap(),
        );
        let server = tracing::info_span!("http.server");
        continue_trace(&server, &incoming);
        let server_context = server.context().span().span_context().clone();
        let outgoing = http::Request::builder()
            .uri("/lms.v1.AdminService/GetGroup")
            .body(())
            .unwrap();
        // The handler calls from inside its request's span.
        server.in_scope(|| call.call(outgoing)).await.unwrap();
        let headers = seen.lock().unwrap().clone();
        (headers, server_context)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn each_call_carries_its_client_spans_context_and_a_bounded_tracestate() {
        let (headers, server) = call_headers("vendor=short").await;
        let traceparent = headers
            .get("traceparent")
            .expect("a traceparent")
            .to_str()
            .unwrap();
        let [version, trace_id, span_id, _flags] = traceparent.split('-').collect::<Vec<_>>()[..]
        else {
            panic!("{traceparent}")
        };
        assert_eq!(version, "00");
        assert_eq!(
            trace_id,
            server.trace_id().to_string(),
            "the caller's trace goes on"
        );
        assert_ne!(
            span_id,
            server.span_id().to_string(),
            "the parent is the CLIENT span"
        );
        assert_eq!(headers.get("tracestate").unwrap(), "vendor=short");

        // Six vendors' entries, each within W3C's bounds, together past the limit.
        let long: Vec<String> = (0..6)
            .map(|n| format!("v{n}={}", "x".repeat(120)))
            .collect();
        let long = long.join(",");
        assert!(long.len() > MAX_TRACESTATE_BYTES);
        let (headers, _) = call_headers(&long).await;
        assert!(headers.contains_key("traceparent"));
        assert!(
            !headers.contains_key("tracestate"),
            "an oversized tracestate stays behind: {headers:?}"
        );
    }
}
