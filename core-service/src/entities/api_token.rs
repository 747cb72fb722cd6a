//! `api_tokens`: the hash of each issued access token, its client and when it expires.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "api_tokens")]
pub struct Model {
    /// SHA-256 of the token, lower-case hex.
    #[sea_orm(primary_key, auto_increment = false)]
    pub token_hash: String,
    pub client_id: Uuid,
    /// Unix seconds.
    pub expires_at: i64,
    /// SHA-256 of the rights its user had when it was issued, lower-case hex: a token whose
    /// user's rights differ is refused.
    pub rights: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::api_client::Entity",
        from = "Column::ClientId",
        to = "super::api_client::Column::Id",
        on_update = "Restrict",
        on_delete = "Cascade"
    )]
    ApiClient,
}

impl Related<super::api_client::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ApiClient.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
