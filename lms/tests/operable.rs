//! What an operator sees of a running `lms up`, through the real binary: JSON log lines on
//! stderr (one per request and per gRPC call, refused logins and the lockout without
//! secrets), Prometheus metrics that move with real requests, the HTTP health probes, and
//! the traces an OTLP/gRPC collector (a real receiver in this test) gets: one trace per
//! request, gateway SERVER → gateway CLIENT → core SERVER → database spans, two services.

use std::{
    collections::HashMap,
    io::{BufRead as _, BufReader},
    net::SocketAddr,
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex, mpsc},
    time::{Duration, Instant},
};

use opentelemetry_proto::tonic::{
    collector::trace::v1::{
        ExportTraceServiceRequest, ExportTraceServiceResponse,
        trace_service_server::{TraceService, TraceServiceServer},
    },
    common::v1::{AnyValue, KeyValue, any_value::Value},
    trace::v1::{Span, span::SpanKind, status::StatusCode},
};

const STARTUP: Duration = Duration::from_secs(60);
const DEMO_GROUP: &str = "019a0000-de00-7000-8000-000000000301";
const DEMO_ACCOUNT: &str = "https://demo.lms.example";
const DEMO_LOGIN: &str = "owner@demo.lms.example";
const DEMO_PASSWORD: &str = "demo-password";
const WRONG_PASSWORD: &str = "not-the-password-7f3a";

/// A running `lms up --demo`: its printed lines and everything it logged.
struct Running {
    child: Child,
    printed: Vec<String>,
    logged: Arc<Mutex<Vec<String>>>,
    _folder: tempfile::TempDir,
}

fn start(log_format: &str, extra_args: &[&str], env: &[(&str, String)]) -> Running {
    start_reading_log_after(log_format, extra_args, env, None)
}

