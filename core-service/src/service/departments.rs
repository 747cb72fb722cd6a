//! Departments: create, update and delete them (interface 4.1, 4.2; contract section 6;
//! neighbours.md section 3.4), read one or list them ([`read`]), and keep the closure table
//! right as they are added and moved ([`tree`]).

mod read;
mod tree;

pub use read::{DepartmentList, get_department, list_departments, stream_departments};

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _,
    QueryFilter as _, QuerySelect as _, Set, prelude::Uuid,
};
use serde_json::json;

use super::{
    Parsed,
    audit::{AuditAction, Change},
    lookups::{self as scope, find_department, unknown},
    write,
};
use crate::{
    access::{Caller, Grant, Operation},
    domain::{
        ids::{ResourceRef, new_id},
        names::{DepartmentCode, DepartmentName},
    },
    entities::{department, department_closure, group, user, user_managed_department},
    error::{ServiceError, ServiceResult},
};

#[derive(Debug, Clone)]
pub struct NewDepartment {
    pub name: DepartmentName,
    pub parent_department_id: Uuid,
    /// Absent or empty means no code.
    pub code: DepartmentCode,
}

/// Absent fields stay as they are; a present empty `code` clears it.
#[derive(Debug, Clone)]
pub struct DepartmentChanges {
    pub department: ResourceRef,
    pub name: Option<DepartmentName>,
    pub parent_department_id: Option<Uuid>,
    pub code: Option<DepartmentCode>,
}

pub async fn create_department(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewDepartment>,
) -> ServiceResult<Uuid> {
    let grant = caller.grant(Operation::CreateDepartment)?;
    let new = new?;
    let (name, parent_id) = (new.name.into_inner(), new.parent_department_id);
    let code = new.code.into_inner();
    write(db, caller, async |w| {
        let txn = w.txn();
        let parent = find_department(txn, caller.account_id, parent_id)
            .await?
            .ok_or_else(|| unknown("parentDepartmentId", parent_id, "department"))?;
        if grant == Grant::InScope
            && !scope::department_in_scope(txn, &caller.managed_department_ids, parent.id).await?
        {
            return Err(ServiceError::denied(
                "You may add departments only under departments you manage.",
            ));
        }
        let now = chrono::Utc::now();
        let created = department::ActiveModel {
            id: Set(new_id()),
            account_id: Set(caller.account_id),
            parent_id: Set(Some(parent.id)),
            name: Set(name),
            code: Set(code),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(txn)
        .await?;
        tree::attach_leaf(txn, caller.account_id, created.id, parent.id).await?;
        w.record(Change {
            action: AuditAction::DepartmentCreated,
            entity_id: created.id,
            before: None,
            after: Some(snapshot(&created)),
        });
        Ok(created.id)
    })
    .await
}

pub async fn update_department(
    db: &DatabaseConnection,
    caller: &Caller,
    changes: Parsed<DepartmentChanges>,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateDepartment)?;
    let DepartmentChanges {
        department,
        name,
        parent_department_id: new_parent_id,
        code,
    } = changes?;
    // After the fields: a malformed id names nothing, so it must answer like an unknown one.
    let department_id = department.id("Department")?;
    let scoped = grant == Grant::InScope;
    if name.is_none() && code.is_none() && new_parent_id.is_none() {
        // A no-op writes nothing, not even the account lock; it still answers 404 and 403.
        find_updatable(db, caller, &department, department_id, scoped).await?;
        return Ok(());
    }
    write(db, caller, async |w| {
        let txn = w.txn();
        let current = find_updatable(txn, caller, &department, department_id, scoped).await?;
        if let Some(parent_id) = new_parent_id {
            check_new_parent(txn, caller, &current, parent_id, scoped).await?;
        }
        let moves = new_parent_id.is_some_and(|p| current.parent_id != Some(p));
        let mut updated: department::ActiveModel = current.clone().into();
        if let Some(name) = name {
            updated.name = Set(name.into_inner());
        }
        if let Some(code) = code {
            updated.code = Set(code.into_inner());
        }
        if let Some(parent_id) = new_parent_id {
            updated.parent_id = Set(Some(parent_id));
        }
        if !updated.is_changed() {
            return Ok(());
        }
        updated.updated_at = Set(chrono::Utc::now());
        let updated = updated.update(txn).await?;
        if let (true, Some(parent_id)) = (moves, new_parent_id) {
            tree::move_subtree(txn, caller.account_id, department_id, parent_id).await?;
        }
        w.record(Change {
            action: AuditAction::DepartmentUpdated,
            entity_id: department_id,
            before: Some(snapshot(&current)),
            after: Some(snapshot(&updated)),
        });
        Ok(())
    })
    .await
}

