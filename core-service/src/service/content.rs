//! Projects and content items: read a content item (interface 4.6; contract section 8),
//! list them ([`list`]), and create projects and content items (writes only
//! `lms.v1.DirectoryService` has, for account owners and administrators).

mod list;

pub use list::{ContentFilter, ContentList, list_content_items, stream_content_items};

use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, DatabaseConnection, EntityTrait as _,
    QueryFilter as _, Set, prelude::Uuid,
};
use serde_json::json;

use super::{
    Parsed,
    audit::{AuditAction, Change},
    lookups::{find_user, require_users, unknown},
    write,
};
use crate::{
    access::{Caller, Grant, Operation},
    db::bulk,
    domain::{
        content::{AddedDate, ViewUrl, default_view_url, format_added_date},
        ids::{IdList, ResourceRef, new_id},
        names::ProjectName,
        text::Description,
    },
    entities::{content_item, project, project_author},
    error::{ServiceError, ServiceResult},
};

#[derive(Debug, Clone)]
pub struct NewProject {
    pub name: ProjectName,
    pub author_ids: IdList,
}

#[derive(Debug, Clone)]
pub struct NewContentItem {
    pub project_id: Uuid,
    /// Checked by `required_text` (at most `MAX_NAME_CHARS`).
    pub title: String,
    pub description: Description,
    pub user_id: Uuid,
    /// Checked by `required_text` (at most `MAX_TYPE_CHARS`).
    pub content_type: String,
    pub added_date: AddedDate,
    /// Absent means `{account URL}/view/{id}`.
    pub view_url: Option<ViewUrl>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentItemView {
    pub id: Uuid,
    pub title: String,
    pub description: String,
    pub user_id: Uuid,
    /// Seconds precision with a numeric offset, e.g. `2019-03-26T06:34:57+00:00`.
    pub added_date: String,
    pub view_url: String,
    pub content_type: String,
}

pub async fn get_content_item(
    db: &DatabaseConnection,
    caller: &Caller,
    content_item: &ResourceRef,
) -> ServiceResult<ContentItemView> {
    let grant = caller.grant(Operation::GetContentItem)?;
    let id = content_item.id("Content item")?;
    let item = content_item::Entity::find_by_id(id)
        .filter(content_item::Column::AccountId.eq(caller.account_id))
        .one(db)
        .await?
        .ok_or_else(|| content_item.not_found("Content item"))?;
    if grant == Grant::AuthoredProjects
        && project_author::Entity::find_by_id((item.project_id, caller.user_id))
            .one(db)
            .await?
            .is_none()
    {
        return Err(ServiceError::denied(
            "You may read only content items of projects you author.",
        ));
    }
    Ok(ContentItemView::of(item, &caller.account_url))
}

impl ContentItemView {
    /// A stored item as the interface shows it in the account at `account_url`.
    fn of(item: content_item::Model, account_url: &str) -> Self {
        Self {
            id: item.id,
            title: item.title,
            description: item.description,
            user_id: item.user_id,
            added_date: format_added_date(item.added_at),
            view_url: item
                .view_url
                .unwrap_or_else(|| default_view_url(account_url, item.id)),
            content_type: item.content_type,
        }
    }
}

pub async fn create_project(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewProject>,
) -> ServiceResult<Uuid> {
    caller.grant(Operation::ManageDirectory)?;
    let new = new?;
    let name = new.name.into_inner();
    let authors = new.author_ids.into_inner();
    write(db, caller, async |w| {
        let txn = w.txn();
        require_users(txn, caller.account_id, &authors, "authorIds").await?;
        let created = project::ActiveModel {
            id: Set(new_id()),
            account_id: Set(caller.account_id),
            name: Set(name),
        }
        .insert(txn)
        .await?;
        let rows: Vec<project_author::ActiveModel> = authors
            .iter()
            .map(|user_id| project_author::ActiveModel {
                project_id: Set(created.id),
                user_id: Set(*user_id),
            })
            .collect();
        bulk::insert_all(txn, rows).await?;
        w.record(Change {
            action: AuditAction::ProjectCreated,
            entity_id: created.id,
            before: None,
            after: Some(json!({ "name": created.name, "authorIds": authors })),
        });
        Ok(created.id)
    })
    .await
}

pub async fn create_content_item(
    db: &DatabaseConnection,
    caller: &Caller,
    new: Parsed<NewContentItem>,
) -> ServiceResult<Uuid> {
    caller.grant(Operation::ManageDirectory)?;
    let new = new?;
    let (project_id, user_id) = (new.project_id, new.user_id);
    let (title, content_type) = (new.title, new.content_type);
    let description = new.description.into_inner();
    let added_at = new.added_date.into_inner();
    let view_url = new.view_url.map(ViewUrl::into_inner);
    write(db, caller, async |w| {
        let txn = w.txn();
        project::Entity::find_by_id(project_id)
            .filter(project::Column::AccountId.eq(caller.account_id))
            .one(txn)
            .await?
            .ok_or_else(|| unknown("projectId", project_id, "project"))?;
        find_user(txn, caller.account_id, user_id)
            .await?
            .ok_or_else(|| unknown("userId", user_id, "user"))?;
        let created = content_item::ActiveModel {
            id: Set(new_id()),
            account_id: Set(caller.account_id),
            project_id: Set(project_id),
            title: Set(title),
            description: Set(description),
            user_id: Set(user_id),
            added_at: Set(added_at),
            content_type: Set(content_type),
            view_url: Set(view_url),
        }
        .insert(txn)
        .await?;
        w.record(Change {
            action: AuditAction::ContentItemCreated,
            entity_id: created.id,
            before: None,
            after: Some(json!({
                "projectId": created.project_id,
                "title": created.title,
                "description": created.description,
                "userId": created.user_id,
                "addedDate": format_added_date(created.added_at),
                "type": created.content_type,
                "viewUrl": created.view_url,
            })),
        });
        Ok(created.id)
    })
    .await
}
