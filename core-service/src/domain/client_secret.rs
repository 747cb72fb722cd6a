//! The secret of an API client chosen by whoever writes an import document (contract section
//! 12: at least 128 random bits). Secrets the service makes are 256 random bits of hex and
//! never pass through here.
//!
//! A secret is stored as a plain SHA-256 (`auth::tokens`), which only holds against guessing
//! when the secret itself is random: hence a floor on its length (32 hex digits are 128 bits)
//! and a refusal of the obvious non-random ones (`aaaa…`, `abab…`). Entropy cannot be measured
//! from one string; these rules refuse the mistakes, not every weak secret.

use super::invalid::{Invalid, Reason};

/// Fewest characters: 128 bits written as hex.
pub const MIN_CLIENT_SECRET_CHARS: usize = 32;
/// Most characters: anything longer is never looked at by the token endpoint.
pub const MAX_CLIENT_SECRET_CHARS: usize = 256;
/// Fewest different characters. 32 random hex digits use 14 on average, fewer than 8 about
/// once in ten million.
pub const MIN_DISTINCT_SECRET_CHARS: usize = 8;

/// A secret that passed the rules; never printed.
pub struct ClientSecret(String);

impl ClientSecret {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let invalid = |reason| Invalid::new("clientSecret", reason);
        if raw.is_empty() {
            return Err(invalid(Reason::Empty));
        }
        if !raw.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(invalid(Reason::NotVisibleAsciiSecret));
        }
        if raw.len() < MIN_CLIENT_SECRET_CHARS {
            return Err(invalid(Reason::TooShort {
                min: MIN_CLIENT_SECRET_CHARS,
            }));
        }
        if raw.len() > MAX_CLIENT_SECRET_CHARS {
            return Err(invalid(Reason::TooLong {
                max: MAX_CLIENT_SECRET_CHARS,
            }));
        }
        let mut seen = [false; 128];
        for byte in raw.bytes() {
            seen[usize::from(byte)] = true;
        }
        if seen.iter().filter(|seen| **seen).count() < MIN_DISTINCT_SECRET_CHARS {
            return Err(invalid(Reason::TooFewDistinctCharacters {
                min: MIN_DISTINCT_SECRET_CHARS,
            }));
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(raw: &str) -> String {
        match ClientSecret::parse(raw) {
            Ok(_) => panic!("accepted {raw:?}"),
            Err(invalid) => invalid.to_string(),
        }
    }

    #[test]
    fn random_secrets_pass_and_obvious_mistakes_do_not() {
        let hex = "9f86d081884c7d659a2feaa0c55ad015";
        assert_eq!(ClientSecret::parse(hex).unwrap().expose(), hex);
        assert!(ClientSecret::parse("Zm9vYmFyYmF6cXV4LXF1dXgtY29yZ2UtZ3JhdWx0").is_ok());
        assert_eq!(
            refusal(&hex[..31]),
            "clientSecret must be at least 32 characters"
        );
        assert_eq!(
            refusal(&"ab".repeat(20)),
            "clientSecret must use at least 8 different characters, as a random secret does"
        );
        assert_eq!(
            refusal(&format!("{hex} x")),
            "clientSecret must consist of visible ASCII characters (no spaces)"
        );
        assert_eq!(
            refusal(&"0123456789".repeat(26)),
            "clientSecret must be at most 256 characters"
        );
        assert_eq!(refusal(""), "clientSecret must not be empty");
        let secret = "é".repeat(40);
        assert!(!refusal(&secret).contains('é'), "a secret is never echoed");
    }
}
