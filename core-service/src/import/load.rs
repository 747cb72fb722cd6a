//! Writing a validated import in one transaction: all of it lands, or nothing does.
//!
//! Order of work: validate the document in memory; check what only the database can
//! answer (ids and account URLs already taken) once cheaply, so that a refused import
//! fails before any password is hashed; hash plain passwords on the blocking pool;
//! then open the transaction, check again (another writer may have come in between),
//! insert parents before children, write one audit row per account, and commit.

use std::{
    collections::HashSet,
    fmt,
    num::NonZeroUsize,
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use futures::StreamExt as _;

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseBackend, DatabaseConnection, DbErr, EntityName as _,
    EntityTrait, QueryFilter as _, QuerySelect as _, SqliteTransactionMode, Statement,
    TransactionOptions, TransactionTrait as _, Value,
};
use serde::Serialize;
use uuid::Uuid;

use super::{
    ImportDocument, ImportError,
    bulk_indexes::{self, Deferred},
    bulk_keys::{self, Relaxed},
    document::Format,
    progress::{ImportStage, ProgressFn, Reporter},
    stream, tables,
    transaction::ImportTransaction,
    validate::{AccountPlan, Password, Plan, validate},
};
use crate::{
    auth::password::PasswordHasher,
    db::{bulk, pg_array, pg_transaction::PgTransaction, rows::Table},
    domain::account_url::scheme_spellings,
    entities::{
        account, api_client, content_item, custom_role, department, enrollment, group, project,
        user,
    },
    service::audit,
};

/// How much an import wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportSummary {
    pub accounts: usize,
    /// Root departments included.
    pub departments: usize,
    pub custom_roles: usize,
    pub users: usize,
    pub groups: usize,
    pub projects: usize,
    pub content_items: usize,
    pub enrollments: usize,
    /// Users given points.
    pub points: usize,
    pub api_clients: usize,
    /// Enrollments given a tracked result.
    pub results: usize,
}

impl ImportSummary {
    pub(super) fn of(account: &AccountPlan) -> Self {
        Self {
            accounts: 1,
            departments: account.departments.len(),
            custom_roles: account.custom_roles.len(),
            users: account.users.len(),
            groups: account.groups.len(),
            projects: account.projects.len(),
            content_items: account.content_items.len(),
            enrollments: account.enrollments.len(),
            points: account.points.len(),
            api_clients: account.api_clients.len(),
            results: account.results.len(),
        }
    }

    fn add(&mut self, other: &Self) {
        self.accounts += other.accounts;
        self.departments += other.departments;
        self.custom_roles += other.custom_roles;
        self.users += other.users;
        self.groups += other.groups;
        self.projects += other.projects;
        self.content_items += other.content_items;
        self.enrollments += other.enrollments;
        self.points += other.points;
        self.api_clients += other.api_clients;
        self.results += other.results;
    }
}

/// `1 account, 4 departments, …`.
impl fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts = [
            (self.accounts, "account", "accounts"),
            (self.departments, "department", "departments"),
            (self.custom_roles, "custom role", "custom roles"),
            (self.users, "user", "users"),
            (self.groups, "group", "groups"),
            (self.projects, "project", "projects"),
            (self.content_items, "content item", "content items"),
            (self.enrollments, "enrollment", "enrollments"),
            (self.points, "points entry", "points entries"),
            (self.api_clients, "API client", "API clients"),
        ];
        // Only documents that give results say so: the line stays as it was for the others.
        let results = [(self.results, "result", "results")];
        let results = results.into_iter().filter(|(count, _, _)| *count > 0);
        for (index, (count, one, many)) in counts.into_iter().chain(results).enumerate() {
            let separator = if index == 0 { "" } else { ", " };
            write!(
                f,
                "{separator}{count} {}",
                if count == 1 { one } else { many }
            )?;
        }
        Ok(())
    }
}

/// Reads the document at `path` (`.json`, `.yaml` or `.yml`) and imports it.
pub async fn import_file(
    db: &DatabaseConnection,
    path: &Path,
    hasher: &PasswordHasher,
) -> Result<ImportSummary, ImportError> {
    import_file_with_progress(db, path, hasher, None).await
}

