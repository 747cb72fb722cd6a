//! The writes internal services use to build what the administration interface reads
//! (`lms.v1.DirectoryService`): users, groups, projects, content items, enrollments and
//! points. Only account owners and account administrators may call them
//! ([`Operation::ManageDirectory`]).
//!
//! Every function checks the permission, then validates its input without touching the
//! database, then (for passwords) hashes through the [`Verifier`], and only then opens
//! the account's write transaction, which re-checks every referenced id and writes the
//! audit record. After a change of password, role, managed departments or active flag
//! commits, the caller tells the authenticator (`Authenticator::users_changed`); triggers
//! on these tables tell other processes (`auth::revision`). A cached verification is
//! honoured only while the stored password hash is unchanged.

use std::collections::{BTreeSet, HashSet};

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _,
    PaginatorTrait as _, QueryFilter as _, QuerySelect as _, Set, prelude::Uuid,
};
use serde_json::json;

use super::{ID_CHUNK, audit, content::format_added_date, scope};
use crate::{
    access::{Caller, Operation},
    auth::{Verifier, email_key},
    db::write_transaction,
    domain::{
        ids::{clip, new_id, not_found, parse_field_id, parse_resource_id, parse_uuid},
        names::GroupName,
        roles::Role,
    },
    entities::{
        content_item, custom_role, department, enrollment, group, group_member, project,
        project_author, user, user_managed_department, user_points,
    },
    error::{ServiceError, ServiceResult},
};

/// Bounds of free-text fields the contract leaves open.
const MAX_EMAIL_CHARS: usize = 255;
const MAX_NAME_CHARS: usize = 255;
const MAX_TYPE_CHARS: usize = 255;
const MAX_DESCRIPTION_CHARS: usize = 65_535;
const MAX_URL_CHARS: usize = 2_048;
pub const MIN_PASSWORD_CHARS: usize = 8;
pub const MAX_PASSWORD_CHARS: usize = 1_024;
/// Ids one call may name in a list (members, authors, managed departments).
pub const MAX_LIST_IDS: usize = 10_000;

/// A role as requests give it: a built-in role name, or `custom` with a custom role id.
#[derive(Debug, Clone, Default)]
pub struct RoleAssignment {
    pub role: String,
    pub custom_role_id: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct NewUser {
    pub email: String,
    pub password: String,
    pub role: Option<RoleAssignment>,
    pub department_id: String,
    pub managed_department_ids: Vec<String>,
    pub active: bool,
}

#[derive(Debug, Clone, Default)]
pub struct NewGroup {
    pub name: String,
    /// Set (not blank) for a smart group: its members are this department's subtree.
    pub smart_department_id: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct NewProject {
    pub name: String,
    pub author_ids: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct NewContentItem {
    pub project_id: String,
    pub title: String,
    pub description: String,
    pub user_id: String,
    pub content_type: String,
    /// RFC 3339 with an offset; absent or blank means now.
    pub added_date: Option<String>,
    /// Absolute http(s) URL; absent or blank means `{account URL}/view/{id}`.
    pub view_url: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct NewEnrollment {
    pub learner_id: String,
    pub content_item_id: String,
}

// ---- users ----

/// Creates a user and returns its id. The login must be new to the account
/// (compared case-insensitively), otherwise FAILED_PRECONDITION.
pub async fn create_user(
    db: &DatabaseConnection,
    verifier: &Verifier,
    caller: &Caller,
    new: NewUser,
) -> ServiceResult<Uuid> {
    caller.grant(Operation::ManageDirectory)?;
    let email = parse_email(&new.email)?;
    check_password(&new.password)?;
    let role = ParsedRole::parse(new.role.as_ref())?;
    let department_id = parse_field_id("departmentId", &new.department_id)?;
    let managed = parse_id_list("managedDepartmentIds", &new.managed_department_ids)?;
    let password_hash = verifier.hash(&new.password).await?;
    let raw_department = new.department_id;
    let active = new.active;
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            let key = email_key(&email);
            let taken = user::Entity::find()
                .filter(user::Column::AccountId.eq(caller.account_id))
                .filter(user::Column::EmailKey.eq(key.as_str()))
                .count(txn)
                .await?;
            if taken > 0 {
                return Err(ServiceError::Conflict(format!(
                    "A user with login '{}' already exists.",
                    clip(&email)
                )));
            }
            role.check_exists(txn, caller.account_id).await?;
            require_department(
                txn,
                caller.account_id,
                department_id,
                "departmentId",
                &raw_department,
            )
            .await?;
            require_departments(txn, caller.account_id, &managed, "managedDepartmentIds").await?;
            let now = chrono::Utc::now();
            let created = user::ActiveModel {
                id: Set(new_id()),
                account_id: Set(caller.account_id),
                email: Set(email),
                email_key: Set(key),
                password_hash: Set(password_hash),
                role: Set(role.role),
                custom_role_id: Set(role.custom_role_id),
                department_id: Set(department_id),
                active: Set(active),
                created_at: Set(now),
                updated_at: Set(now),
            }
            .insert(txn)
            .await?;
            insert_managed(txn, created.id, &managed).await?;
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "user.create",
                    entity_type: "user",
                    entity_id: created.id,
                    before: None,
                    after: Some(user_snapshot(&created, &managed)),
                },
            )
            .await?;
            Ok(created.id)
        })
    })
    .await
}

