//! The connection to lms-core: a lazily connecting tonic channel, the per-call deadline, and the
//! metadata every call carries (credentials, request id, trace context).

use std::future::Future;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use lms_proto::v1::admin_service_client::AdminServiceClient;
use tonic::transport::{Channel, Endpoint};

use crate::auth::Credentials;
use crate::error::GatewayError;
use crate::request_id::RequestId;
use crate::telemetry::inject_trace_context;

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
        inject_trace_context(metadata);
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
