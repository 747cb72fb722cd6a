//! The gateway's own tests, compiled as one binary (each test binary links axum, tonic and
//! the telemetry stack again).
//!
//! Layout: `router` drives the real router with no useful core behind it; `log_format` runs
//! the binary for its JSON log lines. The spans are read in `tests/spans.rs`, a binary of its
//! own: `tracing` caches whether a callsite is wanted process-wide, and a test hitting the same
//! callsite on another thread while the spans' subscriber registers can leave it cached as
//! unwanted. The set-up's own tests live in `runtime/tests`.

mod log_format;
mod router;
mod server;
