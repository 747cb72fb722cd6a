//! `projects`: containers of content items, with their authors.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "projects")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub account_id: Uuid,
    #[sea_orm(column_type = "String(StringLen::N(255))")]
    pub name: String,
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
    #[sea_orm(has_many = "super::project_author::Entity")]
    ProjectAuthor,
    #[sea_orm(has_many = "super::content_item::Entity")]
    ContentItem,
}

impl Related<super::account::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Account.def()
    }
}

impl Related<super::project_author::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ProjectAuthor.def()
    }
}

impl Related<super::content_item::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ContentItem.def()
    }
}

/// The project's authors.
impl Related<super::user::Entity> for Entity {
    fn to() -> RelationDef {
        super::project_author::Relation::User.def()
    }

    fn via() -> Option<RelationDef> {
        Some(super::project_author::Relation::Project.def().rev())
    }
}

impl ActiveModelBehavior for ActiveModel {}
