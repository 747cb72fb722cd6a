//! Scheduled deactivation and termination (provisioning.md section 6): the day each change is
//! due, stored on the user, NULL when none is scheduled (every existing user).
//!
//! Each date is indexed with the user id, `(date, id)`: the scheduler walks the due rows of
//! all accounts in that order (`date <= today`, resuming after the last one it saw), so a pass
//! reads only due rows however many users there are, and a row it must leave for later (the
//! last active owner) never holds back the ones after it.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema::index;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Users {
    Table,
    Id,
    ScheduledDeactivationDate,
    ScheduledTerminationDate,
}

const DEACTIVATION: &str = "idx_users_scheduled_deactivation_date_id";
const TERMINATION: &str = "idx_users_scheduled_termination_date_id";

/// (index, its date column)
const DATES: [(&str, Users); 2] = [
    (DEACTIVATION, Users::ScheduledDeactivationDate),
    (TERMINATION, Users::ScheduledTerminationDate),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, column) in DATES {
            // One column per statement: SQLite adds one at a time.
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .add_column(date_null(column))
                        .take(),
                )
                .await?;
            manager
                .create_index(index(name, Users::Table, [column, Users::Id]))
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, column) in DATES {
            manager
                .drop_index(Index::drop().name(name).table(Users::Table).to_owned())
                .await?;
            manager
                .alter_table(
                    Table::alter()
                        .table(Users::Table)
                        .drop_column(column)
                        .take(),
                )
                .await?;
        }
        Ok(())
    }
}
