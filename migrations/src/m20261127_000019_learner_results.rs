//! Learner results (results.md): one result per enrollment, and the tasks the recording
//! operations answer with.
//!
//! A result keeps both layers, the tracked result and the administrator's status, and
//! besides them the *effective* status and completion date that reads filter on. Those two
//! are derived, but stored: a filter on them must be an index range, and an expression over
//! two layers is not one on both backends. Every write sets the three together.
//!
//! Scores are stored in hundredths (an integer): the contract keeps at most two decimals, and
//! integers compare exactly, so a repeated recording is recognised as changing nothing.
//!
//! Existing enrollments get their result (`not_started`) here, and those without an access
//! date get their creation time as one, so that the access window is a range of
//! `(account_id, access_at, id)` with no expression over two columns.

use sea_orm_migration::{prelude::*, schema::*};

use crate::{
    m20261122_000001_accounts_and_departments::Accounts,
    m20261122_000002_users_and_roles::Users,
    schema::{foreign_key, index},
};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Enrollments {
    Table,
    Id,
    AccountId,
    CreatedAt,
    AccessAt,
    DueAt,
}

#[derive(DeriveIden)]
enum LearnerResults {
    Table,
    EnrollmentId,
    AccountId,
    Status,
    Progress,
    AwardedScore,
    PassingScore,
    TimeSpent,
    ViewsCount,
    CompletedAt,
    LastViewedAt,
    AdminStatus,
    AdminCompletedAt,
    AdminScore,
    EffectiveStatus,
    EffectiveCompletedAt,
}

#[derive(DeriveIden)]
enum ResultTasks {
    Table,
    Id,
    AccountId,
    StartedBy,
    Status,
    CreatedAt,
}

const ENROLLMENT_INDEXES: [(&str, Enrollments); 2] = [
    (
        "idx_enrollments_account_id_access_at_id",
        Enrollments::AccessAt,
    ),
    ("idx_enrollments_account_id_due_at_id", Enrollments::DueAt),
];

const RESULT_ACCOUNT: &str = "idx_learner_results_account_id_enrollment_id";
const RESULT_STATUS: &str = "idx_learner_results_account_id_effective_status_enrollment_id";
const RESULT_COMPLETED: &str = "idx_learner_results_account_effective_completed_at_enrollment";
const TASK_ACCOUNT: &str = "idx_result_tasks_account_id_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(LearnerResults::Table)
                    .col(uuid(LearnerResults::EnrollmentId).primary_key())
                    .col(uuid(LearnerResults::AccountId))
                    .col(string_len(LearnerResults::Status, 16).default("not_started"))
                    .col(integer(LearnerResults::Progress).default(0))
                    .col(integer(LearnerResults::AwardedScore).default(0))
                    .col(integer(LearnerResults::PassingScore).default(0))
                    .col(big_integer(LearnerResults::TimeSpent).default(0i64))
                    .col(big_integer(LearnerResults::ViewsCount).default(0i64))
                    .col(timestamp_with_time_zone_null(LearnerResults::CompletedAt))
                    .col(timestamp_with_time_zone_null(LearnerResults::LastViewedAt))
                    .col(string_len_null(LearnerResults::AdminStatus, 16))
                    .col(timestamp_with_time_zone_null(
                        LearnerResults::AdminCompletedAt,
                    ))
                    .col(integer_null(LearnerResults::AdminScore))
                    .col(string_len(LearnerResults::EffectiveStatus, 16).default("not_started"))
                    .col(timestamp_with_time_zone_null(
                        LearnerResults::EffectiveCompletedAt,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_learner_results_enrollment_id",
                        (LearnerResults::Table, LearnerResults::EnrollmentId),
                        (Enrollments::Table, Enrollments::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_learner_results_account_id",
                        (LearnerResults::Table, LearnerResults::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .take(),
            )
            .await?;
        for (name, columns) in [
            (
                RESULT_ACCOUNT,
                vec![LearnerResults::AccountId, LearnerResults::EnrollmentId],
            ),
            (
                RESULT_STATUS,
                vec![
                    LearnerResults::AccountId,
                    LearnerResults::EffectiveStatus,
                    LearnerResults::EnrollmentId,
                ],
            ),
            (
                RESULT_COMPLETED,
                vec![
                    LearnerResults::AccountId,
                    LearnerResults::EffectiveCompletedAt,
                    LearnerResults::EnrollmentId,
                ],
            ),
        ] {
            manager
                .create_index(index(name, LearnerResults::Table, columns))
                .await?;
        }

        manager
            .exec_stmt(
                Query::update()
                    .table(Enrollments::Table)
                    .value(Enrollments::AccessAt, Expr::col(Enrollments::CreatedAt))
                    .and_where(Expr::col(Enrollments::AccessAt).is_null())
                    .to_owned(),
            )
            .await?;
        for (name, column) in ENROLLMENT_INDEXES {
            manager
                .create_index(index(
                    name,
                    Enrollments::Table,
                    [
                        Enrollments::AccountId.into_iden(),
                        column.into_iden(),
                        Enrollments::Id.into_iden(),
                    ],
                ))
                .await?;
        }
        manager
            .exec_stmt(
                Query::insert()
                    .into_table(LearnerResults::Table)
                    .columns([LearnerResults::EnrollmentId, LearnerResults::AccountId])
                    .select_from(
                        Query::select()
                            .columns([Enrollments::Id, Enrollments::AccountId])
                            .from(Enrollments::Table)
                            .to_owned(),
                    )
                    .map_err(|err| DbErr::Migration(err.to_string()))?
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(ResultTasks::Table)
                    .col(big_integer(ResultTasks::Id).auto_increment().primary_key())
                    .col(uuid(ResultTasks::AccountId))
                    .col(uuid(ResultTasks::StartedBy))
                    .col(string_len(ResultTasks::Status, 16))
                    .col(timestamp_with_time_zone(ResultTasks::CreatedAt))
                    .foreign_key(&mut foreign_key(
                        "fk_result_tasks_account_id",
                        (ResultTasks::Table, ResultTasks::AccountId),
                        (Accounts::Table, Accounts::Id),
                        ForeignKeyAction::Restrict,
                    ))
                    .foreign_key(&mut foreign_key(
                        "fk_result_tasks_started_by",
                        (ResultTasks::Table, ResultTasks::StartedBy),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index(
                TASK_ACCOUNT,
                ResultTasks::Table,
                [ResultTasks::AccountId, ResultTasks::Id],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ResultTasks::Table).to_owned())
            .await?;
        for (name, _) in ENROLLMENT_INDEXES {
            manager
                .drop_index(
                    Index::drop()
                        .name(name)
                        .table(Enrollments::Table)
                        .to_owned(),
                )
                .await?;
        }
        // The access dates written by `up` stay: they are what the read answered before.
        manager
            .drop_table(Table::drop().table(LearnerResults::Table).to_owned())
            .await
    }
}
