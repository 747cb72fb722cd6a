//! Webhook delivery (`docs/spec/webhooks.md`, sections 8 to 12): the core sends the events
//! that writes recorded in their transactions (`service::webhooks::outbox`).
//!
//! Layout:
//! - [`WebhookSettings`]: the `--webhook-*` settings.
//! - [`dispatch`]: the dispatcher every core process runs: claims subscribers with work,
//!   forms deliveries in bounded batches, records each outcome, retries and gives up.
//! - [`client`]: one attempt over HTTP, with the address checks on every connection.
//! - [`signature`]: `X-Hub-Signature` and `X-Hub-Signature-256`.

pub mod client;
pub mod dispatch;
pub mod signature;

use std::{collections::HashMap, net::IpAddr, time::Duration};

pub use dispatch::Dispatcher;

pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
pub const DEFAULT_RETRY_BASE_MS: u64 = 10_000;
pub const DEFAULT_RETRY_MAX_MS: u64 = 900_000;
pub const DEFAULT_GIVE_UP_MS: u64 = 86_400_000;
pub const DEFAULT_BATCH_MAX: u32 = 100;
pub const DEFAULT_POLL_MS: u64 = 1_000;
pub const DEFAULT_GATHER_MS: u64 = 200;
pub const DEFAULT_CONCURRENCY: u32 = 32;
pub const DEFAULT_RETENTION_HOURS: u64 = 720;

#[derive(Debug, Clone, clap::Args)]
pub struct WebhookSettings {
    /// Allow callbacks on loopback, private and link-local addresses (receivers on the same
    /// host or network); reserved addresses stay refused. `1` or `true` in the environment.
    #[arg(
        long = "webhook-allow-private-networks",
        env = "LMS_WEBHOOK_ALLOW_PRIVATE_NETWORKS",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub allow_private_networks: bool,

    /// One delivery attempt, from its connection to the end of what it reads, in ms.
    #[arg(long = "webhook-timeout-ms", env = "LMS_WEBHOOK_TIMEOUT_MS", default_value_t = DEFAULT_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub timeout_ms: u64,

    /// The wait after a first failure, in ms; it doubles with each further failure.
    #[arg(long = "webhook-retry-base-ms", env = "LMS_WEBHOOK_RETRY_BASE_MS", default_value_t = DEFAULT_RETRY_BASE_MS, value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub retry_base_ms: u64,

    /// The longest wait between attempts, in ms.
    #[arg(long = "webhook-retry-max-ms", env = "LMS_WEBHOOK_RETRY_MAX_MS", default_value_t = DEFAULT_RETRY_MAX_MS, value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub retry_max_ms: u64,

    /// Failing this long makes a subscriber unconfirmed, in ms.
    #[arg(long = "webhook-give-up-ms", env = "LMS_WEBHOOK_GIVE_UP_MS", default_value_t = DEFAULT_GIVE_UP_MS, value_parser = clap::value_parser!(u64).range(1..=31_536_000_000))]
    pub give_up_ms: u64,

    /// Most events in one delivery.
    #[arg(long = "webhook-batch-max", env = "LMS_WEBHOOK_BATCH_MAX", default_value_t = DEFAULT_BATCH_MAX, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub batch_max: u32,

    /// How soon other processes' events and due retries are seen, in ms.
    #[arg(long = "webhook-poll-ms", env = "LMS_WEBHOOK_POLL_MS", default_value_t = DEFAULT_POLL_MS, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub poll_ms: u64,

    /// How long a new delivery waits for more events after its first one committed, in ms
    /// (0: none). A burst of writes then leaves as a few full deliveries rather than one per
    /// event, and the dispatcher's work stops competing with the writes event by event.
    #[arg(long = "webhook-gather-ms", env = "LMS_WEBHOOK_GATHER_MS", default_value_t = DEFAULT_GATHER_MS, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub gather_ms: u64,

    /// Attempts at once per process (one per subscriber).
    #[arg(long = "webhook-concurrency", env = "LMS_WEBHOOK_CONCURRENCY", default_value_t = DEFAULT_CONCURRENCY, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub concurrency: u32,

    /// Events undelivered this long are discarded, in hours.
    #[arg(long = "webhook-retention-hours", env = "LMS_WEBHOOK_RETENTION_HOURS", default_value_t = DEFAULT_RETENTION_HOURS, value_parser = clap::value_parser!(u64).range(1..=87_600))]
    pub retention_hours: u64,

    /// Host names answered without DNS (lower-case name to addresses), still checked as
    /// any resolved address is; set by programs that start the core, never by a flag.
    #[arg(skip)]
    pub hosts: HashMap<String, Vec<IpAddr>>,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            allow_private_networks: false,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            retry_base_ms: DEFAULT_RETRY_BASE_MS,
            retry_max_ms: DEFAULT_RETRY_MAX_MS,
            give_up_ms: DEFAULT_GIVE_UP_MS,
            batch_max: DEFAULT_BATCH_MAX,
            poll_ms: DEFAULT_POLL_MS,
            gather_ms: DEFAULT_GATHER_MS,
            concurrency: DEFAULT_CONCURRENCY,
            retention_hours: DEFAULT_RETENTION_HOURS,
            hosts: HashMap::new(),
        }
    }
}

impl WebhookSettings {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    pub fn gather(&self) -> Duration {
        Duration::from_millis(self.gather_ms)
    }

    /// How long a claim on a subscriber lasts without renewal: two attempts and a margin.
    pub fn claim_lease(&self) -> Duration {
        2 * self.timeout() + Duration::from_secs(5)
    }

    /// The wait before the attempt after the `failures`-th consecutive failure, before
    /// jitter: min(base × 2^(n−1), max).
    pub fn backoff(&self, failures: u32) -> Duration {
        let exponent = failures.saturating_sub(1).min(40);
        let wait = self.retry_base_ms.saturating_mul(1_u64 << exponent);
        Duration::from_millis(wait.min(self.retry_max_ms))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        settings: WebhookSettings,
    }

    #[test]
    fn an_empty_command_line_gives_the_default_constants() {
        let parsed = Cli::try_parse_from(["lms-core"]).unwrap().settings;
        let defaults = WebhookSettings::default();
        assert_eq!(
            format!("{parsed:?}"),
            format!("{defaults:?}"),
            "clap and Default agree"
        );
    }

    #[test]
    fn the_backoff_doubles_up_to_its_maximum() {
        let settings = WebhookSettings::default();
        assert_eq!(settings.backoff(1), Duration::from_secs(10));
        assert_eq!(settings.backoff(2), Duration::from_secs(20));
        assert_eq!(settings.backoff(7), Duration::from_secs(640));
        assert_eq!(settings.backoff(8), Duration::from_secs(900));
        assert_eq!(settings.backoff(1000), Duration::from_secs(900));
    }

    #[test]
    fn out_of_range_values_refuse_the_start() {
        assert!(Cli::try_parse_from(["lms-core", "--webhook-batch-max", "0"]).is_err());
        assert!(Cli::try_parse_from(["lms-core", "--webhook-batch-max", "1001"]).is_err());
        assert!(Cli::try_parse_from(["lms-core", "--webhook-timeout-ms", "x"]).is_err());
        assert!(Cli::try_parse_from(["lms-core", "--webhook-gather-ms", "60001"]).is_err());
        let allowed = Cli::try_parse_from(["lms-core", "--webhook-allow-private-networks"])
            .unwrap()
            .settings;
        assert!(allowed.allow_private_networks);
    }
}
