//! The hot path: what one warm `GET /group/{id}` costs in each layer of the stack, against the
//! least any Rust HTTP service costs on this machine.
//!
//! Run: `cargo bench -p lms-tests --bench hot_path` (see `docs/benchmarks.md`, "Hot path").
//!
//! In one run, alternating in rounds so that a change of the machine's background load hits
//! every layer alike, for the demo account's group and for a 100-member group:
//! - the ceiling: a static axum handler answering the same bytes;
//! - the core's service function called directly (authentication included);
//! - the same through the gRPC service's method, in process (no codec, no transport);
//! - through a tonic client calling the core's services in process, as `lms up` does (the
//!   `lms.v1` codec, no transport);
//! - through a tonic client over loopback TCP;
//! - the full XML request through the gateway, as `lms up` runs it (one process), and the
//!   same through a second `lms up` stack whose rate limits are off, so the two shares of the
//!   ceiling give what the rate limiting costs;
//! - the same with core and gateway as two separate processes (this executable started
//!   twice more, connected over loopback TCP).
//!
//! Then latency: an open-loop load of a constant 1,000 requests/s (each request measured from
//! the moment the schedule wanted it sent, so queueing is not hidden), and one connection
//! sending requests one after another, counting stalls over 10 ms; each after a second of
//! requests unmeasured, so it measures the steady state (a login unused for a minute is
//! verified again first, by contract).
//!
//! Rate limits are on everywhere but in that second stack, set far above what the load sends
//! ([`BENCH_RATE_LIMITS`]), so every request is checked and none refused.
//!
//! The services run on a 2-worker runtime as `lms up` runs them (with its logging: one line per
//! request, to this process's stderr, which the run sends to a log file); the load generator is
//! a minimal HTTP/1.1 keep-alive client on a separate 1-thread runtime. CPU per request is
//! the process's CPU time (from /proc) less the load generator's thread, or the two child
//! processes' CPU time.
//!
//! Knobs (environment): `LMS_BENCH_BACKEND=postgres` (with `LMS_TEST_POSTGRES_URL`),
//! `LMS_BENCH_SECONDS` (per layer and round, default 2), `LMS_BENCH_ROUNDS` (default 3),
//! `LMS_BENCH_CONNECTIONS` (default 16), `LMS_BENCH_LATENCY_SECONDS` (open loop, default 20),
//! `LMS_BENCH_STALL_SECONDS` (one connection, default 20), `LMS_BENCH_REPORT=PATH`,
//! `LMS_BENCH_LOG=PATH` (the services' log; default a file in the temporary folder),
//! `LMS_BENCH_ONLY=lms-up,lms-up-unlimited,…` (only those layers, for a profiler; the names are
//! [`Layer::short_name`]; no latency runs), `LMS_BENCH_LATENCY_ONLY=ceiling,lms-up,two-processes`
//! (only those latency runs).