/// The department `department_id` of the caller's account, if the caller may update it.
async fn find_updatable(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    department: &ResourceRef,
    department_id: Uuid,
    scoped: bool,
) -> ServiceResult<department::Model> {
    let current = find_department(conn, caller.account_id, department_id)
        .await?
        .ok_or_else(|| department.not_found("Department"))?;
    if scoped
        && !scope::department_in_scope(conn, &caller.managed_department_ids, department_id).await?
    {
        return Err(ServiceError::denied(
            "You may update only departments you manage and their sub-departments.",
        ));
    }
    Ok(current)
}

/// The new parent exists in the account, is allowed for a scoped caller, and is not the
/// department itself or one of its descendants.
async fn check_new_parent(
    txn: &impl ConnectionTrait,
    caller: &Caller,
    department: &department::Model,
    parent_id: Uuid,
    scoped: bool,
) -> ServiceResult<()> {
    if department.parent_id.is_none() {
        return Err(ServiceError::invalid(
            "parentDepartmentId cannot be given for the root department.",
        ));
    }
    // Keeping the current parent is not a move: a scoped caller may send back the parent it
    // read even when that parent lies outside its scope.
    if department.parent_id == Some(parent_id) {
        return Ok(());
    }
    find_department(txn, caller.account_id, parent_id)
        .await?
        .ok_or_else(|| unknown("parentDepartmentId", parent_id, "department"))?;
    if scoped && !scope::department_in_scope(txn, &caller.managed_department_ids, parent_id).await?
    {
        return Err(ServiceError::denied(
            "You may move departments only under departments you manage.",
        ));
    }
    if scope::is_within(txn, department.id, parent_id).await? {
        return Err(ServiceError::invalid(
            "parentDepartmentId must not be the department itself or one of its sub-departments.",
        ));
    }
    Ok(())
}

/// Deletes an empty department: not the root, and not while users, sub-departments,
/// department administrators or a smart group still refer to it (each refused with 400 naming
/// why). The checks and the delete run under the account's lock, so no user or
/// sub-department can arrive between them.
pub async fn delete_department(
    db: &DatabaseConnection,
    caller: &Caller,
    department: &ResourceRef,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::DeleteDepartment)?;
    let department_id = department.id("Department")?;
    write(db, caller, async |w| {
        let txn = w.txn();
        let current = find_department(txn, caller.account_id, department_id)
            .await?
            .ok_or_else(|| department.not_found("Department"))?;
        if grant == Grant::InScope
            && !scope::department_in_scope(txn, &caller.managed_department_ids, department_id)
                .await?
        {
            return Err(ServiceError::denied(
                "You may delete only departments inside the departments you manage.",
            ));
        }
        if let Some(reason) = still_needed(txn, &current).await? {
            return Err(ServiceError::invalid(format!(
                "Department '{department_id}' cannot be deleted: {reason}."
            )));
        }
        department_closure::Entity::delete_many()
            .filter(department_closure::Column::DescendantId.eq(department_id))
            .exec(txn)
            .await?;
        department::Entity::delete_by_id(department_id)
            .exec(txn)
            .await?;
        w.record(Change {
            action: AuditAction::DepartmentDeleted,
            entity_id: department_id,
            before: Some(snapshot(&current)),
            after: None,
        });
        Ok(())
    })
    .await
}

/// Why `department` must stay, if anything still needs it.
async fn still_needed(
    txn: &impl ConnectionTrait,
    department: &department::Model,
) -> ServiceResult<Option<&'static str>> {
    let id = department.id;
    if department.parent_id.is_none() {
        return Ok(Some("it is the root department"));
    }
    if read::has_children(txn, id).await? {
        return Ok(Some(
            "it still has sub-departments; delete or move them first",
        ));
    }
    let has_users = user::Entity::find()
        .select_only()
        .column(user::Column::Id)
        .filter(user::Column::DepartmentId.eq(id))
        .limit(1)
        .into_tuple::<Uuid>()
        .one(txn)
        .await?
        .is_some();
    if has_users {
        return Ok(Some(
            "it still has users; move them to another department first",
        ));
    }
    let managed = user_managed_department::Entity::find()
        .select_only()
        .column(user_managed_department::Column::UserId)
        .filter(user_managed_department::Column::DepartmentId.eq(id))
        .limit(1)
        .into_tuple::<Uuid>()
        .one(txn)
        .await?
        .is_some();
    if managed {
        return Ok(Some(
            "users still manage it as their scope; change their managed departments first",
        ));
    }
    let followed = group::Entity::find()
        .select_only()
        .column(group::Column::Id)
        .filter(group::Column::SmartDepartmentId.eq(id))
        .limit(1)
        .into_tuple::<Uuid>()
        .one(txn)
        .await?
        .is_some();
    if followed {
        return Ok(Some("a smart group follows it"));
    }
    Ok(None)
}

fn snapshot(department: &department::Model) -> serde_json::Value {
    json!({
        "name": department.name,
        "parentDepartmentId": department.parent_id,
        "code": department.code,
    })
}
