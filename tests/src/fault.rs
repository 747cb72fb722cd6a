//! Fault injection: the core and the gateway as separate parts that can fail apart, a load
//! that records every answer, and the checks every fault scenario ends with.
//!
//! - [`SplitStack`]: the gateway on the test's runtime, the core on a runtime of its own that
//!   [`SplitStack::kill_core`] drops at once (every task and socket gone, as with SIGKILL) and
//!   [`SplitStack::restart_core`] starts again on the same port and database (with other
//!   settings: [`SplitStack::restart_core_with`]).
//! - [`Load`]: workers that create departments and read a group as fast as they are answered,
//!   each request bounded by a client timeout, until stopped; [`LoadReport`] holds every answer.
//! - [`LoadReport::assert_answered_without_server_errors`]: every request answered, no 500, no
//!   429, each 503 in the contract's XML error format with `Retry-After`.
//! - [`assert_recovered`]: requests succeed again, all of them, within a bound.
//! - [`assert_nothing_lost`]: every acknowledged write is stored, table by table.
//! - [`TcpLink`]: a proxy between the core and PostgreSQL whose link can be cut and restored,
//!   or black-holed: connections stay open and nothing goes through.

use std::{net::SocketAddr, time::Duration};

use lms_core::{
    app::App as Core,
    db::{self, CreateDatabase},
    entities::{audit_log, department, department_closure},
    rate_limit::RateLimitSettings,
    settings::CoreSettings,
};
use lms_gateway::{App as Gateway, GatewaySettings};
use sea_orm::{ColumnTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _};
use tokio::{sync::watch, task::JoinHandle};
use uuid::Uuid;

use crate::{
    database::{Backend, TestDatabase},
    stack::{Reply, TEST_POLICY, import_world},
    world::{self, acme as ids},
};

/// How long one request may take before the scenario counts it as hung. Above the gateway's
/// deadline (`GATEWAY_CORE_TIMEOUT`), so a late core shows as the gateway's 504, not as this.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// The gateway's deadline for one core call in these scenarios.
const GATEWAY_CORE_TIMEOUT: Duration = Duration::from_secs(10);

/// The core on a runtime of its own, so that it can die alone.
struct CoreRuntime {
    runtime: tokio::runtime::Runtime,
}

/// A gateway in front of a core that can be killed and restarted, over a fresh database
/// holding the world.
pub struct SplitStack {
    pub base_url: String,
    pub database_url: String,
    core_settings: CoreSettings,
    core: Option<CoreRuntime>,
    gateway_stop: watch::Sender<bool>,
    gateway: JoinHandle<anyhow::Result<()>>,
    database: TestDatabase,
}

impl SplitStack {
    /// The world on `backend`; `None` when that backend is not available here.
    pub async fn start(backend: Backend) -> Option<Self> {
        Self::start_with(backend, |url| url.to_owned()).await
    }

    /// As [`SplitStack::start`], the core reaching the database at `core_url(url)` (through
    /// a [`TcpLink`], say) while the test's own connections use the database's own URL.
    pub async fn start_with(
        backend: Backend,
        core_url: impl FnOnce(&str) -> String,
    ) -> Option<Self> {
        Self::start_configured(backend, core_url, |_| {}).await
    }

    /// As [`SplitStack::start_with`], with the core's settings changed by `configure`.
    pub async fn start_configured(
        backend: Backend,
        core_url: impl FnOnce(&str) -> String,
        configure: impl FnOnce(&mut CoreSettings),
    ) -> Option<Self> {
        let database = TestDatabase::create(backend).await?;
        let database_url = database.url.clone();
        {
            let db = db::open(&database_url, CreateDatabase::OnFirstStart)
                .await
                .expect("the test database opens");
            import_world(&db).await;
            db.close().await.expect("the import connection closes");
        }
        let mut core_settings = CoreSettings::for_database(core_url(&database_url));
        core_settings.grpc_addr = SocketAddr::from(([127, 0, 0, 1], 0));
        core_settings.argon2_memory_kib = TEST_POLICY.memory_kib;
        core_settings.argon2_iterations = TEST_POLICY.iterations;
        core_settings.argon2_parallelism = TEST_POLICY.parallelism;
        core_settings.verification_queue_timeout_ms = 30_000;
        // The load is one login's requests as fast as they are answered, far past its limit.
        core_settings.rate_limits = RateLimitSettings::off();
        configure(&mut core_settings);
        let core = start_core(core_settings.clone()).await;
        core_settings.grpc_addr = core.1;
        let gateway = Gateway::build(GatewaySettings {
            http_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            core_urls: vec![format!("http://{}", core.1)],
            core_timeout_ms: GATEWAY_CORE_TIMEOUT.as_millis() as u64,
            metrics_addr: None,
            public_url: None,
            server: Default::default(),
        })
        .await
        .expect("the gateway starts");
        let base_url = format!("http://{}", gateway.local_addr());
        let (gateway_stop, stopped) = watch::channel(false);
        let gateway = tokio::spawn(gateway.run_until(async move {
            let mut stopped = stopped;
            let _ = stopped.wait_for(|stop| *stop).await;
        }));
        Some(Self {
            base_url,
            database_url,
            core_settings,
            core: Some(core.0),
            gateway_stop,
            gateway,
            database,
        })
    }

