//! `lms-core` run alone on SQLite outlives a bus error as `lms up` does: the real binary on a
//! real file, its WAL index (`-shm`) truncated under it, the death logged naming the file,
//! the core serving again on the same port, and a clean stop on SIGTERM.

use std::{
    net::TcpListener,
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use lms_proto::v1::{GetGroupRequest, admin_service_client::AdminServiceClient};
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

const WITHIN: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wal_index_truncated_under_lms_core_is_logged_by_name_and_served_again() {
    let folder = tempfile::tempdir().expect("a folder");
    let database = folder.path().join("lms.sqlite3");
    let log = folder.path().join("lms-core.log");
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let address = format!("127.0.0.1:{port}");
    let mut core = Command::new(env!("CARGO_BIN_EXE_lms-core"))
        .args(["--grpc-addr", &address, "--create-database"])
        .env("DATABASE_URL", format!("sqlite://{}", database.display()))
        .env("RUST_LOG", "info")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("the log file"))
        .spawn()
        .expect("lms-core starts");
    let endpoint = format!("http://{address}");
    until_serving(&endpoint, &log).await;

    let shm = format!("{}-shm", database.display());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&shm)
        .and_then(|file| file.set_len(0))
        .expect("the WAL index is truncated");
    // A read of the database touches the WAL index: the serving process dies of it.
    let deadline = Instant::now() + WITHIN;
    while !read_log(&log).contains("killed by SIGBUS") {
        assert!(
            Instant::now() < deadline,
            "no bus error:\n{}",
            read_log(&log)
        );
        read_anything(&endpoint).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    until_serving(&endpoint, &log).await;

    let said = read_log(&log);
    assert!(said.contains(&shm), "the log names {shm}:\n{said}");
    assert!(
        said.contains("starting the serving process again"),
        "{said}"
    );
    assert!(
        core.try_wait().expect("a status").is_none(),
        "the supervisor lives on:\n{said}"
    );
    stop(&mut core, &log);
}

/// Waits until the core's health service says SERVING; refused connections meanwhile are
/// expected (no process listens between a death and the restart).
async fn until_serving(endpoint: &str, log: &Path) {
    let deadline = Instant::now() + WITHIN;
    loop {
        let channel = tonic::transport::Endpoint::from_shared(endpoint.to_owned())
            .expect("an endpoint")
            .connect()
            .await;
        if let Ok(mut health) = channel.map(HealthClient::new) {
            let answer = health
                .check(HealthCheckRequest {
                    service: String::new(),
                })
                .await;
            if answer.is_ok_and(|a| a.into_inner().status() == ServingStatus::Serving) {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "lms-core did not serve within {WITHIN:?}:\n{}",
            read_log(log)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One call that reads the database (the caller's account is looked up), whatever its answer.
async fn read_anything(endpoint: &str) {
    let Ok(mut admin) = AdminServiceClient::connect(endpoint.to_owned()).await else {
        return;
    };
    let mut request = tonic::Request::new(GetGroupRequest {
        group_id: uuid::Uuid::nil().to_string(),
    });
    let metadata = request.metadata_mut();
    metadata.insert(
        lms_proto::metadata::ACCOUNT_URL,
        "https://nobody.example.com".parse().expect("ascii"),
    );
    metadata.insert(
        lms_proto::metadata::EMAIL,
        "nobody@example.com".parse().expect("ascii"),
    );
    metadata.insert(
        lms_proto::metadata::PASSWORD,
        "not a password".parse().expect("ascii"),
    );
    let _ = admin.get_group(request).await;
}

fn read_log(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

/// SIGTERM, passed on to the serving process: both end, the supervisor with status 0.
fn stop(core: &mut Child, log: &Path) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(core.id()).expect("a pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM is sent");
    let deadline = Instant::now() + WITHIN;
    loop {
        if let Some(status) = core.try_wait().expect("a status") {
            assert!(
                status.success(),
                "lms-core stops cleanly: {status:?}\n{}",
                read_log(log)
            );
            return;
        }
        assert!(Instant::now() < deadline, "lms-core did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
}
