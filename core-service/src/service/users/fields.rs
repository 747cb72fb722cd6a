//! What a profile holds beside the `users` row's own columns: the e-mail address when it is
//! not the login, the other profile fields (`user_fields`), the groups it is a stored member
//! of (`groupIds` of a write), and the last sign-in (`user_sign_ins`). Reads take a page of
//! users at a time, through each table's key.

use std::collections::HashMap;

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, EntityTrait as _, QueryFilter as _, QuerySelect as _, Set,
    prelude::Uuid,
};

use crate::service::lookups::unknown;
use crate::{
    db::bulk,
    domain::{
        login::{EmailAddress, Login, email_key},
        profile_fields::{ProfileField, ProfileFields},
    },
    entities::{group, group_member, user, user_field, user_sign_in},
    error::{ServiceError, ServiceResult},
};

/// `contact_email` for a user whose login's key is `login_key` and whose e-mail address is
/// `email` (empty: none): `None` when the address is the login itself, which then carries it.
pub(super) fn stored_contact(login_key: &str, email: &str) -> Option<String> {
    (email_key(email) != login_key).then(|| email.to_owned())
}

/// The e-mail address a new user gets: the one given, else the login when it is one.
pub(super) fn new_contact(login: &Login, email: Option<&EmailAddress>) -> Option<String> {
    match email {
        Some(email) => stored_contact(&login.key(), email.as_str()),
        None if login.is_address() => None,
        None => Some(String::new()),
    }
}

/// `contact_email` of `current` once updated to `next` (whose login is set), with `email`
/// when one is given. A login that is the address stays so while it is an address: renaming
/// one renames the other. Otherwise the address stays what it was unless one is given.
pub(super) fn contact_after(
    current: &user::Model,
    next: &user::Model,
    email: Option<&EmailAddress>,
) -> Option<String> {
    let linked = current.contact_email.is_none() && Login::parse(&next.email).is_ok();
    match email {
        Some(email) => stored_contact(&next.email_key, email.as_str()),
        None if linked => None,
        None => stored_contact(&next.email_key, email_of(current)),
    }
}

/// The profile's `EMAIL` of a stored user.
pub fn email_of(user: &user::Model) -> &str {
    user.contact_email.as_deref().unwrap_or(&user.email)
}

/// The user other than `except` whose e-mail address is `address` (compared
/// case-insensitively): e-mail addresses are unique in an account like logins (neighbours
/// 4.7), whether held apart or as the login. An empty address is no address.
pub async fn address_taken(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    address: &str,
    except: Option<Uuid>,
) -> ServiceResult<Option<Uuid>> {
    let key = email_key(address);
    if key.is_empty() {
        return Ok(None);
    }
    let others = || {
        let mut query = user::Entity::find()
            .select_only()
            .column(user::Column::Id)
            .filter(user::Column::AccountId.eq(account_id));
        if let Some(except) = except {
            query = query.filter(user::Column::Id.ne(except));
        }
        query
    };
    let apart: Option<Uuid> = others()
        .filter(user::Column::ContactEmailKey.eq(key.as_str()))
        .into_tuple()
        .one(conn)
        .await?;
    if apart.is_some() {
        return Ok(apart);
    }
    Ok(others()
        .filter(user::Column::EmailKey.eq(key.as_str()))
        .filter(user::Column::ContactEmailKey.is_null())
        .into_tuple()
        .one(conn)
        .await?)
}

/// A user's profile fields before and after a change, each ascending by name.
pub(super) struct FieldsChange {
    pub(super) before: Vec<ProfileField>,
    pub(super) after: Vec<ProfileField>,
}

/// Sets `fields` of `user_id`: each named field takes its value, an empty value removes it,
/// fields not named stay. Returns the change, or `None` when nothing changed.
pub(super) async fn store_fields(
    conn: &impl ConnectionTrait,
    user_id: Uuid,
    fields: &ProfileFields,
) -> ServiceResult<Option<FieldsChange>> {
    if fields.is_empty() {
        return Ok(None);
    }
    let before = fields_of(conn, &[user_id])
        .await?
        .remove(&user_id)
        .unwrap_or_default();
    let mut after: Vec<ProfileField> = before
        .iter()
        .filter(|old| !fields.as_slice().iter().any(|new| new.name == old.name))
        .cloned()
        .collect();
    after.extend(
        fields
            .as_slice()
            .iter()
            .filter(|field| !field.value.is_empty())
            .cloned(),
    );
    after.sort_by(|a, b| a.name.cmp(&b.name));
    if after == before {
        return Ok(None);
    }
    let names = fields.as_slice().iter().map(|field| field.name.clone());
    user_field::Entity::delete_many()
        .filter(user_field::Column::UserId.eq(user_id))
        .filter(user_field::Column::Name.is_in(names))
        .exec(conn)
        .await?;
    let rows: Vec<user_field::ActiveModel> = fields
        .as_slice()
        .iter()
        .filter(|field| !field.value.is_empty())
        .map(|field| user_field::ActiveModel {
            user_id: Set(user_id),
            name: Set(field.name.clone()),
            value: Set(field.value.clone()),
        })
        .collect();
    bulk::insert_all(conn, rows).await?;
    Ok(Some(FieldsChange { before, after }))
}

