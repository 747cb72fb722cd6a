//! The two signatures of a delivery (section 8 of `docs/spec/webhooks.md`), computed with
//! the subscriber's secret over the body bytes exactly as sent.

use hmac::{Hmac, Mac as _};
use sha2::{Digest as _, Sha256};

/// `X-Hub-Signature`: lower-case hex of SHA-256 over the body followed by the secret
/// (iSpring's documented construction, for existing receivers).
pub fn hub_signature(body: &[u8], secret: &str) -> String {
    let mut digest = Sha256::new();
    digest.update(body);
    digest.update(secret.as_bytes());
    hex(&digest.finalize())
}

/// `X-Hub-Signature-256`: `sha256=` and lower-case hex of HMAC-SHA-256 keyed with the secret.
pub fn hub_signature_256(body: &[u8], secret: &str) -> String {
    // HMAC takes keys of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
    mac.update(body);
    format!("sha256={}", hex(&mac.finalize().into_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of section 8: secret `s3cret` over the CONFIRMATION body of section 6.
    #[test]
    fn the_specification_example_signs_as_printed() {
        let body = br#"{"type":"CONFIRMATION","payloads":["{\"code\":\"5b0c3f7e-6a86-4d8a-9b1e-2f4c7d9a1e03\"}"]}"#;
        assert_eq!(body.len(), 90);
        assert_eq!(
            hub_signature(body, "s3cret"),
            "dd61679801572d87d3a0b51be41905e78170ad11b20b9a9831e933cdba47f35a"
        );
        assert_eq!(
            hub_signature_256(body, "s3cret"),
            "sha256=95f79dfbada3b0860fd9bd2a061460be3e2358f1a91e31332de967f8d7aefc17"
        );
    }
}