/// [`import_file`], telling `progress` how far it has got.
pub async fn import_file_with_progress(
    db: &DatabaseConnection,
    path: &Path,
    hasher: &PasswordHasher,
    progress: Option<ProgressFn<'_>>,
) -> Result<ImportSummary, ImportError> {
    let reporter = Reporter(progress);
    let owned = path.to_path_buf();
    let streamed = Format::of(path) == Some(Format::Json);
    // Read twice when streamed; a YAML document's reading is not counted.
    let total = if streamed {
        std::fs::metadata(path).map_or(0, |meta| 2 * meta.len())
    } else {
        0
    };
    reporter.report(ImportStage::Validating, 0, total);
    let read = Arc::new(AtomicU64::new(0));
    let counter = read.clone();
    let mut reading = tokio::task::spawn_blocking(move || {
        if streamed {
            stream::read_json_counted(&owned, &counter)
        } else {
            validate(&ImportDocument::read(&owned)?)
        }
    });
    let mut tick = tokio::time::interval(VALIDATION_REPORT_EVERY);
    let plan = loop {
        tokio::select! {
            plan = &mut reading => break plan,
            _ = tick.tick(), if total > 0 => {
                let done = read.load(Ordering::Relaxed).min(total);
                reporter.report(ImportStage::Validating, done, total);
            }
        }
    }
    .map_err(|err| ImportError::Read {
        file: path.to_path_buf(),
        source: std::io::Error::other(err.to_string()),
    })??;
    if total > 0 {
        reporter.report(ImportStage::Validating, total, total);
    }
    import_plan(db, plan, hasher, reporter).await
}

/// How often the reading of a document is reported.
const VALIDATION_REPORT_EVERY: Duration = Duration::from_millis(250);

/// Imports `doc` in one transaction. Refused whole, with an error naming the offending
/// entry, when it breaks a rule of the contract or names ids or account URLs already
/// in the database.
pub async fn import_document(
    db: &DatabaseConnection,
    doc: ImportDocument,
    hasher: &PasswordHasher,
) -> Result<ImportSummary, ImportError> {
    import_document_with_progress(db, doc, hasher, None).await
}

/// [`import_document`], telling `progress` how far it has got.
#[tracing::instrument(skip_all, fields(accounts = doc.accounts.len()))]
pub async fn import_document_with_progress(
    db: &DatabaseConnection,
    doc: ImportDocument,
    hasher: &PasswordHasher,
    progress: Option<ProgressFn<'_>>,
) -> Result<ImportSummary, ImportError> {
    let reporter = Reporter(progress);
    reporter.report(ImportStage::Validating, 0, 0);
    let plan = validate(&doc)?;
    drop(doc);
    import_plan(db, plan, hasher, reporter).await
}

async fn import_plan(
    db: &DatabaseConnection,
    mut plan: Plan,
    hasher: &PasswordHasher,
    progress: Reporter<'_>,
) -> Result<ImportSummary, ImportError> {
    // A cheap look first: re-importing a file should not cost an hour of hashing.
    // Without plain passwords the look inside the transaction comes just as early.
    if plan.has_plain_passwords() {
        check_not_taken(db, &plan).await?;
        hash_passwords(&mut plan, hasher, progress).await?;
    }

    if db.get_database_backend() == DatabaseBackend::Postgres {
        // A transaction of its own on a pooled connection, for `COPY`; PostgreSQL's unique
        // indexes settle a race between two imports.
        let txn = PgTransaction::begin(db).await?;
        // The serving pool's statement_timeout bounds requests; an import is a command whose
        // COPY of a large account rightly takes longer than any request.
        txn.execute_unprepared("SET LOCAL statement_timeout = 0")
            .await?;
        return run(txn, plan, progress).await;
    }
    // IMMEDIATE takes SQLite's write lock before the checks read, so the transaction
    // never has to upgrade a stale read snapshot.
    let options = TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..TransactionOptions::default()
    };
    let txn = db.begin_with_options(options).await?;
    run(txn, plan, progress).await
}