/// Replaces the user's password. The old password stops working on the very next
/// request: a cached verification holds only for the stored hash it was made against.
pub async fn set_user_password(
    db: &DatabaseConnection,
    verifier: &Verifier,
    caller: &Caller,
    user_id: &str,
    password: &str,
) -> ServiceResult<()> {
    caller.grant(Operation::ManageDirectory)?;
    let raw_id = user_id.to_owned();
    let id = parse_resource_id("User", user_id)?;
    check_password(password)?;
    // Users are never deleted, so a user found now is still there in the transaction;
    // looking first spares the hashing for an unknown id.
    find_user(db, caller.account_id, id)
        .await?
        .ok_or_else(|| not_found("User", &raw_id))?;
    let password_hash = verifier.hash(password).await?;
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            let current = find_user(txn, caller.account_id, id)
                .await?
                .ok_or_else(|| not_found("User", &raw_id))?;
            let mut updated: user::ActiveModel = current.into();
            updated.password_hash = Set(password_hash);
            updated.updated_at = Set(chrono::Utc::now());
            updated.update(txn).await?;
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "user.set_password",
                    entity_type: "user",
                    entity_id: id,
                    // Never the hash itself.
                    before: None,
                    after: Some(json!({ "passwordChanged": true })),
                },
            )
            .await
        })
    })
    .await
}

/// Gives the user another role. The account always keeps one active account owner.
pub async fn set_user_role(
    db: &DatabaseConnection,
    caller: &Caller,
    user_id: &str,
    role: Option<RoleAssignment>,
) -> ServiceResult<()> {
    caller.grant(Operation::ManageDirectory)?;
    let raw_id = user_id.to_owned();
    let id = parse_resource_id("User", user_id)?;
    let role = ParsedRole::parse(role.as_ref())?;
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            let current = find_user(txn, caller.account_id, id)
                .await?
                .ok_or_else(|| not_found("User", &raw_id))?;
            role.check_exists(txn, caller.account_id).await?;
            let new_role = role.role;
            if current.role == new_role && current.custom_role_id == role.custom_role_id {
                return Ok(());
            }
            if current.role == Role::AccountOwner && current.active {
                keep_an_active_owner(txn, caller.account_id, id).await?;
            }
            let mut updated: user::ActiveModel = current.clone().into();
            updated.role = Set(new_role);
            updated.custom_role_id = Set(role.custom_role_id);
            updated.updated_at = Set(chrono::Utc::now());
            updated.update(txn).await?;
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "user.set_role",
                    entity_type: "user",
                    entity_id: id,
                    before: Some(
                        json!({ "role": current.role, "customRoleId": current.custom_role_id }),
                    ),
                    after: Some(json!({ "role": new_role, "customRoleId": role.custom_role_id })),
                },
            )
            .await
        })
    })
    .await
}

/// Replaces the whole set of departments the user manages (an empty list clears it).
pub async fn set_user_managed_departments(
    db: &DatabaseConnection,
    caller: &Caller,
    user_id: &str,
    managed_department_ids: &[String],
) -> ServiceResult<()> {
    caller.grant(Operation::ManageDirectory)?;
    let raw_id = user_id.to_owned();
    let id = parse_resource_id("User", user_id)?;
    let managed = parse_id_list("managedDepartmentIds", managed_department_ids)?;
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            find_user(txn, caller.account_id, id)
                .await?
                .ok_or_else(|| not_found("User", &raw_id))?;
            require_departments(txn, caller.account_id, &managed, "managedDepartmentIds").await?;
            let before = managed_of(txn, id).await?;
            if before == managed {
                return Ok(());
            }
            user_managed_department::Entity::delete_many()
                .filter(user_managed_department::Column::UserId.eq(id))
                .exec(txn)
                .await?;
            insert_managed(txn, id, &managed).await?;
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "user.set_managed_departments",
                    entity_type: "user",
                    entity_id: id,
                    before: Some(json!({ "managedDepartmentIds": before })),
                    after: Some(json!({ "managedDepartmentIds": managed })),
                },
            )
            .await
        })
    })
    .await
}

