//! Tracing and OpenTelemetry.
//!
//! [`build_subscriber`] and [`install`] are separate steps (tests and the launcher may
//! install their own). OTLP export is on only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
//! [`grpc_span`] continues the caller's trace from the W3C `traceparent` metadata, so a
//! request is one trace from the gateway through the core down to the database spans.

use opentelemetry::{global, propagation::Extractor, trace::TracerProvider as _};
use opentelemetry_sdk::{propagation::TraceContextPropagator, trace::SdkTracerProvider};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::{EnvFilter, Registry, layer::SubscriberExt as _};

/// Keeps the exporter alive; dropping it flushes pending spans.
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// A subscriber with an env filter (`RUST_LOG`, default `info`), fmt output and, when
/// configured, an OpenTelemetry layer exporting over OTLP.
pub fn build_subscriber(
    service_name: &'static str,
) -> anyhow::Result<(impl tracing::Subscriber + Send + Sync, TelemetryGuard)> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let provider = match std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT") {
        Ok(endpoint) if !endpoint.is_empty() => {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .build()?;
            let resource = opentelemetry_sdk::Resource::builder()
                .with_service_name(service_name)
                .build();
            Some(
                SdkTracerProvider::builder()
                    .with_batch_exporter(exporter)
                    .with_resource(resource)
                    .build(),
            )
        }
        _ => None,
    };
    let otel_layer = provider
        .as_ref()
        .map(|p| tracing_opentelemetry::layer().with_tracer(p.tracer(service_name)));
    let subscriber = Registry::default()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_target(false)
                .with_writer(std::io::stderr),
        )
        .with(otel_layer);
    Ok((subscriber, TelemetryGuard { provider }))
}

/// Installs the subscriber globally and the W3C trace-context propagator.
pub fn install(subscriber: impl tracing::Subscriber + Send + Sync) -> anyhow::Result<()> {
    global::set_text_map_propagator(TraceContextPropagator::new());
    tracing::subscriber::set_global_default(subscriber)?;
    Ok(())
}

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
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
    {
        span.record("request_id", id);
    }
    let parent = global::get_text_map_propagator(|propagator| {
        propagator.extract(&HeaderExtractor(request.headers()))
    });
    let _ = span.set_parent(parent);
    span
}

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}
