//! The directory's bulk lifecycle operations (provisioning.md sections 1 to 5), one function
//! per operation for the HTTP interface and any other door alike: the status of many users
//! at once ([`set_users_status`]), which ids name users ([`find_existing_users`]), moving
//! users into a department ([`move_users_to_department`]) and taking a user out of groups
//! ([`remove_user_from_groups`]).
//!
//! Each takes up to [`MAX_LIST_IDS`](crate::domain::ids::MAX_LIST_IDS) ids and is one
//! transaction, reading and writing only the named rows, in chunks that fit a statement.
//! [`change_statuses`] is the one way a user leaves or regains status 1: `POST
//! /user/{id}/status` and the directory's `SetUserActive` come through it too, so every door
//! ends the tokens of a user that leaves status 1 and keeps an active account owner.

use std::collections::HashSet;

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, PaginatorTrait as _,
    QueryFilter as _, QuerySelect as _,
    prelude::{Expr, Uuid},
    sea_query::Query,
};
use serde_json::json;

use super::UserStatus;
use super::edit::reachable_user;
use crate::service::{
    Parsed, Write,
    audit::{AuditAction, Change},
    lookups::{self, department_in_scope, unknown},
    users::fields::require_plain_groups,
    write,
};
use crate::{
    access::{Caller, Grant, Operation},
    db::bulk,
    domain::{
        ids::{IdList, ResourceRef},
        roles::Role,
    },
    entities::{api_client, api_token, group_member, user},
    error::{ServiceError, ServiceResult},
};

impl UserStatus {
    /// The status a stored user has.
    pub fn of(user: &user::Model) -> Self {
        match (user.active, user.employment_ended) {
            (true, _) => Self::Active,
            (false, false) => Self::Blocked,
            (false, true) => Self::EmploymentEnded,
        }
    }

    /// The status code of neighbours 4.10.
    pub fn code(self) -> u32 {
        match self {
            Self::Active => 1,
            Self::Blocked => 3,
            Self::EmploymentEnded => 5,
        }
    }

    /// Whether the bulk call setting `self` changes a user of status `current`
    /// (provisioning.md section 2): activate lifts 3 and 5, deactivate only 1, terminate 1
    /// and 3.
    pub fn bulk_changes(self, current: UserStatus) -> bool {
        match self {
            Self::Active => current != Self::Active,
            Self::Blocked => current == Self::Active,
            Self::EmploymentEnded => current != Self::EmploymentEnded,
        }
    }
}

/// `POST /users/activate`, `/users/deactivate`, `/users/terminate`: `status` for every named
/// user it changes (see [`UserStatus::bulk_changes`]), all or nothing.
pub async fn set_users_status(
    db: &DatabaseConnection,
    caller: &Caller,
    user_ids: Parsed<IdList>,
    status: Parsed<UserStatus>,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateUser)?;
    let ids = user_ids?.into_inner();
    let status = status?;
    write(db, caller, async |w| {
        let txn = w.txn();
        let users = named_users(txn, caller.account_id, &ids).await?;
        if grant == Grant::InScope {
            refuse_outside_scope(txn, caller, &users).await?;
        }
        let changing: Vec<user::Model> = users
            .into_iter()
            .filter(|user| status.bulk_changes(UserStatus::of(user)))
            .collect();
        change_statuses(w, caller.account_id, &changing, status).await
    })
    .await
}

/// Sets `status` on each of `users` (rows read in this write, each changing), with one
/// `user.set_active` audit row each. A user leaving status 1 loses every access token it
/// holds (its API clients stay), so a token stays refused when the user is active again; its
/// remembered credentials go with the write's users change. FAILED_PRECONDITION when no active
/// account owner would remain.
pub async fn change_statuses(
    w: &Write,
    account_id: Uuid,
    users: &[user::Model],
    status: UserStatus,
) -> ServiceResult<()> {
    if users.is_empty() {
        return Ok(());
    }
    let txn = w.txn();
    let active = status == UserStatus::Active;
    let employment_ended = status == UserStatus::EmploymentEnded;
    if !active {
        keep_an_active_owner_among(txn, account_id, users).await?;
    }
    let ids: Vec<Uuid> = users.iter().map(|user| user.id).collect();
    let now = chrono::Utc::now();
    for chunk in bulk::in_chunks(&ids) {
        user::Entity::update_many()
            .col_expr(user::Column::Active, Expr::value(active))
            .col_expr(user::Column::EmploymentEnded, Expr::value(employment_ended))
            .col_expr(user::Column::UpdatedAt, Expr::value(now))
            .filter(user::Column::AccountId.eq(account_id))
            .filter(user::Column::Id.is_in(chunk.iter().copied()))
            .exec(txn)
            .await?;
        if !active {
            end_tokens(txn, chunk).await?;
        }
    }
    let state = |active: bool, employment_ended: bool| json!({ "active": active, "employmentEnded": employment_ended });
    w.record_all(users.iter().map(|user| Change {
        action: AuditAction::UserActiveSet,
        entity_id: user.id,
        before: Some(state(user.active, user.employment_ended)),
        after: Some(state(active, employment_ended)),
    }));
    Ok(())
}

