//! A PostgreSQL transaction on a connection of SeaORM's own pool, for the one write SeaORM
//! cannot make: `COPY … FROM STDIN` ([`super::copy`]).
//!
//! SeaORM's `DatabaseTransaction` keeps its sqlx connection to itself, so a transaction that
//! must both `COPY` and run SeaORM queries (the import's checks and audit rows) is opened
//! here on a sqlx transaction instead, and answers [`ConnectionTrait`] itself: every
//! statement, query and `COPY` of it goes to the same server connection, inside the same
//! `BEGIN`. Dropped without [`PgTransaction::commit`], sqlx rolls it back before the
//! connection serves anyone else.

use std::sync::Arc;

use sea_orm::{
    ConnectionTrait, DatabaseConnection, DbBackend, DbErr, ExecResult, QueryResult, RuntimeErr,
    Statement,
    sea_query::Values,
    sqlx::{self, PgConnection, Postgres},
};
use sea_query_sqlx::SqlxValues;
use tokio::sync::{Mutex, MutexGuard};

/// An open PostgreSQL transaction; see the module's documentation.
pub struct PgTransaction {
    // A statement borrows the connection for its whole round trip: `ConnectionTrait` takes
    // `&self`, so the transaction is behind a lock that is only ever held by one task.
    txn: Mutex<sqlx::Transaction<'static, Postgres>>,
}

impl std::fmt::Debug for PgTransaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgTransaction")
    }
}

impl PgTransaction {
    /// Begins a transaction on a connection of `db`'s pool (`db` must be PostgreSQL).
    pub async fn begin(db: &DatabaseConnection) -> Result<Self, DbErr> {
        let txn = db
            .get_postgres_connection_pool()
            .begin()
            .await
            .map_err(|err| DbErr::Conn(RuntimeErr::SqlxError(Arc::new(err))))?;
        Ok(Self {
            txn: Mutex::new(txn),
        })
    }

    pub async fn commit(self) -> Result<(), DbErr> {
        self.txn.into_inner().commit().await.map_err(exec_err)
    }

    pub async fn rollback(self) -> Result<(), DbErr> {
        self.txn.into_inner().rollback().await.map_err(exec_err)
    }

    /// The transaction's connection, for a `COPY`.
    pub(super) async fn connection(&self) -> Connection<'_> {
        Connection(self.txn.lock().await)
    }
}

/// The connection of a [`PgTransaction`], held for as long as this lives.
pub(super) struct Connection<'a>(MutexGuard<'a, sqlx::Transaction<'static, Postgres>>);

impl Connection<'_> {
    pub(super) fn get(&mut self) -> &mut PgConnection {
        &mut self.0
    }
}

pub(super) fn exec_err(err: sqlx::Error) -> DbErr {
    DbErr::Exec(RuntimeErr::SqlxError(Arc::new(err)))
}

fn query_err(err: sqlx::Error) -> DbErr {
    DbErr::Query(RuntimeErr::SqlxError(Arc::new(err)))
}

fn arguments(statement: Statement) -> (String, SqlxValues) {
    (
        statement.sql,
        SqlxValues(statement.values.unwrap_or(Values(Vec::new()))),
    )
}

#[async_trait::async_trait]
impl ConnectionTrait for PgTransaction {
    fn get_database_backend(&self) -> DbBackend {
        DbBackend::Postgres
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        let (sql, values) = arguments(stmt);
        let mut txn = self.txn.lock().await;
        sqlx::query_with(sqlx::AssertSqlSafe(sql), values)
            .execute(&mut **txn)
            .await
            .map(ExecResult::from)
            .map_err(exec_err)
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        let mut txn = self.txn.lock().await;
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&mut **txn)
            .await
            .map(ExecResult::from)
            .map_err(exec_err)
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        let (sql, values) = arguments(stmt);
        let mut txn = self.txn.lock().await;
        sqlx::query_with(sqlx::AssertSqlSafe(sql), values)
            .fetch_optional(&mut **txn)
            .await
            .map(|row| row.map(QueryResult::from))
            .map_err(query_err)
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        let (sql, values) = arguments(stmt);
        let mut txn = self.txn.lock().await;
        sqlx::query_with(sqlx::AssertSqlSafe(sql), values)
            .fetch_all(&mut **txn)
            .await
            .map(|rows| rows.into_iter().map(QueryResult::from).collect())
            .map_err(query_err)
    }
}
