//! Groups with their members, projects with their authors, and content items.

use sea_orm_migration::{prelude::*, schema::*};

use crate::{
    m20261122_000001_accounts_and_departments::{Accounts, Departments},
    m20261122_000002_users_and_roles::Users,
    schema::{foreign_key, index},
};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Groups {
    Table,
    Id,
    AccountId,
    Name,
    SmartDepartmentId,
}

#[derive(DeriveIden)]
enum GroupMembers {
    Table,
    GroupId,
    UserId,
}

#[derive(DeriveIden)]
enum Projects {
    Table,
    Id,
    AccountId,
    Name,
}

#[derive(DeriveIden)]
enum ProjectAuthors {
    Table,
    ProjectId,
    UserId,
}

#[derive(DeriveIden)]
pub(crate) enum ContentItems {
    Table,
    Id,
    AccountId,
    ProjectId,
    Title,
    Description,
    UserId,
    AddedAt,
    ContentType,
    ViewUrl,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Groups::Table)
                    .col(uuid(Groups::Id).primary_key())
                    .col(uuid(Groups::AccountId))
                    .col(string_len(Groups::Name, 255))
                    .col(uuid_null(Groups::SmartDepartmentId))
                    .foreign_key(&mut foreign_key(
                        "fk_groups_account_id",
                        (Groups::Table, Groups::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_groups_smart_department_id",
                        (Groups::Table, Groups::SmartDepartmentId),
                        (Departments::Table, Departments::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_groups_account_id",
                Groups::Table,
                [Groups::AccountId],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(GroupMembers::Table)
                    .col(uuid(GroupMembers::GroupId))
                    .col(uuid(GroupMembers::UserId))
                    .primary_key(
                        Index::create()
                            .col(GroupMembers::GroupId)
                            .col(GroupMembers::UserId),
                    )
                    .foreign_key(&mut foreign_key(
                        "fk_group_members_group_id",
                        (GroupMembers::Table, GroupMembers::GroupId),
                        (Groups::Table, Groups::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_group_members_user_id",
                        (GroupMembers::Table, GroupMembers::UserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_group_members_user_id",
                GroupMembers::Table,
                [GroupMembers::UserId],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Projects::Table)
                    .col(uuid(Projects::Id).primary_key())
                    .col(uuid(Projects::AccountId))
                    .col(string_len(Projects::Name, 255))
                    .foreign_key(&mut foreign_key(
                        "fk_projects_account_id",
                        (Projects::Table, Projects::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_projects_account_id",
                Projects::Table,
                [Projects::AccountId],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(ProjectAuthors::Table)
                    .col(uuid(ProjectAuthors::ProjectId))
                    .col(uuid(ProjectAuthors::UserId))
                    .primary_key(
                        Index::create()
                            .col(ProjectAuthors::ProjectId)
                            .col(ProjectAuthors::UserId),
                    )
                    .foreign_key(&mut foreign_key(
                        "fk_project_authors_project_id",
                        (ProjectAuthors::Table, ProjectAuthors::ProjectId),
                        (Projects::Table, Projects::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_project_authors_user_id",
                        (ProjectAuthors::Table, ProjectAuthors::UserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_project_authors_user_id",
                ProjectAuthors::Table,
                [ProjectAuthors::UserId],
            ))
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(ContentItems::Table)
                    .col(uuid(ContentItems::Id).primary_key())
                    .col(uuid(ContentItems::AccountId))
                    .col(uuid(ContentItems::ProjectId))
                    .col(text(ContentItems::Title))
                    .col(text(ContentItems::Description))
                    .col(uuid(ContentItems::UserId))
                    .col(timestamp_with_time_zone(ContentItems::AddedAt))
                    .col(string_len(ContentItems::ContentType, 255))
                    .col(text_null(ContentItems::ViewUrl))
                    .foreign_key(&mut foreign_key(
                        "fk_content_items_account_id",
                        (ContentItems::Table, ContentItems::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_content_items_project_id",
                        (ContentItems::Table, ContentItems::ProjectId),
                        (Projects::Table, Projects::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_content_items_user_id",
                        (ContentItems::Table, ContentItems::UserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_content_items_account_id",
                ContentItems::Table,
                [ContentItems::AccountId],
            ))
            .await?;
        manager
            .create_index(index(
                "idx_content_items_project_id",
                ContentItems::Table,
                [ContentItems::ProjectId],
            ))
            .await?;
        Ok(())
    }

    /// Drops the tables in reverse order; their indexes and constraints go with them.
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            ContentItems::Table.into_iden(),
            ProjectAuthors::Table.into_iden(),
            Projects::Table.into_iden(),
            GroupMembers::Table.into_iden(),
            Groups::Table.into_iden(),
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
