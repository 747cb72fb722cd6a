//! The one way a change is written: [`write()`] (or, for the core's own scheduled changes,
//! [`write_unattended`]).
//!
//! It opens a transaction, takes the account's write lock, runs the body, writes the
//! audit rows the body recorded, commits, and only then tells this process's
//! authenticator when the change alters who a caller is. A body cannot forget the lock,
//! the audit rows or the cache: it only says what it changed.
//!
//! ```ignore
//! write(db, caller, async |w| {
//!     let updated = updated.update(w.txn()).await?;
//!     w.record(Change {
//!         action: AuditAction::GroupUpdated,
//!         entity_id: id,
//!         before: Some(json!({ "name": current.name })),
//!         after: Some(json!({ "name": updated.name })),
//!     });
//!     Ok(updated.id)
//! })
//! .await
//! ```

use std::sync::{
    Mutex, PoisonError,
    atomic::{AtomicBool, Ordering},
};

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, DatabaseTransaction, EntityTrait as _,
    QueryFilter as _, TransactionTrait as _,
    prelude::{Expr, Uuid},
    sea_query::ExprTrait as _,
};

use super::{
    audit::{self, Actor, Change},
    webhooks::outbox::{self, Event},
};
use crate::{
    access::{Caller, UsersChanged},
    entities::account,
    error::{ServiceError, ServiceResult},
};

/// What the body of [`write()`] works with: the transaction, and where it says what it
/// changed. Shared (`&Write`), so the body may hold [`Write::txn`] while recording.
pub struct Write {
    txn: DatabaseTransaction,
    changes: Mutex<Vec<Change>>,
    events: Mutex<Vec<Event>>,
    users_changed: AtomicBool,
}

impl Write {
    /// The transaction, holding the account's write lock.
    pub fn txn(&self) -> &DatabaseTransaction {
        &self.txn
    }

    /// Records `change` in the audit table when the write commits. An action that alters
    /// who a caller is ([`AuditAction::changes_users`](super::AuditAction::changes_users))
    /// also marks [`Write::users_changed`].
    pub fn record(&self, change: Change) {
        if change.action.changes_users() {
            self.users_changed();
        }
        self.changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(change);
    }

    /// [`Write::record`] for each of `changes`.
    pub fn record_all(&self, changes: impl IntoIterator<Item = Change>) {
        for change in changes {
            self.record(change);
        }
    }

    /// Records `event` for the account's matching webhook subscriptions when the write
    /// commits (in its transaction: a refused write records nothing).
    pub fn emit(&self, event: Event) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    }

    /// Marks the write as changing something that decides who a caller is (password
    /// hash, role, custom-role permissions, managed departments, active flag): once it
    /// commits, every caller this process remembers is read from the database again.
    pub fn users_changed(&self) {
        self.users_changed.store(true, Ordering::Relaxed);
    }
}

/// Runs `body` in a transaction that first takes the account's write lock, writes the
/// audit rows it recorded (by `caller`) and the webhook events it emitted, and commits; an error from the body rolls
/// everything back. After the commit, a write marked [`Write::users_changed`] bumps the
/// authenticator's revision the caller came with, so the very next request of a changed
/// user is read afresh (other processes learn of it through the `auth_revisions` row).
///
/// Bumping `accounts.revision` before anything is read serializes the writers of one
/// account on both backends: a row lock on PostgreSQL, the database write lock on SQLite
/// (taken before any read, so SQLite never has to upgrade a stale snapshot). Tree moves
/// rely on it: two concurrent moves can never both pass the cycle check.
pub async fn write<T, F>(db: &DatabaseConnection, caller: &Caller, body: F) -> ServiceResult<T>
where
    F: AsyncFnOnce(&Write) -> ServiceResult<T>,
{
    write_as(db, &Actor::from(caller), || caller.users_changed(), body).await
}

