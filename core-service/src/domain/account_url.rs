//! Account URLs in their one stored form (contract section 2).
//!
//! An account is named by its URL, and callers may spell it loosely: the case of the
//! scheme and host, a trailing `/` and a default port do not matter. Both the import
//! (which stores the normalized form) and authentication (which looks it up) go through
//! [`normalize_account_url`], so the two can never disagree.

use std::fmt;

use super::invalid::{Invalid, Reason};

/// Longest account URL accepted, in bytes.
const MAX_URL_LEN: usize = 2_048;

/// Why a string is not an account URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccountUrlError {
    #[error("the account URL is blank")]
    Blank,
    #[error("the account URL must be at most {MAX_URL_LEN} characters")]
    TooLong,
    #[error("the account URL is not a valid absolute URL")]
    Malformed,
    #[error("the account URL must start with http:// or https://")]
    NotHttp,
    #[error("the account URL must name a host")]
    NoHost,
    #[error("the account URL must not contain a user name or password")]
    UserInfo,
    #[error("the account URL must not have a query or a fragment")]
    QueryOrFragment,
}

/// An account URL in its stored form (see [`normalize_account_url`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AccountUrl(String);

impl AccountUrl {
    /// Normalizes `raw`; a refusal names the field `url`.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        normalize_account_url(raw)
            .map(Self)
            .map_err(|err| Invalid::new("url", Reason::AccountUrl(err)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

impl fmt::Display for AccountUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The stored form of an account URL: scheme and host lower-cased, a default port
/// (80 for http, 443 for https) dropped, trailing `/` removed; the path keeps its case.
///
/// `https://A.Example.com:443/` and `https://a.example.com` both give
/// `https://a.example.com`.
pub fn normalize_account_url(raw: &str) -> Result<String, AccountUrlError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(AccountUrlError::Blank);
    }
    if raw.len() > MAX_URL_LEN {
        return Err(AccountUrlError::TooLong);
    }
    // `http::Uri` silently drops a fragment, so look for it in the raw text.
    if raw.contains('#') {
        return Err(AccountUrlError::QueryOrFragment);
    }
    let uri: http::Uri = raw.parse().map_err(|_| AccountUrlError::Malformed)?;
    let scheme = uri
        .scheme_str()
        .ok_or(AccountUrlError::NotHttp)?
        .to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err(AccountUrlError::NotHttp),
    };
    let authority = uri.authority().ok_or(AccountUrlError::NoHost)?;
    if authority.as_str().contains('@') {
        return Err(AccountUrlError::UserInfo);
    }
    let host = authority.host().to_ascii_lowercase();
    if host.is_empty() {
        return Err(AccountUrlError::NoHost);
    }
    if uri.query().is_some() {
        return Err(AccountUrlError::QueryOrFragment);
    }
    // `Authority::port` silently ignores a port that is not a u16, so read it here.
    // `a.example.com:` (an empty port) means the default port.
    let port_text = authority
        .as_str()
        .get(authority.host().len()..)
        .unwrap_or_default();
    let port = match port_text.strip_prefix(':') {
        Some(digits) if !digits.is_empty() => {
            if !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(AccountUrlError::Malformed);
            }
            Some(
                digits
                    .parse::<u16>()
                    .map_err(|_| AccountUrlError::Malformed)?,
            )
        }
        Some(_) => None,
        None if port_text.is_empty() => None,
        None => return Err(AccountUrlError::Malformed),
    };
    let port = port
        .filter(|&port| port != default_port)
        .map(|port| format!(":{port}"));
    let path = uri.path().trim_end_matches('/');
    Ok(format!(
        "{scheme}://{host}{}{path}",
        port.unwrap_or_default()
    ))
}

/// The stored URL without its scheme (`//a.example.com/path`): what names one account
/// whichever scheme a caller writes (contract section 2; older client documentation writes
/// `http://` for `https://` accounts). `stored` is a result of [`normalize_account_url`].
pub fn without_scheme(stored: &str) -> &str {
    stored
        .find("//")
        .map_or(stored, |start| stored.get(start..).unwrap_or(stored))
}