    pub fn backend(&self) -> Backend {
        self.database.backend()
    }

    /// Kills the core: its runtime is dropped with every task and socket, mid-request.
    pub fn kill_core(&mut self) {
        if let Some(core) = self.core.take() {
            core.runtime.shutdown_background();
        }
    }

    /// Starts the core again on the same port and database.
    pub async fn restart_core(&mut self) {
        self.restart_core_with(|_| {}).await;
    }

    /// As [`SplitStack::restart_core`], the core's settings first changed by `configure` (as an
    /// operator restarts with another flag); they stay for later restarts.
    pub async fn restart_core_with(&mut self, configure: impl FnOnce(&mut CoreSettings)) {
        assert!(self.core.is_none(), "the core is still running");
        configure(&mut self.core_settings);
        let (core, _) = start_core(self.core_settings.clone()).await;
        self.core = Some(core);
    }

    /// A load of `workers` concurrent callers against the gateway.
    pub fn load(&self, workers: usize, name: &str) -> Load {
        Load::start(&self.base_url, workers, name)
    }

    /// A connection pool of the test's own, to check what was stored.
    pub async fn inspect(&self) -> DatabaseConnection {
        self.database.connect().await
    }

    /// Stops the gateway and kills the core.
    pub async fn stop(mut self) {
        let _ = self.gateway_stop.send(true);
        self.kill_core();
        let _ = self.gateway.await;
    }
}

/// Builds the core on a new runtime on a thread of its own (a runtime cannot be started
/// from inside the test's), then serves it there until the runtime is dropped.
async fn start_core(settings: CoreSettings) -> (CoreRuntime, SocketAddr) {
    tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime for the core");
        // The port may still be held by the killed core's sockets for a moment.
        let core = runtime.block_on(async {
            let mut attempts = 0;
            loop {
                match Core::build(&settings).await {
                    Ok(core) => break core,
                    Err(err) if attempts < 50 => {
                        attempts += 1;
                        tracing::debug!(error = %err, "the core does not start yet");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(err) => panic!("the core starts: {err:#}"),
                }
            }
        });
        let addr = core.grpc_addr();
        runtime.spawn(core.run_until(std::future::pending()));
        (CoreRuntime { runtime }, addr)
    })
    .await
    .expect("the core's runtime starts")
}

fn client() -> reqwest::Client {
    crate::stack::http_client_builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .expect("an HTTP client")
}

/// What one request of the load got.
#[derive(Debug, Clone)]
pub struct Answer {
    pub what: &'static str,
    /// The reply, or why there was none (a timeout: the request hung).
    pub reply: Result<Reply, String>,
    /// The id of a department whose creation was acknowledged.
    pub created: Option<Uuid>,
    /// How long the answer took.
    pub elapsed: Duration,
}

impl Answer {
    pub fn succeeded(&self) -> bool {
        matches!(&self.reply, Ok(reply) if reply.status < 300)
    }
}

/// Workers creating departments under the root and reading a group, until stopped.
pub struct Load {
    stop: watch::Sender<bool>,
    workers: Vec<JoinHandle<Vec<Answer>>>,
}

