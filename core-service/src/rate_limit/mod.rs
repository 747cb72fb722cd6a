//! Request rate limits (`docs/decisions.md`, "Rate limits"): a token bucket per caller (the
//! API client behind a token, or the login of the three headers) and one per account, taken
//! from right after authentication, so that a refusal costs what a remembered login costs
//! and nothing more. A refusal is RESOURCE_EXHAUSTED with `retry-after`; every answer to an
//! authenticated call carries the `ratelimit-*` metadata the gateway turns into the RateLimit
//! fields.
//!
//! - [`bucket`]: one bucket per key (governor's GCRA), and what it tells.
//! - [`fields`]: where a call's budget is written on its answer.
//!
//! The buckets live in this process: with several cores behind one gateway, each core keeps
//! its own, so a caller spread over N cores may make up to N times the limit.

pub mod bucket;
pub mod fields;

use std::{
    num::NonZeroU32,
    sync::{Arc, Weak},
    time::Duration,
};

use uuid::Uuid;

use self::bucket::{Bucket, BucketClock};
pub use self::{
    bucket::{Budget, Limit},
    fields::{BudgetSlot, RateLimitFields},
};
use crate::auth::Clock;

/// Requests a second one caller may make on average, unless configured: above what the bulk
/// work of the specifications needs from one caller (see the decision).
pub const DEFAULT_CALLER_RPS: u32 = 2_000;
/// Requests one caller may make at once, unless configured: two seconds at its rate.
pub const DEFAULT_CALLER_BURST: u32 = 4_000;
/// Requests a second all the callers of one account may make together, unless configured:
/// five callers at their own limit.
pub const DEFAULT_ACCOUNT_RPS: u32 = 10_000;
/// Requests all the callers of one account may make at once, unless configured.
pub const DEFAULT_ACCOUNT_BURST: u32 = 20_000;

/// How often the buckets that have filled up again are forgotten.
const FORGET_FULL_EVERY: Duration = Duration::from_secs(30);

/// The limits, as `lms up` and `lms-core` read them. A rate or a burst of 0 switches that
/// limit off.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct RateLimitSettings {
    /// Requests a second one caller (an API client, or a login of the X-Auth headers) may
    /// make on average; 0 switches the caller limit off.
    #[arg(long = "rate-limit-caller-rps", env = "LMS_RATE_LIMIT_CALLER_RPS", default_value_t = DEFAULT_CALLER_RPS)]
    pub caller_rps: u32,

    /// Requests one caller may make at once (the size of its bucket); 0 switches the caller
    /// limit off.
    #[arg(long = "rate-limit-caller-burst", env = "LMS_RATE_LIMIT_CALLER_BURST", default_value_t = DEFAULT_CALLER_BURST)]
    pub caller_burst: u32,

    /// Requests a second all callers of one account may make together on average; 0 switches
    /// the account limit off.
    #[arg(long = "rate-limit-account-rps", env = "LMS_RATE_LIMIT_ACCOUNT_RPS", default_value_t = DEFAULT_ACCOUNT_RPS)]
    pub account_rps: u32,

    /// Requests all callers of one account may make at once; 0 switches the account limit off.
    #[arg(long = "rate-limit-account-burst", env = "LMS_RATE_LIMIT_ACCOUNT_BURST", default_value_t = DEFAULT_ACCOUNT_BURST)]
    pub account_burst: u32,
}

impl Default for RateLimitSettings {
    fn default() -> Self {
        Self {
            caller_rps: DEFAULT_CALLER_RPS,
            caller_burst: DEFAULT_CALLER_BURST,
            account_rps: DEFAULT_ACCOUNT_RPS,
            account_burst: DEFAULT_ACCOUNT_BURST,
        }
    }
}

impl RateLimitSettings {
    /// No limit at all.
    pub fn off() -> Self {
        Self {
            caller_rps: 0,
            caller_burst: 0,
            account_rps: 0,
            account_burst: 0,
        }
    }

    pub fn caller_limit(&self) -> Option<Limit> {
        limit(self.caller_rps, self.caller_burst)
    }

    pub fn account_limit(&self) -> Option<Limit> {
        limit(self.account_rps, self.account_burst)
    }
}

fn limit(per_second: u32, burst: u32) -> Option<Limit> {
    Some(Limit {
        per_second: NonZeroU32::new(per_second)?,
        burst: NonZeroU32::new(burst)?,
    })
}

/// Whose bucket a request is taken from, besides its account's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallerKey {
    /// A user authenticated by the three headers.
    Login(Uuid),
    /// An API client, through an access token.
    ApiClient(Uuid),
}

/// Which bucket refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exhausted {
    Login,
    ApiClient,
    Account,
}

