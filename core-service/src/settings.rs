//! The typed settings of `lms-core`: flags with environment fallbacks.

use std::{net::SocketAddr, time::Duration};

use crate::{
    auth::{AuthSettings, PasswordPolicy, default_verification_slots},
    db::DEFAULT_DATABASE_URL,
};

const DEFAULT_GRPC_PORT: u16 = 50051;
const DEFAULT_GRPC_ADDR: &str = "127.0.0.1:50051";

#[derive(Debug, Clone, clap::Args)]
pub struct CoreSettings {
    /// Database URL: `sqlite://PATH` (embedded, the default) or `postgres://...`.
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
    pub database_url: String,

    /// Address the gRPC server listens on (port 0 picks a free port).
    #[arg(long, env = "LMS_GRPC_ADDR", default_value = DEFAULT_GRPC_ADDR)]
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
    #[arg(long, env = "LMS_AUTH_CACHE_CAPACITY", default_value_t = 10_000)]
    pub auth_cache_capacity: u64,

    /// Password verifications running at once (default: half the cores, at least 1).
    #[arg(long, env = "LMS_MAX_CONCURRENT_VERIFICATIONS", default_value_t = default_verification_slots())]
    pub max_concurrent_verifications: usize,

    /// How long a request may wait for a verification slot before it is shed with 503.
    #[arg(
        long,
        env = "LMS_VERIFICATION_QUEUE_TIMEOUT_MS",
        default_value_t = 2_000
    )]
    pub verification_queue_timeout_ms: u64,

    /// How often changes to users made by other processes are looked for, in ms (their
    /// changes apply within about this long; this process's own apply at once).
    #[arg(long, env = "LMS_AUTH_REVISION_POLL_MS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub auth_revision_poll_ms: u64,
}

impl CoreSettings {
    /// Settings for a database URL, everything else at its default.
    pub fn for_database(database_url: impl Into<String>) -> Self {
        let defaults = AuthSettings::default();
        Self {
            database_url: database_url.into(),
            grpc_addr: SocketAddr::from(([127, 0, 0, 1], DEFAULT_GRPC_PORT)),
            argon2_memory_kib: defaults.password_policy.memory_kib,
            argon2_iterations: defaults.password_policy.iterations,
            argon2_parallelism: defaults.password_policy.parallelism,
            auth_cache_capacity: defaults.cache_capacity,
            max_concurrent_verifications: defaults.max_concurrent_verifications,
            verification_queue_timeout_ms: defaults.verification_queue_timeout.as_millis() as u64,
            auth_revision_poll_ms: defaults.revision_poll_interval.as_millis() as u64,
        }
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
    fn programmatic_defaults_match_the_command_line_defaults() {
        let parsed = Cli::parse_from(["lms-core"]).settings;
        let built = CoreSettings::for_database(DEFAULT_DATABASE_URL);
        assert_eq!(parsed.grpc_addr, built.grpc_addr);
        assert_eq!(parsed.grpc_addr.to_string(), DEFAULT_GRPC_ADDR);
        assert_eq!(parsed.password_policy(), built.password_policy());
        assert_eq!(parsed.auth_cache_capacity, built.auth_cache_capacity);
        assert_eq!(
            parsed.verification_queue_timeout_ms,
            built.verification_queue_timeout_ms
        );
        assert_eq!(parsed.auth_revision_poll_ms, built.auth_revision_poll_ms);
    }
}
