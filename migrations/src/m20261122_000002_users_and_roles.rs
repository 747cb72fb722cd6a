//! Custom roles with their permissions, users, and the departments users manage.

use sea_orm_migration::{prelude::*, schema::*};

use crate::{
    m20261122_000001_accounts_and_departments::{Accounts, Departments},
    schema::{foreign_key, index, unique_index},
};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
pub(crate) enum CustomRoles {
    Table,
    Id,
    AccountId,
    Name,
}

#[derive(DeriveIden)]
enum CustomRolePermissions {
    Table,
    CustomRoleId,
    Permission,
}

#[derive(DeriveIden)]
pub(crate) enum Users {
    Table,
    Id,
    AccountId,
    Email,
    EmailKey,
    PasswordHash,
    Role,
    CustomRoleId,
    DepartmentId,
    Active,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum UserManagedDepartments {
    Table,
    UserId,
    DepartmentId,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(CustomRoles::Table)
                    .col(uuid(CustomRoles::Id).primary_key())
                    .col(uuid(CustomRoles::AccountId))
                    .col(string_len(CustomRoles::Name, 255))
                    .foreign_key(&mut foreign_key(
                        "fk_custom_roles_account_id",
                        (CustomRoles::Table, CustomRoles::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_custom_roles_account_id",
                CustomRoles::Table,
                [CustomRoles::AccountId],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(CustomRolePermissions::Table)
                    .col(uuid(CustomRolePermissions::CustomRoleId))
                    .col(string_len(CustomRolePermissions::Permission, 64))
                    .primary_key(
                        Index::create()
                            .col(CustomRolePermissions::CustomRoleId)
                            .col(CustomRolePermissions::Permission),
                    )
                    .foreign_key(&mut foreign_key(
                        "fk_custom_role_permissions_custom_role_id",
                        (
                            CustomRolePermissions::Table,
                            CustomRolePermissions::CustomRoleId,
                        ),
                        (CustomRoles::Table, CustomRoles::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Users::Table)
                    .col(uuid(Users::Id).primary_key())
                    .col(uuid(Users::AccountId))
                    .col(string_len(Users::Email, 255))
                    .col(string_len(Users::EmailKey, 255))
                    .col(text(Users::PasswordHash))
                    .col(string_len(Users::Role, 64))
                    .col(uuid_null(Users::CustomRoleId))
                    .col(uuid(Users::DepartmentId))
                    .col(boolean(Users::Active).default(true))
                    .col(timestamp_with_time_zone(Users::CreatedAt))
                    .col(timestamp_with_time_zone(Users::UpdatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_users_account_id",
                        (Users::Table, Users::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_users_custom_role_id",
                        (Users::Table, Users::CustomRoleId),
                        (CustomRoles::Table, CustomRoles::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_users_department_id",
                        (Users::Table, Users::DepartmentId),
                        (Departments::Table, Departments::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(unique_index(
                "uq_users_account_id_email_key",
                Users::Table,
                [Users::AccountId, Users::EmailKey],
            ))
            .await?;
        manager
            .create_index(index(
                "idx_users_department_id",
                Users::Table,
                [Users::DepartmentId],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(UserManagedDepartments::Table)
                    .col(uuid(UserManagedDepartments::UserId))
                    .col(uuid(UserManagedDepartments::DepartmentId))
                    .primary_key(
                        Index::create()
                            .col(UserManagedDepartments::UserId)
                            .col(UserManagedDepartments::DepartmentId),
                    )
                    .foreign_key(&mut foreign_key(
                        "fk_user_managed_departments_user_id",
                        (
                            UserManagedDepartments::Table,
                            UserManagedDepartments::UserId,
                        ),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_user_managed_departments_department_id",
                        (
                            UserManagedDepartments::Table,
                            UserManagedDepartments::DepartmentId,
                        ),
                        (Departments::Table, Departments::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_user_managed_departments_department_id",
                UserManagedDepartments::Table,
                [UserManagedDepartments::DepartmentId],
            ))
            .await?;
        Ok(())
    }

    /// Drops the tables in reverse order; their indexes and constraints go with them.
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            UserManagedDepartments::Table.into_iden(),
            Users::Table.into_iden(),
            CustomRolePermissions::Table.into_iden(),
            CustomRoles::Table.into_iden(),
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
