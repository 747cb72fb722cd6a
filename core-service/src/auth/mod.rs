//! Who is calling (contract section 2).
//!
//! - [`Authenticator`]: credentials in, [`Caller`] out, or one
//!   uniform UNAUTHENTICATED. A cached login is answered from memory, without a query,
//!   while no change to users has been seen since it was read ([`revision`]); after one,
//!   it costs one indexed query (plus one for the role details of scoped roles) and no
//!   verification. Everything else costs one full verification, against a dummy hash
//!   when the account or login is unknown.
//!   Verifications of one account+login take turns, so concurrent guesses cannot outrun
//!   the throttle; attempts on a throttled login are held a moment before their 429.
//! - [`password`]: argon2id hashing and verification; [`verifier`]: runs it off the
//!   async runtime with bounded concurrency and load shedding.
//! - [`cache`]: remembers successful verifications, and the callers they let in, under a
//!   keyed hash ([`credentials`]); [`revision`] says when those callers must be read again.
//! - [`throttle`]: locks a login out after repeated failures.
//! - [`clock`]: injectable time for the cache TTL and the throttle window.
//! - [`tokens`]: API clients' secrets and access tokens (contract section 12), throttled
//!   per client like logins.

pub mod cache;
pub mod clock;
pub mod credentials;
mod lookup;
pub mod password;
pub mod revision;
mod sign_ins;
pub mod throttle;
pub mod tokens;
pub mod verifier;

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use sea_orm::DatabaseConnection;
use tokio::sync::Semaphore;
use tracing::Instrument as _;

pub use self::{
    cache::VerifiedCache,
    clock::{Clock, ManualClock, SystemClock},
    credentials::{CredentialKeyer, Credentials},
    password::{PasswordHasher, PasswordPolicy},
    revision::AuthRevision,
    throttle::Throttle,
    verifier::Verifier,
};
use crate::{
    access::Caller,
    db::auth_revision,
    domain::{
        account_url::{normalize_account_url, without_scheme},
        login::email_key,
    },
    error::{ServiceError, ServiceResult},
};

/// Tunables of authentication; the defaults follow contract section 2.
/// Entries of the verified-credentials cache unless configured.
pub const DEFAULT_CACHE_CAPACITY: u64 = 10_000;
/// How long a request waits for a verification slot before it is shed, unless configured.
pub const DEFAULT_VERIFICATION_QUEUE_TIMEOUT: Duration = Duration::from_secs(2);
/// How often other processes' changes to users are looked for, unless configured.
pub const DEFAULT_REVISION_POLL_INTERVAL: Duration = Duration::from_millis(100);
/// How long an attempt on a throttled login is held before its answer, unless configured.
pub const DEFAULT_THROTTLED_REPLY_DELAY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone)]
pub struct AuthSettings {
    pub password_policy: PasswordPolicy,
    /// Entries of the verified-credentials cache; 0 disables it.
    pub cache_capacity: u64,
    pub cache_ttl: Duration,
    pub max_concurrent_verifications: usize,
    pub verification_queue_timeout: Duration,
    pub throttle_max_failures: usize,
    pub throttle_window: Duration,
    pub throttle_capacity: u64,
    /// How often the `auth_revisions` row is read for changes made by other processes
    /// (their changes apply within about this long; this process's own at once).
    pub revision_poll_interval: Duration,
    /// How long an attempt on a throttled login is held before its 429, so a client
    /// hammering a locked login is slowed to a trickle instead of being answered as fast
    /// as it can send (each answer costs the gateway and the core a request's work).
    pub throttled_reply_delay: Duration,
    /// Throttled attempts held at once; beyond that they are answered at once, so the
    /// memory held stays bounded.
    pub max_held_throttled_replies: usize,
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            password_policy: PasswordPolicy::default(),
            cache_capacity: DEFAULT_CACHE_CAPACITY,
            cache_ttl: Duration::from_secs(60),
            max_concurrent_verifications: default_verification_slots(),
            verification_queue_timeout: DEFAULT_VERIFICATION_QUEUE_TIMEOUT,
            throttle_max_failures: 10,
            throttle_window: Duration::from_secs(300),
            throttle_capacity: 100_000,
            revision_poll_interval: DEFAULT_REVISION_POLL_INTERVAL,
            throttled_reply_delay: DEFAULT_THROTTLED_REPLY_DELAY,
            max_held_throttled_replies: 1_024,
        }
    }
}

