//! Read departments: one by id, all the caller may see, or one keyset page of them
//! (neighbours.md sections 3.1 to 3.3).
//!
//! A scoped caller (department administrator, publisher, custom role) sees the subtrees of the
//! departments it manages; everything else reads like a department that does not exist.

use sea_orm::{
    ColumnTrait as _, ConnectionTrait, EntityTrait as _, QueryFilter as _, QueryOrder as _,
    QuerySelect as _, prelude::Uuid,
};

use super::lookups::{self as scope, find_department};
use crate::{
    access::{Caller, Grant, Operation},
    domain::{ids::ResourceRef, page::Page},
    entities::department,
    error::{ServiceError, ServiceResult},
};

/// The departments of one answer, ascending by id.
#[derive(Debug, Clone)]
pub struct DepartmentList {
    pub departments: Vec<department::Model>,
    /// Present while more departments follow this page.
    pub next_page_token: Option<String>,
}

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
pub async fn list_departments(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    page: Option<super::Parsed<Page>>,
) -> ServiceResult<DepartmentList> {
    let grant = caller.grant(Operation::ReadDepartments)?;
    let page = page.transpose()?;
    let mut query = department::Entity::find()
        .filter(department::Column::AccountId.eq(caller.account_id))
        .order_by_asc(department::Column::Id);
    if grant == Grant::InScope {
        if caller.managed_department_ids.is_empty() {
            return Ok(DepartmentList {
                departments: Vec::new(),
                next_page_token: None,
            });
        }
        query = query.filter(
            department::Column::Id.in_subquery(scope::subtree_departments(
                &caller.managed_department_ids,
            )),
        );
    }
    let Some(page) = page else {
        return Ok(DepartmentList {
            departments: query.all(conn).await?,
            next_page_token: None,
        });
    };
    if let Some(after) = page.after {
        query = query.filter(department::Column::Id.gt(after));
    }
    // One row more than the page tells whether another page follows, so no token ever
    // leads to an empty page.
    let mut departments = query.limit(page.size + 1).all(conn).await?;
    let more = departments.len() as u64 > page.size;
    departments.truncate(page.size as usize);
    let next_page_token = more
        .then(|| departments.last().map(|last| page.next_token(last.id)))
        .flatten();
    Ok(DepartmentList {
        departments,
        next_page_token,
    })
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
