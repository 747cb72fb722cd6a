//! Thin tonic adapters: convert the `lms.v1` message, authenticate, call the service,
//! map the error (in [`status`], the one place that does).
//!
//! - [`admin`]: `lms.v1.AdminService`, the operations of the XML interface.
//! - [`directory`]: `lms.v1.DirectoryService`, the writes of internal services.
//! - [`webhooks`]: `lms.v1.WebhookService`, the `/webhook` calls.
//! - [`scim`]: `lms.v1.ScimService`, `/scim/v2` (authenticated by a SCIM token).
//! - `convert`: `lms.v1` requests into the services' parsed inputs (`TryFrom`).
//! - `results`: learner results messages into the results services' inputs, and back.
//! - [`request`]: credentials and request id from gRPC metadata, and the caller's rate.

pub mod admin;
mod convert;
pub mod directory;
pub mod request;
mod results;
pub mod scim;
pub mod status;
pub mod webhooks;

use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::{
    auth::Authenticator, availability::DatabaseAvailability, db::ReadConnections,
    rate_limit::RateLimits,
};

/// What every RPC needs: the database, the authenticator and the rate limits.
pub struct CoreState {
    pub db: DatabaseConnection,
    /// The same database for the hottest reads (`db::reads`).
    pub reads: ReadConnections,
    pub auth: Authenticator,
    /// Whether the database can be used (the probe, the SQLite file watch): while it cannot,
    /// every request is refused with UNAVAILABLE at once (`availability`).
    pub database: Arc<DatabaseAvailability>,
    /// The buckets every authenticated call is taken from (`rate_limit`).
    pub rate_limits: Arc<RateLimits>,
    /// Whether callbacks may name loopback, private and link-local addresses.
    pub webhook_allow_private_networks: bool,
    /// Days added to the UTC date where scheduled status changes ask what day it is
    /// (`--scheduler-date-offset-days`).
    pub scheduler_date_offset_days: i32,
}

pub type SharedState = Arc<CoreState>;