/// Half the cores: verification floods then leave the other half to cached requests.
pub fn default_verification_slots() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}

pub struct Authenticator {
    db: DatabaseConnection,
    verifier: Verifier,
    cache: Arc<VerifiedCache>,
    revision: Arc<AuthRevision>,
    /// Poll (and on PostgreSQL listen for) the `auth_revisions` row; stopped when the
    /// authenticator is dropped.
    revision_watchers: Vec<tokio::task::JoinHandle<()>>,
    answered_from_memory: AtomicU64,
    /// Background renewals that have ended (entry renewed, dropped, or left to expire).
    renewals_ended: Arc<AtomicU64>,
    throttle: Throttle,
    keyer: CredentialKeyer,
    clock: Arc<dyn Clock>,
    /// Verified against when the account or login is unknown, so that costs the same
    /// as a wrong password.
    dummy_hash: String,
    throttled_reply_delay: Duration,
    held_throttled_replies: Semaphore,
    turns: LoginTurns,
    sign_ins: sign_ins::SignIns,
}

impl Authenticator {
    pub async fn new(
        db: DatabaseConnection,
        settings: &AuthSettings,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Self> {
        let hasher = PasswordHasher::new(settings.password_policy)?;
        let verifier = Verifier::new(
            hasher,
            settings.max_concurrent_verifications,
            settings.verification_queue_timeout,
        );
        let dummy_hash = verifier
            .hash("dummy password for unknown logins")
            .await
            .map_err(|e| anyhow::anyhow!("cannot make the dummy hash: {e}"))?;
        let revision = Arc::new(AuthRevision::new(settings.revision_poll_interval));
        let revision_watchers =
            auth_revision::spawn_watchers(&revision, &db, settings.revision_poll_interval);
        Ok(Self {
            sign_ins: sign_ins::SignIns::new(db.clone()),
            db,
            verifier,
            revision,
            revision_watchers,
            answered_from_memory: AtomicU64::new(0),
            renewals_ended: Arc::default(),
            cache: Arc::new(VerifiedCache::new(
                settings.cache_capacity,
                settings.cache_ttl,
            )),
            throttle: Throttle::new(
                settings.throttle_max_failures,
                settings.throttle_window,
                settings.throttle_capacity,
            ),
            keyer: CredentialKeyer::random(),
            clock,
            dummy_hash,
            throttled_reply_delay: settings.throttled_reply_delay,
            held_throttled_replies: Semaphore::new(settings.max_held_throttled_replies),
            turns: LoginTurns::new(LOGIN_TURN_STRIPES),
        })
    }

    pub fn verifier(&self) -> &Verifier {
        &self.verifier
    }

    pub fn cache(&self) -> &VerifiedCache {
        &self.cache
    }

    /// What a change made outside any request (the scheduler's) tells, so that the callers
    /// this process remembers are read again at once.
    pub fn revision(&self) -> Arc<AuthRevision> {
        self.revision.clone()
    }

    /// Stops watching the `auth_revisions` row (before the database closes at shutdown);
    /// from then on nothing is answered from memory once the last poll grows old.
    pub fn stop_watching(&self) {
        for watcher in &self.revision_watchers {
            watcher.abort();
        }
    }

    /// Logins answered from memory, without a database query, since start.
    pub fn answered_from_memory(&self) -> u64 {
        self.answered_from_memory.load(Ordering::Relaxed)
    }

    /// Background renewals of remembered logins that have ended since start, their outcome
    /// applied to the cache: a verification's count moves when it starts, this when the
    /// cache holds its outcome.
    pub fn renewals_ended(&self) -> u64 {
        self.renewals_ended.load(Ordering::Acquire)
    }

    /// The caller behind `credentials`, or UNAUTHENTICATED (the same for every reason),
    /// or RESOURCE_EXHAUSTED while the login is throttled.
    pub async fn authenticate(
        &self,
        credentials: &Credentials,
        request_id: Option<String>,
    ) -> ServiceResult<Caller> {
        let span = tracing::info_span!("authenticate", otel.name = "authenticate");
        let caller = self
            .authenticate_inner(credentials, request_id)
            .instrument(span)
            .await?;
        self.sign_ins.record(caller.user_id);
        Ok(caller)
    }

    async fn authenticate_inner(
        &self,
        credentials: &Credentials,
        request_id: Option<String>,
    ) -> ServiceResult<Caller> {
        let email_key = email_key(&credentials.email);
        if credentials.account_url.trim().is_empty()
            || email_key.is_empty()
            || credentials.password.expose().is_empty()
        {
            return Err(ServiceError::Unauthenticated);
        }
        let account_url = normalize_account_url(&credentials.account_url).ok();
        // One key per account whichever scheme names it, so switching schemes neither doubles
        // the throttle's allowance nor misses the cache.
        let url_key = account_url
            .as_deref()
            .map_or(credentials.account_url.as_str(), without_scheme);
        let throttle_key = self.keyer.throttle_key(url_key, &email_key);
        self.refuse_if_throttled(&throttle_key)
            .await
            .inspect_err(|err| log_refusal(err, credentials))?;
        let login_key = self
            .keyer
            .login_key(url_key, &email_key, credentials.password.expose());

        // The hot path: verified within the TTL, and nothing about users changed since.
        let generation = self.revision.current();
        if let Some(remembered) = self
            .cache
            .caller(&login_key, generation, self.clock.as_ref())
        {
            self.throttle.record_success(&throttle_key);
            self.answered_from_memory.fetch_add(1, Ordering::Relaxed);
            crate::metrics::credential_cache(true);
            if remembered.renew {
                self.renew(login_key, account_url.as_deref(), &email_key, credentials);
            }
            return Ok(Caller {
                request_id,
                ..remembered.caller
            });
        }

        let login = match &account_url {
            Some(url) => lookup::find_login(&self.db, url, &email_key).await?,
            None => None,
        };
        let login = match login {
            // Verified before, but read again: one query and no verification. Only an
            // active user is answered from the cache; anyone else pays a full
            // verification, so a refusal costs the same whatever its reason.
            Some(login) if self.is_cached(&login, &login_key) => {
                crate::metrics::credential_cache(true);
                if self.cache.claim_renewal(&login_key, self.clock.as_ref()) {
                    self.renew(login_key, account_url.as_deref(), &email_key, credentials);
                }
                login
            }
            login => {
                crate::metrics::credential_cache(false);
                self.verify(credentials, login, login_key, throttle_key)
                    .await
                    .inspect_err(|err| log_refusal(err, credentials))?
            }
        };
        self.throttle.record_success(&throttle_key);
        let password_hash = login.password_hash.clone();
        let caller = lookup::load_caller(&self.db, login, request_id, &self.revision).await?;
        if let Some(generation) = generation {
            self.cache
                .remember_caller(&login_key, &password_hash, generation, &caller);
        }
        Ok(caller)
    }

    fn is_cached(&self, login: &lookup::Login, login_key: &credentials::CredentialKey) -> bool {
        login.active
            && self.cache.is_verified(
                login_key,
                login.user_id,
                &login.password_hash,
                self.clock.as_ref(),
            )
    }

    /// Verifies the password again in the background, for a cache entry under `login_key`
    /// whose renewal this request claimed ([`VerifiedCache::claim_renewal`]): the lookup and
    /// verification of a login the cache does not know, whose outcome only updates the
    /// cache. A request that holds a verification younger than the TTL so never waits for
    /// argon2id; a password that no longer matches drops the entry. Nothing is counted
    /// against the login: the request that started it was let in by a valid verification.
    fn renew(
        &self,
        login_key: credentials::CredentialKey,
        account_url: Option<&str>,
        email_key: &str,
        credentials: &Credentials,
    ) {
        let Some(account_url) = account_url else {
            return;
        };
        let (account_url, email_key) = (account_url.to_owned(), email_key.to_owned());
        let (db, verifier) = (self.db.clone(), self.verifier.clone());
        let (cache, clock) = (self.cache.clone(), self.clock.clone());
        let password = credentials.password.clone();
        let renewed = cache.clone();
        let ended = self.renewals_ended.clone();
        let renewal = async move {
            let login = lookup::find_login(&db, &account_url, &email_key).await?;
            let Some(login) = login.filter(|login| login.active) else {
                return Ok(false);
            };
            let verified_at = clock.now();
            let matches = verifier
                .verify_in_background(password.expose(), &login.password_hash)
                .await?;
            if matches {
                renewed.remember(login_key, login.user_id, &login.password_hash, verified_at);
            }
            Ok::<_, ServiceError>(matches)
        };
        tokio::spawn(
            async move {
                match renewal.await {
                    Ok(true) => {}
                    Ok(false) => cache.forget(&login_key),
                    Err(error) => tracing::info!(
                        %error,
                        "renewing a remembered login failed; it expires at its TTL instead"
                    ),
                }
                ended.fetch_add(1, Ordering::Release);
            }
            .in_current_span(),
        );
    }

    /// A full argon2id verification, against the dummy hash when there is no such login.
    ///
    /// Verifications of one account and login take turns: each failure is counted before
    /// the next attempt is let through, so concurrent guesses cannot slip past the
    /// throttle (without turns, N parallel guesses would all pass its check before any
    /// failure was recorded), and a burst of logins with the same credentials verifies
    /// once (the others find the cache warm when their turn comes). Waiting for the turn
    /// and for a verification slot together is bounded by the queue timeout.
    async fn verify(
        &self,
        credentials: &Credentials,
        login: Option<lookup::Login>,
        login_key: credentials::CredentialKey,
        throttle_key: credentials::CredentialKey,
    ) -> ServiceResult<lookup::Login> {
        let deadline = tokio::time::Instant::now() + self.verifier.queue_timeout();
        let _turn = loop {
            let turn = tokio::time::timeout_at(deadline, self.turns.of(&throttle_key).lock())
                .await
                .map_err(|_| ServiceError::Overloaded)?;
            // Failures counted while this attempt waited may have locked the login.
            if self.throttle.check(&throttle_key, self.clock.now()).is_ok() {
                break turn;
            }
            drop(turn);
            self.refuse_if_throttled(&throttle_key).await?;
        };
        let login = match login {
            // The same credentials were verified while this attempt waited its turn.
            Some(login) if self.is_cached(&login, &login_key) => return Ok(login),
            login => login,
        };
        let phc = login
            .as_ref()
            .map_or(self.dummy_hash.as_str(), |login| &login.password_hash);
        let verified_at = self.clock.now();
        let matches = self
            .verifier
            .verify_until(credentials.password.expose(), phc, deadline)
            .await?;
        match login {
            Some(login) if matches && login.active => {
                self.after_fresh_verification(
                    &login,
                    login_key,
                    verified_at,
                    credentials.password.expose(),
                );
                Ok(login)
            }
            _ => {
                self.cache.forget(&login_key);
                Err(self.refuse(throttle_key, &credentials.account_url, &credentials.email))
            }
        }
    }

    /// RESOURCE_EXHAUSTED while the login is throttled, after holding the attempt for a
    /// while (a tarpit) unless too many are held already. Checked again after the hold:
    /// the window may have passed meanwhile, and Retry-After counts from the answer.
    async fn refuse_if_throttled(
        &self,
        throttle_key: &credentials::CredentialKey,
    ) -> ServiceResult<()> {
        if self.throttle.check(throttle_key, self.clock.now()).is_ok() {
            return Ok(());
        }
        if let Ok(_held) = self.held_throttled_replies.try_acquire() {
            tokio::time::sleep(self.throttled_reply_delay).await;
        }
        self.throttle
            .check(throttle_key, self.clock.now())
            .map_err(|retry_after| ServiceError::Throttled { retry_after })
    }

    /// Counts a failed attempt against the login and returns the one uniform refusal.
    fn refuse(
        &self,
        throttle_key: credentials::CredentialKey,
        account_url: &str,
        login: &str,
    ) -> ServiceError {
        if self.throttle.record_failure(throttle_key, self.clock.now()) {
            tracing::warn!(
                account_url = clip(account_url.trim()),
                login = clip(login.trim()),
                "login locked: too many failed attempts; further attempts are refused (429) \
                 until the window passes"
            );
        }
        ServiceError::Unauthenticated
    }

    /// Remembers the verification, and re-hashes a password stored at a lower cost than
    /// the current policy (in the background: the caller does not wait for it). The new
    /// hash is remembered before it is stored, so the login stays cached across the switch.
    fn after_fresh_verification(
        &self,
        login: &lookup::Login,
        login_key: credentials::CredentialKey,
        verified_at: Instant,
        password: &str,
    ) {
        self.cache
            .remember(login_key, login.user_id, &login.password_hash, verified_at);
        if !self.verifier.hasher().needs_rehash(&login.password_hash) {
            return;
        }
        // Verifications of a login take turns and the first one warms the cache, so a burst
        // of logins re-hashes once; should two race anyway, only the first store wins.
        let user_id = login.user_id;
        let (db, verifier, cache) = (self.db.clone(), self.verifier.clone(), self.cache.clone());
        let (old_hash, password) = (login.password_hash.clone(), password.to_owned());
        tokio::spawn(async move {
            let result = async {
                let new_hash = verifier.hash(&password).await?;
                cache.remember(login_key, user_id, &new_hash, verified_at);
                lookup::replace_password_hash(&db, user_id, &old_hash, &new_hash).await
            }
            .await;
            if let Err(err) = result {
                tracing::warn!(%user_id, error = %err, "re-hashing a password failed");
            }
        });
    }
}

/// Refused logins are logged, so an operator sees guessing (on the gateway or straight on
/// the gRPC port): the account URL and the login, never the password. Attempts on a locked
/// login are only counted (the lockout itself is logged once, in `refuse`).
fn log_refusal(err: &ServiceError, credentials: &Credentials) {
    if matches!(err, ServiceError::Unauthenticated) {
        crate::metrics::login_failed();
        tracing::info!(
            account_url = clip(credentials.account_url.trim()),
            login = clip(credentials.email.trim()),
            "login refused: wrong or unknown credentials"
        );
    }
}

/// At most 256 bytes of what a caller sent, cut at a character boundary, for a log line.
pub(crate) fn clip(text: &str) -> &str {
    const MAX: usize = 256;
    if text.len() <= MAX {
        return text;
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl Drop for Authenticator {
    fn drop(&mut self) {
        self.stop_watching();
    }
}

/// Stripes of [`LoginTurns`]: logins that share one merely wait for each other's
/// verification, which the verification slots serialize anyway.
const LOGIN_TURN_STRIPES: usize = 4_096;

/// One lock per stripe of account+login keys (fixed memory, whatever the number of logins).
struct LoginTurns(Box<[tokio::sync::Mutex<()>]>);

impl LoginTurns {
    fn new(stripes: usize) -> Self {
        Self(
            (0..stripes.max(1))
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
        )
    }

    fn of(&self, throttle_key: &credentials::CredentialKey) -> &tokio::sync::Mutex<()> {
        // The key is an HMAC output: any eight of its bytes are uniformly spread.
        let mut head = [0u8; 8];
        head.copy_from_slice(&throttle_key[..8]);
        &self.0[(u64::from_le_bytes(head) % self.0.len() as u64) as usize]
    }
}
