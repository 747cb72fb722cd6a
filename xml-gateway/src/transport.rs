//! How calls travel to the core, and what a failure of the way there means: the transport type
//! every client of the core is built on (a tonic channel over TCP, or the core's own services
//! in this process), the limits on what a call carries, and the classification of a failed
//! call (never reached the core, refused at connection, a broken HTTP/2 connection). A leaf:
//! the client, its replicas, telemetry and the error mapping all build on it.

/// How calls reach a core: a tonic channel (TCP), or the core's services themselves when it
/// runs in this process. Either way every call is an `lms.v1` message through the gRPC codec.
pub(crate) type CoreTransport = tower::util::BoxCloneSyncService<
    http::Request<tonic::body::Body>,
    http::Response<tonic::body::Body>,
    TransportError,
>;

/// Why a call did not reach the core (or its answer did not come back), as the transport
/// said: a concrete type rather than a boxed error, since a boxed trait object as a client's
/// error keeps the handlers' futures from being provably `Send`. The transport's own error
/// is its source, so the status tonic makes of it keeps the whole chain.
#[derive(Debug)]
pub(crate) struct TransportError(tower::BoxError);

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "transport error")
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// Any service speaking gRPC over HTTP (a tonic channel, the core's in-process services) as a
/// [`CoreTransport`].
pub(crate) fn transport<S>(service: S) -> CoreTransport
where
    S: tower::Service<
            http::Request<tonic::body::Body>,
            Response = http::Response<tonic::body::Body>,
        > + Clone
        + Send
        + Sync
        + 'static,
    S::Error: Into<tower::BoxError>,
    S::Future: Send + 'static,
{
    CoreTransport::new(tower::ServiceExt::map_err(service, |error: S::Error| {
        TransportError(error.into())
    }))
}

/// Longest `tracestate` passed on to the core (what W3C Trace Context asks every vendor to
/// propagate at least); a caller's longer one stays behind rather than riding in every call's
/// header block.
pub(crate) const MAX_TRACESTATE_BYTES: usize = 512;

/// How soon a caller that got 503 because the core was out of reach may try again.
pub(crate) const CORE_UNREACHABLE_RETRY_AFTER_SECONDS: u64 = 1;

/// Whether a failed call never got an answer from the core: a status made on this side of the
/// connection, from an error of the transport (the core sends statuses in headers or trailers,
/// which carry no source error). A passed deadline (tonic's `TimeoutExpired`) is a timeout,
/// not a failure to reach the core.
pub(crate) fn is_transport_failure(status: &tonic::Status) -> bool {
    let Some(source) = std::error::Error::source(status) else {
        return false;
    };
    !std::iter::successors(Some(source), |error| error.source())
        .any(|error| error.is::<tonic::TimeoutExpired>())
}

/// Whether a failed call never reached its replica (its connection was refused), so that
/// sending it to another replica cannot apply it twice.
pub(crate) fn refused_at_connection(status: &tonic::Status) -> bool {
    let Some(source) = std::error::Error::source(status) else {
        return false;
    };
    std::iter::successors(Some(source), |error| error.source()).any(|error| {
        error
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    })
}

/// Whether tonic made this status from an HTTP/2 error of the connection (which it reports
/// as RESOURCE_EXHAUSTED, "h2 protocol error: …"), not the core from its answer.
pub(crate) fn is_h2_protocol_error(status: &tonic::Status) -> bool {
    status.message().starts_with("h2 protocol error")
}

/// A transport failure for the log: the status and its cause chain, on one line.
pub(crate) struct TransportFailure<'a>(pub(crate) &'a tonic::Status);

impl std::fmt::Display for TransportFailure<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.0.code(), self.0.message())?;
        let mut source = std::error::Error::source(self.0);
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io_status(kind: std::io::ErrorKind) -> tonic::Status {
        tonic::Status::from_error(Box::new(std::io::Error::from(kind)))
    }

    #[test]
    fn statuses_the_core_sent_and_passed_deadlines_are_not_transport_failures() {
        assert!(!is_transport_failure(&tonic::Status::internal("boom")));
        assert!(!is_transport_failure(&tonic::Status::from_error(Box::new(
            tonic::TimeoutExpired(())
        ))));
        assert!(is_transport_failure(&io_status(
            std::io::ErrorKind::ConnectionRefused
        )));
    }

    #[test]
    fn only_a_refused_connection_counts_as_never_sent() {
        assert!(refused_at_connection(&io_status(
            std::io::ErrorKind::ConnectionRefused
        )));
        assert!(!refused_at_connection(&io_status(
            std::io::ErrorKind::ConnectionReset
        )));
        assert!(!refused_at_connection(&tonic::Status::unavailable(
            "overloaded"
        )));
    }

    #[test]
    fn only_tonics_h2_failures_are_broken_connections() {
        assert!(is_h2_protocol_error(&tonic::Status::resource_exhausted(
            "h2 protocol error: GOAWAY"
        )));
        assert!(!is_h2_protocol_error(&tonic::Status::resource_exhausted(
            "too many password attempts"
        )));
    }

    #[test]
    fn a_failure_is_logged_with_its_cause_chain() {
        let status = io_status(std::io::ErrorKind::ConnectionRefused);
        let line = TransportFailure(&status).to_string();
        assert!(line.starts_with("Unknown: "), "{line}");
        assert!(line.ends_with(": connection refused"), "{line}");
    }
}
