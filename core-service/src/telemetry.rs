//! What the core tells about each gRPC call: a SERVER span following the OpenTelemetry RPC
//! conventions (`rpc.system`, `rpc.service`, `rpc.method`, `rpc.grpc.status_code`), continuing
//! the caller's W3C trace; one log line when the call ends (method, status, latency, peer,
//! request id), as the gateway logs an HTTP request; and the RPC metrics (count by status,
//! duration). Building and installing the subscriber is [`lms_runtime::Telemetry`]'s job.
//!
//! A call ends when its last frame is sent: for the points stream, after the last page, so
//! the span covers every page and the database spans of the pages are its children.

use std::{
    collections::HashMap,
    pin::Pin,
    sync::{OnceLock, RwLock},
    task::{Context, Poll},
    time::{Duration, Instant},
};

use http_body::{Body, Frame, SizeHint};
use tonic::{Code, transport::server::TcpConnectInfo};
use tracing::Span;

use crate::metrics as core_metrics;

/// The services whose methods are named in metrics; calls to anything else count as `other`.
const KNOWN_SERVICES: [&str; 5] = [
    "lms.v1.AdminService",
    "lms.v1.DirectoryService",
    HEALTH_SERVICE,
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

const HEALTH_SERVICE: &str = "grpc.health.v1.Health";

/// Most distinct methods named in metrics, whatever callers send.
const MAX_METHODS: usize = 256;

/// `rpc.service` and `rpc.method` of a call path, as static strings (metric labels and span
/// fields without an allocation per call). Paths outside [`KNOWN_SERVICES`] are `other`.
fn method_of(path: &str) -> (&'static str, &'static str) {
    const OTHER: (&str, &str) = ("other", "other");
    type Methods = RwLock<HashMap<Box<str>, (&'static str, &'static str)>>;
    static METHODS: OnceLock<Methods> = OnceLock::new();
    let methods = METHODS.get_or_init(RwLock::default);
    if let Some(found) = methods.read().ok().and_then(|map| map.get(path).copied()) {
        return found;
    }
    let Some((service, method)) = path.trim_start_matches('/').split_once('/') else {
        return OTHER;
    };
    let Some(service) = KNOWN_SERVICES.iter().find(|known| **known == service) else {
        return OTHER;
    };
    if method.is_empty() || method.len() > 64 || !method.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return OTHER;
    }
    let Ok(mut map) = methods.write() else {
        return OTHER;
    };
    if map.len() >= MAX_METHODS {
        return OTHER;
    }
    // Bounded above: at most MAX_METHODS names are ever kept.
    let method: &'static str = Box::leak(method.to_owned().into_boxed_str());
    map.insert(path.into(), (service, method));
    (service, method)
}

/// The tower layer around every gRPC call of the core.
#[derive(Debug, Clone, Copy, Default)]
pub struct ObserveLayer;

impl<S> tower::Layer<S> for ObserveLayer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Observe { inner }
    }
}

#[derive(Debug, Clone)]
pub struct Observe<S> {
    inner: S,
}

/// One call being served.
struct Call {
    span: Span,
    /// A health check: logged at DEBUG only.
    quiet: bool,
    request_id: Option<http::HeaderValue>,
    service: &'static str,
    method: &'static str,
    started: Instant,
    peer: Option<std::net::SocketAddr>,
}

impl<S, B> tower::Service<http::Request<tonic::body::Body>> for Observe<S>
where
    S: tower::Service<http::Request<tonic::body::Body>, Response = http::Response<B>>,
    S::Future: Send + 'static,
    B: Body + Send + Unpin + 'static,
{
    type Response = http::Response<ObservedBody<B>>;
    type Error = S::Error;
    type Future =
        Pin<Box<dyn std::future::Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let (service, method) = method_of(request.uri().path());
        let peer = request
            .extensions()
            .get::<TcpConnectInfo>()
            .and_then(TcpConnectInfo::remote_addr);
        // Health checks come every few seconds from balancers and orchestrators: counted,
        // but neither traced nor logged above DEBUG, so they do not bury the requests.
        let quiet = service == HEALTH_SERVICE;
        let span = if quiet {
            Span::none()
        } else {
            grpc_span(&request, service, method, peer)
        };
        let request_id = request
            .headers()
            .get(lms_proto::metadata::REQUEST_ID)
            .cloned();
        let future = {
            let _entered = span.enter();
            self.inner.call(request)
        };
        let call = Call {
            span,
            quiet,
            request_id,
            service,
            method,
            started: Instant::now(),
            peer,
        };
        Box::pin(async move {
            let response = {
                let span = call.span.clone();
                tracing::Instrument::instrument(future, span).await?
            };
            // A call refused at once carries its status in the headers (trailers-only).
            let status = response
                .headers()
                .get("grpc-status")
                .and_then(|value| value.to_str().ok()?.parse::<i32>().ok());
            let mut call = Some(call);
            if let Some(code) = status
                && let Some(call) = call.take()
            {
                call.finish(Code::from(code));
            }
            Ok(response.map(|inner| ObservedBody { inner, call }))
        })
    }
}

