//! The `lms-core` binary logs as `--log-format json` asks: one JSON object per line, the same
//! set-up as `lms` and `lms-gateway` (`lms_runtime::telemetry`); and what it says at start
//! about the database server.

use std::{
    io::{BufRead as _, BufReader},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use lms_testkit::{Backend, TestDatabase};
use sea_orm::{ConnectionTrait as _, DbBackend, Statement};

#[test]
fn lms_core_writes_one_json_object_per_log_line() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let database_url = format!("sqlite://{}", folder.path().join("lms.sqlite3").display());
    let lines = start_up_log(&database_url);
    let listening = lines
        .iter()
        .find(|event| event["message"] == LISTENING)
        .expect("listening");
    assert!(
        listening["addr"]
            .as_str()
            .is_some_and(|a| a.starts_with("127.0.0.1:"))
    );
    assert_eq!(listening["level"], "INFO");
}

/// A PostgreSQL server without autovacuum is named in a warning at start, and one with it
/// is not: whichever the test's server is, asked independently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lms_core_warns_at_start_when_postgresql_runs_without_autovacuum() {
    let Some(database) = TestDatabase::create(Backend::Postgres).await else {
        eprintln!("PostgreSQL not configured (LMS_TEST_POSTGRES_URL): skipped");
        return;
    };
    let server_setting = {
        let db = database.connect().await;
        let row = db
            .query_one_raw(Statement::from_string(
                DbBackend::Postgres,
                "SHOW autovacuum",
            ))
            .await
            .expect("SHOW autovacuum")
            .expect("one row");
        let setting: String = row.try_get("", "autovacuum").expect("text");
        db.close().await.expect("closed");
        setting
    };
    let url = database.url().to_owned();
    let lines = tokio::task::spawn_blocking(move || start_up_log(&url))
        .await
        .expect("the core's log read");
    let warnings: Vec<_> = lines
        .iter()
        .filter(|event| {
            event["level"] == "WARN"
                && event["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("autovacuum off"))
        })
        .collect();
    if setting_is_on(&server_setting) {
        assert!(warnings.is_empty(), "{warnings:#?}");
    } else {
        assert_eq!(warnings.len(), 1, "one warning: {lines:#?}");
    }
}

fn setting_is_on(setting: &str) -> bool {
    match setting {
        "on" => true,
        "off" => false,
        other => panic!("autovacuum is {other:?}"),
    }
}

const LISTENING: &str = "lms-core listening (gRPC)";

/// Starts `lms-core` on `database_url` with JSON logs, reads its log up to the line that
/// says it listens (each line must be one JSON object), and stops it.
fn start_up_log(database_url: &str) -> Vec<serde_json::Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lms-core"))
        .args(["--log-format", "json", "--create-database"])
        .args(["--database-url", database_url, "--grpc-addr", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lms-core starts");
    let stderr = child.stderr.take().expect("stderr");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut lines = Vec::new();
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        let event: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not one JSON object ({e}): {line}"));
        let listening = event["message"] == LISTENING;
        lines.push(event);
        if listening {
            break;
        }
        assert!(Instant::now() < deadline, "never listening: {lines:#?}");
    }
    child.kill().expect("lms-core stops");
    child.wait().expect("lms-core exits");
    assert!(
        lines.iter().any(|event| event["message"] == LISTENING),
        "{lines:#?}"
    );
    lines
}
