//! The span of one gRPC call. Building and installing the subscriber is
//! [`lms_runtime::Telemetry`]'s job; this module only names the core's spans and continues
//! the caller's trace from the W3C `traceparent` metadata, so a request is one trace from the
//! gateway through the core down to the database spans.

use tracing::Span;

/// The span of one gRPC call, child of the caller's trace when it sent `traceparent`.
pub fn grpc_span(request: &http::Request<()>) -> Span {
    let span = tracing::info_span!(
        "grpc",
        otel.name = %request.uri().path(),
        rpc.system = "grpc",
        request_id = tracing::field::Empty,
    );
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
