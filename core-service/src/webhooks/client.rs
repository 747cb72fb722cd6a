//! One delivery attempt over HTTP (sections 8 and 10 of `docs/spec/webhooks.md`).
//!
//! Every connection's addresses come from [`CheckedResolver`], which resolves the host once
//! and refuses the attempt when any address falls in a refused category: the client then
//! connects only to addresses that were checked, so a name that changes its answer between
//! two lookups cannot slip through. IP-literal hosts are never looked up, so they are
//! judged from the URL itself. Redirects are not followed, no proxy is taken from the
//! environment, and the whole attempt is bounded by the timeout.

use std::{
    collections::HashMap,
    fmt,
    net::{IpAddr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::domain::webhook::{AddressCategory, is_localhost_name};

/// Most answer bytes read; the rest is never read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// Most characters of an answer kept as `lastError`.
pub const MAX_ERROR_CHARS: usize = 256;

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx answer within the timeout.
    Delivered(u16),
    /// Another status; the start of the answer body.
    Rejected(u16, String),
    Timeout,
    /// DNS, connection or TLS failure.
    Unreachable(String),
    /// An address the settings do not allow; the sentence names it and its category.
    Refused(String),
}

impl Outcome {
    pub fn delivered(&self) -> bool {
        matches!(self, Self::Delivered(_))
    }

    /// The metric label.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Delivered(_) => "delivered",
            Self::Rejected(..) => "rejected",
            Self::Timeout => "timeout",
            Self::Unreachable(_) => "unreachable",
            Self::Refused(_) => "refused",
        }
    }

    /// `lastAttemptResult`.
    pub fn result(&self) -> String {
        match self {
            Self::Delivered(status) | Self::Rejected(status, _) => status.to_string(),
            Self::Timeout => "timeout".into(),
            Self::Unreachable(_) => "unreachable".into(),
            Self::Refused(_) => "refused".into(),
        }
    }

    /// `lastError`: absent after a 2xx.
    pub fn error(&self) -> Option<String> {
        let text = match self {
            Self::Delivered(_) => return None,
            Self::Rejected(status, body) if body.trim().is_empty() => {
                format!("the receiver answered {status}")
            }
            Self::Rejected(_, body) => body.clone(),
            Self::Timeout => "no complete answer within the timeout".into(),
            Self::Unreachable(why) => why.clone(),
            Self::Refused(why) => why.clone(),
        };
        Some(text.chars().take(MAX_ERROR_CHARS).collect())
    }
}

/// A refused address, carried through reqwest's error chain from the resolver.
#[derive(Debug)]
struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

fn refusal(host: &str, ip: Option<IpAddr>, category: AddressCategory) -> String {
    match ip {
        Some(ip) if ip.to_string() != host => format!(
            "{host} resolves to {ip}, a {category} address; such callback addresses are not allowed"
        ),
        _ => crate::domain::webhook::refusal(host, category),
    }
}

