//! API clients' secrets and access tokens (contract section 12).
//!
//! Secrets and tokens are 256 random bits, so a plain SHA-256 is as good as a slow hash
//! against guessing, and a token call costs one hash instead of an argon2id verification.
//! Only the hashes are stored. A token is a row of `api_tokens` (its hash, its client, its
//! expiry), so it works on every core sharing the database and stops at once when its client
//! is revoked or its user deactivated: both are read with the token on every request. A user
//! leaving status 1 also loses its tokens (`service::users::change_statuses` deletes them), so
//! they stay refused once it is active again (provisioning.md section 1).
//!
//! A token also carries a fingerprint of the rights its user had when it was issued (role,
//! custom role and its permissions, managed departments). Each request builds the caller from
//! the user's current rights, as it must anyway, and refuses the token, deleting it, when they
//! differ: a changed role or scope ends the token on its next request, on every core and
//! whoever made the change (an RPC, an import, SQL typed by hand), with no write path having
//! to remember to revoke anything. Changes that leave the rights as they were (a new password,
//! name or department) keep it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sea_orm::{
    ActiveValue::Set, ColumnTrait as _, EntityTrait as _, JoinType, QueryFilter as _,
    QueryOrder as _, QuerySelect as _, RelationTrait as _, prelude::Uuid,
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

/// Most live tokens one API client holds: a new grant beyond them revokes the oldest, so a
/// client asking for a token on every call cannot fill `api_tokens` (docs/decisions.md,
/// "Live tokens per API client").
pub const MAX_LIVE_TOKENS_PER_CLIENT: usize = 10;

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

/// The user columns a token's caller is built from, then the account URL: [`TokenUser`].
const USER_COLUMNS: [user::Column; 4] = [
    user::Column::Id,
    user::Column::AccountId,
    user::Column::Role,
    user::Column::CustomRoleId,
];

