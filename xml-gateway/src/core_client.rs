//! The connection to lms-core: lazily connecting tonic channels to one or more replicas
//! ([`replicas`](crate::replicas)) or the core's own services in the same process, over the
//! [`transport`](crate::transport), the per-call deadline, the metadata every call carries
//! (credentials, request id; the trace context is the CLIENT span's, added on the channel),
//! and what a call that never reached the core becomes (503 with `Retry-After`, logged once
//! per outage).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use lms_proto::v1::admin_service_client::AdminServiceClient;
use lms_proto::v1::scim_service_client::ScimServiceClient;
use lms_proto::v1::webhook_service_client::WebhookServiceClient;
use lms_runtime::Outage;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};

use crate::auth::Credentials;
use crate::error::GatewayError;
use crate::rate_limit::RateLimitSlot;
use crate::replicas::{CoreChannel, Replicas};
use crate::request_id::RequestId;
use crate::transport::{
    CORE_UNREACHABLE_RETRY_AFTER_SECONDS, TransportFailure, is_transport_failure,
    refused_at_connection, transport,
};

/// A client of the core's `AdminService`, cheap to clone (shared channels).
#[derive(Debug, Clone)]
pub struct CoreClient {
    replicas: Arc<Replicas>,
    timeout: Duration,
    /// Whether the core is reachable, as this gateway's calls found it.
    outage: Arc<Outage>,
}

impl CoreClient {
    /// A client over an existing channel; `timeout` bounds every call.
    pub fn new(channel: Channel, timeout: Duration) -> Self {
        Self::over(
            Replicas::new(vec![("the core".to_owned(), transport(channel))]),
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
        Self::over(
            Replicas::new(vec![("the core".to_owned(), transport(core))]),
            timeout,
        )
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
                Ok((core_url.clone(), transport(endpoint.connect_lazy())))
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
        self.unary_on(|replica| {
            call(
                self.replicas.admin(replica),
                caller.request(message.clone(), Some(self.timeout)),
            )
        })
        .await
    }

    /// [`Self::unary`] for `lms.v1.WebhookService`.
    pub(crate) async fn webhooks<M, T, Fut>(
        &self,
        caller: &Caller,
        message: M,
        call: impl Fn(WebhookServiceClient<CoreChannel>, tonic::Request<M>) -> Fut,
    ) -> Result<T, GatewayError>
    where
        M: Clone,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        self.unary_on(|replica| {
            call(
                self.replicas.webhooks(replica),
                caller.request(message.clone(), Some(self.timeout)),
            )
        })
        .await
    }

    /// [`Self::unary`] for `lms.v1.ScimService`, authenticated by a SCIM token (metadata
    /// `x-scim-token`) rather than a caller's credentials. A token that cannot travel as
    /// metadata is no token: UNAUTHENTICATED without a call.
    pub(crate) async fn scim<M, T, Fut>(
        &self,
        request_id: &RequestId,
        token: &str,
        message: M,
        call: impl Fn(ScimServiceClient<CoreChannel>, tonic::Request<M>) -> Fut,
    ) -> Result<T, GatewayError>
    where
        M: Clone,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let Ok(token) = MetadataValue::try_from(token) else {
            return Err(GatewayError::Core(tonic::Status::unauthenticated(
                "Authentication failed.",
            )));
        };
        self.unary_on(|replica| {
            let mut request = request_to_core(message.clone(), request_id, Some(self.timeout));
            request
                .metadata_mut()
                .insert(lms_proto::metadata::SCIM_TOKEN, token.clone());
            call(self.replicas.scim(replica), request)
        })
        .await
    }

    /// One unary `attempt` on a replica under the gateway's deadline; a late answer is a
    /// 504.
    async fn unary_on<T, Fut>(&self, attempt: impl Fn(usize) -> Fut) -> Result<T, GatewayError>
    where
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let attempts = self.on_a_replica_by(attempt);
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
        self.on_a_replica_by(|replica| attempt(self.replicas.admin(replica)))
            .await
    }

    /// [`Self::on_a_replica`] with the replica's index, for any of the core's services.
    async fn on_a_replica_by<T, Fut>(
        &self,
        attempt: impl Fn(usize) -> Fut,
    ) -> Result<T, tonic::Status>
    where
        Fut: Future<Output = Result<T, tonic::Status>>,
    {
        let mut tried = vec![self.replicas.pick()];
        loop {
            let replica = *tried.last().expect("one replica tried");
            match attempt(replica).await {
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

/// Who is calling, as the core needs to know it: the credentials and the request id; and
/// where the RateLimit fields of the core's answer go.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    credentials: Credentials,
    request_id: RequestId,
    rate_limit: Option<RateLimitSlot>,
}

impl Caller {
    /// The outgoing gRPC request: credentials, `x-request-id` and, when given, the deadline
    /// (`grpc-timeout`) so the core stops working on it too. The trace context is the call's
    /// CLIENT span's, added by the channel ([`CoreCall`](crate::telemetry::CoreCall)), which
    /// also keeps the answer's RateLimit fields for the response.
    pub(crate) fn request<M>(&self, message: M, deadline: Option<Duration>) -> tonic::Request<M> {
        let mut request = request_to_core(message, &self.request_id, deadline);
        self.credentials.write_metadata(request.metadata_mut());
        if let Some(slot) = &self.rate_limit {
            request.extensions_mut().insert(slot.clone());
        }
        request
    }
}

/// A request to the core carrying the request id and, when given, the deadline; for calls
/// made without a caller's credentials (the token grant) and, through [`Caller::request`],
/// with them.
pub(crate) fn request_to_core<M>(
    message: M,
    request_id: &RequestId,
    deadline: Option<Duration>,
) -> tonic::Request<M> {
    let mut request = tonic::Request::new(message);
    if let Some(deadline) = deadline {
        request.set_timeout(deadline);
    }
    if let Ok(value) = request_id.as_str().parse() {
        request
            .metadata_mut()
            .insert(lms_proto::metadata::REQUEST_ID, value);
    }
    request
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = GatewayError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let credentials = Credentials::from_request_parts(parts, state).await?;
        let Ok(request_id) = RequestId::from_request_parts(parts, state).await;
        Ok(Self {
            credentials,
            request_id,
            rate_limit: parts.extensions.get::<RateLimitSlot>().cloned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue};
    use lms_proto::metadata;

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
            rate_limit: None,
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
            rate_limit: None,
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
}
