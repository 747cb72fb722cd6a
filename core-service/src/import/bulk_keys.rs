//! PostgreSQL: the foreign keys of the long tables checked once per large import instead
//! of once per row.
//!
//! PostgreSQL checks a foreign key with a trigger per inserted row, each a query of its
//! own: for the million enrollments of a large account that was two thirds of the import.
//! So a large import drops the keys of its long tables (`users`, `enrollments`,
//! `user_points`) inside its transaction, writes their rows, and adds the same keys back
//! (read from the catalog, not restated here), which PostgreSQL checks with one join per
//! key. The transaction
//! commits only with every key in place and satisfied; on any failure the rollback puts
//! the keys back untouched.
//!
//! The price is the locks: dropping a key locks its table and the table it references
//! (`accounts`, `departments`, `custom_roles`, `content_items`) exclusively until the
//! commit, and every request of every account authenticates through `accounts` and
//! `users`: on a database that serves anyone, the whole service would stand still for the
//! seconds of the import. So the keys are dropped only while no user exists yet (a first
//! load: nobody can be authenticated, so nobody waits), and the locks are tried without
//! waiting, a few times; any other import checks row by row, slower but never stalling
//! the service. Small imports never take them either.
//! SQLite checks a key with an index probe in the insert itself and keeps its keys.

use std::time::{Duration, Instant};

use sea_orm::{
    ConnectionTrait as _, DatabaseBackend, DatabaseTransaction, DbErr, Statement,
    TransactionTrait as _,
};

/// The tables whose keys are dropped and added back.
const TABLES: &str = "'users', 'enrollments', 'user_points'";

/// Fewer rows than this are checked row by row: the locks are not worth it.
pub(super) const MIN_ROWS: usize = 10_000;

/// How long the import keeps trying to take the locks before checking row by row.
const LOCK_PATIENCE: Duration = Duration::from_secs(2);
const LOCK_RETRY: Duration = Duration::from_millis(50);

/// Keys dropped inside the transaction, to be added back before it commits.
#[must_use = "the keys must be added back before the commit"]
pub(super) struct Dropped {
    add_back: Vec<String>,
}

/// Drops the keys of the long tables when `rows` of them are about to be written and
/// doing so pays; `None` (nothing dropped) otherwise.
pub(super) async fn drop_for(
    txn: &DatabaseTransaction,
    rows: usize,
) -> Result<Option<Dropped>, DbErr> {
    if txn.get_database_backend() != DatabaseBackend::Postgres || rows < MIN_ROWS {
        return Ok(None);
    }
    if users_exist(txn).await? {
        return Ok(None);
    }
    let keys = txn
        .query_all_raw(Statement::from_string(
            DatabaseBackend::Postgres,
            format!(
                "SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', conrelid::regclass, conname) \
                        AS drop_key, \
                    format('ALTER TABLE %s ADD CONSTRAINT %I %s', conrelid::regclass, conname, \
                           pg_get_constraintdef(oid)) AS add_key, \
                    conrelid::regclass::text AS from_table, \
                    confrelid::regclass::text AS to_table \
                 FROM pg_constraint \
                 WHERE contype = 'f' \
                   AND conrelid IN (SELECT to_regclass(t) FROM unnest(ARRAY[{TABLES}]) AS t) \
                 ORDER BY conrelid::regclass::text, conname"
            ),
        ))
        .await?;
    if keys.is_empty() {
        return Ok(None);
    }
    let mut tables: Vec<String> = Vec::new();
    let mut drops = Vec::with_capacity(keys.len());
    let mut add_back = Vec::with_capacity(keys.len());
    for key in &keys {
        drops.push(key.try_get::<String>("", "drop_key")?);
        add_back.push(key.try_get::<String>("", "add_key")?);
        for table in [
            key.try_get::<String>("", "from_table")?,
            key.try_get::<String>("", "to_table")?,
        ] {
            if !tables.contains(&table) {
                tables.push(table);
            }
        }
    }
    // One order for every import, so two imports never hold each other's first lock.
    tables.sort();
    if !lock_while_no_user_exists(txn, &tables).await? {
        tracing::info!(
            "the tables of a large import are in use: its foreign keys are checked row by row"
        );
        return Ok(None);
    }
    for drop in drops {
        txn.execute_unprepared(&drop).await?;
    }
    Ok(Some(Dropped { add_back }))
}

impl Dropped {
    /// Adds the keys back; PostgreSQL checks each over its whole table.
    pub(super) async fn add_back(self, txn: &DatabaseTransaction) -> Result<(), DbErr> {
        for add in self.add_back {
            txn.execute_unprepared(&add).await?;
        }
        Ok(())
    }
}

/// Takes `tables` exclusively if none is in use, retrying for [`LOCK_PATIENCE`]. A lock
/// that has to wait would queue every later request of the service behind it, so each
/// try gives up at once (`NOWAIT`) and releases what it got. Once locked, nobody can add a
/// user, so the check that none exists (made before, cheaply) is made again under the locks:
/// a user committed in between gives the locks back.
async fn lock_while_no_user_exists(
    txn: &DatabaseTransaction,
    tables: &[String],
) -> Result<bool, DbErr> {
    let sql = format!(
        "LOCK TABLE {} IN ACCESS EXCLUSIVE MODE NOWAIT",
        tables.join(", ")
    );
    let deadline = Instant::now() + LOCK_PATIENCE;
    loop {
        let attempt = txn.begin().await?;
        match attempt.execute_unprepared(&sql).await {
            Ok(_) if users_exist(&attempt).await? => {
                attempt.rollback().await?;
                return Ok(false);
            }
            Ok(_) => {
                // Released into the transaction, which keeps the locks until it ends.
                attempt.commit().await?;
                return Ok(true);
            }
            Err(error) => {
                attempt.rollback().await?;
                if Instant::now() >= deadline {
                    tracing::debug!(%error, "locking the tables of a large import");
                    return Ok(false);
                }
                tokio::time::sleep(LOCK_RETRY).await;
            }
        }
    }
}

/// Whether any user exists: then the database serves someone, whom the locks would stall.
async fn users_exist(txn: &DatabaseTransaction) -> Result<bool, DbErr> {
    let row = txn
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Postgres,
            "SELECT EXISTS (SELECT 1 FROM users) AS found",
        ))
        .await?;
    row.map_or(Ok(false), |row| row.try_get::<bool>("", "found"))
}
