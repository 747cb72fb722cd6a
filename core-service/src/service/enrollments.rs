//! Delete enrollments (interface 4.5; contract section 7): all or nothing.

use std::collections::BTreeSet;

use sea_orm::{
    ColumnTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _, prelude::Uuid,
};
use serde_json::json;

use super::scope;
use crate::{
    access::{Caller, Grant, Operation},
    db::{self, AuditAction, Change, bulk},
    domain::ids::{clip, parse_uuid},
    entities::enrollment,
    error::{ServiceError, ServiceResult},
};

pub const MAX_IDS: usize = 10_000;

/// Deletes the named enrollments of the caller's account and returns how many went.
/// Ids naming nothing are ignored (a retry still succeeds); if any named enrollment
/// belongs to a learner outside a scoped caller's scope, nothing is deleted.
pub async fn delete_enrollments(
    db: &DatabaseConnection,
    caller: &Caller,
    raw_ids: &[String],
) -> ServiceResult<u64> {
    let grant = caller.grant(Operation::DeleteEnrollments)?;
    if raw_ids.is_empty() {
        return Err(ServiceError::invalid(
            "enrollmentIds must contain at least one id.",
        ));
    }
    if raw_ids.len() > MAX_IDS {
        return Err(ServiceError::invalid(format!(
            "enrollmentIds must contain at most {MAX_IDS} ids; {} were given.",
            raw_ids.len()
        )));
    }
    let ids: BTreeSet<Uuid> = raw_ids
        .iter()
        .map(|raw| {
            parse_uuid(raw).ok_or_else(|| {
                ServiceError::invalid(format!(
                    "enrollmentIds: '{}' is not a valid identifier.",
                    clip(raw)
                ))
            })
        })
        .collect::<ServiceResult<_>>()?;
    let ids: Vec<Uuid> = ids.into_iter().collect();
    db::write(db, caller, async |w| {
        let txn = w.txn();
        let mut found = Vec::with_capacity(ids.len());
        for chunk in bulk::in_chunks(&ids) {
            found.extend(
                enrollment::Entity::find()
                    .filter(enrollment::Column::AccountId.eq(caller.account_id))
                    .filter(enrollment::Column::Id.is_in(chunk.iter().copied()))
                    .all(txn)
                    .await?,
            );
        }
        if found.is_empty() {
            return Ok(0);
        }
        if grant == Grant::InScope {
            let learners: BTreeSet<Uuid> = found.iter().map(|e| e.learner_id).collect();
            let learners: Vec<Uuid> = learners.into_iter().collect();
            let outside =
                scope::users_outside_scope(txn, &caller.managed_department_ids, &learners).await?;
            if !outside.is_empty() {
                return Err(ServiceError::denied(format!(
                    "{} of the enrollments belong to learners outside the departments you manage; nothing was deleted.",
                    found.iter().filter(|e| outside.contains(&e.learner_id)).count()
                )));
            }
        }
        let found_ids: Vec<Uuid> = found.iter().map(|e| e.id).collect();
        let mut deleted = 0;
        for chunk in bulk::in_chunks(&found_ids) {
            deleted += enrollment::Entity::delete_many()
                .filter(enrollment::Column::Id.is_in(chunk.iter().copied()))
                .exec(txn)
                .await?
                .rows_affected;
        }
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
