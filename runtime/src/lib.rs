//! The runtime both services stand on: how a process stops, how it logs and traces, how a
//! trace crosses from HTTP to gRPC, and how a credential stays out of logs. It knows nothing
//! of the database or of the `lms.v1` operations.
//!
//! # Layout
//!
//! - [`shutdown`]: [`shutdown_signal`], the one stop path (Ctrl-C or SIGTERM).
//! - [`telemetry`]: the one set-up of logs and traces of every binary: [`Telemetry::build`]
//!   then [`Telemetry::install`]; logs on stderr as text or JSON lines, filtered by
//!   `RUST_LOG`, and OTLP trace export switched on by `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//!   (or `OTEL_EXPORTER_OTLP_ENDPOINT`). `text_fields` writes the text log's fields.
//! - [`metrics`]: the process's Prometheus recorder and its `GET /metrics` endpoint.
//! - [`propagation`]: W3C trace context in and out: [`HeaderExtractor`] over HTTP headers,
//!   [`MetadataInjector`] and [`MetadataExtractor`] over tonic metadata.
//! - [`secret`]: [`Secret`], a value whose `Debug` never shows it.
//! - [`outage`]: [`Outage`], one log line when a dependency goes down and one when it is back.
//! - [`report`]: [`Report`], what a failing binary prints: each cause once.
//! - [`supervisor`]: a service binary serving from a child process of its own, which it starts
//!   again when a signal kills it (SIGBUS from SQLite's memory-mapped WAL index).

mod log_writer;
pub mod metrics;
pub mod outage;
pub mod propagation;
pub mod report;
pub mod secret;
pub mod shutdown;
pub mod supervisor;
pub mod telemetry;
mod text_fields;

pub use outage::Outage;
pub use propagation::{HeaderExtractor, MetadataExtractor, MetadataInjector};
pub use report::Report;
pub use secret::Secret;
pub use shutdown::shutdown_signal;
pub use telemetry::{
    LogFormat, LogSettings, Telemetry, TelemetryGuard, TelemetryOptions, TracedService,
};
