//! Users over HTTP, writes (neighbours.md sections 4.6, 4.9, 4.10): add a user, change its
//! password, change its status.
//!
//! The writes themselves are those of the internal directory ([`super::users`]): one
//! hashing, one duplicate-login rule, one way of telling the authenticator (through
//! `db::write`), so a password or status change applies on the caller's next request.
//! What this module adds is who may: owners and administrators everywhere; department
//! administrators and custom roles with `user.create`/`user.update` only for users of their
//! subtrees, never making or changing an owner or administrator (a scoped caller must not
//! reach above its scope by resetting an administrator's password).

use sea_orm::{ConnectionTrait, DatabaseConnection, prelude::Uuid};

use super::{
    Parsed,
    lookups::{department_in_scope, find_user},
    users::{self, ActiveChange, NewUser, PasswordChange, RoleChoice},
};
use crate::{
    access::{Caller, Grant, Operation},
    auth::Verifier,
    domain::{
        ids::{IdList, ResourceRef},
        login::{Login, PlainPassword},
        roles::Role,
    },
    error::{ServiceError, ServiceResult},
};

/// A user to add, as `POST /user` gives it.
#[derive(Debug, Clone)]
pub struct NewProfile {
    pub login: Login,
    /// Absent: the user gets a random password nobody knows, and signs in once one is set.
    pub password: Option<PlainPassword>,
    pub role: RoleChoice,
    pub department_id: Uuid,
    pub managed_department_ids: IdList,
}

/// The status codes of neighbours 4.10: 1 active, 3 blocked, 5 employment ended (stored as
/// blocked: both keep the user from signing in).
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
    let password = match new.password {
        Some(password) => password,
        None => PlainPassword::parse(&unknown_password())
            .map_err(|invalid| ServiceError::from(anyhow::anyhow!("{invalid}")))?,
    };
    let new = NewUser {
        login: new.login,
        password,
        role: new.role,
        department_id: new.department_id,
        managed_department_ids: new.managed_department_ids,
        active: true,
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
    let active = status? == UserStatus::Active;
    reachable_user(db, caller, grant, &user).await?;
    users::store_active(db, caller, ActiveChange { user, active }).await
}

/// The user `user` names, if the caller may change it: 404 when it names no user of the
/// account, 403 when it is outside a scoped caller's subtrees or above its role.
async fn reachable_user(
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

/// 32 random letters and digits (190 bits): a password no one is told.
fn unknown_password() -> String {
    use rand::Rng as _;
    rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(32)
        .map(char::from)
        .collect()
}
