//! The audit log is history: it names accounts and users without foreign keys.
//!
//! A record must outlive what it describes, and the keys cost more than any other part of
//! writing it: a delete of 10,000 enrollments writes 10,000 audit rows, and PostgreSQL
//! checked two keys for each, one query per key and row (about 40 % of the delete). The
//! rows are written only by the core, with the caller's own account and user.
//!
//! PostgreSQL drops the two keys. SQLite cannot drop a key, so the table is built anew
//! without them, its rows copied, and the old one replaced; its index is made again. Down
//! does the reverse, refusing if a row names an account or user that no longer exists.

use sea_orm_migration::{prelude::*, schema::*, sea_orm::DatabaseBackend};

use crate::schema::{foreign_key, index};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum AuditLog {
    Table,
    Id,
    AccountId,
    ActorUserId,
    Action,
    EntityType,
    EntityId,
    RequestId,
    Before,
    After,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Accounts {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
}

const ACCOUNT_KEY: &str = "fk_audit_log_account_id";
const ACTOR_KEY: &str = "fk_audit_log_actor_user_id";
const INDEX: &str = "idx_audit_log_account_id_created_at";
const REBUILT: &str = "audit_log_rebuilt";

fn account_key() -> ForeignKeyCreateStatement {
    foreign_key(
        ACCOUNT_KEY,
        (AuditLog::Table, AuditLog::AccountId),
        (Accounts::Table, Accounts::Id),
        ForeignKeyAction::Restrict,
    )
}

fn actor_key() -> ForeignKeyCreateStatement {
    foreign_key(
        ACTOR_KEY,
        (AuditLog::Table, AuditLog::ActorUserId),
        (Users::Table, Users::Id),
        ForeignKeyAction::Restrict,
    )
}

/// The table as the first migration made it, named `name`, with or without its keys.
fn table(name: &str, with_keys: bool) -> TableCreateStatement {
    let mut table = Table::create();
    table
        .table(Alias::new(name))
        .col(uuid(AuditLog::Id).primary_key())
        .col(uuid(AuditLog::AccountId))
        .col(uuid_null(AuditLog::ActorUserId))
        .col(string_len(AuditLog::Action, 64))
        .col(string_len(AuditLog::EntityType, 64))
        .col(uuid(AuditLog::EntityId))
        .col(text_null(AuditLog::RequestId))
        .col(text_null(AuditLog::Before))
        .col(text_null(AuditLog::After))
        .col(timestamp_with_time_zone(AuditLog::CreatedAt));
    if with_keys {
        table
            .foreign_key(&mut account_key())
            .foreign_key(&mut actor_key());
    }
    table.take()
}

/// SQLite: replaces `audit_log` by a copy built with or without its keys.
async fn rebuild(manager: &SchemaManager<'_>, with_keys: bool) -> Result<(), DbErr> {
    manager.create_table(table(REBUILT, with_keys)).await?;
    let db = manager.get_connection();
    db.execute_unprepared(&format!(
        "INSERT INTO \"{REBUILT}\" SELECT \"id\", \"account_id\", \"actor_user_id\", \"action\", \
         \"entity_type\", \"entity_id\", \"request_id\", \"before\", \"after\", \"created_at\" \
         FROM \"audit_log\""
    ))
    .await?;
    manager
        .drop_table(Table::drop().table(AuditLog::Table).take())
        .await?;
    manager
        .rename_table(
            Table::rename()
                .table(Alias::new(REBUILT), AuditLog::Table)
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            INDEX,
            AuditLog::Table,
            [AuditLog::AccountId, AuditLog::CreatedAt],
        ))
        .await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        match manager.get_database_backend() {
            DatabaseBackend::Sqlite => rebuild(manager, false).await,
            _ => {
                for key in [ACCOUNT_KEY, ACTOR_KEY] {
                    manager
                        .drop_foreign_key(
                            ForeignKey::drop()
                                .name(key)
                                .table(AuditLog::Table)
                                .to_owned(),
                        )
                        .await?;
                }
                Ok(())
            }
        }
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        match manager.get_database_backend() {
            DatabaseBackend::Sqlite => rebuild(manager, true).await,
            _ => {
                for key in [account_key(), actor_key()] {
                    manager.create_foreign_key(key).await?;
                }
                Ok(())
            }
        }
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
