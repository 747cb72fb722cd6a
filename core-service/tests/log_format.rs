//! The `lms-core` binary logs as `--log-format json` asks: one JSON object per line, the same
//! set-up as `lms` and `lms-gateway` (`lms_runtime::telemetry`).

use std::{
    io::{BufRead as _, BufReader},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

#[test]
fn lms_core_writes_one_json_object_per_log_line() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let database_url = format!("sqlite://{}", folder.path().join("lms.sqlite3").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_lms-core"))
        .args(["--log-format", "json", "--create-database"])
        .args([
            "--database-url",
            &database_url,
            "--grpc-addr",
            "127.0.0.1:0",
        ])
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
        lines.push(line);
        if event["message"] == "lms-core listening (gRPC)" {
            assert!(
                event["addr"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("127.0.0.1:"))
            );
            assert_eq!(event["level"], "INFO");
            break;
        }
        assert!(Instant::now() < deadline, "never listening: {lines:#?}");
    }
    child.kill().expect("lms-core stops");
    child.wait().expect("lms-core exits");
    assert!(
        lines.iter().any(|l| l.contains("lms-core listening")),
        "{lines:#?}"
    );
}
