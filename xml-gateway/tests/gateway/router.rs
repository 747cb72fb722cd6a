//! The gateway's own behaviour, through the real router, with the core URL pointing at a closed
//! loopback port (or at a socket that never answers): everything here is decided before, or
//! without, a useful answer from the core.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use lms_gateway::{App, BODY_LIMIT_BYTES, CoreClient, GatewaySettings, router};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

const PROLOGUE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>"#;
const AUTH_FAILED: &str = "Authentication failed: check X-Auth-Account-Url, X-Auth-Email and X-Auth-Password, or \
     the token in Authorization.";

/// A loopback port that nothing listens on.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

async fn gateway_without_core() -> Router {
    let url = format!("http://127.0.0.1:{}", closed_port().await);
    router(CoreClient::connect_lazy(&[url], Duration::from_secs(5)).unwrap())
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name} header"))
            .to_str()
            .unwrap()
    }

    /// Asserts an XML error body with this status and returns its message.
    fn error_message(&self, status: StatusCode) -> String {
        assert_eq!(self.status, status, "body: {}", self.body);
        assert_eq!(
            self.header("content-type"),
            "application/xml; charset=utf-8"
        );
        assert!(self.body.starts_with(PROLOGUE), "{}", self.body);
        let code = format!("<error><code>{}</code><message>", status.as_u16());
        assert!(self.body.contains(&code), "{}", self.body);
        let request_id = self.header("x-request-id");
        assert!(
            self.body.ends_with(&format!(
                "</message><requestId>{request_id}</requestId></error>"
            )),
            "{}",
            self.body
        );
        let start = self.body.find("<message>").unwrap() + "<message>".len();
        let end = self.body.find("</message>").unwrap();
        self.body[start..end].to_owned()
    }
}