/// A client's user: id, account id, role, custom role id and account URL.
type TokenUser = (Uuid, Uuid, Role, Option<Uuid>, String);

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
            .columns(USER_COLUMNS)
            .column(account::Column::Url)
            .join(JoinType::InnerJoin, api_client::Relation::User.def())
            .join(JoinType::InnerJoin, user::Relation::Account.def())
            // A SCIM client's secret is good for /scim/v2 only (provisioning.md section 7):
            // refused here like an unknown client.
            .filter(api_client::Column::Scim.eq(false))
            .into_tuple::<(String, bool, bool, Uuid, Uuid, Role, Option<Uuid>, String)>()
            .one(&self.db)
            .await?;
        let Some((_, _, _, user_id, account_id, role, custom_role_id, account_url)) =
            row.filter(|(stored, revoked, active, ..)| {
                !revoked
                    && *active
                    && constant_time_eq(stored.as_bytes(), secret_hash(secret).as_bytes())
            })
        else {
            tracing::info!(%client_id, "token refused: wrong secret, or the client or its user is disabled");
            return Err(self.refuse(throttle_key, "api client", &client_key));
        };
        self.throttle.record_success(&throttle_key);
        let user = (user_id, account_id, role, custom_role_id, account_url);
        let (_, rights) = self.caller_with_rights(user, None).await?;
        let access_token = new_secret();
        let now = unix_now();
        // Expired tokens go as new ones come, by the expiry index; nothing else reads them.
        api_token::Entity::delete_many()
            .filter(api_token::Column::ExpiresAt.lte(now))
            .exec(&self.db)
            .await?;
        let token_hash = secret_hash(&access_token);
        api_token::Entity::insert(api_token::ActiveModel {
            token_hash: Set(token_hash.clone()),
            client_id: Set(client_id),
            expires_at: Set(now.saturating_add(TOKEN_LIFETIME.as_secs() as i64)),
            rights: Set(rights),
        })
        .exec(&self.db)
        .await?;
        self.revoke_oldest_tokens(client_id, &token_hash).await?;
        Ok(IssuedToken {
            access_token,
            expires_in: TOKEN_LIFETIME,
        })
    }

    /// Keeps the token just issued (`issued`) and the newest others of `client_id` up to
    /// [`MAX_LIVE_TOKENS_PER_CLIENT`], and deletes the rest. Every token lives as long, so the
    /// latest expiry is the latest grant (grants within one second tie, and are told apart
    /// by their hash). The client has at most one token over the cap here (a few when grants
    /// race), so reading its hashes costs a handful of rows.
    async fn revoke_oldest_tokens(&self, client_id: Uuid, issued: &str) -> ServiceResult<()> {
        let others: Vec<String> = api_token::Entity::find()
            .select_only()
            .column(api_token::Column::TokenHash)
            .filter(api_token::Column::ClientId.eq(client_id))
            .filter(api_token::Column::TokenHash.ne(issued))
            .order_by_desc(api_token::Column::ExpiresAt)
            .order_by_desc(api_token::Column::TokenHash)
            .into_tuple()
            .all(&self.db)
            .await?;
        let keep = MAX_LIVE_TOKENS_PER_CLIENT - 1;
        if others.len() <= keep {
            return Ok(());
        }
        let oldest = others[keep..].to_vec();
        api_token::Entity::delete_many()
            .filter(api_token::Column::TokenHash.is_in(oldest))
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// The caller a token stands for, or UNAUTHENTICATED when it is unknown, expired, of a
    /// revoked client or of a deactivated user, or when its user's rights are no longer those
    /// it was issued with (the token is then deleted, so it stays refused whatever changes
    /// next). One indexed query, plus the role details of a scoped role. The caller comes
    /// with the id of the API client the token was issued to.
    pub async fn authenticate_token(
        &self,
        token: &str,
        request_id: Option<String>,
    ) -> ServiceResult<(Caller, Uuid)> {
        let token = presented(token)?;
        let token_hash = secret_hash(token);
        let row = api_token::Entity::find_by_id(token_hash.clone())
            .select_only()
            .column(api_token::Column::Rights)
            .column(api_token::Column::ClientId)
            .columns(USER_COLUMNS)
            .column(account::Column::Url)
            .join(JoinType::InnerJoin, api_token::Relation::ApiClient.def())
            .join(JoinType::InnerJoin, api_client::Relation::User.def())
            .join(JoinType::InnerJoin, user::Relation::Account.def())
            .filter(api_token::Column::ExpiresAt.gt(unix_now()))
            .filter(api_client::Column::Revoked.eq(false))
            .filter(user::Column::Active.eq(true))
            .into_tuple::<(String, Uuid, Uuid, Uuid, Role, Option<Uuid>, String)>()
            .one(&self.db)
            .await?;
        let Some((issued_for, client_id, user_id, account_id, role, custom_role_id, account_url)) =
            row
        else {
            return Err(ServiceError::Unauthenticated);
        };
        let user = (user_id, account_id, role, custom_role_id, account_url);
        let (caller, rights) = self.caller_with_rights(user, request_id).await?;
        if !constant_time_eq(issued_for.as_bytes(), rights.as_bytes()) {
            api_token::Entity::delete_by_id(token_hash)
                .exec(&self.db)
                .await?;
            return Err(ServiceError::Unauthenticated);
        }
        self.sign_ins.record(caller.user_id);
        Ok((caller, client_id))
    }

    /// The caller a SCIM token stands for (provisioning.md section 7), with its client's id,
    /// or UNAUTHENTICATED when it is no SCIM client's secret, the client is revoked, or its
    /// user is not an active account owner or administrator. Two indexed reads (the client by
    /// `api_clients.secret_hash`, then its user by primary key); an owner's or administrator's
    /// caller needs no role details.
    pub async fn authenticate_scim(
        &self,
        token: &str,
        request_id: Option<String>,
    ) -> ServiceResult<(Caller, Uuid)> {
        let token = presented(token)?;
        // Two lookups, each by its index (the client by its secret's hash, then its user by
        // primary key): joined in one statement, PostgreSQL's generic plan may hash the whole
        // of `users` against the client.
        let client = api_client::Entity::find()
            .select_only()
            .column(api_client::Column::Id)
            .column(api_client::Column::UserId)
            .filter(api_client::Column::SecretHash.eq(secret_hash(token)))
            .filter(api_client::Column::Scim.eq(true))
            .filter(api_client::Column::Revoked.eq(false))
            .into_tuple::<(Uuid, Uuid)>()
            .one(&self.db)
            .await?;
        let Some((client_id, user_id)) = client else {
            return Err(ServiceError::Unauthenticated);
        };
        let row = user::Entity::find_by_id(user_id)
            .select_only()
            .columns(USER_COLUMNS)
            .column(account::Column::Url)
            .join(JoinType::InnerJoin, user::Relation::Account.def())
            .filter(user::Column::Active.eq(true))
            .filter(user::Column::Role.is_in([Role::AccountOwner, Role::AccountAdministrator]))
            .into_tuple::<(Uuid, Uuid, Role, Option<Uuid>, String)>()
            .one(&self.db)
            .await?;
        let Some((user_id, account_id, role, custom_role_id, account_url)) = row else {
            return Err(ServiceError::Unauthenticated);
        };
        let user = (user_id, account_id, role, custom_role_id, account_url);
        let (caller, _) = self.caller_with_rights(user, request_id).await?;
        Ok((caller, client_id))
    }

    /// The caller an active user is, with the fingerprint of its rights.
    async fn caller_with_rights(
        &self,
        (user_id, account_id, role, custom_role_id, account_url): TokenUser,
        request_id: Option<String>,
    ) -> ServiceResult<(Caller, String)> {
        let login = lookup::Login {
            account_id,
            account_url,
            user_id,
            password_hash: String::new(),
            role,
            custom_role_id,
            active: true,
        };
        let caller = lookup::load_caller(&self.db, login, request_id, &self.revision).await?;
        let rights = rights_fingerprint(custom_role_id, &caller);
        Ok((caller, rights))
    }
}

