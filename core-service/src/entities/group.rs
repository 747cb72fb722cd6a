//! `groups`: named sets of users; a smart group names a department subtree instead of
//! storing members.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "groups")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub account_id: Uuid,
    #[sea_orm(column_type = "String(StringLen::N(255))")]
    pub name: String,
    /// Set for a smart group: its members are the users in this department's subtree.
    pub smart_department_id: Option<Uuid>,
    /// The identity provider's id (SCIM `externalId`), not unique.
    #[sea_orm(column_type = "String(StringLen::N(255))", nullable)]
    pub external_id: Option<String>,
    /// Set on every write; groups older than SCIM hold the upgrade time.
    pub created_at: Option<DateTimeUtc>,
    pub updated_at: Option<DateTimeUtc>,
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
        belongs_to = "super::department::Entity",
        from = "Column::SmartDepartmentId",
        to = "super::department::Column::Id",
        on_update = "Restrict",
        on_delete = "Restrict"
    )]
    SmartDepartment,
    #[sea_orm(has_many = "super::group_member::Entity")]
    GroupMember,
}

impl Related<super::account::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Account.def()
    }
}

impl Related<super::group_member::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::GroupMember.def()
    }
}

/// The stored members (empty for a smart group).
impl Related<super::user::Entity> for Entity {
    fn to() -> RelationDef {
        super::group_member::Relation::User.def()
    }

    fn via() -> Option<RelationDef> {
        Some(super::group_member::Relation::Group.def().rev())
    }
}

impl ActiveModelBehavior for ActiveModel {}
