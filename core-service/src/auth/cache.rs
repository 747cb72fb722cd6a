//! The verified-credentials cache.
//!
//! An entry says "this password matched this stored hash of this user, at this time",
//! and lives at most the TTL after that verification. It may also carry the caller as
//! read from the database (role, permissions, managed departments), stamped with the
//! [`AuthRevision`](super::revision::AuthRevision) generation of that read: the caller is
//! answered from memory only while that generation holds. Otherwise the user is read
//! again, and the entry is honoured only while the stored hash is the one it was verified
//! against, so a new password always needs a full verification.
//!
//! An entry in use is renewed before it expires: the first request in its last quarter
//! claims the renewal ([`VerifiedCache::claim_renewal`]) and the password is verified again
//! in the background, so a busy login never waits for argon2id at the TTL's end. Each
//! answer still rests on a verification at most a TTL old.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use moka::sync::Cache;
use sha2::{Digest as _, Sha256};
use uuid::Uuid;

use super::{clock::Clock, credentials::CredentialKey};
use crate::access::Caller;

#[derive(Debug, Clone)]
struct Verified {
    user_id: Uuid,
    hash_fingerprint: [u8; 32],
    at: Instant,
    caller: Option<Arc<RememberedCaller>>,
    /// Set once a renewal of this verification has been started (shared by the entry's
    /// copies), so one request starts it however many arrive meanwhile.
    renewal_claimed: Arc<AtomicBool>,
}

#[derive(Debug)]
struct RememberedCaller {
    generation: u64,
    caller: Caller,
}

/// A caller answered from memory.
pub struct Remembered {
    pub caller: Caller,
    /// This answer claimed the entry's renewal: the caller is to verify the password again.
    pub renew: bool,
}

pub struct VerifiedCache {
    entries: Option<Cache<CredentialKey, Verified>>,
    ttl: Duration,
}

impl VerifiedCache {
    /// `capacity` 0 disables the cache.
    pub fn new(capacity: u64, ttl: Duration) -> Self {
        let entries = (capacity > 0).then(|| {
            Cache::builder()
                .max_capacity(capacity)
                .time_to_live(ttl)
                .build()
        });
        Self { entries, ttl }
    }

    pub fn is_enabled(&self) -> bool {
        self.entries.is_some()
    }

    /// The caller remembered under `key`, when it was verified within the TTL and read
    /// from the database at `generation` (the current one; `None` answers nothing); with
    /// it, whether this call claimed the entry's renewal ([`VerifiedCache::claim_renewal`]).
    pub fn caller(
        &self,
        key: &CredentialKey,
        generation: Option<u64>,
        clock: &dyn Clock,
    ) -> Option<Remembered> {
        let generation = generation?;
        let entry = self.entries.as_ref()?.get(key)?;
        let remembered = entry.caller.as_ref()?;
        let age = clock.now().saturating_duration_since(entry.at);
        (age < self.ttl && remembered.generation == generation).then(|| Remembered {
            caller: remembered.caller.clone(),
            renew: self.claims_renewal(&entry, age),
        })
    }

    /// Whether `key` was verified for this user against this stored hash within the TTL.
    pub fn is_verified(
        &self,
        key: &CredentialKey,
        user_id: Uuid,
        password_hash: &str,
        clock: &dyn Clock,
    ) -> bool {
        let Some(entries) = &self.entries else {
            return false;
        };
        let Some(entry) = entries.get(key) else {
            return false;
        };
        let fresh = clock.now().saturating_duration_since(entry.at) < self.ttl;
        if fresh && entry.user_id == user_id && entry.hash_fingerprint == fingerprint(password_hash)
        {
            true
        } else {
            entries.invalidate(key);
            false
        }
    }

    /// Whether the entry under `key` is in the last quarter of its TTL and its renewal is
    /// not yet claimed; `true` claims it: the caller is to verify the password again (and
    /// [`VerifiedCache::remember`] it). A renewal that fails leaves the entry to expire.
    pub fn claim_renewal(&self, key: &CredentialKey, clock: &dyn Clock) -> bool {
        let Some(entry) = self.entries.as_ref().and_then(|entries| entries.get(key)) else {
            return false;
        };
        let age = clock.now().saturating_duration_since(entry.at);
        self.claims_renewal(&entry, age)
    }

    fn claims_renewal(&self, entry: &Verified, age: Duration) -> bool {
        age >= self.ttl - self.ttl / 4
            && age < self.ttl
            && !entry.renewal_claimed.swap(true, Ordering::Relaxed)
    }

