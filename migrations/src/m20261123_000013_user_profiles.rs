//! The user profile over HTTP (neighbours.md section 4): `users.first_name` and
//! `users.last_name`, empty for the users that existed before (nobody gave them one), and
//! the indexes that deleting a user asks through: "did this user act (audit history) or
//! author content?" must not read either table whole.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema::index;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Users {
    Table,
    FirstName,
    LastName,
}

#[derive(DeriveIden)]
enum AuditLog {
    Table,
    ActorUserId,
}

#[derive(DeriveIden)]
enum ContentItems {
    Table,
    UserId,
}

const AUDIT_ACTOR: &str = "idx_audit_log_actor_user_id";
const CONTENT_USER: &str = "idx_content_items_user_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite adds one at a time.
        for column in [Users::FirstName, Users::LastName] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .add_column(string_len(column, 255).default(""))
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_index(index(AUDIT_ACTOR, AuditLog::Table, [AuditLog::ActorUserId]))
            .await?;
        manager
            .create_index(index(
                CONTENT_USER,
                ContentItems::Table,
                [ContentItems::UserId],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(CONTENT_USER)
                    .table(ContentItems::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name(AUDIT_ACTOR)
                    .table(AuditLog::Table)
                    .to_owned(),
            )
            .await?;
        for column in [Users::LastName, Users::FirstName] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
