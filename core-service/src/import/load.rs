//! Writing a validated import in one transaction: all of it lands, or nothing does.
//!
//! Order of work: validate the document in memory; check what only the database can
//! answer (ids and account URLs already taken) once cheaply, so that a refused import
//! fails before any password is hashed; hash plain passwords on the blocking pool;
//! then open the transaction, check again (another writer may have come in between),
//! insert parents before children, write one audit row per account, and commit.

use std::{collections::HashSet, fmt, num::NonZeroUsize, path::Path};

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter as _,
    QuerySelect as _, SqliteTransactionMode, TransactionOptions, TransactionTrait as _,
};
use serde::Serialize;
use uuid::Uuid;

use super::{
    ImportDocument, ImportError,
    validate::{AccountPlan, Password, Plan, validate},
};
use crate::{
    auth::password::PasswordHasher,
    db::bulk::{self, insert_all},
    entities::{account, content_item, custom_role, department, enrollment, group, project, user},
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
}

impl ImportSummary {
    fn of(account: &AccountPlan) -> Self {
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
        ];
        for (index, (count, one, many)) in counts.into_iter().enumerate() {
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
    let owned = path.to_path_buf();
    let doc = tokio::task::spawn_blocking(move || ImportDocument::read(&owned))
        .await
        .map_err(|err| ImportError::Read {
            file: path.to_path_buf(),
            source: std::io::Error::other(err.to_string()),
        })??;
    import_document(db, doc, hasher).await
}

/// Imports `doc` in one transaction. Refused whole, with an error naming the offending
/// entry, when it breaks a rule of the contract or names ids or account URLs already
/// in the database.
#[tracing::instrument(skip_all, fields(accounts = doc.accounts.len()))]
pub async fn import_document(
    db: &DatabaseConnection,
    doc: ImportDocument,
    hasher: &PasswordHasher,
) -> Result<ImportSummary, ImportError> {
    let mut plan = validate(&doc)?;
    drop(doc);
    // A cheap look first: re-importing a file should not cost an hour of hashing.
    check_not_taken(db, &plan).await?;
    hash_passwords(&mut plan, hasher).await?;

    // IMMEDIATE takes SQLite's write lock before the checks read, so the transaction
    // never has to upgrade a stale read snapshot; PostgreSQL ignores the option (its
    // unique indexes settle a race between two imports).
    let options = TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..TransactionOptions::default()
    };
    let txn = db.begin_with_options(options).await?;
    match write(&txn, &plan).await {
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

/// Inserts the plan, parents before children, and one audit row per account.
async fn write(txn: &impl ConnectionTrait, plan: &Plan) -> Result<ImportSummary, ImportError> {
    check_not_taken(txn, plan).await?;
    let now = chrono::Utc::now();
    insert_all(txn, rows::accounts(plan, now)).await?;
    insert_all(txn, rows::departments(plan, now)).await?;
    insert_all(txn, rows::department_closure(plan)).await?;
    insert_all(txn, rows::custom_roles(plan)).await?;
    insert_all(txn, rows::custom_role_permissions(plan)).await?;
    insert_all(txn, rows::users(plan, now)?).await?;
    insert_all(txn, rows::user_managed_departments(plan)).await?;
    insert_all(txn, rows::groups(plan)).await?;
    insert_all(txn, rows::group_members(plan)).await?;
    insert_all(txn, rows::projects(plan)).await?;
    insert_all(txn, rows::project_authors(plan)).await?;
    insert_all(txn, rows::content_items(plan)).await?;
    insert_all(txn, rows::enrollments(plan, now)).await?;
    insert_all(txn, rows::user_points(plan)).await?;
    insert_all(txn, rows::audit_log(plan, now)).await?;
    let mut total = ImportSummary::default();
    for account in &plan.accounts {
        total.add(&ImportSummary::of(account));
    }
    Ok(total)
}

/// The rows of each table, built from the plan: one function per table, in the order
/// `write` inserts them.
mod rows {
    use chrono::{DateTime, Utc};
    use sea_orm::Set;
    use serde_json::json;
    use uuid::Uuid;

    use super::{ImportError, ImportSummary};
    use crate::{
        db::{Actor, AuditAction, Change, audit},
        entities::{
            account, audit_log, content_item, custom_role, custom_role_permission, department,
            department_closure, enrollment, group, group_member, project, project_author, user,
            user_managed_department, user_points,
        },
        import::validate::{AccountPlan, Password, Plan},
    };

    /// `build(account id, item)` for every item `items` picks from each account.
    fn per_account<'a, T: 'a, R, I>(
        plan: &'a Plan,
        items: impl Fn(&'a AccountPlan) -> I + 'a,
        build: impl Fn(Uuid, T) -> R + Copy + 'a,
    ) -> impl Iterator<Item = R> + 'a
    where
        I: IntoIterator<Item = T> + 'a,
    {
        plan.accounts.iter().flat_map(move |account| {
            items(account)
                .into_iter()
                .map(move |item| build(account.id, item))
        })
    }

    pub(super) fn accounts(
        plan: &Plan,
        now: DateTime<Utc>,
    ) -> impl Iterator<Item = account::ActiveModel> + '_ {
        plan.accounts
            .iter()
            .map(move |account| account::ActiveModel {
                id: Set(account.id),
                url: Set(account.url.clone()),
                revision: Set(0),
                created_at: Set(now),
            })
    }

    pub(super) fn departments(
        plan: &Plan,
        now: DateTime<Utc>,
    ) -> impl Iterator<Item = department::ActiveModel> + '_ {
        per_account(
            plan,
            |account| &account.departments,
            move |account_id, row| department::ActiveModel {
                id: Set(row.id),
                account_id: Set(account_id),
                parent_id: Set(row.parent_id),
                name: Set(row.name.clone()),
                code: Set(row.code.clone()),
                created_at: Set(now),
                updated_at: Set(now),
            },
        )
    }

    pub(super) fn department_closure(
        plan: &Plan,
    ) -> impl Iterator<Item = department_closure::ActiveModel> + '_ {
        per_account(
            plan,
            |account| &account.closure,
            |account_id, row| department_closure::ActiveModel {
                account_id: Set(account_id),
                ancestor_id: Set(row.ancestor),
                descendant_id: Set(row.descendant),
                depth: Set(row.depth),
            },
        )
    }

