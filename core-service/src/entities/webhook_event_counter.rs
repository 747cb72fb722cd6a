//! `webhook_event_counters`: per account, the number of the last event recorded. A
//! transaction recording events updates it, so its row lock orders them by commit. It also
//! carries the revision of the account's subscriptions (`service::webhooks::known`).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_event_counters")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub account_id: Uuid,
    pub last_seq: i64,
    /// A new random value at every change of the account's subscriptions; 0 is not known.
    pub subscriptions_revision: i64,
    /// How many times a dispatcher lowered a subscriber's `has_events` flag of the account:
    /// a PostgreSQL writer that finds it moved since its snapshot raises its flags whatever
    /// its snapshot says of them.
    pub flags_lowered: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
