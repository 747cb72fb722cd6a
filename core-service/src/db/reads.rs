//! Connections held for the hottest reads, outside the driver's pool (on a SQLite file, first
//! on the calling thread: `db/inline_sqlite.rs`).
//!
//! sqlx's pool tests every connection it takes back with a ping: on SQLite one more trip to
//! the connection's thread and back, on PostgreSQL one more round trip to the server, and a
//! task spawned to do it. For a read of one statement that ping is half of what the
//! database is asked per request. Here a connection goes back to the idle list as soon as
//! its statement has answered in full, without a ping: a statement that answered in full
//! left nothing behind on its connection. A read that did not finish (its request was
//! dropped midway, or it failed) closes its connection instead, so nothing half-read is
//! ever handed out again.
//!
//! The connections are made with the pool's own connect options (the same PRAGMAs on
//! SQLite), lazily, up to a bound, and are closed as the pool's are after a fault
//! ([`fault::opened_before_last_fault`]). Only single statements run here, never a
//! transaction: writes stay on the pool (on SQLite, with its one writer at a time).

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use lms_runtime::Outage;
use sea_orm::{
    ConnAcquireErr, DatabaseConnection, DbBackend, DbErr, QueryResult, RuntimeErr, Statement,
    sea_query::Values,
    sqlx::{
        self, PgConnection, SqliteConnection, postgres::PgConnectOptions,
        sqlite::SqliteConnectOptions,
    },
};
use sea_query_sqlx::SqlxValues;
use tokio::sync::Semaphore;
use tracing::Instrument as _;

use super::{
    fault,
    inline_sqlite::{InlineRows, InlineSqlite},
    read_batches::Batches,
};

/// Read connections on SQLite: as many as the pool's, so reads never queue behind more
/// threads than the two cores can run. On PostgreSQL fewer than the pool's 16, so a core
/// holds at most 24 server connections.
const SQLITE_READ_CONNECTIONS: usize = 4;
const POSTGRES_READ_CONNECTIONS: usize = 8;

/// The hot reads' connections of one database.
#[derive(Clone)]
pub struct ReadConnections {
    inner: Arc<Inner>,
    /// Reads waiting to be answered together (PostgreSQL: `db/read_batches.rs`).
    batches: Arc<Batches>,
}

enum Inner {
    Sqlite {
        /// Reads on the calling thread; `None` for an in-memory database.
        inline: Option<InlineSqlite>,
        /// The driver's connections, for what the inline reader hands back.
        held: Held<SqliteConnection, SqliteConnectOptions>,
    },
    Postgres(Held<PgConnection, PgConnectOptions>),
}

/// One row of a hot read, from whichever connection answered it. Its columns are read as
/// the three types both backends agree on (cast in SQL where they would not).
pub enum ReadRow {
    Driver(QueryResult),
    Inline {
        columns: Arc<[String]>,
        values: Vec<rusqlite::types::Value>,
    },
}

impl ReadRow {
    pub fn int(&self, column: &str) -> Result<i64, DbErr> {
        match self {
            Self::Driver(row) => row.try_get("", column),
            Self::Inline { .. } => match self.inline(column)? {
                rusqlite::types::Value::Integer(n) => Ok(*n),
                other => Err(type_error(column, "an integer", other)),
            },
        }
    }

    /// An integer column that may be NULL.
    pub fn optional_int(&self, column: &str) -> Result<Option<i64>, DbErr> {
        match self {
            Self::Driver(row) => row.try_get("", column),
            Self::Inline { .. } => match self.inline(column)? {
                rusqlite::types::Value::Null => Ok(None),
                rusqlite::types::Value::Integer(n) => Ok(Some(*n)),
                other => Err(type_error(column, "an integer", other)),
            },
        }
    }

    pub fn text(&self, column: &str) -> Result<Option<String>, DbErr> {
        match self {
            Self::Driver(row) => row.try_get("", column),
            Self::Inline { .. } => match self.inline(column)? {
                rusqlite::types::Value::Null => Ok(None),
                rusqlite::types::Value::Text(text) => Ok(Some(text.clone())),
                other => Err(type_error(column, "text", other)),
            },
        }
    }

    pub fn blob(&self, column: &str) -> Result<Option<Vec<u8>>, DbErr> {
        match self {
            Self::Driver(row) => row.try_get("", column),
            Self::Inline { .. } => match self.inline(column)? {
                rusqlite::types::Value::Null => Ok(None),
                rusqlite::types::Value::Blob(bytes) => Ok(Some(bytes.clone())),
                other => Err(type_error(column, "bytes", other)),
            },
        }
    }

