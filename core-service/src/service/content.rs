//! Read a content item (interface 4.6; contract section 8).

use sea_orm::{
    ColumnTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _, prelude::Uuid,
};

use crate::{
    access::{Caller, Grant, Operation},
    domain::{
        content::{default_view_url, format_added_date},
        ids::{not_found, parse_resource_id},
    },
    entities::{content_item, project_author},
    error::{ServiceError, ServiceResult},
};

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
    content_item_id: &str,
) -> ServiceResult<ContentItemView> {
    let grant = caller.grant(Operation::GetContentItem)?;
    let id = parse_resource_id("Content item", content_item_id)?;
    let item = content_item::Entity::find_by_id(id)
        .filter(content_item::Column::AccountId.eq(caller.account_id))
        .one(db)
        .await?
        .ok_or_else(|| not_found("Content item", content_item_id))?;
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
    Ok(ContentItemView {
        id: item.id,
        title: item.title,
        description: item.description,
        user_id: item.user_id,
        added_date: format_added_date(item.added_at),
        view_url: item
            .view_url
            .unwrap_or_else(|| default_view_url(&caller.account_url, item.id)),
        content_type: item.content_type,
    })
}
