//! The lookups several services share: rows of the caller's account by id, checks that
//! referenced ids name something in the account, and department-subtree questions (see
//! `docs/data-model.md`), each an indexed lookup in `department_closure`, never a walk
//! over the whole tree.
//!
//! Everything here filters by account: a row of another account is answered exactly
//! like one that does not exist.

use std::collections::HashSet;

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait as _, QueryFilter as _,
    QuerySelect as _,
    prelude::Uuid,
    sea_query::{Query, SelectStatement},
};

use crate::{
    db::bulk,
    entities::{department, department_closure as closure, group, user},
    error::{ServiceError, ServiceResult},
};

pub async fn find_user(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    user_id: Uuid,
) -> ServiceResult<Option<user::Model>> {
    Ok(user::Entity::find_by_id(user_id)
        .filter(user::Column::AccountId.eq(account_id))
        .one(conn)
        .await?)
}

pub async fn find_department(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    department_id: Uuid,
) -> ServiceResult<Option<department::Model>> {
    Ok(department::Entity::find_by_id(department_id)
        .filter(department::Column::AccountId.eq(account_id))
        .one(conn)
        .await?)
}

pub async fn find_group(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    group_id: Uuid,
) -> ServiceResult<Option<group::Model>> {
    Ok(group::Entity::find_by_id(group_id)
        .filter(group::Column::AccountId.eq(account_id))
        .one(conn)
        .await?)
}

/// INVALID_ARGUMENT for a field id that names no `what` in the account.
pub fn unknown(field: &str, id: Uuid, what: &str) -> ServiceError {
    ServiceError::invalid(format!(
        "{field} '{id}' does not name a {what} of this account."
    ))
}

/// `department_id` names a department of the account; otherwise the error names `field`.
pub async fn require_department(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    department_id: Uuid,
    field: &str,
) -> ServiceResult<department::Model> {
    find_department(conn, account_id, department_id)
        .await?
        .ok_or_else(|| unknown(field, department_id, "department"))
}

/// Every one of `ids` (ascending) names a department of the account; otherwise the
/// error names the first that does not.
pub async fn require_departments(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    ids: &[Uuid],
    field: &str,
) -> ServiceResult<()> {
    let found = existing_in_account(
        conn,
        department::Column::AccountId,
        department::Column::Id,
        account_id,
        ids,
    )
    .await?;
    match ids.iter().find(|id| !found.contains(id)) {
        Some(missing) => Err(unknown(field, *missing, "department")),
        None => Ok(()),
    }
}

/// Every one of `ids` (ascending) names a user of the account; otherwise the error
/// names the first that does not.
pub async fn require_users(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    ids: &[Uuid],
    field: &str,
) -> ServiceResult<()> {
    let found = existing_users(conn, account_id, ids).await?;
    match ids.iter().find(|id| !found.contains(id)) {
        Some(missing) => Err(unknown(field, *missing, "user")),
        None => Ok(()),
    }
}

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
    existing_in_account(
        conn,
        user::Column::AccountId,
        user::Column::Id,
        account_id,
        user_ids,
    )
    .await
}

/// Which of `ids` name rows of `account_column`'s table in `account_id`: one indexed lookup per chunk of ids,
/// so that a long list never becomes one statement over the bind limit.
pub async fn existing_in_account<C>(
    conn: &impl ConnectionTrait,
    account_column: C,
    id_column: C,
    account_id: Uuid,
    ids: &[Uuid],
) -> ServiceResult<HashSet<Uuid>>
where
    C: ColumnTrait,
    C::EntityName: EntityTrait,
{
    let mut found = HashSet::with_capacity(ids.len());
    for chunk in bulk::in_chunks(ids) {
        found.extend(
            <C::EntityName as EntityTrait>::find()
                .select_only()
                .column(id_column)
                .filter(account_column.eq(account_id))
                .filter(id_column.is_in(chunk.iter().copied()))
                .into_tuple::<Uuid>()
                .all(conn)
                .await?,
        );
    }
    Ok(found)
}

/// Every user of the subtrees of `managed`, ascending.
///
/// No index holds a subtree's users in id order, and asking the database for that order
/// makes it sort the subtree's users for every page. Read once through the
/// `(department_id, id)` index and sorted here, a subtree costs in proportion to its size:
/// 16 bytes a user, a few MiB for the largest subtrees.
pub async fn users_in_subtrees(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    managed: &[Uuid],
) -> ServiceResult<Vec<Uuid>> {
    if managed.is_empty() {
        return Ok(Vec::new());
    }
    // `IN (subquery)` names each user once, however the managed subtrees overlap.
    let mut ids: Vec<Uuid> = user::Entity::find()
        .select_only()
        .column(user::Column::Id)
        .filter(user::Column::AccountId.eq(account_id))
        .filter(user::Column::DepartmentId.in_subquery(subtree_departments(managed)))
        .into_tuple()
        .all(conn)
        .await?;
    ids.sort_unstable();
    Ok(ids)
}