async fn send(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

fn authenticated(method: Method, uri: &str) -> axum::http::request::Builder {
    Request::builder()
        .method(method)
        .uri(uri)
        .header("x-auth-account-url", "https://acme.example.com")
        .header("x-auth-email", "owner@acme.example.com")
        .header("x-auth-password", "correct horse")
}

fn xml_post(uri: &str, body: impl Into<Body>) -> Request<Body> {
    authenticated(Method::POST, uri)
        .header(header::CONTENT_TYPE, "application/xml")
        .body(body.into())
        .unwrap()
}

// ---- routing ----

#[tokio::test]
async fn an_unknown_route_is_404_with_an_xml_body() {
    let app = gateway_without_core().await;
    let answer = send(&app, Request::get("/nowhere").body(Body::empty()).unwrap()).await;
    assert_eq!(
        answer.error_message(StatusCode::NOT_FOUND),
        "There is no resource at GET /nowhere."
    );
}

#[tokio::test]
async fn a_known_route_with_the_wrong_method_is_405_with_allow() {
    let app = gateway_without_core().await;
    // `DELETE /group/{id}` deletes a group now; `PUT` is no operation there.
    let answer = send(
        &app,
        Request::put("/group/g-1").body(Body::empty()).unwrap(),
    )
    .await;
    answer.error_message(StatusCode::METHOD_NOT_ALLOWED);
    let allow = answer.header("allow");
    for method in ["GET", "POST", "DELETE"] {
        assert!(allow.contains(method), "Allow: {allow}");
    }

    // `GET /department` lists departments now; `PUT` is still no operation there.
    let answer = send(
        &app,
        Request::put("/department").body(Body::empty()).unwrap(),
    )
    .await;
    assert!(
        answer
            .error_message(StatusCode::METHOD_NOT_ALLOWED)
            .contains("PUT")
    );
    let allow = answer.header("allow");
    for method in ["GET", "POST"] {
        assert!(allow.contains(method), "Allow: {allow}");
    }
    assert!(!allow.contains("DELETE"), "Allow: {allow}");

    let answer = send(
        &app,
        Request::put("/gamification/points")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    answer.error_message(StatusCode::METHOD_NOT_ALLOWED);
    let allow = answer.header("allow");
    for method in ["GET", "POST"] {
        assert!(allow.contains(method), "Allow: {allow}");
    }
}

// ---- request ids ----

#[tokio::test]
async fn the_callers_request_id_is_echoed() {
    let app = gateway_without_core().await;
    let answer = send(
        &app,
        Request::get("/nowhere")
            .header("x-request-id", "caller-chosen-42")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(answer.header("x-request-id"), "caller-chosen-42");
    assert!(
        answer
            .body
            .contains("<requestId>caller-chosen-42</requestId>")
    );
}

#[tokio::test]
async fn a_request_id_is_generated_when_none_or_an_unusable_one_is_sent() {
    let app = gateway_without_core().await;
    let first = send(&app, Request::get("/nowhere").body(Body::empty()).unwrap()).await;
    let second = send(&app, Request::get("/nowhere").body(Body::empty()).unwrap()).await;
    let first_id = first.header("x-request-id");
    assert!(uuid::Uuid::parse_str(first_id).is_ok(), "{first_id}");
    assert_ne!(first_id, second.header("x-request-id"));

    let too_long = "x".repeat(500);
    let answer = send(
        &app,
        Request::get("/nowhere")
            .header("x-request-id", too_long.as_str())
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert!(uuid::Uuid::parse_str(answer.header("x-request-id")).is_ok());
}

// ---- authentication ----

#[tokio::test]
async fn every_missing_or_blank_header_gives_the_same_401() {
    let app = gateway_without_core().await;
    let headers = ["x-auth-account-url", "x-auth-email", "x-auth-password"];
    let mut bodies = Vec::new();
    for skipped in headers {
        for value in [None, Some(""), Some("   ")] {
            let mut request = Request::get("/group/g-1").header("x-request-id", "same-id");
            for name in headers {
                if name != skipped {
                    request = request.header(name, "something");
                } else if let Some(value) = value {
                    request = request.header(name, value);
                }
            }
            let answer = send(&app, request.body(Body::empty()).unwrap()).await;
            assert_eq!(answer.error_message(StatusCode::UNAUTHORIZED), AUTH_FAILED);
            bodies.push(answer.body);
        }
    }
    let none = send(
        &app,
        Request::get("/content/c-1")
            .header("x-request-id", "same-id")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    bodies.push(none.body);
    assert!(
        bodies.windows(2).all(|pair| pair[0] == pair[1]),
        "{bodies:#?}"
    );
}

#[tokio::test]
async fn authentication_is_checked_before_the_body() {
    let app = gateway_without_core().await;
    let answer = send(
        &app,
        Request::post("/department")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from("{}"))
            .unwrap(),
    )
    .await;
    answer.error_message(StatusCode::UNAUTHORIZED);
}

// ---- request bodies ----

#[tokio::test]
async fn a_content_type_other_than_xml_or_json_is_415() {
    let app = gateway_without_core().await;
    for content_type in [
        "application/json; charset=latin1",
        "application/x-www-form-urlencoded",
        "text/plain",
        "application/xml; charset=latin1",
    ] {
        let answer = send(
            &app,
            authenticated(Method::POST, "/department")
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from("<request/>"))
                .unwrap(),
        )
        .await;
        let message = answer.error_message(StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert!(message.contains(content_type), "{message}");
    }
}

#[tokio::test]
async fn a_body_declared_larger_than_1_mib_is_413() {
    let app = gateway_without_core().await;
    let body = vec![b' '; BODY_LIMIT_BYTES + 1];
    let answer = send(
        &app,
        authenticated(Method::POST, "/department")
            .header(header::CONTENT_TYPE, "application/xml")
            .header(header::CONTENT_LENGTH, body.len())
            .body(Body::from(body))
            .unwrap(),
    )
    .await;
    assert_eq!(
        answer.error_message(StatusCode::PAYLOAD_TOO_LARGE),
        "The request body is larger than 1 MiB (1048576 bytes)."
    );
}

#[tokio::test]
async fn a_chunked_body_growing_past_1_mib_is_413() {
    let app = gateway_without_core().await;
    let chunk = bytes::Bytes::from(vec![b' '; 64 * 1024]);
    let chunks =
        (0..=BODY_LIMIT_BYTES / chunk.len()).map(move |_| Ok::<_, std::io::Error>(chunk.clone()));
    let answer = send(
        &app,
        xml_post(
            "/department",
            Body::from_stream(futures::stream::iter(chunks)),
        ),
    )
    .await;
    answer.error_message(StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn a_doctype_is_400() {
    let app = gateway_without_core().await;
    let body = r#"<?xml version="1.0"?><!DOCTYPE request [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><request><name>&xxe;</name></request>"#;
    let answer = send(&app, xml_post("/department", body)).await;
    assert_eq!(
        answer.error_message(StatusCode::BAD_REQUEST),
        "DOCTYPE declarations are not allowed."
    );
}

#[tokio::test]
async fn an_unknown_entity_is_400_naming_it() {
    let app = gateway_without_core().await;
    let answer = send(
        &app,
        xml_post("/group/g-1", "<request><name>&xxe;</name></request>"),
    )
    .await;
    assert_eq!(
        answer.error_message(StatusCode::BAD_REQUEST),
        "Entity reference &amp;xxe; is not allowed."
    );
}

#[tokio::test]
async fn another_encoding_or_invalid_utf8_is_400() {
    let app = gateway_without_core().await;
    let declared = send(
        &app,
        xml_post(
            "/department",
            r#"<?xml version="1.0" encoding="ISO-8859-1"?><request/>"#,
        ),
    )
    .await;
    assert!(
        declared
            .error_message(StatusCode::BAD_REQUEST)
            .contains("ISO-8859-1")
    );
    let invalid = send(
        &app,
        xml_post(
            "/department",
            &b"<request><name>Caf\xE9</name></request>"[..],
        ),
    )
    .await;
    assert!(
        invalid
            .error_message(StatusCode::BAD_REQUEST)
            .contains("UTF-8")
    );
}

#[tokio::test]
async fn malformed_bodies_are_400_with_a_message_naming_the_problem() {
    let app = gateway_without_core().await;
    let cases = [
        (
            "/department",
            "",
            "The request body is empty; an XML document is expected.",
        ),
        (
            "/department",
            "<foo/>",
            "Root element must be &lt;request&gt;, found &lt;foo&gt;.",
        ),
        (
            "/department",
            "<request><name>a</name><name>b</name></request>",
            "Element &lt;name&gt; is given twice.",
        ),
        (
            "/department",
            "<request/><request/>",
            "Only one root element is allowed; found a second one, &lt;request&gt;.",
        ),
        (
            "/enrollment/delete",
            "<DeleteEnrollments/>",
            "Element &lt;enrollmentIds&gt; is required.",
        ),
        (
            "/enrollment/delete",
            "<DeleteEnrollments><enrollmentIds/><enrollmentIds/></DeleteEnrollments>",
            "Element &lt;enrollmentIds&gt; is given twice.",
        ),
    ];
    for (uri, body, expected) in cases {
        let answer = send(&app, xml_post(uri, body)).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{body}");
        assert!(
            answer
                .body
                .contains(&format!("<message>{expected}</message>")),
            "{}",
            answer.body
        );
    }
    let answer = send(&app, xml_post("/department", "<request><name>x</request>")).await;
    assert!(
        answer
            .error_message(StatusCode::BAD_REQUEST)
            .starts_with("The request body is not well-formed XML")
    );
}

#[tokio::test]
async fn a_token_request_in_json_with_a_key_given_twice_is_400_naming_it() {
    let app = gateway_without_core().await;
    // Which secret was meant cannot be known; decided before any call to the core.
    let body = r#"{"grant_type": "client_credentials", "client_id": "c-1",
                   "client_secret": "first", "client_secret": "second"}"#;
    let answer = send(
        &app,
        Request::post("/api/v3/token")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .unwrap(),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
    assert_eq!(answer.header("content-type"), "application/json");
    let error: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(
        error,
        serde_json::json!({
            "error": "invalid_request",
            "error_description": "Field \"client_secret\" is given twice."
        })
    );
}

#[tokio::test]
async fn text_xml_cannot_carry_is_refused_in_either_format_naming_the_field() {
    // Decided before any call to the core: nothing is stored that no XML answer could carry.
    let app = gateway_without_core().await;
    let group = "/group/0191a000-0000-7000-8000-000000000301";
    for (raw, code) in [
        ('\u{FFFE}', "U+FFFE"),
        ('\u{FFFF}', "U+FFFF"),
        ('\u{1}', "U+0001"),
    ] {
        let xml = format!("<request><name>Interns{raw}</name></request>");
        let answer = send(&app, xml_post(group, xml)).await;
        assert_eq!(
            answer.error_message(StatusCode::BAD_REQUEST),
            format!("Element &lt;name&gt; contains {code}, a character XML cannot carry.")
        );
        let escaped = format!("\\u{:04X}", u32::from(raw));
        let json = format!(r#"{{"name": "Interns{escaped}"}}"#);
        let answer = send(
            &app,
            authenticated(Method::POST, group)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(json))
                .unwrap(),
        )
        .await;
        assert_eq!(
            answer.error_message(StatusCode::BAD_REQUEST),
            format!("Field \"name\" contains {code}, a character XML cannot carry.")
        );
    }
}

// ---- the core ----

/// The lists read whole from one of the core's streams: a core that cannot be reached, or
/// does not answer, is still a whole error answer, as before the first row nothing is sent.
const WHOLE_LISTS: [&str; 6] = [
    "/department",
    "/group",
    "/enrollment?learnerIds=a",
    "/content",
    "/user?logins[]=a",
    "/user/v2",
];

#[tokio::test]
async fn an_unreachable_core_is_503_for_every_operation() {
    let app = gateway_without_core().await;
    let requests = [
        authenticated(Method::GET, "/group/g-1")
            .body(Body::empty())
            .unwrap(),
        authenticated(Method::GET, "/content/c-1")
            .body(Body::empty())
            .unwrap(),
        authenticated(Method::GET, "/gamification/points?userIds=a,b")
            .body(Body::empty())
            .unwrap(),
        xml_post("/group/g-1", "<request><name>New</name></request>"),
        xml_post("/department/d-1", "<request><code/></request>"),
        xml_post(
            "/department",
            "<request><name>Sales</name><parentDepartmentId>p</parentDepartmentId></request>",
        ),
        xml_post(
            "/enrollment/delete",
            "<DeleteEnrollments><enrollmentIds><id>e</id></enrollmentIds></DeleteEnrollments>",
        ),
    ]
    .into_iter()
    .chain(WHOLE_LISTS.map(|path| {
        authenticated(Method::GET, path)
            .body(Body::empty())
            .unwrap()
    }));
    for request in requests {
        let uri = request.uri().clone();
        let answer = send(&app, request).await;
        assert_eq!(
            answer.error_message(StatusCode::SERVICE_UNAVAILABLE),
            "The service is temporarily unavailable.",
            "{uri}"
        );
    }
}

#[tokio::test]
async fn a_core_that_never_answers_is_504_after_the_deadline() {
    // Accepts connections and then says nothing, like a hung core.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let hold = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let app = router(CoreClient::connect_lazy(&[url], Duration::from_millis(300)).unwrap());
    for path in ["/group/g-1", "/gamification/points"]
        .into_iter()
        .chain(WHOLE_LISTS)
    {
        let request = authenticated(Method::GET, path)
            .body(Body::empty())
            .unwrap();
        let answer = send(&app, request).await;
        assert_eq!(
            answer.error_message(StatusCode::GATEWAY_TIMEOUT),
            "The service did not answer in time.",
            "{path}"
        );
    }
    hold.abort();
}

// ---- start-up ----

#[tokio::test]
async fn the_app_binds_port_zero_serves_and_shuts_down_gracefully() {
    let settings = GatewaySettings {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        core_urls: vec![format!("http://127.0.0.1:{}", closed_port().await)],
        core_timeout_ms: 2_000,
        metrics_addr: None,
        public_url: None,
        server: Default::default(),
    };
    let app = App::build(settings).await.unwrap();
    let addr = app.local_addr();
    assert_ne!(addr.port(), 0);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run_until(async {
        let _ = stopped.await;
    }));

    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            b"GET /group/g-1 HTTP/1.1\r\nHost: localhost\r\nX-Auth-Account-Url: https://a\r\n\
              X-Auth-Email: e\r\nX-Auth-Password: p\r\nConnection: close\r\n\r\n",
        )
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 503"), "{response}");
    assert!(
        response.to_ascii_lowercase().contains("x-request-id: "),
        "{response}"
    );

    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server stops after the shutdown signal")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn an_invalid_core_url_is_refused_at_start_up() {
    let settings = GatewaySettings {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        core_urls: vec!["not a url".to_owned()],
        core_timeout_ms: 1_000,
        metrics_addr: None,
        public_url: None,
        server: Default::default(),
    };
    assert!(App::build(settings).await.is_err());
}

// ---- hostile input ----

#[tokio::test]
async fn content_type_given_twice_is_one_value_when_equal_and_415_when_not() {
    let app = gateway_without_core().await;
    let twice = |first: &'static str, second: &'static str| {
        authenticated(Method::POST, "/department")
            .header(header::CONTENT_TYPE, first)
            .header(header::CONTENT_TYPE, second)
            .body(Body::from("<request/>"))
            .unwrap()
    };
    for (first, second) in [
        ("application/xml", "application/json"),
        ("application/json", "application/xml"),
        ("application/xml", "text/xml"),
    ] {
        let answer = send(&app, twice(first, second)).await;
        let message = answer.error_message(StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert!(message.contains("more than once"), "{message}");
    }
    // The same value twice is that value: the body is read and goes on to the (absent) core.
    let answer = send(&app, twice("application/xml", "application/xml")).await;
    answer.error_message(StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn echoed_input_is_clipped_in_every_message() {
    let app = gateway_without_core().await;
    let huge_name = "a".repeat(BODY_LIMIT_BYTES - 64);
    for body in [
        format!("<{huge_name}/>"),
        format!("<{huge_name}>"),
        format!("<request><{huge_name}></b></request>"),
        format!("<request>&{huge_name};</request>"),
        format!("<request/><{huge_name}/>"),
    ] {
        let answer = send(&app, xml_post("/department", body)).await;
        answer.error_message(StatusCode::BAD_REQUEST);
        assert!(answer.body.len() < 1024, "{} bytes", answer.body.len());
    }

    let huge_type = format!("application/{}", "x".repeat(64 * 1024));
    let answer = send(
        &app,
        authenticated(Method::POST, "/department")
            .header(header::CONTENT_TYPE, huge_type)
            .body(Body::from("<request/>"))
            .unwrap(),
    )
    .await;
    let message = answer.error_message(StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(message.contains("application/xxx"), "{message}");
    assert!(answer.body.len() < 1024, "{} bytes", answer.body.len());

    let huge_path = format!("/{}", "p".repeat(60_000));
    let answer = send(
        &app,
        Request::get(huge_path.as_str())
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    answer.error_message(StatusCode::NOT_FOUND);
    assert!(answer.body.len() < 1024, "{} bytes", answer.body.len());
}

/// 40,000 attributes on one element (about 1 MiB): quick-xml's own duplicate check made this
/// seconds of CPU before anything else was checked.
fn many_attributes(count: usize) -> String {
    let mut body = String::from("<request><name");
    for n in 0..count {
        body.push_str(&format!(" a{n}=\"v\""));
    }
    body.push_str(">Sales</name></request>");
    body
}

#[tokio::test]
async fn an_element_with_too_many_attributes_is_400_at_once() {
    let app = gateway_without_core().await;
    let started = std::time::Instant::now();
    let answer = send(&app, xml_post("/department", many_attributes(40_000))).await;
    let message = answer.error_message(StatusCode::BAD_REQUEST);
    assert!(message.contains("more than 32 attributes"), "{message}");
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );

    let answer = send(
        &app,
        xml_post("/department", "<request a=\"1\" b=\"2\" a=\"3\"/>"),
    )
    .await;
    let message = answer.error_message(StatusCode::BAD_REQUEST);
    assert!(message.contains("attribute a twice"), "{message}");

    // 32 distinct attributes are still well-formed XML: the body goes on to the (absent) core.
    let answer = send(&app, xml_post("/department", many_attributes(32))).await;
    answer.error_message(StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn credential_headers_over_the_cores_bounds_are_401_without_calling_the_core() {
    // A core that accepts and never answers: a call would take the whole 5 s deadline.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let app = router(CoreClient::connect_lazy(&[url], Duration::from_secs(5)).unwrap());
    for (name, length) in [
        ("x-auth-account-url", 2_049),
        ("x-auth-email", 256),
        ("x-auth-password", 1_025),
        ("x-auth-password", 16 * 1024),
        ("x-auth-account-url", 100 * 1024),
    ] {
        let started = std::time::Instant::now();
        let mut request = authenticated(Method::GET, "/gamification/points")
            .body(Body::empty())
            .unwrap();
        request
            .headers_mut()
            .insert(name, "a".repeat(length).parse().unwrap());
        let answer = send(&app, request).await;
        assert_eq!(answer.error_message(StatusCode::UNAUTHORIZED), AUTH_FAILED);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{name} of {length} bytes: {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn a_huge_unknown_method_is_clipped_in_the_405() {
    let app = gateway_without_core().await;
    let method = Method::from_bytes("X".repeat(100_000).as_bytes()).unwrap();
    let answer = send(
        &app,
        Request::builder()
            .method(method)
            .uri("/group/g-1")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    answer.error_message(StatusCode::METHOD_NOT_ALLOWED);
    assert!(answer.body.len() < 1024, "{} bytes", answer.body.len());
}

// ---- fuzzing: path ids ----

mod fuzz_path_ids {
    use proptest::prelude::*;

    use super::*;

    fn cases() -> u32 {
        std::env::var("LMS_FUZZ_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok())
            .unwrap_or(300)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

        /// Any bytes, percent-encoded into the id segment: a 404 (not text, or no such route)
        /// or the core's answer (here 503), always as a bounded XML error.
        #[test]
        fn fuzz_any_path_id_is_answered_in_xml(
            id in proptest::collection::vec(any::<u8>(), 1..300),
            route in 0_usize..3,
        ) {
            let encoded: String = id.iter().map(|byte| format!("%{byte:02X}")).collect();
            let prefix = ["/group/", "/content/", "/department/"][route];
            let method = if route == 2 { Method::POST } else { Method::GET };
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let answer = runtime.block_on(async {
                let app = gateway_without_core().await;
                let request = authenticated(method, &format!("{prefix}{encoded}"))
                    .header(header::CONTENT_TYPE, "application/xml")
                    .body(Body::from("<request><name>x</name></request>"))
                    .unwrap();
                send(&app, request).await
            });
            prop_assert!(
                answer.status == StatusCode::NOT_FOUND
                    || answer.status == StatusCode::SERVICE_UNAVAILABLE,
                "{}: {}", answer.status, answer.body
            );
            answer.error_message(answer.status);
            prop_assert!(answer.body.len() < 1024);
        }
    }
}
