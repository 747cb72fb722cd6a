//! `webhook_deliveries`: a POST of consecutive events of one type, fixed at its first
//! attempt (every retry sends the same body under the same id). A subscriber has at most one
//! at a time; its events are the subscriber's numbers `first_seq` to `last_seq`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_deliveries")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub subscriber_id: Uuid,
    pub event_type: String,
    #[sea_orm(column_type = "Text")]
    pub body: String,
    pub attempts: i32,
    /// Events it carries.
    pub events: i32,
    pub first_seq: i64,
    pub last_seq: i64,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl Model {
    /// The subscriber's numbers of the events it carries.
    pub fn seqs(&self) -> std::ops::RangeInclusive<i64> {
        self.first_seq..=self.last_seq
    }
}

impl ActiveModelBehavior for ActiveModel {}
