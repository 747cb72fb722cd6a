//! The core called from inside its own process, as a service rather than over a connection.
//!
//! When the gateway runs in the core's process (`lms up`), its gRPC client calls the core's
//! routes directly: every request and answer is still an `lms.v1` message encoded and
//! decoded by the same codec, with the same metadata, and goes through the same
//! [`ObserveLayer`](crate::telemetry::ObserveLayer) (SERVER span, log line, metrics), so the
//! gateway stays a plain `lms.v1` client; what is left out is only the transport: no HTTP/2
//! framing, flow control or pipe between two halves of one process. The core keeps serving
//! TCP for every other caller. docs/benchmarks.md ("Hot path") has what it saves.

use std::{
    convert::Infallible,
    future::Future,
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use tonic::{body::Body, service::Routes};
use tower::{BoxError, Layer as _, Service};

use crate::telemetry::{Observe, ObserveLayer};

/// The core's gRPC services as one `tower` service; cheap to clone.
#[derive(Clone)]
pub struct InProcessCore {
    routes: Observe<Routes>,
    /// Set once the core has stopped: later calls are refused as a closed port refuses
    /// them, so the gateway answers 503 as it would over TCP.
    stopped: Arc<AtomicBool>,
}

impl std::fmt::Debug for InProcessCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessCore")
            .field("stopped", &self.stopped.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl InProcessCore {
    pub(crate) fn new(routes: Routes) -> Self {
        Self {
            routes: ObserveLayer.layer(routes),
            stopped: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Refuses every call from now on.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }
}

type CallFuture = Pin<Box<dyn Future<Output = Result<http::Response<Body>, BoxError>> + Send>>;

impl Service<http::Request<Body>> for InProcessCore {
    type Response = http::Response<Body>;
    type Error = BoxError;
    type Future = CallFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Service::<http::Request<Body>>::poll_ready(&mut self.routes, cx)
            .map_err(|never: Infallible| match never {})
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        if self.stopped.load(Ordering::Relaxed) {
            let refused = io::Error::new(io::ErrorKind::ConnectionRefused, "the core has stopped");
            return Box::pin(std::future::ready(Err(refused.into())));
        }
        let answer = self.routes.call(request);
        Box::pin(async move {
            match answer.await {
                Ok(response) => Ok(response.map(Body::new)),
                Err(never) => match never {},
            }
        })
    }
}