use std::{
    fmt::Write as _,
    io::{BufRead as _, BufReader},
    net::SocketAddr,
    process::{Child, Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use lms::{Stack, StackSettings, demo};
use lms_core::{
    auth::{Credentials, PasswordHasher, PasswordPolicy},
    domain::ids::ResourceRef,
    grpc::{SharedState, admin::AdminApi},
    in_process::InProcessCore,
    rate_limit::RateLimitSettings,
    service::groups,
    settings::CoreSettings,
};
use lms_proto::v1::{
    self as pb, admin_service_client::AdminServiceClient, admin_service_server::AdminService as _,
};
use lms_testkit::TestDatabase;
use lms_tests::{
    Backend,
    http_load::{self, STALL},
    large_world::{Ids, RoleLogin, WORLD_PASSWORD, WorldShape, write_world},
    machine::{Steal, cpu_of_stat, process_tree_cpu},
};
use tokio::runtime::Runtime;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Environment variable naming the role of a child process of the two-process layer.
const ROLE: &str = "LMS_HOT_PATH_ROLE";
/// The name of the load generator's thread, left out of the services' CPU time.
const LOAD_THREAD: &str = "hot-path-load";
/// Requests per second of the open-loop latency run.
const OPEN_LOOP_RATE: u64 = 1_000;

/// Rate limits far above the load (a billion requests a second, and at once): every request
/// is taken from its caller's and its account's buckets, and none is refused.
const BENCH_RATE_LIMITS: RateLimitSettings = RateLimitSettings {
    caller_rps: 1_000_000_000,
    caller_burst: 1_000_000_000,
    account_rps: 1_000_000_000,
    account_burst: 1_000_000_000,
};

struct Config {
    backend: Backend,
    seconds: f64,
    rounds: usize,
    connections: usize,
    latency_seconds: f64,
    stall_seconds: f64,
    /// Layers to run (`LMS_BENCH_ONLY`, comma-separated short names); all when unset.
    only: Option<Vec<Layer>>,
}

impl Config {
    fn from_env() -> Self {
        let number = |name: &str, default: f64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(default)
        };
        Self {
            backend: match std::env::var("LMS_BENCH_BACKEND").as_deref() {
                Ok("postgres") => Backend::Postgres,
                _ => Backend::Sqlite,
            },
            seconds: number("LMS_BENCH_SECONDS", 2.0).max(0.2),
            rounds: number("LMS_BENCH_ROUNDS", 3.0).max(1.0) as usize,
            connections: number("LMS_BENCH_CONNECTIONS", 16.0).max(1.0) as usize,
            latency_seconds: number("LMS_BENCH_LATENCY_SECONDS", 20.0).max(1.0),
            stall_seconds: number("LMS_BENCH_STALL_SECONDS", 20.0).max(1.0),
            only: std::env::var("LMS_BENCH_ONLY").ok().map(|names| {
                names
                    .split(',')
                    .map(|name| {
                        Layer::ALL
                            .into_iter()
                            .find(|layer| layer.short_name() == name.trim())
                            .unwrap_or_else(|| {
                                let known: Vec<&str> =
                                    Layer::ALL.iter().map(|l| l.short_name()).collect();
                                panic!(
                                    "LMS_BENCH_ONLY: no layer {name:?}; layers: {}",
                                    known.join(", ")
                                )
                            })
                    })
                    .collect()
            }),
        }
    }
}

/// One group read, as each layer needs it.
#[derive(Clone)]
struct Target {
    label: &'static str,
    account_url: String,
    email: String,
    password: String,
    group_id: String,
}

impl Target {
    fn credentials(&self) -> Credentials {
        Credentials {
            account_url: self.account_url.clone(),
            email: self.email.clone(),
            password: self.password.clone().into(),
        }
    }

    fn grpc_request(&self) -> tonic::Request<pb::GetGroupRequest> {
        let mut request = tonic::Request::new(pb::GetGroupRequest {
            group_id: self.group_id.clone(),
        });
        let metadata = request.metadata_mut();
        for (key, value) in [
            (lms_proto::metadata::ACCOUNT_URL, &self.account_url),
            (lms_proto::metadata::EMAIL, &self.email),
            (lms_proto::metadata::PASSWORD, &self.password),
        ] {
            metadata.insert(key, value.parse().expect("metadata value"));
        }
        request
    }

    /// The HTTP/1.1 request bytes the load generator sends, keep-alive.
    fn http_request(&self) -> Arc<[u8]> {
        http_load::get_request(
            &format!("/group/{}", self.group_id),
            &self.account_url,
            &self.email,
            &self.password,
        )
    }
}

// ---------------------------------------------------------------------------------------
// CPU time

/// CPU time of the services: this process less the load generator, plus the given children.
fn service_cpu(children: &[u32]) -> Duration {
    let read = |path: String| std::fs::read_to_string(path).unwrap_or_default();
    let mut cpu = cpu_of_stat(&read("/proc/self/stat".into()));
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            let path = task.path();
            let name = read(path.join("comm").display().to_string());
            if name.trim() == LOAD_THREAD {
                cpu =
                    cpu.saturating_sub(cpu_of_stat(&read(path.join("stat").display().to_string())));
            }
        }
    }
    for &pid in children {
        cpu += process_tree_cpu(pid);
    }
    cpu
}

// ---------------------------------------------------------------------------------------
// In-process layers, driven from tasks on the services' runtime

