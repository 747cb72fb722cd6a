//! Start-up: the router with its middleware, and [`App`], which binds the socket and serves.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;
use axum::Router;
use axum::routing::{get, post};
use axum::serve::ListenerExt as _;
use tokio::net::TcpListener;
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::TraceLayer;

use crate::core_client::CoreClient;
use crate::error::render_error_bodies;
use crate::request_id::assign_request_id;
use crate::routes::{content, department, enrollment, fallback, group, points};
use crate::settings::GatewaySettings;
use crate::telemetry::{http_request_span, record_response};

/// A client that trickles its body slower than this is cut off (slow-body attacks hold a
/// connection and a task for as long as they are allowed to).
const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The whole HTTP interface over a core client.
///
/// Middleware, outermost first: request id (read or made, echoed on every response), the
/// request span, then XML bodies for every error response.
pub fn router(core: CoreClient) -> Router {
    Router::new()
        .route("/department", post(department::create_department))
        .route(
            "/department/{department_id}",
            post(department::update_department),
        )
        .route(
            "/group/{group_id}",
            get(group::get_group).post(group::update_group),
        )
        .route("/enrollment/delete", post(enrollment::delete_enrollments))
        .route("/content/{content_item_id}", get(content::get_content_item))
        .route("/gamification/points", get(points::get_points))
        .method_not_allowed_fallback(fallback::method_not_allowed)
        .fallback(fallback::unknown_route)
        .layer(RequestBodyTimeoutLayer::new(BODY_READ_TIMEOUT))
        .layer(axum::middleware::from_fn(render_error_bodies))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(http_request_span)
                .on_response(record_response)
                // Failures are logged once, where they are understood (error mapping, streams).
                .on_failure(()),
        )
        .layer(axum::middleware::from_fn(assign_request_id))
        .with_state(core)
}

/// The gateway, bound and ready to serve.
#[derive(Debug)]
pub struct App {
    listener: TcpListener,
    local_addr: SocketAddr,
    router: Router,
}

impl App {
    /// Binds the HTTP listener (port 0 picks a free port) and prepares a lazily connecting
    /// channel to the core, so the gateway starts even while the core is down.
    pub async fn build(settings: GatewaySettings) -> anyhow::Result<App> {
        let core = CoreClient::connect_lazy(&settings.core_url, settings.core_timeout())?;
        Self::build_with_core(settings.http_addr, core).await
    }

    /// As [`App::build`], calling the core through `core` (`lms up` passes an in-process
    /// channel).
    pub async fn build_with_core(http_addr: SocketAddr, core: CoreClient) -> anyhow::Result<App> {
        let listener = TcpListener::bind(http_addr)
            .await
            .with_context(|| format!("binding the HTTP address {http_addr}"))?;
        let local_addr = listener.local_addr()?;
        Ok(App {
            listener,
            local_addr,
            router: router(core),
        })
    }

    /// The address the gateway listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown` completes, then stops accepting and lets open requests finish.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        tracing::info!(addr = %self.local_addr, "lms-gateway listening");
        // Small answers must not wait for the client's delayed ACK (Nagle's algorithm).
        let listener = self.listener.tap_io(|tcp| {
            if let Err(error) = tcp.set_nodelay(true) {
                tracing::warn!(%error, "could not set TCP_NODELAY on an accepted connection");
            }
        });
        axum::serve(listener, self.router)
            .with_graceful_shutdown(shutdown)
            .await
            .context("serving HTTP")?;
        tracing::info!("lms-gateway stopped");
        Ok(())
    }
}
