//! The typed settings of `lms-core`: flags with environment fallbacks.
//!
//! Every default is one constant, used by clap and by [`CoreSettings::for_database`] alike.

use std::{
    net::{Ipv4Addr, SocketAddr, SocketAddrV4},
    time::Duration,
};

use crate::{
    auth::{
        AuthSettings, DEFAULT_CACHE_CAPACITY, DEFAULT_REVISION_POLL_INTERVAL,
        DEFAULT_THROTTLED_REPLY_DELAY, DEFAULT_VERIFICATION_QUEUE_TIMEOUT, PasswordPolicy,
        default_verification_slots,
    },
    db::{CreateDatabase, DEFAULT_DATABASE_URL, DEFAULT_STATEMENT_TIMEOUT},
    rate_limit::RateLimitSettings,
};

/// Where the gRPC server listens unless configured: loopback only.
pub const DEFAULT_GRPC_ADDR: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 50051));

/// How often the SQLite file is checked to still be there.
pub const DEFAULT_DATABASE_FILE_CHECK: Duration = Duration::from_secs(5);

/// Durations are configured in whole milliseconds.
const fn millis(duration: Duration) -> u64 {
    duration.as_millis() as u64
}

#[derive(Debug, Clone, clap::Args)]
pub struct CoreSettings {
    /// Database URL: `sqlite://PATH` (embedded, the default) or `postgres://...`.
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
    pub database_url: String,

    /// Create the SQLite file when it is missing. Without it a missing file is created only
    /// on a first start (its folder does not exist either); otherwise the start is refused,
    /// since a deleted database must not come back empty.
    #[arg(long, env = "LMS_CREATE_DATABASE")]
    pub create_database: bool,

    /// How often the SQLite file is checked to still be the one opened, in ms (a deleted or
    /// replaced file turns health NOT_SERVING and requests to 503).
    #[arg(long, env = "LMS_DATABASE_FILE_CHECK_MS", default_value_t = millis(DEFAULT_DATABASE_FILE_CHECK), value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub database_file_check_ms: u64,

    /// How often the database is probed for the gRPC health service, in ms (health is
    /// NOT_SERVING and requests are refused at once while it does not answer; probed every
    /// half second then).
    #[arg(long, env = "LMS_DATABASE_PROBE_MS", default_value_t = millis(crate::health::DEFAULT_PROBE_INTERVAL), value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub database_probe_ms: u64,

    /// PostgreSQL: how long one statement of a request may run, in ms (`statement_timeout` of
    /// the serving connections; the import and migrations are not bounded). Keep it below the
    /// gateway's deadline, so a stuck statement is answered 503, not 504.
    #[arg(long, env = "LMS_DATABASE_STATEMENT_TIMEOUT_MS", default_value_t = millis(DEFAULT_STATEMENT_TIMEOUT), value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub database_statement_timeout_ms: u64,

    /// Address serving Prometheus metrics at `GET /metrics` (off unless set; `lms up` serves
    /// both halves' metrics there).
    #[arg(long, env = "LMS_METRICS_ADDR")]
    pub metrics_addr: Option<SocketAddr>,

    /// Address the gRPC server listens on (port 0 picks a free port).
    #[arg(long, env = "LMS_GRPC_ADDR", default_value_t = DEFAULT_GRPC_ADDR)]
    pub grpc_addr: SocketAddr,

    /// Argon2id memory cost for new password hashes, in KiB.
    #[arg(long, env = "LMS_ARGON2_MEMORY_KIB", default_value_t = PasswordPolicy::default().memory_kib)]
    pub argon2_memory_kib: u32,

    /// Argon2id iterations for new password hashes.
    #[arg(long, env = "LMS_ARGON2_ITERATIONS", default_value_t = PasswordPolicy::default().iterations)]
    pub argon2_iterations: u32,

    /// Argon2id parallelism for new password hashes.
    #[arg(long, env = "LMS_ARGON2_PARALLELISM", default_value_t = PasswordPolicy::default().parallelism)]
    pub argon2_parallelism: u32,

    /// Entries of the verified-credentials cache (0 disables it).
    #[arg(long, env = "LMS_AUTH_CACHE_CAPACITY", default_value_t = DEFAULT_CACHE_CAPACITY)]
    pub auth_cache_capacity: u64,

