//! `api_tokens.rights`: a fingerprint of the rights the token's user had when it was issued
//! (role, custom role and its permissions, managed departments). A token whose user's rights
//! differ on a request is refused (contract section 12: a changed role or scope ends it).
//!
//! Tokens issued before this column existed get the empty fingerprint, which matches no
//! rights: they are refused once, and clients fetch a new token as on any 401.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum ApiTokens {
    Table,
    Rights,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(ApiTokens::Table)
                    .add_column(string_len(ApiTokens::Rights, 64).default(""))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(ApiTokens::Table)
                    .drop_column(ApiTokens::Rights)
                    .to_owned(),
            )
            .await
    }
}
