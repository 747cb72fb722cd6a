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

/// Settings of the XML gateway.
///
/// A clap `Args` struct (flattened into `lms-gateway`'s command line); every flag also reads its
/// environment variable.
#[derive(Debug, Clone, clap::Args)]
pub struct GatewaySettings {
    /// Address the HTTP server listens on (port 0 picks a free port).
    #[arg(long = "http-addr", env = "LMS_HTTP_ADDR", default_value_t = DEFAULT_HTTP_ADDR)]
    pub http_addr: SocketAddr,

    /// URL of the lms-core gRPC server.
    #[arg(
        long = "core-url",
        env = "LMS_CORE_URL",
        default_value = DEFAULT_CORE_URL
    )]
    pub core_url: String,

    /// Deadline of one call to the core, in milliseconds.
    #[arg(
        long = "core-timeout-ms",
        env = "LMS_CORE_TIMEOUT_MS",
        default_value_t = DEFAULT_CORE_TIMEOUT_MS
    )]
    pub core_timeout_ms: u64,
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
        ]);
        assert_eq!(
            cli.settings.http_addr,
            SocketAddr::from(([127, 0, 0, 1], 0))
        );
        assert_eq!(cli.settings.core_url, "http://127.0.0.1:6000");
        assert_eq!(cli.settings.core_timeout(), Duration::from_millis(250));
    }

    #[test]
    fn an_empty_command_line_gives_the_default_constants() {
        let settings = Cli::parse_from(["lms-gateway"]).settings;
        assert_eq!(settings.http_addr, DEFAULT_HTTP_ADDR);
        assert_eq!(settings.core_url, DEFAULT_CORE_URL);
        assert_eq!(
            settings.core_timeout(),
            Duration::from_millis(DEFAULT_CORE_TIMEOUT_MS)
        );
    }

    #[test]
    fn the_default_constants_are_the_documented_ones() {
        assert_eq!(DEFAULT_HTTP_ADDR.to_string(), "127.0.0.1:8080");
        assert_eq!(DEFAULT_CORE_URL, "http://127.0.0.1:50051");
        assert_eq!(
            Duration::from_millis(DEFAULT_CORE_TIMEOUT_MS),
            Duration::from_secs(10)
        );
    }
}
