//! `department_closure`: one row per (ancestor, descendant) pair of the department tree,
//! each department with itself at depth 0.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "department_closure")]
pub struct Model {
    pub account_id: Uuid,
    #[sea_orm(primary_key, auto_increment = false)]
    pub ancestor_id: Uuid,
    #[sea_orm(primary_key, auto_increment = false)]
    pub descendant_id: Uuid,
    /// Edges between ancestor and descendant (0 = the department itself).
    pub depth: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::account::Entity",
        from = "Column::AccountId",
        to = "super::account::Column::Id",
        on_update = "Restrict",
        on_delete = "Cascade"
    )]
    Account,
    #[sea_orm(
        belongs_to = "super::department::Entity",
        from = "Column::AncestorId",
        to = "super::department::Column::Id",
        on_update = "Restrict",
        on_delete = "Cascade"
    )]
    Ancestor,
    #[sea_orm(
        belongs_to = "super::department::Entity",
        from = "Column::DescendantId",
        to = "super::department::Column::Id",
        on_update = "Restrict",
        on_delete = "Cascade"
    )]
    Descendant,
}

impl ActiveModelBehavior for ActiveModel {}
