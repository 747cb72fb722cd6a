//! Start-up and shutdown of the core: [`App::build`] connects, migrates and binds (port 0
//! works), [`App::run_until`] serves until the shutdown future resolves. `main`, the `lms`
//! launcher and the tests all start the core this way; the shutdown future is usually
//! [`lms_runtime::shutdown_signal`].

use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context as _;
use lms_proto::v1::{
    admin_service_server::AdminServiceServer, directory_service_server::DirectoryServiceServer,
    scim_service_server::ScimServiceServer, webhook_service_server::WebhookServiceServer,
};
use tokio::net::TcpListener;
use tonic::{
    service::Routes,
    transport::{Server, server::TcpIncoming},
};
use tonic_health::server::HealthReporter;

use crate::{
    auth::{Authenticator, Clock, SystemClock},
    availability::Gate,
    db::{self, sqlite_file::FileWatch},
    grpc::{
        CoreState, SharedState, admin::AdminApi, directory::DirectoryApi, scim::ScimApi,
        webhooks::WebhookApi,
    },
    health,
    in_process::InProcessCore,
    rate_limit::{RateLimitFields, RateLimits},
    scheduler::Scheduler,
    settings::CoreSettings,
    telemetry,
};

pub struct App {
    listener: TcpListener,
    grpc_addr: SocketAddr,
    state: SharedState,
    /// The SQLite file as opened, watched while serving; `None` on PostgreSQL.
    database_file: Option<FileWatch>,
    database_file_check: Duration,
    database_probe: Duration,
    /// The metrics endpoint, when a metrics address is set.
    metrics: Option<lms_runtime::metrics::MetricsServer>,
    /// Every gRPC service of the core, served over TCP and called in process alike.
    routes: Routes,
    health: HealthReporter,
    in_process: InProcessCore,
    dispatcher: crate::webhooks::Dispatcher,
    scheduler: Scheduler,
}

impl App {
    pub async fn build(settings: &CoreSettings) -> anyhow::Result<Self> {
        Self::build_with_clock(settings, Arc::new(SystemClock)).await
    }

    /// As [`App::build`], with the clock authentication and the rate limits use (tests move
    /// it by hand).
    pub async fn build_with_clock(
        settings: &CoreSettings,
        clock: Arc<dyn Clock>,
    ) -> anyhow::Result<Self> {
        let db = db::open_for_serving(
            &settings.database_url,
            settings.create_database(),
            Duration::from_millis(settings.database_statement_timeout_ms),
        )
        .await?;
        let database_file = db::sqlite_file::FileWatch::of(&settings.database_url);
        let auth = Authenticator::new(db.clone(), &settings.auth_settings(), clock.clone()).await?;
        let listener = TcpListener::bind(settings.grpc_addr)
            .await
            .with_context(|| format!("cannot listen on {}", settings.grpc_addr))?;
        let grpc_addr = listener.local_addr()?;
        let metrics = match settings.metrics_addr {
            Some(addr) => {
                let server = lms_runtime::metrics::MetricsServer::bind(addr).await?;
                crate::metrics::describe();
                Some(server)
            }
            None => None,
        };
        let state = Arc::new(CoreState {
            reads: db::ReadConnections::of(&db),
            db,
            auth,
            database: Arc::default(),
            rate_limits: RateLimits::start(&settings.rate_limits, clock),
            webhook_allow_private_networks: settings.webhooks.allow_private_networks,
            scheduler_date_offset_days: settings.scheduler.date_offset_days,
        });
        let dispatcher =
            crate::webhooks::Dispatcher::new(state.db.clone(), settings.webhooks.clone())?;
        let scheduler = Scheduler::new(
            state.db.clone(),
            state.auth.revision(),
            settings.scheduler.clone(),
        );
        let (health, routes) = routes(&state)?;
        Ok(Self {
            in_process: InProcessCore::new(routes.clone()),
            routes,
            health,
            listener,
            grpc_addr,
            state,
            database_file,
            database_file_check: Duration::from_millis(settings.database_file_check_ms),
            database_probe: Duration::from_millis(settings.database_probe_ms),
            metrics,
            dispatcher,
            scheduler,
        })
    }

    pub fn grpc_addr(&self) -> SocketAddr {
        self.grpc_addr
    }

