//! Header authentication as an extractor: the three `X-Auth-*` headers, or an access token in
//! `Authorization` (`Bearer <token>` or the raw token, contract section 12), which then
//! authenticates the request alone.
//!
//! The gateway only checks that the headers are there, readable and within the core's own
//! bounds; the core decides whether they are right. Every failure, here or in the core, becomes
//! the same 401.
//!
//! The bounds are the core's limits for these values (`lms_core::domain`: account URL 2,048
//! characters, login 255, password 1,024; the headers are ASCII, so characters are bytes). A
//! longer value can never authenticate, so it is refused here, before any gRPC call: the
//! metadata of one call stays a few KiB, far under the core's HTTP/2 header-list limit, and an
//! oversized header cannot break the connection every caller shares.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName};
use lms_runtime::Secret;
use tonic::metadata::{AsciiMetadataValue, MetadataMap};

use crate::error::GatewayError;

// The HTTP headers carry the same names as the gRPC metadata they are forwarded in.
pub(crate) const X_AUTH_ACCOUNT_URL: HeaderName =
    HeaderName::from_static(lms_proto::metadata::ACCOUNT_URL);
pub(crate) const X_AUTH_EMAIL: HeaderName = HeaderName::from_static(lms_proto::metadata::EMAIL);
pub(crate) const X_AUTH_PASSWORD: HeaderName =
    HeaderName::from_static(lms_proto::metadata::PASSWORD);

/// Longest accepted `X-Auth-Account-Url`, in bytes.
pub(crate) const MAX_ACCOUNT_URL_BYTES: usize = 2_048;
/// Longest accepted `X-Auth-Email` (the login), in bytes.
pub(crate) const MAX_EMAIL_BYTES: usize = 255;
/// Longest accepted `X-Auth-Password`, in bytes.
pub(crate) const MAX_PASSWORD_BYTES: usize = 1_024;
/// Longest accepted `Authorization` value (the core's bound for a token, plus `Bearer `).
pub(crate) const MAX_AUTHORIZATION_BYTES: usize = 256 + 7;

/// The caller's credentials, as sent. `Debug` never shows the password or the token.
#[derive(Debug, Clone)]
pub(crate) enum Credentials {
    Headers {
        account_url: AsciiMetadataValue,
        email: AsciiMetadataValue,
        password: Secret<AsciiMetadataValue>,
    },
    Token(Secret<AsciiMetadataValue>),
}

impl Credentials {
    /// A token in `Authorization` when there is one, else the three headers; missing,
    /// repeated, blank, too long or not visible ASCII → 401.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Result<Self, GatewayError> {
        if headers.contains_key(AUTHORIZATION) {
            return token(headers).map(|token| Self::Token(Secret::new(token)));
        }
        let mut password = header_value(headers, &X_AUTH_PASSWORD, MAX_PASSWORD_BYTES)?;
        password.set_sensitive(true);
        Ok(Self::Headers {
            account_url: header_value(headers, &X_AUTH_ACCOUNT_URL, MAX_ACCOUNT_URL_BYTES)?,
            email: header_value(headers, &X_AUTH_EMAIL, MAX_EMAIL_BYTES)?,
            password: Secret::new(password),
        })
    }

    /// Puts the credentials into outgoing gRPC metadata under the contract's keys.
    pub(crate) fn write_metadata(&self, metadata: &mut MetadataMap) {
        match self {
            Self::Headers {
                account_url,
                email,
                password,
            } => {
                metadata.insert(lms_proto::metadata::ACCOUNT_URL, account_url.clone());
                metadata.insert(lms_proto::metadata::EMAIL, email.clone());
                metadata.insert(lms_proto::metadata::PASSWORD, password.expose().clone());
            }
            Self::Token(token) => {
                metadata.insert(lms_proto::metadata::TOKEN, token.expose().clone());
            }
        }
    }
}

