//! The connection to lms-core: lazily connecting tonic channels to one or more replicas
//! ([`replicas`](crate::replicas)) or the core's own services in the same process, the
//! per-call deadline, the metadata every call carries
//! (credentials, request id, trace context), and what a call that never reached the core
//! becomes (503 with `Retry-After`, logged once per outage).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use lms_proto::v1::admin_service_client::AdminServiceClient;
use lms_runtime::Outage;
use lms_runtime::propagation::inject_current_context;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};

use crate::auth::Credentials;
use crate::error::GatewayError;
use crate::replicas::{Replicas, refused_at_connection};
use crate::request_id::RequestId;
use crate::telemetry::CoreCall;

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

/// The transport to the core, each call in its CLIENT span.
pub(crate) type CoreChannel = CoreCall<CoreTransport>;

/// A tonic channel as a [`CoreTransport`].
pub(crate) fn over_channel(channel: Channel) -> CoreTransport {
    CoreTransport::new(tower::ServiceExt::map_err(channel, |error| {
        TransportError(error.into())
    }))
}

/// Longest `tracestate` passed on to the core (what W3C Trace Context asks every vendor to
/// propagate at least).
pub(crate) const MAX_TRACESTATE_BYTES: usize = 512;

/// A client of the core's `AdminService`, cheap to clone (shared channels).
#[derive(Debug, Clone)]
pub struct CoreClient {
    replicas: Arc<Replicas>,
    timeout: Duration,
    /// Whether the core is reachable, as this gateway's calls found it.
    outage: Arc<Outage>,
}

/// How soon a caller that got 503 because the core was out of reach may try again.
pub(crate) const CORE_UNREACHABLE_RETRY_AFTER_SECONDS: u64 = 1;

impl CoreClient {
    /// A client over an existing channel; `timeout` bounds every call.
    pub fn new(channel: Channel, timeout: Duration) -> Self {
        Self::over(
            Replicas::new(vec![("the core".to_owned(), over_channel(channel))]),
            timeout,
        )
    }

