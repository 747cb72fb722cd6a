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
    QuerySelect as _, Set, SqliteTransactionMode, TransactionOptions, TransactionTrait as _,
};
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use super::{
    ImportDocument, ImportError,
    validate::{AccountPlan, Password, Plan, validate},
};
use crate::{
    auth::password::PasswordHasher,
    db::bulk::{self, insert_all},
    domain::ids::new_id,
    entities::{
        account, audit_log, content_item, custom_role, custom_role_permission, department,
        department_closure, enrollment, group, group_member, project, project_author, user,
        user_managed_department, user_points,
    },
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

async fn write(txn: &impl ConnectionTrait, plan: &Plan) -> Result<ImportSummary, ImportError> {
    check_not_taken(txn, plan).await?;
    let now = chrono::Utc::now();

    insert_all(
        txn,
        plan.accounts.iter().map(|account| account::ActiveModel {
            id: Set(account.id),
            url: Set(account.url.clone()),
            revision: Set(0),
            created_at: Set(now),
        }),
    )
    .await?;

    insert_all(
        txn,
        plan.accounts.iter().flat_map(|account| {
            account
                .departments
                .iter()
                .map(move |row| department::ActiveModel {
                    id: Set(row.id),
                    account_id: Set(account.id),
                    parent_id: Set(row.parent_id),
                    name: Set(row.name.clone()),
                    code: Set(row.code.clone()),
                    created_at: Set(now),
                    updated_at: Set(now),
                })
        }),
    )
    .await?;
    insert_all(
        txn,
        plan.accounts.iter().flat_map(|account| {
            account
                .closure
                .iter()
                .map(move |row| department_closure::ActiveModel {
                    account_id: Set(account.id),
                    ancestor_id: Set(row.ancestor),
                    descendant_id: Set(row.descendant),
                    depth: Set(row.depth),
                })
        }),
    )
    .await?;

    insert_all(
        txn,
        plan.accounts.iter().flat_map(|account| {
            account
                .custom_roles
                .iter()
                .map(move |row| custom_role::ActiveModel {
                    id: Set(row.id),
                    account_id: Set(account.id),
                    name: Set(row.name.clone()),
                })
        }),
    )
    .await?;
    insert_all(
        txn,
        plan.accounts
            .iter()
            .flat_map(|account| &account.custom_roles)
            .flat_map(|row| {
                row.permissions
                    .iter()
                    .map(move |permission| custom_role_permission::ActiveModel {
                        custom_role_id: Set(row.id),
                        permission: Set(permission.as_str().to_owned()),
                    })
            }),
    )
    .await?;

    let mut users = Vec::new();
    for account in &plan.accounts {
        for row in &account.users {
            let Password::Hashed(hash) = &row.password else {
                // hash_passwords replaced every plain password; refuse rather than store one.
                return Err(ImportError::Hashing(
                    format!("user {} has no password hash", row.id).into(),
                ));
            };
            users.push(user::ActiveModel {
                id: Set(row.id),
                account_id: Set(account.id),
                email: Set(row.email.clone()),
                email_key: Set(row.email_key.clone()),
                password_hash: Set(hash.clone()),
                role: Set(row.role),
                custom_role_id: Set(row.custom_role_id),
                department_id: Set(row.department_id),
                active: Set(row.active),
                created_at: Set(now),
                updated_at: Set(now),
            });
        }
    }
    insert_all(txn, users).await?;
    insert_all(
        txn,
        plan.accounts
            .iter()
            .flat_map(|account| &account.users)
            .flat_map(|row| {
                row.managed_department_ids.iter().map(move |department| {
                    user_managed_department::ActiveModel {
                        user_id: Set(row.id),
                        department_id: Set(*department),
                    }
                })
            }),
    )
    .await?;

    insert_all(
        txn,
        plan.accounts.iter().flat_map(|account| {
            account.groups.iter().map(move |row| group::ActiveModel {
                id: Set(row.id),
                account_id: Set(account.id),
                name: Set(row.name.clone()),
                smart_department_id: Set(row.smart_department_id),
            })
        }),
    )
    .await?;
    insert_all(
        txn,
        plan.accounts
            .iter()
            .flat_map(|account| &account.groups)
            .flat_map(|row| {
                row.member_ids
                    .iter()
                    .map(move |member| group_member::ActiveModel {
                        group_id: Set(row.id),
                        user_id: Set(*member),
                    })
            }),
    )
    .await?;

    insert_all(
        txn,
        plan.accounts.iter().flat_map(|account| {
            account
                .projects
                .iter()
                .map(move |row| project::ActiveModel {
                    id: Set(row.id),
                    account_id: Set(account.id),
                    name: Set(row.name.clone()),
                })
        }),
    )
    .await?;
    insert_all(
        txn,
        plan.accounts
            .iter()
            .flat_map(|account| &account.projects)
            .flat_map(|row| {
                row.author_ids
                    .iter()
                    .map(move |author| project_author::ActiveModel {
                        project_id: Set(row.id),
                        user_id: Set(*author),
                    })
            }),
    )
    .await?;

    insert_all(
        txn,
        plan.accounts.iter().flat_map(|account| {
            account
                .content_items
                .iter()
                .map(move |row| content_item::ActiveModel {
                    id: Set(row.id),
                    account_id: Set(account.id),
                    project_id: Set(row.project_id),
                    title: Set(row.title.clone()),
                    description: Set(row.description.clone()),
                    user_id: Set(row.user_id),
                    added_at: Set(row.added_at),
                    content_type: Set(row.content_type.clone()),
                    view_url: Set(row.view_url.clone()),
                })
        }),
    )
    .await?;
    insert_all(
        txn,
        plan.accounts.iter().flat_map(|account| {
            account
                .enrollments
                .iter()
                .map(move |row| enrollment::ActiveModel {
                    id: Set(row.id),
                    account_id: Set(account.id),
                    learner_id: Set(row.learner_id),
                    content_item_id: Set(row.content_item_id),
                    created_at: Set(now),
                })
        }),
    )
    .await?;
    insert_all(
        txn,
        plan.accounts.iter().flat_map(|account| {
            account
                .points
                .iter()
                .map(move |row| user_points::ActiveModel {
                    user_id: Set(row.user_id),
                    account_id: Set(account.id),
                    points: Set(row.points),
                })
        }),
    )
    .await?;

    let mut total = ImportSummary::default();
    let mut audit = Vec::with_capacity(plan.accounts.len());
    for account in &plan.accounts {
        let summary = ImportSummary::of(account);
        total.add(&summary);
        let mut after = serde_json::to_value(summary).unwrap_or_else(|_| json!({}));
        if let Some(object) = after.as_object_mut() {
            object.remove("accounts");
            object.insert("url".to_owned(), json!(account.url));
        }
        audit.push(audit_log::ActiveModel {
            id: Set(new_id()),
            account_id: Set(account.id),
            actor_user_id: Set(None),
            action: Set("import".to_owned()),
            entity_type: Set("account".to_owned()),
            entity_id: Set(account.id),
            request_id: Set(None),
            before: Set(None),
            after: Set(Some(after.to_string())),
            created_at: Set(now),
        });
    }
    insert_all(txn, audit).await?;
    Ok(total)
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
