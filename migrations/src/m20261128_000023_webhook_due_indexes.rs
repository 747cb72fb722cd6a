//! Indexes that let a dispatcher's poll find the subscribers with work due without reading
//! every subscriber of every account: those with undelivered events (`pending_events > 0`,
//! few at any time) and those with a confirmation to send (`confirmation_retry_at` set).
//! The backlog metric's sum reads the same `pending_events` range.

use sea_orm_migration::prelude::*;

use crate::schema::index;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum WebhookSubscribers {
    Table,
    PendingEvents,
    ConfirmationRetryAt,
}

const PENDING: &str = "idx_webhook_subscribers_pending_events";
const CONFIRMATION: &str = "idx_webhook_subscribers_confirmation_retry_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                PENDING,
                WebhookSubscribers::Table,
                [WebhookSubscribers::PendingEvents],
            ))
            .await?;
        manager
            .create_index(index(
                CONFIRMATION,
                WebhookSubscribers::Table,
                [WebhookSubscribers::ConfirmationRetryAt],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for name in [CONFIRMATION, PENDING] {
            manager
                .drop_index(
                    Index::drop()
                        .name(name)
                        .table(WebhookSubscribers::Table)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
