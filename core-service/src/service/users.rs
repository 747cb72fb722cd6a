//! Users: read them ([`read`]), add, change and delete them ([`edit`], one function per
//! operation for the HTTP interface and `lms.v1.DirectoryService` alike), their profile
//! fields ([`fields`]), the bulk lifecycle calls of provisioning ([`lifecycle`]) and scheduled
//! deactivation and termination ([`schedule`]). Here:
//! what those share, the writes of a new user, a password and a status.
//!
//! A password is hashed through the [`Verifier`] before the account's write transaction
//! opens. A cached verification is honoured only while the stored password hash is
//! unchanged; after a change of password, role, managed departments or active flag
//! commits, [`write()`](super::write()) tells this process's authenticator, and triggers on these
//! tables tell other processes (`auth::revision`).

mod edit;
mod fields;
mod lifecycle;
mod read;
mod schedule;

pub use edit::{
    NamedIds, NewProfile, ProfileChanges, UserStatus, add_user, apply_profile_changes,
    change_password, change_status, delete_user, update_user,
};
pub use fields::{address_taken, email_of, fields_of};
pub use lifecycle::{
    change_statuses, find_existing_users, move_users_to_department, remove_user_from_groups,
    set_users_status,
};
pub use read::{
    NumberedPage, UserFilter, UserList, UserProfile, get_user, list_users, numbered_users,
    stream_users,
};
pub use schedule::{
    CarriedOut, DueBatch, DueChange, by_account, cancel_scheduled_user_status, carry_out_due,
    due_schedules, schedule_user_status,
};

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _,
    PaginatorTrait as _, QueryFilter as _, QuerySelect as _, Set, prelude::Uuid,
};
use serde_json::json;

use super::webhooks::outbox::Event;
use super::{
    audit::{AuditAction, Change},
    lookups::{find_user, require_department, require_departments, unknown},
    write,
};
use crate::{
    access::Caller,
    auth::Verifier,
    db::bulk,
    domain::{
        Invalid, Reason,
        ids::{IdList, ResourceRef, clip, new_id, parse_field_id},
        login::{EmailAddress, Login, PlainPassword, email_key},
        profile_fields::{ProfileField, ProfileFields},
        roles::Role,
    },
    entities::{custom_role, user, user_managed_department},
    error::{ServiceError, ServiceResult},
};

/// A role checked for form: a built-in role, or `custom` with a custom role id.
/// `RoleChoice::check_exists` checks the custom role in the account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleChoice {
    pub role: Role,
    pub custom_role_id: Option<Uuid>,
}

impl RoleChoice {
    /// `role` absent or blank is missing; a blank `custom_role_id` counts as none.
    pub fn parse(role: Option<&str>, custom_role_id: Option<&str>) -> Result<Self, Invalid> {
        let raw_role = role.map(str::trim).unwrap_or_default();
        if raw_role.is_empty() {
            return Err(Invalid::new("role", Reason::Missing));
        }
        let role = Role::parse(raw_role).ok_or_else(|| {
            let names: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
            Invalid::new(
                "role",
                Reason::NotOneOf {
                    raw: clip(raw_role),
                    allowed: names.join(", "),
                },
            )
        })?;
        Self::with_role(role, custom_role_id)
    }

    /// A role already known (an enum value), with its `custom_role_id` checked against it.
    pub fn with_role(role: Role, custom_role_id: Option<&str>) -> Result<Self, Invalid> {
        let raw_custom = custom_role_id.map(str::trim).filter(|raw| !raw.is_empty());
        let custom_role_id = match (role, raw_custom) {
            (Role::Custom, Some(raw)) => Some(parse_field_id("customRoleId", raw)?),
            (Role::Custom, None) => {
                return Err(Invalid::new(
                    "customRoleId",
                    Reason::RequiredWhen("role is custom"),
                ));
            }
            (_, Some(_)) => {
                return Err(Invalid::new(
                    "customRoleId",
                    Reason::OnlyWhen("role is custom"),
                ));
            }
            (_, None) => None,
        };
        Ok(Self {
            role,
            custom_role_id,
        })
    }

    pub(super) async fn check_exists(
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
            .ok_or_else(|| unknown("customRoleId", id, "custom role"))?;
        Ok(())
    }
}

/// A user's first and last name as the profile shows them (empty when not given).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    pub first: String,
    pub last: String,
}

#[derive(Debug, Clone)]
pub struct NewUser {
    pub login: Login,
    pub names: Names,
    /// The e-mail address when it is not the login; `None`: the login, if it is one.
    pub email: Option<EmailAddress>,
    pub fields: ProfileFields,
    /// Plain groups the user joins.
    pub group_ids: IdList,
    /// Absent: the user gets a hash no password matches, and signs in once one is set.
    pub password: Option<PlainPassword>,
    pub role: RoleChoice,
    pub department_id: Uuid,
    pub managed_department_ids: IdList,
    pub active: bool,
    /// The identity provider's id (SCIM `externalId`), unique in the account.
    pub external_id: Option<String>,
}

