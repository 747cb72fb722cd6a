//! Read users: one profile by id, every user matching some filters, or one keyset page of
//! them (neighbours.md sections 4.1 to 4.4).
//!
//! A scoped caller (department administrator, custom role with `user.read`) sees the users
//! whose own department lies in the subtrees it manages; a user outside reads as 403 by id
//! (like departments) and is simply absent from lists.

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
};

use futures::Stream;
use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, PaginatorTrait as _,
    QueryFilter as _, QueryOrder as _, QuerySelect as _, prelude::Uuid,
};

use crate::service::{
    Parsed,
    lookups::{self as scope, find_user, require_departments, unknown, users_in_subtrees},
    users::fields as user_fields,
};
use crate::{
    access::{Caller, Grant, Operation},
    db::bulk,
    domain::{
        ids::{IdList, ResourceRef},
        login::email_key,
        page::{Listing, Page},
        profile_fields::ProfileField,
    },
    entities::{group, group_member, user, user_managed_department},
    error::{ServiceError, ServiceResult},
};

/// A user with what its profile shows beside the row.
#[derive(Debug, Clone)]
pub struct UserProfile {
    pub user: user::Model,
    /// Groups the user is a stored member of, ascending.
    pub group_ids: Vec<Uuid>,
    /// Departments the user manages, ascending.
    pub managed_department_ids: Vec<Uuid>,
    /// The other profile fields, ascending by name.
    pub fields: Vec<ProfileField>,
    /// The user's last authenticated request; `None`: never.
    pub last_sign_in_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// The filters of `GET /user` and `GET /users`: within one filter any value matches, and
/// every filter given must match (neighbours Q8).
#[derive(Debug, Clone, Default)]
pub struct UserFilter {
    /// Users in these departments or their sub-departments.
    pub department_ids: IdList,
    /// Stored members of these groups, or users in the subtree a smart group follows.
    pub group_ids: IdList,
    /// Logins (the sign-in names), compared case-insensitively.
    pub logins: Vec<String>,
    /// E-mail addresses (the login's, or the one given apart), compared case-insensitively.
    pub emails: Vec<String>,
}

pub type UserList = crate::service::keyset::Paged<UserProfile>;

/// Page `number` (1-based) of `size` users, for the page-number list (`POST /user/list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberedPage {
    pub number: u64,
    pub size: u64,
}

impl NumberedPage {
    pub fn parse(number: u64, size: Option<u64>) -> Result<Self, crate::domain::Invalid> {
        use crate::domain::{
            Invalid, Reason,
            page::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE},
        };
        let size = size.unwrap_or(DEFAULT_PAGE_SIZE);
        if !(1..=MAX_PAGE_SIZE).contains(&size) {
            let range = Reason::OutOfRange {
                min: 1,
                max: MAX_PAGE_SIZE,
            };
            return Err(Invalid::new("pageSize", range));
        }
        // Far enough that no account reaches it, small enough that no offset overflows.
        let max = u64::from(u32::MAX);
        if !(1..=max).contains(&number) {
            return Err(Invalid::new("page", Reason::OutOfRange { min: 1, max }));
        }
        Ok(Self { number, size })
    }
}

/// Page `page` of the matching users the caller may see, and how many match in all.
///
/// Numbered pages cannot start from a key: page `n` skips `(n - 1) * size` entries of the
/// `(account_id, id)` index (or of the in-memory id list of a scope or filter), so a walk
/// through the whole account costs more the further it goes. Clients of this list fetch
/// each page once in order, and the keyset `/users` is there for the large walks.
pub async fn numbered_users(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    filter: Parsed<UserFilter>,
    page: Parsed<NumberedPage>,
) -> ServiceResult<(Vec<UserProfile>, u64)> {
    let grant = caller.grant(Operation::PageUsers)?;
    let filter = filter?;
    let page = page?;
    let candidates = candidates(conn, caller, grant, &filter).await?;
    let skip = (page.number - 1).saturating_mul(page.size);
    let (rows, total) = match candidates {
        Some(ids) => {
            let total = ids.len() as u64;
            let start = usize::try_from(skip).unwrap_or(usize::MAX).min(ids.len());
            let end = ids.len().min(start.saturating_add(page.size as usize));
            let rows = read_after(
                conn,
                caller.account_id,
                Some(&ids[start..end]),
                None,
                page.size,
            )
            .await?;
            (rows, total)
        }
        None => {
            let in_account =
                user::Entity::find().filter(user::Column::AccountId.eq(caller.account_id));
            let total = in_account.clone().count(conn).await?;
            let rows = in_account
                .order_by_asc(user::Column::Id)
                .offset(skip)
                .limit(page.size)
                .all(conn)
                .await?;
            (rows, total)
        }
    };
    Ok((profiles(conn, rows).await?, total))
}

