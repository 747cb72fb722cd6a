//! An index that lets the group lists (`account_id = ? AND id > ? ORDER BY id`) walk the
//! account's groups in id order instead of sorting them: a page of `GET /groups` costs the
//! same at page 1 and page 100.
//!
//! `(account_id, id)` replaces `(account_id)`: it serves every lookup the narrow one did.
//! Both steps are conditional, so a database that already has the wide index (made by hand,
//! or by a neighbouring branch's migration) migrates all the same.

use sea_orm_migration::prelude::*;

use crate::schema::index;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Groups {
    Table,
    Id,
    AccountId,
}

const ACCOUNT_ID_ID: &str = "idx_groups_account_id_id";
const ACCOUNT_ID: &str = "idx_groups_account_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                index(
                    ACCOUNT_ID_ID,
                    Groups::Table,
                    [Groups::AccountId, Groups::Id],
                )
                .if_not_exists()
                .take(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name(ACCOUNT_ID)
                    .table(Groups::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                index(ACCOUNT_ID, Groups::Table, [Groups::AccountId])
                    .if_not_exists()
                    .take(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name(ACCOUNT_ID_ID)
                    .table(Groups::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }
}
