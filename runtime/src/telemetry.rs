//! Logs and traces of every binary, set up in one place, built and installed in two steps so
//! a test or a launcher can build the same pipeline and decide itself whether to install it.
//!
//! - Logs go to stderr, filtered by `RUST_LOG` (default `info`), as text (`--log-format text`,
//!   coloured only on a terminal, one line per event: newlines inside values are escaped) or
//!   as one JSON object per line (`--log-format json`). A thread of their own writes them, so
//!   no request waits for the file system; the guard flushes what is left at exit.
//! - Traces are exported over OTLP/gRPC when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
//!   `OTEL_EXPORTER_OTLP_ENDPOINT` is set; the other standard variables (`OTEL_SERVICE_NAME`,
//!   `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, headers, timeouts) are read by the SDK.
//! - One process may carry several services (`lms up`: the gateway and the core): each
//!   exports its spans under its own `service.name`, told apart by the span's code target.
//! - A collector that is down costs one warning, and one line when it is back.

use std::{
    fmt,
    io::IsTerminal as _,
    sync::atomic::{AtomicBool, Ordering},
};

use opentelemetry::{KeyValue, Value, trace::TracerProvider as _};
use opentelemetry_sdk::{
    Resource,
    error::OTelSdkResult,
    propagation::TraceContextPropagator,
    trace::{SdkTracerProvider, SpanData, SpanExporter},
};
use tracing::Metadata;
use tracing_subscriber::{
    EnvFilter, Layer as _,
    filter::{FilterExt as _, LevelFilter, Targets, filter_fn},
    layer::{Filter, SubscriberExt as _},
    registry::LookupSpan,
    util::SubscriberInitExt as _,
};

use crate::{
    log_writer::{BatchedLog, BatchedLogGuard},
    text_fields::OneLineFields,
};

/// The environment variables that switch OTLP export on, the signal-specific one first.
pub const OTLP_ENDPOINT_VARIABLES: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// The span attribute that names the code target a span came from (set when a process
/// carries several services, so the exporter can route each span to its service).
const TARGET_ATTRIBUTE: &str = "target";

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines, coloured only when stderr is a terminal.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// The logging flags every binary shares.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct LogSettings {
    /// How log lines on stderr are written: `text` (for people) or `json` (one object per line,
    /// for log collectors).
    #[arg(
        long,
        env = "LMS_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Text,
        global = true
    )]
    pub log_format: LogFormat,
}

/// One service whose spans this process exports.
#[derive(Debug, Clone, Copy)]
pub struct TracedService {
    /// `service.name` unless `OTEL_SERVICE_NAME` says otherwise.
    pub name: &'static str,
    /// Code targets (crate names) whose spans are this service's; empty: every span no other
    /// service of the process claims.
    pub targets: &'static [&'static str],
}

impl TracedService {
    /// A process that is one service: every span is its own.
    pub const fn whole(name: &'static str) -> Self {
        Self { name, targets: &[] }
    }
}

/// What to set up; [`TelemetryOptions::from_env`] is what the binaries use.
#[derive(Debug, Clone)]
pub struct TelemetryOptions {
    pub log_format: LogFormat,
    /// The services of this process; the last one takes the spans no other claims.
    pub services: Vec<TracedService>,
    /// Where to export traces over OTLP/gRPC; `None`: nowhere.
    pub otlp_endpoint: Option<String>,
    /// `OTEL_SERVICE_NAME`: the name of a single service, the prefix of several.
    pub service_name: Option<String>,
}

impl TelemetryOptions {
    /// The options of a binary: its log format, its services, and the `OTEL_*` variables.
    pub fn from_env(log_format: LogFormat, services: &[TracedService]) -> Self {
        let variable = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        Self {
            log_format,
            services: services.to_vec(),
            otlp_endpoint: OTLP_ENDPOINT_VARIABLES
                .iter()
                .find_map(|name| variable(name)),
            service_name: variable("OTEL_SERVICE_NAME"),
        }
    }

