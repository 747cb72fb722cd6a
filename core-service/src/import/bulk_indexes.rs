//! SQLite: the long tables' secondary indexes built once after a large import instead of
//! kept up to date row by row.
//!
//! Ids as customers bring them (iSpring's UUID v1, or v4) are scattered in byte order, so
//! each of a million enrollments goes into each of its table's indexes at a random place.
//! Once an index outgrows the page cache, every insert reads and rewrites pages that were
//! evicted a moment before: a million enrollments and their results took 72 s that way
//! against 21 s written without the indexes and indexed afterwards, which sorts the entries
//! and writes each page once, in order (measured with SQLite 3.40 and a 32 MiB cache).
//!
//! Only where it pays: a table whose import adds at least [`MIN_ROWS`] and at least as many
//! rows as it holds, since the build covers every row of the table, every account's. Unique
//! indexes stay: SQLite refuses a duplicate with them as the row goes in. All of it happens
//! inside the import's transaction: readers keep the indexes of their snapshot (SQLite's DDL
//! is transactional), and a refused import rolls the drop back with everything else.
//! On PostgreSQL dropping an index locks its table for every reader, so only a first load
//! drops them there, with the keys (`bulk_keys`).

use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr, Statement};

/// Fewer rows than this go in with the indexes in place: the build would not pay.
const MIN_ROWS: usize = 10_000;

/// How many threads SQLite's sorter may use while it builds an index (0 or 1: none besides
/// the connection's own). Two cut the builds of a 100,000-user account from 3.2 s to 2.3 s.
const SORT_THREADS: i64 = 2;

/// The page cache while the indexes are built, in KiB; each sorter thread holds as much.
const BUILD_CACHE_KIB: i64 = 8 * 1024;

/// Indexes dropped in the import's transaction, to be built again before it commits.
#[must_use = "the indexes must be built again before the commit"]
#[derive(Debug, Default)]
pub(super) struct Deferred {
    /// Each index's own `CREATE INDEX` statement, as SQLite keeps it.
    create: Vec<String>,
}

/// Drops the secondary, non-unique indexes of each of `tables` (name, rows the import adds)
/// where the import adds enough rows; on PostgreSQL, none.
pub(super) async fn defer(
    txn: &impl ConnectionTrait,
    tables: &[(&str, usize)],
) -> Result<Deferred, DbErr> {
    let mut deferred = Deferred::default();
    if txn.get_database_backend() != DatabaseBackend::Sqlite {
        return Ok(deferred);
    }
    for &(table, rows) in tables {
        if rows < MIN_ROWS || rows_at_most(txn, table).await? > rows as i64 {
            continue;
        }
        let indexes = txn
            .query_all_raw(Statement::from_sql_and_values(
                DatabaseBackend::Sqlite,
                // `origin = 'c'`: made by CREATE INDEX, not a key's or constraint's own.
                "SELECT s.name, s.sql FROM pragma_index_list(?) AS l \
                 JOIN sqlite_schema AS s ON s.type = 'index' AND s.name = l.name \
                 WHERE l.\"unique\" = 0 AND l.origin = 'c' AND s.sql IS NOT NULL \
                 ORDER BY s.name",
                [table.into()],
            ))
            .await?;
        for index in indexes {
            let name: String = index.try_get("", "name")?;
            deferred.create.push(index.try_get("", "sql")?);
            txn.execute_unprepared(&format!("DROP INDEX \"{}\"", name.replace('"', "\"\"")))
                .await?;
        }
    }
    Ok(deferred)
}

/// At least as many as the rows `table` holds, read from the end of its rowid B-tree: a
/// count would read every row.
async fn rows_at_most(txn: &impl ConnectionTrait, table: &str) -> Result<i64, DbErr> {
    let row = txn
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Sqlite,
            format!("SELECT COALESCE(MAX(rowid), 0) AS last FROM \"{table}\""),
        ))
        .await?;
    row.map_or(Ok(0), |row| row.try_get("", "last"))
}

impl Deferred {
    /// How many indexes are to be built.
    pub(super) fn len(&self) -> usize {
        self.create.len()
    }

    /// Builds the dropped indexes again, calling `built` after each.
    pub(super) async fn build(
        self,
        txn: &impl ConnectionTrait,
        mut built: impl FnMut(),
    ) -> Result<(), DbErr> {
        if self.create.is_empty() {
            return Ok(());
        }
        // Settings of the pooled connection, put back whatever happens to the builds. The
        // sorter keeps up to a cache's worth of entries in memory per thread before it
        // writes a sorted run to a temporary file: a small cache while building keeps the
        // import's peak where its writes put it, and the writes in index order need no more.
        let cache_size = pragma_value(txn, "cache_size").await?;
        set_best_effort(txn, "cache_size", -BUILD_CACHE_KIB).await;
        set_best_effort(txn, "threads", SORT_THREADS).await;
        let mut result = Ok(());
        for create in &self.create {
            result = txn.execute_unprepared(create).await.map(drop);
            if result.is_err() {
                break;
            }
            built();
        }
        set_best_effort(txn, "threads", 0).await;
        if let Some(cache_size) = cache_size {
            set_best_effort(txn, "cache_size", cache_size).await;
        }
        result
    }
}

/// The value of an integer pragma, when SQLite answers one.
async fn pragma_value(txn: &impl ConnectionTrait, pragma: &str) -> Result<Option<i64>, DbErr> {
    let row = txn
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Sqlite,
            format!("PRAGMA {pragma}"),
        ))
        .await?;
    Ok(row.and_then(|row| row.try_get_by_index(0).ok()))
}

/// Sets a pragma that only changes how fast or in how much memory the builds run: one SQLite
/// refuses leaves the builds as they would have been.
async fn set_best_effort(txn: &impl ConnectionTrait, pragma: &str, value: i64) {
    if let Err(error) = txn
        .execute_unprepared(&format!("PRAGMA {pragma} = {value}"))
        .await
    {
        tracing::debug!(%error, pragma, value, "a setting for building indexes was refused");
    }
}
