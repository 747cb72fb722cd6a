//! Enrollments, user points and the audit log.

use sea_orm_migration::{prelude::*, schema::*};

use crate::{
    m20261122_000001_accounts_and_departments::Accounts,
    m20261122_000002_users_and_roles::Users,
    m20261122_000003_groups_projects_content::ContentItems,
    schema::{foreign_key, index},
};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Enrollments {
    Table,
    Id,
    AccountId,
    LearnerId,
    ContentItemId,
    CreatedAt,
}

#[derive(DeriveIden)]
enum UserPoints {
    Table,
    UserId,
    AccountId,
    Points,
}

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

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Enrollments::Table)
                    .col(uuid(Enrollments::Id).primary_key())
                    .col(uuid(Enrollments::AccountId))
                    .col(uuid(Enrollments::LearnerId))
                    .col(uuid(Enrollments::ContentItemId))
                    .col(timestamp_with_time_zone(Enrollments::CreatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_enrollments_account_id",
                        (Enrollments::Table, Enrollments::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_enrollments_learner_id",
                        (Enrollments::Table, Enrollments::LearnerId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_enrollments_content_item_id",
                        (Enrollments::Table, Enrollments::ContentItemId),
                        (ContentItems::Table, ContentItems::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_enrollments_learner_id",
                Enrollments::Table,
                [Enrollments::LearnerId],
            ))
            .await?;
        manager
            .create_index(index(
                "idx_enrollments_content_item_id",
                Enrollments::Table,
                [Enrollments::ContentItemId],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(UserPoints::Table)
                    .col(uuid(UserPoints::UserId).primary_key())
                    .col(uuid(UserPoints::AccountId))
                    .col(big_integer(UserPoints::Points).default(0i64))
                    .foreign_key(&mut foreign_key(
                        "fk_user_points_user_id",
                        (UserPoints::Table, UserPoints::UserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_user_points_account_id",
                        (UserPoints::Table, UserPoints::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_user_points_account_id",
                UserPoints::Table,
                [UserPoints::AccountId],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(AuditLog::Table)
                    .col(uuid(AuditLog::Id).primary_key())
                    .col(uuid(AuditLog::AccountId))
                    .col(uuid_null(AuditLog::ActorUserId))
                    .col(string_len(AuditLog::Action, 64))
                    .col(string_len(AuditLog::EntityType, 64))
                    .col(uuid(AuditLog::EntityId))
                    .col(text_null(AuditLog::RequestId))
                    .col(text_null(AuditLog::Before))
                    .col(text_null(AuditLog::After))
                    .col(timestamp_with_time_zone(AuditLog::CreatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_audit_log_account_id",
                        (AuditLog::Table, AuditLog::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_audit_log_actor_user_id",
                        (AuditLog::Table, AuditLog::ActorUserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_audit_log_account_id_created_at",
                AuditLog::Table,
                [AuditLog::AccountId, AuditLog::CreatedAt],
            ))
            .await?;
        Ok(())
    }

    /// Drops the tables in reverse order; their indexes and constraints go with them.
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            AuditLog::Table.into_iden(),
            UserPoints::Table.into_iden(),
            Enrollments::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).take())
                .await?;
        }
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
