//! The hottest reads, on connections held outside the driver's pool.
//!
//! sqlx's pool tests every connection it takes back with a ping: on SQLite one more trip to
//! the connection's thread and back, on PostgreSQL one more round trip to the server, and a
//! task spawned to do it. For a read of one statement that ping is half of what the
//! database is asked per request. Here only single read-only statements run, never a
//! transaction: writes stay on the pool (on SQLite, with its one writer at a time).
//!
//! Layout (this module uses its children; they do not use it):
//! - this module: [`ReadConnections`], which picks the way each read goes, and the reads it
//!   offers ([`ReadConnections::group_with_members`]).
//! - `held`: driver connections made with the pool's own connect options (the same PRAGMAs
//!   on SQLite), given back without a ping after a complete answer.
//! - `inline_sqlite`: on a SQLite file, reads first on the calling thread.
//! - `batches`: on PostgreSQL, concurrent reads of one shape answered by one statement.
//! - `group`: the group read's statements and the decoding of their rows.
//! - `row`: [`ReadRow`], a row of whichever connection answered.

mod batches;
mod group;
mod held;
mod inline_sqlite;
mod row;

use std::sync::Arc;

use lms_runtime::Outage;
use sea_orm::{
    DatabaseConnection, DbBackend, DbErr, QueryResult, Statement, Value,
    prelude::Uuid,
    sea_query::Values,
    sqlx::{self, SqliteConnection, sqlite::SqliteConnectOptions},
};
use sea_query_sqlx::SqlxValues;
use tracing::Instrument as _;

pub use self::{batches::BatchedStatement, group::GroupWithMembers, row::ReadRow};
use self::{
    batches::{Batches, PgHeld},
    held::Held,
    inline_sqlite::{InlineRows, InlineSqlite},
};
use super::fault;

/// Read connections on SQLite: as many as the pool's, so reads never queue behind more
/// threads than the two cores can run. On PostgreSQL fewer than the pool's 16, so a core
/// holds at most 24 server connections.
const SQLITE_READ_CONNECTIONS: usize = 4;
const POSTGRES_READ_CONNECTIONS: usize = 8;

/// The hot reads' connections of one database.
#[derive(Clone)]
pub struct ReadConnections {
    inner: Arc<Inner>,
    /// Reads waiting to be answered together (PostgreSQL: `batches`).
    batches: Arc<Batches>,
}

// One per database, behind an `Arc`: the variants' sizes do not matter, and boxing the
// SQLite one would cost its every read one more pointer to follow.
#[expect(clippy::large_enum_variant)]
enum Inner {
    Sqlite {
        /// Reads on the calling thread; `None` for an in-memory database.
        inline: Option<InlineSqlite>,
        /// The driver's connections, for what the inline reader hands back.
        held: Held<SqliteConnection, SqliteConnectOptions>,
    },
    Postgres(Arc<PgHeld>),
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
                Inner::Postgres(Arc::new(Held::new(
                    options,
                    POSTGRES_READ_CONNECTIONS,
                    pool.options().get_acquire_timeout(),
                    outage,
                )))
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

    pub fn backend(&self) -> DbBackend {
        match *self.inner {
            Inner::Sqlite { .. } => DbBackend::Sqlite,
            Inner::Postgres(_) => DbBackend::Postgres,
        }
    }

    /// The group `group_id` of `account_id` with its members: their count and, when
    /// `with_ids`, their ids; `None` when the account has no such group. One statement
    /// (on PostgreSQL shared with the group reads arriving together), no pool ping after it.
    pub async fn group_with_members(
        &self,
        account_id: Uuid,
        group_id: Uuid,
        with_ids: bool,
    ) -> Result<Option<GroupWithMembers>, DbErr> {
        let rows = match self.backend() {
            DbBackend::Postgres => {
                self.query_batched(
                    &group::GROUPS_WITH_MEMBERS,
                    group::postgres_item(account_id, group_id, with_ids),
                )
                .await?
            }
            _ => {
                self.query_all(&group::sqlite_statement(account_id, group_id, with_ids))
                    .await?
            }
        };
        group::group_of(rows)
    }

    /// Every row of one read-only `statement`, in the span SeaORM gives its statements
    /// (traces, and the query-plan tests' recorder, see every statement alike).
    pub async fn query_all(&self, statement: &Statement) -> Result<Vec<ReadRow>, DbErr> {
        self.traced(&statement.sql, self.run(statement)).await
    }

    /// The rows of one item of `statement` (PostgreSQL only), read together with the items
    /// of concurrent callers.
    pub async fn query_batched(
        &self,
        statement: &'static BatchedStatement,
        values: Vec<Value>,
    ) -> Result<Vec<ReadRow>, DbErr> {
        let Inner::Postgres(held) = &*self.inner else {
            return Err(not_postgres());
        };
        self.traced(statement.sql, self.batches.read(held, statement, values))
            .await
    }

    /// `read`, in the span SeaORM gives a statement of `sql`.
    async fn traced<T>(
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
            Inner::Sqlite { held, .. } => held
                .fetch_all(sqlx::query_with(sql, values))
                .await?
                .into_iter()
                .map(|row| ReadRow::Driver(QueryResult::from(row)))
                .collect(),
            Inner::Postgres(held) => held
                .fetch_all(sqlx::query_with(sql, values))
                .await?
                .into_iter()
                .map(|row| ReadRow::Driver(QueryResult::from(row)))
                .collect(),
        };
        Ok(rows)
    }
}

fn not_postgres() -> DbErr {
    DbErr::Custom("a PostgreSQL statement on a SQLite database".to_owned())
}

#[cfg(test)]
mod tests {
    use std::{future::Future as _, pin::pin, task::Poll, time::Duration};

    use sea_orm::{ConnectionTrait as _, Statement};

    use super::*;
    use crate::db::{self, CreateDatabase};

    impl ReadConnections {
        /// Idle connections: the inline reader's, and the driver's.
        fn idle(&self) -> (usize, usize) {
            match &*self.inner {
                Inner::Sqlite { inline, held } => {
                    (inline.as_ref().map_or(0, InlineSqlite::idle), held.idle())
                }
                Inner::Postgres(held) => (0, held.idle()),
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
