//! The results an administrator's request names (`POST /statistics/course`,
//! `DELETE /statistics/module`): enrollments of one content item of the account, of learners
//! the caller may reach. Checked in the order results.md section 6 gives: the item, then
//! every enrollment, then the scope.

use std::collections::{BTreeSet, HashMap};

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, EntityTrait as _, QueryFilter as _, prelude::Uuid,
};

use crate::{
    access::{Caller, Grant},
    entities::{content_item, enrollment, learner_result},
    error::{ServiceError, ServiceResult},
    service::lookups::{self, unknown},
};

/// A named result and its learner.
pub(super) struct Target {
    pub learner_id: Uuid,
    pub result: learner_result::Model,
}

/// The results of `ids` (ascending, each once) in `course_id`, by enrollment id.
pub(super) async fn course_results(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    grant: Grant,
    course_id: Uuid,
    ids: &[Uuid],
) -> ServiceResult<HashMap<Uuid, Target>> {
    let course = content_item::Entity::find_by_id(course_id)
        .filter(content_item::Column::AccountId.eq(caller.account_id))
        .one(conn)
        .await?;
    if course.is_none() {
        return Err(unknown("courseId", course_id, "content item"));
    }
    let enrollments: HashMap<Uuid, enrollment::Model> =
        super::stored::enrollments(conn, caller.account_id, ids)
            .await?
            .into_iter()
            .map(|e| (e.id, e))
            .collect();
    for id in ids {
        match enrollments.get(id) {
            None => {
                return Err(ServiceError::invalid(format!(
                    "enrollmentIds '{id}' does not name an enrollment of this account."
                )));
            }
            Some(e) if e.content_item_id != course_id => {
                return Err(ServiceError::invalid(format!(
                    "enrollmentIds '{id}' is an enrollment in another content item than courseId '{course_id}'."
                )));
            }
            Some(_) => {}
        }
    }
    require_in_scope(conn, caller, grant, enrollments.values()).await?;
    Ok(super::stored::results(conn, caller.account_id, ids)
        .await?
        .into_iter()
        .filter_map(|result| {
            let learner_id = enrollments.get(&result.enrollment_id)?.learner_id;
            Some((result.enrollment_id, Target { learner_id, result }))
        })
        .collect())
}

/// PERMISSION_DENIED, nothing changed, when a scoped caller names an enrollment of a learner
/// outside its scope.
pub(super) async fn require_in_scope<'a>(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    grant: Grant,
    enrollments: impl Iterator<Item = &'a enrollment::Model>,
) -> ServiceResult<()> {
    if grant != Grant::InScope {
        return Ok(());
    }
    let enrollments: Vec<&enrollment::Model> = enrollments.collect();
    let learners: Vec<Uuid> = enrollments
        .iter()
        .map(|e| e.learner_id)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let outside =
        lookups::users_outside_scope(conn, &caller.managed_department_ids, &learners).await?;
    if outside.is_empty() {
        return Ok(());
    }
    let count = enrollments
        .iter()
        .filter(|e| outside.contains(&e.learner_id))
        .count();
    Err(ServiceError::denied(format!(
        "{count} of the enrollments belong to learners outside the departments you manage; nothing was changed."
    )))
}