/// Deletes every access token of the API clients of `user_ids` (through the clients' user
/// index and the tokens' client index).
async fn end_tokens(conn: &impl ConnectionTrait, user_ids: &[Uuid]) -> ServiceResult<()> {
    let clients = Query::select()
        .column(api_client::Column::Id)
        .from(api_client::Entity)
        .and_where(api_client::Column::UserId.is_in(user_ids.iter().copied()))
        .to_owned();
    api_token::Entity::delete_many()
        .filter(api_token::Column::ClientId.in_subquery(clients))
        .exec(conn)
        .await?;
    Ok(())
}

/// Refuses deactivating `leaving` when they are every active account owner there is.
async fn keep_an_active_owner_among(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    leaving: &[user::Model],
) -> ServiceResult<()> {
    let owners: Vec<Uuid> = leaving
        .iter()
        .filter(|user| user.active && user.role == Role::AccountOwner)
        .map(|user| user.id)
        .collect();
    if owners.is_empty() {
        return Ok(());
    }
    let active_owners = user::Entity::find()
        .filter(user::Column::AccountId.eq(account_id))
        .filter(user::Column::Role.eq(Role::AccountOwner))
        .filter(user::Column::Active.eq(true))
        .count(conn)
        .await?;
    if active_owners > owners.len() as u64 {
        return Ok(());
    }
    let named = match owners.as_slice() {
        [one] => format!("User '{one}' is the last active account owner"),
        _ => format!(
            "The {} users named are every active account owner",
            owners.len()
        ),
    };
    Err(ServiceError::Conflict(format!(
        "{named}; make another user account_owner first. Nothing was changed."
    )))
}

/// The users `ids` (ascending) name, ascending; INVALID_ARGUMENT naming `userIds` and the
/// first id that names no user of the account.
async fn named_users(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    ids: &[Uuid],
) -> ServiceResult<Vec<user::Model>> {
    let mut found = Vec::with_capacity(ids.len());
    for chunk in bulk::in_chunks(ids) {
        found.extend(
            user::Entity::find()
                .filter(user::Column::AccountId.eq(account_id))
                .filter(user::Column::Id.is_in(chunk.iter().copied()))
                .all(conn)
                .await?,
        );
    }
    if found.len() < ids.len() {
        let known: HashSet<Uuid> = found.iter().map(|user| user.id).collect();
        if let Some(missing) = ids.iter().find(|id| !known.contains(id)) {
            return Err(unknown("userIds", *missing, "user"));
        }
    }
    found.sort_unstable_by_key(|user| user.id);
    Ok(found)
}

/// PERMISSION_DENIED for a scoped caller when one of `users` is outside its departments, or
/// is an account owner or administrator.
async fn refuse_outside_scope(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    users: &[user::Model],
) -> ServiceResult<()> {
    if let Some(above) = users
        .iter()
        .find(|user| matches!(user.role, Role::AccountOwner | Role::AccountAdministrator))
    {
        return Err(ServiceError::denied(format!(
            "User '{}' is an account owner or administrator: only account owners and administrators may change them. Nothing was changed.",
            above.id
        )));
    }
    let ids: Vec<Uuid> = users.iter().map(|user| user.id).collect();
    let outside = lookups::users_outside_scope(conn, &caller.managed_department_ids, &ids).await?;
    if let Some(first) = outside.iter().min() {
        return Err(ServiceError::denied(format!(
            "User '{first}' is outside the departments you manage ({} of the users named are); nothing was changed.",
            outside.len()
        )));
    }
    Ok(())
}

/// `POST /users/find_existing`: those of `user_ids` naming users of the account the caller
/// may read, ascending. Unknown ids, other accounts' and users outside a scoped caller's
/// departments are left out.
pub async fn find_existing_users(
    db: &DatabaseConnection,
    caller: &Caller,
    user_ids: Parsed<IdList>,
) -> ServiceResult<Vec<Uuid>> {
    let grant = caller.grant(Operation::ReadUsers)?;
    let ids = user_ids?.into_inner();
    let found = lookups::existing_users(db, caller.account_id, &ids).await?;
    let mut found: Vec<Uuid> = ids.into_iter().filter(|id| found.contains(id)).collect();
    if grant == Grant::InScope {
        let outside: HashSet<Uuid> =
            lookups::users_outside_scope(db, &caller.managed_department_ids, &found)
                .await?
                .into_iter()
                .collect();
        found.retain(|id| !outside.contains(id));
    }
    Ok(found)
}

