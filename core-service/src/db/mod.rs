//! The data layer's toolkit.
//!
//! Layout:
//! - this module: connecting (the URL alone chooses SQLite or PostgreSQL) and migrating.
//! - [`write`](mod@write): the one way a change is written: account lock, audit rows, commit, then
//!   the credentials cache told when callers changed.
//! - [`audit`]: the audit record, with its actions and entity kinds as enums.
//! - [`bulk`]: inserts and `IN (…)` lists chunked below the bound-parameter limits.
//! - [`rows`]: plain multi-row `INSERT`s (arrays on PostgreSQL) for the largest writes.
//! - [`conflict`]: unique-key violations become conflicts, the same way on both backends.

use std::{path::Path, time::Duration};

pub mod audit;
pub mod bulk;
pub mod conflict;
pub mod rows;
pub mod write;

use anyhow::Context as _;
use lms_migrations::{Migrator, MigratorTrait as _};
use sea_orm::{
    ConnectOptions, Database, DatabaseConnection,
    sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous},
};

pub use self::{
    audit::{Actor, AuditAction, AuditEntity, Change},
    conflict::{UniqueKey, unique_violation},
    write::{Write, write},
};

/// The default embedded database, relative to the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://lms-data/lms.sqlite3";

/// Connects to `url`. For SQLite the file and its folder are created when missing,
/// and every connection gets the settings of docs/decisions.md ("SQLite connection
/// settings"): WAL so readers never wait for the writer, synchronous NORMAL (durable at
/// each checkpoint, never corrupt), a 32 MiB page cache, 64 MiB of memory-mapped reads
/// and temporary tables in memory.
pub async fn connect(url: &str) -> anyhow::Result<DatabaseConnection> {
    let mut options = ConnectOptions::new(url.to_owned());
    options.sqlx_logging(false);
    if is_sqlite(url) {
        ensure_sqlite_folder(url)?;
        options
            .max_connections(4)
            .min_connections(1)
            .map_sqlx_sqlite_opts(|opts| {
                opts.create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .foreign_keys(true)
                    .busy_timeout(Duration::from_secs(30))
                    // Negative: KiB rather than pages, whatever the page size.
                    .pragma("cache_size", "-32768")
                    .pragma("mmap_size", "67108864")
                    .pragma("temp_store", "memory")
            })
            // A ping of an embedded file proves nothing, and would cost every query a
            // second hop to the connection's thread.
            .test_before_acquire(false);
    } else {
        // Pinging every checkout would double the round trips of every query; a connection
        // idle long enough to have been dropped by the server or a firewall is pinged.
        options
            .max_connections(16)
            .min_connections(1)
            .test_before_acquire_if_idle_for(Duration::from_secs(30));
    }
    options.acquire_timeout(Duration::from_secs(10));
    Database::connect(options)
        .await
        .with_context(|| format!("cannot connect to the database at {}", redact_url(url)))
}

/// Applies every pending migration.
pub async fn migrate(db: &DatabaseConnection) -> anyhow::Result<()> {
    Migrator::up(db, None)
        .await
        .context("database migration failed")
}

/// Connects and migrates: what every process does first.
pub async fn open(url: &str) -> anyhow::Result<DatabaseConnection> {
    let db = connect(url).await?;
    migrate(&db).await?;
    Ok(db)
}

fn is_sqlite(url: &str) -> bool {
    url.starts_with("sqlite:")
}

fn ensure_sqlite_folder(url: &str) -> anyhow::Result<()> {
    let path = url.trim_start_matches("sqlite:").trim_start_matches("//");
    let path = path.split('?').next().unwrap_or_default();
    if path.is_empty() || path.starts_with(":memory:") {
        return Ok(());
    }
    if let Some(parent) = Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the database folder {}", parent.display()))?;
    }
    Ok(())
}

/// The URL without its password, for messages and logs.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}://{}:***@{}", &url[..scheme_end], user, &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn passwords_in_database_urls_are_redacted() {
        assert_eq!(
            redact_url("postgres://lms:secret@db:5432/lms"),
            "postgres://lms:***@db:5432/lms"
        );
        assert_eq!(
            redact_url("sqlite://lms-data/lms.sqlite3"),
            "sqlite://lms-data/lms.sqlite3"
        );
    }
}
