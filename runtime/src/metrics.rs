//! Prometheus metrics: one recorder per process, served as text at `GET /metrics` on the
//! metrics address (`--metrics-addr`).
//!
//! The services record with the `metrics` macros; without a recorder (no metrics address)
//! those cost a check and nothing else. Under `lms up` both halves record into the one
//! recorder, so one address serves both. Values that are states rather than events (pool
//! connections in use) are sampled when scraped, by the functions given to [`on_scrape`].

use std::{
    future::Future,
    net::SocketAddr,
    sync::{Mutex, OnceLock},
};

use anyhow::Context as _;
use axum::{Router, http::header, response::IntoResponse, routing::get};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;

/// Histogram buckets of every `*_seconds` metric: 0.5 ms to 30 s.
const SECONDS_BUCKETS: [f64; 16] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0,
    30.0,
];

/// A sampler run at each scrape; it returns `false` once what it samples is gone.
type Sampler = Box<dyn Fn() -> bool + Send + Sync>;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
static SAMPLERS: Mutex<Vec<Sampler>> = Mutex::new(Vec::new());

/// Installs the process's Prometheus recorder (once; later calls return the same handle).
pub fn install() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".to_owned()), &SECONDS_BUCKETS)
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("another metrics recorder is installed; /metrics stays empty");
        }
        handle
    })
}

/// Whether a recorder is installed (a metrics address was given).
pub fn installed() -> bool {
    HANDLE.get().is_some()
}

/// Runs `sample` before each scrape, until it returns `false`.
pub fn on_scrape(sample: impl Fn() -> bool + Send + Sync + 'static) {
    if let Ok(mut samplers) = SAMPLERS.lock() {
        samplers.push(Box::new(sample));
    }
}

/// The text a scrape gets.
pub fn render() -> String {
    if let Ok(mut samplers) = SAMPLERS.lock() {
        samplers.retain(|sample| sample());
    }
    let handle = install();
    handle.run_upkeep();
    handle.render()
}

/// The metrics endpoint, bound and ready to serve.
#[derive(Debug)]
pub struct MetricsServer {
    listener: TcpListener,
    local_addr: SocketAddr,
}

impl MetricsServer {
    /// Installs the recorder and binds `addr` (port 0 picks a free port).
    pub async fn bind(addr: SocketAddr) -> anyhow::Result<Self> {
        install();
        let listener = TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the metrics address {addr}"))?;
        let local_addr = listener.local_addr()?;
        Ok(Self {
            listener,
            local_addr,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves `GET /metrics` until `shutdown` resolves.
    pub async fn run_until(self, shutdown: impl Future<Output = ()> + Send + 'static) {
        tracing::info!(addr = %self.local_addr, "metrics served at /metrics");
        let router = Router::new().route("/metrics", get(scrape));
        if let Err(error) = axum::serve(self.listener, router)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::warn!(%error, "the metrics endpoint stopped");
        }
    }
}

async fn scrape() -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        render(),
    )
}
