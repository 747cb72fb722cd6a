//! The data layer's toolkit.
//!
//! Layout:
//! - this module: connecting (the URL alone chooses SQLite or PostgreSQL) and migrating.
//! - [`fault`]: database errors that mean "out of reach for the moment" (503, not 500), the
//!   closing of pooled connections a fault may have broken, and the root cause for the log.
//! - [`sqlite_file`]: a missing SQLite file is made only when asked or on a first start, and a
//!   file deleted under the running service is noticed.
//! - [`checkpoint`]: SQLite's write-ahead log copied back into the file by a task of its own,
//!   never inside a request.
//! - [`bulk`]: inserts and `IN (…)` lists chunked below the bound-parameter limits.
//! - [`rows`]: plain multi-row `INSERT`s (arrays on PostgreSQL) for the largest writes.
//! - [`pg_array`]: the one way a PostgreSQL array is bound: its text, cast in SQL.
//! - [`pg_transaction`] and [`copy`]: PostgreSQL only, a transaction on a sqlx connection of
//!   the pool that answers SeaORM's queries and also `COPY`s rows in, for the import.
//! - [`conflict`]: unique-key violations become conflicts, the same way on both backends.
//! - [`auth_revision`]: watching the row that says who a caller is has changed.
//! - [`autovacuum`]: a PostgreSQL server without it is named at start.
//! - [`reads`]: the hottest reads (a group with its members), on connections held outside
//!   the pool and returned without its per-release ping.

use std::time::Duration;

pub mod auth_revision;
pub mod autovacuum;
pub mod bulk;
pub mod checkpoint;
pub mod conflict;
pub mod copy;
pub mod fault;
pub mod pg_array;
pub mod pg_transaction;
pub mod reads;
pub mod rows;
pub mod sqlite_file;

use anyhow::Context as _;
use sea_orm::{
    ConnectOptions, Database, DatabaseConnection,
    sqlx::{
        self,
        pool::PoolConnectionMetadata,
        sqlite::{SqliteJournalMode, SqliteSynchronous},
    },
};

pub use self::{
    conflict::{UniqueKey, unique_violation},
    reads::ReadConnections,
};

/// The default embedded database, relative to the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://lms-data/lms.sqlite3";

pub use self::sqlite_file::CreateDatabase;

/// How long a request waits for a PostgreSQL connection, including reconnecting to a server
/// that refuses connections. sqlx has no connect timeout of its own: this bounds each
/// connection attempt too.
pub const POSTGRES_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one statement of a request may run on PostgreSQL (`statement_timeout` of the
/// serving pool): below the gateway's default deadline (10 s), so a statement stuck on a lock
/// is answered 503, not 504; with room for the longest legitimate statement (a 10,000-id
/// delete with its audit rows) on a loaded machine.
pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(8);

/// How long a serving PostgreSQL session may sit idle inside a transaction before the server
/// ends it (`idle_in_transaction_session_timeout`): a core cut off mid-transaction leaves a
/// backend holding its locks (the account's write lock, say) until then. Above any pause of
/// a live write (a password hashed inside it waits at most a few seconds).
const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(10);

/// Rows a SQLite connection's thread may send ahead of the task reading them. sqlx's default
/// of 50 stops the thread every 50 rows of a page of 1,000 until the reader catches up, and
/// each stop and start is a trip through the scheduler on both threads.
const ROW_BUFFER: usize = 1_024;

/// Connects to `url`. A missing SQLite file is created only as `create` allows
/// ([`sqlite_file::prepare`]), and every connection gets the settings of docs/decisions.md
/// ("SQLite connection settings"): WAL so readers never wait for the writer, synchronous
/// NORMAL (durable at each checkpoint, never corrupt), a 32 MiB page cache, 64 MiB of
/// memory-mapped reads, temporary tables in memory, and checkpoints in a task of their own
/// ([`checkpoint`]).
///
/// On both backends a pooled connection opened before the last broken-connection error
/// ([`fault`]) is closed when it comes back to the pool or is taken from it, so one fault
/// does not poison later requests.
pub async fn connect(url: &str, create: CreateDatabase) -> anyhow::Result<DatabaseConnection> {
    connect_with(url, create, None).await
}

/// As [`connect`]; on PostgreSQL, each connection's statements are bounded by
/// `statement_timeout` when one is given (the serving pool: [`open_for_serving`]).
async fn connect_with(
    url: &str,
    create: CreateDatabase,
    statement_timeout: Option<Duration>,
) -> anyhow::Result<DatabaseConnection> {
    let mut options = ConnectOptions::new(url.to_owned());
    options.sqlx_logging(false);
    if is_sqlite(url) {
        let may_create = sqlite_file::prepare(url, create)?;
        options
            .max_connections(4)
            .min_connections(1)
            .map_sqlx_sqlite_opts(move |opts| {
                opts.create_if_missing(may_create)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .foreign_keys(true)
                    .busy_timeout(Duration::from_secs(30))
                    // Negative: KiB rather than pages, whatever the page size.
                    .pragma("cache_size", "-32768")
                    .pragma("mmap_size", "67108864")
                    // Checkpoints run in `checkpoint`'s task, not in the committing
                    // request; a log grown by a large write is cut back to this size.
                    .pragma("wal_autocheckpoint", "0")
                    .pragma("journal_size_limit", "67108864")
                    .row_buffer_size(ROW_BUFFER)
            })
            // A ping of an embedded file proves nothing, and would cost every query a
            // second hop to the connection's thread.
            .test_before_acquire(false)
            .map_sqlx_sqlite_before_acquire(|_, meta| Box::pin(keep_connection(meta)))
            .map_sqlx_sqlite_pool_opts(|pool| {
                pool.after_release(|_, meta| Box::pin(keep_connection(meta)))
            })
            .acquire_timeout(Duration::from_secs(10));
    } else {
        // Pinging every checkout would double the round trips of every query; a connection
        // idle long enough to have been dropped by the server or a firewall is pinged.
        options
            .max_connections(16)
            .min_connections(1)
            .test_before_acquire_if_idle_for(Duration::from_secs(30))
            // NOTICEs (`relation "seaql_migrations" already exists, skipping` at every start)
            // tell an operator nothing; warnings and errors still come.
            .map_sqlx_postgres_opts(|opts| opts.options([("client_min_messages", "warning")]))
            .map_sqlx_postgres_before_acquire(|_, meta| Box::pin(keep_connection(meta)))
            .map_sqlx_postgres_pool_opts(|pool| {
                pool.after_release(|_, meta| Box::pin(keep_connection(meta)))
            })
            // sqlx retries a refused connection until this passes: below the gateway's
            // default deadline (10 s), so a server that is down is answered 503 (retry), not
            // 504.
            .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT);
        if let Some(timeout) = statement_timeout {
            // Startup parameters, so every connection of the pool (and the read connections
            // made from its options) has them from its first statement.
            options.map_sqlx_postgres_opts(move |opts| {
                opts.options([
                    ("statement_timeout", millis_setting(timeout)),
                    (
                        "idle_in_transaction_session_timeout",
                        millis_setting(IDLE_IN_TRANSACTION_TIMEOUT.max(timeout)),
                    ),
                ])
            });
        }
        // The pool retries a refused connection until its acquire timeout and then reports
        // only "pool timed out"; one direct attempt first says what is wrong, at once.
        probe_postgres(url).await?;
    }
    let db = Database::connect(options)
        .await
        .with_context(|| format!("cannot connect to the database at {}", redact_url(url)))?;
    sqlite_file::remember_connected(&db);
    checkpoint::spawn(&db, url)
        .await
        .with_context(|| format!("cannot open the database at {}", redact_url(url)))?;
    Ok(db)
}