    /// A client of a core in this process, calling its services without a transport
    /// (`lms up`); `timeout` bounds every call. A call the service refuses with an I/O error
    /// of kind `ConnectionRefused` (a stopped core) is answered 503 as over TCP.
    pub fn in_process<S>(core: S, timeout: Duration) -> Self
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
        let core = CoreTransport::new(tower::ServiceExt::map_err(core, |error: S::Error| {
            TransportError(error.into())
        }));
        Self::over(Replicas::new(vec![("the core".to_owned(), core)]), timeout)
    }

    fn over(replicas: Arc<Replicas>, timeout: Duration) -> Self {
        Self {
            replicas,
            timeout,
            outage: Arc::new(Outage::new("the core", Duration::ZERO)),
        }
    }

    /// A client whose channels connect on first use, so the gateway starts (and answers 503)
    /// while the core is down, and reconnects when it comes back. Several URLs are replicas of
    /// one core (sharing its database): calls are spread over those that answer.
    pub fn connect_lazy(core_urls: &[String], timeout: Duration) -> anyhow::Result<Self> {
        anyhow::ensure!(!core_urls.is_empty(), "no core URL given");
        let channels = core_urls
            .iter()
            .map(|core_url| {
                let endpoint = Endpoint::from_shared(core_url.clone())
                    .map_err(|error| anyhow::anyhow!("invalid core URL {core_url:?}: {error}"))?
                    .connect_timeout(timeout)
                    .tcp_nodelay(true);
                Ok((core_url.clone(), over_channel(endpoint.connect_lazy())))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let replicas = Replicas::new(channels);
        if replicas.len() > 1 {
            replicas.watch_health(timeout);
        }
        Ok(Self::over(replicas, timeout))
    }

    /// The deadline of one call.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether the core is reachable, shared by every call of this client.
    pub(crate) fn outage(&self) -> Arc<Outage> {
        self.outage.clone()
    }

    /// Whether a core answers and its database with it: some replica's gRPC health (overall
    /// service) says SERVING within the call deadline.
    pub(crate) async fn ready(&self) -> Result<(), String> {
        use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus};
        let mut refusal = String::new();
        for replica in 0..self.replicas.len() {
            let mut health = self.replicas.health(replica);
            let check = health.check(HealthCheckRequest {
                service: String::new(),
            });
            refusal = match tokio::time::timeout(self.timeout, check).await {
                Ok(Ok(answer)) if answer.get_ref().status() == ServingStatus::Serving => {
                    return Ok(());
                }
                Ok(Ok(_)) => "the core is not serving (its database does not answer)".to_owned(),
                Ok(Err(status)) => {
                    format!("the core is out of reach: {}", TransportFailure(&status))
                }
                Err(_) => "the core did not answer in time".to_owned(),
            };
        }
        Err(refusal)
    }

    /// Runs one unary call under the gateway's deadline; a late answer is a 504.
    pub(crate) async fn unary<M, T, Fut>(
        &self,
        caller: &Caller,
        message: M,
        call: impl Fn(AdminServiceClient<CoreChannel>, tonic::Request<M>) -> Fut,
    ) -> Result<T, GatewayError>
    where
        M: Clone,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let attempts = self
            .on_a_replica(|admin| call(admin, caller.request(message.clone(), Some(self.timeout))));
        match tokio::time::timeout(self.timeout, attempts).await {
            Ok(result) => self.settle(result).map(tonic::Response::into_inner),
            Err(_elapsed) => Err(GatewayError::CoreTimeout),
        }
    }

    /// Makes `attempt` on the replica whose turn it is; one refused at connection is made
    /// again on the next replica (it never reached the first, so it cannot be applied twice).
    /// The result is the caller's to [`settle`](Self::settle).
    pub(crate) async fn on_a_replica<T, Fut>(
        &self,
        attempt: impl Fn(AdminServiceClient<CoreChannel>) -> Fut,
    ) -> Result<T, tonic::Status>
    where
        Fut: Future<Output = Result<T, tonic::Status>>,
    {
        let mut tried = vec![self.replicas.pick()];
        loop {
            let replica = *tried.last().expect("one replica tried");
            match attempt(self.replicas.admin(replica)).await {
                Err(status) if refused_at_connection(&status) => {
                    self.replicas.refused(replica);
                    match self.replicas.next_after(&tried) {
                        Some(next) => tried.push(next),
                        None => return Err(status),
                    }
                }
                result => return result,
            }
        }
    }

    /// What a call's result means for the caller and for the outage log. A status the core
    /// sent is passed on; a failure of the transport (connection refused or reset, stream
    /// broken by the core dying) becomes UNAVAILABLE with `retry-after`, so the caller gets
    /// 503, whatever code tonic gave it (UNKNOWN "transport error", h2's INTERNAL or
    /// RESOURCE_EXHAUSTED). Only the first failure of an outage is logged, and the recovery.
    pub(crate) fn settle<T>(&self, result: Result<T, tonic::Status>) -> Result<T, GatewayError> {
        match result {
            Ok(value) => {
                self.outage.succeeded();
                Ok(value)
            }
            Err(status) if is_transport_failure(&status) => {
                self.outage.failed(&TransportFailure(&status));
                let mut unavailable = tonic::Status::unavailable("the core is out of reach");
                unavailable.metadata_mut().insert(
                    lms_proto::metadata::RETRY_AFTER,
                    MetadataValue::from(CORE_UNREACHABLE_RETRY_AFTER_SECONDS),
                );
                Err(GatewayError::Core(unavailable))
            }
            Err(status) => {
                // The core answered: it is up, whatever it said.
                self.outage.succeeded();
                Err(GatewayError::Core(status))
            }
        }
    }
}

/// A status made on this side of the connection, from an error of the transport: the core
/// sends statuses in headers or trailers, which carry no source error. A passed deadline
/// (tonic's `TimeoutExpired`) is a timeout, not a failure to reach the core.
pub(crate) fn is_transport_failure(status: &tonic::Status) -> bool {
    let Some(source) = std::error::Error::source(status) else {
        return false;
    };
    !std::iter::successors(Some(source), |error| error.source())
        .any(|error| error.is::<tonic::TimeoutExpired>())
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

/// Who is calling, as the core needs to know it: the credentials and the request id.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    credentials: Credentials,
    request_id: RequestId,
}