impl Load {
    pub fn start(base_url: &str, workers: usize, name: &str) -> Self {
        let (stop, stopped) = watch::channel(false);
        let http = client();
        let workers = (0..workers)
            .map(|worker| {
                let stopped = stopped.clone();
                let http = http.clone();
                let base_url = base_url.to_owned();
                let name = format!("{name}-{worker}");
                tokio::spawn(async move { work(&http, &base_url, &name, stopped).await })
            })
            .collect();
        Self { stop, workers }
    }

    /// Stops the workers after their current request and gathers every answer.
    pub async fn finish(self) -> LoadReport {
        let _ = self.stop.send(true);
        let mut answers = Vec::new();
        for worker in self.workers {
            answers.extend(worker.await.expect("a load worker"));
        }
        LoadReport { answers }
    }
}

async fn work(
    http: &reqwest::Client,
    base_url: &str,
    name: &str,
    stopped: watch::Receiver<bool>,
) -> Vec<Answer> {
    let mut answers = Vec::new();
    let mut n = 0u64;
    while !*stopped.borrow() {
        n += 1;
        let answer = request_once(http, base_url, name, n).await;
        let failed = !answer.succeeded();
        answers.push(answer);
        if failed {
            // A failing service is not hammered in a tight loop by one caller.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    answers
}

/// The `n`th request of a worker: odd ones create a department under the root, even ones
/// read a group, both as the world's owner.
async fn request_once(http: &reqwest::Client, base_url: &str, name: &str, n: u64) -> Answer {
    let login = world::OWNER;
    let create = n % 2 == 1;
    let request = if create {
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><request><name>{name}-{n}</name>\
             <parentDepartmentId>{}</parentDepartmentId></request>",
            ids::ROOT
        );
        http.post(format!("{base_url}/department"))
            .header("Content-Type", "application/xml")
            .body(body)
    } else {
        http.get(format!("{base_url}/group/{}", ids::INTERNS))
    };
    let started = tokio::time::Instant::now();
    let sent = request
        .header("X-Auth-Account-Url", login.account_url)
        .header("X-Auth-Email", login.email)
        .header("X-Auth-Password", world::PASSWORD)
        .send()
        .await;
    let reply = match sent {
        Ok(response) => Ok(Reply::from(response).await),
        Err(err) => Err(format!("{err:?}")),
    };
    let created = match &reply {
        Ok(reply) if create && reply.status == 201 => {
            let id = crate::xml::text_of(&reply.body, "response").unwrap_or_default();
            Some(Uuid::parse_str(&id).expect("a created department's id"))
        }
        _ => None,
    };
    Answer {
        what: if create { "create" } else { "read" },
        reply,
        created,
        elapsed: started.elapsed(),
    }
}

/// Every answer a load got.
#[derive(Debug)]
pub struct LoadReport {
    pub answers: Vec<Answer>,
}

impl LoadReport {
    /// How many requests got each status ("none" for no answer).
    pub fn summary(&self) -> String {
        let mut counts = std::collections::BTreeMap::<String, usize>::new();
        for answer in &self.answers {
            let key = match &answer.reply {
                Ok(reply) => format!("{} {}", answer.what, reply.status),
                Err(_) => format!("{} none", answer.what),
            };
            *counts.entry(key).or_default() += 1;
        }
        format!("{counts:?}")
    }

    /// The departments whose creation was acknowledged.
    pub fn acknowledged(&self) -> Vec<Uuid> {
        self.answers.iter().filter_map(|a| a.created).collect()
    }

    /// The longest wait for an answer.
    pub fn slowest(&self) -> Duration {
        self.answers
            .iter()
            .map(|a| a.elapsed)
            .max()
            .unwrap_or_default()
    }

    /// How many requests succeeded.
    pub fn succeeded(&self) -> usize {
        self.answers.iter().filter(|a| a.succeeded()).count()
    }

    /// Every request was answered (none hung past [`REQUEST_TIMEOUT`] or lost its connection
    /// to the gateway); none got a 500 or a 429; each 503 is the contract's XML error with a
    /// `Retry-After`. Other statuses than 200, 201 and 503 are failures too.
    #[track_caller]
    pub fn assert_answered_without_server_errors(&self) {
        for answer in &self.answers {
            let reply = match &answer.reply {
                Ok(reply) => reply,
                Err(err) => panic!(
                    "a {} was not answered: {err} ({})",
                    answer.what,
                    self.summary()
                ),
            };
            match reply.status {
                200 | 201 => {}
                503 => {
                    reply.assert_error(503, "unavailable");
                    assert!(
                        reply
                            .header("retry-after")
                            .is_some_and(|s| s.parse::<u64>().is_ok()),
                        "a 503 says when to retry: {:?}",
                        reply.headers
                    );
                    assert!(
                        reply.header("x-request-id").is_some(),
                        "a 503 carries the request id"
                    );
                }
                status => panic!(
                    "a {} got {status}: {} ({})",
                    answer.what,
                    reply.body,
                    self.summary()
                ),
            }
        }
    }

    /// At least one request was answered 503: the outage was seen, not slept through.
    #[track_caller]
    pub fn assert_some_unavailable(&self, why: &str) {
        assert!(
            self.answers
                .iter()
                .any(|a| a.reply.as_ref().is_ok_and(|r| r.status == 503)),
            "{why}: {}",
            self.summary()
        );
    }
}

/// Requests succeed again: the first within `within`, and then every request of `workers`
/// concurrent callers making `requests` requests each. Returns the departments they created.
pub async fn assert_recovered(
    base_url: &str,
    within: Duration,
    workers: usize,
    requests: u64,
) -> Vec<Uuid> {
    let http = client();
    let deadline = tokio::time::Instant::now() + within;
    let mut created = Vec::new();
    let mut n = 0;
    loop {
        n += 1;
        let answer = request_once(&http, base_url, "probe", n).await;
        LoadReport {
            answers: vec![answer.clone()],
        }
        .assert_answered_without_server_errors();
        created.extend(answer.created);
        if answer.succeeded() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no request succeeded within {within:?} after the fault ended"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let tasks: Vec<_> = (0..workers)
        .map(|worker| {
            let http = http.clone();
            let base_url = base_url.to_owned();
            tokio::spawn(async move {
                let mut answers = Vec::new();
                for n in 1..=requests {
                    let name = format!("after-{worker}");
                    answers.push(request_once(&http, &base_url, &name, n).await);
                }
                answers
            })
        })
        .collect();
    for task in tasks {
        for answer in task.await.expect("a recovery worker") {
            assert!(
                answer.succeeded(),
                "after recovery, a {} failed: {:?}",
                answer.what,
                answer.reply.as_ref().map(|r| (r.status, r.body.clone()))
            );
            created.extend(answer.created);
        }
    }
    created
}

/// Every acknowledged department is stored, table by table: its row in `departments`, its
/// rows in `department_closure` (itself and the root above it), and its creation in
/// `audit_log`.
pub async fn assert_nothing_lost(db: &DatabaseConnection, acknowledged: &[Uuid]) {
    let root = Uuid::parse_str(ids::ROOT).expect("the root's id");
    for chunk in acknowledged.chunks(500) {
        let ids: Vec<Uuid> = chunk.to_vec();
        let stored = department::Entity::find()
            .filter(department::Column::Id.is_in(ids.clone()))
            .all(db)
            .await
            .expect("departments read");
        assert_eq!(
            stored.len(),
            ids.len(),
            "departments: an acknowledged creation is missing"
        );
        assert!(stored.iter().all(|d| d.parent_id == Some(root)));
        let closure = department_closure::Entity::find()
            .filter(department_closure::Column::DescendantId.is_in(ids.clone()))
            .all(db)
            .await
            .expect("closure read");
        for id in &ids {
            let mut ancestors: Vec<Uuid> = closure
                .iter()
                .filter(|row| row.descendant_id == *id)
                .map(|row| row.ancestor_id)
                .collect();
            ancestors.sort();
            let mut expected = vec![*id, root];
            expected.sort();
            assert_eq!(ancestors, expected, "department_closure rows of {id}");
        }
        let audited = audit_log::Entity::find()
            .filter(audit_log::Column::EntityId.is_in(ids.clone()))
            .all(db)
            .await
            .expect("audit log read");
        for id in &ids {
            assert!(
                audited.iter().any(|row| row.entity_id == *id),
                "audit_log: the creation of {id} is missing"
            );
        }
    }
}

/// A loopback TCP proxy in front of a server, whose link can be cut: [`TcpLink::cut`] closes
/// every connection through it and refuses new ones (the port stops listening), as when the
/// server goes down or the network fails; [`TcpLink::restore`] listens again on the same port.
/// [`TcpLink::black_hole`] is the other way a network fails: nothing is refused or closed,
/// new connections are accepted, and no byte goes through either way until
/// [`TcpLink::end_black_hole`], when what was held is delivered, as TCP retransmits it.
pub struct TcpLink {
    pub addr: SocketAddr,
    target: SocketAddr,
    serving: Option<JoinHandle<()>>,
    forwarding: watch::Sender<bool>,
}

impl TcpLink {
    pub async fn to(target: SocketAddr) -> Self {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("a port for the link");
        let addr = listener.local_addr().expect("the link's address");
        let forwarding = watch::Sender::new(true);
        let serving = Some(tokio::spawn(relay_all(
            listener,
            target,
            forwarding.subscribe(),
        )));
        Self {
            addr,
            target,
            serving,
            forwarding,
        }
    }

    /// Stops every byte, both ways, on every connection, without closing any.
    pub fn black_hole(&self) {
        self.forwarding.send_replace(false);
    }

    /// Delivers what was held and forwards again.
    pub fn end_black_hole(&self) {
        self.forwarding.send_replace(true);
    }

    /// Closes every connection and stops listening.
    pub fn cut(&mut self) {
        if let Some(serving) = self.serving.take() {
            serving.abort();
        }
    }

    /// Listens again on the same port.
    pub async fn restore(&mut self) {
        assert!(self.serving.is_none(), "the link is up");
        let listener = tokio::net::TcpListener::bind(self.addr)
            .await
            .expect("the link's port is free again");
        self.serving = Some(tokio::spawn(relay_all(
            listener,
            self.target,
            self.forwarding.subscribe(),
        )));
    }
}

impl Drop for TcpLink {
    fn drop(&mut self) {
        self.cut();
    }
}

/// Accepts and relays until aborted; aborting drops every relay with it.
async fn relay_all(
    listener: tokio::net::TcpListener,
    target: SocketAddr,
    forwarding: watch::Receiver<bool>,
) {
    let mut relays = tokio::task::JoinSet::new();
    loop {
        let Ok((inbound, _)) = listener.accept().await else {
            continue;
        };
        let mut forwarding = forwarding.clone();
        relays.spawn(async move {
            if forwarding.wait_for(|on| *on).await.is_err() {
                return;
            }
            let Ok(outbound) = tokio::net::TcpStream::connect(target).await else {
                return;
            };
            let (from_client, to_client) = inbound.into_split();
            let (from_server, to_server) = outbound.into_split();
            tokio::join!(
                pump(from_client, to_server, forwarding.clone()),
                pump(from_server, to_client, forwarding),
            );
        });
        while relays.try_join_next().is_some() {}
    }
}

/// Copies one way while `forwarding`; a chunk read as the black hole begins is held until
/// it ends.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut forwarding: watch::Receiver<bool>,
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut buffer = vec![0; 16 * 1024];
    loop {
        if forwarding.wait_for(|on| *on).await.is_err() {
            return;
        }
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => {
                let _ = to.shutdown().await;
                return;
            }
            Ok(read) => read,
        };
        if forwarding.wait_for(|on| *on).await.is_err()
            || to.write_all(&buffer[..read]).await.is_err()
        {
            return;
        }
    }
}

/// `url` with its `host:port` replaced by `addr` (for a `scheme://user@host:port/db` URL).
pub fn url_through(url: &str, addr: SocketAddr) -> String {
    let authority_start = url
        .rfind('@')
        .map(|at| at + 1)
        .unwrap_or_else(|| url.find("://").map(|s| s + 3).expect("a URL with a scheme"));
    let authority_end = url[authority_start..]
        .find('/')
        .map_or(url.len(), |end| authority_start + end);
    format!("{}{addr}{}", &url[..authority_start], &url[authority_end..])
}

/// The `host:port` of a database URL, resolved.
pub fn server_of(url: &str) -> SocketAddr {
    use std::net::ToSocketAddrs as _;
    let authority_start = url
        .rfind('@')
        .map(|at| at + 1)
        .unwrap_or_else(|| url.find("://").map(|s| s + 3).expect("a URL with a scheme"));
    let rest = &url[authority_start..];
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let authority = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:5432")
    };
    authority
        .to_socket_addrs()
        .expect("the database server's address")
        .next()
        .expect("an address")
}
