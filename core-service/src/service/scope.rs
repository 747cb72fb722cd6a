//! Department-subtree questions (see `docs/data-model.md`): each is an indexed lookup
//! in `department_closure`, never a walk over the whole tree.

use std::collections::HashSet;

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, EntityTrait as _, PaginatorTrait as _, QueryFilter as _,
    QuerySelect as _,
    prelude::Uuid,
    sea_query::{Query, SelectStatement},
};

use crate::{
    db::bulk,
    entities::{department_closure as closure, user},
    error::ServiceResult,
};

/// `SELECT descendant_id FROM department_closure WHERE ancestor_id IN (roots)`: every
/// department in the subtrees of `roots`, for use in `IN (...)` conditions.
pub fn subtree_departments(roots: &[Uuid]) -> SelectStatement {
    Query::select()
        .column(closure::Column::DescendantId)
        .from(closure::Entity)
        .and_where(closure::Column::AncestorId.is_in(roots.iter().copied()))
        .to_owned()
}

/// Whether `department_id` is `ancestor_id` or one of its descendants.
pub async fn is_within(
    conn: &impl ConnectionTrait,
    ancestor_id: Uuid,
    department_id: Uuid,
) -> ServiceResult<bool> {
    Ok(closure::Entity::find_by_id((ancestor_id, department_id))
        .one(conn)
        .await?
        .is_some())
}

/// Whether `department_id` lies in the subtree of one of `managed`.
pub async fn department_in_scope(
    conn: &impl ConnectionTrait,
    managed: &[Uuid],
    department_id: Uuid,
) -> ServiceResult<bool> {
    if managed.is_empty() {
        return Ok(false);
    }
    let found = closure::Entity::find()
        .filter(closure::Column::DescendantId.eq(department_id))
        .filter(closure::Column::AncestorId.is_in(managed.iter().copied()))
        .count(conn)
        .await?;
    Ok(found > 0)
}

/// Those of `user_ids` whose own department is outside the subtrees of `managed`.
/// Ids naming no user are not reported.
pub async fn users_outside_scope(
    conn: &impl ConnectionTrait,
    managed: &[Uuid],
    user_ids: &[Uuid],
) -> ServiceResult<Vec<Uuid>> {
    let mut outside = Vec::new();
    // The subquery binds every managed department again in each statement.
    for chunk in bulk::in_chunks_beside(user_ids, managed.len()) {
        let mut query = user::Entity::find()
            .select_only()
            .column(user::Column::Id)
            .filter(user::Column::Id.is_in(chunk.iter().copied()));
        if !managed.is_empty() {
            query = query
                .filter(user::Column::DepartmentId.not_in_subquery(subtree_departments(managed)));
        }
        outside.extend(query.into_tuple::<Uuid>().all(conn).await?);
    }
    Ok(outside)
}

/// Which of `user_ids` exist in `account_id`.
pub async fn existing_users(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    user_ids: &[Uuid],
) -> ServiceResult<HashSet<Uuid>> {
    let mut found = HashSet::with_capacity(user_ids.len());
    for chunk in bulk::in_chunks(user_ids) {
        found.extend(
            user::Entity::find()
                .select_only()
                .column(user::Column::Id)
                .filter(user::Column::AccountId.eq(account_id))
                .filter(user::Column::Id.is_in(chunk.iter().copied()))
                .into_tuple::<Uuid>()
                .all(conn)
                .await?,
        );
    }
    Ok(found)
}