/// Runs `tasks` loops of `call` for `seconds`; calls completed.
async fn in_process_loop<F, Fut>(tasks: usize, seconds: f64, call: F) -> u64
where
    F: Fn() -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let call = call.clone();
            tokio::spawn(async move {
                let mut n = 0;
                while Instant::now() < deadline {
                    call().await;
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut total = 0;
    for handle in handles {
        total += handle.await.expect("call task");
    }
    total
}

// ---------------------------------------------------------------------------------------
// The layers

#[derive(Clone, Copy, PartialEq, Eq)]
enum Layer {
    Ceiling,
    ServiceFn,
    GrpcMethod,
    GrpcInProcess,
    GrpcTcp,
    LmsUp,
    LmsUpUnlimited,
    LmsUpOverTcp,
    TwoProcesses,
}

impl Layer {
    const ALL: [Layer; 9] = [
        Layer::Ceiling,
        Layer::ServiceFn,
        Layer::GrpcMethod,
        Layer::GrpcInProcess,
        Layer::GrpcTcp,
        Layer::LmsUp,
        Layer::LmsUpUnlimited,
        Layer::LmsUpOverTcp,
        Layer::TwoProcesses,
    ];

    /// The name `LMS_BENCH_ONLY` knows the layer by.
    fn short_name(self) -> &'static str {
        match self {
            Layer::Ceiling => "ceiling",
            Layer::ServiceFn => "service-fn",
            Layer::GrpcMethod => "grpc-method",
            Layer::GrpcInProcess => "grpc-in-process",
            Layer::GrpcTcp => "grpc-tcp",
            Layer::LmsUp => "lms-up",
            Layer::LmsUpUnlimited => "lms-up-unlimited",
            Layer::LmsUpOverTcp => "lms-up-tcp",
            Layer::TwoProcesses => "two-processes",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Layer::Ceiling => "ceiling: static axum handler, same bytes (HTTP)",
            Layer::ServiceFn => "core service fn direct (authenticate + groups::get_group)",
            Layer::GrpcMethod => "gRPC service method in process (AdminApi::get_group)",
            Layer::GrpcInProcess => "gRPC client calling the core in process, as `lms up` does",
            Layer::GrpcTcp => "gRPC client over loopback TCP",
            Layer::LmsUp => "full XML through the gateway, `lms up` (one process)",
            Layer::LmsUpUnlimited => "the same, rate limits off (a second `lms up` stack)",
            Layer::LmsUpOverTcp => {
                "full XML, one process, gateway to core over loopback TCP (`lms up` before)"
            }
            Layer::TwoProcesses => "full XML, core and gateway as two processes",
        }
    }
}

#[derive(Default, Clone, Copy)]
struct Measured {
    requests: u64,
    elapsed: Duration,
    cpu: Duration,
}

impl Measured {
    fn add(&mut self, other: Measured) {
        self.requests += other.requests;
        self.elapsed += other.elapsed;
        self.cpu += other.cpu;
    }

    fn per_second(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }

    fn cpu_us(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.requests.max(1) as f64
    }
}

/// Everything the layers run against.
struct Bench {
    server: Runtime,
    load: Runtime,
    state: SharedState,
    in_process: AdminServiceClient<InProcessCore>,
    tcp: AdminServiceClient<tonic::transport::Channel>,
    lms_up: SocketAddr,
    lms_up_unlimited: SocketAddr,
    lms_up_over_tcp: SocketAddr,
    two_processes: SocketAddr,
    children: Vec<Child>,
    ceilings: Vec<SocketAddr>,
    connections: usize,
}

impl Bench {
    fn measure(&self, layer: Layer, target: usize, tgt: &Target, seconds: f64) -> Measured {
        let children: Vec<u32> = if layer == Layer::TwoProcesses {
            self.children.iter().map(Child::id).collect()
        } else {
            vec![]
        };
        let cpu_before = service_cpu(&children);
        let started = Instant::now();
        let tasks = self.connections;
        let requests = match layer {
            Layer::Ceiling => self.http(self.ceilings[target], tgt, seconds),
            Layer::LmsUp => self.http(self.lms_up, tgt, seconds),
            Layer::LmsUpUnlimited => self.http(self.lms_up_unlimited, tgt, seconds),
            Layer::LmsUpOverTcp => self.http(self.lms_up_over_tcp, tgt, seconds),
            Layer::TwoProcesses => self.http(self.two_processes, tgt, seconds),
            Layer::ServiceFn => {
                let (state, credentials) = (self.state.clone(), Arc::new(tgt.credentials()));
                let group = Arc::new(ResourceRef::parse(tgt.group_id.clone()));
                self.server
                    .block_on(in_process_loop(tasks, seconds, move || {
                        let (state, credentials, group) =
                            (state.clone(), credentials.clone(), group.clone());
                        async move {
                            let caller = state
                                .auth
                                .authenticate(&credentials, None)
                                .await
                                .expect("authenticated");
                            groups::get_group(&state.reads, &caller, &group)
                                .await
                                .expect("group read");
                        }
                    }))
            }
            Layer::GrpcMethod => {
                let api = Arc::new(AdminApi::new(self.state.clone()));
                let tgt = tgt.clone();
                self.server
                    .block_on(in_process_loop(tasks, seconds, move || {
                        let (api, request) = (api.clone(), tgt.grpc_request());
                        async move {
                            api.get_group(request).await.expect("group read");
                        }
                    }))
            }
            Layer::GrpcInProcess => {
                let (client, tgt) = (self.in_process.clone(), tgt.clone());
                self.server
                    .block_on(in_process_loop(tasks, seconds, move || {
                        let (mut client, request) = (client.clone(), tgt.grpc_request());
                        async move {
                            client.get_group(request).await.expect("group read");
                        }
                    }))
            }
            Layer::GrpcTcp => {
                let client = self.tcp.clone();
                let tgt = tgt.clone();
                self.server
                    .block_on(in_process_loop(tasks, seconds, move || {
                        let (mut client, request) = (client.clone(), tgt.grpc_request());
                        async move {
                            client.get_group(request).await.expect("group read");
                        }
                    }))
            }
        };
        Measured {
            requests,
            elapsed: started.elapsed(),
            cpu: service_cpu(&children).saturating_sub(cpu_before),
        }
    }

    fn http(&self, addr: SocketAddr, target: &Target, seconds: f64) -> u64 {
        self.load.block_on(http_load::closed_loop(
            addr,
            target.http_request(),
            self.connections,
            seconds,
        ))
    }
}

// ---------------------------------------------------------------------------------------
// Set-up

fn runtime(name: &'static str, workers: usize) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Imports the demo account and a 1,000-user account (its plain group has 100 members).
async fn import_accounts(state: &SharedState) -> Vec<Target> {
    let hasher = PasswordHasher::new(PasswordPolicy::default()).expect("policy");
    let demo = demo::ensure_demo(&state.db, &hasher)
        .await
        .expect("demo import")
        .expect("the demo account");
    let shape = WorldShape::with_users(1_000);
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("world.json");
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("file"));
        let hash = hasher.hash(WORLD_PASSWORD).expect("hash");
        write_world(&shape, &hash, &mut file).expect("world document");
    }
    lms_core::import::import_file(&state.db, &path, &hasher)
        .await
        .expect("world import");
    let ids: Ids = shape.ids();
    vec![
        Target {
            label: "demo group (2 members)",
            account_url: demo.account_url.clone(),
            email: demo.owner_login.clone(),
            password: demo.password.clone(),
            group_id: demo.plain_group_id.to_string(),
        },
        Target {
            label: "100-member group",
            account_url: shape.account_url.clone(),
            email: RoleLogin::Owner.email(),
            password: WORLD_PASSWORD.to_owned(),
            group_id: ids.plain_group().to_string(),
        },
    ]
}

