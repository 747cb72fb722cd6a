//! Read and rename groups (interface 4.3, 4.4; contract section 7).

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _,
    PaginatorTrait as _, QueryFilter as _, QueryOrder as _, QuerySelect as _, Select, Set,
    prelude::Uuid,
};
use serde_json::json;

use super::{audit, scope};
use crate::{
    access::{Caller, Grant, Operation},
    db::write_transaction,
    domain::{
        ids::{not_found, parse_resource_id},
        names::GroupName,
    },
    entities::{group, group_member, user},
    error::ServiceResult,
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupView {
    pub id: Uuid,
    pub name: String,
    pub users_count: u64,
    /// Ascending; empty when the caller may see only the count.
    pub user_ids: Vec<Uuid>,
    pub is_smart: bool,
}

pub async fn get_group(
    db: &DatabaseConnection,
    caller: &Caller,
    group_id: &str,
) -> ServiceResult<GroupView> {
    let grant = caller.grant(Operation::GetGroup)?;
    let id = parse_resource_id("Group", group_id)?;
    let group = find_in_account(db, caller.account_id, id)
        .await?
        .ok_or_else(|| not_found("Group", group_id))?;
    let members = members_query(&group);
    let (users_count, user_ids) = if grant == Grant::CountOnly {
        (members.count(db).await?, Vec::new())
    } else {
        let ids: Vec<Uuid> = members.into_tuple().all(db).await?;
        (ids.len() as u64, ids)
    };
    Ok(GroupView {
        id: group.id,
        name: group.name,
        users_count,
        user_ids,
        is_smart: group.smart_department_id.is_some(),
    })
}

pub async fn update_group(
    db: &DatabaseConnection,
    caller: &Caller,
    group_id: &str,
    name: Option<String>,
) -> ServiceResult<()> {
    caller.grant(Operation::UpdateGroup)?;
    let name = name.as_deref().map(GroupName::parse).transpose()?;
    // After the name: a malformed id names nothing, so it must answer like an unknown one.
    let raw_id = group_id.to_owned();
    let id = parse_resource_id("Group", group_id)?;
    let Some(name) = name else {
        // A no-op writes nothing, not even the account lock; it still answers 404.
        find_in_account(db, caller.account_id, id)
            .await?
            .ok_or_else(|| not_found("Group", &raw_id))?;
        return Ok(());
    };
    let caller = caller.clone();
    write_transaction(db, caller.account_id, move |txn| {
        Box::pin(async move {
            let current = find_in_account(txn, caller.account_id, id)
                .await?
                .ok_or_else(|| not_found("Group", &raw_id))?;
            let mut updated: group::ActiveModel = current.clone().into();
            updated.name = Set(name.into_inner());
            let updated = updated.update(txn).await?;
            audit::record(
                txn,
                &caller,
                audit::Change {
                    action: "group.update",
                    entity_type: "group",
                    entity_id: id,
                    before: Some(json!({ "name": current.name })),
                    after: Some(json!({ "name": updated.name })),
                },
            )
            .await
        })
    })
    .await
}

/// Member ids in ascending order: stored members of a plain group, or the users of the
/// rule's department subtree for a smart group.
fn members_query(group: &group::Model) -> Select<user::Entity> {
    let query = user::Entity::find()
        .select_only()
        .column(user::Column::Id)
        .filter(user::Column::AccountId.eq(group.account_id))
        .order_by_asc(user::Column::Id);
    match group.smart_department_id {
        Some(root) => query
            .filter(user::Column::DepartmentId.in_subquery(scope::subtree_departments(&[root]))),
        None => query.filter(
            user::Column::Id.in_subquery(
                sea_orm::sea_query::Query::select()
                    .column(group_member::Column::UserId)
                    .from(group_member::Entity)
                    .and_where(group_member::Column::GroupId.eq(group.id))
                    .to_owned(),
            ),
        ),
    }
}

async fn find_in_account(
    conn: &impl ConnectionTrait,
    account_id: Uuid,
    group_id: Uuid,
) -> ServiceResult<Option<group::Model>> {
    Ok(group::Entity::find_by_id(group_id)
        .filter(group::Column::AccountId.eq(account_id))
        .one(conn)
        .await?)
}