/// Writes `plan` in `txn` and commits it, or rolls it back.
async fn run(
    txn: impl ImportTransaction,
    mut plan: Plan,
    progress: Reporter<'_>,
) -> Result<ImportSummary, ImportError> {
    let written = write(&txn, &mut plan, &progress).await;
    let accounts: Vec<Uuid> = plan.accounts.iter().map(|account| account.id).collect();
    // The rows are in the transaction; their copies here are not needed again.
    drop(plan);
    let checked = match written {
        Ok((summary, relaxed, deferred)) => {
            let indexes = deferred.len() as u64;
            if indexes > 0 {
                progress.report(ImportStage::Indexing, 0, indexes);
            }
            let mut built = 0;
            deferred
                .build(&txn, || {
                    built += 1;
                    progress.report(ImportStage::Indexing, built, indexes);
                })
                .await?;
            progress.report(ImportStage::Analyzing, 0, 0);
            analyze(&txn).await?;
            // After ANALYZE: the keys' checks are planned knowing the imported rows.
            match relaxed {
                Some(relaxed) => relaxed.check(&txn, &accounts).await.map(|()| summary),
                None => Ok(summary),
            }
            .map_err(ImportError::from)
        }
        Err(err) => Err(err),
    };
    match checked {
        Ok(summary) => {
            txn.commit().await?;
            tracing::info!(%summary, "import committed");
            Ok(summary)
        }
        Err(err) => {
            if let Err(rollback) = txn.rollback().await {
                tracing::warn!(error = %rollback, "rolling back a refused import failed");
            }
            Err(err)
        }
    }
}

/// Refreshes the planner's statistics for the imported rows: a table that grew from
/// nothing to a million rows would otherwise be planned as if it were still empty.
///
/// Inside the import's transaction, so the statistics land with the rows and are read on
/// the connection that already holds the pages, and under a savepoint, so a failing
/// ANALYZE is only logged and never costs the import.
async fn analyze(txn: &impl ConnectionTrait) -> Result<(), DbErr> {
    txn.execute_unprepared("SAVEPOINT import_analyze").await?;
    // A full ANALYZE, not one bounded by `analysis_limit`: the limit would stay on the
    // pooled connection, and sampled statistics mislead SQLite's choice between an index
    // and a scan for long `IN` lists.
    let end = match txn.execute_unprepared("ANALYZE").await {
        Ok(_) => "RELEASE SAVEPOINT import_analyze",
        Err(error) => {
            tracing::warn!(%error, "refreshing the planner's statistics after an import failed");
            "ROLLBACK TO SAVEPOINT import_analyze; RELEASE SAVEPOINT import_analyze"
        }
    };
    txn.execute_unprepared(end).await.map(drop)
}

/// Writes one of the long tables, with its keys' per-row checks off when `relaxed`.
async fn write_long<const N: usize>(
    txn: &impl ImportTransaction,
    relaxed: Option<&Relaxed>,
    table: &Table<N>,
    rows: impl IntoIterator<Item = [Value; N]> + Send,
    written: &mut (impl FnMut(usize) + Send),
) -> Result<(), DbErr> {
    if let Some(relaxed) = relaxed {
        relaxed.writing(txn).await?;
    }
    txn.write_rows(table, rows, written).await?;
    if let Some(relaxed) = relaxed {
        relaxed.written(txn).await?;
    }
    Ok(())
}