/// One connection to the PostgreSQL server of `url`, opened and closed: its error names the
/// cause (connection refused at which address, unknown host, authentication, missing database)
/// instead of the pool's timeout.
async fn probe_postgres(url: &str) -> anyhow::Result<()> {
    use sqlx::{ConnectOptions as _, Connection as _};
    let options: sqlx::postgres::PgConnectOptions = url
        .parse()
        .with_context(|| format!("invalid database URL {}", redact_url(url)))?;
    let address = format!("{}:{}", options.get_host(), options.get_port());
    let attempt = tokio::time::timeout(POSTGRES_ACQUIRE_TIMEOUT, options.connect()).await;
    let cannot = || format!("cannot connect to the database at {}", redact_url(url));
    match attempt {
        Ok(Ok(connection)) => {
            // Closing politely is a courtesy; a failure to do so does not matter here.
            let _ = connection.close().await;
            Ok(())
        }
        Ok(Err(sqlx::Error::Io(io))) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            Err(anyhow::anyhow!(
                "connection refused by {address}: is PostgreSQL running and listening there?"
            ))
            .with_context(cannot)
        }
        Ok(Err(error)) => Err(anyhow::Error::new(error)).with_context(cannot),
        Err(_elapsed) => Err(anyhow::anyhow!(
            "no answer from {address} within {} s",
            POSTGRES_ACQUIRE_TIMEOUT.as_secs()
        ))
        .with_context(cannot),
    }
}

/// The pool hooks' answer: `false` closes a connection a fault may have broken.
async fn keep_connection(meta: PoolConnectionMetadata) -> Result<bool, sqlx::Error> {
    Ok(!fault::opened_before_last_fault(meta.age))
}

/// Applies every pending migration, said in one line.
pub async fn migrate(db: &DatabaseConnection) -> anyhow::Result<()> {
    // One trace for the start-up's statements, not one per statement.
    let span = tracing::info_span!("migrate");
    let migrated = tracing::Instrument::instrument(lms_migrations::migrate(db), span)
        .await
        .context("database migration failed")?;
    tracing::info!("database: {migrated}");
    Ok(())
}

/// Connects and migrates: what every process does first.
pub async fn open(url: &str, create: CreateDatabase) -> anyhow::Result<DatabaseConnection> {
    let db = connect(url, create).await?;
    migrate(&db).await?;
    Ok(db)
}

/// [`open`] for a process serving requests: migrations run unbounded on a pool of their
/// own, then on PostgreSQL the requests' pool bounds every statement by `statement_timeout`
/// (the import and maintenance commands use [`open`], whose long statements must not be
/// cut).
pub async fn open_for_serving(
    url: &str,
    create: CreateDatabase,
    statement_timeout: Duration,
) -> anyhow::Result<DatabaseConnection> {
    let db = open(url, create).await?;
    if is_sqlite(url) {
        return Ok(db);
    }
    db.close()
        .await
        .context("closing the migration connections")?;
    let db = connect_with(url, CreateDatabase::OnFirstStart, Some(statement_timeout)).await?;
    autovacuum::warn_if_off(&db).await;
    Ok(db)
}

/// A duration as a PostgreSQL setting in milliseconds.
fn millis_setting(duration: Duration) -> String {
    format!("{}ms", duration.as_millis())
}

fn is_sqlite(url: &str) -> bool {
    url.starts_with("sqlite:")
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
