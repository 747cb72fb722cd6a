//! `result_tasks`: the task a recording answers with (results.md section 6). Every recording
//! is applied before it is answered, so a task is written `complete`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "result_tasks")]
pub struct Model {
    /// Positive and below 2^53, so that it is exact as a JSON number.
    #[sea_orm(primary_key)]
    pub id: i64,
    pub account_id: Uuid,
    /// The user who started it.
    pub started_by: Uuid,
    #[sea_orm(column_type = "String(StringLen::N(16))")]
    pub status: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::account::Entity",
        from = "Column::AccountId",
        to = "super::account::Column::Id",
        on_update = "Restrict",
        on_delete = "Restrict"
    )]
    Account,
    #[sea_orm(
        belongs_to = "super::user::Entity",
        from = "Column::StartedBy",
        to = "super::user::Column::Id",
        on_update = "Restrict",
        on_delete = "Cascade"
    )]
    StartedBy,
}

impl ActiveModelBehavior for ActiveModel {}