/// Starts this executable again in `role`, and reads the address it prints.
fn spawn_role(role: &str, envs: &[(&str, String)]) -> (Child, SocketAddr) {
    let mut command = Command::new(std::env::current_exe().expect("this executable"));
    command
        .env(ROLE, role)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (key, value) in envs {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("child process");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("address line");
    let addr = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{role} printed {line:?}"));
    (child, addr)
}

/// A child process: the core or the gateway alone, as their own binaries run them.
fn run_role(role: &str) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let service = if role == "lms-core" {
            "lms-core"
        } else {
            "lms-gateway"
        };
        let _telemetry = lms_runtime::Telemetry::init(
            lms_runtime::LogFormat::Text,
            &[lms_runtime::TracedService::whole(service)],
        )
        .expect("telemetry");
        let any_port = SocketAddr::from(([127, 0, 0, 1], 0));
        let forever = std::future::pending::<()>();
        if role == "lms-core" {
            let mut settings =
                CoreSettings::for_database(std::env::var("DATABASE_URL").expect("DATABASE_URL"));
            settings.grpc_addr = any_port;
            settings.rate_limits = BENCH_RATE_LIMITS;
            let core = lms_core::app::App::build(&settings).await.expect("core");
            println!("{}", core.grpc_addr());
            core.run_until(forever).await.expect("core serves");
        } else {
            let gateway = lms_gateway::App::build(lms_gateway::GatewaySettings {
                http_addr: any_port,
                core_urls: vec![std::env::var("LMS_CORE_URL").expect("LMS_CORE_URL")],
                core_timeout_ms: lms_gateway::DEFAULT_CORE_TIMEOUT_MS,
                metrics_addr: None,
                public_url: None,
                server: Default::default(),
            })
            .await
            .expect("gateway");
            println!("{}", gateway.local_addr());
            gateway.run_until(forever).await.expect("gateway serves");
        }
    });
}