/// Activates or deactivates the user; a deactivated user is refused from its next
/// request on. The account always keeps one active account owner.
pub async fn set_user_active(
    db: &DatabaseConnection,
    caller: &Caller,
    user_id: &str,
    active: bool,
) -> ServiceResult<()> {
    caller.grant(Operation::ManageDirectory)?;
    let raw_id = user_id.to_owned();
    let id = parse_resource_id("User", user_id)?;
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            let current = find_user(txn, caller.account_id, id)
                .await?
                .ok_or_else(|| not_found("User", &raw_id))?;
            if current.active == active {
                return Ok(());
            }
            if !active && current.role == Role::AccountOwner {
                keep_an_active_owner(txn, caller.account_id, id).await?;
            }
            let mut updated: user::ActiveModel = current.into();
            updated.active = Set(active);
            updated.updated_at = Set(chrono::Utc::now());
            updated.update(txn).await?;
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "user.set_active",
                    entity_type: "user",
                    entity_id: id,
                    before: Some(json!({ "active": !active })),
                    after: Some(json!({ "active": active })),
                },
            )
            .await
        })
    })
    .await
}

// ---- groups ----

/// Creates a plain group, or a smart group when `smart_department_id` is given.
pub async fn create_group(
    db: &DatabaseConnection,
    caller: &Caller,
    new: NewGroup,
) -> ServiceResult<Uuid> {
    caller.grant(Operation::ManageDirectory)?;
    let name = GroupName::parse(&new.name)?.into_inner();
    let raw_smart = new.smart_department_id.filter(|raw| !raw.trim().is_empty());
    let smart = raw_smart
        .as_deref()
        .map(|raw| parse_field_id("smartDepartmentId", raw))
        .transpose()?;
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            if let (Some(id), Some(raw)) = (smart, raw_smart.as_deref()) {
                require_department(txn, caller.account_id, id, "smartDepartmentId", raw).await?;
            }
            let created = group::ActiveModel {
                id: Set(new_id()),
                account_id: Set(caller.account_id),
                name: Set(name),
                smart_department_id: Set(smart),
            }
            .insert(txn)
            .await?;
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "group.create",
                    entity_type: "group",
                    entity_id: created.id,
                    before: None,
                    after: Some(json!({
                        "name": created.name,
                        "smartDepartmentId": created.smart_department_id,
                    })),
                },
            )
            .await?;
            Ok(created.id)
        })
    })
    .await
}

/// Adds users to a plain group and returns how many were new to it; existing members
/// are left as they are. A smart group has no stored members: FAILED_PRECONDITION.
pub async fn add_group_members(
    db: &DatabaseConnection,
    caller: &Caller,
    group_id: &str,
    user_ids: &[String],
) -> ServiceResult<u64> {
    caller.grant(Operation::ManageDirectory)?;
    let raw_id = group_id.to_owned();
    let id = parse_resource_id("Group", group_id)?;
    let users = parse_id_list("userIds", user_ids)?;
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            let group = group::Entity::find_by_id(id)
                .filter(group::Column::AccountId.eq(caller.account_id))
                .one(txn)
                .await?
                .ok_or_else(|| not_found("Group", &raw_id))?;
            if group.smart_department_id.is_some() {
                return Err(ServiceError::Conflict(format!(
                    "Group '{id}' is a smart group: its members are the users of its department subtree and cannot be added."
                )));
            }
            require_users(txn, caller.account_id, &users, "userIds").await?;
            let mut existing = HashSet::new();
            for chunk in users.chunks(ID_CHUNK) {
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
            // Two columns a row: stay below the bound-parameter limits.
            for chunk in rows.chunks(ID_CHUNK / 2) {
                group_member::Entity::insert_many(chunk.to_vec()).exec_without_returning(txn).await?;
            }
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "group.add_members",
                    entity_type: "group",
                    entity_id: id,
                    before: None,
                    after: Some(json!({ "addedUserIds": added })),
                },
            )
            .await?;
            Ok(added.len() as u64)
        })
    })
    .await
}

// ---- projects, content, enrollments ----

