//! Fault injection under load: the core killed and restarted, PostgreSQL backends terminated,
//! PostgreSQL cut off (connections closed, new ones refused) or black-holed (connections kept,
//! nothing answered), SQLite's `-wal`/`-shm` files briefly unwritable. Each scenario ends with every request
//! answered (none hung), no 500 and no 429 (503 with `Retry-After` while the fault lasts),
//! requests succeeding again on their own, and every acknowledged write stored, table by table.
//!
//! A quick pass of each runs with `cargo test`; the long passes (more load, longer and repeated
//! faults) are ignored by default:
//!
//! ```sh
//! cargo test -p lms-tests --test faults -- --include-ignored
//! ```
//!
//! A SQLite file deleted under the running service is noticed: no write into it is
//! acknowledged, health turns NOT_SERVING and requests 503.
//!
//! SQLite's WAL index (`-shm`) truncated under a real `lms up` process kills its serving
//! process with SIGBUS; `lms up` logs it, naming the file, and starts it again, losing no
//! acknowledged write, and gives up with status 135 after a fourth crash within a minute. A
//! `-shm` that cannot be written refuses the start, naming it. These need the `lms`
//! executable, which they build with cargo (`lms_tests::lms_process`).
//!
//! The PostgreSQL scenarios run when `LMS_TEST_POSTGRES_URL` is set. The SQLite scenario needs
//! file permissions to bind, which root ignores: run as root, it re-runs itself as `nobody`.

use std::{os::unix::fs::PermissionsExt as _, path::PathBuf, time::Duration};

use lms_tests::{
    Backend,
    fault::{SplitStack, TcpLink, assert_nothing_lost, assert_recovered, server_of, url_through},
};
use sea_orm::{ConnectionTrait as _, Statement};

/// How hard and how long a scenario pushes.
#[derive(Debug, Clone, Copy)]
struct Pace {
    /// Concurrent callers during the fault.
    workers: usize,
    /// Load before the fault starts.
    warm_up: Duration,
    /// How long the fault lasts (or the gap between terminations).
    fault: Duration,
    /// How often the fault is repeated.
    repeats: usize,
    /// Requests per caller once the fault is over, every one of which must succeed.
    after: u64,
}

const QUICK: Pace = Pace {
    workers: 4,
    warm_up: Duration::from_millis(300),
    fault: Duration::from_millis(400),
    repeats: 1,
    after: 10,
};

const FULL: Pace = Pace {
    workers: 16,
    warm_up: Duration::from_secs(2),
    fault: Duration::from_secs(3),
    repeats: 3,
    after: 50,
};

/// How long requests may take to succeed again after a fault ends.
const RECOVERY: Duration = Duration::from_secs(15);

fn init_logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_test_writer()
        .try_init();
}

// ---------------------------------------------------------------------------------------------
// (a) The core killed and restarted under load