impl Exhausted {
    /// The metric's `reason`: the caller's own limit or its account's.
    pub fn reason(self) -> &'static str {
        match self {
            Exhausted::Login | Exhausted::ApiClient => "caller",
            Exhausted::Account => "account",
        }
    }

    /// Whose limit it was, for the refusal's message.
    pub fn whose(self) -> &'static str {
        match self {
            Exhausted::Login => "this login",
            Exhausted::ApiClient => "this API client",
            Exhausted::Account => "this account",
        }
    }
}

/// A request refused for its caller's or its account's rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimited {
    pub exhausted: Exhausted,
    /// The limit that refused it.
    pub limit: Limit,
    /// Whole seconds until the request would be let in (`Retry-After`).
    pub retry_after_seconds: u64,
    /// The refusing bucket as it stands (nothing remaining).
    pub budget: Budget,
}

/// The buckets of this core.
pub struct RateLimits {
    caller: Option<Bucket<CallerKey>>,
    account: Option<Bucket<Uuid>>,
}

impl RateLimits {
    /// The buckets of `settings`, on `clock`; the full ones are forgotten every 30 seconds
    /// while the returned value lives.
    pub fn start(settings: &RateLimitSettings, clock: Arc<dyn Clock>) -> Arc<Self> {
        let clock = BucketClock(clock);
        let limits = Arc::new(Self {
            caller: settings
                .caller_limit()
                .map(|limit| Bucket::new(limit, clock.clone())),
            account: settings
                .account_limit()
                .map(|limit| Bucket::new(limit, clock)),
        });
        if limits.caller.is_some() || limits.account.is_some() {
            tokio::spawn(forget_full_buckets(Arc::downgrade(&limits)));
        }
        limits
    }

    /// Takes one request from the caller's bucket, then from its account's. A request its
    /// caller's bucket refuses takes nothing from the account's, so a caller past its own
    /// limit does not eat into what the account's other callers may make. `Ok(None)` when
    /// both limits are off; otherwise the budget of the bucket nearer to empty.
    pub fn admit(&self, caller: CallerKey, account: Uuid) -> Result<Option<Budget>, RateLimited> {
        let caller_budget = match &self.caller {
            Some(bucket) => Some(bucket.take(&caller).map_err(|empty| RateLimited {
                exhausted: match caller {
                    CallerKey::Login(_) => Exhausted::Login,
                    CallerKey::ApiClient(_) => Exhausted::ApiClient,
                },
                limit: bucket.limit(),
                retry_after_seconds: empty.retry_after_seconds(),
                budget: empty.budget,
            })?),
            None => None,
        };
        let account_budget = match &self.account {
            Some(bucket) => Some(bucket.take(&account).map_err(|empty| RateLimited {
                exhausted: Exhausted::Account,
                limit: bucket.limit(),
                retry_after_seconds: empty.retry_after_seconds(),
                budget: empty.budget,
            })?),
            None => None,
        };
        Ok(nearer_to_empty(caller_budget, account_budget))
    }

    /// Keys held now, caller buckets and account buckets.
    pub fn keys_held(&self) -> (usize, usize) {
        (
            self.caller.as_ref().map_or(0, Bucket::len),
            self.account.as_ref().map_or(0, Bucket::len),
        )
    }

    /// Forgets the buckets that have filled up again (a returning caller starts full, as it
    /// would anyway), so the keys held are those of callers active in the last moments.
    pub fn forget_full(&self) {
        if let Some(bucket) = &self.caller {
            bucket.forget_full();
        }
        if let Some(bucket) = &self.account {
            bucket.forget_full();
        }
    }
}

/// The budget the RateLimit fields report when both limits apply: the one with fewer requests
/// remaining, the later reset on a tie (draft-ietf-httpapi-ratelimit-headers-06 reports the
/// policy nearest to refusing).
fn nearer_to_empty(caller: Option<Budget>, account: Option<Budget>) -> Option<Budget> {
    match (caller, account) {
        (Some(caller), Some(account)) => Some(
            if (account.remaining, std::cmp::Reverse(account.reset_seconds))
                < (caller.remaining, std::cmp::Reverse(caller.reset_seconds))
            {
                account
            } else {
                caller
            },
        ),
        (caller, account) => caller.or(account),
    }
}