/// The password hash of a user made without a password: not a PHC string, so no password
/// verifies against it, and making it costs no argon2id (provisioning.md section 15: a burst
/// of SCIM creates must not queue on the hasher).
pub const UNMATCHABLE_PASSWORD_HASH: &str = "!no password set";

#[derive(Debug, Clone)]
pub struct PasswordChange {
    pub user: ResourceRef,
    pub password: PlainPassword,
}

#[derive(Debug, Clone)]
pub struct ActiveChange {
    pub user: ResourceRef,
    pub status: UserStatus,
}

/// Creates `new` (its login new to the account in any letter case, otherwise
/// FAILED_PRECONDITION) for a caller already allowed to ([`add_user`]); its id.
pub(super) async fn insert_user(
    db: &DatabaseConnection,
    verifier: &Verifier,
    caller: &Caller,
    new: NewUser,
) -> ServiceResult<Uuid> {
    let password_hash = match &new.password {
        Some(password) => verifier.hash(password.expose()).await?,
        None => UNMATCHABLE_PASSWORD_HASH.to_owned(),
    };
    let managed = new.managed_department_ids.into_inner();
    let external_id = new.external_id;
    let (login, role, department_id, active) = (new.login, new.role, new.department_id, new.active);
    let names = new.names;
    let contact_email = fields::new_contact(&login, new.email.as_ref());
    let fields = new.fields;
    let group_ids = new.group_ids.into_inner();
    write(db, caller, async |w| {
        let txn = w.txn();
        let key = login.key();
        let taken = login_owner(txn, caller.account_id, &key).await?;
        // The existing user's id is the message's last word: a real client reads it there
        // (neighbours 4.6).
        if let Some(existing) = taken {
            return Err(ServiceError::Conflict(format!(
                "A user with login '{}' already exists: {existing}",
                clip(login.as_str())
            )));
        }
        let address = contact_email.as_deref().unwrap_or(login.as_str());
        if let Some(existing) = fields::address_taken(txn, caller.account_id, address, None).await?
        {
            return Err(ServiceError::Conflict(format!(
                "A user with e-mail address '{}' already exists: {existing}",
                clip(address)
            )));
        }
        role.check_exists(txn, caller.account_id).await?;
        require_department(txn, caller.account_id, department_id, "departmentId").await?;
        require_departments(txn, caller.account_id, &managed, "managedDepartmentIds").await?;
        let now = chrono::Utc::now();
        let created = user::ActiveModel {
            id: Set(new_id()),
            account_id: Set(caller.account_id),
            email: Set(login.into_inner()),
            email_key: Set(key),
            password_hash: Set(password_hash),
            role: Set(role.role),
            custom_role_id: Set(role.custom_role_id),
            department_id: Set(department_id),
            active: Set(active),
            contact_email_key: Set(contact_email.as_deref().map(email_key)),
            contact_email: Set(contact_email),
            employment_ended: Set(false),
            scheduled_deactivation_date: Set(None),
            scheduled_termination_date: Set(None),
            first_name: Set(names.first),
            last_name: Set(names.last),
            created_at: Set(now),
            updated_at: Set(now),
            external_id: Set(external_id),
            scim_removed: Set(false),
        }
        .insert(txn)
        .await?;
        insert_managed(txn, created.id, &managed).await?;
        fields::store_fields(txn, created.id, &fields).await?;
        fields::replace_groups(txn, caller.account_id, created.id, &group_ids).await?;
        let mut after = user_snapshot(&created, &managed);
        after["fields"] = fields_snapshot(fields.as_slice());
        after["groupIds"] = json!(group_ids);
        w.record(Change {
            action: AuditAction::UserCreated,
            entity_id: created.id,
            before: None,
            after: Some(after),
        });
        // The address the profile shows as EMAIL: the login itself when no other is stored.
        let email = match &created.contact_email {
            None => Some(created.email.clone()),
            Some(address) if address.is_empty() => None,
            Some(address) => Some(address.clone()),
        };
        w.emit(Event::UserRegistered {
            user_id: created.id,
            department_id: created.department_id,
            login: created.email.clone(),
            email,
        });
        Ok(created.id)
    })
    .await
}

