//! PostgreSQL: the foreign keys of the long tables checked once per large import instead
//! of once per row.
//!
//! PostgreSQL checks a foreign key with a trigger per inserted row, each a query of its
//! own: for the million enrollments of a large account that was two thirds of the import.
//! A large import ([`relax_for`]) therefore writes its long tables (`users`, `enrollments`,
//! `learner_results`, `user_points`) in one of two ways, the second on a first load (no user
//! exists yet), else the first when PostgreSQL allows it:
//!
//! 1. With the triggers off while those tables are written, and each key checked afterwards
//!    with one query over the imported accounts' rows ([`super::replica`]). It locks nothing,
//!    but needs the right to set `session_replication_role`.
//! 2. With the keys dropped inside the transaction and added back (read from the catalog, not
//!    restated here), which PostgreSQL checks with one join per key. The transaction commits
//!    only with every key in place and satisfied; on any failure the rollback puts the keys
//!    back untouched. The long tables' non-unique indexes are dropped and built again the
//!    same way, sorted once instead of updated at a random place per row.
//!
//! The price of the second is the locks: dropping a key locks its table and the table it
//! references (`accounts`, `departments`, `custom_roles`, `content_items`, `enrollments`)
//! exclusively until the commit, and every request of every account authenticates through
//! `accounts` and `users`: on a database that serves anyone, the whole service would stand
//! still for the seconds of the import. So the keys are dropped only while no user exists yet (a first
//! load: nobody can be authenticated, so nobody waits), and the locks are tried without
//! waiting, a few times; any other import checks row by row, slower but never stalling
//! the service. Small imports never take either way.
//! SQLite checks a key with an index probe in the insert itself and keeps its keys.

use std::time::{Duration, Instant};

use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr, Statement};
use uuid::Uuid;

use super::replica::{self, Replica, TABLES};

/// Fewer rows than this are checked row by row: relaxing the checks is not worth it.
pub(super) const MIN_ROWS: usize = 10_000;

/// How long the import keeps trying to take the locks before checking row by row.
const LOCK_PATIENCE: Duration = Duration::from_secs(2);
const LOCK_RETRY: Duration = Duration::from_millis(50);

/// How the long tables' keys are checked once rather than per row, for the rest of the
/// transaction.
#[must_use = "the keys must be checked before the commit"]
pub(super) enum Relaxed {
    /// The triggers are off while a long table is written ([`replica`]).
    Replica(Replica),
    /// The keys are dropped, to be added back.
    Dropped(Dropped),
}

/// Keys and indexes dropped inside the transaction, to be added back before it commits.
pub(super) struct Dropped {
    add_back: Vec<String>,
    build_again: Vec<String>,
}

/// Relaxes the per-row checks of the long tables' keys when `rows` of them are about to be
/// written and doing so pays: on a first load the keys and the long tables' non-unique
/// indexes dropped (the indexes too are then built once, sorted, instead of taking a million
/// entries at random places: 44 s of inserts became 15 s with the builds, psql, a million
/// enrollments and their results); else the triggers turned off when PostgreSQL allows it;
/// `None` (checked row by row) otherwise.
pub(super) async fn relax_for(
    txn: &impl ConnectionTrait,
    rows: usize,
) -> Result<Option<Relaxed>, DbErr> {
    if txn.get_database_backend() != DatabaseBackend::Postgres || rows < MIN_ROWS {
        return Ok(None);
    }
    if let Some(dropped) = drop_for(txn).await? {
        return Ok(Some(Relaxed::Dropped(dropped)));
    }
    Ok(replica::permitted(txn).await?.map(Relaxed::Replica))
}

impl Relaxed {
    /// Before a long table is written.
    pub(super) async fn writing(&self, txn: &impl ConnectionTrait) -> Result<(), DbErr> {
        match self {
            Relaxed::Replica(replica) => replica.triggers_off(txn).await,
            Relaxed::Dropped(_) => Ok(()),
        }
    }