pub async fn get_user(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    user: &ResourceRef,
) -> ServiceResult<UserProfile> {
    let grant = caller.grant(Operation::ReadUsers)?;
    let user_id = user.id("User")?;
    let found = find_user(conn, caller.account_id, user_id)
        .await?
        .ok_or_else(|| user.not_found("User"))?;
    if grant == Grant::InScope
        && !scope::department_in_scope(conn, &caller.managed_department_ids, found.department_id)
            .await?
    {
        return Err(ServiceError::denied(
            "You may read only users of the departments you manage and their sub-departments.",
        ));
    }
    Ok(profiles(conn, vec![found]).await?.remove(0))
}

/// Every matching user the caller may see (`page` `None`), or one page of them.
pub async fn list_users(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    filter: Parsed<UserFilter>,
    page: Option<Parsed<Page>>,
) -> ServiceResult<UserList> {
    let operation = if page.is_some() {
        Operation::PageUsers
    } else {
        Operation::ReadUsers
    };
    let grant = caller.grant(operation)?;
    let filter = filter?;
    let page = page.transpose()?;
    let candidates = candidates(conn, caller, grant, &filter).await?;
    let rows = crate::service::keyset::read(
        Listing::Users,
        page,
        |row: &user::Model| row.id,
        |after, limit| read_after(conn, caller.account_id, candidates.as_deref(), after, limit),
    )
    .await?;
    Ok(UserList {
        items: profiles(conn, rows.items).await?,
        next_page_token: rows.next_page_token,
    })
}

/// Every matching user the caller may see, as chunks read one after the other
/// ([`crate::service::keyset::stream`]); refused like the unpaged [`list_users`] before the first.
pub async fn stream_users(
    db: &DatabaseConnection,
    caller: &Caller,
    filter: Parsed<UserFilter>,
) -> ServiceResult<impl Stream<Item = ServiceResult<Vec<UserProfile>>> + Send + 'static> {
    let grant = caller.grant(Operation::ReadUsers)?;
    let filter = filter?;
    let candidates: Option<Arc<[Uuid]>> = candidates(db, caller, grant, &filter)
        .await?
        .map(Into::into);
    let (db, account_id) = (db.clone(), caller.account_id);
    Ok(crate::service::keyset::stream(
        |profile: &UserProfile| profile.user.id,
        move |after, limit| {
            let (db, candidates) = (db.clone(), candidates.clone());
            async move {
                let rows = read_after(&db, account_id, candidates.as_deref(), after, limit).await?;
                profiles(&db, rows).await
            }
        },
    ))
}

/// The ids the answer is limited to, ascending, or `None` for the whole account.
///
/// No index holds a subtree's (or a group's) users in account-wide id order, so each
/// restriction is read once through its own index and intersected here, as the points
/// listing does; the pages are then cut from the sorted ids.
async fn candidates(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    grant: Grant,
    filter: &UserFilter,
) -> ServiceResult<Option<Vec<Uuid>>> {
    let mut sets: Vec<BTreeSet<Uuid>> = Vec::new();
    if grant == Grant::InScope {
        let managed = &caller.managed_department_ids;
        sets.push(subtree_users(conn, caller.account_id, managed).await?);
    }
    if !filter.department_ids.is_empty() {
        let ids = filter.department_ids.as_slice();
        require_departments(conn, caller.account_id, ids, "departments").await?;
        sets.push(subtree_users(conn, caller.account_id, ids).await?);
    }
    if !filter.group_ids.is_empty() {
        sets.push(group_users(conn, caller.account_id, filter.group_ids.as_slice()).await?);
    }
    if !filter.logins.is_empty() {
        sets.push(users_by_login(conn, caller.account_id, &filter.logins).await?);
    }
    if !filter.emails.is_empty() {
        sets.push(users_by_email(conn, caller.account_id, &filter.emails).await?);
    }
    let mut sets = sets.into_iter();
    let Some(first) = sets.next() else {
        return Ok(None);
    };
    let both = sets.fold(first, |all, next| {
        all.intersection(&next).copied().collect()
    });
    Ok(Some(both.into_iter().collect()))
}

async fn subtree_users(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    roots: &[Uuid],
) -> ServiceResult<BTreeSet<Uuid>> {
    Ok(users_in_subtrees(conn, account_id, roots)
        .await?
        .into_iter()
        .collect())
}

/// The users of `group_ids` (each must name a group of the account, or 400 naming `groups`).
async fn group_users(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    group_ids: &[Uuid],
) -> ServiceResult<BTreeSet<Uuid>> {
    let groups = group::Entity::find()
        .filter(group::Column::AccountId.eq(account_id))
        .filter(group::Column::Id.is_in(group_ids.iter().copied()))
        .all(conn)
        .await?;
    if let Some(missing) = group_ids
        .iter()
        .find(|id| !groups.iter().any(|g| g.id == **id))
    {
        return Err(unknown("groups", *missing, "group"));
    }
    let mut users = BTreeSet::new();
    let mut stored = Vec::new();
    let mut smart = Vec::new();
    for group in groups {
        match group.smart_department_id {
            Some(department) => smart.push(department),
            None => stored.push(group.id),
        }
    }
    if !smart.is_empty() {
        users.extend(subtree_users(conn, account_id, &smart).await?);
    }
    for group_id in stored {
        let members: Vec<Uuid> = group_member::Entity::find()
            .select_only()
            .column(group_member::Column::UserId)
            .filter(group_member::Column::GroupId.eq(group_id))
            .into_tuple()
            .all(conn)
            .await?;
        users.extend(members);
    }
    Ok(users)
}

