//! An index that lets the paged department reads (`account_id = ? AND id > ? ORDER BY id`)
//! walk the account's departments in id order instead of sorting them: a page costs the same
//! at page 1 and page 100.
//!
//! `(account_id, id)` replaces `(account_id)`: it serves every lookup the narrow one did.
//!
//! `groups (smart_department_id)` answers "does a smart group follow this department?",
//! which deleting a department asks, without reading the account's groups.

use sea_orm_migration::prelude::*;

use crate::schema::index;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Groups {
    Table,
    SmartDepartmentId,
}

#[derive(DeriveIden)]
enum Departments {
    Table,
    Id,
    AccountId,
}

const ACCOUNT_ID_ID: &str = "idx_departments_account_id_id";
const ACCOUNT_ID: &str = "idx_departments_account_id";
const SMART_DEPARTMENT_ID: &str = "idx_groups_smart_department_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                ACCOUNT_ID_ID,
                Departments::Table,
                [Departments::AccountId, Departments::Id],
            ))
            .await?;
        manager
            .create_index(index(
                SMART_DEPARTMENT_ID,
                Groups::Table,
                [Groups::SmartDepartmentId],
            ))
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name(ACCOUNT_ID)
                    .table(Departments::Table)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(SMART_DEPARTMENT_ID)
                    .table(Groups::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index(
                ACCOUNT_ID,
                Departments::Table,
                [Departments::AccountId],
            ))
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name(ACCOUNT_ID_ID)
                    .table(Departments::Table)
                    .to_owned(),
            )
            .await
    }
}
