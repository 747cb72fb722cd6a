//! `webhook_events`: the outbox. One row per event and matching subscription, written in
//! the transaction of the change; deleted when its delivery is acknowledged.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub account_id: Uuid,
    pub subscriber_id: Uuid,
    /// The account's commit-order number (`webhook_event_counters`).
    pub seq: i64,
    pub event_type: String,
    /// The payload as delivered: compact JSON.
    #[sea_orm(column_type = "Text")]
    pub payload: String,
    /// The delivery carrying the event, once one is formed.
    pub delivery_id: Option<Uuid>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
