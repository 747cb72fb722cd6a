//! Read departments: one by id, all the caller may see, or one keyset page of them
//! (neighbours.md sections 3.1 to 3.3).
//!
//! A scoped caller (department administrator, publisher, custom role) sees the subtrees of the
//! departments it manages; everything else reads like a department that does not exist.

use std::{collections::BTreeMap, sync::Arc};

use futures::Stream;
use sea_orm::{
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, EntityTrait as _, JoinType,
    QueryFilter as _, QueryOrder as _, QuerySelect as _, RelationTrait as _, prelude::Uuid,
};

use crate::service::lookups::{self as scope, find_department};
use crate::{
    access::{Caller, Grant, Operation},
    domain::{
        ids::ResourceRef,
        page::{Listing, Page},
    },
    entities::{department, department_closure as closure},
    error::{ServiceError, ServiceResult},
};

/// The departments of one answer, ascending by id.
pub type DepartmentList = crate::service::keyset::Paged<department::Model>;

pub async fn get_department(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    department: &ResourceRef,
) -> ServiceResult<department::Model> {
    let grant = caller.grant(Operation::ReadDepartments)?;
    let department_id = department.id("Department")?;
    let found = find_department(conn, caller.account_id, department_id)
        .await?
        .ok_or_else(|| department.not_found("Department"))?;
    if grant == Grant::InScope
        && !scope::department_in_scope(conn, &caller.managed_department_ids, department_id).await?
    {
        return Err(ServiceError::denied(
            "You may read only departments you manage and their sub-departments.",
        ));
    }
    Ok(found)
}

/// Every department the caller may see (`page` `None`), or one page of them.
///
/// The whole list is read in keyset pages too: every statement walks an index in id order,
/// none sorts the account's departments.
pub async fn list_departments(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    page: Option<crate::service::Parsed<Page>>,
) -> ServiceResult<DepartmentList> {
    let grant = caller.grant(Operation::ReadDepartments)?;
    let page = page.transpose()?;
    crate::service::keyset::read(
        Listing::Departments,
        page,
        |department: &department::Model| department.id,
        |after, limit| read_after(conn, caller, grant, after, limit),
    )
    .await
}

/// Every department the caller may see, as chunks read one after the other
/// ([`crate::service::keyset::stream`]); refused like [`list_departments`] before the first.
pub fn stream_departments(
    db: &DatabaseConnection,
    caller: &Caller,
) -> ServiceResult<impl Stream<Item = ServiceResult<Vec<department::Model>>> + Send + 'static> {
    let grant = caller.grant(Operation::ReadDepartments)?;
    let (db, caller) = (db.clone(), Arc::new(caller.clone()));
    Ok(crate::service::keyset::stream(
        |department: &department::Model| department.id,
        move |after, limit| {
            let (db, caller) = (db.clone(), Arc::clone(&caller));
            async move { read_after(&db, &caller, grant, after, limit).await }
        },
    ))
}

/// Up to `limit` departments the caller may see with ids greater than `after`, ascending.
async fn read_after(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    grant: Grant,
    after: Option<Uuid>,
    limit: u64,
) -> ServiceResult<Vec<department::Model>> {
    if grant != Grant::InScope {
        let query = crate::service::keyset::account_range(
            conn.get_database_backend(),
            department::Entity::find(),
            department::Column::AccountId,
            department::Column::Id,
            caller.account_id,
            after,
        );
        return Ok(query.limit(limit).all(conn).await?);
    }
    // A scope is one or a few subtrees: each is walked in id order on the closure's primary
    // key (ancestor, descendant), each descendant's row fetched by its key beside it, and the
    // walks are merged here, so no statement sorts a subtree however large it is (nor names a
    // page of ids, whose long list SQLite's planner may answer with a scan). Nested subtrees
    // name a department twice; the map keeps one.
    let mut departments = BTreeMap::new();
    for root in &caller.managed_department_ids {
        let mut query = department::Entity::find()
            .join(
                JoinType::InnerJoin,
                closure::Relation::Descendant.def().rev(),
            )
            .filter(closure::Column::AncestorId.eq(*root))
            .order_by_asc(closure::Column::DescendantId);
        if let Some(after) = after {
            query = query.filter(closure::Column::DescendantId.gt(after));
        }
        for row in query.limit(limit).all(conn).await? {
            // The closure below a caller's managed department is its account's own.
            if row.account_id == caller.account_id {
                departments.insert(row.id, row);
            }
        }
    }
    Ok(departments.into_values().take(limit as usize).collect())
}

/// Whether `department_id` has a child; for the delete's checks.
pub(super) async fn has_children(
    conn: &impl ConnectionTrait,
    department_id: Uuid,
) -> ServiceResult<bool> {
    Ok(department::Entity::find()
        .select_only()
        .column(department::Column::Id)
        .filter(department::Column::ParentId.eq(department_id))
        .limit(1)
        .into_tuple::<Uuid>()
        .one(conn)
        .await?
        .is_some())
}
