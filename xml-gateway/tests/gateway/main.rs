//! The gateway's own tests, compiled as one binary (each test binary links axum, tonic and
//! the telemetry stack again).
//!
//! Layout: `router` drives the real router with no useful core behind it; `telemetry`
//! installs the process-wide telemetry, which nothing else here does.

mod router;
mod telemetry;
