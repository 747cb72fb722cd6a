//! API clients (contract section 12): made, listed and revoked by the account owner and
//! account administrators, each acting as one user of the account. A SCIM client
//! (provisioning.md section 7) is one whose secret is a SCIM token: it must act as an active
//! owner or administrator, and `/scim_tokens` sees only such clients.

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
    domain::{
        ids::{ResourceRef, parse_field_id},
        roles::Role,
    },
    entities::{api_client, user},
    error::{ServiceError, ServiceResult},
};

/// A client just made; its secret is shown this once and stored only as a hash.
#[derive(Debug, Clone)]
pub struct NewApiClient {
    pub client_id: Uuid,
    pub client_secret: String,
}

/// What kind of client to make: an ordinary one, or a SCIM client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    Api,
    Scim,
}

/// Makes a client acting as the user `user_id` names (a user of the caller's account, for a
/// SCIM client an active owner or administrator; 400 naming `userId` otherwise).
pub async fn create_api_client(
    db: &DatabaseConnection,
    caller: &Caller,
    user_id: &str,
    kind: ClientKind,
) -> ServiceResult<NewApiClient> {
    caller.grant(Operation::ManageDirectory)?;
    let user_id = parse_field_id("userId", user_id)?;
    let client_id = Uuid::now_v7();
    let client_secret = new_secret();
    let hash = secret_hash(&client_secret);
    write(db, caller, async |w| {
        let txn = w.txn();
        let found = user::Entity::find_by_id(user_id)
            .filter(user::Column::AccountId.eq(caller.account_id))
            .one(txn)
            .await?;
        let Some(found) = found else {
            return Err(ServiceError::invalid(
                "Field userId names no user of this account.",
            ));
        };
        if kind == ClientKind::Scim && !may_hold_scim_token(&found) {
            return Err(ServiceError::invalid(
                "Field userId must name an active account owner or account administrator.",
            ));
        }
        api_client::ActiveModel {
            id: Set(client_id),
            account_id: Set(caller.account_id),
            user_id: Set(user_id),
            secret_hash: Set(hash),
            revoked: Set(false),
            scim: Set(kind == ClientKind::Scim),
            created_at: Set(chrono::Utc::now()),
        }
        .insert(txn)
        .await?;
        w.record(Change {
            action: AuditAction::ApiClientCreated,
            entity_id: client_id,
            before: None,
            after: Some(json!({ "userId": user_id, "scim": kind == ClientKind::Scim })),
        });
        Ok(())
    })
    .await?;
    Ok(NewApiClient {
        client_id,
        client_secret,
    })
}

/// Whether `user` may be the user of a SCIM token: an active owner or administrator (the
/// token acts on the whole account).
pub fn may_hold_scim_token(user: &user::Model) -> bool {
    user.active && matches!(user.role, Role::AccountOwner | Role::AccountAdministrator)
}

/// Which clients a list or a revocation looks at: every client, or SCIM clients only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientsSeen {
    All,
    ScimOnly,
}

/// The account's clients, oldest first (ids are UUIDv7).
pub async fn list_api_clients(
    db: &DatabaseConnection,
    caller: &Caller,
    seen: ClientsSeen,
) -> ServiceResult<Vec<api_client::Model>> {
    caller.grant(Operation::ManageDirectory)?;
    let mut query = api_client::Entity::find()
        .filter(api_client::Column::AccountId.eq(caller.account_id))
        .order_by_asc(api_client::Column::Id);
    if seen == ClientsSeen::ScimOnly {
        query = query.filter(api_client::Column::Scim.eq(true));
    }
    Ok(query.all(db).await?)
}

/// Revokes a client of the caller's account: its tokens stop working on their next request.
/// Revoking twice is a no-op; a client of another account (or, for `ScimOnly`, one that is
/// not a SCIM client) is 404 like one that exists nowhere.
pub async fn revoke_api_client(
    db: &DatabaseConnection,
    caller: &Caller,
    client: ResourceRef,
    seen: ClientsSeen,
) -> ServiceResult<()> {
    caller.grant(Operation::ManageDirectory)?;
    let what = match seen {
        ClientsSeen::All => "API client",
        ClientsSeen::ScimOnly => "SCIM client",
    };
    let client_id = client.id(what)?;
    write(db, caller, async |w| {
        let txn = w.txn();
        let current = api_client::Entity::find_by_id(client_id)
            .filter(api_client::Column::AccountId.eq(caller.account_id))
            .one(txn)
            .await?
            .filter(|found| seen == ClientsSeen::All || found.scim)
            .ok_or_else(|| client.not_found(what))?;
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

/// Makes a SCIM token acting as `user_id`, or as the caller when it is empty
/// (`POST /scim_tokens`); the token is the client's secret.
pub async fn create_scim_token(
    db: &DatabaseConnection,
    caller: &Caller,
    user_id: &str,
) -> ServiceResult<(NewApiClient, Uuid)> {
    caller.grant(Operation::ManageDirectory)?;
    let user_id = match user_id.trim() {
        "" => caller.user_id.to_string(),
        given => given.to_owned(),
    };
    let made = create_api_client(db, caller, &user_id, ClientKind::Scim).await?;
    // The id was parsed by create_api_client, which refuses a malformed one.
    let user_id = parse_field_id("userId", &user_id)?;
    Ok((made, user_id))
}