pub async fn create_project(
    db: &DatabaseConnection,
    caller: &Caller,
    new: NewProject,
) -> ServiceResult<Uuid> {
    caller.grant(Operation::ManageDirectory)?;
    let name = required_text("name", &new.name, MAX_NAME_CHARS)?;
    let authors = parse_id_list("authorIds", &new.author_ids)?;
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            require_users(txn, caller.account_id, &authors, "authorIds").await?;
            let created = project::ActiveModel {
                id: Set(new_id()),
                account_id: Set(caller.account_id),
                name: Set(name),
            }
            .insert(txn)
            .await?;
            let rows: Vec<project_author::ActiveModel> = authors
                .iter()
                .map(|user_id| project_author::ActiveModel {
                    project_id: Set(created.id),
                    user_id: Set(*user_id),
                })
                .collect();
            for chunk in rows.chunks(ID_CHUNK / 2) {
                project_author::Entity::insert_many(chunk.to_vec())
                    .exec_without_returning(txn)
                    .await?;
            }
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "project.create",
                    entity_type: "project",
                    entity_id: created.id,
                    before: None,
                    after: Some(json!({ "name": created.name, "authorIds": authors })),
                },
            )
            .await?;
            Ok(created.id)
        })
    })
    .await
}

pub async fn create_content_item(
    db: &DatabaseConnection,
    caller: &Caller,
    new: NewContentItem,
) -> ServiceResult<Uuid> {
    caller.grant(Operation::ManageDirectory)?;
    let project_id = parse_field_id("projectId", &new.project_id)?;
    let user_id = parse_field_id("userId", &new.user_id)?;
    let title = required_text("title", &new.title, MAX_NAME_CHARS)?;
    if new.description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(ServiceError::invalid(format!(
            "description must be at most {MAX_DESCRIPTION_CHARS} characters."
        )));
    }
    let content_type = required_text("type", &new.content_type, MAX_TYPE_CHARS)?;
    let added_at = match new
        .added_date
        .as_deref()
        .map(str::trim)
        .filter(|raw| !raw.is_empty())
    {
        Some(raw) => parse_added_date(raw)?,
        None => whole_seconds(chrono::Utc::now()),
    };
    let view_url = new
        .view_url
        .as_deref()
        .map(str::trim)
        .filter(|raw| !raw.is_empty())
        .map(parse_view_url)
        .transpose()?;
    let description = new.description;
    let (raw_project, raw_user) = (new.project_id, new.user_id);
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            project::Entity::find_by_id(project_id)
                .filter(project::Column::AccountId.eq(caller.account_id))
                .one(txn)
                .await?
                .ok_or_else(|| unknown("projectId", &raw_project, "project"))?;
            find_user(txn, caller.account_id, user_id)
                .await?
                .ok_or_else(|| unknown("userId", &raw_user, "user"))?;
            let created = content_item::ActiveModel {
                id: Set(new_id()),
                account_id: Set(caller.account_id),
                project_id: Set(project_id),
                title: Set(title),
                description: Set(description),
                user_id: Set(user_id),
                added_at: Set(added_at),
                content_type: Set(content_type),
                view_url: Set(view_url),
            }
            .insert(txn)
            .await?;
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "content_item.create",
                    entity_type: "content_item",
                    entity_id: created.id,
                    before: None,
                    after: Some(json!({
                        "projectId": created.project_id,
                        "title": created.title,
                        "description": created.description,
                        "userId": created.user_id,
                        "addedDate": format_added_date(created.added_at),
                        "type": created.content_type,
                        "viewUrl": created.view_url,
                    })),
                },
            )
            .await?;
            Ok(created.id)
        })
    })
    .await
}