/// The span of one gRPC call, child of the caller's trace when it sent `traceparent`.
fn grpc_span<T>(
    request: &http::Request<T>,
    service: &'static str,
    method: &'static str,
    peer: Option<std::net::SocketAddr>,
) -> Span {
    let span = tracing::info_span!(
        "grpc.server",
        otel.name = request.uri().path().trim_start_matches('/'),
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        rpc.system = "grpc",
        rpc.service = service,
        rpc.method = method,
        rpc.grpc.status_code = tracing::field::Empty,
        client.address = tracing::field::Empty,
        request_id = tracing::field::Empty,
    );
    if let Some(peer) = peer {
        span.record("client.address", tracing::field::display(peer.ip()));
    }
    if let Some(id) = request
        .headers()
        .get(lms_proto::metadata::REQUEST_ID)
        .and_then(|v| v.to_str().ok())
    {
        span.record("request_id", id);
    }
    lms_runtime::propagation::continue_trace(&span, request.headers());
    span
}

/// Statuses that are the server's failure (OpenTelemetry's RPC conventions for SERVER spans):
/// the span is marked as an error. A caller's mistake (NOT_FOUND, INVALID_ARGUMENT, …) is not.
fn is_server_error(code: Code) -> bool {
    matches!(
        code,
        Code::Unknown
            | Code::DeadlineExceeded
            | Code::Unimplemented
            | Code::Internal
            | Code::Unavailable
            | Code::DataLoss
    )
}

impl Call {
    fn finish(self, code: Code) {
        let latency = self.started.elapsed();
        let code_number = code as i32;
        self.span
            .record("rpc.grpc.status_code", i64::from(code_number));
        if is_server_error(code) {
            self.span.record("otel.status_code", "ERROR");
        }
        core_metrics::rpc_finished(self.service, self.method, code_name(code), latency);
        log_call(&self, code, latency);
    }
}

fn log_call(call: &Call, code: Code, latency: Duration) {
    let latency_ms = latency.as_secs_f64() * 1000.0;
    let peer = call.peer.map(tracing::field::display);
    if call.quiet {
        tracing::debug!(
            rpc.method = call.method,
            status = code_name(code),
            latency_ms,
            peer,
            "health check answered"
        );
        return;
    }
    let request_id = call.request_id.as_ref().and_then(|id| id.to_str().ok());
    tracing::info!(
        // Its own fields say it all; the span around it would repeat them on the line.
        parent: None,
        rpc.service = call.service,
        rpc.method = call.method,
        status = code_name(code),
        grpc_status = code as i32,
        latency_ms,
        peer,
        request_id,
        "call finished"
    );
}

/// The upper-case name gRPC gives a status code (`NOT_FOUND`).
/// `work` with no spans: a background poll (the webhook dispatcher's, the scheduler's) makes a
/// trace only when it finds work, so that a trace every poll does not bury the requests'.
pub(crate) async fn untraced<T>(work: impl std::future::Future<Output = T>) -> T {
    use tracing::instrument::WithSubscriber as _;
    work.with_subscriber(tracing::subscriber::NoSubscriber::default())
        .await
}

pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// The answer's body, polled inside the call's span; the call ends with the trailers, or as
/// CANCELLED when the caller goes away first.
pub struct ObservedBody<B> {
    inner: B,
    call: Option<Call>,
}

impl<B: Body + Unpin> Body for ObservedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let polled = match &this.call {
            Some(call) => {
                let _entered = call.span.enter();
                Pin::new(&mut this.inner).poll_frame(cx)
            }
            None => Pin::new(&mut this.inner).poll_frame(cx),
        };
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(trailers) = frame.trailers_ref() {
                    let code = trailers
                        .get("grpc-status")
                        .and_then(|value| value.to_str().ok()?.parse::<i32>().ok())
                        .map_or(Code::Unknown, Code::from);
                    if let Some(call) = this.call.take() {
                        call.finish(code);
                    }
                }
            }
            Poll::Ready(Some(Err(_))) => {
                if let Some(call) = this.call.take() {
                    call.finish(Code::Internal);
                }
            }
            Poll::Ready(None) => {
                if let Some(call) = this.call.take() {
                    call.finish(Code::Unknown);
                }
            }
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for ObservedBody<B> {
    fn drop(&mut self) {
        if let Some(call) = self.call.take() {
            call.finish(Code::Cancelled);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_of_known_services_are_named_and_anything_else_is_other() {
        assert_eq!(
            method_of("/lms.v1.AdminService/GetGroup"),
            ("lms.v1.AdminService", "GetGroup")
        );
        assert_eq!(method_of("/evil.Service/Probe"), ("other", "other"));
        assert_eq!(method_of("/lms.v1.AdminService/a b"), ("other", "other"));
        assert_eq!(method_of("nonsense"), ("other", "other"));
    }
}
