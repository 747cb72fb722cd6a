//! Failed-login throttling: after `max_failures` failures for one account and login
//! within `window`, further attempts are refused until the oldest of them leaves the
//! window. Memory is bounded: at most `capacity` logins are tracked, each with at most
//! `max_failures` timestamps.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use moka::sync::Cache;

use super::credentials::CredentialKey;

pub struct Throttle {
    failures: Cache<CredentialKey, Arc<Mutex<VecDeque<Instant>>>>,
    max_failures: usize,
    window: Duration,
}

impl Throttle {
    pub fn new(max_failures: usize, window: Duration, capacity: u64) -> Self {
        Self {
            failures: Cache::builder()
                .max_capacity(capacity)
                .time_to_idle(window)
                .build(),
            max_failures: max_failures.max(1),
            window,
        }
    }

    /// `Err(retry_after)` while `key` is locked out.
    pub fn check(&self, key: &CredentialKey, now: Instant) -> Result<(), Duration> {
        let Some(entry) = self.failures.get(key) else {
            return Ok(());
        };
        let mut times = entry
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.forget_old(&mut times, now);
        if times.len() >= self.max_failures {
            let oldest = times[times.len() - self.max_failures];
            let retry_after = (oldest + self.window).saturating_duration_since(now);
            return Err(retry_after.max(Duration::from_secs(1)));
        }
        Ok(())
    }

    /// Counts a failure; returns whether it is the one that locks the login.
    pub fn record_failure(&self, key: CredentialKey, now: Instant) -> bool {
        let entry = self.failures.get_with(key, Arc::default);
        let mut times = entry
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.forget_old(&mut times, now);
        let before = times.len();
        times.push_back(now);
        while times.len() > self.max_failures {
            times.pop_front();
        }
        before < self.max_failures && times.len() >= self.max_failures
    }

    pub fn record_success(&self, key: &CredentialKey) {
        self.failures.invalidate(key);
    }

    /// Logins tracked now (after pending evictions have run).
    pub fn tracked(&self) -> u64 {
        self.failures.run_pending_tasks();
        self.failures.entry_count()
    }

    fn forget_old(&self, times: &mut VecDeque<Instant>, now: Instant) {
        while times
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= self.window)
        {
            times.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: CredentialKey = [7; 32];

    #[test]
    fn the_eleventh_attempt_within_the_window_is_refused_until_it_passes() {
        let throttle = Throttle::new(10, Duration::from_secs(300), 1000);
        let start = Instant::now();
        for n in 0..10 {
            let now = start + Duration::from_secs(n);
            assert!(throttle.check(&KEY, now).is_ok(), "attempt {n} allowed");
            throttle.record_failure(KEY, now);
        }
        let now = start + Duration::from_secs(10);
        let retry_after = throttle.check(&KEY, now).unwrap_err();
        assert_eq!(retry_after, Duration::from_secs(290));
        assert!(
            throttle
                .check(&KEY, start + Duration::from_secs(299))
                .is_err()
        );
        assert!(
            throttle
                .check(&KEY, start + Duration::from_secs(300))
                .is_ok()
        );
    }

    #[test]
    fn failures_spread_wider_than_the_window_never_lock_out() {
        let throttle = Throttle::new(10, Duration::from_secs(300), 1000);
        let start = Instant::now();
        for n in 0..100 {
            let now = start + Duration::from_secs(n * 31);
            assert!(throttle.check(&KEY, now).is_ok());
            throttle.record_failure(KEY, now);
        }
    }

    #[test]
    fn a_success_clears_the_failures() {
        let throttle = Throttle::new(2, Duration::from_secs(300), 1000);
        let now = Instant::now();
        throttle.record_failure(KEY, now);
        throttle.record_success(&KEY);
        throttle.record_failure(KEY, now);
        assert!(throttle.check(&KEY, now).is_ok());
    }

    #[test]
    fn tracked_logins_are_bounded() {
        let throttle = Throttle::new(10, Duration::from_secs(300), 50);
        let now = Instant::now();
        for n in 0..2_000u32 {
            let mut key = [0u8; 32];
            key[..4].copy_from_slice(&n.to_be_bytes());
            throttle.record_failure(key, now);
        }
        assert!(throttle.tracked() <= 50, "tracked {}", throttle.tracked());
    }
}
