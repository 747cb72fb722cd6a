//! `enrollments`: a learner (a user) enrolled in a content item.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "enrollments")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub account_id: Uuid,
    pub learner_id: Uuid,
    pub content_item_id: Uuid,
    pub created_at: DateTimeUtc,
    /// When the learner may start; `None` means from `created_at`.
    pub access_at: Option<DateTimeUtc>,
    /// `None`: no due date.
    pub due_at: Option<DateTimeUtc>,
    /// Whether the item closes to the learner after `due_at`.
    pub lock_after_due: bool,
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
        from = "Column::LearnerId",
        to = "super::user::Column::Id",
        on_update = "Restrict",
        on_delete = "Restrict"
    )]
    Learner,
    #[sea_orm(
        belongs_to = "super::content_item::Entity",
        from = "Column::ContentItemId",
        to = "super::content_item::Column::Id",
        on_update = "Restrict",
        on_delete = "Restrict"
    )]
    ContentItem,
}

impl Related<super::account::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Account.def()
    }
}

/// The learner.
impl Related<super::user::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Learner.def()
    }
}

impl Related<super::content_item::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ContentItem.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
