//! The gateway's settings: command-line flags with environment fallbacks.

use std::net::SocketAddr;
use std::time::Duration;

/// Largest accepted request body: 1 MiB.
pub const BODY_LIMIT_BYTES: usize = 1024 * 1024;

/// Settings of the XML gateway.
///
/// A clap `Args` struct, so the `lms` launcher can `#[command(flatten)]` it; every flag also reads
/// its environment variable.
#[derive(Debug, Clone, clap::Args)]
pub struct GatewaySettings {
    /// Address the HTTP server listens on (port 0 picks a free port).
    #[arg(
        long = "http-addr",
        env = "LMS_HTTP_ADDR",
        default_value = "127.0.0.1:8080"
    )]
    pub http_addr: SocketAddr,

    /// URL of the lms-core gRPC server.
    #[arg(
        long = "core-url",
        env = "LMS_CORE_URL",
        default_value = "http://127.0.0.1:50051"
    )]
    pub core_url: String,

    /// Deadline of one call to the core, in milliseconds.
    #[arg(
        long = "core-timeout-ms",
        env = "LMS_CORE_TIMEOUT_MS",
        default_value_t = 10_000
    )]
    pub core_timeout_ms: u64,
}

impl GatewaySettings {
    /// The deadline of one call to the core.
    pub fn core_timeout(&self) -> Duration {
        Duration::from_millis(self.core_timeout_ms)
    }
}

impl Default for GatewaySettings {
    fn default() -> Self {
        Self {
            http_addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            core_url: "http://127.0.0.1:50051".to_owned(),
            core_timeout_ms: 10_000,
        }
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
    fn defaults_match_the_contract() {
        let defaults = GatewaySettings::default();
        assert_eq!(defaults.http_addr.to_string(), "127.0.0.1:8080");
        assert_eq!(defaults.core_url, "http://127.0.0.1:50051");
        assert_eq!(defaults.core_timeout(), Duration::from_secs(10));
    }
}
