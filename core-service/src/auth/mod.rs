//! Who is calling (contract section 2).
//!
//! - [`Authenticator`]: credentials in, [`Caller`](crate::access::Caller) out, or one
//!   uniform UNAUTHENTICATED.
//! - [`password`]: argon2id hashing and verification; [`verifier`]: runs it off the
//!   async runtime with bounded concurrency and load shedding.
//! - [`cache`]: remembers successful verifications under a keyed hash ([`credentials`]).
//! - [`throttle`]: locks a login out after repeated failures.
//! - [`clock`]: injectable time for the cache TTL and the throttle window.

pub mod cache;
pub mod clock;
pub mod credentials;
mod lookup;
pub mod password;
pub mod throttle;
pub mod verifier;

use std::{sync::Arc, time::Duration};

use sea_orm::DatabaseConnection;
use tracing::Instrument as _;

pub use self::{
    cache::VerifiedCache,
    clock::{Clock, ManualClock, SystemClock},
    credentials::{CredentialKeyer, Credentials, email_key},
    password::{PasswordHasher, PasswordPolicy},
    throttle::Throttle,
    verifier::Verifier,
};
use crate::{
    access::Caller,
    error::{ServiceError, ServiceResult},
    import::account_url::normalize_account_url,
};

/// Tunables of authentication; the defaults follow contract section 2.
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
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            password_policy: PasswordPolicy::default(),
            cache_capacity: 10_000,
            cache_ttl: Duration::from_secs(60),
            max_concurrent_verifications: default_verification_slots(),
            verification_queue_timeout: Duration::from_secs(2),
            throttle_max_failures: 10,
            throttle_window: Duration::from_secs(300),
            throttle_capacity: 100_000,
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
    cache: VerifiedCache,
    throttle: Throttle,
    keyer: CredentialKeyer,
    clock: Arc<dyn Clock>,
    /// Verified against when the account or login is unknown, so that costs the same
    /// as a wrong password.
    dummy_hash: String,
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
        Ok(Self {
            db,
            verifier,
            cache: VerifiedCache::new(settings.cache_capacity, settings.cache_ttl),
            throttle: Throttle::new(
                settings.throttle_max_failures,
                settings.throttle_window,
                settings.throttle_capacity,
            ),
            keyer: CredentialKeyer::random(),
            clock,
            dummy_hash,
        })
    }

    pub fn verifier(&self) -> &Verifier {
        &self.verifier
    }

    pub fn cache(&self) -> &VerifiedCache {
        &self.cache
    }

    /// The caller behind `credentials`, or UNAUTHENTICATED (the same for every reason),
    /// or RESOURCE_EXHAUSTED while the login is throttled.
    pub async fn authenticate(
        &self,
        credentials: &Credentials,
        request_id: Option<String>,
    ) -> ServiceResult<Caller> {
        let span = tracing::info_span!("authenticate", otel.name = "authenticate");
        self.authenticate_inner(credentials, request_id).instrument(span).await
    }

    async fn authenticate_inner(
        &self,
        credentials: &Credentials,
        request_id: Option<String>,
    ) -> ServiceResult<Caller> {
        let email_key = email_key(&credentials.email);
        if credentials.account_url.trim().is_empty()
            || email_key.is_empty()
            || credentials.password.is_empty()
        {
            return Err(ServiceError::Unauthenticated);
        }
        let account_url = normalize_account_url(&credentials.account_url).ok();
        let url_key = account_url.as_deref().unwrap_or(credentials.account_url.as_str());
        let throttle_key = self.keyer.throttle_key(url_key, &email_key);
        self.throttle
            .check(&throttle_key, self.clock.now())
            .map_err(|retry_after| ServiceError::Throttled { retry_after })?;

        let login = match &account_url {
            Some(url) => lookup::find_login(&self.db, url, &email_key).await?,
            None => None,
        };
        let login_key = self.keyer.login_key(url_key, &email_key, &credentials.password);
        let verified = match &login {
            Some(login)
                if self.cache.is_verified(
                    &login_key,
                    login.user_id,
                    &login.password_hash,
                    self.clock.as_ref(),
                ) =>
            {
                true
            }
            Some(login) => {
                let ok = self.verifier.verify(&credentials.password, &login.password_hash).await?;
                if ok {
                    self.after_fresh_verification(login, login_key, &credentials.password);
                }
                ok
            }
            None => {
                self.verifier.verify(&credentials.password, &self.dummy_hash).await?;
                false
            }
        };
        let login = match login {
            Some(login) if verified && login.active => login,
            _ => {
                self.throttle.record_failure(throttle_key, self.clock.now());
                return Err(ServiceError::Unauthenticated);
            }
        };
        self.throttle.record_success(&throttle_key);
        lookup::load_caller(&self.db, login, request_id).await
    }

    /// Remembers the verification, and re-hashes a password stored at a lower cost than
    /// the current policy (in the background: the caller does not wait for it).
    fn after_fresh_verification(
        &self,
        login: &lookup::Login,
        login_key: credentials::CredentialKey,
        password: &str,
    ) {
        self.cache.remember(login_key, login.user_id, &login.password_hash, self.clock.as_ref());
        if !self.verifier.hasher().needs_rehash(&login.password_hash) {
            return;
        }
        let (db, verifier) = (self.db.clone(), self.verifier.clone());
        let (user_id, old_hash, password) =
            (login.user_id, login.password_hash.clone(), password.to_owned());
        tokio::spawn(async move {
            let result = async {
                let new_hash = verifier.hash(&password).await?;
                lookup::replace_password_hash(&db, user_id, &old_hash, &new_hash).await
            }
            .await;
            if let Err(err) = result {
                tracing::warn!(%user_id, error = %err, "re-hashing a password failed");
            }
        });
    }
}
