//! The gateway's settings: command-line flags with environment fallbacks.
//!
//! Every default is one constant; the `lms` launcher uses the same ones.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

/// Largest accepted request body: 1 MiB.
pub const BODY_LIMIT_BYTES: usize = 1024 * 1024;

/// Where the XML interface listens unless configured: loopback only.
pub const DEFAULT_HTTP_ADDR: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080));

/// The core the gateway calls unless configured: `lms-core` on its default address.
pub const DEFAULT_CORE_URL: &str = "http://127.0.0.1:50051";

/// Deadline of one call to the core unless configured; past it the caller gets 504.
pub const DEFAULT_CORE_TIMEOUT_MS: u64 = 10_000;

/// How long a client may take to send a request head, from the moment the server waits for one
/// (a new connection, or the next request on a kept-alive one); past it the connection closes.
pub const DEFAULT_HEADER_READ_TIMEOUT_MS: u64 = 10_000;

/// How long a connection may go without a byte in or out, whatever it is doing; past it the
/// connection closes. Longer than the core deadline, so waiting for the core is never idleness.
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 60_000;

/// How long a request body may take to arrive whole, from its head; past it the answer is 408.
pub const DEFAULT_BODY_TIMEOUT_MS: u64 = 30_000;

/// Most connections served at once; further ones wait in the listen backlog.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4_096;

/// Limits of the HTTP server that keep slow or many clients from holding it.
#[derive(Debug, Clone, clap::Args)]
pub struct HttpServerSettings {
    /// Longest time to receive a request head, in milliseconds (also bounds a kept-alive
    /// connection waiting for its next request; answers advertise `Keep-Alive: timeout=N`, a
    /// whole second below it or the idle timeout, whichever is sooner).
    #[arg(
        long = "header-read-timeout-ms",
        env = "LMS_HEADER_READ_TIMEOUT_MS",
        default_value_t = DEFAULT_HEADER_READ_TIMEOUT_MS
    )]
    pub header_read_timeout_ms: u64,

    /// Longest time a connection may go without a byte in or out, in milliseconds; must be
    /// longer than the core deadline.
    #[arg(
        long = "idle-timeout-ms",
        env = "LMS_IDLE_TIMEOUT_MS",
        default_value_t = DEFAULT_IDLE_TIMEOUT_MS
    )]
    pub idle_timeout_ms: u64,

    /// Longest time for a whole request body to arrive, in milliseconds (past it: 408).
    #[arg(
        long = "body-timeout-ms",
        env = "LMS_BODY_TIMEOUT_MS",
        default_value_t = DEFAULT_BODY_TIMEOUT_MS
    )]
    pub body_timeout_ms: u64,

    /// Most connections served at once (further ones wait to be accepted); lowered at start
    /// when the open-files limit cannot hold them.
    #[arg(
        long = "max-connections",
        env = "LMS_MAX_CONNECTIONS",
        default_value_t = DEFAULT_MAX_CONNECTIONS
    )]
    pub max_connections: usize,
}

impl Default for HttpServerSettings {
    fn default() -> Self {
        Self {
            header_read_timeout_ms: DEFAULT_HEADER_READ_TIMEOUT_MS,
            idle_timeout_ms: DEFAULT_IDLE_TIMEOUT_MS,
            body_timeout_ms: DEFAULT_BODY_TIMEOUT_MS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

impl HttpServerSettings {
    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_millis(self.header_read_timeout_ms)
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_millis(self.idle_timeout_ms)
    }

    pub fn body_timeout(&self) -> Duration {
        Duration::from_millis(self.body_timeout_ms)
    }
}

/// Settings of the XML gateway.
///
/// A clap `Args` struct (flattened into `lms-gateway`'s command line); every flag also reads its
/// environment variable.
#[derive(Debug, Clone, clap::Args)]
pub struct GatewaySettings {
    /// Address the HTTP server listens on (port 0 picks a free port).
    #[arg(long = "http-addr", env = "LMS_HTTP_ADDR", default_value_t = DEFAULT_HTTP_ADDR)]
    pub http_addr: SocketAddr,

    /// URL of the lms-core gRPC server; several (comma-separated, or the flag repeated) are
    /// replicas sharing one database, and calls are spread over those that answer.
    #[arg(
        long = "core-url",
        env = "LMS_CORE_URL",
        default_value = DEFAULT_CORE_URL,
        value_delimiter = ',',
        num_args = 1..
    )]
    pub core_urls: Vec<String>,

