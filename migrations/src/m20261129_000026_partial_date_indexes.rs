//! The due-date index of enrollments and the completion-date index of results hold only the
//! rows that have the date. The date windows of the results list are their only readers, and
//! a window (`date >= ?`, `date <= ?`, or both) never matches a row without the date, which
//! both backends prove from the comparison, so the plans stay the same. Most enrollments have
//! no due date and every unfinished result has no completion date: those rows cost these
//! indexes nothing any more when they are written, imported or deleted, and a delete of
//! scattered ids touches fewer pages.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// (name, table, columns, the date)
const INDEXES: [(&str, &str, &str, &str); 2] = [
    (
        "idx_enrollments_account_id_due_at_id",
        "enrollments",
        r#""account_id", "due_at", "id""#,
        "due_at",
    ),
    (
        "idx_learner_results_account_effective_completed_at_enrollment",
        "learner_results",
        r#""account_id", "effective_completed_at", "enrollment_id""#,
        "effective_completed_at",
    ),
];

async fn rebuild(manager: &SchemaManager<'_>, partial: bool) -> Result<(), DbErr> {
    let db = manager.get_connection();
    for (name, table, columns, date) in INDEXES {
        db.execute_unprepared(&format!(r#"DROP INDEX "{name}""#))
            .await?;
        let only = if partial {
            format!(r#" WHERE "{date}" IS NOT NULL"#)
        } else {
            String::new()
        };
        db.execute_unprepared(&format!(
            r#"CREATE INDEX "{name}" ON "{table}" ({columns}){only}"#
        ))
        .await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    // Each index is dropped and made again under the same name: in one transaction, on one
    // connection, so no pooled connection sees the name half changed (on SQLite, migrations
    // otherwise run statement by statement on whichever connection the pool gives), and a
    // failure leaves the old index in place.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        rebuild(manager, true).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        rebuild(manager, false).await
    }
}