/// The profile fields of `users`, each list ascending by name.
pub async fn fields_of(
    conn: &impl ConnectionTrait,
    users: &[Uuid],
) -> ServiceResult<HashMap<Uuid, Vec<ProfileField>>> {
    let mut fields: HashMap<Uuid, Vec<ProfileField>> = HashMap::new();
    for chunk in bulk::in_chunks(users) {
        let rows: Vec<(Uuid, String, String)> = user_field::Entity::find()
            .select_only()
            .columns([
                user_field::Column::UserId,
                user_field::Column::Name,
                user_field::Column::Value,
            ])
            .filter(user_field::Column::UserId.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        for (user_id, name, value) in rows {
            fields
                .entry(user_id)
                .or_default()
                .push(ProfileField { name, value });
        }
    }
    for list in fields.values_mut() {
        list.sort_by(|a, b| a.name.cmp(&b.name));
    }
    Ok(fields)
}

/// Every one of `group_ids` names a plain group of the account; otherwise INVALID_ARGUMENT
/// naming `field` and the first id that names no group or a smart group.
pub(super) async fn require_plain_groups(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    group_ids: &[Uuid],
    field: &str,
) -> ServiceResult<()> {
    let mut found: HashMap<Uuid, Option<Uuid>> = HashMap::with_capacity(group_ids.len());
    for chunk in bulk::in_chunks(group_ids) {
        found.extend(
            group::Entity::find()
                .select_only()
                .columns([group::Column::Id, group::Column::SmartDepartmentId])
                .filter(group::Column::AccountId.eq(account_id))
                .filter(group::Column::Id.is_in(chunk.iter().copied()))
                .into_tuple::<(Uuid, Option<Uuid>)>()
                .all(conn)
                .await?,
        );
    }
    for id in group_ids {
        match found.get(id) {
            None => return Err(unknown(field, *id, "group")),
            Some(Some(_)) => {
                return Err(ServiceError::invalid(format!(
                    "{field}: group '{id}' is a smart group; its members follow its department."
                )));
            }
            Some(None) => {}
        }
    }
    Ok(())
}

/// Makes `user_id` a stored member of exactly `group_ids` (ascending): each must be a plain
/// group of the account (400 naming `groupIds` otherwise: a smart group's members follow its
/// department). Returns the groups before, ascending.
pub(super) async fn replace_groups(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    user_id: Uuid,
    group_ids: &[Uuid],
) -> ServiceResult<Vec<Uuid>> {
    require_plain_groups(conn, account_id, group_ids, "groupIds").await?;
    let mut before: Vec<Uuid> = group_member::Entity::find()
        .select_only()
        .column(group_member::Column::GroupId)
        .filter(group_member::Column::UserId.eq(user_id))
        .into_tuple()
        .all(conn)
        .await?;
    before.sort_unstable();
    if before == group_ids {
        return Ok(before);
    }
    group_member::Entity::delete_many()
        .filter(group_member::Column::UserId.eq(user_id))
        .exec(conn)
        .await?;
    let rows: Vec<group_member::ActiveModel> = group_ids
        .iter()
        .map(|group_id| group_member::ActiveModel {
            group_id: Set(*group_id),
            user_id: Set(user_id),
        })
        .collect();
    bulk::insert_all(conn, rows).await?;
    Ok(before)
}

/// When each of `users` last signed in (absent: never).
pub(super) async fn sign_ins_of(
    conn: &impl ConnectionTrait,
    users: &[Uuid],
) -> ServiceResult<HashMap<Uuid, chrono::DateTime<chrono::Utc>>> {
    let mut sign_ins = HashMap::new();
    for chunk in bulk::in_chunks(users) {
        let rows: Vec<(Uuid, chrono::DateTime<chrono::Utc>)> = user_sign_in::Entity::find()
            .select_only()
            .columns([user_sign_in::Column::UserId, user_sign_in::Column::LastAt])
            .filter(user_sign_in::Column::UserId.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        sign_ins.extend(rows);
    }
    Ok(sign_ins)
}