    /// The inline row's value of `column` (a driver's row has none here).
    fn inline(&self, column: &str) -> Result<&rusqlite::types::Value, DbErr> {
        let Self::Inline { columns, values } = self else {
            return Err(DbErr::Type(format!("column {column} is the driver's")));
        };
        columns
            .iter()
            .position(|name| name == column)
            .and_then(|i| values.get(i))
            .ok_or_else(|| DbErr::Type(format!("no column {column} in the row")))
    }
}

fn type_error(column: &str, wanted: &str, found: &rusqlite::types::Value) -> DbErr {
    DbErr::Type(format!(
        "column {column}: wanted {wanted}, found {:?}",
        found.data_type()
    ))
}

struct Held<C, O> {
    options: O,
    idle: Mutex<Vec<Idle<C>>>,
    permits: Semaphore,
    /// The pool's: how long a read waits for a connection, connecting included, before
    /// it is answered as unavailable.
    acquire_timeout: Duration,
    /// Whether the database is down ([`fault::DATABASE_OUTAGE`] but in tests of this module).
    outage: &'static Outage,
}

struct Idle<C> {
    connection: C,
    opened: Instant,
}

impl ReadConnections {
    /// Read connections made like `db`'s pooled ones.
    pub fn of(db: &DatabaseConnection) -> Self {
        Self::watching(db, &fault::DATABASE_OUTAGE)
    }

    fn watching(db: &DatabaseConnection, outage: &'static Outage) -> Self {
        let inner = match db.get_database_backend() {
            DbBackend::Postgres => {
                let pool = db.get_postgres_connection_pool();
                // The hot statements are written for the generic plan (every lookup fenced
                // by key, `OFFSET 0`). Left to choose, PostgreSQL kept planning each
                // execution afresh when a custom plan looked cheaper than the generic one
                // (an array parameter's length is known only to a custom plan): 64 % of
                // the server's time for a batched group read went to the planner.
                let options = (*pool.connect_options())
                    .clone()
                    .options([("plan_cache_mode", "force_generic_plan")]);
                Inner::Postgres(Held::new(
                    options,
                    POSTGRES_READ_CONNECTIONS,
                    pool.options().get_acquire_timeout(),
                    outage,
                ))
            }
            _ => {
                let pool = db.get_sqlite_connection_pool();
                let options = (*pool.connect_options()).clone();
                Inner::Sqlite {
                    inline: InlineSqlite::of(&options, SQLITE_READ_CONNECTIONS, outage),
                    held: Held::new(
                        options,
                        SQLITE_READ_CONNECTIONS,
                        pool.options().get_acquire_timeout(),
                        outage,
                    ),
                }
            }
        };
        Self {
            inner: Arc::new(inner),
            batches: Arc::default(),
        }
    }

    pub(super) fn batches(&self) -> &Batches {
        &self.batches
    }

    pub fn backend(&self) -> DbBackend {
        match *self.inner {
            Inner::Sqlite { .. } => DbBackend::Sqlite,
            Inner::Postgres(_) => DbBackend::Postgres,
        }
    }

    /// Every row of one read-only `statement`, in the span SeaORM gives its statements
    /// (traces, and the query-plan tests' recorder, see every statement alike).
    pub async fn query_all(&self, statement: &Statement) -> Result<Vec<ReadRow>, DbErr> {
        self.traced(&statement.sql, self.run(statement)).await
    }

    /// `read`, in the span SeaORM gives a statement of `sql`.
    pub(super) async fn traced<T>(
        &self,
        sql: &str,
        read: impl Future<Output = Result<T, DbErr>>,
    ) -> Result<T, DbErr> {
        let span = tracing::info_span!(
            "sea_orm.query_all",
            otel.kind = "client",
            db.system = match self.backend() {
                DbBackend::Postgres => "postgresql",
                _ => "sqlite",
            },
            db.operation = "SELECT",
            db.statement = sql,
            otel.status_code = tracing::field::Empty,
        );
        let rows = read.instrument(span.clone()).await;
        span.record(
            "otel.status_code",
            if rows.is_ok() { "OK" } else { "ERROR" },
        );
        rows
    }

