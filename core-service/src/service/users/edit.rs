//! Add, change and delete users (neighbours.md sections 4.6 to 4.10), one function per
//! operation for both doors: `POST /user`, `/user/{id}`, `/user/{id}/password` and
//! `/user/{id}/status` over HTTP, and `CreateUser`, `SetUserPassword`, `SetUserRole`,
//! `SetUserManagedDepartments` and `SetUserActive` of `lms.v1.DirectoryService`.
//!
//! One hashing, one duplicate-login rule, one way of telling the authenticator (through
//! `service::write`), so a password, role or status change applies on the caller's next request.
//! Who may: owners and administrators everywhere; department administrators and custom
//! roles with `user.create`/`user.update` only for users of their subtrees, never making or
//! changing an owner or administrator (a scoped caller must not reach above its scope by
//! resetting an administrator's password).

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _,
    QueryFilter as _, QuerySelect as _, Set, prelude::Uuid,
};

use crate::service::{
    Parsed,
    audit::{AuditAction, Change},
    lookups::{department_in_scope, find_user, require_department, require_departments},
    users::fields::{self as user_fields, email_of},
    users::{
        self, ActiveChange, Names, NewUser, PasswordChange, RoleChoice, fields_snapshot,
        insert_managed, keep_an_active_owner, managed_of, user_snapshot,
    },
    write,
};
use crate::{
    access::{Caller, Grant, Operation},
    auth::Verifier,
    domain::{
        ids::{IdList, ResourceRef, clip},
        login::{EmailAddress, Login, PlainPassword, email_key},
        profile_fields::ProfileFields,
        roles::Role,
    },
    entities::{
        api_client, api_token, audit_log, content_item, enrollment, group_member, project_author,
        user, user_field, user_managed_department, user_points, user_sign_in,
    },
    error::{ServiceError, ServiceResult},
};

/// A user to add, as `POST /user` gives it.
#[derive(Debug, Clone)]
pub struct NewProfile {
    pub login: Login,
    pub names: Names,
    /// The e-mail address when given; `None`: the login, if it is one.
    pub email: Option<EmailAddress>,
    pub fields: ProfileFields,
    /// Plain groups the user joins.
    pub group_ids: IdList,
    /// Absent: the user gets a random password nobody knows, and signs in once one is set.
    pub password: Option<PlainPassword>,
    pub role: RoleChoice,
    pub department_id: Uuid,
    pub managed_department_ids: IdList,
    /// Inactive users are refused at sign-in (`POST /user` adds active ones).
    pub active: bool,
    /// The identity provider's id (SCIM `externalId`); REST never sets it.
    pub external_id: Option<String>,
}

/// The status codes of neighbours 4.10: 1 active, 3 blocked, 5 employment ended (both 3 and
/// 5 keep the user from signing in; the profile tells them apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserStatus {
    Active,
    Blocked,
    EmploymentEnded,
}

pub async fn add_user(
    db: &DatabaseConnection,
    verifier: &Verifier,
    caller: &Caller,
    new: Parsed<NewProfile>,
) -> ServiceResult<Uuid> {
    let grant = caller.grant(Operation::CreateUser)?;
    let new = new?;
    if grant == Grant::InScope {
        refuse_above_scope(new.role.role)?;
        let departments =
            std::iter::once(&new.department_id).chain(new.managed_department_ids.as_slice());
        for department in departments {
            if !department_in_scope(db, &caller.managed_department_ids, *department).await? {
                return Err(ServiceError::denied(format!(
                    "Department '{department}' is outside the departments you manage."
                )));
            }
        }
    }
    let password = new.password;
    let new = NewUser {
        login: new.login,
        names: new.names,
        email: new.email,
        fields: new.fields,
        group_ids: new.group_ids,
        password,
        role: new.role,
        department_id: new.department_id,
        managed_department_ids: new.managed_department_ids,
        active: new.active,
        external_id: new.external_id,
    };
    users::insert_user(db, verifier, caller, new).await
}

