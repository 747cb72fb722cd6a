//! `audit_log`: one row per change, written in the same transaction as the change.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_log")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub account_id: Uuid,
    /// Who made the change; `None` for imports.
    pub actor_user_id: Option<Uuid>,
    /// What happened, e.g. `department.update`.
    #[sea_orm(column_type = "String(StringLen::N(64))")]
    pub action: String,
    /// The kind of the changed row, e.g. `department`.
    #[sea_orm(column_type = "String(StringLen::N(64))")]
    pub entity_type: String,
    pub entity_id: Uuid,
    /// The request id of the call, when there was one.
    #[sea_orm(column_type = "Text", nullable)]
    pub request_id: Option<String>,
    /// The values before the change, as JSON text (`None` for a creation).
    #[sea_orm(column_type = "Text", nullable)]
    pub before: Option<String>,
    /// The values after the change, as JSON text (`None` for a deletion).
    #[sea_orm(column_type = "Text", nullable)]
    pub after: Option<String>,
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
        from = "Column::ActorUserId",
        to = "super::user::Column::Id",
        on_update = "Restrict",
        on_delete = "Restrict"
    )]
    Actor,
}

impl Related<super::account::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Account.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
