//! One token bucket per key: governor's keyed GCRA limiter, read back as the numbers the
//! RateLimit fields carry. GCRA keeps one timestamp per key (its "theoretical arrival time"),
//! so a key costs a few dozen bytes whatever its traffic, and a key whose bucket has filled
//! up again holds nothing worth keeping ([`Bucket::forget_full`]).

use std::{
    hash::Hash,
    num::NonZeroU32,
    sync::Arc,
    time::{Duration, Instant},
};

use governor::{
    Quota, RateLimiter, middleware::StateInformationMiddleware, state::keyed::DashMapStateStore,
};

use crate::auth::Clock;

/// The core's clock as governor reads time, so tests move buckets by hand like the rest.
#[derive(Clone)]
pub(super) struct BucketClock(pub(super) Arc<dyn Clock>);

impl governor::clock::Clock for BucketClock {
    type Instant = Instant;

    fn now(&self) -> Instant {
        self.0.now()
    }
}

/// A limit: requests a second on average, and how many may come at once (the bucket's size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub per_second: NonZeroU32,
    pub burst: NonZeroU32,
}

/// What the RateLimit fields say about one bucket, as a request leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The bucket's size: requests that may be sent at once (`RateLimit-Limit`).
    pub limit: u32,
    /// Requests that may still be sent at once now (`RateLimit-Remaining`).
    pub remaining: u32,
    /// Whole seconds, rounded up, until the bucket is full again (`RateLimit-Reset`).
    pub reset_seconds: u64,
}

/// A request the bucket had no room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Empty {
    /// How long until the bucket holds a request again.
    pub wait: Duration,
    /// The bucket as it stands: nothing remaining.
    pub budget: Budget,
}

impl Empty {
    /// `Retry-After` in whole seconds: rounded up, at least 1 (the field has no finer unit,
    /// and 0 would invite an immediate retry that is refused again).
    pub fn retry_after_seconds(&self) -> u64 {
        seconds_rounded_up(self.wait).max(1)
    }
}

type Keyed<K> = RateLimiter<K, DashMapStateStore<K>, BucketClock, StateInformationMiddleware>;

/// A token bucket per key, all of one [`Limit`].
pub(super) struct Bucket<K: Hash + Eq + Clone> {
    limiter: Keyed<K>,
    limit: Limit,
    clock: BucketClock,
}

impl<K: Hash + Eq + Clone> Bucket<K> {
    pub(super) fn new(limit: Limit, clock: BucketClock) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        Self {
            limiter: RateLimiter::dashmap_with_clock(quota, clock.clone())
                .with_middleware::<StateInformationMiddleware>(),
            limit,
            clock,
        }
    }

    /// Takes one request out of `key`'s bucket, or says how long until there is one.
    pub(super) fn take(&self, key: &K) -> Result<Budget, Empty> {
        match self.limiter.check_key(key) {
            Ok(state) => {
                let remaining = state.remaining_burst_capacity();
                Ok(Budget {
                    limit: self.limit.burst.get(),
                    remaining,
                    reset_seconds: seconds_rounded_up(
                        self.refill(self.limit.burst.get().saturating_sub(remaining)),
                    ),
                })
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(governor::clock::Clock::now(&self.clock));
                // Full once the wait is over and the other burst - 1 requests have refilled.
                let full_in = wait + self.refill(self.limit.burst.get() - 1);
                Err(Empty {
                    wait,
                    budget: Budget {
                        limit: self.limit.burst.get(),
                        remaining: 0,
                        reset_seconds: seconds_rounded_up(full_in),
                    },
                })
            }
        }
    }

    /// Forgets the keys whose bucket is full again: they are as a new key would be.
    pub(super) fn forget_full(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }

    pub(super) fn limit(&self) -> Limit {
        self.limit
    }

    /// Keys held now.
    pub(super) fn len(&self) -> usize {
        self.limiter.len()
    }

    /// How long `requests` take to flow back into the bucket.
    fn refill(&self, requests: u32) -> Duration {
        Duration::from_nanos(
            (u64::from(requests) * 1_000_000_000).div_ceil(u64::from(self.limit.per_second.get())),
        )
    }
}

