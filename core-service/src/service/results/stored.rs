//! A result as stored: its two layers in, its row (with the effective status and date) out,
//! and the set-based reads and writes every recording shares.

use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DbBackend, EntityTrait as _, FromQueryResult as _,
    QueryFilter as _, Statement, Value, prelude::Uuid,
};
use serde_json::json;

use crate::{
    db::{
        bulk, pg_array,
        rows::{self, Table},
    },
    domain::results::{CompletionStatus, Score, TrackedResult},
    entities::{enrollment, learner_result},
    error::{ServiceError, ServiceResult},
};

/// The administrator's layer: a status, its completion date when finished, a score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdminStatus {
    pub status: CompletionStatus,
    pub completed_at: Option<DateTime<Utc>>,
    pub score: Option<Score>,
}

/// Both layers of one result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layers {
    pub tracked: TrackedResult,
    pub admin: Option<AdminStatus>,
}

fn status(raw: &str) -> ServiceResult<CompletionStatus> {
    CompletionStatus::from_name(raw).ok_or_else(|| {
        ServiceError::Unexpected(anyhow::anyhow!("a stored result has the status {raw:?}"))
    })
}

impl Layers {
    pub(super) fn of(row: &learner_result::Model) -> ServiceResult<Layers> {
        Ok(Layers {
            tracked: TrackedResult {
                status: status(&row.status)?,
                progress: row.progress,
                awarded_score: Score::from_hundredths(row.awarded_score),
                passing_score: Score::from_hundredths(row.passing_score),
                time_spent: row.time_spent,
                views_count: row.views_count,
                completed_at: row.completed_at,
                last_viewed_at: row.last_viewed_at,
            },
            admin: row
                .admin_status
                .as_deref()
                .map(|raw| {
                    Ok::<_, ServiceError>(AdminStatus {
                        status: status(raw)?,
                        completed_at: row.admin_completed_at,
                        score: row.admin_score.map(Score::from_hundredths),
                    })
                })
                .transpose()?,
        })
    }

    /// The row of these layers, with the effective status and completion date derived
    /// (results.md section 1).
    pub(super) fn row(&self, enrollment_id: Uuid, account_id: Uuid) -> learner_result::Model {
        let t = &self.tracked;
        let (effective_status, effective_completed_at) = match &self.admin {
            Some(admin) => (
                admin.status,
                admin.completed_at.filter(|_| admin.status.is_finished()),
            ),
            None => (t.status, t.completed_at),
        };
        learner_result::Model {
            enrollment_id,
            account_id,
            status: t.status.as_str().to_owned(),
            progress: t.progress,
            awarded_score: t.awarded_score.hundredths(),
            passing_score: t.passing_score.hundredths(),
            time_spent: t.time_spent,
            views_count: t.views_count,
            completed_at: t.completed_at,
            last_viewed_at: t.last_viewed_at,
            admin_status: self.admin.map(|a| a.status.as_str().to_owned()),
            admin_completed_at: self.admin.and_then(|a| a.completed_at),
            admin_score: self.admin.and_then(|a| a.score).map(Score::hundredths),
            effective_status: effective_status.as_str().to_owned(),
            effective_completed_at,
        }
    }
}

/// The stored values of both layers, as the audit record shows them.
pub(super) fn audit_values(row: &learner_result::Model) -> serde_json::Value {
    let date = |at: Option<DateTime<Utc>>| at.map(crate::domain::results::format_date);
    let score = |hundredths: i32| Score::from_hundredths(hundredths).as_f64();
    json!({
        "completionStatus": row.status,
        "progress": row.progress,
        "awardedScore": score(row.awarded_score),
        "passingScore": score(row.passing_score),
        "timeSpent": row.time_spent,
        "viewsCount": row.views_count,
        "completionDate": date(row.completed_at),
        "lastViewDate": date(row.last_viewed_at),
        "administratorStatus": row.admin_status,
        "administratorCompletionDate": date(row.admin_completed_at),
        "administratorScore": row.admin_score.map(score),
    })
}

/// The enrollments of `account_id` among `ids` (any order).
pub(super) async fn enrollments(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    ids: &[Uuid],
) -> ServiceResult<Vec<enrollment::Model>> {
    if conn.get_database_backend() == DbBackend::Postgres {
        let statement = Statement::from_sql_and_values(
            DbBackend::Postgres,
            r#"SELECT * FROM "enrollments" WHERE "account_id" = $1 AND "id" = ANY((SELECT $2::text::uuid[])::uuid[])"#,
            [account_id.into(), pg_array::uuids(ids).into()],
        );
        return Ok(enrollment::Model::find_by_statement(statement)
            .all(conn)
            .await?);
    }
    let mut found = Vec::with_capacity(ids.len());
    for chunk in bulk::in_chunks(ids) {
        found.extend(
            enrollment::Entity::find()
                .filter(enrollment::Column::AccountId.eq(account_id))
                .filter(enrollment::Column::Id.is_in(chunk.iter().copied()))
                .all(conn)
                .await?,
        );
    }
    Ok(found)
}

