//! `custom_role_permissions`: the permissions (e.g. `group.read`) of a custom role.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "custom_role_permissions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub custom_role_id: Uuid,
    #[sea_orm(
        primary_key,
        auto_increment = false,
        column_type = "String(StringLen::N(64))"
    )]
    pub permission: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::custom_role::Entity",
        from = "Column::CustomRoleId",
        to = "super::custom_role::Column::Id",
        on_update = "Restrict",
        on_delete = "Cascade"
    )]
    CustomRole,
}

impl Related<super::custom_role::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::CustomRole.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
