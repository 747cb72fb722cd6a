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
    loop {
        tokio::select! {
            () = &mut closed => break,
            _ = tick.tick() => {
                if let Err(error) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                    .execute(&mut connection)
                    .await
                {
                    // A busy or vanished file is the next tick's business; the log only
                    // grows until then.
                    tracing::debug!(%error, "background WAL checkpoint failed");
                }
            }
        }
    }
    // Closing politely is a courtesy; the file is consistent either way.
    let _ = connection.close().await;
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
}
