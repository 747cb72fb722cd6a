//! Indexes that let the user reads of a large account walk an index in id order instead of
//! sorting the account: the points keyset pages (`account_id = ? AND id > ? ORDER BY id`)
//! and a department's users in id order (smart groups, a department administrator's scope).
//!
//! `(department_id, id)` replaces `(department_id)`: it serves every lookup the narrow one
//! did, and one index less is one index less to write on every user insert.

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

const ACCOUNT_ID_ID: &str = "idx_users_account_id_id";
const DEPARTMENT_ID_ID: &str = "idx_users_department_id_id";
const DEPARTMENT_ID: &str = "idx_users_department_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                ACCOUNT_ID_ID,
                Users::Table,
                [Users::AccountId, Users::Id],
            ))
            .await?;
        manager
            .create_index(index(
                DEPARTMENT_ID_ID,
                Users::Table,
                [Users::DepartmentId, Users::Id],
            ))
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name(DEPARTMENT_ID)
                    .table(Users::Table)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(DEPARTMENT_ID, Users::Table, [Users::DepartmentId]))
            .await?;
        for name in [DEPARTMENT_ID_ID, ACCOUNT_ID_ID] {
            manager
                .drop_index(Index::drop().name(name).table(Users::Table).to_owned())
                .await?;
        }
        Ok(())
    }
}
