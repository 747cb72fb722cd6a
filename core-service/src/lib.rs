//! The core of the learning management service: a tonic gRPC server that owns all
//! data through SeaORM and decides every permission.
//!
//! Layout:
//! - [`settings`]: the typed settings of `lms-core` (clap, with environment fallbacks).
//! - [`app`]: start-up (`App::build` binds, `App::run_until` serves) and shutdown.
//! - [`db`]: connecting to SQLite or PostgreSQL, migrations, and the data-layer toolkit:
//!   the write helper (account lock, audit rows, cache invalidation), bulk inserts.
//! - [`entities`]: the SeaORM entities, one module per table (see `docs/data-model.md`).
//! - [`domain`]: validated values (identifiers, names, roles, permissions).
//! - [`auth`]: who is calling: argon2id passwords, the verified-credentials cache, throttling.
//! - [`access`]: what the caller may do: roles, permissions and department scope.
//! - [`service`]: the operations, as functions over a database connection returning [`error::ServiceError`].
//! - [`grpc`]: thin tonic adapters from `lms.v1` to [`service`], and the one error mapping.
//! - [`import`]: the import document (contract section 9) and the demo account.
//! - [`telemetry`]: tracing and OpenTelemetry set-up, trace context from gRPC metadata.

pub mod access;
pub mod app;
pub mod auth;
pub mod db;
pub mod domain;
pub mod entities;
pub mod error;
pub mod grpc;
pub mod import;
pub mod service;
pub mod settings;
pub mod telemetry;