/// As [`start`]; its log (stderr) is read only once `gate` receives, until then it fills the
/// pipe and stays there, as a log on a stalled disk would.
fn start_reading_log_after(
    log_format: &str,
    extra_args: &[&str],
    env: &[(&str, String)],
    gate: Option<mpsc::Receiver<()>>,
) -> Running {
    let folder = tempfile::tempdir().expect("temporary folder");
    let database_url = format!("sqlite://{}", folder.path().join("lms.sqlite3").display());
    let mut command = Command::new(env!("CARGO_BIN_EXE_lms"));
    command
        .args(["--log-format", log_format, "up", "--demo"])
        .args(["--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"])
        .args(["--database-url", &database_url])
        .args(["--argon2-memory-kib", "64", "--argon2-iterations", "1"])
        .args(["--throttled-reply-delay-ms", "1"])
        .args(extra_args)
        .env("RUST_LOG", "info")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_SERVICE_NAME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("lms starts");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let logged = Arc::new(Mutex::new(Vec::new()));
    let sink = logged.clone();
    std::thread::spawn(move || {
        if let Some(gate) = gate {
            let _ = gate.recv();
        }
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let mut printed = Vec::new();
    loop {
        let line = lines
            .recv_timeout(STARTUP)
            .unwrap_or_else(|_| panic!("lms did not start: {printed:#?}"));
        let done = line.contains("Press Ctrl-C to stop.");
        printed.push(line);
        if done {
            break;
        }
    }
    Running {
        child,
        printed,
        logged,
        _folder: folder,
    }
}

impl Running {
    fn printed(&self, prefix: &str) -> String {
        self.printed
            .iter()
            .find_map(|line| {
                line.trim()
                    .strip_prefix(prefix)
                    .map(|r| r.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no {prefix:?} in {:#?}", self.printed))
    }

    fn base_url(&self) -> String {
        self.printed("XML interface:")
    }

    /// Stops it (SIGINT) and returns every log line once it has exited.
    fn stop(mut self) -> Vec<String> {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .expect("kill runs");
        self.child.wait().expect("lms exits");
        // The reader thread ends with the pipe; give it a moment to take the last lines.
        std::thread::sleep(Duration::from_millis(200));
        self.logged.lock().unwrap().clone()
    }
}

async fn get_group(client: &reqwest::Client, base_url: &str, password: &str) -> u16 {
    client
        .get(format!("{base_url}/group/{DEMO_GROUP}"))
        .header("X-Auth-Account-Url", DEMO_ACCOUNT)
        .header("X-Auth-Email", DEMO_LOGIN)
        .header("X-Auth-Password", password)
        .send()
        .await
        .expect("the gateway answers")
        .status()
        .as_u16()
}

/// The value of one sample (`name{labels} value`) in a Prometheus text page, 0 when absent.
fn sample(page: &str, series: &str) -> f64 {
    page.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse::<f64>().ok())
        .unwrap_or(0.0)
}

fn parse_json_lines(lines: &[String]) -> Vec<serde_json::Value> {
    lines
        .iter()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a log line is not one JSON object ({e}): {line}"))
        })
        .collect()
}

/// Requests do not wait for the log: with stderr a full pipe nobody reads (a stalled disk,
/// a stuck collector), requests are still answered, and every line arrives once it is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_are_answered_while_the_log_cannot_be_written() {
    const REQUESTS: usize = 600;
    let (open, gate) = mpsc::channel();
    let running = start_reading_log_after("json", &[], &[], Some(gate));
    let base_url = running.base_url();
    let client = reqwest::Client::new();
    // Two lines of some 300 bytes a request: far more than a pipe holds (64 KiB).
    for n in 0..REQUESTS {
        let status = tokio::time::timeout(
            Duration::from_secs(10),
            get_group(&client, &base_url, DEMO_PASSWORD),
        )
        .await
        .unwrap_or_else(|_| panic!("request {n} waited for the log"));
        assert_eq!(status, 200);
    }
    open.send(()).expect("the log reader waits");
    let logged = running.stop();
    let finished = parse_json_lines(&logged)
        .into_iter()
        .filter(|e| e["message"] == "request finished" && e["route"] == "/group/{group_id}")
        .count();
    assert_eq!(finished, REQUESTS, "no line is lost");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_metrics_and_probes_show_what_happened_without_secrets() {
    let running = start("json", &["--metrics-addr", "127.0.0.1:0"], &[]);
    let base_url = running.base_url();
    let metrics_url = running.printed("metrics:");
    let client = reqwest::Client::new();

    let scrape = || async {
        client
            .get(&metrics_url)
            .send()
            .await
            .expect("the metrics endpoint answers")
            .text()
            .await
            .expect("a page")
    };
    let before = scrape().await;

    assert_eq!(get_group(&client, &base_url, DEMO_PASSWORD).await, 200);
    assert_eq!(get_group(&client, &base_url, DEMO_PASSWORD).await, 200);
    // Ten failures lock the login; the eleventh attempt is throttled.
    for _ in 0..10 {
        assert_eq!(get_group(&client, &base_url, WRONG_PASSWORD).await, 401);
    }
    assert_eq!(get_group(&client, &base_url, WRONG_PASSWORD).await, 429);
    let healthz = client
        .get(format!("{base_url}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(healthz.status(), 200);
    let readyz = client
        .get(format!("{base_url}/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(readyz.status(), 200, "the core and its database answer");
    // Probes sit outside the interface's prefixes and its authentication.
    let prefixed = client
        .get(format!("{base_url}/api/v2/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(prefixed.status(), 404);

    // Straight to the gRPC port, as a script guessing passwords would call it.
    let grpc_addr = running.printed("gRPC (lms.v1):");
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{grpc_addr}"))
        .unwrap()
        .connect()
        .await
        .expect("the core's gRPC port answers");
    let mut request = tonic::Request::new(lms_proto::v1::GetGroupRequest {
        group_id: DEMO_GROUP.to_owned(),
    });
    let metadata = request.metadata_mut();
    metadata.insert(
        lms_proto::metadata::ACCOUNT_URL,
        DEMO_ACCOUNT.parse().unwrap(),
    );
    metadata.insert(
        lms_proto::metadata::EMAIL,
        "intern@demo.lms.example".parse().unwrap(),
    );
    metadata.insert(
        lms_proto::metadata::PASSWORD,
        WRONG_PASSWORD.parse().unwrap(),
    );
    let refused = lms_proto::v1::admin_service_client::AdminServiceClient::new(channel)
        .get_group(request)
        .await
        .expect_err("a wrong password is refused");
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);

    let after = scrape().await;
    let moved = |series: &str| sample(&after, series) - sample(&before, series);
    let group_ok =
        r#"http_server_requests_total{route="/group/{group_id}",method="GET",status="200"}"#;
    let group_401 =
        r#"http_server_requests_total{route="/group/{group_id}",method="GET",status="401"}"#;
    let group_429 =
        r#"http_server_requests_total{route="/group/{group_id}",method="GET",status="429"}"#;
    assert_eq!(moved(group_ok), 2.0, "{after}");
    assert_eq!(moved(group_401), 10.0, "{after}");
    assert_eq!(moved(group_429), 1.0, "{after}");
    assert_eq!(
        moved(
            r#"http_server_request_duration_seconds_count{route="/group/{group_id}",method="GET"}"#
        ),
        13.0
    );
    assert_eq!(
        moved(
            r#"rpc_server_requests_total{rpc_service="lms.v1.AdminService",rpc_method="GetGroup",code="OK"}"#
        ),
        2.0,
        "{after}"
    );
    assert_eq!(
        moved(
            r#"rpc_server_requests_total{rpc_service="lms.v1.AdminService",rpc_method="GetGroup",code="UNAUTHENTICATED"}"#
        ),
        11.0,
        "ten through the gateway, one straight to the gRPC port"
    );
    assert_eq!(
        moved(
            r#"rpc_server_requests_total{rpc_service="lms.v1.AdminService",rpc_method="GetGroup",code="RESOURCE_EXHAUSTED"}"#
        ),
        1.0
    );
    assert!(
        moved(r#"lms_credential_cache_total{result="hit"}"#) >= 1.0,
        "{after}"
    );
    assert!(
        moved(r#"lms_credential_cache_total{result="miss"}"#) >= 10.0,
        "{after}"
    );
    assert_eq!(moved("lms_login_failures_total"), 11.0);
    assert_eq!(moved("lms_logins_throttled_total"), 1.0);
    assert!(moved("lms_password_verification_wait_seconds_count") >= 10.0);
    assert_eq!(sample(&after, "lms_db_up"), 1.0, "the probe has answered");
    assert!(
        sample(&after, "lms_db_pool_max_connections") >= 1.0,
        "{after}"
    );
    assert!(
        after.contains(r#"lms_db_pool_connections{state="idle"}"#),
        "{after}"
    );
    assert!(
        after.contains("# TYPE http_server_request_duration_seconds histogram"),
        "{after}"
    );
    assert!(
        !after.contains(DEMO_GROUP),
        "routes are labelled by template, never by id"
    );

    let lines = running.stop();
    let events = parse_json_lines(&lines);
    for line in &lines {
        assert!(
            !line.contains(DEMO_PASSWORD),
            "a password in the log: {line}"
        );
        assert!(
            !line.contains(WRONG_PASSWORD),
            "a password in the log: {line}"
        );
        assert!(!line.contains("\u{1b}["), "colour codes in a pipe: {line}");
    }
    let finished: Vec<_> = events
        .iter()
        .filter(|e| e["message"] == "request finished" && e["route"] == "/group/{group_id}")
        .collect();
    assert_eq!(finished.len(), 13, "one line per request");
    let ok = finished
        .iter()
        .find(|e| e["status"] == 200)
        .expect("a 200 line");
    assert_eq!(ok["method"], "GET");
    assert_eq!(ok["path"], format!("/group/{DEMO_GROUP}"));
    assert!(ok["latency_ms"].as_f64().is_some(), "{ok}");
    assert!(
        ok["request_id"].as_str().is_some_and(|id| !id.is_empty()),
        "{ok}"
    );
    assert!(
        ok["client"]
            .as_str()
            .is_some_and(|c| c.starts_with("127.0.0.1:")),
        "{ok}"
    );
    let calls: Vec<_> = events
        .iter()
        .filter(|e| e["message"] == "call finished" && e["rpc.method"] == "GetGroup")
        .collect();
    assert_eq!(calls.len(), 14, "one line per gRPC call");
    assert!(
        calls.iter().any(|e| e["request_id"] == ok["request_id"]),
        "the core's line carries the request's id"
    );
    let direct = calls
        .iter()
        .find(|e| {
            e["peer"]
                .as_str()
                .is_some_and(|p| p.starts_with("127.0.0.1:"))
        })
        .expect("the direct call's line names its peer");
    assert_eq!(direct["status"], "UNAUTHENTICATED");
    assert!(direct["latency_ms"].as_f64().is_some(), "{direct}");
    assert!(
        calls
            .iter()
            .any(|e| e["status"] == "UNAUTHENTICATED" && e["grpc_status"] == 16)
    );
    let refused: Vec<_> = events
        .iter()
        .filter(|e| {
            e["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("login refused"))
        })
        .collect();
    assert_eq!(
        refused.len(),
        11,
        "every failed login is logged, over HTTP or gRPC"
    );
    assert!(
        refused
            .iter()
            .any(|e| e["login"] == "intern@demo.lms.example"),
        "the direct gRPC guess is logged"
    );
    assert_eq!(refused[0]["login"], DEMO_LOGIN);
    assert_eq!(refused[0]["account_url"], DEMO_ACCOUNT);
    let locked: Vec<_> = events
        .iter()
        .filter(|e| {
            e["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("login locked"))
        })
        .collect();
    assert_eq!(locked.len(), 1, "the lockout is logged once");
    assert_eq!(locked[0]["level"], "WARN");
}

// ---------------------------------------------------------------------------------------------
// Traces

/// An OTLP/gRPC trace receiver keeping every span with its service's name.
#[derive(Default, Clone)]
struct Receiver {
    spans: Arc<Mutex<Vec<(String, Span)>>>,
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = self.spans.lock().unwrap();
        for resource_spans in request.into_inner().resource_spans {
            let service = resource_spans
                .resource
                .as_ref()
                .and_then(|r| string_attribute(&r.attributes, "service.name"))
                .unwrap_or_default();
            for scope in resource_spans.scope_spans {
                for span in scope.spans {
                    spans.push((service.clone(), span));
                }
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|AnyValue { value }| value.as_ref())
}

fn string_attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    match attribute(attributes, key) {
        Some(Value::StringValue(s)) => Some(s.clone()),
        _ => None,
    }
}

fn int_attribute(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match attribute(attributes, key) {
        Some(Value::IntValue(i)) => Some(*i),
        _ => None,
    }
}

async fn start_receiver() -> (SocketAddr, Receiver) {
    let receiver = Receiver::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = TraceServiceServer::new(receiver.clone());
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    (addr, receiver)
}

/// Waits until `done` holds over the received spans.
async fn received(receiver: &Receiver, what: &str, done: impl Fn(&[(String, Span)]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if done(&receiver.spans.lock().unwrap()) {
            return;
        }
        assert!(Instant::now() < deadline, "never received {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_is_one_trace_from_the_gateway_through_the_core_to_the_database() {
    let (collector, receiver) = start_receiver().await;
    let running = start(
        "json",
        &["--auth-revision-poll-ms", "50"],
        &[
            // The traces-only variable, as the issue asked the core to honour.
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                format!("http://{collector}"),
            ),
            ("OTEL_BSP_SCHEDULE_DELAY", "100".to_owned()),
        ],
    );
    let base_url = running.base_url();
    let client = reqwest::Client::new();
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    // Past the 512 bytes a vendor must pass on: kept by the gateway, not sent to the core.
    let oversized_tracestate = (0..10)
        .map(|n| format!("k{n}={}", "a".repeat(60)))
        .collect::<Vec<_>>()
        .join(",");
    let status = client
        .get(format!("{base_url}/group/{DEMO_GROUP}"))
        .header("X-Auth-Account-Url", DEMO_ACCOUNT)
        .header("X-Auth-Email", DEMO_LOGIN)
        .header("X-Auth-Password", DEMO_PASSWORD)
        .header("traceparent", format!("00-{trace_id}-00f067aa0ba902b7-01"))
        .header("tracestate", &oversized_tracestate)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
    let points = client
        .get(format!("{base_url}/gamification/points"))
        .header("X-Auth-Account-Url", DEMO_ACCOUNT)
        .header("X-Auth-Email", DEMO_LOGIN)
        .header("X-Auth-Password", DEMO_PASSWORD)
        .send()
        .await
        .unwrap();
    assert_eq!(points.status(), 200);
    let _ = points.text().await.unwrap();
    let missing = client
        .get(format!(
            "{base_url}/group/019a0000-de00-7000-8000-0000000009ff"
        ))
        .header("X-Auth-Account-Url", DEMO_ACCOUNT)
        .header("X-Auth-Email", DEMO_LOGIN)
        .header("X-Auth-Password", DEMO_PASSWORD)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    let trace = hex_bytes(trace_id);
    received(&receiver, "the core's database spans", |spans| {
        spans.iter().any(|(service, s)| {
            s.trace_id == trace && service == "lms-core" && s.name.starts_with("sea_orm")
        })
    })
    .await;
    received(&receiver, "the points request", |spans| {
        spans
            .iter()
            .any(|(_, s)| s.name == "GET /gamification/points")
    })
    .await;
    // Some time for polls of the auth revision to have been made (every 50 ms).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let lines = running.stop();
    let spans = receiver.spans.lock().unwrap().clone();
    let by_id: HashMap<Vec<u8>, &(String, Span)> = spans
        .iter()
        .map(|entry| (entry.1.span_id.clone(), entry))
        .collect();

    let of_trace: Vec<_> = spans.iter().filter(|(_, s)| s.trace_id == trace).collect();
    let server = of_trace
        .iter()
        .find(|(_, s)| s.name == "GET /group/{group_id}")
        .expect("the gateway's SERVER span");
    assert_eq!(server.0, "lms-gateway");
    assert_eq!(server.1.kind, SpanKind::Server as i32);
    assert_eq!(
        server.1.parent_span_id,
        hex_bytes("00f067aa0ba902b7"),
        "the caller's span"
    );
    let attrs = &server.1.attributes;
    assert_eq!(
        string_attribute(attrs, "http.request.method").as_deref(),
        Some("GET")
    );
    assert_eq!(
        string_attribute(attrs, "http.route").as_deref(),
        Some("/group/{group_id}")
    );
    assert_eq!(int_attribute(attrs, "http.response.status_code"), Some(200));

    let client_span = of_trace
        .iter()
        .find(|(_, s)| {
            s.kind == SpanKind::Client as i32 && s.name == "lms.v1.AdminService/GetGroup"
        })
        .expect("the gateway's CLIENT span");
    assert_eq!(client_span.0, "lms-gateway");
    assert!(
        descends_from(&by_id, &client_span.1, &server.1.span_id),
        "the CLIENT span is inside the request's SERVER span"
    );
    assert_eq!(
        string_attribute(&client_span.1.attributes, "rpc.system").as_deref(),
        Some("grpc")
    );
    assert_eq!(
        int_attribute(&client_span.1.attributes, "rpc.grpc.status_code"),
        Some(0)
    );

    let core = of_trace
        .iter()
        .find(|(_, s)| {
            s.kind == SpanKind::Server as i32 && s.name == "lms.v1.AdminService/GetGroup"
        })
        .expect("the core's SERVER span");
    assert_eq!(core.0, "lms-core");
    assert_eq!(server.1.trace_state, oversized_tracestate);
    assert!(core.1.trace_state.is_empty(), "{}", core.1.trace_state);
    assert_eq!(
        core.1.parent_span_id, client_span.1.span_id,
        "child of the CLIENT span"
    );
    let attrs = &core.1.attributes;
    assert_eq!(
        string_attribute(attrs, "rpc.system").as_deref(),
        Some("grpc")
    );
    assert_eq!(
        string_attribute(attrs, "rpc.service").as_deref(),
        Some("lms.v1.AdminService")
    );
    assert_eq!(
        string_attribute(attrs, "rpc.method").as_deref(),
        Some("GetGroup")
    );
    assert_eq!(int_attribute(attrs, "rpc.grpc.status_code"), Some(0));

    // Every database span of the request descends from the core's SERVER span.
    let db_spans: Vec<_> = of_trace
        .iter()
        .filter(|(_, s)| s.name.starts_with("sea_orm"))
        .collect();
    assert!(!db_spans.is_empty());
    for (service, span) in &db_spans {
        assert_eq!(service, "lms-core");
        assert_eq!(span.kind, SpanKind::Client as i32);
        assert!(
            descends_from(&by_id, span, &core.1.span_id),
            "a database span outside the request: {}",
            span.name
        );
    }

    // The points stream's pages are in its request's trace, not traces of their own; and no
    // background work (the auth revision poll) makes a trace: every root is a request.
    let roots: Vec<_> = spans
        .iter()
        .filter(|(_, s)| s.parent_span_id.is_empty() && s.kind != SpanKind::Server as i32)
        // Start-up work: the migrations and the demo's import, a trace each.
        .filter(|(_, s)| s.name != "migrate" && !s.name.starts_with("import"))
        .map(|(_, s)| {
            (
                s.name.clone(),
                string_attribute(&s.attributes, "db.statement"),
            )
        })
        .collect();
    assert!(roots.is_empty(), "roots that are no request: {roots:#?}");
    let points_server = spans
        .iter()
        .find(|(_, s)| s.name == "GET /gamification/points")
        .unwrap();
    let core_points = spans
        .iter()
        .find(|(_, s)| {
            s.kind == SpanKind::Server as i32 && s.name == "lms.v1.AdminService/GetPoints"
        })
        .expect("the core's points span");
    assert_eq!(core_points.1.trace_id, points_server.1.trace_id);
    assert!(
        spans.iter().any(|(_, s)| s.name.starts_with("sea_orm")
            && descends_from(&by_id, s, &core_points.1.span_id)),
        "the points pages are read inside the call"
    );

    // A 404 is the caller's mistake: no error status; its status code is an integer.
    let not_found = spans
        .iter()
        .find(|(_, s)| {
            s.name == "GET /group/{group_id}"
                && int_attribute(&s.attributes, "http.response.status_code") == Some(404)
        })
        .expect("the 404's span");
    assert_ne!(
        not_found.1.status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );
    assert!(
        !lines.iter().any(|l| l.contains("\"level\":\"ERROR\"")),
        "{lines:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_that_is_down_costs_one_warning() {
    // A port nothing listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    // Text lines this time: what a terminal-less operator reads in a file.
    let running = start(
        "text",
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{closed}")),
            ("OTEL_BSP_SCHEDULE_DELAY", "100".to_owned()),
        ],
    );
    let base_url = running.base_url();
    let client = reqwest::Client::new();
    for _ in 0..5 {
        assert_eq!(get_group(&client, &base_url, DEMO_PASSWORD).await, 200);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let lines = running.stop();
    let warnings = lines
        .iter()
        .filter(|l| l.contains("trace collector is unreachable"))
        .count();
    assert_eq!(warnings, 1, "{lines:#?}");
    assert!(!lines.iter().any(|l| l.contains(" ERROR ")), "{lines:#?}");
    assert!(
        !lines.iter().any(|l| l.contains('\u{1b}')),
        "no colour codes outside a terminal"
    );
    let requests = lines
        .iter()
        .filter(|l| l.contains("request finished") && l.contains("route=\"/group/{group_id}\""))
        .count();
    assert_eq!(requests, 5, "one text line per request: {lines:#?}");
}

/// Whether `span` has the span `ancestor` above it.
fn descends_from(by_id: &HashMap<Vec<u8>, &(String, Span)>, span: &Span, ancestor: &[u8]) -> bool {
    let mut parent = by_id.get(&span.parent_span_id);
    while let Some((_, p)) = parent {
        if p.span_id == ancestor {
            return true;
        }
        parent = by_id.get(&p.parent_span_id);
    }
    false
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}
