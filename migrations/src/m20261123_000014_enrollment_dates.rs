//! Enrollment dates (neighbours.md section 5) and the indexes the enrollment and content
//! listings walk in id order.
//!
//! `access_at` and `due_at` are nullable so that existing rows need no backfill: an
//! enrollment without an access date was open from its creation, so the read answers
//! `created_at` for it; no due date means none was ever set. `lock_after_due` defaults to
//! false, which is what every existing enrollment meant.
//!
//! `(x, id)` replaces `(x)` for each walked column: it serves every lookup the narrow one
//! did, and lets `x = ? AND id > ? ORDER BY id LIMIT n` be one range scan with no sort.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema::index;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Enrollments {
    Table,
    Id,
    AccountId,
    LearnerId,
    ContentItemId,
    AccessAt,
    DueAt,
    LockAfterDue,
}

#[derive(DeriveIden)]
enum ContentItems {
    Table,
    Id,
    AccountId,
}

/// (new index, the narrow one it replaces, or none)
const ENROLLMENT_INDEXES: [(&str, Option<&str>); 3] = [
    ("idx_enrollments_account_id_id", None),
    (
        "idx_enrollments_learner_id_id",
        Some("idx_enrollments_learner_id"),
    ),
    (
        "idx_enrollments_content_item_id_id",
        Some("idx_enrollments_content_item_id"),
    ),
];
const CONTENT_ACCOUNT_ID_ID: &str = "idx_content_items_account_id_id";
const CONTENT_ACCOUNT_ID: &str = "idx_content_items_account_id";

fn enrollment_index(name: &str) -> IndexCreateStatement {
    let first = match name {
        "idx_enrollments_account_id_id" => Enrollments::AccountId,
        "idx_enrollments_learner_id_id" | "idx_enrollments_learner_id" => Enrollments::LearnerId,
        _ => Enrollments::ContentItemId,
    };
    if name.ends_with("_id_id") {
        index(name, Enrollments::Table, [first, Enrollments::Id])
    } else {
        index(name, Enrollments::Table, [first])
    }
}

fn drop(name: &str, table: impl IntoIden) -> IndexDropStatement {
    Index::drop().name(name).table(table).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters a table one change at a time.
        for column in [
            timestamp_with_time_zone_null(Enrollments::AccessAt),
            timestamp_with_time_zone_null(Enrollments::DueAt),
            boolean(Enrollments::LockAfterDue).default(false).take(),
        ] {
            let mut column = column;
            manager
                .alter_table(
                    Table::alter()
                        .table(Enrollments::Table)
                        .add_column(&mut column)
                        .take(),
                )
                .await?;
        }
        for (name, replaces) in ENROLLMENT_INDEXES {
            manager.create_index(enrollment_index(name)).await?;
            if let Some(old) = replaces {
                manager.drop_index(drop(old, Enrollments::Table)).await?;
            }
        }
        manager
            .create_index(index(
                CONTENT_ACCOUNT_ID_ID,
                ContentItems::Table,
                [ContentItems::AccountId, ContentItems::Id],
            ))
            .await?;
        manager
            .drop_index(drop(CONTENT_ACCOUNT_ID, ContentItems::Table))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(index(
                CONTENT_ACCOUNT_ID,
                ContentItems::Table,
                [ContentItems::AccountId],
            ))
            .await?;
        manager
            .drop_index(drop(CONTENT_ACCOUNT_ID_ID, ContentItems::Table))
            .await?;
        for (name, replaces) in ENROLLMENT_INDEXES {
            if let Some(old) = replaces {
                manager.create_index(enrollment_index(old)).await?;
            }
            manager.drop_index(drop(name, Enrollments::Table)).await?;
        }
        for column in [
            Enrollments::LockAfterDue,
            Enrollments::DueAt,
            Enrollments::AccessAt,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Enrollments::Table)
                        .drop_column(column)
                        .take(),
                )
                .await?;
        }
        Ok(())
    }
}
