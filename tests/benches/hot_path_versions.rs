//! The hot path of two (or more) builds of `lms` side by side, in one run: each build's
//! `lms up --demo` its own process on its own fresh database, and the static ceiling, loaded in
//! alternating rounds so that the machine's background load hits them alike.
//!
//! Run (the builds are `lms` binaries, named by the commit they were built from):
//!
//! ```sh
//! LMS_BENCH_BINARIES=a2f05c8=/path/to/base/lms,d1db231=target/release/lms \
//!   cargo bench -p lms-tests --bench hot_path_versions
//! ```
//!
//! What it measures, for each build and the ceiling: requests/s and CPU µs per request of one
//! warm `GET /group/{id}` of the demo account's group (the `lms up --demo` data, read by its
//! owner; every build must answer the same bytes) under 16 keep-alive connections, its share
//! of the ceiling's requests/s (the hot-path ratio), and the latency quantiles of an open loop
//! at a constant 1,000 requests/s. Each round measures every target once, in an order that
//! turns by one each round; the open loops also run in every round.
//!
//! The ceiling is the static axum handler of `hot_path` (same bytes, on a 2-worker runtime in
//! this process). A build's CPU is its process's and its descendants' (from /proc); the
//! ceiling's is this process's less the load generator's thread. Each build logs to its own
//! file (`LMS_BENCH_LOG_DIR`, default the temporary folder), as `lms up` logs by default.
//!
//! A build with rate limits runs with them set far above the load (a billion requests a second),
//! so every request is checked and none refused, as in `hot_path`.
//!
//! Knobs (environment): `LMS_BENCH_BINARIES` (`NAME=PATH,…`, required), `LMS_BENCH_BACKEND=
//! postgres` (with `LMS_TEST_POSTGRES_URL`; each build gets a database of its own on that
//! server), `LMS_BENCH_SECONDS` (closed loop per target and round, default 3),
//! `LMS_BENCH_ROUNDS` (default 6), `LMS_BENCH_CONNECTIONS` (default 16),
//! `LMS_BENCH_LATENCY_SECONDS` (open loop per target and round, default 5),
//! `LMS_BENCH_REPORT=PATH`, `LMS_BENCH_LOG_DIR=PATH`.

use std::{
    fmt::Write as _,
    io::{BufRead as _, BufReader},
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use lms_testkit::TestDatabase;

/// The rate limits of a build that has them (`lms up --help`).
const RATE_LIMITS_FAR_ABOVE_THE_LOAD: [&str; 4] = [
    "LMS_RATE_LIMIT_CALLER_RPS",
    "LMS_RATE_LIMIT_CALLER_BURST",
    "LMS_RATE_LIMIT_ACCOUNT_RPS",
    "LMS_RATE_LIMIT_ACCOUNT_BURST",
];
use lms_tests::{
    Backend,
    http_load::{self, Latencies},
    machine::{self, Steal, cpu_of_stat, process_tree_cpu},
};
use tokio::runtime::Runtime;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The name of the load generator's thread, left out of the ceiling's CPU time.
const LOAD_THREAD: &str = "hot-path-load";
/// Requests per second of the open-loop latency runs.
const OPEN_LOOP_RATE: u64 = 1_000;

struct Config {
    backend: Backend,
    binaries: Vec<(String, PathBuf)>,
    seconds: f64,
    rounds: usize,
    connections: usize,
    latency_seconds: f64,
    log_dir: PathBuf,
}

impl Config {
    fn from_env() -> Self {
        let number = |name: &str, default: f64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(default)
        };
        let binaries: Vec<(String, PathBuf)> = std::env::var("LMS_BENCH_BINARIES")
            .unwrap_or_default()
            .split(',')
            .filter(|entry| !entry.trim().is_empty())
            .map(|entry| {
                let (name, path) = entry
                    .split_once('=')
                    .unwrap_or_else(|| panic!("LMS_BENCH_BINARIES: {entry:?} is not NAME=PATH"));
                let path = PathBuf::from(path.trim());
                assert!(
                    path.is_file(),
                    "LMS_BENCH_BINARIES: no file {}",
                    path.display()
                );
                (name.trim().to_owned(), path)
            })
            .collect();
        assert!(
            !binaries.is_empty(),
            "LMS_BENCH_BINARIES=NAME=PATH,… names the `lms` builds to compare"
        );
        Self {
            backend: match std::env::var("LMS_BENCH_BACKEND").as_deref() {
                Ok("postgres") => Backend::Postgres,
                _ => Backend::Sqlite,
            },
            binaries,
            seconds: number("LMS_BENCH_SECONDS", 3.0).max(0.2),
            rounds: number("LMS_BENCH_ROUNDS", 6.0).max(1.0) as usize,
            connections: number("LMS_BENCH_CONNECTIONS", 16.0).max(1.0) as usize,
            latency_seconds: number("LMS_BENCH_LATENCY_SECONDS", 5.0).max(0.5),
            log_dir: std::env::var_os("LMS_BENCH_LOG_DIR")
                .map_or_else(std::env::temp_dir, PathBuf::from),
        }
    }
}