    pub(super) fn custom_roles(plan: &Plan) -> impl Iterator<Item = custom_role::ActiveModel> + '_ {
        per_account(
            plan,
            |account| &account.custom_roles,
            |account_id, row| custom_role::ActiveModel {
                id: Set(row.id),
                account_id: Set(account_id),
                name: Set(row.name.clone()),
            },
        )
    }

    pub(super) fn custom_role_permissions(
        plan: &Plan,
    ) -> impl Iterator<Item = custom_role_permission::ActiveModel> + '_ {
        per_account(
            plan,
            |account| {
                account
                    .custom_roles
                    .iter()
                    .flat_map(|row| row.permissions.iter().map(move |p| (row.id, *p)))
            },
            |_, (custom_role_id, permission)| custom_role_permission::ActiveModel {
                custom_role_id: Set(custom_role_id),
                permission: Set(permission.as_str().to_owned()),
            },
        )
    }

    /// Refused when a user still has a plain password: every one was hashed before the
    /// transaction opened, and a plain one must never be stored.
    pub(super) fn users(
        plan: &Plan,
        now: DateTime<Utc>,
    ) -> Result<Vec<user::ActiveModel>, ImportError> {
        per_account(
            plan,
            |account| &account.users,
            |account_id, row| {
                let Password::Hashed(hash) = &row.password else {
                    return Err(ImportError::Hashing(
                        format!("user {} has no password hash", row.id).into(),
                    ));
                };
                Ok(user::ActiveModel {
                    id: Set(row.id),
                    account_id: Set(account_id),
                    email: Set(row.email.clone()),
                    email_key: Set(row.email_key.clone()),
                    password_hash: Set(hash.clone()),
                    role: Set(row.role),
                    custom_role_id: Set(row.custom_role_id),
                    department_id: Set(row.department_id),
                    active: Set(row.active),
                    created_at: Set(now),
                    updated_at: Set(now),
                })
            },
        )
        .collect()
    }

    pub(super) fn user_managed_departments(
        plan: &Plan,
    ) -> impl Iterator<Item = user_managed_department::ActiveModel> + '_ {
        per_account(
            plan,
            |account| {
                account
                    .users
                    .iter()
                    .flat_map(|row| row.managed_department_ids.iter().map(move |d| (row.id, *d)))
            },
            |_, (user_id, department_id)| user_managed_department::ActiveModel {
                user_id: Set(user_id),
                department_id: Set(department_id),
            },
        )
    }

    pub(super) fn groups(plan: &Plan) -> impl Iterator<Item = group::ActiveModel> + '_ {
        per_account(
            plan,
            |account| &account.groups,
            |account_id, row| group::ActiveModel {
                id: Set(row.id),
                account_id: Set(account_id),
                name: Set(row.name.clone()),
                smart_department_id: Set(row.smart_department_id),
            },
        )
    }

    pub(super) fn group_members(
        plan: &Plan,
    ) -> impl Iterator<Item = group_member::ActiveModel> + '_ {
        per_account(
            plan,
            |account| {
                account
                    .groups
                    .iter()
                    .flat_map(|row| row.member_ids.iter().map(move |u| (row.id, *u)))
            },
            |_, (group_id, user_id)| group_member::ActiveModel {
                group_id: Set(group_id),
                user_id: Set(user_id),
            },
        )
    }

    pub(super) fn projects(plan: &Plan) -> impl Iterator<Item = project::ActiveModel> + '_ {
        per_account(
            plan,
            |account| &account.projects,
            |account_id, row| project::ActiveModel {
                id: Set(row.id),
                account_id: Set(account_id),
                name: Set(row.name.clone()),
            },
        )
    }

    pub(super) fn project_authors(
        plan: &Plan,
    ) -> impl Iterator<Item = project_author::ActiveModel> + '_ {
        per_account(
            plan,
            |account| {
                account
                    .projects
                    .iter()
                    .flat_map(|row| row.author_ids.iter().map(move |u| (row.id, *u)))
            },
            |_, (project_id, user_id)| project_author::ActiveModel {
                project_id: Set(project_id),
                user_id: Set(user_id),
            },
        )
    }

    pub(super) fn content_items(
        plan: &Plan,
    ) -> impl Iterator<Item = content_item::ActiveModel> + '_ {
        per_account(
            plan,
            |account| &account.content_items,
            |account_id, row| content_item::ActiveModel {
                id: Set(row.id),
                account_id: Set(account_id),
                project_id: Set(row.project_id),
                title: Set(row.title.clone()),
                description: Set(row.description.clone()),
                user_id: Set(row.user_id),
                added_at: Set(row.added_at),
                content_type: Set(row.content_type.clone()),
                view_url: Set(row.view_url.clone()),
            },
        )
    }

    pub(super) fn enrollments(
        plan: &Plan,
        now: DateTime<Utc>,
    ) -> impl Iterator<Item = enrollment::ActiveModel> + '_ {
        per_account(
            plan,
            |account| &account.enrollments,
            move |account_id, row| enrollment::ActiveModel {
                id: Set(row.id),
                account_id: Set(account_id),
                learner_id: Set(row.learner_id),
                content_item_id: Set(row.content_item_id),
                created_at: Set(now),
            },
        )
    }

    pub(super) fn user_points(plan: &Plan) -> impl Iterator<Item = user_points::ActiveModel> + '_ {
        per_account(
            plan,
            |account| &account.points,
            |account_id, row| user_points::ActiveModel {
                user_id: Set(row.user_id),
                account_id: Set(account_id),
                points: Set(row.points),
            },
        )
    }

    /// One row per account, by nobody, with what the import wrote into it.
    pub(super) fn audit_log(
        plan: &Plan,
        now: DateTime<Utc>,
    ) -> impl Iterator<Item = audit_log::ActiveModel> + '_ {
        plan.accounts.iter().map(move |account| {
            let mut after =
                serde_json::to_value(ImportSummary::of(account)).unwrap_or_else(|_| json!({}));
            if let Some(object) = after.as_object_mut() {
                object.remove("accounts");
                object.insert("url".to_owned(), json!(account.url));
            }
            let change = Change {
                action: AuditAction::Imported,
                entity_id: account.id,
                before: None,
                after: Some(after),
            };
            audit::row(&Actor::system(account.id), change, now)
        })
    }
}

