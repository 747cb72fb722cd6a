//! Accounts (tenants), their department tree, and the tree's closure table.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema::{foreign_key, index, unique_index};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
pub(crate) enum Accounts {
    Table,
    Id,
    Url,
    Revision,
    CreatedAt,
}

#[derive(DeriveIden)]
pub(crate) enum Departments {
    Table,
    Id,
    AccountId,
    ParentId,
    Name,
    Code,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum DepartmentClosure {
    Table,
    AccountId,
    AncestorId,
    DescendantId,
    Depth,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Accounts::Table)
                    .col(uuid(Accounts::Id).primary_key())
                    .col(text(Accounts::Url))
                    .col(big_integer(Accounts::Revision).default(0i64))
                    .col(timestamp_with_time_zone(Accounts::CreatedAt))
                    .take(),
            )
            .await?;
        manager
            .create_index(unique_index(
                "uq_accounts_url",
                Accounts::Table,
                [Accounts::Url],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Departments::Table)
                    .col(uuid(Departments::Id).primary_key())
                    .col(uuid(Departments::AccountId))
                    .col(uuid_null(Departments::ParentId))
                    .col(string_len(Departments::Name, 255))
                    .col(string_len_null(Departments::Code, 64))
                    .col(timestamp_with_time_zone(Departments::CreatedAt))
                    .col(timestamp_with_time_zone(Departments::UpdatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_departments_account_id",
                        (Departments::Table, Departments::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_departments_parent_id",
                        (Departments::Table, Departments::ParentId),
                        (Departments::Table, Departments::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_departments_account_id",
                Departments::Table,
                [Departments::AccountId],
            ))
            .await?;
        manager
            .create_index(index(
                "idx_departments_parent_id",
                Departments::Table,
                [Departments::ParentId],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(DepartmentClosure::Table)
                    .col(uuid(DepartmentClosure::AccountId))
                    .col(uuid(DepartmentClosure::AncestorId))
                    .col(uuid(DepartmentClosure::DescendantId))
                    .col(integer(DepartmentClosure::Depth))
                    .primary_key(
                        Index::create()
                            .col(DepartmentClosure::AncestorId)
                            .col(DepartmentClosure::DescendantId),
                    )
                    .foreign_key(&mut foreign_key(
                        "fk_department_closure_account_id",
                        (DepartmentClosure::Table, DepartmentClosure::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_department_closure_ancestor_id",
                        (DepartmentClosure::Table, DepartmentClosure::AncestorId),
                        (Departments::Table, Departments::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_department_closure_descendant_id",
                        (DepartmentClosure::Table, DepartmentClosure::DescendantId),
                        (Departments::Table, Departments::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_department_closure_descendant_id",
                DepartmentClosure::Table,
                [DepartmentClosure::DescendantId],
            ))
            .await?;
        Ok(())
    }

    /// Drops the tables in reverse order; their indexes and constraints go with them.
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            DepartmentClosure::Table.into_iden(),
            Departments::Table.into_iden(),
            Accounts::Table.into_iden(),
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
