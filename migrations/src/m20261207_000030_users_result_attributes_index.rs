//! A learner's department and status read from one narrow index: `users (id)` with
//! `department_id`, `active` and `employment_ended` (PostgreSQL: `INCLUDE`d; SQLite: the
//! index's trailing columns).
//!
//! Every row of a results list joins its learner for exactly those three columns (the
//! `departmentIds` filter, the scope, `userStatuses`). Through the primary key each join also
//! visits the learner's table row, which is wide (names, hashes, profile) and, with 1,000
//! enrollments of scattered learners per page, a different page each time: on PostgreSQL a
//! page of 1,000 results read about 1,200 pages of `users` that had fallen out of the shared
//! buffers, and on SQLite each join was two B-tree descents instead of one. The narrow index
//! (about 5 MiB per 100,000 users) stays cached; PostgreSQL reads it without the table once
//! `VACUUM` (autovacuum) has marked the table's pages all-visible.

use sea_orm_migration::{prelude::*, sea_orm::DbBackend};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const NAME: &str = "idx_users_id_department_id_active_employment_ended";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let columns = match manager.get_database_backend() {
            DbBackend::Postgres => {
                r#""id") INCLUDE ("department_id", "active", "employment_ended""#
            }
            _ => r#""id", "department_id", "active", "employment_ended""#,
        };
        manager
            .get_connection()
            .execute_unprepared(&format!(r#"CREATE INDEX "{NAME}" ON "users" ({columns})"#))
            .await
            .map(drop)
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(&format!(r#"DROP INDEX "{NAME}""#))
            .await
            .map(drop)
    }
}
