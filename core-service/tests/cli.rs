//! What `lms-core` tells a user when it cannot start, run as the real binary, and its help.

use std::net::TcpListener;
use std::process::{Command, Output};

fn lms_core(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lms-core"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .env_remove("DATABASE_URL")
        .output()
        .expect("lms-core runs")
}

#[test]
fn a_refused_postgres_port_stops_the_start_naming_the_address_once() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let url = format!("postgres://lms@127.0.0.1:{port}/lms");
    let output = lms_core(&["--database-url", &url, "--grpc-addr", "127.0.0.1:0"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    let refused = format!("connection refused by 127.0.0.1:{port}");
    assert_eq!(stderr.matches(&refused).count(), 1, "{stderr}");
    assert!(!stderr.contains("pool timed out"), "{stderr}");
}

#[test]
fn the_help_is_written_for_users() {
    let output = lms_core(&["--help"]);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.starts_with("The LMS core"), "{help}");
    for internal in ["clap", "struct", "flattened"] {
        assert!(!help.contains(internal), "shows {internal:?}:\n{help}");
    }
    assert!(help.contains("--database-url"), "{help}");
}
