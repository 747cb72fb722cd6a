//! Delete enrollments (interface 4.5; contract section 7): all or nothing.

use std::collections::BTreeSet;

use sea_orm::{
    ColumnTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _, prelude::Uuid,
};
use serde_json::json;

use super::{ID_CHUNK, audit, scope};
use crate::{
    access::{Caller, Grant, Operation},
    db::write_transaction,
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
    raw_ids: &[String],
) -> ServiceResult<u64> {
    let grant = caller.grant(Operation::DeleteEnrollments)?;
    let ids = IdList::parse_non_empty("enrollmentIds", raw_ids)?.into_inner();
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            let mut found = Vec::with_capacity(ids.len());
            for chunk in ids.chunks(ID_CHUNK) {
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
            for chunk in found_ids.chunks(ID_CHUNK) {
                deleted += enrollment::Entity::delete_many()
                    .filter(enrollment::Column::Id.is_in(chunk.iter().copied()))
                    .exec(txn)
                    .await?
                    .rows_affected;
            }
            let changes = found
                .into_iter()
                .map(|e| audit::Change {
                    action: "enrollment.delete",
                    entity_type: "enrollment",
                    entity_id: e.id,
                    before: Some(json!({
                        "learnerId": e.learner_id,
                        "contentItemId": e.content_item_id,
                    })),
                    after: None,
                })
                .collect();
            audit::record_all(txn, &caller, changes).await?;
            Ok(deleted)
        })
    })
    .await
}
