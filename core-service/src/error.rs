//! The core's one error type: every service function returns [`ServiceError`], and
//! `grpc::status` maps it to a `tonic::Status` in exactly one place.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Any authentication failure. Deliberately carries no detail: the caller must
    /// not learn whether the account, the login or the password was wrong.
    #[error("authentication failed")]
    Unauthenticated,
    /// Too many failed logins for one account and login.
    #[error("too many failed logins; retry later")]
    Throttled { retry_after: Duration },
    /// Password verification is saturated; the request waited too long.
    #[error("the service is busy; retry shortly")]
    Overloaded,
    #[error("{0}")]
    PermissionDenied(String),
    /// The addressed resource does not exist in the caller's account.
    #[error("{0}")]
    NotFound(String),
    /// A request field is malformed or names nothing; the message names the field.
    #[error("{0}")]
    InvalidArgument(String),
    /// The change collides with the current state, e.g. a login already taken (a
    /// unique-key violation becomes this in `db::conflict`).
    #[error("{0}")]
    Conflict(String),
    /// The database is out of reach for the moment (connection refused or reset, backend
    /// terminated, I/O error); holds the root cause for the log. Retrying may succeed.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// Anything the caller cannot act on; logged, never shown.
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

impl ServiceError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidArgument(message.into())
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound(message.into())
    }

    pub fn denied(message: impl Into<String>) -> Self {
        Self::PermissionDenied(message.into())
    }
}

/// A value that breaks its rule is the caller's mistake; the message names the field.
impl From<crate::domain::Invalid> for ServiceError {
    fn from(invalid: crate::domain::Invalid) -> Self {
        Self::InvalidArgument(format!("{invalid}."))
    }
}

impl From<sea_orm::TransactionError<ServiceError>> for ServiceError {
    fn from(err: sea_orm::TransactionError<ServiceError>) -> Self {
        match err {
            sea_orm::TransactionError::Connection(db) => db.into(),
            sea_orm::TransactionError::Transaction(inner) => inner,
        }
    }
}

pub type ServiceResult<T> = Result<T, ServiceError>;