    /// The `service.name` of each service: its own name, or `OTEL_SERVICE_NAME` for a single
    /// service; with several, `OTEL_SERVICE_NAME` replaces the `lms` in front of each name
    /// (`shop-gateway`, `shop-core`), so they stay apart.
    fn service_names(&self) -> Vec<String> {
        let single = self.services.len() == 1;
        self.services
            .iter()
            .map(|service| match &self.service_name {
                None => service.name.to_owned(),
                Some(name) if single => name.clone(),
                Some(name) => {
                    let part = service.name.strip_prefix("lms-").unwrap_or(service.name);
                    format!("{name}-{part}")
                }
            })
            .collect()
    }
}

/// Whether this process exports traces over OTLP (either endpoint variable is set).
pub fn otlp_enabled() -> bool {
    TelemetryOptions::from_env(LogFormat::Text, &[])
        .otlp_endpoint
        .is_some()
}

/// The process-wide subscriber and, when OTLP export is on, its tracer provider; built but
/// not yet installed.
pub struct Telemetry {
    subscriber: Box<dyn tracing::Subscriber + Send + Sync>,
    provider: Option<SdkTracerProvider>,
    log_writer: BatchedLogGuard,
}

/// Keeps the OTLP pipeline and the log writer alive; flushes pending spans and log lines when
/// dropped (at the end of `main`).
#[must_use = "dropping the guard shuts the trace export and the log writer down"]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
    _log_writer: BatchedLogGuard,
}

impl Telemetry {
    /// Logs as `options` say, plus an OpenTelemetry layer exporting over OTLP/gRPC when an
    /// endpoint is given.
    ///
    /// Call it inside a Tokio runtime: the OTLP exporter's tonic client needs one.
    pub fn build(options: &TelemetryOptions) -> anyhow::Result<Self> {
        let provider = match &options.otlp_endpoint {
            Some(endpoint) => Some(tracer_provider(options, endpoint)?),
            None => None,
        };
        // stderr, so what a launcher prints on stdout (addresses, instructions) stays clean,
        // written in batches by a thread of its own (`log_writer.rs`): a request that logs
        // never waits for the file system, nor wakes another thread for each of its lines.
        let (writer, log_writer) = BatchedLog::to(std::io::stderr(), "lms-log-writer")?;
        let log_layer = match options.log_format {
            LogFormat::Text => tracing_subscriber::fmt::layer()
                .with_writer(writer)
                .with_ansi(std::io::stderr().is_terminal())
                .fmt_fields(OneLineFields)
                .boxed(),
            LogFormat::Json => tracing_subscriber::fmt::layer()
                .json()
                .with_writer(writer)
                .flatten_event(true)
                .with_current_span(true)
                .with_span_list(false)
                .boxed(),
        };
        // Each layer filters for itself: a filter in front of all layers would keep every
        // span the log leaves out (`is_logged`) as long as any span can reach a layer.
        let logged = tracing_subscriber::registry()
            .with(log_layer.with_filter(level_filter().and(filter_fn(is_logged))));
        let subscriber: Box<dyn tracing::Subscriber + Send + Sync> = match &provider {
            Some(provider) => Box::new(
                logged.with(
                    tracing_opentelemetry::layer()
                        .with_tracer(provider.tracer("lms"))
                        .with_target(options.services.len() > 1)
                        .with_location(false)
                        .with_threads(false)
                        .with_filter(level_filter()),
                ),
            ),
            None => Box::new(logged),
        };
        Ok(Self {
            subscriber,
            provider,
            log_writer,
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
            _log_writer: self.log_writer,
        })
    }

    /// [`Telemetry::build`] then [`Telemetry::install`] from the environment: what a binary
    /// calls once.
    pub fn init(
        log_format: LogFormat,
        services: &[TracedService],
    ) -> anyhow::Result<TelemetryGuard> {
        Self::build(&TelemetryOptions::from_env(log_format, services))?.install()
    }
}