    /// Password verifications running at once (default: half the cores, at least 1).
    #[arg(long, env = "LMS_MAX_CONCURRENT_VERIFICATIONS", default_value_t = default_verification_slots())]
    pub max_concurrent_verifications: usize,

    /// How long a request may wait for a verification slot before it is shed with 503.
    #[arg(
        long,
        env = "LMS_VERIFICATION_QUEUE_TIMEOUT_MS",
        default_value_t = millis(DEFAULT_VERIFICATION_QUEUE_TIMEOUT)
    )]
    pub verification_queue_timeout_ms: u64,

    /// How often changes to users made by other processes are looked for, in ms (their
    /// changes apply within about this long; this process's own apply at once).
    #[arg(long, env = "LMS_AUTH_REVISION_POLL_MS", default_value_t = millis(DEFAULT_REVISION_POLL_INTERVAL), value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub auth_revision_poll_ms: u64,

    /// How long an attempt on a throttled login is held before its 429, in ms (slows a
    /// client hammering a locked login to a trickle).
    #[arg(
        long,
        env = "LMS_THROTTLED_REPLY_DELAY_MS",
        default_value_t = millis(DEFAULT_THROTTLED_REPLY_DELAY)
    )]
    pub throttled_reply_delay_ms: u64,

    #[command(flatten)]
    pub rate_limits: RateLimitSettings,

    /// Webhook delivery (`docs/spec/webhooks.md`, section 11).
    #[command(flatten)]
    pub webhooks: crate::webhooks::WebhookSettings,

    /// Scheduled deactivation and termination (`docs/spec/provisioning.md`, sections 6 and 14).
    #[command(flatten)]
    pub scheduler: crate::scheduler::SchedulerSettings,
}

impl CoreSettings {
    /// Settings for a database URL, everything else at its default.
    pub fn for_database(database_url: impl Into<String>) -> Self {
        let policy = PasswordPolicy::default();
        Self {
            database_url: database_url.into(),
            create_database: false,
            database_file_check_ms: millis(DEFAULT_DATABASE_FILE_CHECK),
            database_probe_ms: millis(crate::health::DEFAULT_PROBE_INTERVAL),
            database_statement_timeout_ms: millis(DEFAULT_STATEMENT_TIMEOUT),
            metrics_addr: None,
            grpc_addr: DEFAULT_GRPC_ADDR,
            argon2_memory_kib: policy.memory_kib,
            argon2_iterations: policy.iterations,
            argon2_parallelism: policy.parallelism,
            auth_cache_capacity: DEFAULT_CACHE_CAPACITY,
            max_concurrent_verifications: default_verification_slots(),
            verification_queue_timeout_ms: millis(DEFAULT_VERIFICATION_QUEUE_TIMEOUT),
            auth_revision_poll_ms: millis(DEFAULT_REVISION_POLL_INTERVAL),
            throttled_reply_delay_ms: millis(DEFAULT_THROTTLED_REPLY_DELAY),
            rate_limits: RateLimitSettings::default(),
            webhooks: crate::webhooks::WebhookSettings::default(),
            scheduler: crate::scheduler::SchedulerSettings::default(),
        }
    }

    /// Whether a missing SQLite file may be created.
    pub fn create_database(&self) -> CreateDatabase {
        CreateDatabase::when(self.create_database)
    }

    pub fn password_policy(&self) -> PasswordPolicy {
        PasswordPolicy {
            memory_kib: self.argon2_memory_kib,
            iterations: self.argon2_iterations,
            parallelism: self.argon2_parallelism,
        }
    }

