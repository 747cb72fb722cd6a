//! Logs and traces of a process, built and installed in two steps, so a test or a launcher
//! can build the same pipeline and decide itself whether to install it.
//!
//! OTLP export has one switch for every binary: `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), the variables the exporter reads its endpoint from
//! anyway. Without them no exporter is built and nothing leaves the process.

use std::fmt;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// The environment variables that switch OTLP export on; either one is enough.
pub const OTLP_ENDPOINT_VARIABLES: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
];

/// The process-wide subscriber and, when OTLP export is on, its tracer provider; built but
/// not yet installed.
pub struct Telemetry {
    subscriber: Box<dyn tracing::Subscriber + Send + Sync>,
    provider: Option<SdkTracerProvider>,
}

/// Keeps the OTLP pipeline alive; flushes pending spans when dropped (at the end of `main`).
#[must_use = "dropping the guard shuts the trace export down"]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

/// Whether this process exports traces over OTLP.
pub fn otlp_enabled() -> bool {
    OTLP_ENDPOINT_VARIABLES
        .iter()
        .any(|name| std::env::var(name).is_ok_and(|value| !value.trim().is_empty()))
}

impl Telemetry {
    /// Human-readable logs on stderr filtered by `RUST_LOG` (default `info`), plus an
    /// OpenTelemetry layer exporting over OTLP/gRPC when [`otlp_enabled`].
    ///
    /// Call it inside a Tokio runtime: the OTLP exporter's tonic client needs one.
    pub fn build(service_name: &str) -> anyhow::Result<Self> {
        let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
        let provider = if otlp_enabled() {
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
        Ok(Self {
            subscriber: Box::new(subscriber),
            provider,
        })
    }

    /// Installs the subscriber, the W3C trace-context propagator and, when exporting, the
    /// global tracer provider. Fails (without panicking) when a global subscriber is already set.
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

    /// [`Telemetry::build`] then [`Telemetry::install`]: what a binary calls once.
    pub fn init(service_name: &str) -> anyhow::Result<TelemetryGuard> {
        Self::build(service_name)?.install()
    }
}

impl fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Telemetry")
            .field("otlp", &self.provider.is_some())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for TelemetryGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelemetryGuard")
            .field("otlp", &self.provider.is_some())
            .finish()
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            // The subscriber may be gone by now; stderr is the one place left to say it.
            eprintln!("flushing traces failed: {error}");
        }
    }
}
