//! The import's one transaction, on whichever backend: SeaORM's on SQLite, whose rows go in
//! as multi-row `INSERT`s (`db::rows`), and a sqlx one on PostgreSQL, whose rows go in with
//! `COPY` (`db::copy`). Every other statement of the import (its checks, the keys of the long
//! tables, the audit rows, `ANALYZE`) runs through [`ConnectionTrait`] on either.

use sea_orm::{ConnectionTrait, DatabaseTransaction, DbErr, Value};

use crate::db::{
    copy::copy_rows,
    pg_transaction::PgTransaction,
    rows::{Table, insert_rows},
};

pub(super) trait ImportTransaction: ConnectionTrait + Send + Sync + Sized {
    /// Writes `rows` into `table`, calling `written` with the count of each chunk.
    async fn write_rows<const N: usize>(
        &self,
        table: &Table<N>,
        rows: impl IntoIterator<Item = [Value; N]> + Send,
        written: &mut (impl FnMut(usize) + Send),
    ) -> Result<(), DbErr>;

    async fn commit(self) -> Result<(), DbErr>;

    async fn rollback(self) -> Result<(), DbErr>;
}

impl ImportTransaction for DatabaseTransaction {
    async fn write_rows<const N: usize>(
        &self,
        table: &Table<N>,
        rows: impl IntoIterator<Item = [Value; N]> + Send,
        written: &mut (impl FnMut(usize) + Send),
    ) -> Result<(), DbErr> {
        insert_rows(self, table, rows, written).await
    }

    async fn commit(self) -> Result<(), DbErr> {
        DatabaseTransaction::commit(self).await
    }

    async fn rollback(self) -> Result<(), DbErr> {
        DatabaseTransaction::rollback(self).await
    }
}

impl ImportTransaction for PgTransaction {
    async fn write_rows<const N: usize>(
        &self,
        table: &Table<N>,
        rows: impl IntoIterator<Item = [Value; N]> + Send,
        written: &mut (impl FnMut(usize) + Send),
    ) -> Result<(), DbErr> {
        copy_rows(self, table, rows, written).await
    }

    async fn commit(self) -> Result<(), DbErr> {
        PgTransaction::commit(self).await
    }

    async fn rollback(self) -> Result<(), DbErr> {
        PgTransaction::rollback(self).await
    }
}
