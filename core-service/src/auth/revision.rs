//! When remembered callers must be read again from the database.
//!
//! The cache may answer a login from memory, without a single query, only while nothing
//! that decides who the caller is (password hash, role, custom-role permissions, managed
//! departments, active flag, account URL) has changed since that answer was read.
//! [`AuthRevision`] is the generation counter those answers are stamped with:
//!
//! - this process's own changes bump it as soon as they commit, so the very next request
//!   reads the user again: every caller carries the revision of the authenticator that
//!   let it in, and `service::write` bumps it after committing a change to who a user is;
//! - every change by anyone (another core on the same PostgreSQL, SQL typed by hand) bumps
//!   the `auth_revisions` row through triggers (migration 5), which the watchers of
//!   `db::auth_revision` read; a change they see bumps the counter too;
//! - while the watcher has not read that row recently (database unreachable, watcher
//!   stopped), nothing is answered from memory at all: [`AuthRevision::current`] is `None`.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use super::clock::{Clock, SystemClock};
use crate::{access::UsersChanged, db::auth_revision::Revision};

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
    /// `poll_interval` is how often the watchers read the database row; remembered callers are
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

/// The watchers of the `auth_revisions` row bump the counter on a change, and trust it again
/// after each read.
impl Revision for AuthRevision {
    fn changed(&self) {
        self.bump();
    }

    fn watched(&self) {
        self.mark_watched();
    }
}

/// The revision's own callers' view of it: a committed change to who a user is.
impl UsersChanged for AuthRevision {
    fn users_changed(&self) {
        self.bump();
    }
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
