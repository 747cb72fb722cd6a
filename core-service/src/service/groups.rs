//! Read and rename groups (interface 4.3, 4.4; contract section 7).

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _,
    IdenStatic as _, QueryFilter as _, Set,
    prelude::Uuid,
    sea_query::{Alias, Condition, Expr, ExprTrait as _, Query, SelectStatement, UnionType},
};
use serde_json::json;

use super::audit;
use crate::{
    access::{Caller, Grant, Operation},
    db::write_transaction,
    domain::{
        ids::{not_found, parse_resource_id},
        names::GroupName,
    },
    entities::{department_closure as closure, group, group_member, user},
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

/// One query, group and members together: this is the hottest read of the interface.
pub async fn get_group(
    db: &DatabaseConnection,
    caller: &Caller,
    group_id: &str,
) -> ServiceResult<GroupView> {
    let grant = caller.grant(Operation::GetGroup)?;
    let id = parse_resource_id("Group", group_id)?;
    let count_only = grant == Grant::CountOnly;
    let rows = db
        .query_all(&group_with_members(caller.account_id, id, count_only))
        .await?;
    let mut group = None;
    let mut user_ids = Vec::new();
    let mut counted = 0;
    for row in rows {
        if row.try_get::<i32>("", READ_KIND)? == GROUP_ROW {
            let name: String = row.try_get("", group::Column::Name.as_str())?;
            let smart: Option<Uuid> = row.try_get("", group::Column::SmartDepartmentId.as_str())?;
            group = Some((name, smart.is_some()));
        } else if count_only {
            counted = row.try_get::<i64>("", READ_COUNT)?;
        } else {
            user_ids.extend(row.try_get::<Option<Uuid>>("", READ_ID)?);
        }
    }
    let (name, is_smart) = group.ok_or_else(|| not_found("Group", group_id))?;
    // Byte order of UUIDs is the order of their lower-case text: ascending `userId`.
    user_ids.sort_unstable();
    Ok(GroupView {
        id,
        name,
        users_count: if count_only {
            u64::try_from(counted).unwrap_or(0)
        } else {
            user_ids.len() as u64
        },
        user_ids,
        is_smart,
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

const READ_KIND: &str = "row_kind";
const READ_ID: &str = "id";
const READ_COUNT: &str = "member_count";
const GROUP_ROW: i32 = 0;

/// The group's row (kind 0: name, smart rule) followed by its members (kind 1: one row per
/// member id, or one row with their count), as one `UNION ALL`. Nothing at all when the
/// group is not in `account_id`.
fn group_with_members(account_id: Uuid, group_id: Uuid, count_only: bool) -> SelectStatement {
    let mut query = Query::select()
        .expr_as(Expr::cust("0"), READ_KIND)
        .expr_as(Expr::col(group::Column::Id), READ_ID)
        .column(group::Column::Name)
        .column(group::Column::SmartDepartmentId)
        .expr_as(Expr::null(), READ_COUNT)
        .from(group::Entity)
        .and_where(group::Column::Id.eq(group_id))
        .and_where(group::Column::AccountId.eq(account_id))
        .to_owned();
    let members = Alias::new("members");
    let mut member_rows = Query::select();
    member_rows.expr_as(Expr::cust("1"), READ_KIND);
    if count_only {
        member_rows
            .expr_as(Expr::null(), READ_ID)
            .expr(Expr::null())
            .expr(Expr::null())
            .expr_as(Expr::cust("COUNT(*)"), READ_COUNT);
    } else {
        member_rows
            .expr_as(Expr::col((members.clone(), Alias::new(READ_ID))), READ_ID)
            .expr(Expr::null())
            .expr(Expr::null())
            .expr_as(Expr::null(), READ_COUNT);
    }
    member_rows.from_subquery(member_ids(account_id, group_id), members);
    query.union(UnionType::All, member_rows.to_owned());
    query
}

/// Ids of the group's members (column `id`): its stored members when it is a plain
/// group, the users of the rule's department subtree when it is a smart one; only users
/// of `account_id`, and nothing when the group is not in that account.
fn member_ids(account_id: Uuid, group_id: Uuid) -> SelectStatement {
    let the_group = || {
        Condition::all()
            .add(Expr::col((group::Entity, group::Column::Id)).eq(group_id))
            .add(Expr::col((group::Entity, group::Column::AccountId)).eq(account_id))
    };
    let same_account = Expr::col((user::Entity, user::Column::AccountId))
        .equals((group::Entity, group::Column::AccountId));
    let mut stored = Query::select()
        .expr_as(Expr::col((user::Entity, user::Column::Id)), READ_ID)
        .from(group_member::Entity)
        .inner_join(
            group::Entity,
            Expr::col((group::Entity, group::Column::Id))
                .equals((group_member::Entity, group_member::Column::GroupId)),
        )
        .inner_join(
            user::Entity,
            Expr::col((user::Entity, user::Column::Id))
                .equals((group_member::Entity, group_member::Column::UserId))
                .and(same_account.clone()),
        )
        .cond_where(the_group())
        .and_where(Expr::col((group::Entity, group::Column::SmartDepartmentId)).is_null())
        .to_owned();
    let by_rule = Query::select()
        .expr_as(Expr::col((user::Entity, user::Column::Id)), READ_ID)
        .from(group::Entity)
        .inner_join(
            closure::Entity,
            Expr::col((closure::Entity, closure::Column::AncestorId))
                .equals((group::Entity, group::Column::SmartDepartmentId)),
        )
        .inner_join(
            user::Entity,
            Expr::col((user::Entity, user::Column::DepartmentId))
                .equals((closure::Entity, closure::Column::DescendantId))
                .and(same_account),
        )
        .cond_where(the_group())
        .to_owned();
    stored.union(UnionType::All, by_rule);
    stored
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