/// Enrolls a user in a content item and returns the enrollment id. Enrolling the same
/// user in the same item again returns the existing enrollment (a retry is harmless).
pub async fn create_enrollment(
    db: &DatabaseConnection,
    caller: &Caller,
    new: NewEnrollment,
) -> ServiceResult<Uuid> {
    caller.grant(Operation::ManageDirectory)?;
    let learner_id = parse_field_id("learnerId", &new.learner_id)?;
    let content_item_id = parse_field_id("contentItemId", &new.content_item_id)?;
    let (raw_learner, raw_item) = (new.learner_id, new.content_item_id);
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            find_user(txn, caller.account_id, learner_id)
                .await?
                .ok_or_else(|| unknown("learnerId", &raw_learner, "user"))?;
            content_item::Entity::find_by_id(content_item_id)
                .filter(content_item::Column::AccountId.eq(caller.account_id))
                .one(txn)
                .await?
                .ok_or_else(|| unknown("contentItemId", &raw_item, "content item"))?;
            let existing = enrollment::Entity::find()
                .select_only()
                .column(enrollment::Column::Id)
                .filter(enrollment::Column::AccountId.eq(caller.account_id))
                .filter(enrollment::Column::LearnerId.eq(learner_id))
                .filter(enrollment::Column::ContentItemId.eq(content_item_id))
                .into_tuple::<Uuid>()
                .one(txn)
                .await?;
            if let Some(existing) = existing {
                return Ok(existing);
            }
            let created = enrollment::ActiveModel {
                id: Set(new_id()),
                account_id: Set(caller.account_id),
                learner_id: Set(learner_id),
                content_item_id: Set(content_item_id),
                created_at: Set(chrono::Utc::now()),
            }
            .insert(txn)
            .await?;
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "enrollment.create",
                    entity_type: "enrollment",
                    entity_id: created.id,
                    before: None,
                    after: Some(json!({
                        "learnerId": learner_id,
                        "contentItemId": content_item_id,
                    })),
                },
            )
            .await?;
            Ok(created.id)
        })
    })
    .await
}

// ---- points ----

/// Adds `points` (possibly negative) to the user's total and returns the new total.
/// The account write lock serializes concurrent additions, so none is lost.
pub async fn add_points(
    db: &DatabaseConnection,
    caller: &Caller,
    user_id: &str,
    points: i64,
) -> ServiceResult<i64> {
    caller.grant(Operation::ManageDirectory)?;
    let raw_id = user_id.to_owned();
    let id = parse_resource_id("User", user_id)?;
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            find_user(txn, caller.account_id, id)
                .await?
                .ok_or_else(|| not_found("User", &raw_id))?;
            let current = user_points::Entity::find_by_id(id).one(txn).await?;
            let before = current.as_ref().map_or(0, |row| row.points);
            let total = before.checked_add(points).ok_or_else(|| {
                ServiceError::invalid(format!(
                    "points {points} would take the user's total of {before} out of range."
                ))
            })?;
            match current {
                Some(row) => {
                    let mut updated: user_points::ActiveModel = row.into();
                    updated.points = Set(total);
                    updated.update(txn).await?;
                }
                None => {
                    user_points::ActiveModel {
                        user_id: Set(id),
                        account_id: Set(caller.account_id),
                        points: Set(total),
                    }
                    .insert(txn)
                    .await?;
                }
            }
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "points.add",
                    entity_type: "user",
                    entity_id: id,
                    before: Some(json!({ "points": before })),
                    after: Some(json!({ "points": total, "added": points })),
                },
            )
            .await?;
            Ok(total)
        })
    })
    .await
}

// ---- validation ----

/// A role checked for form; [`ParsedRole::check_exists`] checks the custom role.
#[derive(Debug, Clone)]
struct ParsedRole {
    role: Role,
    custom_role_id: Option<Uuid>,
    raw_custom_role_id: String,
}

impl ParsedRole {
    fn parse(assignment: Option<&RoleAssignment>) -> ServiceResult<Self> {
        let Some(assignment) = assignment else {
            return Err(ServiceError::invalid("role is required."));
        };
        let raw_role = assignment.role.trim();
        if raw_role.is_empty() {
            return Err(ServiceError::invalid("role is required."));
        }
        let role = Role::parse(raw_role).ok_or_else(|| {
            let names: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
            ServiceError::invalid(format!(
                "role '{}' is not one of {}.",
                clip(raw_role),
                names.join(", ")
            ))
        })?;
        let raw_custom = assignment
            .custom_role_id
            .as_deref()
            .map(str::trim)
            .filter(|raw| !raw.is_empty());
        let custom_role_id = match (role, raw_custom) {
            (Role::Custom, Some(raw)) => Some(parse_field_id("customRoleId", raw)?),
            (Role::Custom, None) => {
                return Err(ServiceError::invalid(
                    "customRoleId is required when role is custom.",
                ));
            }
            (_, Some(_)) => {
                return Err(ServiceError::invalid(
                    "customRoleId may be given only when role is custom.",
                ));
            }
            (_, None) => None,
        };
        Ok(Self {
            role,
            custom_role_id,
            raw_custom_role_id: raw_custom.unwrap_or_default().to_owned(),
        })
    }

    async fn check_exists(
        &self,
        conn: &impl ConnectionTrait,
        account_id: Uuid,
    ) -> ServiceResult<()> {
        let Some(id) = self.custom_role_id else {
            return Ok(());
        };
        custom_role::Entity::find_by_id(id)
            .filter(custom_role::Column::AccountId.eq(account_id))
            .one(conn)
            .await?
            .ok_or_else(|| unknown("customRoleId", &self.raw_custom_role_id, "custom role"))?;
        Ok(())
    }
}

