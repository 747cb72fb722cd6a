//! API clients (contract section 12): made, listed and revoked by the account owner and
//! account administrators, each acting as one user of the account.

use sea_orm::{
    ActiveModelTrait as _, ActiveValue::Set, ColumnTrait as _, DatabaseConnection,
    EntityTrait as _, QueryFilter as _, QueryOrder as _, prelude::Uuid,
};
use serde_json::json;

use super::{
    audit::{AuditAction, Change},
    write,
};
use crate::{
    access::{Caller, Operation},
    auth::tokens::{new_secret, secret_hash},
    domain::ids::{ResourceRef, parse_field_id},
    entities::{api_client, user},
    error::{ServiceError, ServiceResult},
};

/// A client just made; its secret is shown this once and stored only as a hash.
#[derive(Debug, Clone)]
pub struct NewApiClient {
    pub client_id: Uuid,
    pub client_secret: String,
}

/// Makes a client acting as the user `user_id` names (a user of the caller's account; 400
/// naming `userId` otherwise).
pub async fn create_api_client(
    db: &DatabaseConnection,
    caller: &Caller,
    user_id: &str,
) -> ServiceResult<NewApiClient> {
    caller.grant(Operation::ManageDirectory)?;
    let user_id = parse_field_id("userId", user_id)?;
    let client_id = Uuid::now_v7();
    let client_secret = new_secret();
    let hash = secret_hash(&client_secret);
    write(db, caller, async |w| {
        let txn = w.txn();
        let exists = user::Entity::find_by_id(user_id)
            .filter(user::Column::AccountId.eq(caller.account_id))
            .one(txn)
            .await?
            .is_some();
        if !exists {
            return Err(ServiceError::invalid(
                "Field userId names no user of this account.",
            ));
        }
        api_client::ActiveModel {
            id: Set(client_id),
            account_id: Set(caller.account_id),
            user_id: Set(user_id),
            secret_hash: Set(hash),
            revoked: Set(false),
            created_at: Set(chrono::Utc::now()),
        }
        .insert(txn)
        .await?;
        w.record(Change {
            action: AuditAction::ApiClientCreated,
            entity_id: client_id,
            before: None,
            after: Some(json!({ "userId": user_id })),
        });
        Ok(())
    })
    .await?;
    Ok(NewApiClient {
        client_id,
        client_secret,
    })
}

/// The account's clients, oldest first (ids are UUIDv7).
pub async fn list_api_clients(
    db: &DatabaseConnection,
    caller: &Caller,
) -> ServiceResult<Vec<api_client::Model>> {
    caller.grant(Operation::ManageDirectory)?;
    Ok(api_client::Entity::find()
        .filter(api_client::Column::AccountId.eq(caller.account_id))
        .order_by_asc(api_client::Column::Id)
        .all(db)
        .await?)
}

/// Revokes a client of the caller's account: its tokens stop working on their next request.
/// Revoking twice is a no-op; a client of another account is 404 like one that exists nowhere.
pub async fn revoke_api_client(
    db: &DatabaseConnection,
    caller: &Caller,
    client: ResourceRef,
) -> ServiceResult<()> {
    caller.grant(Operation::ManageDirectory)?;
    let client_id = client.id("API client")?;
    write(db, caller, async |w| {
        let txn = w.txn();
        let current = api_client::Entity::find_by_id(client_id)
            .filter(api_client::Column::AccountId.eq(caller.account_id))
            .one(txn)
            .await?
            .ok_or_else(|| client.not_found("API client"))?;
        if current.revoked {
            return Ok(());
        }
        let mut revoked: api_client::ActiveModel = current.into();
        revoked.revoked = Set(true);
        revoked.update(txn).await?;
        w.record(Change {
            action: AuditAction::ApiClientRevoked,
            entity_id: client_id,
            before: Some(json!({ "revoked": false })),
            after: Some(json!({ "revoked": true })),
        });
        Ok(())
    })
    .await
}
