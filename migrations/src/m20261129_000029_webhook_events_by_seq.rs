//! Webhook events are keyed by their subscriber and number, and a delivery names the numbers
//! it carries instead of its events naming it.
//!
//! A recording write inserted each event into five B-trees on SQLite (the rows, the `id`
//! key, `(subscriber_id, seq)`, `delivery_id`, `created_at`), each a page written to the log
//! at its commit: about 50 µs of the 65 µs an event added to a write. Forming a delivery then
//! updated every event it took (on PostgreSQL a new row version and four index entries per
//! event). Now the rows are stored in `(subscriber_id, seq)` order (SQLite `WITHOUT ROWID`;
//! on PostgreSQL the existing unique index becomes the primary key), the `id` and
//! `delivery_id` columns go, and `webhook_deliveries` keeps `first_seq` and `last_seq`: a
//! delivery carries consecutive events of one subscriber, and at most one delivery of a
//! subscriber exists at a time, so its events are exactly those numbers.

use sea_orm_migration::{prelude::*, sea_orm::DbBackend};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The numbers every delivery in flight carries, read from its events before they lose
/// `delivery_id`.
const RANGES: &str = r#"
UPDATE "webhook_deliveries" SET
    "first_seq" = COALESCE((SELECT MIN("e"."seq") FROM "webhook_events" AS "e"
                            WHERE "e"."delivery_id" = "webhook_deliveries"."id"), 0),
    "last_seq" = COALESCE((SELECT MAX("e"."seq") FROM "webhook_events" AS "e"
                           WHERE "e"."delivery_id" = "webhook_deliveries"."id"), 0)"#;

const SQLITE_UP: [&str; 8] = [
    r#"ALTER TABLE "webhook_deliveries" ADD COLUMN "first_seq" bigint NOT NULL DEFAULT 0"#,
    r#"ALTER TABLE "webhook_deliveries" ADD COLUMN "last_seq" bigint NOT NULL DEFAULT 0"#,
    RANGES,
    r#"CREATE TABLE "webhook_events_by_seq" (
        "subscriber_id" uuid_text NOT NULL,
        "seq" bigint NOT NULL,
        "account_id" uuid_text NOT NULL,
        "event_type" varchar(64) NOT NULL,
        "payload" text NOT NULL,
        "created_at" timestamp_with_timezone_text NOT NULL,
        PRIMARY KEY ("subscriber_id", "seq"),
        FOREIGN KEY ("subscriber_id") REFERENCES "webhook_subscribers" ("id")
            ON DELETE CASCADE ON UPDATE RESTRICT
    ) WITHOUT ROWID"#,
    r#"INSERT INTO "webhook_events_by_seq"
           ("subscriber_id", "seq", "account_id", "event_type", "payload", "created_at")
       SELECT "subscriber_id", "seq", "account_id", "event_type", "payload", "created_at"
       FROM "webhook_events""#,
    r#"DROP TABLE "webhook_events""#,
    r#"ALTER TABLE "webhook_events_by_seq" RENAME TO "webhook_events""#,
    r#"CREATE INDEX "idx_webhook_events_created_at" ON "webhook_events" ("created_at")"#,
];

/// A version 4 UUID as text, from SQLite's random bytes (the old rows' `id`, when going back).
const SQLITE_NEW_ID: &str = "lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) \
     || '-4' || substr(lower(hex(randomblob(2))), 2) || '-8' \
     || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))";

/// The delivery carrying event `"e"`, if one does (going back).
const CARRIER: &str = r#"(SELECT "d"."id" FROM "webhook_deliveries" AS "d"
    WHERE "d"."subscriber_id" = "e"."subscriber_id"
      AND "e"."seq" BETWEEN "d"."first_seq" AND "d"."last_seq")"#;