/// Inserts the plan, parents before children, and one audit row per account. The long
/// tables' keys are left to check when their per-row checks were relaxed, and their
/// deferred indexes to build.
async fn write(
    txn: &impl ImportTransaction,
    plan: &mut Plan,
    progress: &Reporter<'_>,
) -> Result<(ImportSummary, Option<Relaxed>, Deferred), ImportError> {
    check_not_taken(txn, plan).await?;
    // The ids' places only name entries in refusals, and for a million rows they weigh
    // as much as the rows: freed before the writes.
    plan.ids = Default::default();
    for account in &mut plan.accounts {
        account
            .results
            .sort_unstable_by_key(|result| result.enrollment_id);
    }
    // Counted now: the users' rows are freed before the rest is written.
    let summaries: Vec<ImportSummary> = plan.accounts.iter().map(ImportSummary::of).collect();
    let now = chrono::Utc::now();
    let total = plan.row_count() as u64;
    let mut done = 0u64;
    let mut written = |rows: usize| {
        done += rows as u64;
        progress.report(ImportStage::Writing, done, total);
    };
    let w = &mut written;
    let (relaxed, deferred) = {
        let plan = &*plan;
        txn.write_rows(&tables::ACCOUNTS, tables::accounts(plan, now), w)
            .await?;
        txn.write_rows(&tables::DEPARTMENTS, tables::departments(plan, now), w)
            .await?;
        txn.write_rows(&tables::CLOSURE, tables::department_closure(plan), w)
            .await?;
        txn.write_rows(&tables::CUSTOM_ROLES, tables::custom_roles(plan), w)
            .await?;
        txn.write_rows(
            &tables::PERMISSIONS,
            tables::custom_role_permissions(plan),
            w,
        )
        .await?;
        let rows = |of: fn(&AccountPlan) -> usize| plan.accounts.iter().map(of).sum::<usize>();
        let users = rows(|a| a.users.len());
        let enrollments = rows(|a| a.enrollments.len());
        let results = rows(|a| a.results.len());
        let points = rows(|a| a.points.len());
        let relaxed = bulk_keys::relax_for(txn, users + enrollments + points).await?;
        let long_tables = [
            (tables::USERS.name, users),
            (tables::ENROLLMENTS.name, enrollments),
            (tables::RESULTS.name, results),
            (tables::POINTS.name, points),
        ];
        let deferred = bulk_indexes::defer(txn, &long_tables).await?;
        write_long(
            txn,
            relaxed.as_ref(),
            &tables::USERS,
            tables::users(plan, now)?,
            w,
        )
        .await?;
        txn.write_rows(&tables::MANAGED, tables::user_managed_departments(plan), w)
            .await?;
        (relaxed, deferred)
    };
    // Nothing written after this reads the users' rows (a hundred thousand of them, with
    // their password hashes, weigh about 40 MiB): freed before the long tables, whose writes
    // (and on SQLite, the page cache they fill) make the import's peak.
    for account in &mut plan.accounts {
        account.users = Vec::new();
    }
    let plan = &*plan;
    let r = relaxed.as_ref();
    txn.write_rows(&tables::GROUPS, tables::groups(plan, now), w)
        .await?;
    txn.write_rows(&tables::MEMBERS, tables::group_members(plan), w)
        .await?;
    txn.write_rows(&tables::PROJECTS, tables::projects(plan), w)
        .await?;
    txn.write_rows(&tables::AUTHORS, tables::project_authors(plan), w)
        .await?;
    txn.write_rows(&tables::CONTENT_ITEMS, tables::content_items(plan), w)
        .await?;
    write_long(
        txn,
        r,
        &tables::ENROLLMENTS,
        tables::enrollments(plan, now),
        w,
    )
    .await?;
    write_long(txn, r, &tables::RESULTS, tables::results(plan), w).await?;
    write_long(txn, r, &tables::POINTS, tables::user_points(plan), w).await?;
    txn.write_rows(&tables::API_CLIENTS, tables::api_clients(plan, now), w)
        .await?;
    txn.write_rows(
        &audit::TABLE,
        tables::audit_log(plan, &summaries, now),
        &mut |_| {},
    )
    .await?;
    let mut total = ImportSummary::default();
    for summary in &summaries {
        total.add(summary);
    }
    Ok((total, relaxed, deferred))
}

