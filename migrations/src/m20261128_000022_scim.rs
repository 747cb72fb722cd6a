//! SCIM 2.0 (provisioning.md sections 7 to 15).
//!
//! - `api_clients.scim`: the client's secret is a SCIM token, good for `/scim/v2` only; the
//!   secret hash is indexed, since a SCIM request is authenticated by it alone.
//! - `users.external_id`: the identity provider's id, unique per account where set (NULLs
//!   are distinct on both backends); `users.scim_removed`: removed by SCIM `DELETE`, hidden
//!   from SCIM (REST still reads the user).
//! - `groups.external_id` (not unique), `groups.created_at`/`updated_at` for SCIM's `meta`;
//!   groups older than this migration get its time.
//! - `users (account_id, external_id)` serves the `externalId` filter in one lookup.

use sea_orm_migration::{prelude::*, schema::*, sea_orm::DatabaseBackend};

use crate::schema::{index, unique_index};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum ApiClients {
    Table,
    Scim,
    SecretHash,
}

#[derive(DeriveIden)]
enum Users {
    Table,
    AccountId,
    ExternalId,
    ScimRemoved,
}

#[derive(DeriveIden)]
enum Groups {
    Table,
    ExternalId,
    CreatedAt,
    UpdatedAt,
}

const SECRET_HASH: &str = "idx_api_clients_secret_hash";
const EXTERNAL_ID: &str = "uq_users_account_id_external_id";

/// Adds `column` to `table`: one column per statement, as SQLite adds them.
async fn add_column(
    manager: &SchemaManager<'_>,
    table: impl IntoIden,
    mut column: ColumnDef,
) -> Result<(), DbErr> {
    manager
        .alter_table(
            Table::alter()
                .table(table)
                .add_column(&mut column)
                .to_owned(),
        )
        .await
}

async fn drop_column(
    manager: &SchemaManager<'_>,
    table: impl IntoIden,
    column: impl IntoIden,
) -> Result<(), DbErr> {
    manager
        .alter_table(Table::alter().table(table).drop_column(column).to_owned())
        .await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        add_column(
            manager,
            ApiClients::Table,
            boolean(ApiClients::Scim).default(false).take(),
        )
        .await?;
        manager
            .create_index(index(
                SECRET_HASH,
                ApiClients::Table,
                [ApiClients::SecretHash],
            ))
            .await?;
        add_column(
            manager,
            Users::Table,
            string_len_null(Users::ExternalId, 255),
        )
        .await?;
        add_column(
            manager,
            Users::Table,
            boolean(Users::ScimRemoved).default(false).take(),
        )
        .await?;
        manager
            .create_index(unique_index(
                EXTERNAL_ID,
                Users::Table,
                [Users::AccountId, Users::ExternalId],
            ))
            .await?;
        add_column(
            manager,
            Groups::Table,
            string_len_null(Groups::ExternalId, 255),
        )
        .await?;
        for column in [Groups::CreatedAt, Groups::UpdatedAt] {
            add_column(
                manager,
                Groups::Table,
                timestamp_with_time_zone_null(column),
            )
            .await?;
        }
        // RFC 3339 text on SQLite, as the entities store times there; a timestamp on PostgreSQL.
        let now = match manager.get_database_backend() {
            DatabaseBackend::Sqlite => "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')",
            _ => "CURRENT_TIMESTAMP",
        };
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "UPDATE groups SET created_at = {now}, updated_at = {now}"
            ))
            .await
            .map(drop)
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Groups::UpdatedAt, Groups::CreatedAt, Groups::ExternalId] {
            drop_column(manager, Groups::Table, column).await?;
        }
        manager
            .drop_index(
                Index::drop()
                    .name(EXTERNAL_ID)
                    .table(Users::Table)
                    .to_owned(),
            )
            .await?;
        drop_column(manager, Users::Table, Users::ScimRemoved).await?;
        drop_column(manager, Users::Table, Users::ExternalId).await?;
        manager
            .drop_index(
                Index::drop()
                    .name(SECRET_HASH)
                    .table(ApiClients::Table)
                    .to_owned(),
            )
            .await?;
        drop_column(manager, ApiClients::Table, ApiClients::Scim).await
    }
}
