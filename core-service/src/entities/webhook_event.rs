//! `webhook_events`: the outbox. One row per event and matching subscription, written in
//! the transaction of the change, stored in the subscriber's order of numbers; deleted when
//! the delivery carrying it (`webhook_deliveries`, by number) is acknowledged.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub subscriber_id: Uuid,
    /// The account's commit-order number (`webhook_event_counters`).
    #[sea_orm(primary_key, auto_increment = false)]
    pub seq: i64,
    pub account_id: Uuid,
    pub event_type: String,
    /// The payload as delivered: compact JSON.
    #[sea_orm(column_type = "Text")]
    pub payload: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
