//! One log line per outage, not one per request.
//!
//! When a dependency (the core, seen from the gateway; the database, seen from the core) is
//! down, every request fails the same way. Logging each failure buried the one line that
//! matters (a 10 s core outage once wrote 90,000 error lines). An [`Outage`] logs the first
//! failure at ERROR with its cause, counts the failures that follow, and logs the recovery at
//! INFO with that count and how long it lasted.
//!
//! A success ends an outage only once no failure was seen for the outage's quiet period: when
//! successes come from something else than the failing requests (the core's periodic read of
//! its database, which works while writes fail), the outage is not ended and begun again with
//! every success.

use std::{
    sync::{
        Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

/// The up/down state of one dependency, shared by every request that uses it.
#[derive(Debug)]
pub struct Outage {
    /// What is down, as the log lines name it ("the core", "the database").
    what: &'static str,
    /// How long after the last failure a success ends the outage.
    quiet: Duration,
    down: AtomicBool,
    failures: AtomicU64,
    times: Mutex<Times>,
}

#[derive(Debug, Default)]
struct Times {
    since: Option<Instant>,
    last_failure: Option<Instant>,
}

impl Outage {
    /// `quiet`: how long after its last failure a success ends an outage (zero: at once).
    pub const fn new(what: &'static str, quiet: Duration) -> Self {
        Self {
            what,
            quiet,
            down: AtomicBool::new(false),
            failures: AtomicU64::new(0),
            times: Mutex::new(Times {
                since: None,
                last_failure: None,
            }),
        }
    }

    /// A request failed because the dependency is unreachable. Only the first failure of an
    /// outage is logged; returns whether this one was.
    pub fn failed(&self, cause: &dyn std::fmt::Display) -> bool {
        self.failures.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        if let Ok(mut times) = self.times.lock() {
            times.last_failure = Some(now);
        }
        if self.down.swap(true, Ordering::AcqRel) {
            return false;
        }
        if let Ok(mut times) = self.times.lock() {
            times.since = Some(now);
        }
        tracing::error!(
            cause = %cause,
            "{} is unavailable; requests are answered 503 until it is back (further failures are counted, not logged)",
            self.what
        );
        true
    }

    /// A request got through. Logs the end of an outage once; cheap when there was none.
    pub fn succeeded(&self) {
        if !self.down.load(Ordering::Acquire) {
            return;
        }
        let lasted = {
            let Ok(mut times) = self.times.lock() else {
                return;
            };
            if times
                .last_failure
                .is_some_and(|last| last.elapsed() < self.quiet)
            {
                return;
            }
            if !self.down.swap(false, Ordering::AcqRel) {
                return;
            }
            times.since.take().map(|since| since.elapsed())
        };
        let failures = self.failures.swap(0, Ordering::Relaxed);
        tracing::info!(
            failed_requests = failures,
            lasted_ms = lasted.map(|d| d.as_millis() as u64),
            "{} is available again",
            self.what
        );
    }

    /// Whether the last thing seen was a failure.
    pub fn is_down(&self) -> bool {
        self.down.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Outage;

    #[test]
    fn only_the_first_failure_of_an_outage_is_logged() {
        let outage = Outage::new("the core", Duration::ZERO);
        assert!(outage.failed(&"connection refused"));
        assert!(!outage.failed(&"connection refused"));
        assert!(outage.is_down());
        outage.succeeded();
        assert!(!outage.is_down());
        assert!(
            outage.failed(&"connection reset"),
            "a new outage logs again"
        );
    }

    #[test]
    fn a_success_within_the_quiet_period_does_not_end_the_outage() {
        let outage = Outage::new("the database", Duration::from_secs(60));
        assert!(outage.failed(&"readonly"));
        outage.succeeded();
        assert!(outage.is_down());
        assert!(!outage.failed(&"readonly"), "still the same outage");
    }
}