    /// Remembers that `key` matched this user's `password_hash`, verified at `verified_at`
    /// (the entry expires `ttl` after that instant, however often it is remembered again).
    /// A caller remembered for the same user and hash is kept: its generation still says
    /// whether it may be answered.
    pub fn remember(
        &self,
        key: CredentialKey,
        user_id: Uuid,
        password_hash: &str,
        verified_at: Instant,
    ) {
        let Some(entries) = &self.entries else {
            return;
        };
        let hash_fingerprint = fingerprint(password_hash);
        let caller = entries
            .get(&key)
            .filter(|entry| entry.user_id == user_id && entry.hash_fingerprint == hash_fingerprint)
            .and_then(|entry| entry.caller);
        entries.insert(
            key,
            Verified {
                user_id,
                hash_fingerprint,
                at: verified_at,
                caller,
                renewal_claimed: Arc::default(),
            },
        );
    }

    /// Attaches `caller`, read from the database at `generation` with this stored
    /// `password_hash`, to the entry under `key`, if that entry is for the same user and
    /// hash (the entry keeps its verification time, so its TTL does not move).
    pub fn remember_caller(
        &self,
        key: &CredentialKey,
        password_hash: &str,
        generation: u64,
        caller: &Caller,
    ) {
        let Some(entries) = &self.entries else {
            return;
        };
        let Some(entry) = entries.get(key) else {
            return;
        };
        if entry.user_id != caller.user_id || entry.hash_fingerprint != fingerprint(password_hash) {
            return;
        }
        let caller = Caller {
            request_id: None,
            ..caller.clone()
        };
        entries.insert(
            *key,
            Verified {
                caller: Some(Arc::new(RememberedCaller { generation, caller })),
                ..entry
            },
        );
    }

    /// Drops what is remembered under `key`.
    pub fn forget(&self, key: &CredentialKey) {
        if let Some(entries) = &self.entries {
            entries.invalidate(key);
        }
    }

