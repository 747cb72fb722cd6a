//! Watching the `auth_revisions` row, which triggers bump on every change to who a caller
//! is (migration 5): [`watch`] polls it, and on PostgreSQL [`listen`] also takes the
//! triggers' notifications, so another core's change arrives within a round trip instead of
//! a poll (the poll stays, for notifications lost with a connection).
//!
//! What a change means is the watched [`Revision`]'s to decide (the authenticator's counter,
//! `auth::AuthRevision`); this module only reads the database and tells it.

use std::{
    sync::{Arc, Weak},
    time::Duration,
};

use lms_migrations::AUTH_REVISION_CHANNEL;
use sea_orm::{
    ConnectionTrait as _, DatabaseConnection, DbBackend, DbErr, Statement,
    sqlx::{PgPool, postgres::PgListener},
};
use tokio::task::JoinHandle;
use tracing::instrument::WithSubscriber as _;

use super::fault;

/// What the watchers tell.
pub trait Revision: Send + Sync + 'static {
    /// Something that decides who a caller is has changed, or may have.
    fn changed(&self);
    /// The row was just read, and any change up to that read was told.
    fn watched(&self);
}

/// Reads the `auth_revisions` row every `interval` and tells `revision` when it moved, until
/// `revision` is dropped. [`Revision::watched`] follows every read, after the change it saw
/// was told, so a change committed before a read is never missed.
pub async fn watch<R: Revision>(revision: Weak<R>, db: DatabaseConnection, interval: Duration) {
    let mut seen: Option<i64> = None;
    let mut failing = false;
    loop {
        // Background work makes no spans: a trace every poll would bury the requests' traces.
        let read = read_revision(&db)
            .with_subscriber(tracing::subscriber::NoSubscriber::default())
            .await;
        let Some(revision) = revision.upgrade() else {
            return;
        };
        match read {
            Ok(now) => {
                if seen != Some(now) {
                    revision.changed();
                    seen = Some(now);
                }
                revision.watched();
                fault::DATABASE_OUTAGE.succeeded();
                if failing {
                    tracing::info!("reading the auth revision works again");
                    failing = false;
                }
            }
            Err(err) => {
                fault::observe(&err);
                if !failing {
                    tracing::warn!(error = %fault::root_cause(&err), "cannot read the auth revision; logins are verified against the database until it can");
                    failing = true;
                }
            }
        }
        drop(revision);
        tokio::time::sleep(interval).await;
    }
}

/// Starts [`watch`], and on PostgreSQL [`listen`], on the current runtime; the tasks end
/// when `revision` is dropped or the handles are aborted.
pub fn spawn_watchers<R: Revision>(
    revision: &Arc<R>,
    db: &DatabaseConnection,
    interval: Duration,
) -> Vec<JoinHandle<()>> {
    let mut tasks = vec![tokio::spawn(watch(
        Arc::downgrade(revision),
        db.clone(),
        interval,
    ))];
    if db.get_database_backend() == DbBackend::Postgres {
        let pool = db.get_postgres_connection_pool().clone();
        tasks.push(tokio::spawn(listen(Arc::downgrade(revision), pool)));
    }
    tasks
}

/// Tells `revision` of every notification of the `auth_revisions` triggers, until
/// `revision` is dropped or the pool closes. A lost connection may have lost
/// notifications, so reconnecting tells too.
pub async fn listen<R: Revision>(revision: Weak<R>, pool: PgPool) {
    let changed = || match revision.upgrade() {
        Some(revision) => {
            revision.changed();
            true
        }
        None => false,
    };
    let mut failing = false;
    while !pool.is_closed() {
        let connected = async {
            let mut listener = PgListener::connect_with(&pool).await?;
            listener.listen(AUTH_REVISION_CHANNEL).await?;
            Ok::<_, sea_orm::sqlx::Error>(listener)
        };
        let mut listener = match connected.await {
            Ok(listener) => listener,
            Err(err) => {
                if !failing {
                    tracing::warn!(error = %err, "cannot listen for auth revision notifications; relying on the poll");
                    failing = true;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        failing = false;
        // Changes committed before LISTEN took effect were not notified.
        if !changed() {
            return;
        }
        // `Ok(None)`: the connection was lost and has been made again. An error (the pool
        // closed, or no new connection) ends this listener; the outer loop decides.
        while let Ok(_notification) = listener.try_recv().await {
            if !changed() {
                return;
            }
        }
        if !pool.is_closed() {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

async fn read_revision(db: &DatabaseConnection) -> Result<i64, DbErr> {
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT revision FROM auth_revisions WHERE id = 1",
        ))
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("the auth_revisions row".into()))?;
    row.try_get::<i64>("", "revision")
}
