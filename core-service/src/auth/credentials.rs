//! The three credentials every call carries, and the keyed hash that stands for them.

use std::fmt;

use hmac::{Hmac, Mac};
use lms_runtime::Secret;
use sha2::Sha256;

/// Account URL, login and password as the caller sent them. `Debug` never shows the password.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub account_url: String,
    pub email: String,
    pub password: Secret<String>,
}

/// HMAC-SHA256 under a secret made at start-up, so neither the cache nor the throttle
/// ever holds a password, and their keys are worthless outside this process.
///
/// The HMAC is keyed once: every request makes two keys, and keying (hashing the secret's
/// inner and outer pads) would otherwise be two of the five SHA-256 blocks of each.
#[derive(Clone)]
pub struct CredentialKeyer {
    keyed: Hmac<Sha256>,
}

impl fmt::Debug for CredentialKeyer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CredentialKeyer(<secret>)")
    }
}

pub type CredentialKey = [u8; 32];

impl CredentialKeyer {
    pub fn random() -> Self {
        let secret: [u8; 32] = rand::random();
        Self {
            keyed: <Hmac<Sha256> as Mac>::new_from_slice(&secret)
                .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length")),
        }
    }

    /// Key of (account, login, password): what the verified-credentials cache is keyed by.
    pub fn login_key(&self, account_url: &str, email_key: &str, password: &str) -> CredentialKey {
        self.mac(&[
            b"login",
            account_url.as_bytes(),
            email_key.as_bytes(),
            password.as_bytes(),
        ])
    }

    /// Key of (account, login): what the failure throttle is keyed by.
    pub fn throttle_key(&self, account_url: &str, email_key: &str) -> CredentialKey {
        self.mac(&[b"throttle", account_url.as_bytes(), email_key.as_bytes()])
    }

    fn mac(&self, parts: &[&[u8]]) -> CredentialKey {
        let mut mac = self.keyed.clone();
        // Length prefixes keep ("ab", "c") and ("a", "bc") apart.
        for part in parts {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_key_is_not_the_password_and_depends_on_every_part() {
        let keyer = CredentialKeyer::random();
        let key = keyer.login_key("https://a.example.com", "bob@a.example.com", "hunter22");
        let haystack = key.windows(8).any(|w| w == b"hunter22");
        assert!(!haystack, "the password must not appear in the key");
        assert_ne!(
            key,
            keyer.login_key("https://a.example.com", "bob@a.example.com", "hunter23")
        );
        assert_ne!(
            key,
            keyer.login_key("https://b.example.com", "bob@a.example.com", "hunter22")
        );
        assert_ne!(
            key,
            keyer.login_key("https://a.example.com", "bob@a.example.co", "mhunter22")
        );
        assert_eq!(
            key,
            keyer.login_key("https://a.example.com", "bob@a.example.com", "hunter22")
        );
    }

    #[test]
    fn the_cache_key_is_not_an_unkeyed_digest_of_the_password() {
        use sha2::Digest as _;
        let keyer = CredentialKeyer::random();
        let key = keyer.login_key("https://a.example.com", "bob@a.example.com", "hunter22");
        let plain: [u8; 32] = Sha256::digest(b"hunter22").into();
        assert_ne!(
            key, plain,
            "a plain digest could be brute-forced from a dump"
        );
        assert_ne!(
            key,
            keyer.throttle_key("https://a.example.com", "bob@a.example.com")
        );
        assert_eq!(format!("{keyer:?}"), "CredentialKeyer(<secret>)");
    }

    #[test]
    fn keys_depend_on_the_process_secret() {
        let a = CredentialKeyer::random().login_key("u", "e", "p");
        let b = CredentialKeyer::random().login_key("u", "e", "p");
        assert_ne!(a, b);
    }

    #[test]
    fn debug_output_never_shows_the_password() {
        let creds = Credentials {
            account_url: "https://a.example.com".into(),
            email: "bob".into(),
            password: Secret::new("hunter22".into()),
        };
        assert!(!format!("{creds:?}").contains("hunter22"));
    }
}