/// Refuses the plan when one of its ids or account URLs is already in the database,
/// naming the first such entry in document order.
async fn check_not_taken(conn: &impl ConnectionTrait, plan: &Plan) -> Result<(), ImportError> {
    let urls: Vec<String> = plan
        .accounts
        .iter()
        .map(|account| account.url.clone())
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
    if let Some(account) = plan
        .accounts
        .iter()
        .find(|account| taken_urls.contains(&account.url))
    {
        return Err(ImportError::invalid(
            &account.entry,
            format!("an account with url \"{}\" already exists", account.url),
        ));
    }

    let ids: Vec<Uuid> = plan.ids.iter().map(|(id, _)| *id).collect();
    // Ids are unique across kinds in a document, and so they must be against the
    // database: a department id that is already a user's would make references ambiguous.
    let mut taken = HashSet::new();
    taken.extend(existing::<account::Entity>(conn, account::Column::Id, &ids).await?);
    taken.extend(existing::<department::Entity>(conn, department::Column::Id, &ids).await?);
    taken.extend(existing::<custom_role::Entity>(conn, custom_role::Column::Id, &ids).await?);
    taken.extend(existing::<user::Entity>(conn, user::Column::Id, &ids).await?);
    taken.extend(existing::<group::Entity>(conn, group::Column::Id, &ids).await?);
    taken.extend(existing::<project::Entity>(conn, project::Column::Id, &ids).await?);
    taken.extend(existing::<content_item::Entity>(conn, content_item::Column::Id, &ids).await?);
    taken.extend(existing::<enrollment::Entity>(conn, enrollment::Column::Id, &ids).await?);
    if let Some((id, entry)) = plan.ids.iter().find(|(id, _)| taken.contains(id)) {
        return Err(ImportError::invalid(
            entry,
            format!("id \"{id}\" is already used in the database"),
        ));
    }
    Ok(())
}