/// The stored forms that name the same account as `stored`: itself first, then the same URL
/// under the other scheme. An implicit port stays implicit: `http://a.example.com` names
/// `https://a.example.com`.
pub fn scheme_spellings(stored: &str) -> [String; 2] {
    let rest = without_scheme(stored);
    let other = if stored.starts_with("https:") {
        format!("http:{rest}")
    } else {
        format!("https:{rest}")
    };
    [stored.to_owned(), other]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn either_scheme_names_the_same_account() {
        assert_eq!(
            scheme_spellings("http://a.example.com/x"),
            ["http://a.example.com/x", "https://a.example.com/x"]
        );
        assert_eq!(
            scheme_spellings("https://a.example.com:8443"),
            ["https://a.example.com:8443", "http://a.example.com:8443"]
        );
        assert_eq!(
            without_scheme(&normalized("HTTP://A.example.com/")),
            without_scheme(&normalized("https://a.example.com:443"))
        );
    }

    fn normalized(raw: &str) -> String {
        normalize_account_url(raw).unwrap()
    }

    #[test]
    fn case_of_scheme_and_host_trailing_slash_and_default_port_are_ignored() {
        let canonical = "https://a.example.com";
        for spelling in [
            "https://a.example.com",
            "https://a.example.com/",
            "https://a.example.com:443/",
            "https://a.example.com:443",
            "HTTPS://A.Example.COM",
            "Https://a.EXAMPLE.com:443//",
            "  https://a.example.com  ",
            "https://a.example.com:/",
        ] {
            assert_eq!(normalized(spelling), canonical, "{spelling}");
        }
        assert_eq!(
            normalized("http://a.example.com:80/"),
            "http://a.example.com"
        );
    }

    #[test]
    fn other_ports_and_the_path_are_kept() {
        assert_eq!(
            normalized("https://a.example.com:8443/"),
            "https://a.example.com:8443"
        );
        assert_eq!(
            normalized("http://a.example.com:443"),
            "http://a.example.com:443"
        );
        assert_eq!(
            normalized("https://a.example.com:80"),
            "https://a.example.com:80"
        );
        assert_eq!(
            normalized("https://Host.example/Tenant/A/"),
            "https://host.example/Tenant/A"
        );
        assert_eq!(normalized("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(normalized("http://[::1]:80/"), "http://[::1]");
    }

    #[test]
    fn what_is_not_an_http_url_is_refused() {
        assert_eq!(normalize_account_url("  "), Err(AccountUrlError::Blank));
        assert_eq!(
            normalize_account_url("ftp://a.example.com"),
            Err(AccountUrlError::NotHttp)
        );
        assert_eq!(
            normalize_account_url("a.example.com"),
            Err(AccountUrlError::NotHttp)
        );
        assert_eq!(
            normalize_account_url("/relative"),
            Err(AccountUrlError::NotHttp)
        );
        assert_eq!(
            normalize_account_url("https://a b.example.com"),
            Err(AccountUrlError::Malformed)
        );
        assert_eq!(
            normalize_account_url("https://user:pw@a.example.com"),
            Err(AccountUrlError::UserInfo)
        );
        assert_eq!(
            normalize_account_url("https://a.example.com/?x=1"),
            Err(AccountUrlError::QueryOrFragment)
        );
        assert_eq!(
            normalize_account_url("https://a.example.com/#top"),
            Err(AccountUrlError::QueryOrFragment)
        );
        assert_eq!(
            normalize_account_url("https://a.example.com:99999"),
            Err(AccountUrlError::Malformed)
        );
        let long = format!("https://a.example.com/{}", "x".repeat(MAX_URL_LEN));
        assert_eq!(normalize_account_url(&long), Err(AccountUrlError::TooLong));
    }

    #[test]
    fn a_refused_account_url_names_the_field() {
        let err = AccountUrl::parse("ftp://a.example.com").unwrap_err();
        assert_eq!(
            err.to_string(),
            "url: the account URL must start with http:// or https://"
        );
        assert_eq!(
            AccountUrl::parse("HTTPS://A.example.com/")
                .unwrap()
                .as_str(),
            "https://a.example.com"
        );
    }

    #[test]
    fn normalizing_twice_changes_nothing() {
        for raw in [
            "HTTPS://A.Example.COM:443/x/",
            "http://b.example:8080",
            "https://[::1]:443",
        ] {
            let once = normalized(raw);
            assert_eq!(normalized(&once), once);
        }
    }

    /// Fuzz targets (see docs/fuzzing.md): any text is answered without a panic, and what is
    /// accepted is a fixed point in its stored form; any spelling of a generated URL gives
    /// the same stored form.
    mod fuzz {
        use proptest::prelude::*;

        use super::*;
        use crate::fuzz::config;

        /// Text shaped like URLs: schemes, hosts, ports, user info, paths, queries, fragments.
        fn url_like() -> impl Strategy<Value = String> {
            (
                prop_oneof![
                    Just(""),
                    Just("http://"),
                    Just("HTTPS://"),
                    Just("ftp://"),
                    Just("//"),
                    Just("https:")
                ],
                "[a-zA-Z0-9.@:\\[\\]-]{0,20}",
                prop_oneof![
                    Just(""),
                    Just(":"),
                    Just(":443"),
                    Just(":80"),
                    Just(":99999"),
                    Just(":x")
                ],
                "[a-zA-Z0-9/%?#&=. ]{0,20}",
            )
                .prop_map(|(scheme, host, port, rest)| format!("{scheme}{host}{port}{rest}"))
        }

        fn check(raw: &str) -> Result<(), TestCaseError> {
            if let Ok(stored) = normalize_account_url(raw) {
                prop_assert!(stored.len() <= MAX_URL_LEN);
                prop_assert!(stored.starts_with("http://") || stored.starts_with("https://"));
                prop_assert!(!stored.ends_with('/') && !stored.contains(['?', '#', '@']));
                prop_assert_eq!(normalize_account_url(&stored), Ok(stored.clone()));
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(config(3_000))]

            #[test]
            fn fuzz_any_text_is_refused_or_stored_as_a_fixed_point(raw in "\\PC{0,80}") {
                check(&raw)?;
            }

            #[test]
            fn fuzz_url_shaped_text_is_refused_or_stored_as_a_fixed_point(raw in url_like()) {
                check(&raw)?;
            }

            #[test]
            fn fuzz_every_spelling_of_a_url_gives_one_stored_form(
                host in "[a-z][a-z0-9-]{0,10}(\\.[a-z][a-z0-9-]{0,10}){0,3}",
                path in "(/[a-zA-Z0-9_-]{1,8}){0,3}",
                upper_scheme in any::<bool>(),
                upper_host in any::<bool>(),
                default_port in any::<bool>(),
                trailing_slash in any::<bool>(),
            ) {
                let canonical = format!("https://{host}{path}");
                let scheme = if upper_scheme { "HTTPS" } else { "https" };
                let spelled_host = if upper_host { host.to_uppercase() } else { host.clone() };
                let port = if default_port { ":443" } else { "" };
                let slash = if trailing_slash { "/" } else { "" };
                let spelling = format!("{scheme}://{spelled_host}{port}{path}{slash}");
                prop_assert_eq!(normalize_account_url(&spelling), Ok(canonical));
            }
        }
    }
}