/// The static ceiling: every request answered with `body`.
async fn serve_static(body: bytes::Bytes) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let app = axum::Router::new().fallback(move || {
        let body = body.clone();
        async move { ([("content-type", "application/xml; charset=utf-8")], body) }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

async fn fetch(addr: SocketAddr, target: &Target) -> bytes::Bytes {
    let response = reqwest::Client::new()
        .get(format!("http://{addr}/group/{}", target.group_id))
        .header("X-Auth-Account-Url", &target.account_url)
        .header("X-Auth-Email", &target.email)
        .header("X-Auth-Password", &target.password)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    response.bytes().await.expect("body")
}

fn main() {
    if let Ok(role) = std::env::var(ROLE) {
        run_role(&role);
        return;
    }
    // The services log one line per request, as `lms up` does: to a file, not the terminal.
    if std::env::var_os("LMS_HOT_PATH_LOGGING").is_none() {
        let log = std::env::var("LMS_BENCH_LOG").unwrap_or_else(|_| {
            std::env::temp_dir()
                .join("lms-hot-path.log")
                .display()
                .to_string()
        });
        let file = std::fs::File::create(&log).expect("log file");
        println!("services' log: {log}");
        let status = Command::new(std::env::current_exe().expect("this executable"))
            .args(std::env::args_os().skip(1))
            .env("LMS_HOT_PATH_LOGGING", "1")
            .stderr(file)
            .status()
            .expect("benchmark process");
        if !status.success() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            for line in tail.iter().rev() {
                eprintln!("{line}");
            }
            std::process::exit(status.code().unwrap_or(1));
        }
        return;
    }
    run();
}

fn run() {
    let config = Config::from_env();
    let server = runtime("server", 2);
    let load = runtime(LOAD_THREAD, 1);
    let _telemetry = server.block_on(async {
        lms_runtime::Telemetry::init(
            lms_runtime::LogFormat::Text,
            &[lms_runtime::TracedService::whole("lms")],
        )
        .expect("telemetry")
    });
    println!(
        "hot path benchmark: {:?}, {} s per layer in {} rounds, {} connections",
        config.backend, config.seconds, config.rounds, config.connections
    );

    let database = server
        .block_on(TestDatabase::create(config.backend))
        .expect("the backend is available (LMS_TEST_POSTGRES_URL for LMS_BENCH_BACKEND=postgres)");
    let mut settings = StackSettings::for_database(database.url.clone()).on_free_ports();
    settings.core.rate_limits = BENCH_RATE_LIMITS;
    let stack = server.block_on(Stack::build(&settings)).expect("stack");
    let state = stack.state();
    let targets = server.block_on(import_accounts(&state));
    let in_process = stack.core_in_process();
    let (grpc_addr, lms_up) = (stack.grpc_addr(), stack.http_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let stack_task = server.spawn(stack.run_until(async {
        let _ = stopped.await;
    }));
    // The same as a second stack on the same database, its rate limits off.
    let (stop_unlimited, unlimited_stopped) = tokio::sync::oneshot::channel::<()>();
    let (lms_up_unlimited, unlimited_task) = server.block_on(async {
        let mut settings = settings.clone();
        settings.core.rate_limits = RateLimitSettings::off();
        let stack = Stack::build(&settings)
            .await
            .expect("stack without rate limits");
        let addr = stack.http_addr();
        let task = tokio::spawn(stack.run_until(async {
            let _ = unlimited_stopped.await;
        }));
        (addr, task)
    });

    // A second gateway in this process, calling the same core over loopback TCP: how `lms up`
    // connected them before they shared the process.
    let lms_up_over_tcp = server.block_on(async {
        let gateway = lms_gateway::App::build(lms_gateway::GatewaySettings {
            http_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            core_urls: vec![format!("http://{grpc_addr}")],
            core_timeout_ms: lms_gateway::DEFAULT_CORE_TIMEOUT_MS,
            metrics_addr: None,
            public_url: None,
            server: Default::default(),
        })
        .await
        .expect("gateway");
        let addr = gateway.local_addr();
        tokio::spawn(gateway.run_until(std::future::pending()));
        addr
    });
    let (core_child, core_addr) = spawn_role("lms-core", &[("DATABASE_URL", database.url.clone())]);
    let (gateway_child, two_processes) = spawn_role(
        "lms-gateway",
        &[("LMS_CORE_URL", format!("http://{core_addr}"))],
    );

    let tcp = server.block_on(async {
        tonic::transport::Endpoint::from_shared(format!("http://{grpc_addr}"))
            .expect("endpoint")
            .tcp_nodelay(true)
            .connect()
            .await
            .expect("core reachable")
    });
    let ceilings = server.block_on(async {
        let mut ceilings = Vec::new();
        for target in &targets {
            let body = fetch(lms_up, target).await;
            assert_eq!(body, fetch(two_processes, target).await);
            assert_eq!(body, fetch(lms_up_unlimited, target).await);
            ceilings.push(serve_static(body).await);
        }
        ceilings
    });
    let bench = Bench {
        server,
        load,
        state,
        in_process: AdminServiceClient::new(in_process),
        tcp: AdminServiceClient::new(tcp),
        lms_up,
        lms_up_unlimited,
        lms_up_over_tcp,
        two_processes,
        children: vec![core_child, gateway_child],
        ceilings,
        connections: config.connections,
    };

    let layers: Vec<Layer> = config.only.clone().unwrap_or_else(|| Layer::ALL.to_vec());
    // Warm every path (credentials cache, pools, connections) before measuring.
    for (index, target) in targets.iter().enumerate() {
        for &layer in &layers {
            bench.measure(layer, index, target, 0.3);
        }
    }
    let mut results = vec![vec![Measured::default(); layers.len()]; targets.len()];
    let steal = Steal::now();
    for round in 1..=config.rounds {
        for (index, target) in targets.iter().enumerate() {
            for (l, &layer) in layers.iter().enumerate() {
                let measured = bench.measure(layer, index, target, config.seconds);
                results[index][l].add(measured);
            }
        }
        println!("round {round} of {} done", config.rounds);
    }

    let mut report = String::new();
    let _ = writeln!(report, "Machine: {}", lms_tests::machine::describe());
    let _ = writeln!(
        report,
        "Settings: {:?}, {} s per layer in each of {} alternating rounds, {} connections (or \
         concurrent calls in process)\n",
        config.backend, config.seconds, config.rounds, config.connections
    );
    let _ = writeln!(
        report,
        "Stolen by the hypervisor during these rounds: {:.1} % of the machine's CPU time\n",
        steal.percent_since()
    );
    for (index, target) in targets.iter().enumerate() {
        let _ = writeln!(report, "`GET /group/{{id}}`, {}:\n", target.label);
        let _ = writeln!(
            report,
            "| layer | requests/s | share of ceiling | CPU µs/request |"
        );
        let _ = writeln!(report, "|---|---:|---:|---:|");
        let ceiling = layers
            .iter()
            .position(|&l| l == Layer::Ceiling)
            .map(|l| results[index][l].per_second());
        for (l, &layer) in layers.iter().enumerate() {
            let measured = results[index][l];
            let share = ceiling.map_or_else(
                || "–".to_owned(),
                |c| format!("{:.1} %", 100.0 * measured.per_second() / c),
            );
            let _ = writeln!(
                report,
                "| {} | {:.0} | {share} | {:.1} |",
                layer.name(),
                measured.per_second(),
                measured.cpu_us()
            );
        }
        let share = |layer| {
            let at = |wanted| layers.iter().position(|&l| l == wanted);
            Some(
                results[index][at(layer)?].per_second()
                    / results[index][at(Layer::Ceiling)?].per_second(),
            )
        };
        if let (Some(on), Some(off)) = (share(Layer::LmsUp), share(Layer::LmsUpUnlimited)) {
            let _ = writeln!(
                report,
                "Rate limiting, {}: `lms up` {:.1} % of the ceiling with it on, {:.1} % off; \
                 on / off = {:.3} ({:+.1} %)\n",
                target.label,
                100.0 * on,
                100.0 * off,
                on / off,
                100.0 * (on / off - 1.0)
            );
        }
        let _ = writeln!(report);
    }

    if config.only.is_none() {
        let demo = &targets[0];
        let _ = writeln!(
            report,
            "Latency, demo group (ms; stalls: requests over {} ms; CPU stolen: of the machine's CPU time during the run, by the hypervisor):\n",
            STALL.as_millis()
        );
        let _ = writeln!(
            report,
            "| run | requests | p50 | p99 | p99.9 | max | stalls | CPU stolen |"
        );
        let _ = writeln!(report, "|---|---:|---:|---:|---:|---:|---:|---:|");
        let wanted = std::env::var("LMS_BENCH_LATENCY_ONLY").ok();
        let runs: Vec<(&str, SocketAddr)> = [
            ("ceiling", "ceiling", bench.ceilings[0]),
            ("`lms up`", "lms-up", bench.lms_up),
            ("two processes", "two-processes", bench.two_processes),
        ]
        .into_iter()
        .filter(|(_, short, _)| {
            wanted
                .as_deref()
                .is_none_or(|names| names.split(',').any(|n| n.trim() == *short))
        })
        .map(|(name, _, addr)| (name, addr))
        .collect();
        // Each run measures the steady state: the target is first served for a second, so a
        // login left unused for a minute (the runs before were served by other targets) pays
        // its one argon2id verification (contract section 2) before the clock starts.
        let warm = |addr| {
            bench.load.block_on(http_load::one_connection(
                addr,
                demo.http_request(),
                1.0,
                None,
            ));
        };
        for &(name, addr) in &runs {
            warm(addr);
            let steal = Steal::now();
            let open = http_load::open_loop(
                &bench.load,
                addr,
                demo.http_request(),
                OPEN_LOOP_RATE,
                config.latency_seconds,
            );
            let _ = writeln!(
                report,
                "| {name}, open loop {OPEN_LOOP_RATE}/s for {} s | {} | {:.1} % |",
                config.latency_seconds,
                open.describe(),
                steal.percent_since()
            );
            println!("{name}: open loop done");
        }
        for &(name, addr) in &runs {
            warm(addr);
            let steal = Steal::now();
            let one = bench.load.block_on(http_load::one_connection(
                addr,
                demo.http_request(),
                config.stall_seconds,
                Some(name),
            ));
            let _ = writeln!(
                report,
                "| {name}, one connection for {} s | {} | {:.1} % |",
                config.stall_seconds,
                one.describe(),
                steal.percent_since()
            );
            println!("{name}: one connection done");
        }
    }

    println!("\n{report}");
    if let Ok(path) = std::env::var("LMS_BENCH_REPORT") {
        std::fs::write(&path, &report).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
        println!("report written to {path}");
    }

    let Bench {
        server, children, ..
    } = bench;
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = stop.send(());
    let _ = stop_unlimited.send(());
    server.block_on(async {
        let _ = stack_task.await;
        let _ = unlimited_task.await;
    });
    drop(database);
}