/// Which of `ids` are in `column` of `E`.
async fn existing<E: EntityTrait>(
    conn: &impl ConnectionTrait,
    column: E::Column,
    ids: &[Uuid],
) -> Result<Vec<Uuid>, DbErr> {
    let mut found = Vec::new();
    for chunk in bulk::in_chunks(ids) {
        let rows: Vec<Uuid> = E::find()
            .select_only()
            .column(column)
            .filter(column.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        found.extend(rows);
    }
    Ok(found)
}

/// Replaces every plain password of `plan` by its argon2id hash, on the blocking pool
/// (hashing is CPU-heavy by design), spread over the available cores.
async fn hash_passwords(plan: &mut Plan, hasher: &PasswordHasher) -> Result<(), ImportError> {
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
    let workers = std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(plain.len());
    let per_worker = plain.len().div_ceil(workers);
    let mut tasks = Vec::with_capacity(workers);
    let mut plain = plain.into_iter();
    loop {
        let batch: Vec<(usize, usize, String)> = plain.by_ref().take(per_worker).collect();
        if batch.is_empty() {
            break;
        }
        let hasher = hasher.clone();
        tasks.push(tokio::task::spawn_blocking(move || {
            batch
                .into_iter()
                .map(|(a, u, password)| hasher.hash(&password).map(|hash| (a, u, hash)))
                .collect::<Result<Vec<_>, _>>()
        }));
    }
    for task in tasks {
        let hashed = task
            .await
            .map_err(|err| ImportError::Hashing(err.into()))?
            .map_err(|err| ImportError::Hashing(err.into()))?;
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
        };
        assert_eq!(
            summary.to_string(),
            "1 account, 4 departments, 0 custom roles, 1 user, 2 groups, 1 project, \
             2 content items, 3 enrollments, 1 points entry"
        );
    }
}
