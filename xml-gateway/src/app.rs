//! Start-up: the router with its middleware, and [`App`], which binds the socket and serves.

use std::future::Future;
use std::net::SocketAddr;

use anyhow::Context as _;
use axum::Router;
use axum::routing::{MethodRouter, any, delete, get, post};
use tokio::net::TcpListener;
use tower::Layer as _;

use crate::core_client::CoreClient;
use crate::health;
use crate::listing;
use crate::openapi;
use crate::paths;
use crate::rate_limit;
use crate::representation::{represent, represent_as_json};
use crate::request_id::assign_request_id;
use crate::routes::content::ContentItems;
use crate::routes::department::Departments;
use crate::routes::enrollment::Enrollments;
use crate::routes::group::Groups;
use crate::routes::points::Points;
use crate::routes::results::{CourseResults, ModuleResults};
use crate::routes::scim::{self, ScimState};
use crate::routes::user::list::{Users, V1, V2};
use crate::routes::user::schedule::{self, DEACTIVATION, TERMINATION};
use crate::routes::user::{lifecycle, reads as user, writes as user_writes};
use crate::routes::{
    content, department, enrollment, fallback, group, points, results, scim_tokens, token, webhook,
};
use crate::server;
use crate::settings::{GatewaySettings, HttpServerSettings};
use crate::telemetry::{observe, observe_probe};

/// The whole HTTP interface over a core client.
///
/// Middleware, outermost first: the path reduced to the one spelling the routes know (client
/// prefixes and a trailing `/` removed, before routing), request id (read or made, echoed on
/// every response), the request's span, log line and metrics, the RateLimit fields of the
/// core's answer (interface routes only), then the representation layer
/// (XML or JSON, chosen once from `Accept`, for answers and errors alike; always JSON for the
/// token endpoint, whose answers RFC 6749 defines). SCIM (`/scim/v2`) sits beside the
/// interface with its own JSON and errors ([`routes::scim`](crate::routes::scim)).
pub fn router(core: CoreClient) -> Router {
    router_with_public_url(core, None)
}

/// [`router`], SCIM's `meta.location` under `public_url` (else `http://` and the `Host`).
pub fn router_with_public_url(core: CoreClient, public_url: Option<String>) -> Router {
    let Routes {
        interface,
        token,
        document,
        probes,
    } = routes();
    let routes = interface
        .router
        .method_not_allowed_fallback(fallback::method_not_allowed)
        .fallback(fallback::unknown_route)
        .layer(axum::middleware::from_fn(represent))
        .layer(axum::middleware::from_fn(rate_limit::fields))
        .merge(
            token
                .router
                .layer(axum::middleware::from_fn(represent_as_json)),
        )
        .merge(
            document
                .router
                .layer(axum::middleware::from_fn(represent_as_json)),
        )
        .merge(scim_routes(ScimState {
            core: core.clone(),
            public_url,
        }))
        .layer(axum::middleware::from_fn(observe))
        .layer(axum::middleware::from_fn(assign_request_id))
        .with_state(core.clone());
    // Probes sit beside the interface: no credentials, no client prefixes, plain text.
    let probes = probes
        .router
        .layer(axum::middleware::from_fn(observe_probe))
        .layer(axum::middleware::from_fn(assign_request_id))
        .with_state(core);
    probes.fallback_service(axum::middleware::map_request(paths::canonicalize).layer(routes))
}

/// `/scim/v2` and everything under it: one handler, since SCIM's resource segments match in
/// any letter case. Not among [`route_templates`]: SCIM describes itself (its discovery
/// endpoints), not in the OpenAPI document.
fn scim_routes(state: ScimState) -> Router<CoreClient> {
    Router::new()
        .route("/scim/v2", any(scim::serve))
        .route("/scim/v2/{*rest}", any(scim::serve))
        .with_state(state)
}

/// The template of every route the gateway serves (each path as the router matches it, as
/// `http.route` and the metrics name it), in the order they are registered.
pub fn route_templates() -> Vec<&'static str> {
    let Routes {
        interface,
        token,
        document,
        probes,
    } = routes();
    [interface, token, document, probes]
        .into_iter()
        .flat_map(|table| table.templates)
        .collect()
}