    /// The rows of a PostgreSQL `query` on a held connection.
    pub(super) async fn fetch_postgres<'q, A>(
        &self,
        query: sqlx::query::Query<'q, sqlx::Postgres, A>,
    ) -> Result<Vec<sqlx::postgres::PgRow>, DbErr>
    where
        A: sqlx::IntoArguments<sqlx::Postgres> + 'q,
    {
        let Inner::Postgres(held) = &*self.inner else {
            return Err(DbErr::Custom(
                "a PostgreSQL statement on a SQLite database".to_owned(),
            ));
        };
        let mut lease = held.lease().await?;
        let rows = query.fetch_all(lease.connection()).await;
        lease.finish(rows)
    }

    async fn run(&self, statement: &Statement) -> Result<Vec<ReadRow>, DbErr> {
        if let Inner::Sqlite {
            inline: Some(inline),
            ..
        } = &*self.inner
            && let Some(InlineRows { columns, rows }) = inline.read(statement)
        {
            return Ok(rows
                .into_iter()
                .map(|values| ReadRow::Inline {
                    columns: columns.clone(),
                    values,
                })
                .collect());
        }
        let values = SqlxValues(statement.values.clone().unwrap_or(Values(Vec::new())));
        let sql = sqlx::AssertSqlSafe(statement.sql.as_str());
        let rows = match &*self.inner {
            Inner::Sqlite { held, .. } => {
                let mut lease = held.lease().await?;
                let rows = sqlx::query_with(sql, values)
                    .fetch_all(lease.connection())
                    .await;
                lease
                    .finish(rows)?
                    .into_iter()
                    .map(|row| ReadRow::Driver(QueryResult::from(row)))
                    .collect()
            }
            Inner::Postgres(_) => self
                .fetch_postgres(sqlx::query_with(sql, values))
                .await?
                .into_iter()
                .map(|row| ReadRow::Driver(QueryResult::from(row)))
                .collect(),
        };
        Ok(rows)
    }
}

impl<C, O> Held<C, O>
where
    C: sqlx::Connection<Options = O>,
    O: sqlx::ConnectOptions<Connection = C>,
{
    fn new(options: O, size: usize, acquire_timeout: Duration, outage: &'static Outage) -> Self {
        Self {
            options,
            idle: Mutex::new(Vec::with_capacity(size)),
            permits: Semaphore::new(size),
            acquire_timeout,
            outage,
        }
    }

    /// An idle connection, or a new one while fewer than the bound are open; as the pool,
    /// a timeout when that takes longer than its acquire timeout.
    async fn lease(&self) -> Result<Lease<'_, C, O>, DbErr> {
        tokio::time::timeout(self.acquire_timeout, self.lease_untimed())
            .await
            .unwrap_or(Err(DbErr::ConnectionAcquire(ConnAcquireErr::Timeout)))
    }

    async fn lease_untimed(&self) -> Result<Lease<'_, C, O>, DbErr> {
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| DbErr::ConnectionAcquire(ConnAcquireErr::ConnectionClosed))?;
        let idle = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            // Every idle connection opened before the last fault goes, not only the one
            // taken: on SQLite the connections of one process share the file's `-shm`
            // mapping, and one opened while the files were unwritable keeps it read-only
            // (every write failing) for as long as it stays open, idle or not.
            // Dropped without a goodbye: a broken connection may never answer one.
            idle.retain(|held| !fault::opened_before_last_fault(held.opened.elapsed()));
            idle.pop()
        };
        if let Some(idle) = idle {
            return Ok(Lease {
                held: self,
                idle: Some(idle),
                _permit: permit,
            });
        }
        let connection = self
            .options
            .connect()
            .await
            .map_err(|err| DbErr::Conn(RuntimeErr::SqlxError(Arc::new(err))))?;
        Ok(Lease {
            held: self,
            idle: Some(Idle {
                connection,
                opened: Instant::now(),
            }),
            _permit: permit,
        })
    }
}