/// A login: trimmed, 1 to 255 characters, one `@` between a local part and a domain,
/// and only visible ASCII, since it travels in the `X-Auth-Email` header.
fn parse_email(raw: &str) -> ServiceResult<String> {
    let email = raw.trim();
    if email.is_empty() {
        return Err(ServiceError::invalid("email is required."));
    }
    if email.chars().count() > MAX_EMAIL_CHARS {
        return Err(ServiceError::invalid(format!(
            "email must be at most {MAX_EMAIL_CHARS} characters."
        )));
    }
    if !email.chars().all(|c| c.is_ascii_graphic()) {
        return Err(ServiceError::invalid(format!(
            "email '{}' must consist of visible ASCII characters (no spaces), as it is sent in the X-Auth-Email header.",
            clip(email)
        )));
    }
    match email.split_once('@') {
        Some((local, domain))
            if !local.is_empty() && !domain.is_empty() && !domain.contains('@') =>
        {
            Ok(email.to_owned())
        }
        _ => Err(ServiceError::invalid(format!(
            "email '{}' must be an address of the form name@domain.",
            clip(email)
        ))),
    }
}

/// A password: 8 to 1,024 printable ASCII characters without leading or trailing
/// spaces, since it travels in the `X-Auth-Password` header (which is trimmed).
fn check_password(password: &str) -> ServiceResult<()> {
    if password.is_empty() {
        return Err(ServiceError::invalid("password is required."));
    }
    let chars = password.chars().count();
    if chars < MIN_PASSWORD_CHARS {
        return Err(ServiceError::invalid(format!(
            "password must be at least {MIN_PASSWORD_CHARS} characters."
        )));
    }
    if chars > MAX_PASSWORD_CHARS {
        return Err(ServiceError::invalid(format!(
            "password must be at most {MAX_PASSWORD_CHARS} characters."
        )));
    }
    if !password.chars().all(|c| c == ' ' || c.is_ascii_graphic()) {
        return Err(ServiceError::invalid(
            "password must consist of printable ASCII characters, as it is sent in the X-Auth-Password header.",
        ));
    }
    if password.starts_with(' ') || password.ends_with(' ') {
        return Err(ServiceError::invalid(
            "password must not start or end with a space, as header values are trimmed.",
        ));
    }
    Ok(())
}

/// Trimmed text that is not blank, at most `max` characters, without control characters.
fn required_text(field: &str, raw: &str, max: usize) -> ServiceResult<String> {
    let text = raw.trim();
    if text.is_empty() {
        return Err(ServiceError::invalid(format!("{field} must not be blank.")));
    }
    if text.chars().count() > max {
        return Err(ServiceError::invalid(format!(
            "{field} must be at most {max} characters."
        )));
    }
    if text.chars().any(char::is_control) {
        return Err(ServiceError::invalid(format!(
            "{field} must not contain control characters."
        )));
    }
    Ok(text.to_owned())
}

/// RFC 3339 / ISO 8601 with an offset, stored in UTC to the second.
fn parse_added_date(raw: &str) -> ServiceResult<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(raw)
        .map(|at| whole_seconds(at.with_timezone(&chrono::Utc)))
        .map_err(|_| {
            ServiceError::invalid(format!(
                "addedDate '{}' must be a date and time with an offset, e.g. 2019-03-26T06:34:57+00:00.",
                clip(raw)
            ))
        })
}

fn whole_seconds(at: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(at.timestamp(), 0).unwrap_or(at)
}

