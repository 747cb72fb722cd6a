//! Groups: read and rename (interface 4.3, 4.4; contract section 7), and create and add
//! members (writes of `lms.v1.DirectoryService`, for account owners and administrators).

use std::collections::HashSet;

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _,
    QueryFilter as _, QuerySelect as _, Set, prelude::Uuid,
};
use serde_json::json;

use super::{
    Parsed,
    audit::{AuditAction, Change},
    lookups::{find_group, require_department, require_users},
    write,
};
use crate::{
    access::{Caller, Grant, Operation},
    db::{ReadConnections, bulk},
    domain::{
        ids::{IdList, ResourceRef, new_id},
        names::GroupName,
    },
    entities::{group, group_member},
    error::{ServiceError, ServiceResult},
};

#[derive(Debug, Clone)]
pub struct NewGroup {
    pub name: GroupName,
    /// Set for a smart group: its members are this department's subtree.
    pub smart_department_id: Option<Uuid>,
}

/// Absent fields stay as they are.
#[derive(Debug, Clone)]
pub struct GroupChanges {
    pub group: ResourceRef,
    pub name: Option<GroupName>,
}

#[derive(Debug, Clone)]
pub struct NewMembers {
    pub group: ResourceRef,
    pub user_ids: IdList,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupView {
    pub id: Uuid,
    pub name: String,
    pub users_count: u64,
    /// Ascending; empty when the caller may see only the count.
    pub user_ids: Vec<Uuid>,
    pub is_smart: bool,
}

/// One query, group and members together: this is the hottest read of the interface
/// ([`ReadConnections::group_with_members`]).
pub async fn get_group(
    reads: &ReadConnections,
    caller: &Caller,
    group: &ResourceRef,
) -> ServiceResult<GroupView> {
    let grant = caller.grant(Operation::GetGroup)?;
    let id = group.id("Group")?;
    let with_ids = grant != Grant::CountOnly;
    let found = reads
        .group_with_members(caller.account_id, id, with_ids)
        .await?
        .ok_or_else(|| group.not_found("Group"))?;
    Ok(GroupView {
        id,
        name: found.name,
        users_count: found.member_count,
        user_ids: found.member_ids,
        is_smart: found.is_smart,
    })
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

/// Creates a plain group, or a smart group when `smart_department_id` is given.
pub async fn create_group(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewGroup>,
) -> ServiceResult<Uuid> {
    caller.grant(Operation::ManageDirectory)?;
    let new = new?;
    let (name, smart) = (new.name.into_inner(), new.smart_department_id);
    write(db, caller, async |w| {
        let txn = w.txn();
        if let Some(id) = smart {
            require_department(txn, caller.account_id, id, "smartDepartmentId").await?;
        }
        let created = insert_group(txn, caller.account_id, name, smart).await?;
        w.record(Change {
            action: AuditAction::GroupCreated,
            entity_id: created.id,
            before: None,
            after: Some(json!({
                "name": created.name,
                "smartDepartmentId": created.smart_department_id,
            })),
        });
        Ok(created.id)
    })
    .await
}

/// Adds users to a plain group and returns how many were new to it; existing members
/// are left as they are. A smart group has no stored members: FAILED_PRECONDITION.
pub async fn add_group_members(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewMembers>,
) -> ServiceResult<u64> {
    caller.grant(Operation::ManageDirectory)?;
    let NewMembers { group, user_ids } = new?;
    // After the ids: a malformed group id names nothing, so it answers like an unknown one.
    let id = group.id("Group")?;
    let users = user_ids.into_inner();
    write(db, caller, async |w| {
        let txn = w.txn();
        let found = find_group(txn, caller.account_id, id)
            .await?
            .ok_or_else(|| group.not_found("Group"))?;
        if found.smart_department_id.is_some() {
            return Err(ServiceError::Conflict(format!(
                "Group '{id}' is a smart group: its members are the users of its department subtree and cannot be added."
            )));
        }
        require_users(txn, caller.account_id, &users, "userIds").await?;
        let mut existing = HashSet::new();
        for chunk in bulk::in_chunks(&users) {
            existing.extend(
                group_member::Entity::find()
                    .select_only()
                    .column(group_member::Column::UserId)
                    .filter(group_member::Column::GroupId.eq(id))
                    .filter(group_member::Column::UserId.is_in(chunk.iter().copied()))
                    .into_tuple::<Uuid>()
                    .all(txn)
                    .await?,
            );
        }
        let added: Vec<Uuid> = users.into_iter().filter(|u| !existing.contains(u)).collect();
        if added.is_empty() {
            return Ok(0);
        }
        let rows: Vec<group_member::ActiveModel> = added
            .iter()
            .map(|user_id| group_member::ActiveModel { group_id: Set(id), user_id: Set(*user_id) })
            .collect();
        bulk::insert_all(txn, rows).await?;
        w.record(Change {
            action: AuditAction::GroupMembersAdded,
            entity_id: id,
            before: None,
            after: Some(json!({ "addedUserIds": added })),
        });
        Ok(added.len() as u64)
    })
    .await
}

/// A new group row of `account_id` (its members, if any, are the caller's to add).
pub(super) async fn insert_group(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    name: String,
    smart_department_id: Option<Uuid>,
) -> ServiceResult<group::Model> {
    Ok(group::ActiveModel {
        id: Set(new_id()),
        account_id: Set(account_id),
        name: Set(name),
        smart_department_id: Set(smart_department_id),
    }
    .insert(txn)
    .await?)
}

/// The stored members of a group, ascending: a range of `group_members`' primary key.
///
/// Sorted here, not by the database: PostgreSQL may fetch the range through a bitmap scan,
/// which loses the key order and would sort every member again.
pub(super) async fn stored_members(
    conn: &impl ConnectionTrait,
    group_id: Uuid,
) -> ServiceResult<Vec<Uuid>> {
    let mut members: Vec<Uuid> = group_member::Entity::find()
        .select_only()
        .column(group_member::Column::UserId)
        .filter(group_member::Column::GroupId.eq(group_id))
        .into_tuple()
        .all(conn)
        .await?;
    members.sort_unstable();
    Ok(members)
}
