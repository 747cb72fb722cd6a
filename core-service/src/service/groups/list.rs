//! List groups: all the caller may see, or one keyset page of them (neighbours.md sections
//! 7.1 and 7.2). Reading one group with its members is [`super::groups::get_group`].
//!
//! Groups belong to the account, not to a department, so a department administrator lists
//! every group of the account, as it reads and renames any of them (open question 17).

use futures::Stream;
use sea_orm::{
    ConnectionTrait, DatabaseConnection, EntityTrait as _, QuerySelect as _, prelude::Uuid,
};

use crate::{
    access::{Caller, Operation},
    domain::page::{Listing, Page},
    entities::group,
    error::ServiceResult,
};

/// The groups of one answer, ascending by id.
pub type GroupList = crate::service::keyset::Paged<group::Model>;

/// Every group the caller may see (`page` `None`), or one page of them.
pub async fn list_groups(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    page: Option<crate::service::Parsed<Page>>,
) -> ServiceResult<GroupList> {
    caller.grant(Operation::ListGroups)?;
    let page = page.transpose()?;
    crate::service::keyset::read(
        Listing::Groups,
        page,
        |group: &group::Model| group.id,
        |after, limit| read_after(conn, caller.account_id, after, limit),
    )
    .await
}

/// Every group of the account, as chunks read one after the other
/// ([`crate::service::keyset::stream`]); refused like [`list_groups`] before the first.
pub fn stream_groups(
    db: &DatabaseConnection,
    caller: &Caller,
) -> ServiceResult<impl Stream<Item = ServiceResult<Vec<group::Model>>> + Send + 'static> {
    caller.grant(Operation::ListGroups)?;
    let (db, account_id) = (db.clone(), caller.account_id);
    Ok(crate::service::keyset::stream(
        |group: &group::Model| group.id,
        move |after, limit| {
            let db = db.clone();
            async move { read_after(&db, account_id, after, limit).await }
        },
    ))
}

/// Up to `limit` groups of the account with ids greater than `after`, ascending: a range
/// of the `(account_id, id)` index.
async fn read_after(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    after: Option<Uuid>,
    limit: u64,
) -> ServiceResult<Vec<group::Model>> {
    let query = crate::service::keyset::account_range(
        conn.get_database_backend(),
        group::Entity::find(),
        group::Column::AccountId,
        group::Column::Id,
        account_id,
        after,
    );
    Ok(query.limit(limit).all(conn).await?)
}
