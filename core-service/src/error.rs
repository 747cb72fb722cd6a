//! The core's one error type: every service function returns [`ServiceError`], and
//! `grpc::status` maps it to a `tonic::Status` in exactly one place.

use std::time::Duration;

use sea_orm::DbErr;

use crate::db::{fault, unique_violation};

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Any authentication failure. Deliberately carries no detail: the caller must
    /// not learn whether the account, the login or the password was wrong.
    #[error("authentication failed")]
    Unauthenticated,
    /// Too many failed logins for one account and login.
    #[error("too many failed logins; retry later")]
    Throttled { retry_after: Duration },
    /// The caller, or its account, is past its rate limit (`rate_limit`).
    #[error("rate limited; retry later")]
    RateLimited(crate::rate_limit::RateLimited),
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
    /// unique-key violation becomes this, `From<DbErr>` below).
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

/// What `?` on a database result means to the caller, the same on both backends: a
/// unique-key violation is a conflict ([`unique_violation`]), a database out of reach is
/// unavailability ([`fault`]), anything else is unexpected.
impl From<DbErr> for ServiceError {
    fn from(err: DbErr) -> Self {
        if let Some(key) = unique_violation(&err) {
            return Self::Conflict(key.message().to_owned());
        }
        let cause = fault::root_cause(&err);
        if fault::observe(&err) {
            Self::Unavailable(cause)
        } else {
            Self::Unexpected(anyhow::anyhow!("database error: {cause}"))
        }
    }
}

impl From<crate::domain::ids::NotFound> for ServiceError {
    fn from(not_found: crate::domain::ids::NotFound) -> Self {
        Self::NotFound(not_found.into_message())
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

#[cfg(test)]
mod tests {
    use sea_orm::{RuntimeErr, sqlx};

    use super::*;
    use crate::domain::ids::{ResourceRef, parse_field_id};

    #[test]
    fn a_broken_value_rule_is_a_sentence_naming_the_field_and_an_unknown_id_is_not_found() {
        let err = ServiceError::from(parse_field_id("parentDepartmentId", "  ").unwrap_err());
        assert!(matches!(err, ServiceError::InvalidArgument(_)));
        assert_eq!(err.to_string(), "parentDepartmentId is required.");
        let err = ServiceError::from(ResourceRef::parse("nope").id("Group").unwrap_err());
        assert!(matches!(err, ServiceError::NotFound(_)));
        assert_eq!(err.to_string(), "Group 'nope' was not found.");
    }

    #[test]
    fn a_lost_database_connection_is_unavailable_to_the_caller_not_internal() {
        let refused = DbErr::Conn(RuntimeErr::SqlxError(std::sync::Arc::new(sqlx::Error::Io(
            std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        ))));
        let status = tonic::Status::from(ServiceError::from(refused));
        assert_eq!(status.code(), tonic::Code::Unavailable);
        assert_eq!(
            status
                .metadata()
                .get(lms_proto::metadata::RETRY_AFTER)
                .unwrap(),
            "1"
        );
        assert!(
            !status.message().contains("refused"),
            "{}",
            status.message()
        );
    }
}