/// What is logged and traced, from `RUST_LOG` (default `info`). Plain directives
/// (`info,lms_core=debug`) become a [`Targets`] filter, which decides once per call site;
/// only directives naming spans or fields need an [`EnvFilter`], which also looks up every
/// span as it is entered and left. The OpenTelemetry crates are silenced unless `RUST_LOG`
/// names them: the SDK reports failed exports itself, at ERROR each time, where the
/// exporter below says it once per outage.
fn level_filter<S>() -> Box<dyn Filter<S> + Send + Sync>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    const QUIET: [&str; 3] = ["opentelemetry", "opentelemetry_sdk", "opentelemetry_otlp"];
    // Two lines per migration applied, where `lms_migrations::migrate` says it all in one:
    // at WARN and above unless `RUST_LOG` names it. (Not a target that logs through the
    // `log` crate: a record this filter refuses would make it drop the next event as well,
    // tokio-rs/tracing#2519.)
    const MIGRATOR: &str = "sea_orm_migration";
    // Set but blank is left to `EnvFilter`, as it always was.
    let directives = std::env::var("RUST_LOG").ok();
    let names = |target: &str| {
        directives
            .as_deref()
            .is_some_and(|directives| directives.contains(target))
    };
    let quiet = if names("opentelemetry") {
        &[][..]
    } else {
        &QUIET[..]
    };
    let mut lowered: Vec<(&str, LevelFilter)> = quiet
        .iter()
        .map(|target| (*target, LevelFilter::OFF))
        .collect();
    if !names(MIGRATOR) {
        lowered.push((MIGRATOR, LevelFilter::WARN));
    }
    let plain = match directives.as_deref() {
        None => Ok(Targets::new().with_default(LevelFilter::INFO)),
        Some(text) if text.trim().is_empty() => Err(()),
        Some(text) => text.parse::<Targets>().map_err(|_| ()),
    };
    if let Ok(targets) = plain {
        return Box::new(lowered.iter().fold(targets, |targets, (target, level)| {
            targets.with_target(*target, *level)
        }));
    }
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    Box::new(
        lowered
            .iter()
            .filter_map(|(target, level)| format!("{target}={level}").parse().ok())
            .fold(filter, EnvFilter::add_directive),
    )
}

/// What the log layer records: every event, and the spans that name their request (the
/// gateway's and the core's SERVER spans carry `request_id`), so a line logged while a
/// request is served says which request it was. The other spans (a handler's, the call to
/// the core, authentication, each SQL statement) are for traces: formatting their fields
/// for a log line that is almost never written was most of what logging cost per request
/// (docs/benchmarks.md, "Hot path"), and with no trace exporter they are not made at all.
fn is_logged(metadata: &Metadata<'_>) -> bool {
    !metadata.is_span() || metadata.fields().field(REQUEST_ID_FIELD).is_some()
}

/// The span field that names the request a span serves.
const REQUEST_ID_FIELD: &str = "request_id";

fn tracer_provider(
    options: &TelemetryOptions,
    endpoint: &str,
) -> anyhow::Result<SdkTracerProvider> {
    let names = options.service_names();
    let mut routes = Vec::with_capacity(names.len());
    for (service, name) in options.services.iter().zip(names) {
        use opentelemetry_otlp::WithExportConfig as _;
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()?;
        // Resource::builder reads OTEL_RESOURCE_ATTRIBUTES; the name is settled above.
        exporter.set_resource(&Resource::builder().with_service_name(name).build());
        routes.push(Route {
            targets: service.targets,
            exporter,
        });
    }
    let exporter = ServiceExporter {
        routes,
        failing: AtomicBool::new(false),
    };
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .build())
}

/// The services' exporters: each span goes to the service whose targets it came from, and a
/// failed export is said once per outage of the collector.
struct ServiceExporter {
    routes: Vec<Route>,
    failing: AtomicBool,
}

struct Route {
    targets: &'static [&'static str],
    exporter: opentelemetry_otlp::SpanExporter,
}

impl fmt::Debug for ServiceExporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceExporter")
            .field("services", &self.routes.len())
            .finish_non_exhaustive()
    }
}

