//! `webhook_subscriptions`: one event type a subscriber receives, with its filters (each a
//! compact JSON array of lower-case ids, ascending; `[]` is no filter).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_subscriptions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub subscriber_id: Uuid,
    pub account_id: Uuid,
    pub event_type: String,
    #[sea_orm(column_type = "Text")]
    pub user_ids: String,
    #[sea_orm(column_type = "Text")]
    pub course_ids: String,
    #[sea_orm(column_type = "Text")]
    pub course_item_ids: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
