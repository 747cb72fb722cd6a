//! One log line per outage, not one per request.
//!
//! When a dependency (the core, seen from the gateway; the database, seen from the core) is
//! down, every request fails the same way. Logging each failure buried the one line that
//! matters (a 10 s core outage once wrote 90,000 error lines). An [`Outage`] logs the first
//! failure at ERROR with its cause, counts the failures that follow, and logs the recovery at
//! INFO with that count and how long it lasted.

use std::{
    sync::{
        Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Instant,
};

/// The up/down state of one dependency, shared by every request that uses it.
#[derive(Debug)]
pub struct Outage {
    /// What is down, as the log lines name it ("the core", "the database").
    what: &'static str,
    down: AtomicBool,
    failures: AtomicU64,
    since: Mutex<Option<Instant>>,
}

impl Outage {
    pub const fn new(what: &'static str) -> Self {
        Self {
            what,
            down: AtomicBool::new(false),
            failures: AtomicU64::new(0),
            since: Mutex::new(None),
        }
    }

    /// A request failed because the dependency is unreachable. Only the first failure of an
    /// outage is logged; returns whether this one was.
    pub fn failed(&self, cause: &dyn std::fmt::Display) -> bool {
        self.failures.fetch_add(1, Ordering::Relaxed);
        if self.down.swap(true, Ordering::AcqRel) {
            return false;
        }
        if let Ok(mut since) = self.since.lock() {
            *since = Some(Instant::now());
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
        if !self.down.load(Ordering::Acquire) || !self.down.swap(false, Ordering::AcqRel) {
            return;
        }
        let failures = self.failures.swap(0, Ordering::Relaxed);
        let lasted = self
            .since
            .lock()
            .ok()
            .and_then(|mut since| since.take())
            .map(|since| since.elapsed());
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
    use super::Outage;

    #[test]
    fn only_the_first_failure_of_an_outage_is_logged() {
        let outage = Outage::new("the core");
        assert!(outage.failed(&"connection refused"));
        assert!(!outage.failed(&"connection refused"));
        assert!(outage.is_down());
        outage.succeeded();
        assert!(!outage.is_down());
        assert!(outage.failed(&"connection reset"), "a new outage logs again");
    }
}