impl ServiceExporter {
    /// The route a span belongs to: the first whose targets hold the span's target, else the
    /// last.
    fn route_of(&self, span: &SpanData) -> usize {
        let last = self.routes.len() - 1;
        if last == 0 {
            return 0;
        }
        let target = span
            .attributes
            .iter()
            .find_map(|KeyValue { key, value, .. }| {
                (key.as_str() == TARGET_ATTRIBUTE).then_some(value)
            });
        let Some(Value::String(target)) = target else {
            return last;
        };
        let target = target.as_str();
        self.routes
            .iter()
            .position(|route| {
                route.targets.iter().any(|claimed| {
                    target == *claimed
                        || target
                            .strip_prefix(claimed)
                            .is_some_and(|rest| rest.starts_with("::"))
                })
            })
            .unwrap_or(last)
    }

    fn settle(&self, result: OTelSdkResult) -> OTelSdkResult {
        match result {
            Ok(()) => {
                if self.failing.swap(false, Ordering::AcqRel) {
                    tracing::info!("the trace collector is reachable again; spans are exported");
                }
            }
            Err(error) => {
                if !self.failing.swap(true, Ordering::AcqRel) {
                    tracing::warn!(
                        %error,
                        "the trace collector is unreachable; spans are dropped until it is back \
                         (further failures are not logged)"
                    );
                }
            }
        }
        // The failure is told above; the SDK has nothing to add to it.
        Ok(())
    }
}

impl SpanExporter for ServiceExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let mut parts: Vec<Vec<SpanData>> = self.routes.iter().map(|_| Vec::new()).collect();
        for span in batch {
            let route = self.route_of(&span);
            parts[route].push(span);
        }
        let mut result = Ok(());
        for (route, spans) in self.routes.iter().zip(parts) {
            if spans.is_empty() {
                continue;
            }
            if let Err(error) = route.exporter.export(spans).await {
                result = Err(error);
            }
        }
        self.settle(result)
    }

    fn shutdown_with_timeout(&self, timeout: std::time::Duration) -> OTelSdkResult {
        for route in &self.routes {
            route.exporter.shutdown_with_timeout(timeout)?;
        }
        Ok(())
    }

    fn set_resource(&mut self, _resource: &Resource) {
        // Each service keeps the resource naming it.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The metadata of a span macro's call site, made under a subscriber that makes every span.
    fn metadata_of(make: impl FnOnce() -> tracing::Span) -> &'static Metadata<'static> {
        tracing::subscriber::with_default(tracing_subscriber::registry(), make)
            .metadata()
            .expect("a registry without layers makes every span")
    }

    /// Asks the subscriber for its interest in each call site, which is what leaves a span
    /// unmade: with one per-layer filter, `enabled` answers true whatever the filter says.
    /// (Creating the spans and asking `is_disabled` read a process-wide cache instead, which
    /// merges in the interest of other tests' subscribers alive on other threads.)
    #[test]
    fn without_an_exporter_only_the_spans_naming_a_request_are_made() {
        let telemetry = Telemetry::build(&TelemetryOptions {
            log_format: LogFormat::Text,
            services: vec![TracedService::whole("lms")],
            otlp_endpoint: None,
            service_name: None,
        })
        .unwrap();
        // ERROR: whatever RUST_LOG the tests run with, short of `off`.
        let request = metadata_of(|| tracing::error_span!("http.server", request_id = "r-1"));
        let statement =
            metadata_of(|| tracing::error_span!("sea_orm.query_all", db.statement = "SELECT 1"));
        assert!(
            !telemetry.subscriber.register_callsite(request).is_never(),
            "the request's span gives lines context"
        );
        assert!(
            telemetry.subscriber.register_callsite(statement).is_never(),
            "a span only traces would show costs all the same"
        );
    }

    #[test]
    fn several_services_keep_apart_under_one_otel_service_name() {
        let mut options = TelemetryOptions::from_env(
            LogFormat::Json,
            &[
                TracedService {
                    name: "lms-gateway",
                    targets: &["lms_gateway"],
                },
                TracedService::whole("lms-core"),
            ],
        );
        options.service_name = None;
        assert_eq!(options.service_names(), ["lms-gateway", "lms-core"]);
        options.service_name = Some("shop".to_owned());
        assert_eq!(options.service_names(), ["shop-gateway", "shop-core"]);
        options.services.truncate(1);
        assert_eq!(options.service_names(), ["shop"]);
    }
}
