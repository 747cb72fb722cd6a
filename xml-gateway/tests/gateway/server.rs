//! The HTTP server under the router, over real sockets: its timeouts, its connection limit,
//! and hyper's own refusals answered in the contract's XML error format.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use lms_gateway::{App, GatewaySettings, HttpServerSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const AUTH_HEADERS: &str = "X-Auth-Account-Url: https://acme.example.com\r\n\
                            X-Auth-Email: owner@acme.example.com\r\n\
                            X-Auth-Password: correct horse\r\n";

struct Server {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<anyhow::Result<()>>,
}

impl Server {
    /// The gateway with `server` limits, its core on a closed port (every call answers 503).
    async fn start(server: HttpServerSettings) -> Self {
        let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let core_url = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let app = App::build(GatewaySettings {
            http_addr: "127.0.0.1:0".parse().unwrap(),
            core_urls: vec![core_url],
            core_timeout_ms: 200,
            metrics_addr: None,
            public_url: None,
            server,
        })
        .await
        .unwrap();
        let addr = app.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(app.run_until(async {
            let _ = stopped.await;
        }));
        Self { addr, stop, task }
    }

    async fn stop(self) {
        self.stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("the server stops")
            .unwrap()
            .unwrap();
    }
}

fn limits(header_read_ms: u64, body_ms: u64, max_connections: usize) -> HttpServerSettings {
    HttpServerSettings {
        header_read_timeout_ms: header_read_ms,
        idle_timeout_ms: 5_000,
        body_timeout_ms: body_ms,
        max_connections,
    }
}

/// Sends `request` on a new connection and reads until the server closes it.
async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    read_to_close(&mut stream).await
}

async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes");
    String::from_utf8_lossy(&answer).into_owned()
}

/// Asserts an XML error answer with `status` and a request id; returns the answer.
#[track_caller]
fn assert_xml_error(answer: &str, status: u16) {
    assert!(
        answer.starts_with(&format!("HTTP/1.1 {status} ")),
        "{answer:.300}"
    );
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let head = head.to_ascii_lowercase();
    assert!(head.contains("\r\nx-request-id: "), "{head}");
    assert!(
        head.contains("\r\ncontent-type: application/xml; charset=utf-8"),
        "{head}"
    );
    assert!(
        body.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?><error>"),
        "{body}"
    );
    assert!(body.contains(&format!("<code>{status}</code>")), "{body}");
    assert!(body.contains("<requestId>"), "{body}");
}

