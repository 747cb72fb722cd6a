//! SQLite's write-ahead log copied back into the database file off the request path.
//!
//! By default SQLite checkpoints on the connection that commits once the log passes 1,000
//! pages, inside that request: a delete of 10,000 enrollments with scattered ids writes
//! about 28,000 pages to the log, and the request that wrote them also copied them into
//! the database file and synced it before answering. The pooled connections therefore run
//! with `wal_autocheckpoint = 0`, and one task per database ([`spawn`]) runs a `PASSIVE`
//! checkpoint on a connection of its own every [`CHECKPOINT_EVERY`]: it never waits for a
//! writer or a reader, and writers go on appending to the log while it copies.
//!
//! A `PASSIVE` checkpoint copies the log back but never starts it over: only a writer that
//! finds the log wholly copied *and* no reader using it does that, and under a steady mix of
//! reads and writes some reader always is (checkpoint starvation). The log then grows for as
//! long as the traffic lasts: 100,000 SCIM creates by four callers left 1.7 GB of log after
//! 25,000, every read searching a longer index of it. So once the log holds more than
//! [`RESTART_AFTER_PAGES`], the task runs a `TRUNCATE` checkpoint instead: it keeps new
//! writers out until the readers of the old log are done (readers starting meanwhile read the
//! file), copies the rest, and empties the log. It waits for them at most [`RESTART_WAIT`],
//! then gives up until the next tick, so a long read costs the writers that much at most.
//!
//! The task ends when the pool is closed or dropped; the last connection to close then
//! checkpoints what is left, as SQLite always does.

use std::time::Duration;

use sea_orm::{
    DatabaseConnection, DbBackend,
    sqlx::{self, ConnectOptions as _, Connection as _, sqlite::SqliteConnection},
};

/// How often the log is copied back. Short enough that the log stays small under a steady
/// stream of writes (a few MiB per second at most), long enough that an idle service does
/// nothing measurable: a `PASSIVE` checkpoint of an empty log reads one shared-memory header.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// Pages of log past which the task empties it (16 MiB of 4 KiB pages): a few seconds of the
/// heaviest writing, and a log whose index stays small.
pub const RESTART_AFTER_PAGES: i64 = 4_096;

/// How long an emptying checkpoint waits for the old log's readers, new writers waiting
/// behind it.
pub const RESTART_WAIT: Duration = Duration::from_millis(100);

/// Starts the checkpointing task of the SQLite file behind `db`; nothing for PostgreSQL or
/// an in-memory database.
pub(super) async fn spawn(db: &DatabaseConnection, url: &str) -> anyhow::Result<()> {
    if db.get_database_backend() != DbBackend::Sqlite
        || super::sqlite_file::sqlite_path(url).is_none()
    {
        return Ok(());
    }
    let pool = db.get_sqlite_connection_pool();
    let connection = pool.connect_options().as_ref().clone().connect().await?;
    let closed = pool.close_event();
    tokio::spawn(run(connection, closed));
    Ok(())
}

async fn run(mut connection: SqliteConnection, closed: sqlx::pool::CloseEvent) {
    let mut closed = std::pin::pin!(closed);
    let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let wait = sqlx::AssertSqlSafe(format!(
        "PRAGMA busy_timeout = {}",
        RESTART_WAIT.as_millis()
    ));
    if let Err(error) = sqlx::query(wait).execute(&mut connection).await {
        tracing::debug!(%error, "could not bound the checkpoint's wait");
    }
    loop {
        tokio::select! {
            () = &mut closed => break,
            _ = tick.tick() => {
                // A busy or vanished file is the next tick's business; the log only grows
                // until then.
                match checkpoint(&mut connection, "PASSIVE").await {
                    Ok(log_pages) if log_pages > RESTART_AFTER_PAGES => {
                        if let Err(error) = checkpoint(&mut connection, "TRUNCATE").await {
                            tracing::debug!(%error, log_pages, "emptying the WAL failed");
                        }
                    }
                    Ok(_) => {}
                    Err(error) => tracing::debug!(%error, "background WAL checkpoint failed"),
                }
            }
        }
    }
    // Closing politely is a courtesy; the file is consistent either way.
    let _ = connection.close().await;
}

