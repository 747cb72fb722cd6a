//! The `lms-gateway` binary logs as `--log-format json` asks: one JSON object per line, the
//! same set-up as `lms` and `lms-core` (`lms_runtime::telemetry`).

use std::{
    io::{BufRead as _, BufReader},
    process::{Command, Stdio},
};

#[test]
fn lms_gateway_writes_one_json_object_per_log_line() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lms-gateway"))
        .args(["--log-format", "json", "--http-addr", "127.0.0.1:0"])
        // Nothing listens there: the gateway starts anyway and answers 503 until it does.
        .args(["--core-url", "http://127.0.0.1:9"])
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lms-gateway starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut listening = None;
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        let event: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not one JSON object ({e}): {line}"));
        if event["message"] == "lms-gateway listening" {
            listening = Some(event);
            break;
        }
    }
    child.kill().expect("lms-gateway stops");
    child.wait().expect("lms-gateway exits");
    let event = listening.expect("a listening line");
    assert_eq!(event["level"], "INFO");
    assert!(
        event["addr"]
            .as_str()
            .is_some_and(|a| a.starts_with("127.0.0.1:"))
    );
}
