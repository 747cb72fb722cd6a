//! The gateway's own tests, compiled as one binary (each test binary links axum, tonic and
//! the telemetry stack again).
//!
//! Layout: `router` drives the real router with no useful core behind it. The telemetry
//! tests live with the telemetry, in `runtime/tests`.

mod router;
mod server;
