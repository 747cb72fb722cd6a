//! Groups (interface 4.3, 4.4; contract section 7; neighbours.md section 7): read one
//! with its members (here: the hottest read of the interface), list them ([`list`]),
//! create, rename and delete them ([`edit`]), and add or replace a plain group's stored
//! members ([`members`]). Each operation is one function, whichever door calls it:
//! `lms.v1.AdminService` for the HTTP interface, `lms.v1.DirectoryService` for internal
//! services (owners and administrators only, whose grant is everything).

mod edit;
mod list;
mod members;

pub use edit::{create_group, delete_group, update_group};
pub use list::{GroupList, list_groups, stream_groups};
pub use members::{Membership, change_members, insert_members, stored_members};

use sea_orm::prelude::Uuid;

use crate::{
    access::{Caller, Grant, Operation},
    db::ReadConnections,
    domain::{
        ids::{IdList, ResourceRef},
        names::GroupName,
    },
    error::ServiceResult,
};

/// A group to create: a plain group with its first members, or a smart group, whose
/// members are a department's subtree and are never stored.
#[derive(Debug, Clone)]
pub struct NewGroup {
    pub name: GroupName,
    /// Set for a smart group: its members are this department's subtree.
    pub smart_department_id: Option<Uuid>,
    /// A plain group's first members; may be empty.
    pub user_ids: IdList,
    /// The identity provider's id (SCIM `externalId`); REST never sets it.
    pub external_id: Option<String>,
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