/// One build's `lms up`, running.
struct Build {
    name: String,
    process: Child,
    addr: SocketAddr,
    _database: TestDatabase,
}

impl Build {
    /// Starts `lms up --demo` of `binary` on a fresh database and free ports; returns once it
    /// has printed that it is up.
    fn start(server: &Runtime, config: &Config, name: &str, binary: &Path) -> Self {
        // Empty: each build migrates it with its own migrations and imports its own demo.
        let database = server
            .block_on(TestDatabase::create_empty(config.backend))
            .expect("the backend is available (LMS_TEST_POSTGRES_URL for postgres)");
        let log = config.log_dir.join(format!("lms-hot-path-{name}.log"));
        let log_file = std::fs::File::create(&log).expect("log file");
        println!("{name}: {} (log: {})", binary.display(), log.display());
        let mut process = Command::new(binary)
            .args(["up", "--demo", "--http-addr", "127.0.0.1:0"])
            .args(["--grpc-addr", "127.0.0.1:0"])
            .env("DATABASE_URL", &database.url)
            // A build that rate-limits takes every request from its buckets, set far above the
            // load as in `hot_path`, so it pays for the check and refuses nothing; a build
            // without rate limits ignores them.
            .envs(RATE_LIMITS_FAR_ABOVE_THE_LOAD.map(|name| (name, "1000000000")))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut lines = BufReader::new(process.stdout.take().expect("stdout")).lines();
        let mut addr = None;
        for line in lines.by_ref() {
            let line = line.expect("a line of `lms up`");
            if let Some(url) = line.trim().strip_prefix("XML interface: http://") {
                addr = Some(url.parse().expect("the gateway's address"));
            }
            if line.starts_with("Press Ctrl-C") {
                break;
            }
        }
        let addr = addr.unwrap_or_else(|| panic!("{name} did not start; see {}", log.display()));
        // What it prints later (its farewell) must not fill the pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self {
            name: name.to_owned(),
            process,
            addr,
            _database: database,
        }
    }

    /// SIGTERM, as a container runtime stops it, then waits for the exit.
    fn stop(mut self) {
        let sent = Command::new("kill")
            .arg(self.process.id().to_string())
            .status();
        if !sent.is_ok_and(|s| s.success()) {
            let _ = self.process.kill();
        }
        let _ = self.process.wait();
    }
}

/// What one target served in the rounds.
#[derive(Default)]
struct Measured {
    requests: u64,
    elapsed: Duration,
    cpu: Duration,
    /// Requests/s of each round, to show the spread.
    per_round: Vec<f64>,
    open_loop: Vec<Duration>,
}

impl Measured {
    fn per_second(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }

    fn cpu_us(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.requests.max(1) as f64
    }
}

/// CPU time of this process less the load generator's thread: the ceiling's.
fn own_cpu() -> Duration {
    let read = |path: String| std::fs::read_to_string(path).unwrap_or_default();
    let mut cpu = cpu_of_stat(&read("/proc/self/stat".into()));
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            let path = task.path();
            if read(path.join("comm").display().to_string()).trim() == LOAD_THREAD {
                cpu =
                    cpu.saturating_sub(cpu_of_stat(&read(path.join("stat").display().to_string())));
            }
        }
    }
    cpu
}