impl Caller {
    /// The outgoing gRPC request: credentials, `x-request-id`, the current span's trace context
    /// and, when given, the deadline (`grpc-timeout`) so the core stops working on it too.
    pub(crate) fn request<M>(&self, message: M, deadline: Option<Duration>) -> tonic::Request<M> {
        let mut request = tonic::Request::new(message);
        if let Some(deadline) = deadline {
            request.set_timeout(deadline);
        }
        let metadata = request.metadata_mut();
        self.credentials.write_metadata(metadata);
        if let Ok(value) = self.request_id.as_str().parse() {
            metadata.insert(lms_proto::metadata::REQUEST_ID, value);
        }
        inject_current_context(metadata);
        // The caller's `tracestate` rides along with its trace; past the W3C size a vendor must
        // propagate, it is dropped rather than carried into every call's header block.
        if metadata
            .get(lms_proto::metadata::TRACESTATE)
            .is_some_and(|value| value.as_bytes().len() > MAX_TRACESTATE_BYTES)
        {
            metadata.remove(lms_proto::metadata::TRACESTATE);
        }
        request
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = GatewayError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let credentials = Credentials::from_request_parts(parts, state).await?;
        let Ok(request_id) = RequestId::from_request_parts(parts, state).await;
        Ok(Self {
            credentials,
            request_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue};
    use lms_proto::metadata;
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt;

    fn caller() -> Caller {
        let mut headers = HeaderMap::new();
        headers.insert(
            metadata::ACCOUNT_URL,
            HeaderValue::from_static("https://acme.example.com"),
        );
        headers.insert(
            metadata::EMAIL,
            HeaderValue::from_static("owner@acme.example.com"),
        );
        headers.insert(metadata::PASSWORD, HeaderValue::from_static("pw"));
        Caller {
            credentials: Credentials::from_headers(&headers).unwrap(),
            request_id: RequestId::from_caller(&HeaderValue::from_static("req-7")).unwrap(),
        }
    }

    #[test]
    fn outgoing_requests_carry_credentials_request_id_and_deadline() {
        let request = caller().request((), Some(Duration::from_millis(1500)));
        let metadata = request.metadata();
        assert_eq!(
            metadata.get("x-auth-account-url").unwrap(),
            "https://acme.example.com"
        );
        assert_eq!(
            metadata.get("x-auth-email").unwrap(),
            "owner@acme.example.com"
        );
        assert_eq!(metadata.get("x-auth-password").unwrap(), "pw");
        assert_eq!(metadata.get("x-request-id").unwrap(), "req-7");
        assert!(metadata.get("grpc-timeout").is_some());
        assert!(
            caller()
                .request((), None)
                .metadata()
                .get("grpc-timeout")
                .is_none()
        );
    }

    fn client() -> CoreClient {
        let channel = Endpoint::from_static("http://127.0.0.1:9").connect_lazy();
        CoreClient::new(channel, Duration::from_secs(1))
    }

    #[tokio::test]
    async fn a_call_that_never_reached_the_core_is_503_with_retry_after_whatever_code_tonic_gave() {
        use axum::response::IntoResponse as _;
        let transport = [
            tonic::Status::from_error(Box::new(std::io::Error::from(
                std::io::ErrorKind::ConnectionReset,
            ))),
            {
                let mut status = tonic::Status::resource_exhausted("h2 protocol error");
                status.set_source(std::sync::Arc::new(std::io::Error::other("GOAWAY")));
                status
            },
        ];
        for status in transport {
            let code = status.code();
            let response = client()
                .settle::<()>(Err(status))
                .unwrap_err()
                .into_response();
            assert_eq!(response.status(), 503, "{code:?}");
            assert_eq!(response.headers().get("retry-after").unwrap(), "1");
        }
    }

    #[test]
    fn statuses_the_core_sent_and_passed_deadlines_are_not_transport_failures() {
        assert!(!is_transport_failure(&tonic::Status::internal("boom")));
        assert!(!is_transport_failure(&tonic::Status::from_error(Box::new(
            tonic::TimeoutExpired(())
        ))));
        assert!(is_transport_failure(&tonic::Status::from_error(Box::new(
            std::io::Error::from(std::io::ErrorKind::ConnectionRefused)
        ))));
    }

    #[test]
    fn the_largest_accepted_credentials_keep_the_metadata_far_under_the_cores_limit() {
        // hyper's HTTP/2 server, which the core runs on, refuses header lists over 16 KiB.
        const CORE_HEADER_LIST_LIMIT: usize = 16 * 1024;
        let mut headers = HeaderMap::new();
        for (name, max) in [
            (metadata::ACCOUNT_URL, crate::auth::MAX_ACCOUNT_URL_BYTES),
            (metadata::EMAIL, crate::auth::MAX_EMAIL_BYTES),
            (metadata::PASSWORD, crate::auth::MAX_PASSWORD_BYTES),
        ] {
            headers.insert(name, HeaderValue::from_str(&"a".repeat(max)).unwrap());
        }
        let caller = Caller {
            credentials: Credentials::from_headers(&headers).unwrap(),
            request_id: RequestId::from_caller(&HeaderValue::from_str(&"r".repeat(128)).unwrap())
                .unwrap(),
        };
        let request = caller.request((), Some(Duration::from_secs(10)));
        let size: usize = request
            .metadata()
            .clone()
            .into_headers()
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + 32)
            .sum();
        assert!(
            size < CORE_HEADER_LIST_LIMIT / 3,
            "{size} bytes of metadata"
        );
    }

    #[test]
    fn outgoing_requests_continue_the_current_trace() {
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        let request = tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("GET /group/{group_id}");
            let _entered = span.enter();
            caller().request((), None)
        });
        let traceparent = request
            .metadata()
            .get(metadata::TRACEPARENT)
            .expect("a traceparent");
        let traceparent = traceparent.to_str().unwrap();
        assert!(traceparent.starts_with("00-"), "{traceparent}");
        assert_eq!(traceparent.split('-').count(), 4, "{traceparent}");
    }
}