pub async fn change_password(
    db: &DatabaseConnection,
    verifier: &Verifier,
    caller: &Caller,
    user: ResourceRef,
    password: Parsed<PlainPassword>,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateUser)?;
    let password = password?;
    reachable_user(db, caller, grant, &user).await?;
    users::store_password(db, verifier, caller, PasswordChange { user, password }).await
}

pub async fn change_status(
    db: &DatabaseConnection,
    caller: &Caller,
    user: ResourceRef,
    status: Parsed<UserStatus>,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateUser)?;
    let status = status?;
    reachable_user(db, caller, grant, &user).await?;
    let change = ActiveChange { user, status };
    users::store_active(db, caller, change).await
}

/// The fields of `POST /user/{id}` that were given; the others stay.
#[derive(Debug, Clone, Default)]
pub struct ProfileChanges {
    pub login: Option<Login>,
    pub email: Option<EmailAddress>,
    /// Fields to set (an empty value removes one); fields not named stay.
    pub fields: ProfileFields,
    /// The whole new set of plain groups, when given.
    pub group_ids: Option<IdList>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub role: Option<RoleChoice>,
    pub department_id: Option<Uuid>,
    /// The whole new set of managed departments, when given.
    pub managed_department_ids: Option<NamedIds>,
    /// The new SCIM `externalId` (`Some(None)` clears it), when given.
    pub external_id: Option<Option<String>>,
}

/// An id list with the name the request gives it, for the messages naming it
/// (`manageableDepartmentIds` over HTTP, `managedDepartmentIds` in the directory).
#[derive(Debug, Clone)]
pub struct NamedIds {
    pub field: &'static str,
    pub ids: IdList,
}

pub async fn update_user(
    db: &DatabaseConnection,
    caller: &Caller,
    user: ResourceRef,
    changes: Parsed<ProfileChanges>,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateUser)?;
    let changes = changes?;
    reachable_user(db, caller, grant, &user).await?;
    if grant == Grant::InScope {
        if let Some(role) = &changes.role {
            refuse_above_scope(role.role)?;
        }
        let managed = changes
            .managed_department_ids
            .as_ref()
            .map(|named| &named.ids);
        let departments = changes
            .department_id
            .iter()
            .chain(managed.map_or(&[][..], IdList::as_slice));
        for department in departments {
            if !department_in_scope(db, &caller.managed_department_ids, *department).await? {
                return Err(ServiceError::denied(format!(
                    "Department '{department}' is outside the departments you manage."
                )));
            }
        }
    }
    write(db, caller, async |w| {
        apply_profile_changes(w, caller, &user, &changes).await
    })
    .await
}

