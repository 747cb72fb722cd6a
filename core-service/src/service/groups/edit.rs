//! Create, rename and delete groups (neighbours.md sections 7.3 and 7.4; `CreateGroup` of
//! `lms.v1.DirectoryService`).
//!
//! A scoped caller (department administrator, custom role) acts only on users of its
//! subtrees: it may name no other user, make no smart group of a department outside them,
//! and delete only groups whose members are all in scope.

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _,
    QueryFilter as _, Set, prelude::Uuid,
};
use serde_json::json;

use super::{
    GroupChanges, NewGroup,
    members::{insert_members, refuse_outside_scope, stored_members},
};
use crate::{
    access::{Caller, Grant, Operation},
    domain::ids::{ResourceRef, new_id},
    entities::{group, group_member},
    error::{ServiceError, ServiceResult},
    service::{
        Parsed,
        lookups::{self as scope, find_group, require_department, require_users},
    },
    service::{
        audit::{AuditAction, Change},
        write,
    },
};

/// Creates a plain group with its first members, or a smart group following a department;
/// its id.
pub async fn create_group(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewGroup>,
) -> ServiceResult<Uuid> {
    let grant = caller.grant(Operation::CreateGroup)?;
    let NewGroup {
        name,
        smart_department_id: smart,
        user_ids,
        external_id,
    } = new?;
    let users = user_ids.into_inner();
    if smart.is_some() && !users.is_empty() {
        return Err(ServiceError::invalid(
            "userIds: a smart group's members are its department's subtree; none can be given.",
        ));
    }
    write(db, caller, async |w| {
        let txn = w.txn();
        if let Some(department) = smart {
            require_department(txn, caller.account_id, department, "smartDepartmentId").await?;
            if grant == Grant::InScope
                && !scope::department_in_scope(txn, &caller.managed_department_ids, department)
                    .await?
            {
                return Err(ServiceError::denied(format!(
                    "smartDepartmentId: department '{department}' is outside the departments you manage."
                )));
            }
        }
        require_users(txn, caller.account_id, &users, "userIds").await?;
        if grant == Grant::InScope {
            refuse_outside_scope(txn, caller, &users).await?;
        }
        let created =
            insert_group(txn, caller.account_id, name.into_inner(), smart, external_id).await?;
        insert_members(txn, created.id, &users).await?;
        w.record(Change {
            action: AuditAction::GroupCreated,
            entity_id: created.id,
            before: None,
            after: Some(json!({
                "name": created.name,
                "smartDepartmentId": created.smart_department_id,
                "userIds": users,
            })),
        });
        Ok(created.id)
    })
    .await
}

pub async fn update_group(
    db: &DatabaseConnection,
    caller: &Caller,
    changes: Parsed<GroupChanges>,
) -> ServiceResult<()> {
    caller.grant(Operation::UpdateGroup)?;
    let GroupChanges { group, name } = changes?;
    // After the name: a malformed id names nothing, so it must answer like an unknown one.
    let id = group.id("Group")?;
    let Some(name) = name else {
        // A no-op writes nothing, not even the account lock; it still answers 404.
        find_group(db, caller.account_id, id)
            .await?
            .ok_or_else(|| group.not_found("Group"))?;
        return Ok(());
    };
    write(db, caller, async |w| {
        let txn = w.txn();
        let current = find_group(txn, caller.account_id, id)
            .await?
            .ok_or_else(|| group.not_found("Group"))?;
        let mut updated: group::ActiveModel = current.clone().into();
        updated.name = Set(name.into_inner());
        updated.updated_at = Set(Some(chrono::Utc::now()));
        let updated = updated.update(txn).await?;
        w.record(Change {
            action: AuditAction::GroupUpdated,
            entity_id: id,
            before: Some(json!({ "name": current.name })),
            after: Some(json!({ "name": updated.name })),
        });
        Ok(())
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
    write(db, caller, async |w| {
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

/// A new group row of `account_id` (its members, if any, are the caller's to add).
async fn insert_group(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    name: String,
    smart_department_id: Option<Uuid>,
    external_id: Option<String>,
) -> ServiceResult<group::Model> {
    let now = chrono::Utc::now();
    Ok(group::ActiveModel {
        id: Set(new_id()),
        account_id: Set(account_id),
        name: Set(name),
        smart_department_id: Set(smart_department_id),
        external_id: Set(external_id),
        created_at: Set(Some(now)),
        updated_at: Set(Some(now)),
    }
    .insert(txn)
    .await?)
}