/// Runs a checkpoint of `mode`; the pages in the log afterwards (SQLite answers `busy`, the
/// log's pages and those copied; a `TRUNCATE` that could not wait answers `busy` = 1).
async fn checkpoint(connection: &mut SqliteConnection, mode: &str) -> Result<i64, sqlx::Error> {
    let (busy, log_pages, _copied): (i64, i64, i64) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "PRAGMA wal_checkpoint({mode})"
    )))
    .fetch_one(connection)
    .await?;
    if busy != 0 {
        tracing::debug!(mode, log_pages, "WAL checkpoint could not finish");
    }
    Ok(log_pages)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use sea_orm::{ConnectionTrait as _, Statement};

    use super::*;
    use crate::db::{CreateDatabase, connect};

    /// Rows of 4,000 bytes written in one transaction: about one page each, twice SQLite's
    /// default autocheckpoint threshold.
    const ROWS: u64 = 2_000;

    #[tokio::test]
    async fn a_large_commit_reaches_the_database_file_with_no_checkpoint_in_the_write() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("lms.sqlite3");
        let url = format!("sqlite://{}", path.display());
        let db = connect(&url, CreateDatabase::Yes).await.unwrap();
        let autocheckpoint = db
            .query_one_raw(Statement::from_string(
                DbBackend::Sqlite,
                "PRAGMA wal_autocheckpoint",
            ))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(autocheckpoint.try_get_by_index::<i64>(0).unwrap(), 0);
        db.execute_unprepared("CREATE TABLE t (x BLOB)")
            .await
            .unwrap();
        db.execute_unprepared(&format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {ROWS}) \
             INSERT INTO t SELECT randomblob(4000) FROM n"
        ))
        .await
        .unwrap();
        // Nothing else writes: only the task can bring the rows into the file.
        let deadline = Instant::now() + 20 * CHECKPOINT_EVERY;
        while std::fs::metadata(&path).unwrap().len() < ROWS * 4_000 {
            assert!(
                Instant::now() < deadline,
                "the log was not copied into the file within {:?}",
                20 * CHECKPOINT_EVERY
            );
            tokio::time::sleep(CHECKPOINT_EVERY / 5).await;
        }
        db.close().await.unwrap();
    }

    /// A log past the threshold is emptied even while reads go on; a `PASSIVE` checkpoint
    /// alone copies it back but leaves the file as long as it grew.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_long_log_is_emptied_while_readers_come_and_go() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("lms.sqlite3");
        let wal = folder.path().join("lms.sqlite3-wal");
        let url = format!("sqlite://{}", path.display());
        let db = connect(&url, CreateDatabase::Yes).await.unwrap();
        db.execute_unprepared("CREATE TABLE t (x BLOB)")
            .await
            .unwrap();
        let rows = RESTART_AFTER_PAGES + 1_000;
        db.execute_unprepared(&format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows}) \
             INSERT INTO t SELECT randomblob(4000) FROM n"
        ))
        .await
        .unwrap();
        assert!(std::fs::metadata(&wal).unwrap().len() > RESTART_AFTER_PAGES as u64 * 4_096);
        let reading = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let reader = tokio::spawn({
            let (db, reading) = (db.clone(), reading.clone());
            async move {
                while reading.load(std::sync::atomic::Ordering::Relaxed) {
                    db.query_one_raw(Statement::from_string(
                        DbBackend::Sqlite,
                        "SELECT count(*) FROM t",
                    ))
                    .await
                    .unwrap();
                }
            }
        });
        let deadline = Instant::now() + 20 * CHECKPOINT_EVERY;
        while std::fs::metadata(&wal).map_or(0, |m| m.len()) > 0 {
            assert!(
                Instant::now() < deadline,
                "the log was not emptied within {:?}",
                20 * CHECKPOINT_EVERY
            );
            tokio::time::sleep(CHECKPOINT_EVERY / 5).await;
        }
        reading.store(false, std::sync::atomic::Ordering::Relaxed);
        reader.await.unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() >= rows as u64 * 4_000);
        db.close().await.unwrap();
    }
}