/// Replaces the password for a caller already allowed to ([`change_password`]). The old
/// password stops working on the very next request: a cached verification holds only for
/// the stored hash it was made against.
pub(super) async fn store_password(
    db: &DatabaseConnection,
    verifier: &Verifier,
    caller: &Caller,
    change: PasswordChange,
) -> ServiceResult<()> {
    let PasswordChange { user, password } = change;
    let id = user.id("User")?;
    // Looking first spares the hashing for an unknown id; the transaction looks again.
    find_user(db, caller.account_id, id)
        .await?
        .ok_or_else(|| user.not_found("User"))?;
    let password_hash = verifier.hash(password.expose()).await?;
    write(db, caller, async |w| {
        let current = find_user(w.txn(), caller.account_id, id)
            .await?
            .ok_or_else(|| user.not_found("User"))?;
        set_password_hash(w, current, password_hash).await
    })
    .await
}

/// Stores `password_hash` (made before the transaction opened) as `current`'s password, with
/// its audit row, inside a write.
pub async fn set_password_hash(
    w: &super::write::Write,
    current: user::Model,
    password_hash: String,
) -> ServiceResult<()> {
    let id = current.id;
    let mut updated: user::ActiveModel = current.into();
    updated.password_hash = Set(password_hash);
    updated.updated_at = Set(chrono::Utc::now());
    updated.update(w.txn()).await?;
    w.record(Change {
        action: AuditAction::UserPasswordSet,
        entity_id: id,
        // Never the hash itself.
        before: None,
        after: Some(json!({ "passwordChanged": true })),
    });
    Ok(())
}

/// Sets the status for a caller already allowed to ([`change_status`]) through
/// [`change_statuses`]: a user leaving status 1 is refused from its next request on and loses
/// its tokens. The account always keeps one active account owner.
pub(super) async fn store_active(
    db: &DatabaseConnection,
    caller: &Caller,
    change: ActiveChange,
) -> ServiceResult<()> {
    let ActiveChange { user, status } = change;
    let id = user.id("User")?;
    write(db, caller, async |w| {
        let current = find_user(w.txn(), caller.account_id, id)
            .await?
            .ok_or_else(|| user.not_found("User"))?;
        if UserStatus::of(&current) == status {
            return Ok(());
        }
        change_statuses(w, caller.account_id, &[current], status).await
    })
    .await
}

/// The departments `user_id` manages, ascending.
pub(super) async fn managed_of(
    conn: &impl ConnectionTrait,
    user_id: Uuid,
) -> ServiceResult<Vec<Uuid>> {
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

pub(super) async fn insert_managed(
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
    bulk::insert_all(conn, rows).await?;
    Ok(())
}

/// Refuses a change that would leave the account without an active account owner
/// (nobody could then manage the directory or administer the account).
pub(super) async fn keep_an_active_owner(
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
pub(super) fn user_snapshot(user: &user::Model, managed: &[Uuid]) -> serde_json::Value {
    json!({
        "email": user.email,
        "contactEmail": user.contact_email,
        "employmentEnded": user.employment_ended,
        "role": user.role,
        "customRoleId": user.custom_role_id,
        "departmentId": user.department_id,
        "managedDepartmentIds": managed,
        "active": user.active,
        "firstName": user.first_name,
        "lastName": user.last_name,
        "externalId": user.external_id,
    })
}

/// What the audit table records of profile fields: name to value.
pub(super) fn fields_snapshot(fields: &[ProfileField]) -> serde_json::Value {
    fields
        .iter()
        .map(|field| (field.name.clone(), json!(field.value)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// The user of the account whose login has `key` (logins are unique per account, compared
/// case-insensitively through the key).
pub async fn login_owner(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    key: &str,
) -> ServiceResult<Option<Uuid>> {
    Ok(user::Entity::find()
        .select_only()
        .column(user::Column::Id)
        .filter(user::Column::AccountId.eq(account_id))
        .filter(user::Column::EmailKey.eq(key))
        .into_tuple()
        .one(conn)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_built_in_names_or_custom_with_an_id() {
        let assign = |role: &'static str, custom: Option<&str>| (role, custom.map(str::to_owned));
        let parse = |assignment: Option<&(&str, Option<String>)>| match assignment {
            Some((role, custom)) => RoleChoice::parse(Some(role), custom.as_deref()),
            None => RoleChoice::parse(None, None),
        };
        let learner = parse(Some(&assign("learner", None))).unwrap();
        assert_eq!(
            (learner.role, learner.custom_role_id),
            (Role::Learner, None)
        );
        // A blank custom role id counts as none.
        assert!(parse(Some(&assign("learner", Some(" ")))).is_ok());
        let id = Uuid::now_v7().to_string();
        let custom = parse(Some(&assign("custom", Some(&id)))).unwrap();
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
            let err = parse(assignment.as_ref()).unwrap_err();
            assert!(err.to_string().contains(needle), "{err}");
        }
    }
}