/// `POST /department/{departmentId}/user/move`: every named user into `department`; those
/// already there stay as they are. One `user.update` audit row per moved user.
pub async fn move_users_to_department(
    db: &DatabaseConnection,
    caller: &Caller,
    department: &ResourceRef,
    user_ids: Parsed<IdList>,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateUser)?;
    let ids = user_ids?.into_inner();
    write(db, caller, async |w| {
        let txn = w.txn();
        let users = named_users(txn, caller.account_id, &ids).await?;
        let department_id = department.id("Department")?;
        lookups::find_department(txn, caller.account_id, department_id)
            .await?
            .ok_or_else(|| department.not_found("Department"))?;
        if grant == Grant::InScope {
            if !department_in_scope(txn, &caller.managed_department_ids, department_id).await? {
                return Err(ServiceError::denied(format!(
                    "Department '{department_id}' is outside the departments you manage."
                )));
            }
            refuse_outside_scope(txn, caller, &users).await?;
        }
        let moving: Vec<&user::Model> = users
            .iter()
            .filter(|user| user.department_id != department_id)
            .collect();
        let moving_ids: Vec<Uuid> = moving.iter().map(|user| user.id).collect();
        let now = chrono::Utc::now();
        for chunk in bulk::in_chunks(&moving_ids) {
            user::Entity::update_many()
                .col_expr(user::Column::DepartmentId, Expr::value(department_id))
                .col_expr(user::Column::UpdatedAt, Expr::value(now))
                .filter(user::Column::AccountId.eq(caller.account_id))
                .filter(user::Column::Id.is_in(chunk.iter().copied()))
                .exec(txn)
                .await?;
        }
        w.record_all(moving.into_iter().map(|user| Change {
            action: AuditAction::UserUpdated,
            entity_id: user.id,
            before: Some(json!({ "departmentId": user.department_id })),
            after: Some(json!({ "departmentId": department_id })),
        }));
        Ok(())
    })
    .await
}

/// `POST /user/{userId}/groups/remove`: the user leaves the named plain groups; a group it
/// is not in is ignored. Audited as `user.update` (`groupIds` before and after) when it left one.
pub async fn remove_user_from_groups(
    db: &DatabaseConnection,
    caller: &Caller,
    user: &ResourceRef,
    group_ids: Parsed<IdList>,
) -> ServiceResult<()> {
    let grant = caller.grant(Operation::UpdateUser)?;
    let group_ids = group_ids?.into_inner();
    reachable_user(db, caller, grant, user).await?;
    let id = user.id("User")?;
    write(db, caller, async |w| {
        let txn = w.txn();
        require_plain_groups(txn, caller.account_id, &group_ids, "groupIds").await?;
        let mut before: Vec<Uuid> = group_member::Entity::find()
            .select_only()
            .column(group_member::Column::GroupId)
            .filter(group_member::Column::UserId.eq(id))
            .into_tuple()
            .all(txn)
            .await?;
        before.sort_unstable();
        let leaving: HashSet<Uuid> = group_ids.iter().copied().collect();
        let (left, after): (Vec<Uuid>, Vec<Uuid>) =
            before.iter().partition(|group| leaving.contains(group));
        if left.is_empty() {
            return Ok(());
        }
        for chunk in bulk::in_chunks(&left) {
            group_member::Entity::delete_many()
                .filter(group_member::Column::UserId.eq(id))
                .filter(group_member::Column::GroupId.is_in(chunk.iter().copied()))
                .exec(txn)
                .await?;
        }
        w.record(Change {
            action: AuditAction::UserUpdated,
            entity_id: id,
            before: Some(json!({ "groupIds": before })),
            after: Some(json!({ "groupIds": after })),
        });
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bulk_call_changes_only_the_statuses_its_table_names() {
        use UserStatus::{Active, Blocked, EmploymentEnded};
        let all = [Active, Blocked, EmploymentEnded];
        let changed = |target: UserStatus| -> Vec<u32> {
            all.iter()
                .filter(|current| target.bulk_changes(**current))
                .map(|current| current.code())
                .collect()
        };
        assert_eq!(changed(Active), [3, 5]);
        assert_eq!(changed(Blocked), [1]);
        assert_eq!(changed(EmploymentEnded), [1, 3]);
    }
}
