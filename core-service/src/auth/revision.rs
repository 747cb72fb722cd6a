//! When remembered callers must be read again from the database.
//!
//! The cache may answer a login from memory, without a single query, only while nothing
//! that decides who the caller is (password hash, role, custom-role permissions, managed
//! departments, active flag, account URL) has changed since that answer was read.
//! [`AuthRevision`] is the generation counter those answers are stamped with:
//!
//! - this process's own changes bump it as soon as they commit, so the very next request
//!   reads the user again: every caller carries the revision of the authenticator that
//!   let it in, and `db::write` bumps it after committing a change to who a user is;
//! - every change by anyone (another core on the same PostgreSQL, SQL typed by hand) bumps
//!   the `auth_revisions` row through triggers (migration 5), which [`watch`] polls; a
//!   change it sees bumps the counter too. On PostgreSQL the triggers also notify, and
//!   [`listen`] bumps on each notification: another core's change arrives within a round
//!   trip instead of a poll (the poll stays, for notifications lost with a connection);
//! - while the watcher has not read that row recently (database unreachable, watcher
//!   stopped), nothing is answered from memory at all: [`AuthRevision::current`] is `None`.

use std::{
    sync::{
        Arc, Weak,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use lms_migrations::AUTH_REVISION_CHANNEL;
use sea_orm::{
    ConnectionTrait as _, DatabaseConnection, DbBackend, Statement,
    sqlx::{PgPool, postgres::PgListener},
};
use tokio::task::JoinHandle;
use tracing::instrument::WithSubscriber as _;

use super::clock::{Clock, SystemClock};

pub struct AuthRevision {
    generation: AtomicU64,
    /// Milliseconds after `started` of the watcher's last good read, plus one (0: never).
    watched_at: AtomicU64,
    /// Real time in service: the watcher's reads happen in real time, whatever clock the
    /// cache and the throttle are given.
    clock: Arc<dyn Clock>,
    started: Instant,
    /// How old the watcher's last read may be for remembered callers to be trusted.
    trust_for: Duration,
}

impl std::fmt::Debug for AuthRevision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthRevision")
            .field("generation", &self.generation.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl AuthRevision {
    /// `poll_interval` is how often [`watch`] reads the database row; remembered callers are
    /// trusted while its last read is younger than a few intervals.
    pub fn new(poll_interval: Duration) -> Self {
        Self::with_clock(poll_interval, Arc::new(SystemClock))
    }

    /// As [`AuthRevision::new`], with the age of the watcher's last read measured on `clock`.
    pub fn with_clock(poll_interval: Duration, clock: Arc<dyn Clock>) -> Self {
        Self {
            generation: AtomicU64::new(0),
            watched_at: AtomicU64::new(0),
            started: clock.now(),
            clock,
            trust_for: poll_interval * 3 + Duration::from_millis(500),
        }
    }

    /// The generation to stamp what is read from the database now (read it *before*
    /// reading), or `None` when nothing may be answered from memory.
    pub fn current(&self) -> Option<u64> {
        let watched_at = self.watched_at.load(Ordering::Acquire);
        let fresh =
            watched_at > 0 && self.elapsed_millis() <= (watched_at - 1) + self.trust_millis();
        fresh.then(|| self.generation.load(Ordering::Acquire))
    }

    /// Something that decides who a caller is has changed (and is committed).
    pub fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Bumps so far, trusted or not.
    #[cfg(test)]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn mark_watched(&self) {
        let now = self.elapsed_millis() + 1;
        self.watched_at.store(now, Ordering::Release);
    }

    fn elapsed_millis(&self) -> u64 {
        self.clock
            .now()
            .saturating_duration_since(self.started)
            .as_millis() as u64
    }

    fn trust_millis(&self) -> u64 {
        self.trust_for.as_millis() as u64
    }
}

/// Reads the `auth_revisions` row every `interval` and bumps `revision` when it moved,
/// until `revision` is dropped. Only after a read has bumped (or confirmed) the counter is
/// the counter trusted, so a change committed before a read is never missed.
pub async fn watch(revision: Weak<AuthRevision>, db: DatabaseConnection, interval: Duration) {
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
                    revision.bump();
                    seen = Some(now);
                }
                revision.mark_watched();
                crate::db::fault::DATABASE_OUTAGE.succeeded();
                if failing {
                    tracing::info!("reading the auth revision works again");
                    failing = false;
                }
            }
            Err(err) => {
                crate::db::fault::observe(&err);
                if !failing {
                    tracing::warn!(error = %crate::db::fault::root_cause(&err), "cannot read the auth revision; logins are verified against the database until it can");
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
pub fn spawn_watchers(
    revision: &Arc<AuthRevision>,
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

/// Bumps `revision` on every notification of the `auth_revisions` triggers, until
/// `revision` is dropped or the pool closes. A lost connection may have lost
/// notifications, so reconnecting bumps too.
pub async fn listen(revision: Weak<AuthRevision>, pool: PgPool) {
    let bump = || match revision.upgrade() {
        Some(revision) => {
            revision.bump();
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
        if !bump() {
            return;
        }
        // `Ok(None)`: the connection was lost and has been made again. An error (the pool
        // closed, or no new connection) ends this listener; the outer loop decides.
        while let Ok(_notification) = listener.try_recv().await {
            if !bump() {
                return;
            }
        }
        if !pool.is_closed() {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

async fn read_revision(db: &DatabaseConnection) -> Result<i64, sea_orm::DbErr> {
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT revision FROM auth_revisions WHERE id = 1",
        ))
        .await?
        .ok_or_else(|| sea_orm::DbErr::RecordNotFound("the auth_revisions row".into()))?;
    row.try_get::<i64>("", "revision")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::clock::ManualClock;

    #[test]
    fn nothing_is_trusted_before_the_first_read() {
        let revision = AuthRevision::new(Duration::from_millis(100));
        assert_eq!(revision.current(), None);
        revision.mark_watched();
        assert_eq!(revision.current(), Some(0));
    }

    #[test]
    fn a_bump_ends_every_answer_stamped_before_it() {
        let revision = AuthRevision::new(Duration::from_millis(100));
        revision.mark_watched();
        let stamp = revision.current().expect("trusted");
        assert_eq!(revision.current(), Some(stamp));
        revision.bump();
        assert_ne!(revision.current(), Some(stamp));
        assert!(revision.current().is_some(), "still trusted");
    }

    #[test]
    fn a_watcher_that_stopped_reading_is_not_trusted() {
        let clock = ManualClock::default();
        let revision = AuthRevision {
            trust_for: Duration::ZERO,
            ..AuthRevision::with_clock(Duration::ZERO, Arc::new(clock.clone()))
        };
        revision.mark_watched();
        assert!(revision.current().is_some(), "trusted right after a read");
        clock.advance(Duration::from_millis(5));
        assert_eq!(revision.current(), None);
    }
}