    pub fn auth_settings(&self) -> AuthSettings {
        AuthSettings {
            password_policy: self.password_policy(),
            cache_capacity: self.auth_cache_capacity,
            max_concurrent_verifications: self.max_concurrent_verifications,
            verification_queue_timeout: Duration::from_millis(self.verification_queue_timeout_ms),
            revision_poll_interval: Duration::from_millis(self.auth_revision_poll_ms),
            throttled_reply_delay: Duration::from_millis(self.throttled_reply_delay_ms),
            ..AuthSettings::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        settings: CoreSettings,
    }

    #[test]
    fn an_empty_command_line_gives_the_default_constants() {
        let parsed = Cli::parse_from(["lms-core"]).settings;
        assert_eq!(parsed.grpc_addr, DEFAULT_GRPC_ADDR);
        assert_eq!(parsed.password_policy(), PasswordPolicy::default());
        assert_eq!(parsed.auth_cache_capacity, DEFAULT_CACHE_CAPACITY);
        assert_eq!(
            parsed.max_concurrent_verifications,
            default_verification_slots()
        );
        let auth = parsed.auth_settings();
        assert_eq!(
            auth.verification_queue_timeout,
            DEFAULT_VERIFICATION_QUEUE_TIMEOUT
        );
        assert_eq!(auth.revision_poll_interval, DEFAULT_REVISION_POLL_INTERVAL);
        assert_eq!(auth.throttled_reply_delay, DEFAULT_THROTTLED_REPLY_DELAY);
    }

    #[test]
    fn programmatic_defaults_match_the_command_line_defaults() {
        let parsed = Cli::parse_from(["lms-core"]).settings;
        let built = CoreSettings::for_database(DEFAULT_DATABASE_URL);
        assert_eq!(parsed.grpc_addr, built.grpc_addr);
        assert_eq!(parsed.grpc_addr.to_string(), "127.0.0.1:50051");
        assert_eq!(parsed.password_policy(), built.password_policy());
        assert_eq!(parsed.auth_cache_capacity, built.auth_cache_capacity);
        assert_eq!(
            parsed.verification_queue_timeout_ms,
            built.verification_queue_timeout_ms
        );
        assert_eq!(parsed.auth_revision_poll_ms, built.auth_revision_poll_ms);
        assert_eq!(parsed.create_database, built.create_database);
        assert_eq!(parsed.database_file_check_ms, built.database_file_check_ms);
        assert_eq!(
            parsed.database_statement_timeout_ms,
            built.database_statement_timeout_ms
        );
        assert_eq!(
            parsed.throttled_reply_delay_ms,
            built.throttled_reply_delay_ms
        );
        assert_eq!(parsed.rate_limits, built.rate_limits);
        assert_eq!(parsed.scheduler, built.scheduler);
    }

    #[test]
    fn rate_limits_are_on_by_default_and_each_is_switched_off_by_a_zero() {
        use crate::rate_limit::{
            DEFAULT_ACCOUNT_BURST, DEFAULT_ACCOUNT_RPS, DEFAULT_CALLER_BURST, DEFAULT_CALLER_RPS,
        };
        let limits = Cli::parse_from(["lms-core"]).settings.rate_limits;
        let caller = limits.caller_limit().expect("a caller limit by default");
        assert_eq!(
            (caller.per_second.get(), caller.burst.get()),
            (DEFAULT_CALLER_RPS, DEFAULT_CALLER_BURST)
        );
        let account = limits.account_limit().expect("an account limit by default");
        assert_eq!(
            (account.per_second.get(), account.burst.get()),
            (DEFAULT_ACCOUNT_RPS, DEFAULT_ACCOUNT_BURST)
        );
        let limits = Cli::parse_from([
            "lms-core",
            "--rate-limit-caller-rps",
            "0",
            "--rate-limit-account-rps",
            "7",
            "--rate-limit-account-burst",
            "9",
        ])
        .settings
        .rate_limits;
        assert_eq!(limits.caller_limit(), None);
        let account = limits.account_limit().unwrap();
        assert_eq!((account.per_second.get(), account.burst.get()), (7, 9));
        let limits = Cli::parse_from(["lms-core", "--rate-limit-account-burst", "0"])
            .settings
            .rate_limits;
        assert_eq!(limits.account_limit(), None);
        assert!(limits.caller_limit().is_some());
    }

    #[test]
    fn the_throttled_reply_delay_is_a_setting() {
        let parsed = Cli::parse_from(["lms-core", "--throttled-reply-delay-ms", "50"]).settings;
        assert_eq!(
            parsed.auth_settings().throttled_reply_delay,
            Duration::from_millis(50)
        );
    }
}
