//! A revision of each account's webhook subscriptions, on its event counter row: every
//! change of the account's subscriptions sets it to a new random value, so a core can keep
//! the subscriptions in memory and check them with the counter update a recording
//! transaction makes anyway, instead of reading them on every write.
//!
//! A random value rather than a count: one process may serve several databases (tests, a
//! restored copy) whose accounts share ids, and equal counts there would pass a stale copy as
//! current. 0 means "not known" and is never trusted.
//!
//! An account with subscriptions always has a counter row from now on (the core reads "no
//! counter row" as "no subscriptions"), so existing accounts with subscriptions and no row
//! get one here, and existing rows get a revision.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum WebhookEventCounters {
    Table,
    SubscriptionsRevision,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(WebhookEventCounters::Table)
                    .add_column(
                        ColumnDef::new(WebhookEventCounters::SubscriptionsRevision)
                            .big_integer()
                            .not_null()
                            .default(0),
                    )
                    .take(),
            )
            .await?;
        let db = manager.get_connection();
        // Non-zero: SQLite's random() may be 0 or negative, both fine except 0.
        let random = match manager.get_database_backend() {
            DatabaseBackend::Postgres => "(floor(random() * 9007199254740990) + 1)::bigint",
            _ => "(random() | 1)",
        };
        db.execute_unprepared(
            r#"INSERT INTO "webhook_event_counters" ("account_id", "last_seq", "subscriptions_revision")
               SELECT DISTINCT "account_id", 0, 0 FROM "webhook_subscriptions"
               WHERE "account_id" NOT IN (SELECT "account_id" FROM "webhook_event_counters")"#,
        )
        .await?;
        db.execute_unprepared(&format!(
            r#"UPDATE "webhook_event_counters" SET "subscriptions_revision" = {random}"#
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(WebhookEventCounters::Table)
                    .drop_column(WebhookEventCounters::SubscriptionsRevision)
                    .take(),
            )
            .await
    }
}
