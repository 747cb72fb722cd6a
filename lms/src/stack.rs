//! The whole service in one process: the core and the gateway, the gateway calling the
//! core's gRPC services in process through the `lms.v1` codec (the core still serves TCP for
//! other callers), started and stopped together. `lms up`, the end-to-end tests and the benchmarks
//! all start the service this way.

use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context as _;
use lms_core::{
    app::App as Core,
    auth::{Clock, SystemClock},
    grpc::SharedState,
    in_process::InProcessCore,
    settings::CoreSettings,
};
use lms_gateway::{
    App as Gateway, CoreClient, DEFAULT_CORE_TIMEOUT_MS, DEFAULT_HTTP_ADDR, GatewaySettings,
    HttpServerSettings,
};
use tokio::sync::watch;

/// How long the services may take to finish open requests once told to stop.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Settings of the core and the gateway together; the gateway always calls this core.
#[derive(Debug, Clone, clap::Args)]
pub struct StackSettings {
    #[command(flatten)]
    pub core: CoreSettings,

    /// Address the XML interface listens on (port 0 picks a free port).
    #[arg(long, env = "LMS_HTTP_ADDR", default_value_t = DEFAULT_HTTP_ADDR)]
    pub http_addr: SocketAddr,

    /// Deadline of one call from the gateway to the core, in milliseconds.
    #[arg(long, env = "LMS_CORE_TIMEOUT_MS", default_value_t = DEFAULT_CORE_TIMEOUT_MS)]
    pub core_timeout_ms: u64,

    #[command(flatten)]
    pub http_server: HttpServerSettings,

    /// The service's external base URL (`https://lms.example.com`), for SCIM's
    /// `meta.location` and `Location`; unset: `http://` and the request's `Host`.
    #[arg(long = "public-url", env = "LMS_PUBLIC_URL")]
    pub public_url: Option<String>,
}

impl StackSettings {
    /// Settings for a database URL, everything else at its default.
    pub fn for_database(database_url: impl Into<String>) -> Self {
        Self {
            core: CoreSettings::for_database(database_url),
            http_addr: DEFAULT_HTTP_ADDR,
            core_timeout_ms: DEFAULT_CORE_TIMEOUT_MS,
            http_server: HttpServerSettings::default(),
            public_url: None,
        }
    }

    /// The same settings on free loopback ports (port 0), as tests and replicas use them.
    pub fn on_free_ports(mut self) -> Self {
        let any_port = SocketAddr::from(([127, 0, 0, 1], 0));
        self.core.grpc_addr = any_port;
        self.http_addr = any_port;
        self
    }
}

/// Core and gateway, both bound and ready to serve.
pub struct Stack {
    core: Core,
    gateway: Gateway,
}

impl Stack {
    /// Connects and migrates the database, then binds the core and the gateway (port 0 works).
    pub async fn build(settings: &StackSettings) -> anyhow::Result<Self> {
        Self::build_with_clock(settings, Arc::new(SystemClock)).await
    }

    /// As [`Stack::build`], with the clock authentication uses (tests move it by hand).
    pub async fn build_with_clock(
        settings: &StackSettings,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Self> {
        let core = Core::build_with_clock(&settings.core, clock).await?;
        let gateway_settings = GatewaySettings {
            http_addr: settings.http_addr,
            core_urls: vec![format!("http://{}", core.grpc_addr())],
            core_timeout_ms: settings.core_timeout_ms,
            // One recorder serves both halves, at the core's metrics address.
            metrics_addr: None,
            server: settings.http_server.clone(),
            public_url: settings.public_url.clone(),
        };
        // The gateway calls its core without a transport; other callers use the gRPC port.
        let client = CoreClient::in_process(core.in_process(), gateway_settings.core_timeout());
        let gateway = Gateway::build_with_core(gateway_settings, client).await?;
        Ok(Self { core, gateway })
    }

    /// The address of the XML interface.
    pub fn http_addr(&self) -> SocketAddr {
        self.gateway.local_addr()
    }

    /// Where both halves' metrics are served, when they are.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.core.metrics_addr()
    }

    /// The address of the core's gRPC server.
    pub fn grpc_addr(&self) -> SocketAddr {
        self.core.grpc_addr()
    }

    /// The core's services as the gateway calls them (for benchmarks and tests).
    pub fn core_in_process(&self) -> InProcessCore {
        self.core.in_process()
    }

    /// The core's state (database, authenticator), for work before serving and for tests.
    pub fn state(&self) -> SharedState {
        self.core.state()
    }

    /// Serves until `shutdown` resolves, then stops both services and waits for them (at most
    /// 30 s): the gateway drains its open requests, the core stops after its last call.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let (stop_gateway, gateway_stopped) = watch::channel(false);
        let (stop_core, core_stopped) = watch::channel(false);
        let wait = |mut stopped: watch::Receiver<bool>| async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        };
        let core_task = tokio::spawn(self.core.run_until(wait(core_stopped)));
        let gateway_task = tokio::spawn(self.gateway.run_until(wait(gateway_stopped)));
        shutdown.await;
        // The gateway first: its open requests call the core in process, which has no
        // connection for the core's shutdown to drain, so the core stops once they are done.
        let _ = stop_gateway.send(true);
        let (gateway, core) = tokio::time::timeout(STOP_TIMEOUT, async {
            let gateway = gateway_task.await;
            let _ = stop_core.send(true);
            (gateway, core_task.await)
        })
        .await
        .with_context(|| format!("services did not stop within {STOP_TIMEOUT:?}"))?;
        gateway.context("the gateway task failed")??;
        core.context("the core task failed")??;
        Ok(())
    }
}
