//! The core of the learning management service: a tonic gRPC server that owns all
//! data through SeaORM and decides every permission.
//!
//! A request flows inward: [`grpc`] authenticates the caller ([`auth`]), converts the
//! `lms.v1` message into parsed [`domain`] values, and calls one function of [`service`];
//! the service checks the caller's permission ([`access`]), then the parsed input, then
//! writes through [`service::write()`]; [`grpc`] maps the [`error::ServiceError`] to a status.
//!
//! Layout:
//! - [`settings`]: the typed settings of `lms-core` (clap, with environment fallbacks).
//! - [`app`]: start-up (`App::build` binds, `App::run_until` serves until a shutdown future).
//! - [`db`]: connecting to SQLite or PostgreSQL, migrations, and the data-layer toolkit:
//!   bulk statements and arrays, unique-key violations, the hot reads, the watch of the
//!   auth revision.
//! - [`entities`]: the SeaORM entities, one module per table (see `docs/data-model.md`).
//! - [`domain`]: the one home of value rules: validated values (account URLs, logins,
//!   passwords, names, dates, URLs, ids and id lists, roles), each `parse` failing with
//!   [`domain::Invalid`], shared by the gRPC path and the import.
//! - [`auth`]: who is calling: argon2id passwords, the verified-credentials cache, throttling.
//! - [`rate_limit`]: how fast each caller and each account may call: token buckets taken
//!   from right after authentication, and the budget written on every answer.
//! - [`access`]: what the caller may do: roles, permissions and department scope.
//! - [`service`]: the operations, one module per resource (users, departments, groups,
//!   enrollments, content, points, API clients; submodules named for what they do, never
//!   for the door that calls them) plus keyset paging and shared lookups, as functions over
//!   a database connection returning [`error::ServiceError`]. Each operation is one
//!   function, called by the `AdminService` and the `DirectoryService` alike. The write
//!   helper (account lock, audit rows, cache invalidation) and the audit record live there.
//! - [`grpc`]: thin tonic adapters: `lms.v1` requests into parsed inputs (`TryFrom`),
//!   the service call, and the one error mapping.
//! - [`import`]: the import document (contract section 9).
//! - [`in_process`]: the core's gRPC services called from inside its process (`lms up`),
//!   through the `lms.v1` codec but without a transport.
//! - [`telemetry`]: what each gRPC call tells: its SERVER span (continuing the caller's W3C
//!   trace), its log line and its metrics (the subscriber, the shutdown signal and trace
//!   propagation come from `lms-runtime`).
//! - [`metrics`]: the core's Prometheus metrics (a leaf: it uses no other module).
//! - [`health`]: the database probe behind the gRPC health service.
//! - [`availability`]: requests that need the database refused at once while it is away.
//! - [`scheduler`]: the scheduled deactivations and terminations every core carries out
//!   when their day begins (`service::users` stores them and makes each change).
//! - [`webhooks`]: delivering the events writes record (`service::webhooks`): the
//!   dispatcher every core runs, its HTTP client with the address checks, signatures.
//! - [`error`]: [`error::ServiceError`], the one error of the services.
//!
//! Modules depend downwards only: [`domain`] and [`db`] use nothing of [`access`], [`auth`],
//! [`service`], [`grpc`], [`import`], [`error`] or [`telemetry`], and each error's
//! `From<DbErr>` lives beside the error (`tests/module_graph.rs` checks it).

pub mod access;
pub mod app;
pub mod auth;
pub mod availability;
pub mod db;
pub mod domain;
pub mod entities;
pub mod error;
#[cfg(test)]
mod fuzz;
pub mod grpc;
pub mod health;
pub mod import;
pub mod in_process;
pub mod metrics;
pub mod rate_limit;
pub mod scheduler;
pub mod service;
pub mod settings;
pub mod telemetry;
pub mod webhooks;
