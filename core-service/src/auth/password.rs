//! Argon2id password hashing.
//!
//! Hashes are PHC strings that carry their own parameters, so raising the cost in
//! [`PasswordPolicy`] keeps old hashes verifiable; [`PasswordHasher::needs_rehash`]
//! tells when a successful login should store a fresh hash at the current cost.

use argon2::{
    Algorithm, Argon2, Params, PasswordHash, PasswordVerifier, Version,
    password_hash::{PasswordHasher as _, SaltString, rand_core::OsRng},
};

/// Argon2id cost. The default is the OWASP recommendation (m=19 MiB, t=2, p=1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasswordPolicy {
    pub memory_kib: u32,
    pub iterations: u32,
    pub parallelism: u32,
}

impl Default for PasswordPolicy {
    fn default() -> Self {
        Self {
            memory_kib: 19 * 1024,
            iterations: 2,
            parallelism: 1,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("invalid argon2 parameters: {0}")]
    Params(String),
    #[error("not an argon2id PHC string")]
    NotArgon2id,
    #[error("password hashing failed: {0}")]
    Hashing(String),
}

/// Hashes and verifies passwords at one [`PasswordPolicy`].
#[derive(Clone)]
pub struct PasswordHasher {
    policy: PasswordPolicy,
    argon2: Argon2<'static>,
}

impl std::fmt::Debug for PasswordHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordHasher")
            .field("policy", &self.policy)
            .finish()
    }
}

impl PasswordHasher {
    pub fn new(policy: PasswordPolicy) -> Result<Self, PasswordError> {
        let params = Params::new(
            policy.memory_kib,
            policy.iterations,
            policy.parallelism,
            None,
        )
        .map_err(|e| PasswordError::Params(e.to_string()))?;
        Ok(Self {
            policy,
            argon2: Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
        })
    }

    pub fn policy(&self) -> PasswordPolicy {
        self.policy
    }

    /// A new PHC string for `password`, with a random salt. CPU-heavy: call off the async runtime.
    pub fn hash(&self, password: &str) -> Result<String, PasswordError> {
        let salt = SaltString::generate(&mut OsRng);
        self.argon2
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| PasswordError::Hashing(e.to_string()))
    }

    /// Whether `password` matches `phc`, using the parameters stored in `phc`.
    /// A malformed stored hash never matches. CPU-heavy: call off the async runtime.
    pub fn verify(&self, password: &str, phc: &str) -> bool {
        let Ok(parsed) = PasswordHash::new(phc) else {
            return false;
        };
        // The stored parameters win over the policy, so old hashes stay valid.
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    }

    /// Whether `phc` was made with a lower cost than the current policy.
    pub fn needs_rehash(&self, phc: &str) -> bool {
        let Ok(parsed) = PasswordHash::new(phc) else {
            return true;
        };
        let Ok(params) = Params::try_from(&parsed) else {
            return true;
        };
        parsed.algorithm != Algorithm::Argon2id.ident()
            || params.m_cost() < self.policy.memory_kib
            || params.t_cost() < self.policy.iterations
            || params.p_cost() < self.policy.parallelism
    }
}

/// Checks that `phc` is an argon2id PHC string (for imported `passwordHash` values).
pub fn validate_argon2id_phc(phc: &str) -> Result<(), PasswordError> {
    let parsed = PasswordHash::new(phc).map_err(|_| PasswordError::NotArgon2id)?;
    if parsed.algorithm != Algorithm::Argon2id.ident() || parsed.hash.is_none() {
        return Err(PasswordError::NotArgon2id);
    }
    Params::try_from(&parsed).map_err(|_| PasswordError::NotArgon2id)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cheap() -> PasswordHasher {
        PasswordHasher::new(PasswordPolicy {
            memory_kib: 64,
            iterations: 1,
            parallelism: 1,
        })
        .unwrap()
    }

    #[test]
    fn the_default_cost_is_at_least_the_owasp_recommendation() {
        let policy = PasswordPolicy::default();
        assert!(
            policy.memory_kib >= 19 * 1024 && policy.iterations >= 2 && policy.parallelism >= 1
        );
        let phc = PasswordHasher::new(policy).unwrap().hash("pw").unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
    }

    #[test]
    fn a_hash_verifies_its_own_password_only() {
        let hasher = cheap();
        let phc = hasher.hash("correct horse").unwrap();
        assert!(phc.starts_with("$argon2id$"));
        assert!(hasher.verify("correct horse", &phc));
        assert!(!hasher.verify("correct horsE", &phc));
        assert!(!hasher.verify("correct horse", "not a hash"));
    }

    #[test]
    fn hashes_made_at_a_lower_cost_stay_valid_and_ask_for_a_rehash() {
        let old = cheap();
        let phc = old.hash("pw").unwrap();
        let stronger = PasswordHasher::new(PasswordPolicy {
            memory_kib: 128,
            iterations: 2,
            parallelism: 1,
        })
        .unwrap();
        assert!(stronger.verify("pw", &phc));
        assert!(stronger.needs_rehash(&phc));
        assert!(!stronger.needs_rehash(&stronger.hash("pw").unwrap()));
    }

    #[test]
    fn only_argon2id_phc_strings_are_accepted_for_import() {
        let phc = cheap().hash("pw").unwrap();
        assert!(validate_argon2id_phc(&phc).is_ok());
        assert!(validate_argon2id_phc("$2b$12$abcdefghijklmnopqrstuv").is_err());
        assert!(validate_argon2id_phc(&phc.replace("argon2id", "argon2i")).is_err());
    }
}