async fn forget_full_buckets(limits: Weak<RateLimits>) {
    let mut every = tokio::time::interval(FORGET_FULL_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every.tick().await;
    loop {
        every.tick().await;
        let Some(limits) = limits.upgrade() else {
            return;
        };
        limits.forget_full();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::ManualClock;

    fn started(settings: RateLimitSettings) -> (Arc<RateLimits>, ManualClock) {
        let clock = ManualClock::default();
        (RateLimits::start(&settings, Arc::new(clock.clone())), clock)
    }

    fn small() -> RateLimitSettings {
        RateLimitSettings {
            caller_rps: 1,
            caller_burst: 2,
            account_rps: 10,
            account_burst: 3,
        }
    }

    const ACCOUNT: Uuid = Uuid::from_u128(1);
    const OTHER_ACCOUNT: Uuid = Uuid::from_u128(2);
    const ALICE: CallerKey = CallerKey::Login(Uuid::from_u128(10));
    const BOB: CallerKey = CallerKey::ApiClient(Uuid::from_u128(11));
    const CAROL: CallerKey = CallerKey::ApiClient(Uuid::from_u128(12));

    #[tokio::test]
    async fn a_caller_past_its_limit_takes_nothing_from_its_accounts_bucket() {
        let (limits, _clock) = started(small());
        limits.admit(ALICE, ACCOUNT).unwrap();
        limits.admit(ALICE, ACCOUNT).unwrap();
        for _ in 0..100 {
            let refused = limits.admit(ALICE, ACCOUNT).unwrap_err();
            assert_eq!(refused.exhausted, Exhausted::Login);
            assert_eq!(refused.retry_after_seconds, 1);
            assert_eq!(refused.exhausted.reason(), "caller");
        }
        // The account's bucket of 3 gave 2 to Alice and has 1 left for Bob.
        let budget = limits.admit(BOB, ACCOUNT).unwrap().unwrap();
        assert_eq!(budget.remaining, 0);
        let refused = limits.admit(BOB, ACCOUNT).unwrap_err();
        assert_eq!(refused.exhausted, Exhausted::Account);
        assert_eq!(refused.exhausted.reason(), "account");
        // Another account has buckets of its own.
        assert!(limits.admit(CAROL, OTHER_ACCOUNT).is_ok());
    }

    #[tokio::test]
    async fn the_budget_reported_is_the_bucket_nearer_to_empty() {
        let (limits, _clock) = started(RateLimitSettings {
            caller_rps: 1,
            caller_burst: 5,
            account_rps: 1,
            account_burst: 10,
        });
        let budget = limits.admit(ALICE, ACCOUNT).unwrap().unwrap();
        assert_eq!((budget.limit, budget.remaining), (5, 4));
        for _ in 0..7 {
            limits
                .admit(CallerKey::Login(Uuid::new_v4()), ACCOUNT)
                .unwrap();
        }
        // This request leaves the account 1 and Alice 3.
        let budget = limits.admit(ALICE, ACCOUNT).unwrap().unwrap();
        assert_eq!((budget.limit, budget.remaining), (10, 1));
    }

    #[tokio::test]
    async fn a_zero_rate_or_burst_switches_that_limit_off() {
        let (limits, _clock) = started(RateLimitSettings::off());
        for _ in 0..10_000 {
            assert_eq!(limits.admit(ALICE, ACCOUNT), Ok(None));
        }
        let (limits, _clock) = started(RateLimitSettings {
            caller_burst: 0,
            ..small()
        });
        let budget = limits.admit(ALICE, ACCOUNT).unwrap().unwrap();
        assert_eq!(budget.limit, 3, "only the account's limit applies");
        let (limits, _clock) = started(RateLimitSettings {
            account_rps: 0,
            ..small()
        });
        for _ in 0..2 {
            limits.admit(ALICE, ACCOUNT).unwrap();
            limits.admit(BOB, ACCOUNT).unwrap();
            limits.admit(CAROL, ACCOUNT).unwrap();
        }
        assert_eq!(limits.keys_held(), (3, 0));
    }

    #[tokio::test]
    async fn a_refused_caller_is_let_in_again_after_retry_after() {
        let (limits, clock) = started(small());
        limits.admit(ALICE, ACCOUNT).unwrap();
        limits.admit(ALICE, ACCOUNT).unwrap();
        let refused = limits.admit(ALICE, ACCOUNT).unwrap_err();
        clock.advance(Duration::from_secs(refused.retry_after_seconds));
        assert!(limits.admit(ALICE, ACCOUNT).is_ok());
    }

    #[tokio::test]
    async fn callers_gone_quiet_are_forgotten() {
        let (limits, clock) = started(small());
        for n in 0..1_000 {
            limits
                .admit(CallerKey::Login(Uuid::from_u128(n)), Uuid::from_u128(n))
                .unwrap();
        }
        assert_eq!(limits.keys_held(), (1_000, 1_000));
        clock.advance(Duration::from_secs(10));
        limits.forget_full();
        assert_eq!(limits.keys_held(), (0, 0));
    }
}
