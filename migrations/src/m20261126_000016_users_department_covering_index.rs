//! A department's users read from the index alone: `(department_id, id, account_id)`
//! replaces `(department_id, id)`.
//!
//! A smart group's members are the users of a department subtree that belong to the group's
//! account; with `account_id` in the index, the 15,000 members of a large smart group are
//! 15,000 index entries in order, not 15,000 visits to scattered table rows as well (on
//! SQLite about seven times the work, see `docs/benchmarks.md`). The wider index serves every
//! lookup the narrower one did, since its leading columns are the same.

use sea_orm_migration::prelude::*;

use crate::schema::index;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
    AccountId,
    DepartmentId,
}

const DEPARTMENT_ID_ID_ACCOUNT_ID: &str = "idx_users_department_id_id_account_id";
const DEPARTMENT_ID_ID: &str = "idx_users_department_id_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                DEPARTMENT_ID_ID_ACCOUNT_ID,
                Users::Table,
                [Users::DepartmentId, Users::Id, Users::AccountId],
            ))
            .await?;
        drop_index(manager, DEPARTMENT_ID_ID).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                DEPARTMENT_ID_ID,
                Users::Table,
                [Users::DepartmentId, Users::Id],
            ))
            .await?;
        drop_index(manager, DEPARTMENT_ID_ID_ACCOUNT_ID).await
    }
}

async fn drop_index(manager: &SchemaManager<'_>, name: &str) -> Result<(), DbErr> {
    manager
        .drop_index(Index::drop().name(name).table(Users::Table).to_owned())
        .await
}