/// Refuses the plan when one of its ids or account URLs is already in the database,
/// naming the first such entry in document order.
async fn check_not_taken(conn: &impl ConnectionTrait, plan: &Plan) -> Result<(), ImportError> {
    // Either scheme names one account, so an account under the other scheme takes the URL.
    let urls: Vec<String> = plan
        .accounts
        .iter()
        .flat_map(|account| scheme_spellings(&account.url))
        .collect();
    let mut taken_urls = HashSet::new();
    for chunk in bulk::in_chunks(&urls) {
        let found: Vec<String> = account::Entity::find()
            .select_only()
            .column(account::Column::Url)
            .filter(account::Column::Url.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(conn)
            .await?;
        taken_urls.extend(found);
    }
    if let Some(account) = plan.accounts.iter().find(|account| {
        scheme_spellings(&account.url)
            .iter()
            .any(|url| taken_urls.contains(url))
    }) {
        return Err(ImportError::invalid(
            &account.entry,
            format!(
                "an account with url \"{}\" already exists (either scheme names it)",
                account.url
            ),
        ));
    }

    // Ids are unique across kinds in a document, and so they must be against the
    // database: a department id that is already a user's would make references ambiguous.
    let mut taken = HashSet::new();
    for table in [
        account::Entity.table_name(),
        department::Entity.table_name(),
        custom_role::Entity.table_name(),
        user::Entity.table_name(),
        group::Entity.table_name(),
        project::Entity.table_name(),
        content_item::Entity.table_name(),
        enrollment::Entity.table_name(),
        api_client::Entity.table_name(),
    ] {
        taken.extend(existing(conn, table, plan).await?);
    }
    // The first in document order, as a person reading the file would meet it.
    let first = taken
        .into_iter()
        .filter_map(|id| plan.place(id).map(|place| (place, id)))
        .min();
    if let Some((place, id)) = first {
        return Err(ImportError::invalid(
            plan.ids.name(id, place),
            format!("id \"{id}\" is already used in the database"),
        ));
    }
    Ok(())
}

/// Which of the plan's ids are in the `id` column of `table`, at the cost of the smaller
/// side. Only the plan's ids between the table's lowest and highest id can be there. The
/// table's ids in that range are read in key order first, up to as many as there are ids
/// to look for, and matched against the plan in memory; only if the table holds more than
/// that are the ids beyond the last one read probed by key. Real ids are scattered over
/// the whole key space (UUID v1 with the low bits of the time first), so every id of a
/// large import falls in the range of any non-empty table: probing each of them in each
/// of nine tables cost a first import beside a small account more than its writes.
async fn existing(
    conn: &impl ConnectionTrait,
    table: &str,
    plan: &Plan,
) -> Result<Vec<Uuid>, DbErr> {
    let Some((lowest, highest)) = id_range(conn, table).await? else {
        return Ok(Vec::new());
    };
    let in_range = |id: &Uuid| (lowest..=highest).contains(id);
    let to_find = plan.all_ids().filter(in_range).count();
    if to_find == 0 {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    let (mut scanned, mut after) = (0, None);
    loop {
        let want = ID_SCAN_PAGE.min(to_find - scanned);
        if want == 0 {
            break;
        }
        let page = ids_after(conn, table, after, want).await?;
        scanned += page.len();
        found.extend(page.iter().copied().filter(|id| plan.place(*id).is_some()));
        if page.len() < want {
            // The whole table is read: nothing is left to probe.
            return Ok(found);
        }
        after = page.last().copied();
    }
    let mut beyond = plan
        .all_ids()
        .filter(|id| in_range(id) && after.is_none_or(|after| *id > after))
        .peekable();
    while beyond.peek().is_some() {
        // Taken a chunk at a time: a million ids are not copied whole for each table.
        let chunk: Vec<Uuid> = beyond.by_ref().take(bulk::MAX_BIND_PARAMETERS).collect();
        found.extend(ids_among(conn, table, &chunk).await?);
    }
    Ok(found)
}

/// Rows of a table's key read per statement by [`existing`].
const ID_SCAN_PAGE: usize = 8_192;

/// Up to `limit` ids of `table` in key order, after `after` when given.
async fn ids_after(
    conn: &impl ConnectionTrait,
    table: &str,
    after: Option<Uuid>,
    limit: usize,
) -> Result<Vec<Uuid>, DbErr> {
    let backend = conn.get_database_backend();
    let placeholder = match backend {
        DatabaseBackend::Postgres => "$1",
        _ => "?",
    };
    // `>=` nil rather than no bound on the first page: one statement text, one plan.
    let (comparison, bound) = match after {
        Some(after) => (">", after),
        None => (">=", Uuid::nil()),
    };
    let sql = format!(
        "SELECT \"id\" FROM \"{table}\" WHERE \"id\" {comparison} {placeholder} \
         ORDER BY \"id\" LIMIT {limit}"
    );
    let rows = conn
        .query_all_raw(Statement::from_sql_and_values(
            backend,
            sql,
            [Value::from(bound)],
        ))
        .await?;
    rows.iter()
        .map(|row| row.try_get::<Uuid>("", "id"))
        .collect()
}

/// Which of `ids` are in `table`, by key.
async fn ids_among(
    conn: &impl ConnectionTrait,
    table: &str,
    ids: &[Uuid],
) -> Result<Vec<Uuid>, DbErr> {
    let backend = conn.get_database_backend();
    let statement = if backend == DatabaseBackend::Postgres {
        // One array rather than 30,000 parameters to bind and plan.
        Statement::from_sql_and_values(
            backend,
            format!(
                "SELECT \"id\" FROM \"{table}\" WHERE \"id\" = ANY((SELECT $1::text::uuid[])::uuid[])"
            ),
            [pg_array::uuids(ids).into()],
        )
    } else {
        let placeholders = vec!["?"; ids.len()].join(", ");
        Statement::from_sql_and_values(
            backend,
            format!("SELECT \"id\" FROM \"{table}\" WHERE \"id\" IN ({placeholders})"),
            ids.iter().map(|id| Value::from(*id)),
        )
    };
    let rows = conn.query_all_raw(statement).await?;
    rows.iter()
        .map(|row| row.try_get::<Uuid>("", "id"))
        .collect()
}

/// The lowest and highest `id` of `table`, each one step down its primary key's index;
/// `None` when the table is empty. Both backends order UUIDs bytewise, as [`Uuid`] does.
async fn id_range(conn: &impl ConnectionTrait, table: &str) -> Result<Option<(Uuid, Uuid)>, DbErr> {
    let backend = conn.get_database_backend();
    let placeholder = match backend {
        DatabaseBackend::Postgres => "$1",
        _ => "?",
    };
    // A bound on the key keeps both planners on the index (PostgreSQL has no min(uuid)).
    let ends = [("ASC", ">=", Uuid::nil()), ("DESC", "<=", Uuid::max())];
    let mut found = [None, None];
    for (slot, (order, comparison, bound)) in found.iter_mut().zip(ends) {
        let sql = format!(
            "SELECT \"id\" FROM \"{table}\" WHERE \"id\" {comparison} {placeholder} \
             ORDER BY \"id\" {order} LIMIT 1"
        );
        let row = conn
            .query_one_raw(Statement::from_sql_and_values(
                backend,
                sql,
                [Value::from(bound)],
            ))
            .await?;
        *slot = match row {
            Some(row) => Some(row.try_get::<Uuid>("", "id")?),
            None => None,
        };
    }
    Ok(match found {
        [Some(lowest), Some(highest)] => Some((lowest, highest)),
        _ => None,
    })
}

/// Plain passwords hashed per task of the blocking pool.
const HASH_BATCH: usize = 16;

/// Replaces every plain password of `plan` by its argon2id hash, on the blocking pool
/// (hashing is CPU-heavy by design), spread over the available cores.
async fn hash_passwords(
    plan: &mut Plan,
    hasher: &PasswordHasher,
    progress: Reporter<'_>,
) -> Result<(), ImportError> {
    let mut plain = Vec::new();
    for (a, account) in plan.accounts.iter_mut().enumerate() {
        for (u, user) in account.users.iter_mut().enumerate() {
            if let Password::Plain(password) = &mut user.password {
                plain.push((a, u, std::mem::take(password)));
            }
        }
    }
    if plain.is_empty() {
        return Ok(());
    }
    let total = plain.len() as u64;
    let mut done = 0u64;
    progress.report(ImportStage::Hashing, done, total);
    let workers = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    // Small batches, as many at once as there are cores: every core busy, and progress
    // told every few hashes rather than once per core's share.
    let batches: Vec<Vec<(usize, usize, String)>> = {
        let mut plain = plain.into_iter();
        std::iter::from_fn(|| {
            let batch: Vec<_> = plain.by_ref().take(HASH_BATCH).collect();
            (!batch.is_empty()).then_some(batch)
        })
        .collect()
    };
    let mut hashed_batches = futures::stream::iter(batches.into_iter().map(|batch| {
        let hasher = hasher.clone();
        tokio::task::spawn_blocking(move || {
            batch
                .into_iter()
                .map(|(a, u, password)| hasher.hash(&password).map(|hash| (a, u, hash)))
                .collect::<Result<Vec<_>, _>>()
        })
    }))
    .buffer_unordered(workers);
    while let Some(hashed) = hashed_batches.next().await {
        let hashed = hashed
            .map_err(|err| ImportError::Hashing(err.into()))?
            .map_err(|err| ImportError::Hashing(err.into()))?;
        done += hashed.len() as u64;
        progress.report(ImportStage::Hashing, done, total);
        for (a, u, hash) in hashed {
            if let Some(user) = plan
                .accounts
                .get_mut(a)
                .and_then(|account| account.users.get_mut(u))
            {
                user.password = Password::Hashed(hash);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_reads_as_a_sentence() {
        let summary = ImportSummary {
            accounts: 1,
            departments: 4,
            custom_roles: 0,
            users: 1,
            groups: 2,
            projects: 1,
            content_items: 2,
            enrollments: 3,
            points: 1,
            api_clients: 2,
            results: 1,
        };
        assert_eq!(
            summary.to_string(),
            "1 account, 4 departments, 0 custom roles, 1 user, 2 groups, 1 project, \
             2 content items, 3 enrollments, 1 points entry, 2 API clients, 1 result"
        );
    }
}
