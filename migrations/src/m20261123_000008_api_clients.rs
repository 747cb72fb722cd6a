//! API clients and their tokens (contract section 12).
//!
//! `api_clients`: an id (`client_id`) and the SHA-256 of its secret, belonging to one user of
//! an account and acting with that user's role and scope. `api_tokens`: the SHA-256 of each
//! token issued and when it expires; a token itself is never stored. Both go with their user.

use sea_orm_migration::{prelude::*, schema::*};

use crate::{
    m20261122_000001_accounts_and_departments::Accounts,
    m20261122_000002_users_and_roles::Users,
    schema::{foreign_key, index},
};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum ApiClients {
    Table,
    Id,
    AccountId,
    UserId,
    SecretHash,
    Revoked,
    CreatedAt,
}

#[derive(DeriveIden)]
enum ApiTokens {
    Table,
    TokenHash,
    ClientId,
    ExpiresAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ApiClients::Table)
                    .col(uuid(ApiClients::Id).primary_key())
                    .col(uuid(ApiClients::AccountId))
                    .col(uuid(ApiClients::UserId))
                    .col(string_len(ApiClients::SecretHash, 64))
                    .col(boolean(ApiClients::Revoked).default(false))
                    .col(timestamp_with_time_zone(ApiClients::CreatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_api_clients_account_id",
                        (ApiClients::Table, ApiClients::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_api_clients_user_id",
                        (ApiClients::Table, ApiClients::UserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_api_clients_user_id",
                ApiClients::Table,
                [ApiClients::UserId],
            ))
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ApiTokens::Table)
                    .col(string_len(ApiTokens::TokenHash, 64).primary_key())
                    .col(uuid(ApiTokens::ClientId))
                    .col(big_integer(ApiTokens::ExpiresAt))
                    .foreign_key(&mut foreign_key(
                        "fk_api_tokens_client_id",
                        (ApiTokens::Table, ApiTokens::ClientId),
                        (ApiClients::Table, ApiClients::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_api_tokens_client_id",
                ApiTokens::Table,
                [ApiTokens::ClientId],
            ))
            .await?;
        manager
            .create_index(index(
                "idx_api_tokens_expires_at",
                ApiTokens::Table,
                [ApiTokens::ExpiresAt],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ApiTokens::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(ApiClients::Table).to_owned())
            .await
    }
}