const POSTGRES_UP: [&str; 5] = [
    r#"ALTER TABLE "webhook_deliveries"
           ADD COLUMN "first_seq" bigint NOT NULL DEFAULT 0,
           ADD COLUMN "last_seq" bigint NOT NULL DEFAULT 0"#,
    RANGES,
    r#"ALTER TABLE "webhook_events" DROP CONSTRAINT "webhook_events_pkey""#,
    // Drops `idx_webhook_events_delivery_id` with its column.
    r#"ALTER TABLE "webhook_events" DROP COLUMN "id", DROP COLUMN "delivery_id""#,
    r#"ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_pkey"
           PRIMARY KEY USING INDEX "uq_webhook_events_subscriber_id_seq""#,
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    // One transaction on one connection: no pooled SQLite connection sees the table half
    // rebuilt, and a failure leaves the old one in place.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let statements: &[&str] = match manager.get_database_backend() {
            DbBackend::Postgres => &POSTGRES_UP,
            _ => &SQLITE_UP,
        };
        for statement in statements {
            db.execute_unprepared(statement).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let statements = match manager.get_database_backend() {
            DbBackend::Postgres => vec![
                r#"ALTER TABLE "webhook_events" ADD COLUMN "id" uuid, ADD COLUMN "delivery_id" uuid"#
                    .to_owned(),
                format!(
                    r#"UPDATE "webhook_events" AS "e" SET "id" = gen_random_uuid(), "delivery_id" = {CARRIER}"#
                ),
                r#"ALTER TABLE "webhook_events" ALTER COLUMN "id" SET NOT NULL"#.to_owned(),
                r#"ALTER TABLE "webhook_events" DROP CONSTRAINT "webhook_events_pkey""#.to_owned(),
                r#"CREATE UNIQUE INDEX "uq_webhook_events_subscriber_id_seq" ON "webhook_events" ("subscriber_id", "seq")"#
                    .to_owned(),
                r#"ALTER TABLE "webhook_events" ADD PRIMARY KEY ("id")"#.to_owned(),
                r#"CREATE INDEX "idx_webhook_events_delivery_id" ON "webhook_events" ("delivery_id")"#
                    .to_owned(),
                r#"ALTER TABLE "webhook_deliveries" DROP COLUMN "first_seq", DROP COLUMN "last_seq""#
                    .to_owned(),
            ],
            _ => vec![
                r#"CREATE TABLE "webhook_events_by_id" (
                    "id" uuid_text NOT NULL PRIMARY KEY,
                    "account_id" uuid_text NOT NULL,
                    "subscriber_id" uuid_text NOT NULL,
                    "seq" integer NOT NULL,
                    "event_type" varchar(64) NOT NULL,
                    "payload" text NOT NULL,
                    "delivery_id" uuid_text NULL,
                    "created_at" timestamp_with_timezone_text NOT NULL,
                    FOREIGN KEY ("subscriber_id") REFERENCES "webhook_subscribers" ("id")
                        ON DELETE CASCADE ON UPDATE RESTRICT
                )"#
                .to_owned(),
                format!(
                    r#"INSERT INTO "webhook_events_by_id"
                           ("id", "account_id", "subscriber_id", "seq", "event_type", "payload",
                            "delivery_id", "created_at")
                       SELECT {SQLITE_NEW_ID}, "account_id", "subscriber_id", "seq", "event_type",
                              "payload", {CARRIER}, "created_at"
                       FROM "webhook_events" AS "e""#
                ),
                r#"DROP TABLE "webhook_events""#.to_owned(),
                r#"ALTER TABLE "webhook_events_by_id" RENAME TO "webhook_events""#.to_owned(),
                r#"CREATE UNIQUE INDEX "uq_webhook_events_subscriber_id_seq" ON "webhook_events" ("subscriber_id", "seq")"#
                    .to_owned(),
                r#"CREATE INDEX "idx_webhook_events_delivery_id" ON "webhook_events" ("delivery_id")"#
                    .to_owned(),
                r#"CREATE INDEX "idx_webhook_events_created_at" ON "webhook_events" ("created_at")"#
                    .to_owned(),
                r#"ALTER TABLE "webhook_deliveries" DROP COLUMN "first_seq""#.to_owned(),
                r#"ALTER TABLE "webhook_deliveries" DROP COLUMN "last_seq""#.to_owned(),
            ],
        };
        for statement in &statements {
            db.execute_unprepared(statement).await?;
        }
        Ok(())
    }
}