/// [`write()`] for a change nobody asked for through the interface (the scheduler's): its
/// audit rows name no actor and no request id, and `told` (this process's authenticator)
/// learns of a change to who a user is.
pub async fn write_unattended<T, F>(
    db: &DatabaseConnection,
    account_id: Uuid,
    told: &dyn UsersChanged,
    body: F,
) -> ServiceResult<T>
where
    F: AsyncFnOnce(&Write) -> ServiceResult<T>,
{
    write_as(
        db,
        &Actor::system(account_id),
        || told.users_changed(),
        body,
    )
    .await
}

async fn write_as<T, F>(
    db: &DatabaseConnection,
    actor: &Actor,
    users_changed_told: impl FnOnce(),
    body: F,
) -> ServiceResult<T>
where
    F: AsyncFnOnce(&Write) -> ServiceResult<T>,
{
    let txn = db.begin().await?;
    lock_account(&txn, actor.account_id).await?;
    let write = Write {
        txn,
        changes: Mutex::new(Vec::new()),
        events: Mutex::new(Vec::new()),
        users_changed: AtomicBool::new(false),
    };
    let result = body(&write).await;
    let Write {
        txn,
        changes,
        events,
        users_changed,
    } = write;
    let value = match result {
        Ok(value) => value,
        Err(err) => {
            txn.rollback().await?;
            return Err(err);
        }
    };
    let changes = changes.into_inner().unwrap_or_else(PoisonError::into_inner);
    // Dropping the transaction on an error here rolls it back.
    audit::insert(&txn, actor, changes).await?;
    let events = events.into_inner().unwrap_or_else(PoisonError::into_inner);
    let recorded = outbox::record(&txn, actor.account_id, events).await?;
    txn.commit().await?;
    crate::db::sqlite_file::confirm_committed(db).map_err(ServiceError::Unavailable)?;
    if recorded > 0 {
        outbox::committed().notify_one();
    }
    if users_changed.into_inner() {
        users_changed_told();
    }
    Ok(value)
}