fn seconds_rounded_up(duration: Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::ManualClock;

    fn limit(per_second: u32, burst: u32) -> Limit {
        Limit {
            per_second: NonZeroU32::new(per_second).unwrap(),
            burst: NonZeroU32::new(burst).unwrap(),
        }
    }

    fn bucket(per_second: u32, burst: u32) -> (Bucket<u8>, ManualClock) {
        let clock = ManualClock::default();
        let bucket = Bucket::new(
            limit(per_second, burst),
            BucketClock(Arc::new(clock.clone())),
        );
        (bucket, clock)
    }

    fn budget(limit: u32, remaining: u32, reset_seconds: u64) -> Budget {
        Budget {
            limit,
            remaining,
            reset_seconds,
        }
    }

    #[test]
    fn a_full_bucket_lets_its_burst_through_then_refuses_until_one_request_has_refilled() {
        let (bucket, clock) = bucket(1, 3);
        assert_eq!(bucket.take(&1), Ok(budget(3, 2, 1)));
        assert_eq!(bucket.take(&1), Ok(budget(3, 1, 2)));
        assert_eq!(bucket.take(&1), Ok(budget(3, 0, 3)));
        let empty = bucket.take(&1).unwrap_err();
        assert_eq!(empty.wait, Duration::from_secs(1));
        assert_eq!(empty.retry_after_seconds(), 1);
        assert_eq!(empty.budget, budget(3, 0, 3));
        clock.advance(Duration::from_millis(999));
        assert!(
            bucket.take(&1).is_err(),
            "one request refills in a whole second"
        );
        clock.advance(Duration::from_millis(1));
        assert_eq!(bucket.take(&1), Ok(budget(3, 0, 3)));
    }

    #[test]
    fn an_idle_bucket_refills_at_the_rate_up_to_its_size_and_no_further() {
        let (bucket, clock) = bucket(10, 20);
        for _ in 0..20 {
            bucket.take(&1).unwrap();
        }
        assert!(bucket.take(&1).is_err());
        clock.advance(Duration::from_millis(500));
        assert_eq!(bucket.take(&1), Ok(budget(20, 4, 2)));
        clock.advance(Duration::from_secs(3600));
        assert_eq!(bucket.take(&1), Ok(budget(20, 19, 1)));
    }

    #[test]
    fn keys_have_buckets_of_their_own() {
        let (bucket, _clock) = bucket(1, 1);
        assert!(bucket.take(&1).is_ok());
        assert!(bucket.take(&1).is_err());
        assert_eq!(bucket.take(&2), Ok(budget(1, 0, 1)));
    }

    #[test]
    fn sub_second_waits_round_up_to_whole_seconds() {
        let (bucket, _clock) = bucket(1_000, 2);
        bucket.take(&1).unwrap();
        bucket.take(&1).unwrap();
        let empty = bucket.take(&1).unwrap_err();
        assert_eq!(empty.wait, Duration::from_millis(1));
        assert_eq!(empty.retry_after_seconds(), 1);
        assert_eq!(empty.budget, budget(2, 0, 1));
    }

    #[test]
    fn full_buckets_are_forgotten_and_busy_ones_kept() {
        let (bucket, clock) = bucket(1, 5);
        for key in 0..100u8 {
            bucket.take(&key).unwrap();
        }
        clock.advance(Duration::from_millis(500));
        bucket.take(&7).unwrap();
        // governor keeps a key for one emission interval past its refill.
        clock.advance(Duration::from_millis(1_500));
        bucket.forget_full();
        assert_eq!(bucket.len(), 1, "only key 7 has not refilled yet");
        clock.advance(Duration::from_secs(2));
        bucket.forget_full();
        assert_eq!(bucket.len(), 0);
    }
}
