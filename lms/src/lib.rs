//! `lms`: the whole learning management service on one machine, as a library (the `lms`
//! command line is a thin `main.rs` over it).
//!
//! # Layout
//!
//! - [`stack`]: [`Stack`] starts the core and the gateway in one process, connected over real
//!   gRPC; [`StackSettings`] are their flags together. `lms up`, the end-to-end tests and the
//!   benchmarks all start the service through it.
//! - [`demo`]: the built-in demo account of `lms up --demo` and what the launcher prints.
//! - [`healthcheck`]: `lms healthcheck URL`, one probe of a running core or gateway for
//!   container health checks.
//! - [`supervisor`] (`lms_runtime::supervisor`): `lms up` runs the service in a child process
//!   of its own, logs why it died when it is killed (SIGBUS from SQLite's memory-mapped WAL
//!   index) and starts it again; `lms-core` alone does the same.
//! - [`progress`]: what `lms import` shows while it works (a bar on a terminal, plain
//!   lines otherwise).

pub mod demo;
pub mod healthcheck;
pub mod progress;
pub mod stack;

pub use lms_runtime::supervisor;
pub use stack::{Stack, StackSettings};
