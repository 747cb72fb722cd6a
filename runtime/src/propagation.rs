//! W3C trace context across process boundaries: read from HTTP headers (a caller of the
//! gateway, or the gateway calling the core), written into gRPC metadata.
//!
//! The functions use the global propagator, which [`Telemetry::install`](crate::Telemetry::install)
//! sets; before that they read and write nothing.

use opentelemetry::propagation::{Extractor, Injector};
use opentelemetry::trace::TraceContextExt as _;
use tonic::metadata::{KeyRef, MetadataKey, MetadataMap, MetadataValue};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// Makes `span` a child of the trace the caller sent in `traceparent`, if it sent a valid one.
pub fn continue_trace(span: &Span, headers: &http::HeaderMap) {
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&HeaderExtractor(headers))
    });
    if parent.span().span_context().is_valid() {
        // Fails only when no OpenTelemetry layer is installed; then there is no trace to join.
        let _ = span.set_parent(parent);
    }
}

/// Writes the current span's trace context (`traceparent`, `tracestate`) into gRPC metadata.
pub fn inject_current_context(metadata: &mut MetadataMap) {
    let context = Span::current().context();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut MetadataInjector(metadata));
    });
}

/// Lets an OpenTelemetry propagator read HTTP headers.
pub struct HeaderExtractor<'a>(pub &'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// Lets an OpenTelemetry propagator write into tonic metadata.
pub struct MetadataInjector<'a>(pub &'a mut MetadataMap);

impl Injector for MetadataInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        // Propagators only write lower-case ASCII keys and values; anything else is dropped.
        if let (Ok(key), Ok(value)) = (
            MetadataKey::from_bytes(key.as_bytes()),
            MetadataValue::try_from(value.as_str()),
        ) {
            self.0.insert(key, value);
        }
    }
}

/// Lets an OpenTelemetry propagator read tonic metadata (ASCII entries only).
pub struct MetadataExtractor<'a>(pub &'a MetadataMap);

impl Extractor for MetadataExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0
            .keys()
            .filter_map(|key| match key {
                KeyRef::Ascii(key) => Some(key.as_str()),
                KeyRef::Binary(_) => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::propagation::TextMapPropagator as _;
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
    use opentelemetry_sdk::propagation::TraceContextPropagator;

    const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn trace_context_round_trips_through_headers_and_metadata() {
        let propagator = TraceContextPropagator::new();
        let mut headers = http::HeaderMap::new();
        headers.insert("traceparent", TRACEPARENT.parse().unwrap());
        let context = propagator.extract(&HeaderExtractor(&headers));
        assert!(context.span().span_context().is_valid());

        let mut metadata = MetadataMap::new();
        propagator.inject_context(&context, &mut MetadataInjector(&mut metadata));
        assert_eq!(metadata.get("traceparent").unwrap(), TRACEPARENT);

        let received = propagator.extract(&MetadataExtractor(&metadata));
        assert_eq!(
            received.span().span_context().trace_id(),
            context.span().span_context().trace_id()
        );
    }

    #[test]
    fn a_context_without_a_span_injects_nothing() {
        let propagator = TraceContextPropagator::new();
        let context = opentelemetry::Context::new().with_remote_span_context(SpanContext::new(
            TraceId::INVALID,
            SpanId::INVALID,
            TraceFlags::default(),
            true,
            TraceState::default(),
        ));
        let mut metadata = MetadataMap::new();
        propagator.inject_context(&context, &mut MetadataInjector(&mut metadata));
        assert!(metadata.get("traceparent").is_none());
    }
}
