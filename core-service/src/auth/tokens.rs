//! API clients' secrets and access tokens (contract section 12).
//!
//! Secrets and tokens are 256 random bits, so a plain SHA-256 is as good as a slow hash
//! against guessing, and a token call costs one hash instead of an argon2id verification.
//! Only the hashes are stored. A token is a row of `api_tokens` (its hash, its client, its
//! expiry), so it works on every core sharing the database and stops at once when its client
//! is revoked or its user deactivated: both are read with the token on every request. The
//! caller is built from the user's current role and scope, so a changed role applies on the
//! next request too.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sea_orm::{
    ActiveValue::Set, ColumnTrait as _, EntityTrait as _, JoinType, QueryFilter as _,
    QuerySelect as _, RelationTrait as _, prelude::Uuid,
};
use sha2::{Digest as _, Sha256};

use super::{Authenticator, lookup};
use crate::{
    access::Caller,
    domain::roles::Role,
    entities::{account, api_client, api_token, user},
    error::{ServiceError, ServiceResult},
};

/// How long an access token is valid (the `expires_in` clients cache it for).
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(1_800);

/// Longest token or secret looked at; anything longer was never issued.
const MAX_SECRET_CHARS: usize = 256;

/// A new secret or token: 256 random bits, lower-case hex.
pub fn new_secret() -> String {
    hex(&rand::random::<[u8; 32]>())
}

/// What is stored of a secret or token: SHA-256, lower-case hex.
pub fn secret_hash(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        })
}

/// A token just issued.
#[derive(Debug, Clone)]
pub struct IssuedToken {
    pub access_token: String,
    pub expires_in: Duration,
}

impl Authenticator {
    /// Exchanges a client's id and secret for a token. Every refusal is UNAUTHENTICATED
    /// (unknown client, wrong secret, revoked client, deactivated user) and counts against
    /// the client id like a wrong password against a login: throttled past the same limit.
    pub async fn issue_token(&self, client_id: &str, secret: &str) -> ServiceResult<IssuedToken> {
        let client_key = client_id.trim().to_ascii_lowercase();
        let throttle_key = self.keyer.throttle_key("api client", &client_key);
        self.refuse_if_throttled(&throttle_key).await?;
        let Some(client_id) = Uuid::parse_str(&client_key)
            .ok()
            .filter(|_| secret.len() <= MAX_SECRET_CHARS)
        else {
            tracing::info!(
                client_id = super::clip(&client_key),
                "token refused: unknown client"
            );
            return Err(self.refuse(throttle_key, "api client", &client_key));
        };
        let row = api_client::Entity::find_by_id(client_id)
            .select_only()
            .column(api_client::Column::SecretHash)
            .column(api_client::Column::Revoked)
            .column(user::Column::Active)
            .join(JoinType::InnerJoin, api_client::Relation::User.def())
            .into_tuple::<(String, bool, bool)>()
            .one(&self.db)
            .await?;
        let accepted = row.is_some_and(|(stored, revoked, active)| {
            !revoked
                && active
                && constant_time_eq(stored.as_bytes(), secret_hash(secret).as_bytes())
        });
        if !accepted {
            tracing::info!(%client_id, "token refused: wrong secret, or the client or its user is disabled");
            return Err(self.refuse(throttle_key, "api client", &client_key));
        }
        self.throttle.record_success(&throttle_key);
        let access_token = new_secret();
        let now = unix_now();
        // Expired tokens go as new ones come, by the expiry index; nothing else reads them.
        api_token::Entity::delete_many()
            .filter(api_token::Column::ExpiresAt.lte(now))
            .exec(&self.db)
            .await?;
        api_token::Entity::insert(api_token::ActiveModel {
            token_hash: Set(secret_hash(&access_token)),
            client_id: Set(client_id),
            expires_at: Set(now.saturating_add(TOKEN_LIFETIME.as_secs() as i64)),
        })
        .exec(&self.db)
        .await?;
        Ok(IssuedToken {
            access_token,
            expires_in: TOKEN_LIFETIME,
        })
    }

    /// The caller a token stands for, or UNAUTHENTICATED when it is unknown, expired, of a
    /// revoked client or of a deactivated user. One indexed query, plus the role details of
    /// a scoped role.
    pub async fn authenticate_token(
        &self,
        token: &str,
        request_id: Option<String>,
    ) -> ServiceResult<Caller> {
        let token = token.trim();
        if token.is_empty() || token.len() > MAX_SECRET_CHARS {
            return Err(ServiceError::Unauthenticated);
        }
        let row = api_token::Entity::find_by_id(secret_hash(token))
            .select_only()
            .column(user::Column::Id)
            .column(user::Column::AccountId)
            .column(user::Column::Role)
            .column(user::Column::CustomRoleId)
            .column(account::Column::Url)
            .join(JoinType::InnerJoin, api_token::Relation::ApiClient.def())
            .join(JoinType::InnerJoin, api_client::Relation::User.def())
            .join(JoinType::InnerJoin, user::Relation::Account.def())
            .filter(api_token::Column::ExpiresAt.gt(unix_now()))
            .filter(api_client::Column::Revoked.eq(false))
            .filter(user::Column::Active.eq(true))
            .into_tuple::<(Uuid, Uuid, Role, Option<Uuid>, String)>()
            .one(&self.db)
            .await?;
        let Some((user_id, account_id, role, custom_role_id, account_url)) = row else {
            return Err(ServiceError::Unauthenticated);
        };
        let login = lookup::Login {
            account_id,
            account_url,
            user_id,
            password_hash: String::new(),
            role,
            custom_role_id,
            active: true,
        };
        lookup::load_caller(&self.db, login, request_id, &self.revision).await
    }
}

/// Compares without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_256_bits_of_hex_and_hashed_with_sha256() {
        let secret = new_secret();
        assert_eq!(secret.len(), 64);
        assert!(secret.bytes().all(|byte| byte.is_ascii_hexdigit()));
        assert_ne!(secret, new_secret());
        assert_eq!(
            secret_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
