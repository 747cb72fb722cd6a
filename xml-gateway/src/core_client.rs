//! The connection to lms-core: a lazily connecting tonic channel, the per-call deadline, and the
//! metadata every call carries (credentials, request id, trace context).

use std::future::Future;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use lms_proto::v1::admin_service_client::AdminServiceClient;
use lms_runtime::propagation::inject_current_context;
use tonic::transport::{Channel, Endpoint};

use crate::auth::Credentials;
use crate::error::GatewayError;
use crate::request_id::RequestId;

/// Longest `tracestate` passed on to the core (what W3C Trace Context asks every vendor to
/// propagate at least).
const MAX_TRACESTATE_BYTES: usize = 512;

/// A client of the core's `AdminService`, cheap to clone (one shared channel).
#[derive(Debug, Clone)]
pub struct CoreClient {
    admin: AdminServiceClient<Channel>,
    timeout: Duration,
}

impl CoreClient {
    /// A client over an existing channel; `timeout` bounds every call.
    pub fn new(channel: Channel, timeout: Duration) -> Self {
        Self {
            admin: AdminServiceClient::new(channel),
            timeout,
        }
    }

    /// A client whose channel connects on first use, so the gateway starts (and answers 503)
    /// while the core is down, and reconnects when it comes back.
    pub fn connect_lazy(core_url: &str, timeout: Duration) -> anyhow::Result<Self> {
        let endpoint = Endpoint::from_shared(core_url.to_owned())
            .map_err(|error| anyhow::anyhow!("invalid core URL {core_url:?}: {error}"))?
            .connect_timeout(timeout)
            .tcp_nodelay(true);
        Ok(Self::new(endpoint.connect_lazy(), timeout))
    }

    /// The deadline of one call.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A fresh handle for one call (clones share the channel).
    pub(crate) fn admin(&self) -> AdminServiceClient<Channel> {
        self.admin.clone()
    }

    /// Runs one unary call under the gateway's deadline; a late answer is a 504.
    pub(crate) async fn unary<M, T, Fut>(
        &self,
        caller: &Caller,
        message: M,
        call: impl FnOnce(AdminServiceClient<Channel>, tonic::Request<M>) -> Fut,
    ) -> Result<T, GatewayError>
    where
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let request = caller.request(message, Some(self.timeout));
        match tokio::time::timeout(self.timeout, call(self.admin(), request)).await {
            Ok(Ok(response)) => Ok(response.into_inner()),
            Ok(Err(status)) => Err(GatewayError::Core(status)),
            Err(_elapsed) => Err(GatewayError::CoreTimeout),
        }
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
