//! A plain group's stored members: add some (`AddGroupMembers` of
//! `lms.v1.DirectoryService`) or replace them all (`POST /group/{id}/members`, neighbours.md
//! section 7.5), one function for both.
//!
//! A smart group has no stored members: its members are the users of its department's
//! subtree. Naming members for one is INVALID_ARGUMENT (400), through either door: a group's
//! kind is fixed when it is made, so no change of state would ever let the request succeed
//! (neighbours Q19 specifies 400 for the HTTP interface).
//!
//! A scoped caller (department administrator, custom role) may name only users of its
//! subtrees, and replacing members leaves the members outside its scope in the group.

use std::collections::{BTreeSet, HashSet};

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, QueryFilter as _,
    QuerySelect as _, Set, prelude::Uuid,
};
use serde_json::json;

use super::NewMembers;
use crate::{
    access::{Caller, Grant, Operation},
    db::bulk,
    entities::group_member,
    error::{ServiceError, ServiceResult},
    service::{
        Parsed,
        lookups::{self as scope, find_group, require_users},
    },
    service::{
        audit::{AuditAction, Change},
        write,
    },
};

/// What the named users become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Membership {
    /// Members besides the current ones; those already members stay as they are.
    Added,
    /// The whole set of members (empty: none), but for members a scoped caller cannot see.
    Replacing,
}

/// Adds the named users to a plain group's members, or makes them its members.
pub async fn change_members(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewMembers>,
    membership: Membership,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::ReplaceGroupMembers)?;
    let NewMembers { group, user_ids } = new?;
    // After the ids: a malformed group id names nothing, so it answers like an unknown one.
    let id = group.id("Group")?;
    let named = user_ids.into_inner();
    write(db, caller, async |w| {
        let txn = w.txn();
        let found = find_group(txn, caller.account_id, id)
            .await?
            .ok_or_else(|| group.not_found("Group"))?;
        if found.smart_department_id.is_some() {
            return Err(ServiceError::invalid(format!(
                "Group '{id}' is a smart group: its members are the users of its department subtree and none can be given."
            )));
        }
        require_users(txn, caller.account_id, &named, "userIds").await?;
        if grant == Grant::InScope {
            refuse_outside_scope(txn, caller, &named).await?;
        }
        let (removed, added) = match membership {
            Membership::Added => {
                let existing = members_among(txn, id, &named).await?;
                let added: Vec<Uuid> = named.into_iter().filter(|u| !existing.contains(u)).collect();
                (Vec::new(), added)
            }
            Membership::Replacing => {
                let current = stored_members(txn, id).await?;
                let mut keep = BTreeSet::from_iter(named);
                if grant == Grant::InScope {
                    let managed = &caller.managed_department_ids;
                    keep.extend(scope::users_outside_scope(txn, managed, &current).await?);
                }
                let current = BTreeSet::from_iter(current);
                let removed: Vec<Uuid> = current.difference(&keep).copied().collect();
                let added: Vec<Uuid> = keep.difference(&current).copied().collect();
                (removed, added)
            }
        };
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
        w.record(match membership {
            Membership::Added => Change {
                action: AuditAction::GroupMembersAdded,
                entity_id: id,
                before: None,
                after: Some(json!({ "addedUserIds": added })),
            },
            Membership::Replacing => Change {
                action: AuditAction::GroupMembersReplaced,
                entity_id: id,
                before: Some(json!({ "removedUserIds": removed })),
                after: Some(json!({ "addedUserIds": added })),
            },
        });
        Ok(())
    })
    .await
}

/// Which of `users` are stored members of `group_id`: lookups by key, so adding a few
/// users to a large group does not read the group.
async fn members_among(
    conn: &impl ConnectionTrait,
    group_id: Uuid,
    users: &[Uuid],
) -> ServiceResult<HashSet<Uuid>> {
    let mut found = HashSet::new();
    for chunk in bulk::in_chunks(users) {
        found.extend(
            group_member::Entity::find()
                .select_only()
                .column(group_member::Column::UserId)
                .filter(group_member::Column::GroupId.eq(group_id))
                .filter(group_member::Column::UserId.is_in(chunk.iter().copied()))
                .into_tuple::<Uuid>()
                .all(conn)
                .await?,
        );
    }
    Ok(found)
}

/// The stored members of a group, ascending: a range of `group_members`' primary key.
///
/// Sorted here, not by the database: PostgreSQL may fetch the range through a bitmap scan,
/// which loses the key order and would sort every member again.
pub async fn stored_members(
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

/// 403 naming the first of `users` outside the caller's scope.
pub(super) async fn refuse_outside_scope(
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

/// Stores `users` as members of `group_id`, none of whom is one yet.
pub async fn insert_members(
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