/// Applies `changes` to the user `user` names inside a write, for a caller already allowed to
/// ([`update_user`], and SCIM's writes, which add their own changes in the same transaction).
/// Changing nothing records nothing.
pub async fn apply_profile_changes(
    w: &crate::service::write::Write,
    caller: &Caller,
    user: &ResourceRef,
    changes: &ProfileChanges,
) -> ServiceResult<()> {
    let id = user.id("User")?;
    {
        let txn = w.txn();
        let current = find_user(txn, caller.account_id, id)
            .await?
            .ok_or_else(|| user.not_found("User"))?;
        let managed_before = managed_of(txn, id).await?;
        let mut next = current.clone();
        if let Some(login) = &changes.login {
            let key = login.key();
            if key != current.email_key {
                let taken = users::login_owner(txn, caller.account_id, &key).await?;
                if let Some(existing) = taken {
                    return Err(ServiceError::invalid(format!(
                        "email '{}' must be unique: it is the login of user {existing}",
                        clip(login.as_str())
                    )));
                }
            }
            next.email = login.as_str().to_owned();
            next.email_key = key;
        }
        next.contact_email = user_fields::contact_after(&current, &next, changes.email.as_ref());
        next.contact_email_key = next.contact_email.as_deref().map(email_key);
        let address = next.contact_email.as_deref().unwrap_or(&next.email);
        if email_key(address) != email_key(email_of(&current)) {
            let taken =
                user_fields::address_taken(txn, caller.account_id, address, Some(id)).await?;
            if let Some(existing) = taken {
                return Err(ServiceError::invalid(format!(
                    "email '{}' must be unique: it is the e-mail address of user {existing}",
                    clip(address)
                )));
            }
        }
        if let Some(first) = &changes.first_name {
            next.first_name = first.clone();
        }
        if let Some(last) = &changes.last_name {
            next.last_name = last.clone();
        }
        if let Some(external_id) = &changes.external_id {
            next.external_id = external_id.clone();
        }
        if let Some(role) = &changes.role {
            role.check_exists(txn, caller.account_id).await?;
            next.role = role.role;
            next.custom_role_id = role.custom_role_id;
            let demoted = current.role == Role::AccountOwner && next.role != Role::AccountOwner;
            if demoted && current.active {
                keep_an_active_owner(txn, caller.account_id, id).await?;
            }
        }
        if let Some(department_id) = changes.department_id {
            require_department(txn, caller.account_id, department_id, "departmentId").await?;
            next.department_id = department_id;
        }
        let mut managed_after = managed_before.clone();
        if let Some(NamedIds { field, ids }) = &changes.managed_department_ids {
            let managed = ids.as_slice();
            require_departments(txn, caller.account_id, managed, field).await?;
            managed_after = managed.to_vec();
        }
        let fields = user_fields::store_fields(txn, id, &changes.fields).await?;
        let groups = match &changes.group_ids {
            Some(groups) => {
                let groups = groups.as_slice();
                let before =
                    user_fields::replace_groups(txn, caller.account_id, id, groups).await?;
                (before != groups).then(|| (before, groups.to_vec()))
            }
            None => None,
        };
        let unchanged = next == current && managed_after == managed_before;
        if unchanged && fields.is_none() && groups.is_none() {
            return Ok(());
        }
        if managed_after != managed_before {
            user_managed_department::Entity::delete_many()
                .filter(user_managed_department::Column::UserId.eq(id))
                .exec(txn)
                .await?;
            insert_managed(txn, id, &managed_after).await?;
        }
        if next != current {
            let mut updated: user::ActiveModel = current.clone().into();
            updated.email = Set(next.email.clone());
            updated.email_key = Set(next.email_key.clone());
            updated.contact_email = Set(next.contact_email.clone());
            updated.contact_email_key = Set(next.contact_email_key.clone());
            updated.first_name = Set(next.first_name.clone());
            updated.last_name = Set(next.last_name.clone());
            updated.role = Set(next.role);
            updated.custom_role_id = Set(next.custom_role_id);
            updated.department_id = Set(next.department_id);
            updated.external_id = Set(next.external_id.clone());
            updated.updated_at = Set(chrono::Utc::now());
            next = updated.update(txn).await?;
        }
        let mut before = user_snapshot(&current, &managed_before);
        let mut after = user_snapshot(&next, &managed_after);
        if let Some(fields) = fields {
            before["fields"] = fields_snapshot(&fields.before);
            after["fields"] = fields_snapshot(&fields.after);
        }
        if let Some((groups_before, groups_after)) = groups {
            before["groupIds"] = serde_json::json!(groups_before);
            after["groupIds"] = serde_json::json!(groups_after);
        }
        w.record(Change {
            action: AuditAction::UserUpdated,
            entity_id: id,
            before: Some(before),
            after: Some(after),
        });
        Ok(())
    }
}