/// Resolves a callback host and checks every address it gets before the client may
/// connect to any (section 10).
#[derive(Clone)]
pub struct CheckedResolver {
    allow_private_networks: bool,
    /// Names answered without DNS, as a hosts file would (tests map names to loopback).
    hosts: Arc<HashMap<String, Vec<IpAddr>>>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = if is_localhost_name(&host) {
                if !AddressCategory::Loopback.allowed(this.allow_private_networks) {
                    return Err(Box::new(Refused(crate::domain::webhook::refusal(
                        &host,
                        AddressCategory::Loopback,
                    ))) as _);
                }
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect()
            } else if let Some(mapped) = this.hosts.get(&host.to_ascii_lowercase()) {
                mapped.iter().map(|ip| SocketAddr::new(*ip, 0)).collect()
            } else {
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect()
            };
            for addr in &addrs {
                if let Some(category) = AddressCategory::of(addr.ip())
                    && !category.allowed(this.allow_private_networks)
                {
                    return Err(Box::new(Refused(refusal(&host, Some(addr.ip()), category))) as _);
                }
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The HTTP client of deliveries.
#[derive(Clone)]
pub struct DeliveryClient {
    client: reqwest::Client,
    allow_private_networks: bool,
    timeout: Duration,
}

/// One POST to make.
pub struct Attempt<'a> {
    pub url: &'a str,
    pub body: &'a str,
    pub delivery_id: uuid::Uuid,
    pub event_type: &'a str,
    pub attempt: i32,
    pub secret: Option<&'a str>,
}

impl DeliveryClient {
    pub fn new(
        allow_private_networks: bool,
        timeout: Duration,
        hosts: HashMap<String, Vec<IpAddr>>,
    ) -> anyhow::Result<Self> {
        let resolver = CheckedResolver {
            allow_private_networks,
            hosts: Arc::new(hosts),
        };
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(resolver))
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent("lms-webhooks/1")
            .build()?;
        Ok(Self {
            client,
            allow_private_networks,
            timeout,
        })
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Makes one attempt and says how it ended; never an error of its own.
    pub async fn attempt(&self, attempt: Attempt<'_>) -> Outcome {
        let url = match reqwest::Url::parse(attempt.url) {
            Ok(url) => url,
            Err(err) => return Outcome::Unreachable(format!("the callback URL is invalid: {err}")),
        };
        // An IP-literal host is never looked up, so the resolver never sees it.
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            _ => None,
        };
        if let Some(ip) = literal
            && let Some(category) = AddressCategory::of(ip)
            && !category.allowed(self.allow_private_networks)
        {
            return Outcome::Refused(crate::domain::webhook::refusal(&ip.to_string(), category));
        }
        let body = attempt.body.as_bytes().to_vec();
        let mut request = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("X-Lms-Delivery-Id", attempt.delivery_id.to_string())
            .header("X-Lms-Event-Type", attempt.event_type)
            .header("X-Lms-Attempt", attempt.attempt.to_string());
        if let Some(secret) = attempt.secret {
            request = request
                .header(
                    "X-Hub-Signature",
                    super::signature::hub_signature(&body, secret),
                )
                .header(
                    "X-Hub-Signature-256",
                    super::signature::hub_signature_256(&body, secret),
                );
        }
        let mut response = match request.body(body).send().await {
            Ok(response) => response,
            Err(err) => return failure(&err),
        };
        let status = response.status().as_u16();
        if response.status().is_success() {
            // The answer's body is read to its end or the limit, within the timeout.
            let mut read = 0;
            loop {
                match response.chunk().await {
                    Ok(Some(chunk)) => {
                        read += chunk.len();
                        if read >= MAX_ANSWER_BYTES {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(err) if err.is_timeout() => return Outcome::Timeout,
                    Err(_) => break,
                }
            }
            return Outcome::Delivered(status);
        }
        let mut bytes = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() >= MAX_ANSWER_BYTES {
                        bytes.truncate(MAX_ANSWER_BYTES);
                        break;
                    }
                }
                Ok(None) => break,
                Err(err) if err.is_timeout() => return Outcome::Timeout,
                Err(_) => break,
            }
        }
        Outcome::Rejected(status, answer_text(&bytes))
    }
}

/// The start of an answer body as `lastError` keeps it: invalid UTF-8 replaced, control
/// characters as spaces, at most 256 characters.
fn answer_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_ERROR_CHARS)
        .collect()
}

fn failure(err: &reqwest::Error) -> Outcome {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return Outcome::Refused(refused.0.clone());
        }
        source = cause.source();
    }
    if err.is_timeout() {
        return Outcome::Timeout;
    }
    let mut why = String::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(cause) = source {
        why = cause.to_string();
        source = cause.source();
    }
    if why.is_empty() {
        why = err.to_string();
    }
    Outcome::Unreachable(format!("the receiver could not be reached: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_text_replaces_control_characters_and_bad_bytes() {
        assert_eq!(answer_text(b"a\nb\xffc"), "a b\u{fffd}c");
        assert_eq!(answer_text(&[b'x'; 1000]).len(), MAX_ERROR_CHARS);
    }
}
