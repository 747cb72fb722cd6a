//! `lms healthcheck`, the real binary, against a real core's gRPC health, plain HTTP servers
//! answering 200 and 503, and a port nobody listens on.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::process::{Command, Output};

use lms::{Stack, StackSettings};

fn healthcheck(url: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lms"))
        .args(["healthcheck", url, "--timeout-ms", "5000"])
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("lms runs")
}

/// A one-request HTTP server answering `status_line`; its address.
fn http_server(status_line: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().expect("its address").to_string();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("a connection");
        let mut request = [0; 1024];
        let read = stream.read(&mut request).expect("a request");
        assert!(request[..read].starts_with(b"GET /readyz HTTP/1.1\r\n"));
        write!(stream, "{status_line}\r\nContent-Length: 0\r\n\r\n").expect("answered");
    });
    addr
}

#[test]
fn http_is_healthy_on_2xx_and_unhealthy_otherwise() {
    let ok = healthcheck(&format!("http://{}/readyz", http_server("HTTP/1.1 200 OK")));
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let down = healthcheck(&format!(
        "http://{}/readyz",
        http_server("HTTP/1.1 503 Service Unavailable")
    ));
    assert_eq!(down.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&down.stderr);
    assert!(stderr.contains("503 Service Unavailable"), "{stderr}");
}

#[test]
fn a_port_nobody_listens_on_is_unhealthy_and_named() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    for url in [
        format!("http://127.0.0.1:{port}/readyz"),
        format!("grpc://127.0.0.1:{port}"),
    ] {
        let output = healthcheck(&url);
        assert_eq!(output.status.code(), Some(1), "{url}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("cannot connect to 127.0.0.1:{port}")),
            "{url}: {stderr}"
        );
    }
    let unknown = healthcheck("ftp://127.0.0.1:21");
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("grpc://HOST:PORT"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_core_is_healthy_over_grpc() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let url = format!("sqlite://{}", dir.path().join("lms.sqlite3").display());
    let mut settings = StackSettings::for_database(url).on_free_ports();
    settings.core.create_database = true;
    let stack = Stack::build(&settings).await.expect("the service starts");
    let grpc = format!("grpc://{}", stack.grpc_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(stack.run_until(async move {
        let _ = stopped.await;
    }));
    let output = tokio::task::spawn_blocking(move || healthcheck(&grpc))
        .await
        .expect("the probe ran");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = stop.send(());
    running.await.expect("the service task").expect("stops");
}
