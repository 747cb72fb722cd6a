//! Group writes of the HTTP interface (neighbours.md sections 7.3 to 7.5): create a plain
//! group with its members, delete a group, replace a plain group's members.
//!
//! A scoped caller (department administrator, custom role) acts only on users of its
//! subtrees: it may name no other user, it deletes only groups whose members are all in
//! scope, and replacing members leaves the members outside its scope in the group.

use std::collections::BTreeSet;

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, QueryFilter as _, Set,
    prelude::Uuid,
};
use serde_json::json;

use crate::service::{
    Parsed,
    groups::{NewMembers, insert_group, stored_members},
    lookups::{self as scope, find_group, require_users},
};
use crate::{
    access::{Caller, Grant, Operation},
    db::{self, AuditAction, Change, bulk},
    domain::{
        ids::{IdList, ResourceRef},
        names::GroupName,
    },
    entities::{group, group_member},
    error::{ServiceError, ServiceResult},
};

/// A plain group to create (`POST /group`).
#[derive(Debug, Clone)]
pub struct NewPlainGroup {
    pub name: GroupName,
    /// Its first members; may be empty.
    pub user_ids: IdList,
}

/// Creates a plain group with its members; its id.
pub async fn add_group(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewPlainGroup>,
) -> ServiceResult<Uuid> {
    let grant = caller.grant(Operation::CreateGroup)?;
    let NewPlainGroup { name, user_ids } = new?;
    let users = user_ids.into_inner();
    db::write(db, caller, async |w| {
        let txn = w.txn();
        require_users(txn, caller.account_id, &users, "userIds").await?;
        if grant == Grant::InScope {
            refuse_outside_scope(txn, caller, &users).await?;
        }
        let created = insert_group(txn, caller.account_id, name.into_inner(), None).await?;
        insert_members(txn, created.id, &users).await?;
        w.record(Change {
            action: AuditAction::GroupCreated,
            entity_id: created.id,
            before: None,
            after: Some(json!({
                "name": created.name,
                "smartDepartmentId": null,
                "userIds": users,
            })),
        });
        Ok(created.id)
    })
    .await
}

/// Deletes a group and its stored members (the users stay).
pub async fn delete_group(
    db: &DatabaseConnection,
    caller: &Caller,
    group: &ResourceRef,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::DeleteGroup)?;
    let id = group.id("Group")?;
    db::write(db, caller, async |w| {
        let txn = w.txn();
        let found = find_group(txn, caller.account_id, id)
            .await?
            .ok_or_else(|| group.not_found("Group"))?;
        let members = stored_members(txn, id).await?;
        if grant == Grant::InScope {
            // Deleting takes every member out of the group: a scoped caller may do that only
            // when it could have removed each of them.
            let in_scope = match found.smart_department_id {
                Some(department) => {
                    scope::department_in_scope(txn, &caller.managed_department_ids, department)
                        .await?
                }
                None => scope::users_outside_scope(txn, &caller.managed_department_ids, &members)
                    .await?
                    .is_empty(),
            };
            if !in_scope {
                return Err(ServiceError::denied(format!(
                    "Group '{id}' has members outside the departments you manage; you may delete only groups whose members you manage."
                )));
            }
        }
        group_member::Entity::delete_many()
            .filter(group_member::Column::GroupId.eq(id))
            .exec(txn)
            .await?;
        group::Entity::delete_by_id(id).exec(txn).await?;
        w.record(Change {
            action: AuditAction::GroupDeleted,
            entity_id: id,
            before: Some(json!({
                "name": found.name,
                "smartDepartmentId": found.smart_department_id,
                "userIds": members,
            })),
            after: None,
        });
        Ok(())
    })
    .await
}

/// Replaces a plain group's members with `user_ids` (empty: no members). For a scoped
/// caller, members outside its scope stay. A smart group has no stored members: 400.
pub async fn replace_group_members(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewMembers>,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::ReplaceGroupMembers)?;
    let NewMembers { group, user_ids } = new?;
    // After the ids: a malformed group id names nothing, so it answers like an unknown one.
    let id = group.id("Group")?;
    let wanted = user_ids.into_inner();
    db::write(db, caller, async |w| {
        let txn = w.txn();
        let found = find_group(txn, caller.account_id, id)
            .await?
            .ok_or_else(|| group.not_found("Group"))?;
        if found.smart_department_id.is_some() {
            return Err(ServiceError::invalid(format!(
                "Group '{id}' is a smart group: its members are the users of its department subtree and cannot be replaced."
            )));
        }
        require_users(txn, caller.account_id, &wanted, "userIds").await?;
        let current = stored_members(txn, id).await?;
        let mut keep = BTreeSet::from_iter(wanted.iter().copied());
        if grant == Grant::InScope {
            refuse_outside_scope(txn, caller, &wanted).await?;
            keep.extend(
                scope::users_outside_scope(txn, &caller.managed_department_ids, &current).await?,
            );
        }
        let current = BTreeSet::from_iter(current);
        let removed: Vec<Uuid> = current.difference(&keep).copied().collect();
        let added: Vec<Uuid> = keep.difference(&current).copied().collect();
        if removed.is_empty() && added.is_empty() {
            return Ok(());
        }
        for chunk in bulk::in_chunks(&removed) {
            group_member::Entity::delete_many()
                .filter(group_member::Column::GroupId.eq(id))
                .filter(group_member::Column::UserId.is_in(chunk.iter().copied()))
                .exec(txn)
                .await?;
        }
        insert_members(txn, id, &added).await?;
        w.record(Change {
            action: AuditAction::GroupMembersReplaced,
            entity_id: id,
            before: Some(json!({ "removedUserIds": removed })),
            after: Some(json!({ "addedUserIds": added })),
        });
        Ok(())
    })
    .await
}

/// 403 naming the first of `users` outside the caller's scope.
async fn refuse_outside_scope(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    users: &[Uuid],
) -> ServiceResult<()> {
    let outside = scope::users_outside_scope(conn, &caller.managed_department_ids, users).await?;
    match outside.iter().min() {
        Some(first) => Err(ServiceError::denied(format!(
            "userIds: user '{first}' is outside the departments you manage."
        ))),
        None => Ok(()),
    }
}

async fn insert_members(
    conn: &impl ConnectionTrait,
    group_id: Uuid,
    users: &[Uuid],
) -> ServiceResult<()> {
    if users.is_empty() {
        return Ok(());
    }
    let rows: Vec<group_member::ActiveModel> = users
        .iter()
        .map(|user_id| group_member::ActiveModel {
            group_id: Set(group_id),
            user_id: Set(*user_id),
        })
        .collect();
    bulk::insert_all(conn, rows).await?;
    Ok(())
}
