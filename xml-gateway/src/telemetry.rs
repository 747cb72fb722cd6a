//! The gateway's spans: one per HTTP request, named by route, continuing the caller's W3C
//! trace. Building and installing the subscriber is [`lms_runtime::Telemetry`]'s job, and the
//! trace context goes on to the core through [`lms_runtime::propagation`].

use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::response::Response;
use lms_runtime::propagation::continue_trace;
use tracing::Span;

use crate::request_id::RequestId;

/// The span of one HTTP request, named by route (`otel.name`), continuing the caller's trace
/// when it sent a `traceparent`.
pub(crate) fn http_request_span(request: &Request) -> Span {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched route", MatchedPath::as_str);
    let request_id = request
        .extensions()
        .get::<RequestId>()
        .map_or("", RequestId::as_str);
    // Methods are any token a client sends; the log line must not grow with it.
    let method = crate::clip::clip(request.method().as_str());
    let span = tracing::info_span!(
        "http_request",
        otel.name = format!("{method} {route}"),
        otel.kind = "server",
        http.request.method = %method,
        http.route = route,
        request_id,
        http.response.status_code = tracing::field::Empty,
    );
    continue_trace(&span, request.headers());
    span
}

/// Records the status on the request span and logs one line per request.
pub(crate) fn record_response(response: &Response, latency: Duration, span: &Span) {
    let status = response.status().as_u16();
    span.record("http.response.status_code", status);
    tracing::info!(status, latency_ms = latency.as_millis(), "request finished");
}
