//! PostgreSQL: the long tables of a large import written with the row triggers off, and
//! their foreign keys then checked with one query per key.
//!
//! A key's trigger runs a query per inserted row: for the million enrollments of a large account
//! that was two thirds of the import (`docs/benchmarks-history.md`, "PostgreSQL import with
//! `COPY`"). Dropping the keys ([`super::bulk_keys`]) locks the tables every request reads, so it
//! is kept for first loads. `SET LOCAL session_replication_role = replica` turns the triggers off
//! for this transaction alone and locks nothing, so it serves an import beside accounts in use as
//! well. It is PostgreSQL's switch for loading rows known to be consistent (`pg_dump
//! --disable-triggers`), and three things bound its use here:
//!
//! - It needs a superuser, or from PostgreSQL 15 `GRANT SET ON PARAMETER
//!   session_replication_role`. Without the right, the import drops the keys or checks them
//!   row by row, as before.
//! - It silences every trigger that fires on origin, not only the keys'. It is used only
//!   when no trigger of anyone else's (an operator's, a test's) fires on inserts into the
//!   long tables, and only while those tables are written: the auth-revision triggers of the
//!   tables in between still fire.
//! - A key's trigger also locks the referenced row until the commit, so that nobody deletes
//!   it meanwhile. Every row an import references is one it inserts itself (validation
//!   refuses any other reference), in this transaction, unseen by anyone else until the
//!   commit: there is nothing to lock.
//!
//! Unique keys and `CHECK` constraints are not triggers and hold throughout. The foreign keys
//! are checked afterwards over the imported accounts' rows, one anti-join per key read from
//! the catalog, and a row without its referenced row fails the import as the key's trigger
//! would have.

use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr, Statement, Value};
use uuid::Uuid;

use crate::db::pg_array;

/// The long tables, each with an `account_id` column the key checks select by.
pub(super) const TABLES: &str = "'users', 'enrollments', 'learner_results', 'user_points'";

const SAVEPOINT: &str = "import_replica";

/// The right to write the long tables with their triggers off, taken inside a transaction.
#[must_use = "the keys must be checked before the commit"]
pub(super) struct Replica(());

/// Takes the right when PostgreSQL grants it and no trigger but the keys' own would be
/// silenced; `None` otherwise, with the transaction as it was.
pub(super) async fn permitted(txn: &impl ConnectionTrait) -> Result<Option<Replica>, DbErr> {
    if others_triggers(txn).await? {
        tracing::info!(
            "a trigger fires on inserts into the long tables: the import keeps the triggers on"
        );
        return Ok(None);
    }
    txn.execute_unprepared(&format!("SAVEPOINT {SAVEPOINT}"))
        .await?;
    match txn
        .execute_unprepared("SET LOCAL session_replication_role = replica")
        .await
    {
        Ok(_) => {
            txn.execute_unprepared(&format!("RELEASE SAVEPOINT {SAVEPOINT}"))
                .await?;
            let replica = Replica(());
            // Off until a long table is written.
            replica.triggers_on(txn).await?;
            Ok(Some(replica))
        }
        Err(error) => {
            txn.execute_unprepared(&format!(
                "ROLLBACK TO SAVEPOINT {SAVEPOINT}; RELEASE SAVEPOINT {SAVEPOINT}"
            ))
            .await?;
            tracing::info!(%error, "the import may not turn the triggers off");
            Ok(None)
        }
    }
}

impl Replica {
    pub(super) async fn triggers_off(&self, txn: &impl ConnectionTrait) -> Result<(), DbErr> {
        txn.execute_unprepared("SET LOCAL session_replication_role = replica")
            .await
            .map(drop)
    }

    pub(super) async fn triggers_on(&self, txn: &impl ConnectionTrait) -> Result<(), DbErr> {
        txn.execute_unprepared("SET LOCAL session_replication_role TO DEFAULT")
            .await
            .map(drop)
    }

    /// Checks every foreign key of the long tables over the rows of `accounts`.
    pub(super) async fn check_keys(
        self,
        txn: &impl ConnectionTrait,
        accounts: &[Uuid],
    ) -> Result<(), DbErr> {
        // One array text, bound as each check's parameter.
        let accounts = pg_array::uuids(accounts);
        // A key's check, as its trigger makes it: rows with a NULL in the key are not
        // checked (MATCH SIMPLE), the others need their referenced row.
        let checks = txn
            .query_all_raw(Statement::from_string(
                DatabaseBackend::Postgres,
                format!(
                    "SELECT c.conname::text AS key, c.conrelid::regclass::text AS from_table, \
                        format('SELECT EXISTS (SELECT 1 FROM ONLY %s AS f \
                                WHERE f.account_id = ANY($1::text::uuid[]) AND %s AND NOT EXISTS \
                                (SELECT 1 FROM ONLY %s AS p WHERE %s)) AS broken', \
                            c.conrelid::regclass, \
                            string_agg(format('f.%I IS NOT NULL', fa.attname), ' AND '), \
                            c.confrelid::regclass, \
                            string_agg(format('p.%I = f.%I', pa.attname, fa.attname), ' AND ')) \
                        AS check_sql \
                     FROM pg_constraint AS c \
                     CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(from_column, to_column) \
                     JOIN pg_attribute AS fa \
                       ON fa.attrelid = c.conrelid AND fa.attnum = k.from_column \
                     JOIN pg_attribute AS pa \
                       ON pa.attrelid = c.confrelid AND pa.attnum = k.to_column \
                     WHERE c.contype = 'f' \
                       AND c.conrelid IN (SELECT to_regclass(t) FROM unnest(ARRAY[{TABLES}]) AS t) \
                     GROUP BY c.oid, c.conname, c.conrelid, c.confrelid \
                     ORDER BY 2, 1"
                ),
            ))
            .await?;
        for check in checks {
            let key: String = check.try_get("", "key")?;
            let table: String = check.try_get("", "from_table")?;
            let sql: String = check.try_get("", "check_sql")?;
            let broken = txn
                .query_one_raw(Statement::from_sql_and_values(
                    DatabaseBackend::Postgres,
                    sql,
                    [Value::from(accounts.clone())],
                ))
                .await?
                .map_or(Ok(false), |row| row.try_get::<bool>("", "broken"))?;
            if broken {
                return Err(DbErr::Custom(format!(
                    "insert on table \"{table}\" violates foreign key constraint \"{key}\""
                )));
            }
        }
        Ok(())
    }
}

/// Whether a trigger other than the keys' own fires on inserts into the long tables and
/// would be silenced (enabled on origin only, the default).
async fn others_triggers(txn: &impl ConnectionTrait) -> Result<bool, DbErr> {
    // Bit 2 of `tgtype` is INSERT.
    let row = txn
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Postgres,
            format!(
                "SELECT EXISTS (SELECT 1 FROM pg_trigger \
                 WHERE NOT tgisinternal AND tgenabled = 'O' AND (tgtype & 4) <> 0 \
                   AND tgrelid IN (SELECT to_regclass(t) FROM unnest(ARRAY[{TABLES}]) AS t)) \
                 AS found"
            ),
        ))
        .await?;
    row.map_or(Ok(false), |row| row.try_get::<bool>("", "found"))
}
