//! The gateway's own tests, compiled as one binary (each test binary links axum, tonic and
//! the telemetry stack again).
//!
//! Layout: `router` drives the real router with no useful core behind it; `telemetry` reads
//! the spans it makes; `log_format` runs the binary for its JSON log lines. The set-up's own tests live in `runtime/tests`.

mod log_format;
mod router;
mod server;
mod telemetry;
