//! Probes for load balancers and orchestrators, outside authentication and the interface's
//! prefixes: `GET /healthz` answers 200 while the process serves HTTP (liveness); `GET /readyz`
//! answers 200 when the core answers and reports its database up, else 503 with
//! `Retry-After` (readiness: send no traffic here for now).

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::core_client::CoreClient;
use crate::transport::CORE_UNREACHABLE_RETRY_AFTER_SECONDS;

pub(crate) async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

pub(crate) async fn readyz(State(core): State<CoreClient>) -> Response {
    match core.ready().await {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(reason) => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(
                header::RETRY_AFTER,
                CORE_UNREACHABLE_RETRY_AFTER_SECONDS.to_string(),
            )],
            format!("not ready: {reason}\n"),
        )
            .into_response(),
    }
}