/// Users whose login is one of `logins`, through the unique `(account_id, email_key)` index.
async fn users_by_login(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    logins: &[String],
) -> ServiceResult<BTreeSet<Uuid>> {
    let keys: Vec<String> = logins.iter().map(|raw| email_key(raw)).collect();
    let mut found = BTreeSet::new();
    for chunk in bulk::in_chunks(&keys) {
        let ids: Vec<Uuid> = user::Entity::find()
            .select_only()
            .column(user::Column::Id)
            .filter(user::Column::AccountId.eq(account_id))
            .filter(user::Column::EmailKey.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(conn)
            .await?;
        found.extend(ids);
    }
    Ok(found)
}

/// Users whose e-mail address is one of `emails`: those with an address apart, through
/// `(account_id, contact_email_key)`, and those whose login is the address, through the
/// login index (an address apart wins over the login's).
async fn users_by_email(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    emails: &[String],
) -> ServiceResult<BTreeSet<Uuid>> {
    let keys: Vec<String> = emails.iter().map(|raw| email_key(raw)).collect();
    let mut found = BTreeSet::new();
    for chunk in bulk::in_chunks(&keys) {
        let apart: Vec<Uuid> = user::Entity::find()
            .select_only()
            .column(user::Column::Id)
            .filter(user::Column::AccountId.eq(account_id))
            .filter(user::Column::ContactEmailKey.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(conn)
            .await?;
        let by_login: Vec<Uuid> = user::Entity::find()
            .select_only()
            .column(user::Column::Id)
            .filter(user::Column::AccountId.eq(account_id))
            .filter(user::Column::EmailKey.is_in(chunk.iter().cloned()))
            .filter(user::Column::ContactEmailKey.is_null())
            .into_tuple()
            .all(conn)
            .await?;
        found.extend(apart);
        found.extend(by_login);
    }
    Ok(found)
}

/// Up to `limit` users with ids greater than `after`, ascending: of the whole account on
/// its `(account_id, id)` index, or of `candidates` by primary key.
async fn read_after(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    candidates: Option<&[Uuid]>,
    after: Option<Uuid>,
    limit: u64,
) -> ServiceResult<Vec<user::Model>> {
    let in_account = user::Entity::find().filter(user::Column::AccountId.eq(account_id));
    let Some(candidates) = candidates else {
        let query = crate::service::keyset::account_range(
            conn.get_database_backend(),
            user::Entity::find(),
            user::Column::AccountId,
            user::Column::Id,
            account_id,
            after,
        );
        return Ok(query.limit(limit).all(conn).await?);
    };
    let start = after.map_or(0, |a| candidates.partition_point(|id| *id <= a));
    let end = candidates.len().min(start.saturating_add(limit as usize));
    let mut users = Vec::with_capacity(end - start);
    for chunk in bulk::in_chunks(&candidates[start..end]) {
        users.extend(
            in_account
                .clone()
                .filter(user::Column::Id.is_in(chunk.iter().copied()))
                .all(conn)
                .await?,
        );
    }
    users.sort_unstable_by_key(|user| user.id);
    Ok(users)
}

/// The users with their groups and managed departments, in the order given.
async fn profiles(
    conn: &impl ConnectionTrait,
    users: Vec<user::Model>,
) -> ServiceResult<Vec<UserProfile>> {
    let ids: Vec<Uuid> = users.iter().map(|user| user.id).collect();
    let mut groups: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
    let mut managed: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
    for chunk in bulk::in_chunks(&ids) {
        let memberships: Vec<(Uuid, Uuid)> = group_member::Entity::find()
            .select_only()
            .column(group_member::Column::UserId)
            .column(group_member::Column::GroupId)
            .filter(group_member::Column::UserId.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        for (user_id, group_id) in memberships {
            groups.entry(user_id).or_default().push(group_id);
        }
        let managing: Vec<(Uuid, Uuid)> = user_managed_department::Entity::find()
            .select_only()
            .column(user_managed_department::Column::UserId)
            .column(user_managed_department::Column::DepartmentId)
            .filter(user_managed_department::Column::UserId.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        for (user_id, department_id) in managing {
            managed.entry(user_id).or_default().push(department_id);
        }
    }
    let mut fields = user_fields::fields_of(conn, &ids).await?;
    let sign_ins = user_fields::sign_ins_of(conn, &ids).await?;
    Ok(users
        .into_iter()
        .map(|user| {
            let mut group_ids = groups.remove(&user.id).unwrap_or_default();
            group_ids.sort_unstable();
            let mut managed_department_ids = managed.remove(&user.id).unwrap_or_default();
            managed_department_ids.sort_unstable();
            UserProfile {
                fields: fields.remove(&user.id).unwrap_or_default(),
                last_sign_in_at: sign_ins.get(&user.id).copied(),
                user,
                group_ids,
                managed_department_ids,
            }
        })
        .collect())
}