    /// Entries held now (after pending evictions have run).
    pub fn len(&self) -> u64 {
        self.entries.as_ref().map_or(0, |entries| {
            entries.run_pending_tasks();
            entries.entry_count()
        })
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn fingerprint(password_hash: &str) -> [u8; 32] {
    Sha256::digest(password_hash.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::clock::ManualClock;

    fn key(n: u32) -> CredentialKey {
        let mut k = [0u8; 32];
        k[..4].copy_from_slice(&n.to_be_bytes());
        k
    }

    #[test]
    fn an_entry_holds_only_for_the_same_user_and_stored_hash() {
        let clock = ManualClock::default();
        let cache = VerifiedCache::new(10, Duration::from_secs(60));
        let user = Uuid::now_v7();
        cache.remember(key(1), user, "$argon2id$old", clock.now());
        assert!(cache.is_verified(&key(1), user, "$argon2id$old", &clock));
        assert!(!cache.is_verified(&key(1), user, "$argon2id$new", &clock));
        // The mismatch dropped the entry.
        assert!(!cache.is_verified(&key(1), user, "$argon2id$old", &clock));
        cache.remember(key(2), user, "$argon2id$old", clock.now());
        assert!(!cache.is_verified(&key(2), Uuid::now_v7(), "$argon2id$old", &clock));
    }

    #[test]
    fn entries_expire_after_the_ttl() {
        let clock = ManualClock::default();
        let cache = VerifiedCache::new(10, Duration::from_secs(60));
        let user = Uuid::now_v7();
        cache.remember(key(1), user, "h", clock.now());
        clock.advance(Duration::from_secs(59));
        assert!(cache.is_verified(&key(1), user, "h", &clock));
        clock.advance(Duration::from_secs(1));
        assert!(!cache.is_verified(&key(1), user, "h", &clock));
    }

    #[test]
    fn the_cache_never_holds_more_than_its_bound() {
        let clock = ManualClock::default();
        let cache = VerifiedCache::new(100, Duration::from_secs(60));
        for n in 0..5_000 {
            cache.remember(key(n), Uuid::nil(), "h", clock.now());
        }
        assert!(cache.len() <= 100, "held {}", cache.len());
    }

    fn caller(user_id: Uuid) -> Caller {
        Caller {
            account_id: Uuid::nil(),
            account_url: "https://acme.example.com".into(),
            user_id,
            role: crate::domain::roles::Role::AccountAdministrator,
            permissions: Default::default(),
            managed_department_ids: vec![],
            request_id: Some("req-1".into()),
            auth_revision: None,
        }
    }

    #[test]
    fn a_remembered_caller_is_answered_only_at_its_generation_and_within_the_ttl() {
        let clock = ManualClock::default();
        let cache = VerifiedCache::new(10, Duration::from_secs(60));
        let user = Uuid::now_v7();
        assert!(cache.caller(&key(1), Some(3), &clock).is_none());
        cache.remember(key(1), user, "h", clock.now());
        // Verified, but not yet read: nothing to answer from memory.
        assert!(cache.caller(&key(1), Some(3), &clock).is_none());
        cache.remember_caller(&key(1), "h", 3, &caller(user));
        let answered = cache
            .caller(&key(1), Some(3), &clock)
            .expect("remembered")
            .caller;
        assert_eq!(answered.user_id, user);
        assert_eq!(answered.request_id, None, "request ids are per request");
        assert!(cache.caller(&key(1), Some(4), &clock).is_none(), "moved on");
        assert!(cache.caller(&key(1), None, &clock).is_none(), "not trusted");
        // Read again later, the entry keeps its verification time: the TTL does not move.
        clock.advance(Duration::from_secs(30));
        cache.remember_caller(&key(1), "h", 4, &caller(user));
        assert!(cache.caller(&key(1), Some(4), &clock).is_some());
        clock.advance(Duration::from_secs(30));
        assert!(cache.caller(&key(1), Some(4), &clock).is_none(), "expired");
    }

    #[test]
    fn a_caller_is_not_attached_to_another_users_or_hashs_entry() {
        let clock = ManualClock::default();
        let cache = VerifiedCache::new(10, Duration::from_secs(60));
        let user = Uuid::now_v7();
        cache.remember(key(1), user, "h", clock.now());
        cache.remember_caller(&key(1), "other hash", 1, &caller(user));
        cache.remember_caller(&key(1), "h", 1, &caller(Uuid::now_v7()));
        cache.remember_caller(&key(2), "h", 1, &caller(user));
        assert!(cache.caller(&key(1), Some(1), &clock).is_none());
        assert!(cache.caller(&key(2), Some(1), &clock).is_none());
    }

    #[test]
    fn a_renewal_is_claimed_once_in_the_last_quarter_of_the_ttl() {
        let clock = ManualClock::default();
        let cache = VerifiedCache::new(10, Duration::from_secs(60));
        let user = Uuid::now_v7();
        assert!(!cache.claim_renewal(&key(1), &clock), "nothing to renew");
        cache.remember(key(1), user, "h", clock.now());
        cache.remember_caller(&key(1), "h", 1, &caller(user));
        clock.advance(Duration::from_secs(44));
        assert!(!cache.claim_renewal(&key(1), &clock), "too early");
        clock.advance(Duration::from_secs(1));
        assert!(cache.claim_renewal(&key(1), &clock));
        assert!(!cache.claim_renewal(&key(1), &clock), "claimed already");
        // The renewal's verification restarts the TTL and keeps the remembered caller.
        let renewed_at = clock.now();
        cache.remember(key(1), user, "h", renewed_at);
        clock.advance(Duration::from_secs(30));
        assert!(cache.caller(&key(1), Some(1), &clock).is_some());
        assert!(!cache.claim_renewal(&key(1), &clock));
        clock.advance(Duration::from_secs(15));
        // A request answered from memory claims it as it is answered, once.
        let answered = cache.caller(&key(1), Some(1), &clock).expect("remembered");
        assert!(answered.renew, "the new entry renews again");
        assert!(!cache.caller(&key(1), Some(1), &clock).unwrap().renew);
        assert!(!cache.claim_renewal(&key(1), &clock));
        // An unrenewed entry still expires, and an expired one is not renewed.
        clock.advance(Duration::from_secs(15));
        assert!(cache.caller(&key(1), Some(1), &clock).is_none());
        cache.remember(key(2), user, "h", clock.now());
        clock.advance(Duration::from_secs(60));
        assert!(!cache.claim_renewal(&key(2), &clock));
    }

    #[test]
    fn a_new_hash_drops_the_remembered_caller() {
        let clock = ManualClock::default();
        let cache = VerifiedCache::new(10, Duration::from_secs(60));
        let user = Uuid::now_v7();
        cache.remember(key(1), user, "h", clock.now());
        cache.remember_caller(&key(1), "h", 1, &caller(user));
        cache.remember(key(1), user, "rehashed", clock.now());
        assert!(cache.caller(&key(1), Some(1), &clock).is_none());
    }

    #[test]
    fn a_zero_capacity_disables_the_cache() {
        let clock = ManualClock::default();
        let cache = VerifiedCache::new(0, Duration::from_secs(60));
        cache.remember(key(1), Uuid::nil(), "h", clock.now());
        assert!(!cache.is_enabled());
        assert!(!cache.is_verified(&key(1), Uuid::nil(), "h", &clock));
    }
}