fn runtime(name: &'static str, workers: usize) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("runtime")
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

async fn fetch(addr: SocketAddr, demo: &lms::demo::DemoAccount) -> bytes::Bytes {
    let response = reqwest::Client::new()
        .get(format!("http://{addr}/group/{}", demo.plain_group_id))
        .header("X-Auth-Account-Url", &demo.account_url)
        .header("X-Auth-Email", &demo.owner_login)
        .header("X-Auth-Password", &demo.password)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    response.bytes().await.expect("body")
}

fn main() {
    let config = Config::from_env();
    let ceiling_runtime = runtime("ceiling", 2);
    let load = runtime(LOAD_THREAD, 1);
    let began = chrono::Utc::now();
    let load_before = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "hot path of {} builds: {:?}, {} s per target in {} rounds, {} connections",
        config.binaries.len(),
        config.backend,
        config.seconds,
        config.rounds,
        config.connections
    );

    let builds: Vec<Build> = config
        .binaries
        .iter()
        .map(|(name, binary)| Build::start(&ceiling_runtime, &config, name, binary))
        .collect();
    let demo = lms::demo::demo_account();
    let request = http_load::get_request(
        &format!("/group/{}", demo.plain_group_id),
        &demo.account_url,
        &demo.owner_login,
        &demo.password,
    );
    let ceiling = ceiling_runtime.block_on(async {
        let body = fetch(builds[0].addr, &demo).await;
        for build in &builds[1..] {
            assert_eq!(
                body,
                fetch(build.addr, &demo).await,
                "{} answers other bytes than {}",
                build.name,
                builds[0].name
            );
        }
        serve_static(body).await
    });

    // Targets: the ceiling first, then the builds; a target's CPU is read by `cpu_of`.
    let names: Vec<String> = std::iter::once("ceiling".to_owned())
        .chain(builds.iter().map(|b| b.name.clone()))
        .collect();
    let addrs: Vec<SocketAddr> = std::iter::once(ceiling)
        .chain(builds.iter().map(|b| b.addr))
        .collect();
    let cpu_of = |target: usize| match target {
        0 => own_cpu(),
        n => process_tree_cpu(builds[n - 1].process.id()),
    };
    let closed = |addr, seconds| {
        load.block_on(http_load::closed_loop(
            addr,
            request.clone(),
            config.connections,
            seconds,
        ))
    };
    for &addr in &addrs {
        closed(addr, 1.0);
    }

    let mut results: Vec<Measured> = addrs.iter().map(|_| Measured::default()).collect();
    let steal = Steal::now();
    for round in 0..config.rounds {
        let order: Vec<usize> = (0..addrs.len())
            .map(|i| (i + round) % addrs.len())
            .collect();
        for &target in &order {
            let cpu_before = cpu_of(target);
            let started = Instant::now();
            let requests = closed(addrs[target], config.seconds);
            let elapsed = started.elapsed();
            let measured = &mut results[target];
            measured.cpu += cpu_of(target).saturating_sub(cpu_before);
            measured.requests += requests;
            measured.elapsed += elapsed;
            measured
                .per_round
                .push(requests as f64 / elapsed.as_secs_f64());
        }
        for &target in &order {
            // Its keep-alive connections warm again before the clock starts.
            load.block_on(http_load::one_connection(
                addrs[target],
                request.clone(),
                0.3,
                None,
            ));
            let latencies = http_load::open_loop(
                &load,
                addrs[target],
                request.clone(),
                OPEN_LOOP_RATE,
                config.latency_seconds,
            );
            results[target].open_loop.extend(latencies.into_inner());
        }
        println!("round {} of {} done", round + 1, config.rounds);
    }
    let stolen = steal.percent_since();
    let ended = chrono::Utc::now();
    let load_after = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();

    let mut report = String::new();
    let loadavg = |text: &str| {
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(
        report,
        "Run: {} to {} UTC, {:?}; machine: {}",
        began.format("%Y-%m-%d %H:%M"),
        ended.format("%H:%M"),
        config.backend,
        machine::describe()
    );
    let _ = writeln!(
        report,
        "Load average before {}, after {}; stolen by the hypervisor: {stolen:.1} % of the \
         machine's CPU time",
        loadavg(&load_before),
        loadavg(&load_after)
    );
    let _ = writeln!(
        report,
        "Settings: {} rounds; each round {} s closed loop ({} connections) then {} s open \
         loop at {OPEN_LOOP_RATE}/s per target\n",
        config.rounds, config.seconds, config.connections, config.latency_seconds
    );
    for (name, path) in &config.binaries {
        let _ = writeln!(report, "- {name}: `{}`", path.display());
    }
    let _ = writeln!(report);
    let _ = writeln!(
        report,
        "| target | requests/s | share of ceiling | CPU µs/request | p50 ms | p99 ms | p99.9 ms | \
         max ms | over 10 ms |"
    );
    let _ = writeln!(report, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let ceiling_rate = results[0].per_second();
    for (name, measured) in names.iter().zip(&results) {
        let latencies = Latencies::new(measured.open_loop.clone());
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let _ = writeln!(
            report,
            "| {name} | {:.0} | {:.1} % | {:.1} | {:.3} | {:.3} | {:.3} | {:.3} | {} |",
            measured.per_second(),
            100.0 * measured.per_second() / ceiling_rate,
            measured.cpu_us(),
            ms(latencies.quantile(0.5)),
            ms(latencies.quantile(0.99)),
            ms(latencies.quantile(0.999)),
            ms(latencies.quantile(1.0)),
            latencies.over(http_load::STALL),
        );
    }
    let _ = writeln!(
        report,
        "\nShare of the ceiling in each round (the same round's ceiling):\n"
    );
    for (index, name) in names.iter().enumerate().skip(1) {
        let shares: Vec<String> = results[index]
            .per_round
            .iter()
            .zip(&results[0].per_round)
            .map(|(build, ceiling)| format!("{:.1}", 100.0 * build / ceiling))
            .collect();
        let _ = writeln!(report, "- {name}: {} %", shares.join(", "));
    }
    if results.len() > 2 {
        let first = results[1].per_second();
        for (index, name) in names.iter().enumerate().skip(2) {
            let _ = writeln!(
                report,
                "\n{name} against {}: {:.3}× the requests/s, {:.3}× the CPU per request",
                names[1],
                results[index].per_second() / first,
                results[index].cpu_us() / results[1].cpu_us()
            );
        }
    }

    println!("\n{report}");
    if let Ok(path) = std::env::var("LMS_BENCH_REPORT") {
        std::fs::write(&path, &report).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
        println!("report written to {path}");
    }
    for build in builds {
        build.stop();
    }
}
