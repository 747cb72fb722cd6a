//! Create and update departments (interface 4.1, 4.2; contract section 6).

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _,
    QueryFilter as _, Set, prelude::Uuid,
};
use serde_json::json;

use super::{scope, tree};
use crate::{
    access::{Caller, Grant, Operation},
    db::{self, AuditAction, Change},
    domain::{
        ids::{new_id, not_found, parse_field_id, parse_resource_id},
        names::{DepartmentCode, DepartmentName},
    },
    entities::department,
    error::{ServiceError, ServiceResult},
};

#[derive(Debug, Clone, Default)]
pub struct NewDepartment {
    pub name: String,
    pub parent_department_id: String,
    pub code: Option<String>,
}

/// Absent fields stay as they are; a present empty `code` clears it.
#[derive(Debug, Clone, Default)]
pub struct DepartmentChanges {
    pub name: Option<String>,
    pub parent_department_id: Option<String>,
    pub code: Option<String>,
}

pub async fn create_department(
    db: &DatabaseConnection,
    caller: &Caller,
    new: NewDepartment,
) -> ServiceResult<Uuid> {
    let grant = caller.grant(Operation::CreateDepartment)?;
    let name = DepartmentName::parse(&new.name)?.into_inner();
    let parent_id = parse_field_id("parentDepartmentId", &new.parent_department_id)?;
    let code = match &new.code {
        Some(code) => DepartmentCode::parse(code)?.into_inner(),
        None => None,
    };
    db::write(db, caller, async |w| {
        let txn = w.txn();
        let parent = find_in_account(txn, caller.account_id, parent_id)
            .await?
            .ok_or_else(|| unknown_parent(&new.parent_department_id))?;
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
    department_id: &str,
    changes: DepartmentChanges,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateDepartment)?;
    let name = changes
        .name
        .as_deref()
        .map(DepartmentName::parse)
        .transpose()?;
    let code = changes
        .code
        .as_deref()
        .map(DepartmentCode::parse)
        .transpose()?;
    let new_parent_id = changes
        .parent_department_id
        .as_deref()
        .map(|raw| parse_field_id("parentDepartmentId", raw))
        .transpose()?;
    // After the fields: a malformed id names nothing, so it must answer like an unknown one.
    let raw_id = department_id;
    let department_id = parse_resource_id("Department", department_id)?;
    let scoped = grant == Grant::InScope;
    if name.is_none() && code.is_none() && new_parent_id.is_none() {
        // A no-op writes nothing, not even the account lock; it still answers 404 and 403.
        find_updatable(db, caller, department_id, raw_id, scoped).await?;
        return Ok(());
    }
    db::write(db, caller, async |w| {
        let txn = w.txn();
        let current = find_updatable(txn, caller, department_id, raw_id, scoped).await?;
        if let Some(parent_id) = new_parent_id {
            let raw_parent = changes.parent_department_id.as_deref().unwrap_or_default();
            check_new_parent(txn, caller, &current, parent_id, raw_parent, scoped).await?;
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
    department_id: Uuid,
    raw_id: &str,
    scoped: bool,
) -> ServiceResult<department::Model> {
    let current = find_in_account(conn, caller.account_id, department_id)
        .await?
        .ok_or_else(|| not_found("Department", raw_id))?;
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
    raw_parent: &str,
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
    find_in_account(txn, caller.account_id, parent_id)
        .await?
        .ok_or_else(|| unknown_parent(raw_parent))?;
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

async fn find_in_account(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    department_id: Uuid,
) -> ServiceResult<Option<department::Model>> {
    Ok(department::Entity::find_by_id(department_id)
        .filter(department::Column::AccountId.eq(account_id))
        .one(conn)
        .await?)
}

fn unknown_parent(raw: &str) -> ServiceError {
    ServiceError::invalid(format!(
        "parentDepartmentId '{}' does not name a department of this account.",
        crate::domain::ids::clip(raw)
    ))
}

fn snapshot(department: &department::Model) -> serde_json::Value {
    json!({
        "name": department.name,
        "parentDepartmentId": department.parent_id,
        "code": department.code,
    })
}