/// One connection out of [`Held`]: back to the idle list only through [`Lease::finish`]
/// with a complete answer; dropped otherwise.
struct Lease<'a, C, O> {
    held: &'a Held<C, O>,
    idle: Option<Idle<C>>,
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl<C, O> Lease<'_, C, O> {
    fn connection(&mut self) -> &mut C {
        &mut self
            .idle
            .as_mut()
            .unwrap_or_else(|| unreachable!("a lease holds its connection until it ends"))
            .connection
    }

    /// Gives the connection back after a complete answer; closes it after an error (the
    /// error's conversion into a service error counts it as a fault, as the pool's are).
    fn finish<T>(mut self, answer: Result<T, sqlx::Error>) -> Result<T, DbErr> {
        match answer {
            Ok(answer) => {
                // During an outage a connection serves one read only: one opened while the
                // files were unwritable would otherwise outlive the fault (see `lease`).
                let keep = !self.held.outage.is_down();
                if let Some(idle) = self.idle.take().filter(|_| keep) {
                    self.held
                        .idle
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(idle);
                }
                Ok(answer)
            }
            Err(err) => Err(DbErr::Query(RuntimeErr::SqlxError(Arc::new(err)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{future::Future as _, pin::pin, task::Poll};

    use sea_orm::{ConnectionTrait as _, Statement};

    use super::*;
    use crate::db::{self, CreateDatabase};

    impl ReadConnections {
        /// Idle connections: the inline reader's, and the driver's.
        fn idle(&self) -> (usize, usize) {
            match &*self.inner {
                Inner::Sqlite { inline, held } => (
                    inline.as_ref().map_or(0, InlineSqlite::idle),
                    held.idle.lock().unwrap().len(),
                ),
                Inner::Postgres(held) => (0, held.idle.lock().unwrap().len()),
            }
        }
    }

    fn select(sql: &str) -> Statement {
        Statement::from_string(DbBackend::Sqlite, sql)
    }

    async fn one_number(reads: &ReadConnections, sql: &str) -> i64 {
        let rows = reads.query_all(&select(sql)).await.expect("read");
        rows[0].int("n").expect("a number")
    }

    async fn database() -> (tempfile::TempDir, DatabaseConnection, ReadConnections) {
        let folder = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", folder.path().join("reads.sqlite3").display());
        let db = db::connect(&url, CreateDatabase::Yes).await.unwrap();
        db.execute_unprepared("CREATE TABLE t (n INTEGER NOT NULL)")
            .await
            .unwrap();
        // Its own outage flag: other tests of this crate mark the process's database down.
        static OUTAGE: Outage = Outage::new("the test database", Duration::from_secs(2));
        let reads = ReadConnections::watching(&db, &OUTAGE);
        (folder, db, reads)
    }

    #[tokio::test]
    async fn a_read_sees_what_the_pool_committed_and_only_finished_reads_give_their_connection_back()
     {
        let (_folder, db, reads) = database().await;

        assert_eq!(one_number(&reads, "SELECT count(*) AS n FROM t").await, 0);
        assert_eq!(
            reads.idle(),
            (1, 0),
            "a finished read gives its connection back, and the driver was not needed"
        );
        db.execute_unprepared("INSERT INTO t VALUES (7)")
            .await
            .unwrap();
        assert_eq!(
            one_number(&reads, "SELECT coalesce(sum(n), 0) AS n FROM t").await,
            7,
            "the held connection reads what the pool committed just before"
        );
        assert_eq!(
            reads.idle(),
            (1, 0),
            "and the same connection is used again"
        );

        // A read over the inline time budget goes to the driver; one dropped midway there
        // (its request cancelled) closes the driver's connection.
        let long = select(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000000) \
             SELECT count(*) AS n FROM c",
        );
        {
            let mut read = pin!(reads.query_all(&long));
            let polled = std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
            assert!(polled.is_pending(), "the long read is still running");
        }
        assert_eq!(
            reads.idle(),
            (1, 0),
            "the interrupted inline connection is kept; the driver's dropped midway is not"
        );
        assert_eq!(
            reads.query_all(&long).await.expect("read")[0]
                .int("n")
                .unwrap(),
            5_000_000,
            "a long read is answered in full, by the driver"
        );
        assert_eq!(reads.idle(), (1, 1));

        // A failed statement closes its connections, and the next read opens a new one.
        assert!(
            reads
                .query_all(&select("SELECT * FROM missing"))
                .await
                .is_err()
        );
        assert_eq!(reads.idle(), (0, 0));
        assert_eq!(one_number(&reads, "SELECT count(*) AS n FROM t").await, 1);
        assert_eq!(reads.idle(), (1, 0));
    }

    #[tokio::test]
    async fn inline_rows_read_as_the_drivers_do() {
        let (_folder, db, reads) = database().await;
        let id = uuid::Uuid::now_v7();
        let statement = |backend| {
            Statement::from_sql_and_values(
                backend,
                "SELECT CAST(?1 AS BLOB) AS id, 'name' AS name, NULL AS absent, \
                 CAST(42 AS BIGINT) AS answer, ?2 AS text_parameter",
                [id.into(), "caf\u{e9}".into()],
            )
        };
        let inline = reads
            .query_all(&statement(DbBackend::Sqlite))
            .await
            .unwrap();
        assert!(matches!(inline[0], ReadRow::Inline { .. }), "read inline");
        let driver = db
            .query_all_raw(statement(DbBackend::Sqlite))
            .await
            .unwrap();
        let driver = ReadRow::Driver(driver.into_iter().next().unwrap());
        for row in [&inline[0], &driver] {
            assert_eq!(
                row.blob("id").unwrap().as_deref(),
                Some(id.as_bytes().as_slice())
            );
            assert_eq!(row.text("name").unwrap().as_deref(), Some("name"));
            assert_eq!(row.text("absent").unwrap(), None);
            assert_eq!(row.blob("absent").unwrap(), None);
            assert_eq!(row.int("answer").unwrap(), 42);
            assert_eq!(
                row.text("text_parameter").unwrap().as_deref(),
                Some("caf\u{e9}")
            );
            assert!(row.int("name").is_err(), "text is not an integer");
        }
        assert!(inline[0].int("missing").is_err());
    }
}