async fn lock_account(txn: &impl ConnectionTrait, account_id: Uuid) -> ServiceResult<()> {
    let updated = account::Entity::update_many()
        .col_expr(
            account::Column::Revision,
            Expr::col(account::Column::Revision).add(1),
        )
        .filter(account::Column::Id.eq(account_id))
        .exec(txn)
        .await?;
    if updated.rows_affected != 1 {
        return Err(ServiceError::Unexpected(anyhow::anyhow!(
            "account {account_id} vanished"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::{sync::Arc, time::Duration};

    use sea_orm::{ActiveModelTrait as _, Set};
    use serde_json::json;

    use lms_testkit::{Backend, TestDatabase};

    use super::*;
    use crate::{
        auth::AuthRevision,
        domain::roles::Role,
        entities::{audit_log, department, user},
        service::audit::AuditAction,
    };

    /// A fresh SQLite database opened as the core opens it (`db::open`).
    async fn fresh_database() -> TestDatabase {
        TestDatabase::create(Backend::Sqlite)
            .await
            .expect("SQLite is always available")
    }

    /// The caller, and the revision it tells.
    async fn account_and_caller(
        database: &TestDatabase,
    ) -> (DatabaseConnection, Caller, Arc<AuthRevision>) {
        let db = crate::db::open(&database.url, crate::db::CreateDatabase::OnFirstStart)
            .await
            .expect("database");
        let account_id = Uuid::now_v7();
        account::ActiveModel {
            id: Set(account_id),
            url: Set("https://acme.example.com".into()),
            revision: Set(0),
            created_at: Set(chrono::Utc::now()),
        }
        .insert(&db)
        .await
        .expect("account");
        let now = chrono::Utc::now();
        let root = department::ActiveModel {
            id: Set(Uuid::now_v7()),
            account_id: Set(account_id),
            parent_id: Set(None),
            name: Set("Root".into()),
            code: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(&db)
        .await
        .expect("department");
        let owner = user::ActiveModel {
            id: Set(Uuid::now_v7()),
            account_id: Set(account_id),
            email: Set("owner@acme.example.com".into()),
            email_key: Set("owner@acme.example.com".into()),
            password_hash: Set("not a hash".into()),
            role: Set(Role::AccountOwner),
            custom_role_id: Set(None),
            department_id: Set(root.id),
            active: Set(true),
            contact_email: Set(None),
            contact_email_key: Set(None),
            employment_ended: Set(false),
            scheduled_deactivation_date: Set(None),
            scheduled_termination_date: Set(None),
            first_name: Set(String::new()),
            last_name: Set(String::new()),
            created_at: Set(now),
            updated_at: Set(now),
            external_id: Set(None),
            scim_removed: Set(false),
        }
        .insert(&db)
        .await
        .expect("user");
        let revision = Arc::new(AuthRevision::new(Duration::from_secs(1)));
        let caller = Caller {
            account_id,
            account_url: "https://acme.example.com".into(),
            user_id: owner.id,
            role: Role::AccountOwner,
            permissions: Default::default(),
            managed_department_ids: vec![],
            request_id: Some("req-7".into()),
            auth_revision: Some(revision.clone()),
        };
        (db, caller, revision)
    }

    #[tokio::test]
    async fn a_committed_write_leaves_its_audit_rows_and_then_tells_the_authenticator() {
        let database = fresh_database().await;
        let (db, caller, revision) = account_and_caller(&database).await;
        let user_id = Uuid::now_v7();
        let value = write(&db, &caller, async |w| {
            w.record(Change {
                action: AuditAction::UserActiveSet,
                entity_id: user_id,
                before: Some(json!({ "active": true })),
                after: Some(json!({ "active": false })),
            });
            assert_eq!(
                revision.generation(),
                0,
                "nothing is told before the commit"
            );
            Ok(7)
        })
        .await
        .expect("write");
        assert_eq!(value, 7);
        assert_eq!(revision.generation(), 1);
        let rows = audit_log::Entity::find().all(&db).await.expect("rows");
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(
            (row.action.as_str(), row.entity_type.as_str(), row.entity_id),
            ("user.set_active", "user", user_id)
        );
        assert_eq!(row.actor_user_id, Some(caller.user_id));
        assert_eq!(row.request_id.as_deref(), Some("req-7"));
        let account = account::Entity::find_by_id(caller.account_id)
            .one(&db)
            .await
            .expect("read")
            .expect("account");
        assert_eq!(account.revision, 1, "the account lock was taken");
    }

    #[tokio::test]
    async fn a_failed_write_leaves_nothing_and_tells_nobody() {
        let database = fresh_database().await;
        let (db, caller, revision) = account_and_caller(&database).await;
        let result: ServiceResult<()> = write(&db, &caller, async |w| {
            w.users_changed();
            w.record(Change {
                action: AuditAction::GroupUpdated,
                entity_id: Uuid::now_v7(),
                before: None,
                after: None,
            });
            Err(ServiceError::invalid("refused"))
        })
        .await;
        assert!(matches!(result, Err(ServiceError::InvalidArgument(_))));
        assert_eq!(revision.generation(), 0);
        assert!(
            audit_log::Entity::find()
                .all(&db)
                .await
                .expect("rows")
                .is_empty()
        );
        let account = account::Entity::find_by_id(caller.account_id)
            .one(&db)
            .await
            .expect("read")
            .expect("account");
        assert_eq!(
            account.revision, 0,
            "the lock was rolled back with the rest"
        );
    }

    #[tokio::test]
    async fn a_write_that_changes_nobody_leaves_remembered_callers_alone() {
        let database = fresh_database().await;
        let (db, caller, revision) = account_and_caller(&database).await;
        write(&db, &caller, async |w| {
            w.record(Change {
                action: AuditAction::GroupUpdated,
                entity_id: Uuid::now_v7(),
                before: None,
                after: None,
            });
            Ok(())
        })
        .await
        .expect("write");
        assert_eq!(revision.generation(), 0);
    }
}