    /// Where metrics are served, when they are.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
            .as_ref()
            .map(lms_runtime::metrics::MetricsServer::local_addr)
    }

    pub fn state(&self) -> SharedState {
        self.state.clone()
    }

    /// This core's services for callers in the same process, beside TCP for the others.
    pub fn in_process(&self) -> InProcessCore {
        self.in_process.clone()
    }

    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let health = self.health;
        health::set_all(&health, true).await;
        let probe = tokio::spawn(health::follow_database(
            self.state.clone(),
            health.clone(),
            self.database_probe,
        ));
        crate::metrics::sample_pool(Arc::downgrade(&self.state), |state| &state.db);
        let (metrics_stop, metrics_stopped) = tokio::sync::watch::channel(false);
        let metrics = self.metrics.map(|server| {
            let mut stopped = metrics_stopped;
            tokio::spawn(server.run_until(async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            }))
        });
        let file_watch = self.database_file.clone().map(|file| {
            tokio::spawn(watch_database_file(
                file,
                self.database_file_check,
                self.state.clone(),
                health.clone(),
            ))
        });
        let (background_stop, background_stopped) = tokio::sync::watch::channel(false);
        let dispatch = tokio::spawn(self.dispatcher.run(background_stopped.clone()));
        let schedule = tokio::spawn(self.scheduler.run(background_stopped));
        let shutdown = async move {
            shutdown.await;
            // Health turns NOT_SERVING first, so balancers stop sending before we stop.
            probe.abort();
            health::set_all(&health, false).await;
        };
        tracing::info!(addr = %self.grpc_addr, "lms-core listening (gRPC)");
        let served = Server::builder()
            .layer(telemetry::ObserveLayer)
            .add_routes(self.routes)
            .serve_with_incoming_shutdown(
                // Answers are written in several small frames: without TCP_NODELAY the last
                // one waits for the peer's delayed ACK (about 40 ms per answer).
                TcpIncoming::from(self.listener).with_nodelay(Some(true)),
                shutdown,
            )
            .await;
        self.in_process.stop();
        let _ = background_stop.send(true);
        let _ = dispatch.await;
        let _ = schedule.await;
        served.context("gRPC server failed")?;
        if let Some(task) = file_watch {
            task.abort();
        }
        let _ = metrics_stop.send(true);
        if let Some(task) = metrics {
            let _ = task.await;
        }
        self.state.auth.stop_watching();
        self.state.db.clone().close().await.ok();
        Ok(())
    }
}

/// The health service and every service of the core, in one set of routes.
fn routes(state: &SharedState) -> anyhow::Result<(HealthReporter, Routes)> {
    let (health, health_service) = tonic_health::server::health_reporter();
    // Both reflection versions: grpcurl and current clients speak v1, many stock tools
    // (older grpcurl, Postman, grpc_cli, Evans) only v1alpha.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(lms_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let routes = Routes::new(health_service)
        .add_service(reflection().build_v1()?)
        .add_service(reflection().build_v1alpha()?)
        .add_service(Gate::new(
            RateLimitFields::new(AdminServiceServer::new(AdminApi::new(state.clone()))),
            state.database.clone(),
        ))
        .add_service(Gate::new(
            RateLimitFields::new(DirectoryServiceServer::new(DirectoryApi::new(
                state.clone(),
            ))),
            state.database.clone(),
        ))
        .add_service(Gate::new(
            RateLimitFields::new(WebhookServiceServer::new(WebhookApi::new(state.clone()))),
            state.database.clone(),
        ))
        .add_service(Gate::new(
            ScimServiceServer::new(ScimApi::new(state.clone())),
            state.database.clone(),
        ))
        .prepare();
    Ok((health, routes))
}

/// Checks every `interval` that the SQLite file is still the one opened. When it is gone,
/// says so once at ERROR, turns health NOT_SERVING and makes every request UNAVAILABLE:
/// SQLite would go on writing to the deleted file, and all of it would be lost at the next
/// start.
async fn watch_database_file(
    file: FileWatch,
    interval: Duration,
    state: SharedState,
    health: tonic_health::server::HealthReporter,
) {
    loop {
        tokio::time::sleep(interval).await;
        if let Some(what) = file.lost() {
            tracing::error!(
                "{what}; refusing every request from now on (503). Restore the file and restart"
            );
            state.database.mark_lost();
            health::set_all(&health, false).await;
            return;
        }
    }
}
