//! Runs argon2id off the async runtime, a bounded number at a time.
//!
//! A verification waits for a slot at most `queue_timeout`, then the request is shed
//! (UNAVAILABLE, HTTP 503): a flood of wrong passwords can fill the slots, but cannot
//! grow an unbounded queue, and the CPU it burns is capped by the slot count, which
//! leaves room for requests served from the verified-credentials cache.

use std::{sync::Arc, time::Duration};

use tokio::sync::Semaphore;

use super::password::PasswordHasher;
use crate::error::{ServiceError, ServiceResult};

#[derive(Clone)]
pub struct Verifier {
    hasher: PasswordHasher,
    slots: Arc<Semaphore>,
    queue_timeout: Duration,
}

impl Verifier {
    pub fn new(hasher: PasswordHasher, max_concurrent: usize, queue_timeout: Duration) -> Self {
        Self { hasher, slots: Arc::new(Semaphore::new(max_concurrent.max(1))), queue_timeout }
    }

    pub fn hasher(&self) -> &PasswordHasher {
        &self.hasher
    }

    /// Whether `password` matches the PHC string `phc`.
    pub async fn verify(&self, password: &str, phc: &str) -> ServiceResult<bool> {
        let (password, phc) = (password.to_owned(), phc.to_owned());
        let hasher = self.hasher.clone();
        self.run(move || hasher.verify(&password, &phc)).await
    }

    /// A new hash of `password` at the current policy.
    pub async fn hash(&self, password: &str) -> ServiceResult<String> {
        let password = password.to_owned();
        let hasher = self.hasher.clone();
        self.run(move || hasher.hash(&password)).await?.map_err(|e| ServiceError::Unexpected(e.into()))
    }

    async fn run<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> ServiceResult<T> {
        let permit = tokio::time::timeout(self.queue_timeout, self.slots.clone().acquire_owned())
            .await
            .map_err(|_| ServiceError::Overloaded)?
            .map_err(|_| ServiceError::Overloaded)?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            work()
        })
        .await
        .map_err(|e| ServiceError::Unexpected(anyhow::anyhow!("password task failed: {e}")))
    }
}