/// What a caller may do, as one SHA-256 (lower-case hex): its role, custom role, the
/// permissions of that role and the departments it manages, each list sorted.
fn rights_fingerprint(custom_role_id: Option<Uuid>, caller: &Caller) -> String {
    let mut permissions: Vec<&str> = caller.permissions.iter().map(|p| p.as_str()).collect();
    permissions.sort_unstable();
    let mut managed = caller.managed_department_ids.clone();
    managed.sort_unstable();
    let managed: Vec<String> = managed.iter().map(Uuid::to_string).collect();
    let custom_role = match (caller.role, custom_role_id) {
        (Role::Custom, Some(id)) => id.to_string(),
        _ => String::new(),
    };
    secret_hash(&format!(
        "role={};custom_role={custom_role};permissions={};managed={}",
        caller.role.as_str(),
        permissions.join(","),
        managed.join(",")
    ))
}

/// Compares without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// A token as presented, trimmed; one that is empty or longer than any secret is refused
/// before anything is read.
fn presented(token: &str) -> ServiceResult<&str> {
    let token = token.trim();
    if token.is_empty() || token.len() > MAX_SECRET_CHARS {
        return Err(ServiceError::Unauthenticated);
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::roles::Permission;

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

    fn caller(role: Role, permissions: &[Permission], managed: &[u128]) -> Caller {
        Caller {
            account_id: Uuid::nil(),
            account_url: "https://a.example.com".to_owned(),
            user_id: Uuid::nil(),
            role,
            permissions: permissions.iter().copied().collect(),
            managed_department_ids: managed.iter().copied().map(Uuid::from_u128).collect(),
            request_id: None,
            auth_revision: None,
        }
    }

    #[test]
    fn the_fingerprint_follows_the_rights_not_the_order_they_are_read_in() {
        use Permission::{ContentRead, GroupRead, PointsRead};
        let role = Some(Uuid::from_u128(9));
        let custom = |permissions: &[Permission], managed: &[u128]| {
            rights_fingerprint(role, &caller(Role::Custom, permissions, managed))
        };
        let issued = custom(&[GroupRead, PointsRead, ContentRead], &[3, 1, 2]);
        assert_eq!(
            issued,
            custom(&[ContentRead, PointsRead, GroupRead], &[2, 3, 1])
        );
        for changed in [
            custom(&[GroupRead, PointsRead], &[1, 2, 3]),
            custom(&[GroupRead, PointsRead, ContentRead], &[1, 2]),
            rights_fingerprint(
                Some(Uuid::from_u128(8)),
                &caller(
                    Role::Custom,
                    &[GroupRead, PointsRead, ContentRead],
                    &[1, 2, 3],
                ),
            ),
            rights_fingerprint(
                None,
                &caller(Role::DepartmentAdministrator, &[], &[1, 2, 3]),
            ),
        ] {
            assert_ne!(issued, changed);
        }
        // A built-in role has no custom role, whatever the user row still holds.
        assert_eq!(
            rights_fingerprint(role, &caller(Role::Learner, &[], &[])),
            rights_fingerprint(None, &caller(Role::Learner, &[], &[]))
        );
    }
}
