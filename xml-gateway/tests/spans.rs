//! The gateway's spans and probes with the core out of reach: the request's SERVER span and
//! the call's CLIENT span are errors (503), with numeric status codes; every route's span is
//! named by its template, a 405's by its method alone; `/healthz` answers,
//! `/readyz` does not, and neither makes a span.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use lms_gateway::{CoreClient, router};
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tokio::net::TcpListener;
use tower::ServiceExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans.iter().find(|s| s.name == name).unwrap_or_else(|| {
        let names: Vec<_> = spans.iter().map(|s| s.name.to_string()).collect();
        panic!("no span {name:?} among {names:?}")
    })
}

// current_thread: the subscriber set here is this thread's, and every task runs on it.
#[tokio::test(flavor = "current_thread")]
async fn a_request_the_core_cannot_answer_is_an_error_span_pair_and_not_ready() {
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _default = tracing::subscriber::set_default(subscriber);

    let url = format!("http://127.0.0.1:{}", closed_port().await);
    let app = router(
        CoreClient::connect_lazy(std::slice::from_ref(&url), Duration::from_secs(5)).unwrap(),
    );
    // The hot read; a route of the directory, through a client prefix; a method no route serves.
    for (method, path, status) in [
        ("GET", "/group/g-1", StatusCode::SERVICE_UNAVAILABLE),
        ("GET", "/api/v2/users/", StatusCode::SERVICE_UNAVAILABLE),
        ("DELETE", "/users", StatusCode::METHOD_NOT_ALLOWED),
    ] {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("X-Auth-Account-Url", "https://a.example")
            .header("X-Auth-Email", "e@a.example")
            .header("X-Auth-Password", "p")
            .body(Body::empty())
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), status, "{method} {path}");
    }
    let healthz = app
        .clone()
        .oneshot(Request::get("/healthz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(healthz.status(), StatusCode::OK);
    let readyz = app
        .clone()
        .oneshot(Request::get("/readyz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(readyz.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(readyz.headers().contains_key("retry-after"));

    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let server = named(&spans, "GET /group/{group_id}");
    assert_eq!(server.span_kind, SpanKind::Server);
    assert!(
        matches!(server.status, Status::Error { .. }),
        "{:?}",
        server.status
    );
    assert_eq!(
        attribute(&server.attributes, "http.response.status_code"),
        Some(&Value::I64(503))
    );
    assert_eq!(
        attribute(&server.attributes, "http.route"),
        Some(&Value::from("/group/{group_id}"))
    );
    // A directory route is named by its template, a method no route serves by itself alone.
    let users = named(&spans, "GET /users");
    assert_eq!(
        attribute(&users.attributes, "http.route"),
        Some(&Value::from("/users"))
    );
    let refused = named(&spans, "DELETE");
    assert_eq!(
        attribute(&refused.attributes, "http.route"),
        Some(&Value::from("unmatched"))
    );
    assert_eq!(
        attribute(&refused.attributes, "http.response.status_code"),
        Some(&Value::I64(405))
    );
    let client = spans
        .iter()
        .find(|s| s.name == "lms.v1.AdminService/GetGroup")
        .expect("the call's CLIENT span");
    assert_eq!(client.span_kind, SpanKind::Client);
    assert_eq!(
        client.span_context.trace_id(),
        server.span_context.trace_id()
    );
    assert!(matches!(client.status, Status::Error { .. }));
    assert_eq!(
        attribute(&client.attributes, "rpc.grpc.status_code"),
        Some(&Value::I64(tonic::Code::Unavailable as i64))
    );
    assert_eq!(
        attribute(&client.attributes, "rpc.service"),
        Some(&Value::from("lms.v1.AdminService"))
    );
    let names: Vec<_> = spans.iter().map(|s| s.name.to_string()).collect();
    assert!(
        !names
            .iter()
            .any(|n| n.contains("healthz") || n.contains("readyz") || n.contains("Health")),
        "probes make no spans, their health check neither: {names:?}"
    );
}