    /// After a long table is written.
    pub(super) async fn written(&self, txn: &impl ConnectionTrait) -> Result<(), DbErr> {
        match self {
            Relaxed::Replica(replica) => replica.triggers_on(txn).await,
            Relaxed::Dropped(_) => Ok(()),
        }
    }

    /// Checks the keys over the rows written: each key over the rows of `accounts`, or the
    /// dropped keys added back, which PostgreSQL checks over their whole tables.
    pub(super) async fn check(
        self,
        txn: &impl ConnectionTrait,
        accounts: &[Uuid],
    ) -> Result<(), DbErr> {
        match self {
            Relaxed::Replica(replica) => replica.check_keys(txn, accounts).await,
            Relaxed::Dropped(dropped) => dropped.add_back(txn).await,
        }
    }
}

/// Drops the keys of the long tables while no user exists and their tables can be locked;
/// `None` (nothing dropped) otherwise.
async fn drop_for(txn: &impl ConnectionTrait) -> Result<Option<Dropped>, DbErr> {
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
    // The long tables' own indexes, not a key's or a constraint's (unique ones stay, so a
    // duplicate is refused as it is copied in), where the import may build them again: the
    // table's owner may drop an index without the right to create one in its schema.
    let indexes = txn
        .query_all_raw(Statement::from_string(
            DatabaseBackend::Postgres,
            format!(
                "SELECT format('DROP INDEX %s', i.indexrelid::regclass) AS drop_index, \
                    pg_get_indexdef(i.indexrelid) AS create_index \
                 FROM pg_index AS i \
                 WHERE i.indrelid IN (SELECT to_regclass(t) FROM unnest(ARRAY[{TABLES}]) AS t) \
                   AND NOT i.indisunique AND NOT i.indisprimary \
                   AND NOT EXISTS (SELECT 1 FROM pg_constraint AS c WHERE c.conindid = i.indexrelid) \
                   AND has_schema_privilege( \
                       (SELECT relnamespace FROM pg_class WHERE oid = i.indexrelid), 'CREATE') \
                 ORDER BY i.indexrelid::regclass::text"
            ),
        ))
        .await?;
    let mut build_again = Vec::with_capacity(indexes.len());
    for index in &indexes {
        txn.execute_unprepared(&index.try_get::<String>("", "drop_index")?)
            .await?;
        build_again.push(index.try_get::<String>("", "create_index")?);
    }
    Ok(Some(Dropped {
        add_back,
        build_again,
    }))
}

impl Dropped {
    /// Builds the indexes again, then adds the keys back; PostgreSQL checks each key over its
    /// whole table.
    async fn add_back(self, txn: &impl ConnectionTrait) -> Result<(), DbErr> {
        for build in self.build_again {
            txn.execute_unprepared(&build).await?;
        }
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
    txn: &impl ConnectionTrait,
    tables: &[String],
) -> Result<bool, DbErr> {
    let sql = format!(
        "LOCK TABLE {} IN ACCESS EXCLUSIVE MODE NOWAIT",
        tables.join(", ")
    );
    let savepoint = "SAVEPOINT import_keys_lock";
    let rollback = "ROLLBACK TO SAVEPOINT import_keys_lock; RELEASE SAVEPOINT import_keys_lock";
    let deadline = Instant::now() + LOCK_PATIENCE;
    loop {
        txn.execute_unprepared(savepoint).await?;
        match txn.execute_unprepared(&sql).await {
            Ok(_) if users_exist(txn).await? => {
                txn.execute_unprepared(rollback).await?;
                return Ok(false);
            }
            Ok(_) => {
                // Released into the transaction, which keeps the locks until it ends.
                txn.execute_unprepared("RELEASE SAVEPOINT import_keys_lock")
                    .await?;
                return Ok(true);
            }
            Err(error) => {
                txn.execute_unprepared(rollback).await?;
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
async fn users_exist(txn: &impl ConnectionTrait) -> Result<bool, DbErr> {
    let row = txn
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Postgres,
            "SELECT EXISTS (SELECT 1 FROM users) AS found",
        ))
        .await?;
    row.map_or(Ok(false), |row| row.try_get::<bool>("", "found"))
}
