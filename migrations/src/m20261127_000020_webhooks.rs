//! Webhooks (`docs/spec/webhooks.md`): subscribers, their subscriptions, the outbox of
//! events written in the transaction of the change, the deliveries formed from it, and the
//! per-account counter that numbers events in commit order.
//!
//! A subscriber row also carries its delivery state (claim, retry times, last attempt),
//! so that one row lock orders everything a dispatching process does for it.

use sea_orm_migration::{prelude::*, schema::*};

use crate::{
    m20261122_000001_accounts_and_departments::Accounts,
    schema::{foreign_key, index, unique_index},
};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum WebhookSubscribers {
    Table,
    Id,
    AccountId,
    Name,
    CallbackUrl,
    Secret,
    Active,
    Confirmed,
    Code,
    CodeExpiresAt,
    ConfirmationDeliveryId,
    ConfirmationAttempts,
    ConfirmationRetryAt,
    PendingEvents,
    EventsRetryAt,
    Failures,
    FailingSince,
    ClaimOwner,
    ClaimExpiresAt,
    LastAttemptAt,
    LastAttemptResult,
    LastError,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum WebhookSubscriptions {
    Table,
    Id,
    SubscriberId,
    AccountId,
    EventType,
    UserIds,
    CourseIds,
    CourseItemIds,
    CreatedAt,
}

#[derive(DeriveIden)]
enum WebhookEvents {
    Table,
    Id,
    AccountId,
    SubscriberId,
    Seq,
    EventType,
    Payload,
    DeliveryId,
    CreatedAt,
}

#[derive(DeriveIden)]
enum WebhookDeliveries {
    Table,
    Id,
    SubscriberId,
    EventType,
    Body,
    Attempts,
    Events,
    CreatedAt,
}

#[derive(DeriveIden)]
enum WebhookEventCounters {
    Table,
    AccountId,
    LastSeq,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use WebhookSubscribers as S;
        manager
            .create_table(
                Table::create()
                    .table(S::Table)
                    .col(uuid(S::Id).primary_key())
                    .col(uuid(S::AccountId))
                    .col(string_len(S::Name, 255))
                    .col(string_len(S::CallbackUrl, 255))
                    .col(string_len_null(S::Secret, 255))
                    .col(boolean(S::Active))
                    .col(boolean(S::Confirmed))
                    .col(string_len_null(S::Code, 36))
                    .col(timestamp_with_time_zone_null(S::CodeExpiresAt))
                    .col(uuid_null(S::ConfirmationDeliveryId))
                    .col(integer(S::ConfirmationAttempts).default(0))
                    .col(timestamp_with_time_zone_null(S::ConfirmationRetryAt))
                    .col(big_integer(S::PendingEvents).default(0))
                    .col(timestamp_with_time_zone_null(S::EventsRetryAt))
                    .col(integer(S::Failures).default(0))
                    .col(timestamp_with_time_zone_null(S::FailingSince))
                    .col(uuid_null(S::ClaimOwner))
                    .col(timestamp_with_time_zone_null(S::ClaimExpiresAt))
                    .col(timestamp_with_time_zone_null(S::LastAttemptAt))
                    .col(string_len_null(S::LastAttemptResult, 16))
                    .col(text_null(S::LastError))
                    .col(timestamp_with_time_zone(S::CreatedAt))
                    .col(timestamp_with_time_zone(S::UpdatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_webhook_subscribers_account_id",
                        (S::Table, S::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(unique_index(
                "uq_webhook_subscribers_account_id_name",
                S::Table,
                [S::AccountId, S::Name],
            ))
            .await?;

        use WebhookSubscriptions as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .col(uuid(T::Id).primary_key())
                    .col(uuid(T::SubscriberId))
                    .col(uuid(T::AccountId))
                    .col(string_len(T::EventType, 64))
                    .col(text(T::UserIds))
                    .col(text(T::CourseIds))
                    .col(text(T::CourseItemIds))
                    .col(timestamp_with_time_zone(T::CreatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_webhook_subscriptions_subscriber_id",
                        (T::Table, T::SubscriberId),
                        (S::Table, S::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(unique_index(
                "uq_webhook_subscriptions_subscriber_id_event_type",
                T::Table,
                [T::SubscriberId, T::EventType],
            ))
            .await?;
        manager
            .create_index(index(
                "idx_webhook_subscriptions_account_id_event_type",
                T::Table,
                [T::AccountId, T::EventType],
            ))
            .await?;

        use WebhookDeliveries as D;
        manager
            .create_table(
                Table::create()
                    .table(D::Table)
                    .col(uuid(D::Id).primary_key())
                    .col(uuid(D::SubscriberId))
                    .col(string_len(D::EventType, 64))
                    .col(text(D::Body))
                    .col(integer(D::Attempts).default(0))
                    .col(integer(D::Events))
                    .col(timestamp_with_time_zone(D::CreatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_webhook_deliveries_subscriber_id",
                        (D::Table, D::SubscriberId),
                        (S::Table, S::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                "idx_webhook_deliveries_subscriber_id",
                D::Table,
                [D::SubscriberId],
            ))
            .await?;

        use WebhookEvents as E;
        manager
            .create_table(
                Table::create()
                    .table(E::Table)
                    .col(uuid(E::Id).primary_key())
                    .col(uuid(E::AccountId))
                    .col(uuid(E::SubscriberId))
                    .col(big_integer(E::Seq))
                    .col(string_len(E::EventType, 64))
                    .col(text(E::Payload))
                    .col(uuid_null(E::DeliveryId))
                    .col(timestamp_with_time_zone(E::CreatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_webhook_events_subscriber_id",
                        (E::Table, E::SubscriberId),
                        (S::Table, S::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(unique_index(
                "uq_webhook_events_subscriber_id_seq",
                E::Table,
                [E::SubscriberId, E::Seq],
            ))
            .await?;
        manager
            .create_index(index(
                "idx_webhook_events_delivery_id",
                E::Table,
                [E::DeliveryId],
            ))
            .await?;
        manager
            .create_index(index(
                "idx_webhook_events_created_at",
                E::Table,
                [E::CreatedAt],
            ))
            .await?;

        use WebhookEventCounters as C;
        manager
            .create_table(
                Table::create()
                    .table(C::Table)
                    .col(uuid(C::AccountId).primary_key())
                    .col(big_integer(C::LastSeq))
                    .foreign_key(&mut foreign_key(
                        "fk_webhook_event_counters_account_id",
                        (C::Table, C::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            WebhookEventCounters::Table.into_iden(),
            WebhookEvents::Table.into_iden(),
            WebhookDeliveries::Table.into_iden(),
            WebhookSubscriptions::Table.into_iden(),
            WebhookSubscribers::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
