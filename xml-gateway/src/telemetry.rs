//! Logs and traces: the process-wide subscriber (built, then installed), the per-request HTTP
//! span, and W3C trace context in and out (HTTP headers in, gRPC metadata out).

use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::http::HeaderMap;
use axum::response::Response;
use opentelemetry::propagation::{Extractor, Injector};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::request_id::RequestId;

/// The process-wide subscriber and, when OTLP export is configured, its tracer provider; built
/// but not yet installed.
pub struct Telemetry {
    subscriber: Box<dyn tracing::Subscriber + Send + Sync>,
    provider: Option<SdkTracerProvider>,
}

/// Keeps the OTLP pipeline alive; flushes pending spans when dropped (at the end of `main`).
#[must_use = "dropping the guard shuts the trace export down"]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("otlp", &self.provider.is_some())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for TelemetryGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryGuard")
            .field("otlp", &self.provider.is_some())
            .finish()
    }
}

/// Builds the subscriber: human-readable logs on stderr filtered by `RUST_LOG` (default `info`),
/// plus an OpenTelemetry layer exporting over OTLP/gRPC when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set.
///
/// Call it inside a Tokio runtime: the OTLP exporter's tonic client needs one.
pub fn build_telemetry(service_name: &str) -> anyhow::Result<Telemetry> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let provider = if otlp_configured() {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .build()?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(service_name.to_owned())
            .build();
        Some(
            SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource)
                .build(),
        )
    } else {
        None
    };
    let otel_layer = provider.as_ref().map(|provider| {
        tracing_opentelemetry::layer().with_tracer(provider.tracer(service_name.to_owned()))
    });
    let subscriber = tracing_subscriber::registry()
        .with(filter)
        // stderr, so what a launcher prints on stdout (addresses, instructions) stays clean.
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(otel_layer);
    Ok(Telemetry {
        subscriber: Box::new(subscriber),
        provider,
    })
}

impl Telemetry {
    /// Installs the subscriber and the W3C trace-context propagator for the whole process.
    /// Fails (without panicking) when a global subscriber is already set.
    pub fn install(self) -> anyhow::Result<TelemetryGuard> {
        self.subscriber.try_init()?;
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        if let Some(provider) = &self.provider {
            opentelemetry::global::set_tracer_provider(provider.clone());
        }
        Ok(TelemetryGuard {
            provider: self.provider,
        })
    }
}

/// [`build_telemetry`] then [`Telemetry::install`]: what the gateway binary calls once.
pub fn init_telemetry(service_name: &str) -> anyhow::Result<TelemetryGuard> {
    build_telemetry(service_name)?.install()
}

fn otlp_configured() -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|name| std::env::var(name).is_ok_and(|value| !value.trim().is_empty()))
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("flushing traces failed: {error}");
        }
    }
}

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
    let method = request.method();
    let span = tracing::info_span!(
        "http_request",
        otel.name = format!("{method} {route}"),
        otel.kind = "server",
        http.request.method = %method,
        http.route = route,
        request_id,
        http.response.status_code = tracing::field::Empty,
    );
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&HeaderExtractor(request.headers()))
    });
    if parent.span().span_context().is_valid() {
        // Fails only when no OpenTelemetry layer is installed; then there is no trace to join.
        let _ = span.set_parent(parent);
    }
    span
}

/// Records the status on the request span and logs one line per request.
pub(crate) fn record_response(response: &Response, latency: Duration, span: &Span) {
    let status = response.status().as_u16();
    span.record("http.response.status_code", status);
    tracing::info!(status, latency_ms = latency.as_millis(), "request finished");
}

/// Writes the current span's trace context (`traceparent`, `tracestate`) into gRPC metadata.
pub(crate) fn inject_trace_context(metadata: &mut MetadataMap) {
    let context = Span::current().context();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut MetadataInjector(metadata));
    });
}

/// Lets an OpenTelemetry propagator write into tonic metadata.
pub(crate) struct MetadataInjector<'a>(pub(crate) &'a mut MetadataMap);

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

/// Lets an OpenTelemetry propagator read HTTP request headers.
pub(crate) struct HeaderExtractor<'a>(pub(crate) &'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|name| name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

    #[test]
    fn trace_context_round_trips_through_headers_and_metadata() {
        let propagator = TraceContextPropagator::new();
        let mut headers = HeaderMap::new();
        headers.insert(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                .parse()
                .unwrap(),
        );
        let context = propagator.extract(&HeaderExtractor(&headers));
        assert!(context.span().span_context().is_valid());

        let mut metadata = MetadataMap::new();
        propagator.inject_context(&context, &mut MetadataInjector(&mut metadata));
        assert_eq!(
            metadata.get("traceparent").unwrap(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
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