/// The results of `account_id` among the enrollments `ids` (any order).
pub(super) async fn results(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    ids: &[Uuid],
) -> ServiceResult<Vec<learner_result::Model>> {
    if conn.get_database_backend() == DbBackend::Postgres {
        let statement = Statement::from_sql_and_values(
            DbBackend::Postgres,
            r#"SELECT * FROM "learner_results" WHERE "account_id" = $1 AND "enrollment_id" = ANY((SELECT $2::text::uuid[])::uuid[])"#,
            [account_id.into(), pg_array::uuids(ids).into()],
        );
        return Ok(learner_result::Model::find_by_statement(statement)
            .all(conn)
            .await?);
    }
    let mut found = Vec::with_capacity(ids.len());
    for chunk in bulk::in_chunks(ids) {
        found.extend(
            learner_result::Entity::find()
                .filter(learner_result::Column::AccountId.eq(account_id))
                .filter(learner_result::Column::EnrollmentId.is_in(chunk.iter().copied()))
                .all(conn)
                .await?,
        );
    }
    Ok(found)
}

/// Every column of `learner_results`, for rewriting changed rows whole.
pub(crate) const RESULTS: Table<15> = Table {
    name: "learner_results",
    columns: [
        "enrollment_id",
        "account_id",
        "status",
        "progress",
        "awarded_score",
        "passing_score",
        "time_spent",
        "views_count",
        "completed_at",
        "last_viewed_at",
        "admin_status",
        "admin_completed_at",
        "admin_score",
        "effective_status",
        "effective_completed_at",
    ],
    pg_types: [
        "uuid",
        "uuid",
        "text",
        "int4",
        "int4",
        "int4",
        "int8",
        "int8",
        "timestamptz",
        "timestamptz",
        "text",
        "timestamptz",
        "int4",
        "text",
        "timestamptz",
    ],
};

pub(crate) fn values(row: &learner_result::Model) -> [Value; 15] {
    [
        Value::from(row.enrollment_id),
        Value::from(row.account_id),
        Value::from(row.status.clone()),
        Value::from(row.progress),
        Value::from(row.awarded_score),
        Value::from(row.passing_score),
        Value::from(row.time_spent),
        Value::from(row.views_count),
        Value::from(row.completed_at),
        Value::from(row.last_viewed_at),
        Value::from(row.admin_status.clone()),
        Value::from(row.admin_completed_at),
        Value::from(row.admin_score),
        Value::from(row.effective_status.clone()),
        Value::from(row.effective_completed_at),
    ]
}

/// Rewrites the stored `rows` whole, by their key (enrollment, account): a few statements
/// for any number of rows (never one per row), and an index whose columns kept their values
/// (the keys' always) is not touched.
pub(super) async fn replace(
    conn: &impl ConnectionTrait,
    rows: &[learner_result::Model],
) -> ServiceResult<()> {
    rows::update_rows(conn, &RESULTS, 2, rows.iter().map(values)).await?;
    Ok(())
}

/// The untouched results of new enrollments: their key and account; every other column
/// takes its default.
const NEW_RESULTS: Table<2> = Table {
    name: "learner_results",
    columns: ["enrollment_id", "account_id"],
    pg_types: ["uuid", "uuid"],
};

/// Writes the untouched result of each of `enrollment_ids` of `account_id`.
pub(crate) async fn create_untouched(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    enrollment_ids: impl IntoIterator<Item = Uuid>,
) -> ServiceResult<()> {
    let rows = enrollment_ids
        .into_iter()
        .map(|id| [Value::from(id), Value::from(account_id)]);
    rows::insert_rows(conn, &NEW_RESULTS, rows, &mut |_| {}).await?;
    Ok(())
}

/// The row values of a result holding only `tracked` (no administrator's status), as the
/// import writes it.
pub(crate) fn tracked_values(
    enrollment_id: Uuid,
    account_id: Uuid,
    tracked: &TrackedResult,
) -> [Value; 15] {
    values(
        &Layers {
            tracked: *tracked,
            admin: None,
        }
        .row(enrollment_id, account_id),
    )
}