#[tokio::test]
async fn a_client_trickling_its_headers_is_closed_after_the_header_read_timeout() {
    let server = Server::start(limits(300, 5_000, 64)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let started = Instant::now();
    stream
        .write_all(b"GET /gamification/points HTTP/1.1\r\n")
        .await
        .unwrap();
    // One header line every 100 ms for 5 s, unless the server closes first.
    let trickle = async {
        for n in 0..50 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if stream
                .write_all(format!("X-Slow-{n}: x\r\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
            let mut byte = [0_u8; 1];
            if let Ok(Ok(0) | Err(_)) =
                tokio::time::timeout(Duration::from_millis(1), stream.read(&mut byte)).await
            {
                break;
            }
        }
    };
    trickle.await;
    let closed_after = started.elapsed();
    assert!(
        closed_after < Duration::from_secs(2),
        "closed after {closed_after:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_kept_alive_connection_without_a_next_request_is_closed() {
    let server = Server::start(limits(300, 5_000, 64)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let answer = read_to_close(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    server.stop().await;
}

/// Reads one answer (head and `Content-Length` body) from a connection that stays open.
async fn read_answer(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&answer).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if answer.len() >= end + 4 + length {
                return text;
            }
        }
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
            .await
            .expect("an answer")
            .unwrap();
        assert!(read > 0, "closed before a whole answer: {text}");
        answer.extend_from_slice(&buffer[..read]);
    }
}

#[tokio::test]
async fn kept_alive_connections_advertise_a_timeout_the_server_keeps() {
    // Idle keep-alive connections close after the 2.5 s header-read timeout: advertised as 1 s.
    let server = Server::start(limits(2_500, 5_000, 64)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let request = b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n";
    stream.write_all(request).await.unwrap();
    let answer = read_answer(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("\r\nkeep-alive: timeout=1\r\n"),
        "{answer}"
    );
    // A client that reuses the connection at the advertised moment finds it open.
    tokio::time::sleep(Duration::from_secs(1)).await;
    stream.write_all(request).await.unwrap();
    let again = read_answer(&mut stream).await;
    assert!(again.starts_with("HTTP/1.1 404 "), "{again}");
    // Left idle past the header-read timeout, it is closed.
    let started = Instant::now();
    let rest = read_to_close(&mut stream).await;
    assert!(rest.is_empty(), "{rest}");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "closed after {:?}, before the advertised second and more",
        started.elapsed()
    );
    server.stop().await;
}

#[tokio::test]
async fn a_trickled_body_is_408_in_xml_after_the_body_deadline() {
    let server = Server::start(limits(5_000, 500, 64)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /department HTTP/1.1\r\nHost: x\r\n{AUTH_HEADERS}\
         Content-Type: application/xml\r\nContent-Length: 100\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for _ in 0..100 {
            if writer.write_all(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), reader.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_xml_error(&answer, 408);
    assert!(
        !answer.to_ascii_lowercase().contains("keep-alive:"),
        "a closing connection promises no keep-alive: {answer}"
    );
    trickle.abort();
    server.stop().await;
}

#[tokio::test]
async fn connections_over_the_limit_wait_and_the_service_stays_reachable() {
    let server = Server::start(limits(1_000, 5_000, 4)).await;
    // Four connections that send nothing hold every slot.
    let mut holders = Vec::new();
    for _ in 0..4 {
        holders.push(TcpStream::connect(server.addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let request = b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    // A fifth waits in the backlog: connected, but not answered while the slots are held.
    let mut waiting = TcpStream::connect(server.addr).await.unwrap();
    waiting.write_all(request).await.unwrap();
    let mut byte = [0_u8; 1];
    assert!(
        tokio::time::timeout(Duration::from_millis(300), waiting.read(&mut byte))
            .await
            .is_err(),
        "answered over the limit"
    );
    // The idle holders are closed by the header-read timeout; the waiting client is served.
    let answer = read_to_close(&mut waiting).await;
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    let answer = exchange(server.addr, request).await;
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    drop(holders);
    server.stop().await;
}

#[tokio::test]
async fn a_connection_stalled_mid_request_is_closed_after_the_idle_timeout() {
    let server = Server::start(HttpServerSettings {
        idle_timeout_ms: 600,
        ..limits(10_000, 10_000, 64)
    })
    .await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    // Half a body, then nothing: the body deadline (10 s) is far; the idle timeout closes it.
    let head = format!(
        "POST /department HTTP/1.1\r\nHost: x\r\n{AUTH_HEADERS}\
         Content-Type: application/xml\r\nContent-Length: 100\r\n\r\n<request>"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let answer = read_to_close(&mut stream).await;
    assert_eq!(answer, "", "closed without an answer");
    let closed_after = started.elapsed();
    assert!(
        closed_after >= Duration::from_millis(400) && closed_after < Duration::from_secs(3),
        "closed after {closed_after:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_idle_timeout_not_longer_than_the_core_deadline_is_refused_at_start() {
    let settings = GatewaySettings {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        core_urls: vec!["http://127.0.0.1:1".to_owned()],
        core_timeout_ms: 10_000,
        metrics_addr: None,
        public_url: None,
        server: HttpServerSettings {
            idle_timeout_ms: 10_000,
            ..HttpServerSettings::default()
        },
    };
    let error = App::build(settings).await.unwrap_err();
    assert!(error.to_string().contains("idle timeout"), "{error}");
}

#[tokio::test]
async fn hypers_own_refusals_are_xml_errors_with_a_request_id() {
    let server = Server::start(limits(5_000, 5_000, 64)).await;

    let long_uri = format!(
        "GET /gamification/points?userIds={} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(70_000)
    );
    assert_xml_error(&exchange(server.addr, long_uri.as_bytes()).await, 414);

    let huge_header = format!(
        "GET /gamification/points HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(600_000)
    );
    assert_xml_error(&exchange(server.addr, huge_header.as_bytes()).await, 431);

    let mut many_headers = String::from("GET /gamification/points HTTP/1.1\r\nHost: x\r\n");
    for n in 0..200 {
        many_headers.push_str(&format!("X-H{n}: v\r\n"));
    }
    many_headers.push_str("\r\n");
    assert_xml_error(&exchange(server.addr, many_headers.as_bytes()).await, 431);

    for malformed in [
        &b"NOT HTTP AT ALL\r\n\r\n"[..],
        b"GET /gamification/points HTTP/1.1\r\nBad Header\r\n\r\n",
        b"GET /gamification/points HTTP/1.1\r\nX-Ctl: a\x01b\r\n\r\n",
    ] {
        assert_xml_error(&exchange(server.addr, malformed).await, 400);
    }
    server.stop().await;
}