/// The token of `Authorization: Bearer <token>` or of a raw `Authorization: <token>` (clients
/// send both, sometimes on different calls of one program).
fn token(headers: &HeaderMap) -> Result<AsciiMetadataValue, GatewayError> {
    let mut value = header_value(headers, &AUTHORIZATION, MAX_AUTHORIZATION_BYTES)?;
    let text = value.to_str().map_err(|_| GatewayError::Unauthenticated)?;
    let token = match text.split_once(' ') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
        _ => text,
    };
    if token.is_empty() || token.contains(' ') || token.eq_ignore_ascii_case("bearer") {
        return Err(GatewayError::Unauthenticated);
    }
    if token.len() != text.len() {
        value = AsciiMetadataValue::try_from(token).map_err(|_| GatewayError::Unauthenticated)?;
    }
    value.set_sensitive(true);
    Ok(value)
}

fn header_value(
    headers: &HeaderMap,
    name: &HeaderName,
    max_bytes: usize,
) -> Result<AsciiMetadataValue, GatewayError> {
    let mut values = headers.get_all(name).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(GatewayError::Unauthenticated);
    };
    if value.as_bytes().trim_ascii().len() > max_bytes {
        return Err(GatewayError::Unauthenticated);
    }
    // `to_str` accepts visible ASCII only (plus space and tab): exactly what metadata can carry.
    let text = value
        .to_str()
        .map_err(|_| GatewayError::Unauthenticated)?
        .trim();
    if text.is_empty() {
        return Err(GatewayError::Unauthenticated);
    }
    AsciiMetadataValue::try_from(text).map_err(|_| GatewayError::Unauthenticated)
}

