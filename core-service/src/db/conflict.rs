//! What a failed statement means to the caller, decided in one place for both backends.
//!
//! A unique-key violation is a conflict with a row that is already there (or was
//! written meanwhile by another process), not a failure of the database: [`unique_violation`]
//! names the key, worded the same on SQLite and PostgreSQL, and the errors built from a
//! `DbErr` (`error::ServiceError`, `import::ImportError`, each beside its `From<DbErr>`) make
//! it a conflict. A database out of reach is unavailability (see [`super::fault`]).

use sea_orm::{DbErr, SqlErr};

/// The unique key a write collided with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniqueKey {
    /// `uq_accounts_url`, or `uq_accounts_url_key` (the same URL under the other scheme).
    AccountUrl,
    /// `uq_users_account_id_email_key`.
    UserLogin,
    /// `uq_users_account_email_address` (migration 18).
    UserEmail,
    /// `uq_users_account_id_external_id` (migration 22): a SCIM `externalId`.
    UserExternalId,
    /// A primary key, or a unique key without a message of its own.
    Row,
}

/// How each named unique key shows in the error: PostgreSQL names the index, SQLite
/// lists its columns (or, for an index on an expression, names it).
const NAMED_KEYS: [(UniqueKey, &str, &str); 5] = [
    (UniqueKey::AccountUrl, "uq_accounts_url", "accounts.url"),
    (
        UniqueKey::AccountUrl,
        "uq_accounts_url_key",
        "index 'uq_accounts_url_key'",
    ),
    (
        UniqueKey::UserLogin,
        "uq_users_account_id_email_key",
        "users.account_id, users.email_key",
    ),
    (
        UniqueKey::UserEmail,
        "uq_users_account_email_address",
        "index 'uq_users_account_email_address'",
    ),
    (
        UniqueKey::UserExternalId,
        "uq_users_account_id_external_id",
        "users.account_id, users.external_id",
    ),
];

impl UniqueKey {
    /// What the caller is told.
    pub fn message(self) -> &'static str {
        match self {
            UniqueKey::AccountUrl => "An account with this URL already exists.",
            UniqueKey::UserLogin => "A user with this login already exists in the account.",
            UniqueKey::UserEmail => {
                "A user with this e-mail address already exists in the account."
            }
            UniqueKey::UserExternalId => {
                "A user with this externalId already exists in the account."
            }
            UniqueKey::Row => "A row with the same key already exists.",
        }
    }
}

/// The unique key `err` violates, or `None` when it is another error.
pub fn unique_violation(err: &DbErr) -> Option<UniqueKey> {
    let Some(SqlErr::UniqueConstraintViolation(message)) = err.sql_err() else {
        return None;
    };
    let named = NAMED_KEYS.iter().find(|(_, index, sqlite_columns)| {
        // PostgreSQL: `… unique constraint "uq_accounts_url"`; SQLite: `UNIQUE
        // constraint failed: accounts.url` (and no more columns after them).
        message.contains(&format!("\"{index}\""))
            || message
                .strip_suffix(sqlite_columns)
                .is_some_and(|head| head.ends_with(": "))
    });
    Some(named.map_or(UniqueKey::Row, |(key, _, _)| *key))
}
