//! Read a content item (interface 4.6; contract section 8).

use sea_orm::{
    ColumnTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _, prelude::Uuid,
};

use crate::{
    access::{Caller, Grant, Operation},
    domain::ids::{not_found, parse_resource_id},
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

/// `{account URL}/view/{contentItemId}`.
pub fn default_view_url(account_url: &str, id: Uuid) -> String {
    format!("{}/view/{id}", account_url.trim_end_matches('/'))
}

/// Stored in UTC, so the offset is always `+00:00` (never `Z`).
pub fn format_added_date(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S+00:00").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone as _;

    #[test]
    fn added_dates_have_seconds_and_a_numeric_offset() {
        let at = chrono::Utc
            .with_ymd_and_hms(2019, 3, 26, 6, 34, 57)
            .unwrap()
            + chrono::Duration::milliseconds(789);
        assert_eq!(format_added_date(at), "2019-03-26T06:34:57+00:00");
    }

    #[test]
    fn view_urls_hang_off_the_account_url() {
        let id = Uuid::nil();
        assert_eq!(
            default_view_url("https://a.example.com/", id),
            "https://a.example.com/view/00000000-0000-0000-0000-000000000000"
        );
    }
}