impl<S: Send + Sync> FromRequestParts<S> for Credentials {
    type Rejection = GatewayError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Self::from_headers(&parts.headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn complete_headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            X_AUTH_ACCOUNT_URL,
            HeaderValue::from_static("https://acme.example.com"),
        );
        headers.insert(
            X_AUTH_EMAIL,
            HeaderValue::from_static("owner@acme.example.com"),
        );
        headers.insert(X_AUTH_PASSWORD, HeaderValue::from_static("s3cret-Passw0rd"));
        headers
    }

    #[test]
    fn three_present_headers_become_credentials_in_metadata() {
        let credentials = Credentials::from_headers(&complete_headers()).unwrap();
        let mut metadata = MetadataMap::new();
        credentials.write_metadata(&mut metadata);
        assert_eq!(
            metadata.get("x-auth-account-url").unwrap(),
            "https://acme.example.com"
        );
        assert_eq!(
            metadata.get("x-auth-email").unwrap(),
            "owner@acme.example.com"
        );
        assert_eq!(metadata.get("x-auth-password").unwrap(), "s3cret-Passw0rd");
    }

    #[test]
    fn debug_output_never_shows_the_password() {
        let credentials = Credentials::from_headers(&complete_headers()).unwrap();
        let shown = format!("{credentials:?} {credentials:#?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("owner@acme.example.com"));
        let mut metadata = MetadataMap::new();
        credentials.write_metadata(&mut metadata);
        assert!(!format!("{metadata:?}").contains("s3cret"));
    }

    #[test]
    fn each_missing_blank_or_unreadable_header_is_refused() {
        for name in [X_AUTH_ACCOUNT_URL, X_AUTH_EMAIL, X_AUTH_PASSWORD] {
            let mut missing = complete_headers();
            missing.remove(&name);
            assert!(matches!(
                Credentials::from_headers(&missing),
                Err(GatewayError::Unauthenticated)
            ));

            for bad in [&b""[..], b"   ", b"\t", "pässword".as_bytes(), b"\x80\xff"] {
                let mut headers = complete_headers();
                headers.insert(name.clone(), HeaderValue::from_bytes(bad).unwrap());
                assert!(
                    matches!(
                        Credentials::from_headers(&headers),
                        Err(GatewayError::Unauthenticated)
                    ),
                    "{name}: {bad:?}"
                );
            }

            let mut repeated = complete_headers();
            repeated.append(name.clone(), HeaderValue::from_static("again"));
            assert!(matches!(
                Credentials::from_headers(&repeated),
                Err(GatewayError::Unauthenticated)
            ));
        }
    }

    #[test]
    fn values_up_to_the_cores_bounds_are_kept_and_longer_ones_refused() {
        let cases = [
            (X_AUTH_ACCOUNT_URL, MAX_ACCOUNT_URL_BYTES),
            (X_AUTH_EMAIL, MAX_EMAIL_BYTES),
            (X_AUTH_PASSWORD, MAX_PASSWORD_BYTES),
        ];
        for (name, max) in cases {
            let mut headers = complete_headers();
            headers.insert(
                name.clone(),
                HeaderValue::from_str(&"a".repeat(max)).unwrap(),
            );
            assert!(Credentials::from_headers(&headers).is_ok(), "{name}");
            headers.insert(
                name.clone(),
                HeaderValue::from_str(&"a".repeat(max + 1)).unwrap(),
            );
            assert!(
                matches!(
                    Credentials::from_headers(&headers),
                    Err(GatewayError::Unauthenticated)
                ),
                "{name}"
            );
        }
    }

    mod fuzz {
        use proptest::prelude::*;

        use super::*;
        use crate::fuzz::config;

        proptest! {
            #![proptest_config(config(2_000))]

            #[test]
            fn fuzz_any_header_bytes_are_refused_or_kept_within_bounds(
                name in 0_usize..3,
                value in proptest::collection::vec(any::<u8>(), 0..3_000),
            ) {
                let (header, max) = [
                    (X_AUTH_ACCOUNT_URL, MAX_ACCOUNT_URL_BYTES),
                    (X_AUTH_EMAIL, MAX_EMAIL_BYTES),
                    (X_AUTH_PASSWORD, MAX_PASSWORD_BYTES),
                ][name].clone();
                let Ok(value) = HeaderValue::from_bytes(&value) else {
                    return Ok(());
                };
                let mut headers = complete_headers();
                headers.insert(header.clone(), value);
                if let Ok(credentials) = Credentials::from_headers(&headers) {
                    let mut metadata = MetadataMap::new();
                    credentials.write_metadata(&mut metadata);
                    let kept = metadata.get(header.as_str()).unwrap().as_bytes();
                    prop_assert!(!kept.is_empty() && kept.len() <= max);
                    prop_assert!(kept.iter().all(|byte| *byte == b' ' || *byte == b'\t' || byte.is_ascii_graphic()));
                }
            }
        }
    }

    #[test]
    fn a_token_in_authorization_is_taken_bearer_or_raw_and_alone() {
        for value in ["Bearer abc123", "bearer  abc123 ", "abc123", " abc123"] {
            let mut headers = complete_headers();
            headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            let credentials = Credentials::from_headers(&headers).unwrap();
            let mut metadata = MetadataMap::new();
            credentials.write_metadata(&mut metadata);
            assert_eq!(metadata.get("x-auth-token").unwrap(), "abc123", "{value}");
            assert!(metadata.get("x-auth-password").is_none(), "{value}");
            assert!(!format!("{credentials:?}").contains("abc123"));
        }
        for value in ["", "Bearer", "Bearer ", "Bearer a b", "Basic a b"] {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            assert!(
                matches!(
                    Credentials::from_headers(&headers),
                    Err(GatewayError::Unauthenticated)
                ),
                "{value:?}"
            );
        }
    }

    #[test]
    fn surrounding_whitespace_is_trimmed() {
        let mut headers = complete_headers();
        headers.insert(
            X_AUTH_EMAIL,
            HeaderValue::from_static(" owner@acme.example.com\t"),
        );
        let credentials = Credentials::from_headers(&headers).unwrap();
        let mut metadata = MetadataMap::new();
        credentials.write_metadata(&mut metadata);
        assert_eq!(
            metadata.get("x-auth-email").unwrap(),
            "owner@acme.example.com"
        );
    }
}
