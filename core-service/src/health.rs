//! The core's gRPC health follows its database: a probe (`SELECT 1`) runs every few seconds,
//! and at once when a request found the database out of reach or waited on it for a second
//! (`availability::SLOW_CALL`); health is NOT_SERVING while the probe fails and SERVING
//! again when it answers, with no restart. The probe's verdict also opens and closes the
//! [`availability`](crate::availability) gate: requests are refused at once while it fails.
//! A SQLite file deleted under the service keeps health NOT_SERVING for good
//! (`db::sqlite_file`).
//!
//! The probe is background work: it makes no spans (a trace every few seconds would bury the
//! requests), and its failures are told once per outage through
//! [`DATABASE_OUTAGE`](crate::db::fault::DATABASE_OUTAGE).

use std::{sync::Arc, time::Duration};

use lms_proto::v1::{
    admin_service_server::AdminServiceServer, directory_service_server::DirectoryServiceServer,
};
use sea_orm::{ConnectionTrait as _, Statement};
use tokio::sync::Notify;
use tonic_health::server::HealthReporter;
use tracing::instrument::WithSubscriber as _;

use crate::{
    db::fault::{self, DATABASE_OUTAGE},
    grpc::{SharedState, admin::AdminApi, directory::DirectoryApi},
};

/// How often the database is probed while it answers.
pub const DEFAULT_PROBE_INTERVAL: Duration = Duration::from_secs(5);

/// How often it is probed while it does not: requests are refused until it answers, so its
/// return is seen within about this long.
const PROBE_INTERVAL_WHILE_DOWN: Duration = Duration::from_millis(500);

/// Longest wait for the probe's answer (shorter than a pool's acquire timeout).
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Wakes the probe: a request found the database out of reach.
static PROBE_NOW: Notify = Notify::const_new();

/// Asks for a probe now (cheap; many calls while one probe runs make one more probe).
pub fn probe_soon() {
    PROBE_NOW.notify_one();
}

/// Sets every service's health at once (the overall `""` service too).
pub async fn set_all(health: &HealthReporter, serving: bool) {
    use tonic_health::ServingStatus::{NotServing, Serving};
    let status = if serving { Serving } else { NotServing };
    health.set_service_status("", status).await;
    health
        .set_service_status(
            <AdminServiceServer<AdminApi> as tonic::server::NamedService>::NAME,
            status,
        )
        .await;
    health
        .set_service_status(
            <DirectoryServiceServer<DirectoryApi> as tonic::server::NamedService>::NAME,
            status,
        )
        .await;
    health
        .set_service_status(
            <lms_proto::v1::webhook_service_server::WebhookServiceServer<
                crate::grpc::webhooks::WebhookApi,
            > as tonic::server::NamedService>::NAME,
            status,
        )
        .await;
    health
        .set_service_status(
            <lms_proto::v1::scim_service_server::ScimServiceServer<crate::grpc::scim::ScimApi> as tonic::server::NamedService>::NAME,
            status,
        )
        .await;
}

/// Probes the database until aborted, keeping `health` in step with it.
pub async fn follow_database(state: SharedState, health: HealthReporter, interval: Duration) {
    let mut serving = true;
    let mut first = true;
    loop {
        let wait = if serving {
            interval
        } else {
            PROBE_INTERVAL_WHILE_DOWN
        };
        if !std::mem::take(&mut first) {
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = PROBE_NOW.notified() => {}
            }
        }
        if state.database.is_lost() {
            // The file watch has said it all; health stays NOT_SERVING.
            return;
        }
        let answered = probe(&state).await;
        crate::metrics::database_up(answered.is_ok());
        match answered {
            Ok(()) => {
                DATABASE_OUTAGE.succeeded();
                if !serving {
                    serving = true;
                    state.database.set_reachable(true);
                    set_all(&health, true).await;
                    tracing::info!("the database answers again; health is SERVING");
                }
            }
            Err(cause) => {
                DATABASE_OUTAGE.failed(&cause);
                if serving {
                    serving = false;
                    state.database.set_reachable(false);
                    set_all(&health, false).await;
                    tracing::warn!(%cause, "the database does not answer; health is NOT_SERVING");
                }
            }
        }
    }
}

/// `SELECT 1` within [`PROBE_TIMEOUT`], outside any trace.
async fn probe(state: &Arc<crate::grpc::CoreState>) -> Result<(), String> {
    let db = state.db.clone();
    let query = async move {
        let backend = db.get_database_backend();
        db.query_one_raw(Statement::from_string(backend, "SELECT 1"))
            .await
    }
    .with_subscriber(tracing::subscriber::NoSubscriber::default());
    match tokio::time::timeout(PROBE_TIMEOUT, query).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(err)) => {
            fault::observe(&err);
            Err(fault::root_cause(&err))
        }
        Err(_) => {
            // Connections waiting on a silent database may never answer: none is used again.
            fault::mark_connections_suspect();
            Err(format!("no answer within {PROBE_TIMEOUT:?}"))
        }
    }
}
