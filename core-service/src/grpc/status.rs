//! The one mapping from [`ServiceError`] to `tonic::Status`.

use tonic::{Code, Status, metadata::MetadataValue};

use crate::error::ServiceError;

/// The message of every UNAUTHENTICATED status: it must not tell which part was wrong.
pub const AUTHENTICATION_FAILED: &str = "Authentication failed.";

impl From<ServiceError> for Status {
    fn from(err: ServiceError) -> Self {
        match err {
            ServiceError::Unauthenticated => Status::unauthenticated(AUTHENTICATION_FAILED),
            ServiceError::Throttled { retry_after } => {
                crate::metrics::throttled();
                let seconds = retry_after.as_secs().max(1);
                let mut status = Status::resource_exhausted(format!(
                    "Too many failed logins for this account and login; retry after {seconds} seconds."
                ));
                status.metadata_mut().insert(
                    lms_proto::metadata::RETRY_AFTER,
                    MetadataValue::from(seconds),
                );
                status
            }
            ServiceError::RateLimited(limited) => {
                crate::metrics::rate_limited(limited.exhausted.reason());
                let seconds = limited.retry_after_seconds;
                let mut status = Status::resource_exhausted(format!(
                    "Too many requests for {}: its rate limit is {} requests a second, {} at \
                     once; retry after {seconds} {}.",
                    limited.exhausted.whose(),
                    limited.limit.per_second,
                    limited.limit.burst,
                    if seconds == 1 { "second" } else { "seconds" },
                ));
                status.metadata_mut().insert(
                    lms_proto::metadata::RETRY_AFTER,
                    MetadataValue::from(seconds),
                );
                status
            }
            ServiceError::Overloaded => {
                crate::metrics::shed_verification_queue();
                let mut status = Status::unavailable("The service is busy; retry in a moment.");
                status
                    .metadata_mut()
                    .insert(lms_proto::metadata::RETRY_AFTER, MetadataValue::from(1u64));
                status
            }
            ServiceError::PermissionDenied(message) => Status::permission_denied(message),
            ServiceError::NotFound(message) => Status::not_found(message),
            ServiceError::InvalidArgument(message) => Status::invalid_argument(message),
            ServiceError::Conflict(message) => Status::new(Code::FailedPrecondition, message),
            ServiceError::Unavailable(cause) => {
                // Logged once per outage, not once per request.
                crate::db::fault::DATABASE_OUTAGE.failed(&cause);
                crate::metrics::shed_database();
                // Health turns NOT_SERVING as soon as the probe confirms it.
                crate::health::probe_soon();
                let mut status =
                    Status::unavailable("The database is unavailable; retry in a moment.");
                status
                    .metadata_mut()
                    .insert(lms_proto::metadata::RETRY_AFTER, MetadataValue::from(1u64));
                status
            }
            ServiceError::Unexpected(err) => {
                // Logged once here, at the outermost boundary, and never shown; one line with
                // the cause chain (`{:#}`), no backtrace.
                tracing::error!(error = format!("{err:#}"), "request failed unexpectedly");
                Status::internal("Internal error.")
            }
        }
    }
}