/// The routes, before middleware and state: the interface (XML or JSON), the token endpoint
/// (JSON only), the OpenAPI document (JSON, no credentials) and the probes (plain text).
struct Routes {
    interface: Table,
    token: Table,
    document: Table,
    probes: Table,
}

fn routes() -> Routes {
    let interface = Table::default()
        .route(
            "/department",
            get(listing::whole::<Departments>).post(department::create_department),
        )
        .route(
            "/department/{department_id}",
            get(department::get_department)
                .post(department::update_department)
                .delete(department::delete_department),
        )
        .route("/departments", get(listing::page::<Departments>))
        .route(
            "/group",
            get(listing::whole::<Groups>).post(group::create_group),
        )
        .route(
            "/user",
            get(listing::whole::<Users<V1>>).post(user_writes::add_user),
        )
        .route("/user/v2", get(listing::whole::<Users<V2>>))
        .route("/user/list", post(user::numbered_users))
        .route(
            "/user/{user_id}",
            get(user::get_user)
                .post(user_writes::update_user)
                .delete(user_writes::delete_user),
        )
        .route("/user/{user_id}/v2", get(user::get_user_v2))
        .route(
            "/user/{user_id}/password",
            post(user_writes::change_password),
        )
        .route("/user/{user_id}/status", post(user_writes::change_status))
        .route(
            "/user/{user_id}/groups/remove",
            post(lifecycle::remove_from_groups),
        )
        .route(
            "/user/{user_id}/scheduled_deactivation",
            post(schedule::schedule::<DEACTIVATION>).delete(schedule::cancel::<DEACTIVATION>),
        )
        .route(
            "/user/{user_id}/scheduled_termination",
            post(schedule::schedule::<TERMINATION>).delete(schedule::cancel::<TERMINATION>),
        )
        .route("/users/activate", post(lifecycle::set_status::<1>))
        .route("/users/deactivate", post(lifecycle::set_status::<3>))
        .route("/users/terminate", post(lifecycle::set_status::<5>))
        .route("/users/find_existing", post(lifecycle::find_existing_users))
        .route(
            "/department/{department_id}/user/move",
            post(lifecycle::move_users),
        )
        .route(
            "/users",
            get(listing::page::<Users<V1>>).post(listing::page_by_post::<Users<V1>>),
        )
        .route(
            "/users/v2",
            get(listing::page::<Users<V2>>).post(listing::page_by_post::<Users<V2>>),
        )
        .route(
            "/group/{group_id}",
            get(group::get_group)
                .post(group::update_group)
                .delete(group::delete_group),
        )
        .route("/group/{group_id}/members", post(group::replace_members))
        .route("/groups", get(listing::page::<Groups>))
        .route("/enrollment/delete", post(enrollment::delete_enrollments))
        .route(
            "/enrollment",
            get(listing::whole::<Enrollments>).post(enrollment::enroll_learners),
        )
        .route(
            "/enrollments",
            get(listing::page::<Enrollments>).post(listing::page_by_post::<Enrollments>),
        )
        .route("/content/{content_item_id}", get(content::get_content_item))
        .route("/content", get(listing::whole::<ContentItems>))
        .route(
            "/contents",
            get(listing::page::<ContentItems>).post(listing::page_by_post::<ContentItems>),
        )
        .route(
            "/gamification/points",
            get(listing::whole::<Points>).post(listing::whole_by_post::<Points>),
        )
        .route("/gamification/points/award", post(points::award_points))
        .route(
            "/gamification/points/withdraw",
            post(points::withdraw_points),
        )
        .route("/learners/results", get(listing::page::<CourseResults>))
        .route(
            "/learners/modules/results",
            get(listing::page::<ModuleResults>),
        )
        .route(
            "/content/{content_item_id}/final_statuses",
            get(results::final_statuses),
        )
        .route("/statistics/course", post(results::set_course_status))
        .route(
            "/statistics/module",
            delete(results::reset_module_statistics),
        )
        .route("/task/{task_id}/status", get(results::task_status))
        .route("/webhook/register", post(webhook::register))
        .route("/webhook/settings/change", post(webhook::change_settings))
        .route("/webhook/code/send", post(webhook::send_code))
        .route("/webhook/confirm", post(webhook::confirm))
        .route("/webhook/enable", post(webhook::enable))
        .route("/webhook/disable", post(webhook::disable))
        .route("/webhook/subscribe", post(webhook::subscribe))
        .route("/webhook/unsubscribe", post(webhook::unsubscribe))
        .route(
            "/webhook/subscription/list",
            get(webhook::subscription_list),
        )
        .route("/webhook/subscriber/info", get(webhook::subscriber_info))
        .route("/webhook/subscribers", get(webhook::subscribers))
        .route("/webhook/remove", post(webhook::remove))
        .route(
            "/scim_tokens",
            get(scim_tokens::list_scim_tokens).post(scim_tokens::create_scim_token),
        )
        .route(
            "/scim_tokens/{client_id}",
            delete(scim_tokens::revoke_scim_token),
        );
    let token = Table::default().route(
        "/api/v3/token",
        post(token::issue_token).fallback(fallback::method_not_allowed),
    );
    let document = Table::default().route(
        "/openapi.json",
        get(openapi::serve).fallback(fallback::method_not_allowed),
    );
    let probes = Table::default()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz));
    Routes {
        interface,
        token,
        document,
        probes,
    }
}