/// Deletes the user with what only it owns: memberships, managed departments, points,
/// enrollments, authorships, API clients and their tokens. The audit history keeps naming
/// whoever acted, and content items their author, so such users are refused (400): block
/// them instead (status 3).
pub async fn delete_user(
    db: &DatabaseConnection,
    caller: &Caller,
    user: &ResourceRef,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::DeleteUser)?;
    reachable_user(db, caller, grant, user).await?;
    let id = user.id("User")?;
    if id == caller.user_id {
        return Err(ServiceError::invalid(
            "You cannot delete yourself; another administrator can.",
        ));
    }
    write(db, caller, async |w| {
        let txn = w.txn();
        let current = find_user(txn, caller.account_id, id)
            .await?
            .ok_or_else(|| user.not_found("User"))?;
        if current.role == Role::AccountOwner && current.active {
            keep_an_active_owner(txn, caller.account_id, id).await?;
        }
        let acted = audit_log::Entity::find()
            .select_only()
            .column(audit_log::Column::Id)
            .filter(audit_log::Column::ActorUserId.eq(id))
            .limit(1)
            .into_tuple::<Uuid>()
            .one(txn)
            .await?;
        if acted.is_some() {
            return Err(ServiceError::invalid(format!(
                "User '{id}' cannot be deleted: the audit history records changes they made; \
                 block the user instead (status 3)."
            )));
        }
        let authored = content_item::Entity::find()
            .select_only()
            .column(content_item::Column::Id)
            .filter(content_item::Column::UserId.eq(id))
            .limit(1)
            .into_tuple::<Uuid>()
            .one(txn)
            .await?;
        if authored.is_some() {
            return Err(ServiceError::invalid(format!(
                "User '{id}' cannot be deleted: they are the author of content items; \
                 block the user instead (status 3)."
            )));
        }
        let managed = managed_of(txn, id).await?;
        let clients: Vec<Uuid> = api_client::Entity::find()
            .select_only()
            .column(api_client::Column::Id)
            .filter(api_client::Column::UserId.eq(id))
            .into_tuple()
            .all(txn)
            .await?;
        if !clients.is_empty() {
            api_token::Entity::delete_many()
                .filter(api_token::Column::ClientId.is_in(clients.iter().copied()))
                .exec(txn)
                .await?;
            api_client::Entity::delete_many()
                .filter(api_client::Column::UserId.eq(id))
                .exec(txn)
                .await?;
        }
        group_member::Entity::delete_many()
            .filter(group_member::Column::UserId.eq(id))
            .exec(txn)
            .await?;
        user_managed_department::Entity::delete_many()
            .filter(user_managed_department::Column::UserId.eq(id))
            .exec(txn)
            .await?;
        project_author::Entity::delete_many()
            .filter(project_author::Column::UserId.eq(id))
            .exec(txn)
            .await?;
        user_points::Entity::delete_many()
            .filter(user_points::Column::UserId.eq(id))
            .exec(txn)
            .await?;
        user_field::Entity::delete_many()
            .filter(user_field::Column::UserId.eq(id))
            .exec(txn)
            .await?;
        user_sign_in::Entity::delete_many()
            .filter(user_sign_in::Column::UserId.eq(id))
            .exec(txn)
            .await?;
        enrollment::Entity::delete_many()
            .filter(enrollment::Column::LearnerId.eq(id))
            .exec(txn)
            .await?;
        user::Entity::delete_by_id(id).exec(txn).await?;
        w.record(Change {
            action: AuditAction::UserDeleted,
            entity_id: id,
            before: Some(user_snapshot(&current, &managed)),
            after: None,
        });
        Ok(())
    })
    .await
}

/// The user `user` names, if the caller may change it: 404 when it names no user of the
/// account, 403 when it is outside a scoped caller's subtrees or above its role.
pub(super) async fn reachable_user(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    grant: Grant,
    user: &ResourceRef,
) -> ServiceResult<()> {
    let id = user.id("User")?;
    let found = find_user(conn, caller.account_id, id)
        .await?
        .ok_or_else(|| user.not_found("User"))?;
    if grant == Grant::InScope {
        if !department_in_scope(conn, &caller.managed_department_ids, found.department_id).await? {
            return Err(ServiceError::denied(
                "You may change only users of the departments you manage and their sub-departments.",
            ));
        }
        refuse_above_scope(found.role)?;
    }
    Ok(())
}

fn refuse_above_scope(role: Role) -> ServiceResult<()> {
    if matches!(role, Role::AccountOwner | Role::AccountAdministrator) {
        return Err(ServiceError::denied(
            "Only account owners and administrators may make or change account owners and administrators.",
        ));
    }
    Ok(())
}