async fn core_killed_and_restarted(backend: Backend, pace: Pace) {
    init_logs();
    let Some(mut stack) = SplitStack::start(backend).await else {
        return;
    };
    let load = stack.load(pace.workers, "kill");
    tokio::time::sleep(pace.warm_up).await;
    for _ in 0..pace.repeats {
        stack.kill_core();
        tokio::time::sleep(pace.fault).await;
        let ready = reqwest::get(format!("{}/readyz", stack.base_url))
            .await
            .expect("the gateway answers while its core is down");
        assert_eq!(ready.status(), 503, "not ready without a core");
        assert!(ready.headers().contains_key("retry-after"));
        stack.restart_core().await;
        tokio::time::sleep(pace.warm_up).await;
    }
    let report = load.finish().await;
    eprintln!("core killed: {}", report.summary());
    report.assert_answered_without_server_errors();
    report.assert_some_unavailable("the outage was seen as 503");
    let mut acknowledged = report.acknowledged();
    acknowledged
        .extend(assert_recovered(&stack.base_url, RECOVERY, pace.workers, pace.after).await);
    let ready = reqwest::get(format!("{}/readyz", stack.base_url))
        .await
        .expect("the gateway answers");
    assert_eq!(ready.status(), 200, "ready again once the core is back");
    assert_nothing_lost(&stack.inspect().await, &acknowledged).await;
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_core_killed_under_load_gives_503_then_recovers_without_losing_writes_sqlite() {
    core_killed_and_restarted(Backend::Sqlite, QUICK).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_core_killed_under_load_gives_503_then_recovers_without_losing_writes_postgres() {
    core_killed_and_restarted(Backend::Postgres, QUICK).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long fault pass: cargo test -p lms-tests --test faults -- --include-ignored"]
async fn a_core_killed_repeatedly_under_heavy_load_loses_nothing_sqlite() {
    core_killed_and_restarted(Backend::Sqlite, FULL).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long fault pass: cargo test -p lms-tests --test faults -- --include-ignored"]
async fn a_core_killed_repeatedly_under_heavy_load_loses_nothing_postgres() {
    core_killed_and_restarted(Backend::Postgres, FULL).await;
}

// ---------------------------------------------------------------------------------------------
// (b) PostgreSQL backends terminated under load

async fn postgres_backends_terminated(pace: Pace) {
    init_logs();
    let Some(stack) = SplitStack::start(Backend::Postgres).await else {
        return;
    };
    let admin = stack.inspect().await;
    let load = stack.load(pace.workers, "terminate");
    tokio::time::sleep(pace.warm_up).await;
    let mut terminated = 0;
    for _ in 0..pace.repeats.max(2) {
        let rows = admin
            .query_all_raw(Statement::from_string(
                admin.get_database_backend(),
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
            ))
            .await
            .expect("backends terminated");
        terminated += rows.len();
        tokio::time::sleep(pace.fault).await;
    }
    assert!(
        terminated > 0,
        "the core's backends were there to terminate"
    );
    let report = load.finish().await;
    eprintln!("{terminated} backends terminated: {}", report.summary());
    report.assert_answered_without_server_errors();
    let mut acknowledged = report.acknowledged();
    acknowledged
        .extend(assert_recovered(&stack.base_url, RECOVERY, pace.workers, pace.after).await);
    assert_nothing_lost(&admin, &acknowledged).await;
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_backends_terminated_under_load_give_503_never_500_and_lose_nothing() {
    postgres_backends_terminated(QUICK).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long fault pass: cargo test -p lms-tests --test faults -- --include-ignored"]
async fn postgres_backends_terminated_repeatedly_under_heavy_load_lose_nothing() {
    postgres_backends_terminated(FULL).await;
}

// ---------------------------------------------------------------------------------------------
// (b') PostgreSQL out of reach under load: every connection cut, new ones refused

async fn postgres_out_of_reach(outage: Duration, expect_503: bool) {
    init_logs();
    let Ok(server_url) = std::env::var(lms_tests::testkit::POSTGRES_URL_VAR) else {
        eprintln!(
            "skipped: {} is not set",
            lms_tests::testkit::POSTGRES_URL_VAR
        );
        return;
    };
    let mut link = TcpLink::to(server_of(&server_url)).await;
    let link_addr = link.addr;
    let Some(stack) =
        SplitStack::start_with(Backend::Postgres, |url| url_through(url, link_addr)).await
    else {
        return;
    };
    let load = stack.load(QUICK.workers, "unreachable");
    tokio::time::sleep(QUICK.warm_up).await;
    link.cut();
    tokio::time::sleep(outage).await;
    link.restore().await;
    tokio::time::sleep(QUICK.warm_up).await;
    let report = load.finish().await;
    eprintln!(
        "database out of reach for {outage:?}: {}, slowest {:?}",
        report.summary(),
        report.slowest()
    );
    report.assert_answered_without_server_errors();
    if expect_503 {
        // The core gives up waiting for a connection after POSTGRES_ACQUIRE_TIMEOUT (5 s).
        assert!(
            report.slowest() < Duration::from_millis(6_500),
            "a request waited {:?} for the database",
            report.slowest()
        );
        report.assert_some_unavailable(
            "a long outage is answered 503, not left to the gateway's deadline",
        );
    }
    let mut acknowledged = report.acknowledged();
    acknowledged
        .extend(assert_recovered(&stack.base_url, RECOVERY, QUICK.workers, QUICK.after).await);
    assert_nothing_lost(&stack.inspect().await, &acknowledged).await;
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_briefly_out_of_reach_under_load_gives_no_500_and_loses_nothing() {
    postgres_out_of_reach(Duration::from_millis(500), false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long fault pass: cargo test -p lms-tests --test faults -- --include-ignored"]
async fn postgres_out_of_reach_longer_than_the_pool_waits_gives_503_not_504() {
    // Longer than the core waits for a connection (5 s), shorter than the gateway's deadline.
    postgres_out_of_reach(Duration::from_secs(7), true).await;
}

// ---------------------------------------------------------------------------------------------
// (c) SQLite's -wal and -shm briefly unwritable

/// Set in the copy of this binary that runs a scenario as `nobody`.
const UNPRIVILEGED_VAR: &str = "LMS_FAULTS_UNPRIVILEGED";

/// Runs `test` of this binary again as `nobody` when this process is root (root writes to
/// files whatever their mode, so a permission fault needs another user); returns whether it
/// did, in which case the caller has nothing left to do.
fn rerun_unprivileged(test: &str, ignored: bool) -> bool {
    use std::os::unix::{fs::MetadataExt as _, process::CommandExt as _};
    let is_root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if !is_root || std::env::var_os(UNPRIVILEGED_VAR).is_some() {
        return false;
    }
    // A temporary folder of its own: root's SQLite template is not readable by others.
    let folder = tempfile::tempdir().expect("a temporary folder");
    std::os::unix::fs::chown(folder.path(), Some(65534), Some(65534)).expect("chown");
    let mut command = std::process::Command::new(std::env::current_exe().expect("this test"));
    command
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(UNPRIVILEGED_VAR, "1")
        // Built here: cargo cannot run as that user.
        .env(
            lms_tests::lms_process::EXECUTABLE_VAR,
            lms_tests::lms_process::lms_executable(),
        )
        .env("TMPDIR", folder.path())
        .current_dir(folder.path())
        .gid(65534)
        .uid(65534);
    if ignored {
        command.arg("--include-ignored");
    }
    let output = command.output().expect("this test runs as nobody");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "the scenario failed as nobody:\n{stdout}\n{stderr}"
    );
    true
}

/// Sets the mode of the database's `-wal` and `-shm` files.
fn chmod_wal_and_shm(database_url: &str, mode: u32) {
    let path = PathBuf::from(database_url.trim_start_matches("sqlite://"));
    for suffix in ["-wal", "-shm"] {
        let mut file = path.clone().into_os_string();
        file.push(suffix);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", PathBuf::from(&file).display()));
    }
}

async fn sqlite_files_briefly_unwritable(pace: Pace) {
    init_logs();
    let stack = SplitStack::start(Backend::Sqlite)
        .await
        .expect("SQLite is always there");
    // One caller keeps one connection busy; the pool's other connections are opened while
    // the files are unwritable, by the callers that join then.
    let steady = stack.load(1, "steady");
    tokio::time::sleep(pace.warm_up).await;
    let mut reports = Vec::new();
    for _ in 0..pace.repeats {
        chmod_wal_and_shm(&stack.database_url, 0o444);
        let burst = stack.load(pace.workers, "burst");
        tokio::time::sleep(pace.fault).await;
        reports.push(burst.finish().await);
        chmod_wal_and_shm(&stack.database_url, 0o644);
        tokio::time::sleep(pace.warm_up).await;
    }
    reports.push(steady.finish().await);
    let mut acknowledged = Vec::new();
    for report in &reports {
        eprintln!("files unwritable: {}", report.summary());
        report.assert_answered_without_server_errors();
        acknowledged.extend(report.acknowledged());
    }
    acknowledged
        .extend(assert_recovered(&stack.base_url, RECOVERY, pace.workers, pace.after).await);
    assert_nothing_lost(&stack.inspect().await, &acknowledged).await;
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_files_briefly_unwritable_give_503_then_every_connection_recovers() {
    if rerun_unprivileged(
        "sqlite_files_briefly_unwritable_give_503_then_every_connection_recovers",
        false,
    ) {
        return;
    }
    sqlite_files_briefly_unwritable(QUICK).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long fault pass: cargo test -p lms-tests --test faults -- --include-ignored"]
async fn sqlite_files_unwritable_repeatedly_under_heavy_load_lose_nothing() {
    if rerun_unprivileged(
        "sqlite_files_unwritable_repeatedly_under_heavy_load_lose_nothing",
        true,
    ) {
        return;
    }
    sqlite_files_briefly_unwritable(FULL).await;
}

// ---------------------------------------------------------------------------------------------
// The SQLite file deleted under the running service

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_file_deleted_under_the_running_service_turns_health_and_requests_to_503() {
    use lms::{Stack, StackSettings};
    use tonic_health::pb::{
        HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
    };
    init_logs();
    let database = lms_tests::database::TestDatabase::create(Backend::Sqlite)
        .await
        .expect("SQLite is always there");
    {
        let db = database.connect().await;
        lms_tests::stack::import_world(&db).await;
        db.close().await.expect("closes");
    }
    let mut settings = StackSettings::for_database(database.url.clone()).on_free_ports();
    settings.core.database_file_check_ms = 50;
    settings.core.argon2_memory_kib = lms_tests::stack::TEST_POLICY.memory_kib;
    settings.core.argon2_iterations = lms_tests::stack::TEST_POLICY.iterations;
    settings.core.rate_limits = lms_core::rate_limit::RateLimitSettings::off();
    let stack = Stack::build(&settings).await.expect("the service starts");
    let base_url = format!("http://{}", stack.http_addr());
    let grpc_url = format!("http://{}", stack.grpc_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(stack.run_until(async move {
        let _ = stopped.await;
    }));
    let before = lms_tests::fault::assert_recovered(&base_url, RECOVERY, 1, 2).await;
    assert!(!before.is_empty());

    let path = database.url.trim_start_matches("sqlite://").to_owned();
    std::fs::remove_file(&path).expect("the database file is deleted");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let refused = loop {
        let load = lms_tests::fault::Load::start(&base_url, 1, "after-delete");
        tokio::time::sleep(Duration::from_millis(20)).await;
        let report = load.finish().await;
        report.assert_answered_without_server_errors();
        if let Some(refused) = report
            .answers
            .iter()
            .find_map(|a| a.reply.as_ref().ok().filter(|r| r.status == 503).cloned())
        {
            break refused;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "requests were still served from the deleted file: {}",
            report.summary()
        );
    };
    refused.assert_error(503, "unavailable");
    let channel = tonic::transport::Endpoint::from_shared(grpc_url)
        .expect("endpoint")
        .connect()
        .await
        .expect("the core is reachable");
    let health = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: "lms.v1.AdminService".to_owned(),
        })
        .await
        .expect("health answers")
        .into_inner();
    assert_eq!(health.status(), ServingStatus::NotServing);
    let _ = stop.send(());
    running.await.expect("the service task").expect("stops");
}

// ---------------------------------------------------------------------------------------------
// Health follows the database: PostgreSQL out of reach, then back, with no restart

/// The core's overall gRPC health and the gateway's readiness, as a balancer sees them.
async fn health_and_readiness(grpc_url: &str, base_url: &str) -> (i32, u16) {
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let channel = tonic::transport::Endpoint::from_shared(grpc_url.to_owned())
        .expect("endpoint")
        .connect()
        .await
        .expect("the core's gRPC port answers while its database does not");
    let health = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .expect("health answers")
        .into_inner()
        .status;
    let ready = reqwest::get(format!("{base_url}/readyz"))
        .await
        .expect("the gateway answers")
        .status()
        .as_u16();
    (health, ready)
}

/// Polls until health and readiness are `want`, or panics after `within`.
async fn until_health(grpc_url: &str, base_url: &str, want: (i32, u16), within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let seen = health_and_readiness(grpc_url, base_url).await;
        if seen == want {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "health and readiness stayed {seen:?}, expected {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_out_of_reach_turns_health_not_serving_and_requests_503_then_both_recover() {
    use lms::{Stack, StackSettings};
    use tonic_health::pb::health_check_response::ServingStatus;
    init_logs();
    let Some(database) = lms_tests::database::TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    {
        let db = database.connect().await;
        lms_tests::stack::import_world(&db).await;
        db.close().await.expect("closes");
    }
    let mut link = TcpLink::to(server_of(&database.url)).await;
    let mut settings =
        StackSettings::for_database(url_through(&database.url, link.addr)).on_free_ports();
    settings.core.database_probe_ms = 200;
    settings.core.argon2_memory_kib = lms_tests::stack::TEST_POLICY.memory_kib;
    settings.core.argon2_iterations = lms_tests::stack::TEST_POLICY.iterations;
    settings.core.rate_limits = lms_core::rate_limit::RateLimitSettings::off();
    let stack = Stack::build(&settings).await.expect("the service starts");
    let base_url = format!("http://{}", stack.http_addr());
    let grpc_url = format!("http://{}", stack.grpc_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(stack.run_until(async move {
        let _ = stopped.await;
    }));
    let serving = ServingStatus::Serving as i32;
    let not_serving = ServingStatus::NotServing as i32;
    assert_eq!(
        health_and_readiness(&grpc_url, &base_url).await,
        (serving, 200)
    );

    let load = lms_tests::fault::Load::start(&base_url, QUICK.workers, "outage");
    tokio::time::sleep(QUICK.warm_up).await;
    link.cut();
    // The probe notices within its timeout (3 s) plus a period.
    until_health(&grpc_url, &base_url, (not_serving, 503), RECOVERY).await;
    // Long enough for requests to wait out the pool (5 s) and be answered 503.
    tokio::time::sleep(Duration::from_secs(6)).await;
    link.restore().await;
    until_health(&grpc_url, &base_url, (serving, 200), RECOVERY).await;
    let report = load.finish().await;
    eprintln!("database out of reach: {}", report.summary());
    report.assert_answered_without_server_errors();
    report.assert_some_unavailable("the outage was answered 503");
    let mut acknowledged = report.acknowledged();
    acknowledged.extend(assert_recovered(&base_url, RECOVERY, QUICK.workers, QUICK.after).await);
    assert_nothing_lost(&database.connect().await, &acknowledged).await;
    let _ = stop.send(());
    running.await.expect("the service task").expect("stops");
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL black-holed: connections stay open and nothing comes back

/// The median and the longest wait of `report`'s answers.
fn median_and_slowest(report: &lms_tests::fault::LoadReport) -> (Duration, Duration) {
    let mut waits: Vec<Duration> = report.answers.iter().map(|a| a.elapsed).collect();
    waits.sort();
    (waits[waits.len() / 2], report.slowest())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_black_holed_is_answered_503_at_once_once_readiness_turns_never_504() {
    use lms::{Stack, StackSettings};
    use tonic_health::pb::health_check_response::ServingStatus;
    init_logs();
    let Some(database) = lms_tests::database::TestDatabase::create(Backend::Postgres).await else {
        return;
    };
    {
        let db = database.connect().await;
        lms_tests::stack::import_world(&db).await;
        db.close().await.expect("closes");
    }
    let link = TcpLink::to(server_of(&database.url)).await;
    let mut settings =
        StackSettings::for_database(url_through(&database.url, link.addr)).on_free_ports();
    settings.core.database_probe_ms = 200;
    settings.core.argon2_memory_kib = lms_tests::stack::TEST_POLICY.memory_kib;
    settings.core.argon2_iterations = lms_tests::stack::TEST_POLICY.iterations;
    settings.core.rate_limits = lms_core::rate_limit::RateLimitSettings::off();
    let stack = Stack::build(&settings).await.expect("the service starts");
    let base_url = format!("http://{}", stack.http_addr());
    let grpc_url = format!("http://{}", stack.grpc_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(stack.run_until(async move {
        let _ = stopped.await;
    }));
    let serving = ServingStatus::Serving as i32;
    let not_serving = ServingStatus::NotServing as i32;

    let caught = lms_tests::fault::Load::start(&base_url, QUICK.workers, "caught");
    tokio::time::sleep(QUICK.warm_up).await;
    link.black_hole();
    let holed = tokio::time::Instant::now();
    // The probe times out (3 s) on a connection that never answers.
    until_health(&grpc_url, &base_url, (not_serving, 503), RECOVERY).await;
    let turned = holed.elapsed();
    // Every request from now on is refused by the core without waiting for the database.
    let after = lms_tests::fault::Load::start(&base_url, QUICK.workers, "after");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = after.finish().await;
    link.end_black_hole();
    let back = tokio::time::Instant::now();
    // One caller until a request succeeds: the probe (every 500 ms while down) opens the gate.
    let mut acknowledged_after = assert_recovered(&base_url, Duration::from_secs(2), 1, 0).await;
    let recovered = back.elapsed();
    acknowledged_after
        .extend(assert_recovered(&base_url, RECOVERY, QUICK.workers, QUICK.after).await);
    until_health(&grpc_url, &base_url, (serving, 200), RECOVERY).await;
    let caught = caught.finish().await;

    let (median, slowest) = median_and_slowest(&after);
    eprintln!(
        "black hole: readiness turned after {turned:?}; caught in it: {}, slowest {:?}; \
         after readiness turned: {}, median {median:?}, slowest {slowest:?}; \
         requests succeed again {recovered:?} after the database's return",
        caught.summary(),
        caught.slowest(),
        after.summary()
    );
    // No 504: the requests caught in the black hole are released with 503 when the probe
    // turns, well before the gateway's deadline (10 s).
    caught.assert_answered_without_server_errors();
    caught.assert_some_unavailable("the black hole was answered 503");
    after.assert_answered_without_server_errors();
    assert!(
        after.answers.len() >= QUICK.workers && after.succeeded() == 0,
        "every request after readiness turned is refused: {}",
        after.summary()
    );
    // At once, not after a timeout (the pool's 5 s, the statement's 5 s, the gateway's 10 s):
    // bounds far below those, loose enough for a shared machine.
    assert!(
        median < Duration::from_millis(100),
        "median wait {median:?}"
    );
    assert!(slowest < Duration::from_secs(1), "slowest wait {slowest:?}");
    let mut acknowledged = caught.acknowledged();
    acknowledged.extend(acknowledged_after);
    assert_nothing_lost(&database.connect().await, &acknowledged).await;
    let _ = stop.send(());
    running.await.expect("the service task").expect("stops");
}

// ---------------------------------------------------------------------------------------------
// The SQLite file deleted: no write into it is acknowledged

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_write_into_a_deleted_database_file_is_acknowledged() {
    init_logs();
    let stack = SplitStack::start(Backend::Sqlite)
        .await
        .expect("SQLite is always there");
    // The periodic file check (5 s by default) has no part in this: the writes notice.
    let before = assert_recovered(&stack.base_url, RECOVERY, 1, 2).await;
    assert!(!before.is_empty());
    let path = stack
        .database_url
        .trim_start_matches("sqlite://")
        .to_owned();
    std::fs::remove_file(&path).expect("the database file is deleted");
    let load = stack.load(QUICK.workers, "deleted");
    tokio::time::sleep(QUICK.fault).await;
    let report = load.finish().await;
    eprintln!("database file deleted: {}", report.summary());
    report.assert_answered_without_server_errors();
    report.assert_some_unavailable("writes into the deleted file are refused");
    assert!(
        report.acknowledged().is_empty(),
        "a write into the deleted file was acknowledged: {}",
        report.summary()
    );
    stack.stop().await;
}

// ---------------------------------------------------------------------------------------------
// SQLite's WAL index (`-shm`) truncated under `lms up`: SIGBUS, logged, restarted

/// A fresh SQLite file holding the world, for `lms up` to serve.
async fn world_on_sqlite() -> lms_tests::database::TestDatabase {
    let database = lms_tests::database::TestDatabase::create(Backend::Sqlite)
        .await
        .expect("SQLite is always there");
    let db = database.connect().await;
    lms_tests::stack::import_world(&db).await;
    db.close().await.expect("closes");
    database
}

/// The WAL index beside the SQLite file of `database_url`.
fn wal_index(database_url: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}-shm",
        database_url.trim_start_matches("sqlite://")
    ))
}

/// Truncates the WAL index to nothing, as a mistaken `: > lms.sqlite3-shm` or a failing file
/// system does: the serving process's mapping of it now ends before its first page.
fn truncate_wal_index(database_url: &str) {
    let path = wal_index(database_url);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_len(0))
        .unwrap_or_else(|e| panic!("truncating {}: {e}", path.display()));
}

/// Waits until `lms up` answers readiness with 200, its serving process having been started
/// again; connections refused meanwhile are expected (no process listens).
async fn until_ready_again(base_url: &str, within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let ready = reqwest::get(format!("{base_url}/readyz")).await;
        if ready.is_ok_and(|r| r.status() == 200) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "lms up did not serve again within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wal_index_truncated_under_lms_up_is_logged_by_name_and_served_again_losing_nothing() {
    use lms_tests::lms_process::LmsUp;
    init_logs();
    let database = world_on_sqlite().await;
    let lms = tokio::task::block_in_place(|| LmsUp::start(&database.url, &[]));
    let mut acknowledged = assert_recovered(&lms.base_url, RECOVERY, 2, 5).await;
    let load = lms_tests::fault::Load::start(&lms.base_url, QUICK.workers, "shm");
    tokio::time::sleep(QUICK.warm_up).await;
    truncate_wal_index(&database.url);
    tokio::time::sleep(QUICK.fault).await;
    until_ready_again(&lms.base_url, RECOVERY).await;
    let report = load.finish().await;
    eprintln!("WAL index truncated: {}", report.summary());
    acknowledged.extend(report.acknowledged());
    acknowledged
        .extend(assert_recovered(&lms.base_url, RECOVERY, QUICK.workers, QUICK.after).await);

    let log = lms.log();
    let shm = wal_index(&database.url).display().to_string();
    assert!(
        log.contains("killed by SIGBUS") && log.contains(&shm),
        "the bus error is logged naming {shm}:\n{log}"
    );
    assert!(log.contains("starting the serving process again"), "{log}");
    assert_nothing_lost(&database.connect().await, &acknowledged).await;
    let status = tokio::task::block_in_place(|| lms.terminate());
    assert!(
        status.success(),
        "lms up stops cleanly on SIGTERM: {status:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lms_up_whose_serving_process_keeps_crashing_exits_non_zero_for_the_restart_policy() {
    use lms::supervisor::MAX_CRASHES;
    use lms_tests::lms_process::LmsUp;
    use std::os::unix::process::ExitStatusExt as _;
    init_logs();
    let database = world_on_sqlite().await;
    let mut lms = tokio::task::block_in_place(|| LmsUp::start(&database.url, &[]));
    for crash in 1..=MAX_CRASHES + 1 {
        until_ready_again(&lms.base_url, RECOVERY).await;
        truncate_wal_index(&database.url);
        // The next read of the WAL index raises the bus error.
        read_a_group(&lms.base_url).await;
        eprintln!("crash {crash} caused");
    }
    let status = tokio::task::block_in_place(|| lms.exit_within(RECOVERY))
        .unwrap_or_else(|| panic!("lms up gave up:\n{}", lms.log()));
    assert_eq!(
        status.signal(),
        None,
        "lms up itself exits, it is not killed"
    );
    assert_eq!(
        status.code(),
        Some(128 + 7),
        "128 + SIGBUS, as a shell says it"
    );
    let log = lms.log();
    assert!(
        log.contains(&format!("crashed {} times within 60 s", MAX_CRASHES + 1)),
        "{log}"
    );
}

/// One group read, whatever its outcome: makes the serving process touch its WAL index.
async fn read_a_group(base_url: &str) {
    use lms_tests::world::{OWNER, acme::INTERNS};
    let request = reqwest::Client::new().get(format!("{base_url}/group/{INTERNS}"));
    let _ = OWNER
        .headers()
        .into_iter()
        .fold(request, |request, (name, value)| {
            request.header(name, value)
        })
        .send()
        .await;
}

// ---------------------------------------------------------------------------------------------
// A `-shm` that cannot be written refuses the start, naming it

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_in_place_of_the_wal_index_refuses_the_start_naming_it() {
    use lms_tests::lms_process::LmsUp;
    let database = world_on_sqlite().await;
    let shm = wal_index(&database.url);
    std::fs::create_dir(&shm).expect("a folder where the WAL index goes");
    let (status, log) = tokio::task::block_in_place(|| LmsUp::refused(&database.url));
    assert!(!status.success(), "lms up refuses to start:\n{log}");
    assert!(
        log.contains(&shm.display().to_string()) && log.contains("not a regular file"),
        "the refusal names the WAL index:\n{log}"
    );
    // Fixed, it starts and serves, reads and writes.
    std::fs::remove_dir(&shm).expect("the folder is removed");
    let lms = tokio::task::block_in_place(|| LmsUp::start(&database.url, &[]));
    assert!(
        !assert_recovered(&lms.base_url, RECOVERY, 1, 2)
            .await
            .is_empty()
    );
    let status = tokio::task::block_in_place(|| lms.terminate());
    assert!(status.success(), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wal_index_read_only_to_the_service_refuses_its_start_then_it_serves_once_fixed() {
    if rerun_unprivileged(
        "a_wal_index_read_only_to_the_service_refuses_its_start_then_it_serves_once_fixed",
        false,
    ) {
        return;
    }
    use lms_tests::lms_process::LmsUp;
    let database = world_on_sqlite().await;
    let shm = wal_index(&database.url);
    std::fs::write(&shm, b"").expect("a WAL index");
    std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let (status, log) = tokio::task::block_in_place(|| LmsUp::refused(&database.url));
    assert!(!status.success(), "lms up refuses to start:\n{log}");
    assert!(
        log.contains(&shm.display().to_string()) && log.contains("cannot be written"),
        "the refusal names the WAL index:\n{log}"
    );
    std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let lms = tokio::task::block_in_place(|| LmsUp::start(&database.url, &[]));
    assert!(
        !assert_recovered(&lms.base_url, RECOVERY, 1, 2)
            .await
            .is_empty()
    );
    let status = tokio::task::block_in_place(|| lms.terminate());
    assert!(status.success(), "{status:?}");
}

// ---------------------------------------------------------------------------------------------
// A statement cut by PostgreSQL's statement_timeout

/// A write held past the serving pool's `statement_timeout` (8 s) by another session's lock is
/// the database's bad moment, not a bug: 503 with `Retry-After`, not 500, and nothing stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_past_its_postgresql_timeout_is_503_with_retry_after_and_changes_nothing() {
    use lms_tests::{TestStack, world};
    use sea_orm::TransactionTrait as _;
    let Some(stack) = TestStack::start(Backend::Postgres).await else {
        return;
    };
    let before = stack.snapshot().await;
    let holder = stack.db().begin().await.expect("a connection");
    holder
        .execute_unprepared("LOCK TABLE departments IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("the departments locked");
    let reply = stack
        .post_xml(
            "/department",
            world::OWNER,
            &format!(
                "<request><name>Held</name><parentDepartmentId>{}</parentDepartmentId></request>",
                world::acme::ROOT
            ),
        )
        .await;
    holder.rollback().await.expect("the lock released");
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert!(reply.header("retry-after").is_some(), "{}", reply.body);
    assert_eq!(stack.snapshot().await, before, "nothing was stored");
    stack.stop().await;
}
