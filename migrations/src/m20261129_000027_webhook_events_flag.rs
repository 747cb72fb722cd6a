//! A subscriber's stored events are no longer counted by the writes that record them.
//! `pending_events` made every recording write update its subscribers' rows; a flag,
//! `has_events`, is raised only by the first event of a backlog and lowered by the dispatcher
//! that finds none left, and the count is taken from `webhook_events` when asked.
//! `flags_lowered`, on the account's counter row, is the number of times a dispatcher lowered
//! one of its flags: a PostgreSQL writer compares it to the value its snapshot holds to know
//! whether a flag it sees raised may have been lowered since (`service::webhooks::outbox`).
//! The poll finds flagged subscribers on a partial index of them.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const FLAGGED: &str = "idx_webhook_subscribers_has_events";
const PENDING: &str = "idx_webhook_subscribers_pending_events";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    // One transaction on one connection: no pooled SQLite connection sees the table half
    // changed, and a failure leaves the count in place.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for statement in [
            r#"ALTER TABLE "webhook_subscribers" ADD COLUMN "has_events" boolean NOT NULL DEFAULT FALSE"#,
            r#"UPDATE "webhook_subscribers" SET "has_events" = TRUE WHERE EXISTS
                   (SELECT 1 FROM "webhook_events" AS "e" WHERE "e"."subscriber_id" = "webhook_subscribers"."id")"#,
            &format!(r#"DROP INDEX "{PENDING}""#),
            r#"ALTER TABLE "webhook_subscribers" DROP COLUMN "pending_events""#,
            &format!(
                r#"CREATE INDEX "{FLAGGED}" ON "webhook_subscribers" ("id") WHERE "has_events""#
            ),
            r#"ALTER TABLE "webhook_event_counters" ADD COLUMN "flags_lowered" bigint NOT NULL DEFAULT 0"#,
        ] {
            db.execute_unprepared(statement).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for statement in [
            r#"ALTER TABLE "webhook_event_counters" DROP COLUMN "flags_lowered""#,
            &format!(r#"DROP INDEX "{FLAGGED}""#),
            r#"ALTER TABLE "webhook_subscribers" ADD COLUMN "pending_events" bigint NOT NULL DEFAULT 0"#,
            r#"UPDATE "webhook_subscribers" SET "pending_events" =
                   (SELECT COUNT(*) FROM "webhook_events" AS "e" WHERE "e"."subscriber_id" = "webhook_subscribers"."id")"#,
            &format!(r#"CREATE INDEX "{PENDING}" ON "webhook_subscribers" ("pending_events")"#),
            r#"ALTER TABLE "webhook_subscribers" DROP COLUMN "has_events""#,
        ] {
            db.execute_unprepared(statement).await?;
        }
        Ok(())
    }
}