/// A router that also lists its templates, so the list cannot miss a route it serves.
#[derive(Default)]
struct Table {
    router: Router<CoreClient>,
    templates: Vec<&'static str>,
}

impl Table {
    fn route(mut self, template: &'static str, methods: MethodRouter<CoreClient>) -> Self {
        self.router = self.router.route(template, methods);
        self.templates.push(template);
        self
    }
}

/// The gateway, bound and ready to serve.
#[derive(Debug)]
pub struct App {
    listener: TcpListener,
    local_addr: SocketAddr,
    router: Router,
    server: HttpServerSettings,
    max_connections: usize,
    metrics: Option<lms_runtime::metrics::MetricsServer>,
}

impl App {
    /// Binds the HTTP listener (port 0 picks a free port) and prepares lazily connecting
    /// channels to the core (or its replicas), so the gateway starts even while the core is
    /// down. Raises the
    /// open-files limit to the hard limit and fits the connection limit inside it.
    pub async fn build(settings: GatewaySettings) -> anyhow::Result<App> {
        let core = CoreClient::connect_lazy(&settings.core_urls, settings.core_timeout())?;
        Self::build_with_core(settings, core).await
    }

    /// As [`App::build`], calling the core through `core` (`lms up` passes an in-process
    /// channel).
    pub async fn build_with_core(
        settings: GatewaySettings,
        core: CoreClient,
    ) -> anyhow::Result<App> {
        anyhow::ensure!(
            settings.server.idle_timeout() > core.timeout(),
            "the idle timeout ({} ms) must be longer than the core timeout ({} ms): a request \
             waiting for the core moves no bytes",
            settings.server.idle_timeout_ms,
            core.timeout().as_millis()
        );
        let max_connections = server::connection_limit(settings.server.max_connections);
        let http_addr = settings.http_addr;
        let listener = TcpListener::bind(http_addr)
            .await
            .with_context(|| format!("binding the HTTP address {http_addr}"))?;
        let local_addr = listener.local_addr()?;
        let metrics = match settings.metrics_addr {
            Some(addr) => Some(lms_runtime::metrics::MetricsServer::bind(addr).await?),
            None => None,
        };
        if lms_runtime::metrics::installed() {
            crate::telemetry::describe_metrics();
        }
        Ok(App {
            listener,
            local_addr,
            router: router_with_public_url(core, settings.public_url.clone()),
            server: settings.server,
            max_connections,
            metrics,
        })
    }

    /// The address the gateway listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where metrics are served, when they are.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
            .as_ref()
            .map(lms_runtime::metrics::MetricsServer::local_addr)
    }

    /// Serves until `shutdown` completes, then stops accepting and lets open requests finish.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        tracing::info!(
            addr = %self.local_addr,
            max_connections = self.max_connections,
            "lms-gateway listening"
        );
        let (metrics_stop, metrics_stopped) = tokio::sync::watch::channel(false);
        let metrics = self.metrics.map(|server| {
            let mut stopped = metrics_stopped;
            tokio::spawn(server.run_until(async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            }))
        });
        server::serve(
            self.listener,
            self.router,
            &self.server,
            self.max_connections,
            shutdown,
        )
        .await;
        let _ = metrics_stop.send(true);
        if let Some(task) = metrics {
            let _ = task.await;
        }
        tracing::info!("lms-gateway stopped");
        Ok(())
    }
}