/// An absolute `http` or `https` URL with a host.
fn parse_view_url(raw: &str) -> ServiceResult<String> {
    let invalid = || {
        ServiceError::invalid(format!(
            "viewUrl '{}' must be an absolute http or https URL.",
            clip(raw)
        ))
    };
    if raw.chars().count() > MAX_URL_CHARS {
        return Err(ServiceError::invalid(format!(
            "viewUrl must be at most {MAX_URL_CHARS} characters."
        )));
    }
    let uri: http::Uri = raw.parse().map_err(|_| invalid())?;
    let scheme_ok = uri
        .scheme_str()
        .is_some_and(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"));
    let host_ok = uri.host().is_some_and(|h| !h.is_empty());
    if scheme_ok && host_ok {
        Ok(raw.to_owned())
    } else {
        Err(invalid())
    }
}

/// Ids of a list field: each a UUID, repeated ids counted once, at most [`MAX_LIST_IDS`].
/// Returned in ascending order.
fn parse_id_list(field: &str, raw_ids: &[String]) -> ServiceResult<Vec<Uuid>> {
    if raw_ids.len() > MAX_LIST_IDS {
        return Err(ServiceError::invalid(format!(
            "{field} must contain at most {MAX_LIST_IDS} ids; {} were given.",
            raw_ids.len()
        )));
    }
    let ids: BTreeSet<Uuid> = raw_ids
        .iter()
        .map(|raw| {
            parse_uuid(raw).ok_or_else(|| {
                ServiceError::invalid(format!(
                    "{field}: '{}' is not a valid identifier.",
                    clip(raw)
                ))
            })
        })
        .collect::<ServiceResult<_>>()?;
    Ok(ids.into_iter().collect())
}

/// INVALID_ARGUMENT for a field id that names nothing in the account.
fn unknown(field: &str, raw: &str, what: &str) -> ServiceError {
    ServiceError::invalid(format!(
        "{field} '{}' does not name a {what} of this account.",
        clip(raw)
    ))
}

// ---- lookups ----

async fn find_user(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    user_id: Uuid,
) -> ServiceResult<Option<user::Model>> {
    Ok(user::Entity::find_by_id(user_id)
        .filter(user::Column::AccountId.eq(account_id))
        .one(conn)
        .await?)
}

async fn require_department(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    department_id: Uuid,
    field: &str,
    raw: &str,
) -> ServiceResult<()> {
    department::Entity::find_by_id(department_id)
        .filter(department::Column::AccountId.eq(account_id))
        .one(conn)
        .await?
        .ok_or_else(|| unknown(field, raw, "department"))?;
    Ok(())
}

/// Every one of `ids` (ascending) names a department of the account; otherwise the
/// error names the first that does not.
async fn require_departments(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    ids: &[Uuid],
    field: &str,
) -> ServiceResult<()> {
    let mut found = HashSet::with_capacity(ids.len());
    for chunk in ids.chunks(ID_CHUNK) {
        found.extend(
            department::Entity::find()
                .select_only()
                .column(department::Column::Id)
                .filter(department::Column::AccountId.eq(account_id))
                .filter(department::Column::Id.is_in(chunk.iter().copied()))
                .into_tuple::<Uuid>()
                .all(conn)
                .await?,
        );
    }
    match ids.iter().find(|id| !found.contains(id)) {
        Some(missing) => Err(unknown(field, &missing.to_string(), "department")),
        None => Ok(()),
    }
}

/// Every one of `ids` (ascending) names a user of the account; otherwise the error
/// names the first that does not.
async fn require_users(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    ids: &[Uuid],
    field: &str,
) -> ServiceResult<()> {
    let found = scope::existing_users(conn, account_id, ids).await?;
    match ids.iter().find(|id| !found.contains(id)) {
        Some(missing) => Err(unknown(field, &missing.to_string(), "user")),
        None => Ok(()),
    }
}

/// The departments `user_id` manages, ascending.
async fn managed_of(conn: &impl ConnectionTrait, user_id: Uuid) -> ServiceResult<Vec<Uuid>> {
    let mut ids: Vec<Uuid> = user_managed_department::Entity::find()
        .select_only()
        .column(user_managed_department::Column::DepartmentId)
        .filter(user_managed_department::Column::UserId.eq(user_id))
        .into_tuple()
        .all(conn)
        .await?;
    ids.sort_unstable();
    Ok(ids)
}

async fn insert_managed(
    conn: &impl ConnectionTrait,
    user_id: Uuid,
    department_ids: &[Uuid],
) -> ServiceResult<()> {
    let rows: Vec<user_managed_department::ActiveModel> = department_ids
        .iter()
        .map(|department_id| user_managed_department::ActiveModel {
            user_id: Set(user_id),
            department_id: Set(*department_id),
        })
        .collect();
    // Two columns a row: stay below the bound-parameter limits.
    for chunk in rows.chunks(ID_CHUNK / 2) {
        user_managed_department::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(conn)
            .await?;
    }
    Ok(())
}

/// Refuses a change that would leave the account without an active account owner
/// (nobody could then manage the directory or administer the account).
async fn keep_an_active_owner(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    user_id: Uuid,
) -> ServiceResult<()> {
    let others = user::Entity::find()
        .filter(user::Column::AccountId.eq(account_id))
        .filter(user::Column::Role.eq(Role::AccountOwner))
        .filter(user::Column::Active.eq(true))
        .filter(user::Column::Id.ne(user_id))
        .count(conn)
        .await?;
    if others == 0 {
        return Err(ServiceError::Conflict(format!(
            "User '{user_id}' is the last active account owner; make another user account_owner first."
        )));
    }
    Ok(())
}

/// What the audit table records of a user: never the password hash.
fn user_snapshot(user: &user::Model, managed: &[Uuid]) -> serde_json::Value {
    json!({
        "email": user.email,
        "role": user.role,
        "customRoleId": user.custom_role_id,
        "departmentId": user.department_id,
        "managedDepartmentIds": managed,
        "active": user.active,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_must_be_addresses_that_fit_in_a_header() {
        assert_eq!(
            parse_email("  Bob@Example.com ").unwrap(),
            "Bob@Example.com"
        );
        for bad in [
            "",
            "   ",
            "bob",
            "@example.com",
            "bob@",
            "bo b@example.com",
            "bób@example.com",
            "a@b@c",
        ] {
            let err = parse_email(bad).unwrap_err();
            assert!(err.to_string().contains("email"), "{bad}: {err}");
        }
        let long = format!("{}@example.com", "a".repeat(250));
        assert!(parse_email(&long).unwrap_err().to_string().contains("255"));
    }

    #[test]
    fn passwords_need_eight_printable_ascii_characters() {
        assert!(check_password("correct horse").is_ok());
        for bad in [
            "",
            "short",
            " padded password",
            "padded password ",
            "pässwörter",
            "tab\there!",
        ] {
            let err = check_password(bad).unwrap_err();
            assert!(err.to_string().contains("password"), "{bad:?}: {err}");
        }
        assert!(check_password(&"x".repeat(MAX_PASSWORD_CHARS + 1)).is_err());
    }

    #[test]
    fn roles_are_built_in_names_or_custom_with_an_id() {
        let assign = |role: &str, custom: Option<&str>| RoleAssignment {
            role: role.into(),
            custom_role_id: custom.map(Into::into),
        };
        let learner = ParsedRole::parse(Some(&assign("learner", None))).unwrap();
        assert_eq!(
            (learner.role, learner.custom_role_id),
            (Role::Learner, None)
        );
        // A blank custom role id counts as none.
        assert!(ParsedRole::parse(Some(&assign("learner", Some(" ")))).is_ok());
        let id = Uuid::now_v7().to_string();
        let custom = ParsedRole::parse(Some(&assign("custom", Some(&id)))).unwrap();
        assert_eq!(custom.role, Role::Custom);
        for (assignment, needle) in [
            (None, "role is required"),
            (Some(assign("", None)), "role is required"),
            (Some(assign("Learner", None)), "role 'Learner'"),
            (Some(assign("custom", None)), "customRoleId is required"),
            (Some(assign("custom", Some("nope"))), "customRoleId 'nope'"),
            (
                Some(assign("learner", Some(&id))),
                "customRoleId may be given only",
            ),
        ] {
            let err = ParsedRole::parse(assignment.as_ref()).unwrap_err();
            assert!(err.to_string().contains(needle), "{err}");
        }
    }

    #[test]
    fn added_dates_are_stored_in_utc_to_the_second() {
        let at = parse_added_date("2019-03-26T08:34:57.789+02:00").unwrap();
        assert_eq!(format_added_date(at), "2019-03-26T06:34:57+00:00");
        assert!(parse_added_date("2019-03-26T06:34:57").is_err());
        assert!(
            parse_added_date("yesterday")
                .unwrap_err()
                .to_string()
                .contains("addedDate")
        );
    }

    #[test]
    fn view_urls_are_absolute_http_urls() {
        assert!(parse_view_url("https://cdn.example.com/view/1?x=2").is_ok());
        assert!(parse_view_url("HTTP://cdn.example.com").is_ok());
        for bad in [
            "/view/1",
            "ftp://cdn.example.com/x",
            "https://",
            "https://exa mple.com",
            "view",
        ] {
            let err = parse_view_url(bad).unwrap_err();
            assert!(err.to_string().contains("viewUrl"), "{bad}: {err}");
        }
    }

    #[test]
    fn id_lists_are_deduplicated_and_name_the_field_of_a_bad_id() {
        let a = Uuid::now_v7();
        let ids = parse_id_list("userIds", &[a.to_string(), a.to_string().to_uppercase()]).unwrap();
        assert_eq!(ids, vec![a]);
        let err = parse_id_list("userIds", &["x".into()]).unwrap_err();
        assert_eq!(err.to_string(), "userIds: 'x' is not a valid identifier.");
    }
}
