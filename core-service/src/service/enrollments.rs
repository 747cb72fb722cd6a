//! Enrollments: delete them (interface 4.5; contract section 7), all or nothing; enroll
//! learners in courses ([`enroll`], for `POST /enrollment` and the directory's
//! `CreateEnrollment` alike); list them ([`list`]).

mod enroll;
mod list;

pub use enroll::{
    Due, MAX_DUE_PERIOD_HOURS, MAX_ENROLLMENT_PAIRS, NewEnrollments, PairFields, RawEnrollments,
    enroll_learners,
};
pub use list::{
    EnrollmentFilter, EnrollmentList, EnrollmentView, list_enrollments, stream_enrollments,
};

use std::collections::BTreeSet;

use sea_orm::{
    ColumnTrait as _, ConnectionTrait as _, DatabaseConnection, DatabaseTransaction, DbBackend,
    EntityTrait as _, FromQueryResult as _, QueryFilter as _, Statement, prelude::Uuid,
};
use serde_json::json;

use super::{
    Parsed,
    audit::{AuditAction, Change},
    lookups, write,
};
use crate::{
    access::{Caller, Grant, Operation},
    db::{bulk, pg_array},
    domain::ids::IdList,
    entities::enrollment,
    error::{ServiceError, ServiceResult},
};

/// Deletes the named enrollments of the caller's account and returns how many went.
/// Ids naming nothing are ignored (a retry still succeeds); if any named enrollment
/// belongs to a learner outside a scoped caller's scope, nothing is deleted.
pub async fn delete_enrollments(
    db: &DatabaseConnection,
    caller: &Caller,
    enrollment_ids: Parsed<IdList>,
) -> ServiceResult<u64> {
    let grant = caller.grant(Operation::DeleteEnrollments)?;
    let ids = enrollment_ids?.into_inner();
    write(db, caller, async |w| {
        let txn = w.txn();
        // Deleted first and checked after: a refusal rolls the transaction back, so the
        // request stays all or nothing, and the common case is one statement.
        let found = delete_returning(txn, caller.account_id, &ids).await?;
        if found.is_empty() {
            return Ok(0);
        }
        if grant == Grant::InScope {
            let learners: BTreeSet<Uuid> = found.iter().map(|e| e.learner_id).collect();
            let learners: Vec<Uuid> = learners.into_iter().collect();
            let outside =
                lookups::users_outside_scope(txn, &caller.managed_department_ids, &learners).await?;
            if !outside.is_empty() {
                return Err(ServiceError::denied(format!(
                    "{} of the enrollments belong to learners outside the departments you manage; nothing was deleted.",
                    found.iter().filter(|e| outside.contains(&e.learner_id)).count()
                )));
            }
        }
        let deleted = found.len() as u64;
        w.record_all(found.into_iter().map(|e| Change {
            action: AuditAction::EnrollmentDeleted,
            entity_id: e.id,
            before: Some(json!({
                "learnerId": e.learner_id,
                "contentItemId": e.content_item_id,
            })),
            after: None,
        }));
        Ok(deleted)
    })
    .await
}

/// Deletes the enrollments of `account_id` among `ids` and returns them.
///
/// PostgreSQL gets the ids as one array: a statement with 10,000 parameters costs it more to
/// parse, bind and plan than to delete the rows. SQLite takes them as `IN (…)` lists.
async fn delete_returning(
    txn: &DatabaseTransaction,
    account_id: Uuid,
    ids: &[Uuid],
) -> ServiceResult<Vec<enrollment::Model>> {
    if txn.get_database_backend() == DbBackend::Postgres {
        let statement = Statement::from_sql_and_values(
            DbBackend::Postgres,
            r#"DELETE FROM "enrollments" WHERE "account_id" = $1 AND "id" = ANY((SELECT $2::text::uuid[])::uuid[]) RETURNING *"#,
            [account_id.into(), pg_array::uuids(ids).into()],
        );
        return Ok(enrollment::Model::find_by_statement(statement)
            .all(txn)
            .await?);
    }
    let mut found = Vec::with_capacity(ids.len());
    for chunk in bulk::in_chunks(ids) {
        found.extend(
            enrollment::Entity::delete_many()
                .filter(enrollment::Column::AccountId.eq(account_id))
                .filter(enrollment::Column::Id.is_in(chunk.iter().copied()))
                .exec_with_returning(txn)
                .await?,
        );
    }
    Ok(found)
}