    /// Deadline of one call to the core, in milliseconds.
    #[arg(
        long = "core-timeout-ms",
        env = "LMS_CORE_TIMEOUT_MS",
        default_value_t = DEFAULT_CORE_TIMEOUT_MS
    )]
    pub core_timeout_ms: u64,

    #[command(flatten)]
    pub server: HttpServerSettings,

    /// Address serving Prometheus metrics at `GET /metrics` (off unless set).
    #[arg(long, env = "LMS_METRICS_ADDR")]
    pub metrics_addr: Option<SocketAddr>,

    /// The service's external base URL (`https://lms.example.com`), for SCIM's
    /// `meta.location` and `Location`; unset: `http://` and the request's `Host`.
    #[arg(long = "public-url", env = "LMS_PUBLIC_URL")]
    pub public_url: Option<String>,
}

impl GatewaySettings {
    /// The deadline of one call to the core.
    pub fn core_timeout(&self) -> Duration {
        Duration::from_millis(self.core_timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        settings: GatewaySettings,
    }

    #[test]
    fn flags_override_the_defaults() {
        let cli = Cli::parse_from([
            "lms-gateway",
            "--http-addr",
            "127.0.0.1:0",
            "--core-url",
            "http://127.0.0.1:6000",
            "--core-timeout-ms",
            "250",
            "--header-read-timeout-ms",
            "1000",
            "--idle-timeout-ms",
            "2000",
            "--body-timeout-ms",
            "3000",
            "--max-connections",
            "7",
        ]);
        let server = &cli.settings.server;
        assert_eq!(server.header_read_timeout(), Duration::from_secs(1));
        assert_eq!(server.idle_timeout(), Duration::from_secs(2));
        assert_eq!(server.body_timeout(), Duration::from_secs(3));
        assert_eq!(server.max_connections, 7);
        assert_eq!(
            cli.settings.http_addr,
            SocketAddr::from(([127, 0, 0, 1], 0))
        );
        assert_eq!(cli.settings.core_urls, ["http://127.0.0.1:6000"]);
        assert_eq!(cli.settings.core_timeout(), Duration::from_millis(250));
    }

    #[test]
    fn several_core_urls_are_taken_comma_separated_or_repeated() {
        let urls = ["http://core-1:50051", "http://core-2:50051"];
        let comma = Cli::parse_from(["lms-gateway", "--core-url", &urls.join(",")]);
        assert_eq!(comma.settings.core_urls, urls);
        let repeated =
            Cli::parse_from(["lms-gateway", "--core-url", urls[0], "--core-url", urls[1]]);
        assert_eq!(repeated.settings.core_urls, urls);
    }

    #[test]
    fn an_empty_command_line_gives_the_default_constants() {
        let settings = Cli::parse_from(["lms-gateway"]).settings;
        assert_eq!(settings.http_addr, DEFAULT_HTTP_ADDR);
        assert_eq!(settings.core_urls, [DEFAULT_CORE_URL]);
        assert_eq!(
            settings.core_timeout(),
            Duration::from_millis(DEFAULT_CORE_TIMEOUT_MS)
        );
        let server = settings.server;
        assert_eq!(
            server.header_read_timeout_ms,
            DEFAULT_HEADER_READ_TIMEOUT_MS
        );
        assert_eq!(server.idle_timeout_ms, DEFAULT_IDLE_TIMEOUT_MS);
        assert_eq!(server.body_timeout_ms, DEFAULT_BODY_TIMEOUT_MS);
        assert_eq!(server.max_connections, DEFAULT_MAX_CONNECTIONS);
    }

    #[test]
    fn the_default_constants_are_the_documented_ones() {
        assert_eq!(DEFAULT_HTTP_ADDR.to_string(), "127.0.0.1:8080");
        assert_eq!(DEFAULT_CORE_URL, "http://127.0.0.1:50051");
        assert_eq!(
            Duration::from_millis(DEFAULT_CORE_TIMEOUT_MS),
            Duration::from_secs(10)
        );
        assert_eq!(DEFAULT_HEADER_READ_TIMEOUT_MS, 10_000);
        assert_eq!(DEFAULT_IDLE_TIMEOUT_MS, 60_000);
        assert_eq!(DEFAULT_BODY_TIMEOUT_MS, 30_000);
        assert_eq!(DEFAULT_MAX_CONNECTIONS, 4_096);
    }
}
