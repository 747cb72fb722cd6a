//! The `lms.v1` protobuf contract, generated at build time from `proto/lms/v1/lms.proto`.
//!
//! Layout: [`v1`] holds the messages, clients and servers; [`FILE_DESCRIPTOR_SET`]
//! feeds gRPC reflection; [`metadata`] names the metadata keys both sides use.

#[allow(unreachable_pub, clippy::all, clippy::pedantic)]
pub mod v1 {
    tonic::include_proto!("lms.v1");
}

/// Encoded descriptors of `lms.v1`, for tonic-reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("lms_v1_descriptor");

/// Metadata keys of the contract (gRPC metadata keys are lower-case).
pub mod metadata {
    pub const ACCOUNT_URL: &str = "x-auth-account-url";
    pub const EMAIL: &str = "x-auth-email";
    pub const PASSWORD: &str = "x-auth-password";
    /// An access token from `IssueToken`; a call carrying it is authenticated by it alone.
    pub const TOKEN: &str = "x-auth-token";
    pub const REQUEST_ID: &str = "x-request-id";
    /// A SCIM token (provisioning.md section 7): authenticates `ScimService` calls only.
    pub const SCIM_TOKEN: &str = "x-scim-token";
    /// On a `ScimService` failure: the HTTP status to answer with.
    pub const SCIM_STATUS: &str = "scim-status";
    /// On a `ScimService` failure: the SCIM `scimType`, when there is one.
    pub const SCIM_TYPE: &str = "scim-type";
    /// Seconds to wait, set on RESOURCE_EXHAUSTED when a login is throttled or a caller or
    /// account is past its rate limit.
    pub const RETRY_AFTER: &str = "retry-after";
    /// On every answer to an authenticated call: the size of the bucket the caller's rate is
    /// counted in (the caller's own or its account's, whichever is nearer to empty).
    pub const RATELIMIT_LIMIT: &str = "ratelimit-limit";
    /// Requests that bucket still holds.
    pub const RATELIMIT_REMAINING: &str = "ratelimit-remaining";
    /// Whole seconds until that bucket is full again.
    pub const RATELIMIT_RESET: &str = "ratelimit-reset";
    /// W3C trace context: the caller's trace and span, so the core's spans join its trace.
    pub const TRACEPARENT: &str = "traceparent";
    /// W3C trace context: vendor-specific trace state, forwarded with `traceparent`.
    pub const TRACESTATE: &str = "tracestate";
}
