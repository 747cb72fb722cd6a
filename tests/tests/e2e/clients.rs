//! Requests exactly as the integrations of `docs/spec/clients.md` send them, written byte for
//! byte onto a TCP connection, and answers read the way those clients read them: the
//! `<response>(.*)</response>` regular expression, converters that upper-case element names,
//! a top-level JSON array of points.

use lms_core::entities::enrollment;
use lms_proto::v1::{self as pb, directory_service_client::DirectoryServiceClient};
use lms_tests::{
    TestStack, on_both_backends,
    world::{self, Login, acme},
    xml::texts_of,
};
use sea_orm::{EntityTrait as _, prelude::Uuid};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

on_both_backends!(
    every_operation_answers_under_each_prefix_with_and_without_a_trailing_slash,
    an_unknown_path_under_a_prefix_is_still_404_and_a_wrong_method_405,
    an_array_to_xml_helpers_request_root_deletes_enrollments,
    every_encoding_of_user_ids_filters_the_points,
    an_unknown_query_parameter_is_400_naming_it_never_a_wider_answer,
    an_account_url_differing_in_scheme_host_case_or_trailing_slash_names_the_account,
    accept_json_answers_every_read_and_create_in_the_contracts_shapes,
    json_bodies_are_accepted_by_every_write_wrapped_or_not,
    json_bodies_are_refused_with_the_same_limits_and_messages_as_xml,
    errors_come_in_the_negotiated_format_and_406_when_neither_is_acceptable,
    xml_answers_read_by_an_upper_casing_converter_keep_their_shape,
    a_token_client_calls_every_operation_with_either_token_style,
);

/// The spellings of a route's path that clients use (contract section 11).
const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];

/// One answer, read off the wire.
#[derive(Debug)]
struct Raw {
    status: u16,
    /// Header lines as sent, names lower-cased.
    headers: Vec<(String, String)>,
    body: String,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// What a client's `preg_match('/<response>(.*)<\/response>/')` finds: `.` stops at a line
    /// end, so the answer must hold it on one line.
    fn response_text(&self) -> Option<&str> {
        self.body.lines().find_map(|line| {
            let start = line.find("<response>")? + "<response>".len();
            let end = start + line[start..].find("</response>")?;
            Some(&line[start..end])
        })
    }
}

/// Sends `head` (request line and headers, CRLF-separated, without the blank line) and `body`
/// exactly as given, with `Host`, `Content-Length` and `Connection: close` added, and reads the
/// whole answer (de-chunking a streamed body).
async fn send_raw(stack: &TestStack, head: &str, body: &[u8]) -> Raw {
    let addr = stack.base_url.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let mut request = format!(
        "{head}\r\nHost: lms.internal.example\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    stream.write_all(&request).await.expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    parse_answer(&answer)
}

fn parse_answer(answer: &[u8]) -> Raw {
    let split = answer
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .expect("a complete head");
    let head = std::str::from_utf8(&answer[..split]).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status = lines.next().expect("a status line")[9..12]
        .parse()
        .expect("a status");
    let headers: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(':').expect("a header line");
            (name.to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    let mut body = answer[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Raw {
        status,
        headers,
        body: String::from_utf8(body).expect("a UTF-8 body"),
    }
}

fn dechunk(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = chunked
            .windows(2)
            .position(|window| window == b"\r\n")
            .expect("a chunk size line");
        let size = usize::from_str_radix(
            std::str::from_utf8(&chunked[..line_end])
                .expect("hex")
                .split(';')
                .next()
                .unwrap_or_default()
                .trim(),
            16,
        )
        .expect("a chunk size");
        chunked = &chunked[line_end + 2..];
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&chunked[..size]);
        chunked = &chunked[size + 2..];
    }
}

/// The three `X-Auth-*` headers as a client writes them (names in the client's own case).
fn auth_headers(login: Login) -> String {
    format!(
        "X-Auth-Account-Url: {}\r\nX-Auth-Email: {}\r\nX-Auth-Password: {}",
        login.account_url,
        login.email,
        world::PASSWORD
    )
}

/// Method, path (without prefix), body and the status it succeeds with, for the seven
/// operations; the writes are safe to repeat.
fn operations() -> Vec<(&'static str, String, Option<String>, u16)> {
    vec![
        (
            "POST",
            format!("/department/{}", acme::SALES_EAST),
            Some("<request><code>SE</code></request>".to_owned()),
            204,
        ),
        (
            "POST",
            "/department".to_owned(),
            Some(format!(
                "<request><name>Field sales</name><parentDepartmentId>{}</parentDepartmentId></request>",
                acme::SALES
            )),
            201,
        ),
        (
            "POST",
            format!("/group/{}", acme::EMPTY_GROUP),
            Some("<request><name>Nobody yet</name></request>".to_owned()),
            200,
        ),
        ("GET", format!("/group/{}", acme::INTERNS), None, 200),
        (
            "POST",
            "/enrollment/delete".to_owned(),
            Some(format!(
                "<DeleteEnrollments><enrollmentIds><id>{}</id></enrollmentIds></DeleteEnrollments>",
                acme::SUPPORTER_WELCOME
            )),
            204,
        ),
        (
            "GET",
            format!("/content/{}", acme::WELCOME_COURSE),
            None,
            200,
        ),
        (
            "GET",
            format!("/gamification/points?userIds={}", acme::LEARNER),
            None,
            200,
        ),
    ]
}

async fn send_operation(
    stack: &TestStack,
    method: &str,
    target: &str,
    body: Option<&str>,
    extra_headers: &str,
) -> Raw {
    let auth = auth_headers(world::OWNER);
    send_operation_as(stack, &auth, method, target, body, extra_headers).await
}

/// [`send_operation`] with the credentials in `auth` (header lines).
async fn send_operation_as(
    stack: &TestStack,
    auth: &str,
    method: &str,
    target: &str,
    body: Option<&str>,
    extra_headers: &str,
) -> Raw {
    let mut head = format!("{method} {target} HTTP/1.1\r\n{auth}");
    if body.is_some() {
        head.push_str("\r\nContent-Type: text/xml; charset=UTF-8");
    }
    if !extra_headers.is_empty() {
        head.push_str("\r\n");
        head.push_str(extra_headers);
    }
    send_raw(stack, &head, body.unwrap_or_default().as_bytes()).await
}

/// `<path>/?query` for a path that may carry a query.
fn with_trailing_slash(target: &str) -> String {
    match target.split_once('?') {
        Some((path, query)) => format!("{path}/?{query}"),
        None => format!("{target}/"),
    }
}

async fn every_operation_answers_under_each_prefix_with_and_without_a_trailing_slash(
    stack: &TestStack,
) {
    every_operation_answers_with(stack, &[auth_headers(world::OWNER)]).await;
}

/// Every operation under each prefix, with and without a trailing slash, authenticated by each
/// of `auths` in turn, its answer read as the clients read it.
async fn every_operation_answers_with(stack: &TestStack, auths: &[String]) {
    let mut auths = auths.iter().cycle();
    for prefix in PREFIXES {
        for (method, path, body, status) in operations() {
            for target in [
                format!("{prefix}{path}"),
                with_trailing_slash(&format!("{prefix}{path}")),
            ] {
                let auth = auths.next().expect("credentials");
                let answer =
                    send_operation_as(stack, auth, method, &target, body.as_deref(), "").await;
                assert_eq!(answer.status, status, "{method} {target}: {}", answer.body);
                match path.as_str() {
                    "/department" => {
                        let id = answer.response_text().expect("the new id on one line");
                        assert_eq!(id.len(), 36, "{id}");
                    }
                    p if p.starts_with("/group/") && method == "GET" => {
                        assert!(answer.body.contains(acme::ENGINEER), "{}", answer.body);
                    }
                    p if p.starts_with("/gamification/") => {
                        assert!(
                            answer.body.contains("<points>421</points>"),
                            "{}",
                            answer.body
                        );
                        assert!(!answer.body.contains(acme::OWNER), "{}", answer.body);
                    }
                    _ => {}
                }
            }
        }
    }
}

/// A token client (contract section 12) as `clients.md` describes it: the token fetched with a
/// form body, then sent as `Authorization: Bearer <t>` on some calls and as the raw
/// `Authorization: <t>` on others, on every operation under every prefix, in XML and JSON.
async fn a_token_client_calls_every_operation_with_either_token_style(stack: &TestStack) {
    let made = DirectoryServiceClient::new(stack.grpc_channel().await)
        .create_api_client(world::OWNER.grpc_request(pb::CreateApiClientRequest {
            user_id: acme::ADMIN.to_owned(),
            scim: false,
        }))
        .await
        .expect("the owner makes an API client")
        .into_inner();
    let form = format!(
        "grant_type=client_credentials&client_id={}&client_secret={}",
        made.client_id, made.client_secret
    );
    let mut tokens = Vec::new();
    for path in ["/api/v3/token", "/index.php/api/v3/token"] {
        let answer = send_raw(
            stack,
            &format!(
                "POST {path} HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nAccept: */*"
            ),
            form.as_bytes(),
        )
        .await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.body);
        assert_eq!(answer.header("content-type"), Some("application/json"));
        let grant: Value = serde_json::from_str(&answer.body).expect("a JSON grant");
        assert_eq!(
            (&grant["token_type"], &grant["expires_in"]),
            (&json!("bearer"), &json!(1800))
        );
        tokens.push(grant["access_token"].as_str().expect("a token").to_owned());
    }
    let auths = [
        format!("Authorization: Bearer {}", tokens[0]),
        format!("authorization: {}", tokens[1]),
    ];
    every_operation_answers_with(stack, &auths).await;
    for (prefix, auth) in PREFIXES.iter().zip(auths.iter().cycle()) {
        let points = send_operation_as(
            stack,
            auth,
            "GET",
            &format!(
                "{prefix}/gamification/points?userIds%5B0%5D={}",
                acme::LEARNER
            ),
            None,
            "Accept: application/json",
        )
        .await;
        assert_eq!(points.status, 200, "{prefix}: {}", points.body);
        let points: Value = serde_json::from_str(&points.body).expect("a JSON array");
        assert_eq!(points, json!([{"userId": acme::LEARNER, "points": 421}]));
    }
}

async fn an_unknown_path_under_a_prefix_is_still_404_and_a_wrong_method_405(stack: &TestStack) {
    for target in [
        "/api/v2/nothing",
        "/api/v2/",
        // `/group` lists groups now; a path one segment off is still nothing.
        "/index.php/api/v2/groupz",
        "/api/v3/group/x",
    ] {
        let answer = send_operation(stack, "GET", target, None, "").await;
        assert_eq!(answer.status, 404, "{target}: {}", answer.body);
        assert!(answer.body.contains("<code>404</code>"), "{}", answer.body);
    }
    // `DELETE /group/{id}` deletes a group now; `PUT` is no operation there.
    let answer = send_operation(stack, "PUT", "/api/v2/group/x/", None, "").await;
    assert_eq!(answer.status, 405, "{}", answer.body);
    let allow = answer.header("allow").unwrap_or_default();
    assert!(
        allow.contains("GET") && allow.contains("POST") && allow.contains("DELETE"),
        "{allow}"
    );
}

async fn enrollment_exists(stack: &TestStack, id: &str) -> bool {
    enrollment::Entity::find_by_id(Uuid::parse_str(id).expect("a uuid"))
        .one(stack.db())
        .await
        .expect("query")
        .is_some()
}

async fn an_array_to_xml_helpers_request_root_deletes_enrollments(stack: &TestStack) {
    // What PHP's array-to-XML helpers make of ['enrollmentIds' => ['id' => [...]]]: no
    // declaration, CRLF line ends, trailing spaces.
    let body = format!(
        "<request>\r\n  <enrollmentIds>\r\n    <id>{}</id>  \r\n    <id>{}</id>\r\n  </enrollmentIds>\r\n</request>\r\n",
        acme::LEARNER_WELCOME,
        acme::ENGINEER_WELCOME.to_uppercase()
    );
    let answer = send_operation(stack, "POST", "/api/v2/enrollment/delete", Some(&body), "").await;
    assert_eq!(answer.status, 204, "{}", answer.body);
    assert!(!enrollment_exists(stack, acme::LEARNER_WELCOME).await);
    assert!(!enrollment_exists(stack, acme::ENGINEER_WELCOME).await);
    assert!(enrollment_exists(stack, acme::LEARNER_SECRET).await);

    let wrong = send_operation(
        stack,
        "POST",
        "/enrollment/delete",
        Some("<Delete><enrollmentIds><id>x</id></enrollmentIds></Delete>"),
        "",
    )
    .await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    assert!(
        wrong
            .body
            .contains("Root element must be &lt;DeleteEnrollments&gt; or &lt;request&gt;"),
        "{}",
        wrong.body
    );
}

/// The user ids of a points answer, in order.
fn point_users(body: &str) -> Vec<String> {
    texts_of(body, "userId")
}

async fn every_encoding_of_user_ids_filters_the_points(stack: &TestStack) {
    let (a, b) = (acme::LEARNER, acme::ENGINEER);
    let mut expected = vec![a.to_owned(), b.to_owned()];
    expected.sort();
    for query in [
        format!("userIds[]={a}&userIds[]={b}"),
        format!("userIds[0]={a}&userIds[1]={b}"),
        format!("userIds%5B0%5D={a}&userIds%5B1%5D={b}"),
        format!("userIds%5B%5D={a}&userIds%5B%5D={b}"),
        format!("userIds={a}&userIds={b}"),
        format!("userIds={a},{b}"),
        format!("userIds={a}%2C{b}"),
    ] {
        for prefix in PREFIXES {
            let target = format!("{prefix}/gamification/points?{query}");
            let answer = send_operation(stack, "GET", &target, None, "").await;
            assert_eq!(answer.status, 200, "{target}: {}", answer.body);
            assert_eq!(point_users(&answer.body), expected, "{target}");
        }
    }
}

async fn an_unknown_query_parameter_is_400_naming_it_never_a_wider_answer(stack: &TestStack) {
    for (target, name) in [
        (
            format!("/gamification/points?userId={}", acme::LEARNER),
            "userId",
        ),
        (
            format!("/gamification/points?user_ids={}", acme::LEARNER),
            "user_ids",
        ),
        (
            format!("/gamification/points?userIds={}&page=2", acme::LEARNER),
            "page",
        ),
        (format!("/group/{}?fields=all", acme::INTERNS), "fields"),
        (format!("/content/{}?x=1", acme::WELCOME_COURSE), "x"),
    ] {
        let answer = send_operation(stack, "GET", &target, None, "").await;
        assert_eq!(answer.status, 400, "{target}: {}", answer.body);
        assert!(
            answer.body.contains(&format!("Query parameter \"{name}\"")),
            "{target}: {}",
            answer.body
        );
    }
    let answer = send_operation(
        stack,
        "POST",
        &format!("/group/{}?name=x", acme::INTERNS),
        Some("<request><name>Interns</name></request>"),
        "",
    )
    .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
}

async fn an_account_url_differing_in_scheme_host_case_or_trailing_slash_names_the_account(
    stack: &TestStack,
) {
    for account_url in [
        "http://acme.example.com",
        "https://acme.example.com/",
        "http://ACME.Example.com/",
        "HTTPS://acme.example.com:443",
    ] {
        let head = format!(
            "GET /api/v2/content/{} HTTP/1.1\r\nx-auth-account-url: {account_url}\r\n\
             x-auth-email: {}\r\nx-auth-password: {}",
            acme::WELCOME_COURSE,
            world::OWNER.email.to_uppercase(),
            world::PASSWORD
        );
        let answer = send_raw(stack, &head, b"").await;
        assert_eq!(answer.status, 200, "{account_url}: {}", answer.body);
        // The view URL is built from the account's stored URL, not from the spelling sent.
        assert!(
            answer.body.contains(&format!(
                "<viewUrl>https://acme.example.com/view/{}</viewUrl>",
                acme::WELCOME_COURSE
            )),
            "{}",
            answer.body
        );
    }
    let head = format!(
        "GET /content/{} HTTP/1.1\r\n{}",
        acme::WELCOME_COURSE,
        auth_headers(Login {
            account_url: "https://acme.example.com/other",
            ..world::OWNER
        })
    );
    assert_eq!(send_raw(stack, &head, b"").await.status, 401);
}

/// An operation sent with a JSON body (or none) and `Accept: application/json`, as the
/// Laravel package and the Java proxy send it.
async fn send_json(stack: &TestStack, method: &str, target: &str, body: Option<&str>) -> Raw {
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nAccept: application/json\r\n{}",
        auth_headers(world::OWNER)
    );
    if body.is_some() {
        head.push_str("\r\nContent-Type: application/json");
    }
    send_raw(stack, &head, body.unwrap_or_default().as_bytes()).await
}

fn parsed(answer: &Raw) -> Value {
    assert_eq!(
        answer.header("content-type"),
        Some("application/json"),
        "{}",
        answer.body
    );
    serde_json::from_str(&answer.body).unwrap_or_else(|error| panic!("{error}: {}", answer.body))
}

async fn accept_json_answers_every_read_and_create_in_the_contracts_shapes(stack: &TestStack) {
    let group = send_json(
        stack,
        "GET",
        &format!("/api/v2/group/{}", acme::INTERNS),
        None,
    )
    .await;
    assert_eq!(group.status, 200, "{}", group.body);
    let mut members = vec![acme::ENGINEER, acme::LEARNER];
    members.sort_unstable();
    assert_eq!(
        parsed(&group),
        json!({"usersCount": 2, "userIds": members, "groupId": acme::INTERNS,
               "name": "Interns & <Juniors>", "isSmart": 0})
    );
    // Keys in the XML's element order.
    assert!(
        group.body.starts_with("{\"usersCount\":2,\"userIds\":["),
        "{}",
        group.body
    );

    let content = send_json(
        stack,
        "GET",
        &format!("/index.php/api/v2/content/{}/", acme::WELCOME_COURSE),
        None,
    )
    .await;
    assert_eq!(content.status, 200, "{}", content.body);
    assert_eq!(
        parsed(&content),
        json!({"contentItemId": acme::WELCOME_COURSE, "title": "Welcome to Acme",
               "description": "Everything a new colleague needs & more", "userId": acme::AUTHOR,
               "addedDate": "2019-03-26T06:34:57+00:00",
               "viewUrl": format!("https://acme.example.com/view/{}", acme::WELCOME_COURSE),
               "type": "Course"})
    );

    // What a Next.js app reads: a top-level array, summed.
    let points = send_json(
        stack,
        "GET",
        &format!(
            "/api/v2/gamification/points?userIds[]={}&userIds[]={}",
            acme::LEARNER,
            acme::ENGINEER
        ),
        None,
    )
    .await;
    assert_eq!(points.status, 200, "{}", points.body);
    let points = parsed(&points);
    let rows = points.as_array().expect("a top-level array");
    assert_eq!(rows.len(), 2);
    let total: i64 = rows.iter().map(|row| row["points"].as_i64().unwrap()).sum();
    assert_eq!(total, 421 + 17);
    assert!(rows.iter().all(|row| row["userId"].is_string()));

    let everyone = send_json(stack, "GET", "/gamification/points", None).await;
    assert_eq!(parsed(&everyone).as_array().map(Vec::len), Some(12));

    let created = send_json(
        stack,
        "POST",
        "/api/v2/department",
        Some(&format!(
            r#"{{"name": "Field sales", "parentDepartmentId": "{}", "code": null}}"#,
            acme::SALES
        )),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let id = parsed(&created);
    assert_eq!(id.as_str().map(str::len), Some(36), "{id}");

    // A JSON-preferring Accept by q-value, and an axios-style list.
    for accept in [
        "application/xml;q=0.5, application/json",
        "application/json, text/plain, */*",
    ] {
        let head = format!(
            "GET /group/{} HTTP/1.1\r\nAccept: {accept}\r\n{}",
            acme::INTERNS,
            auth_headers(world::OWNER)
        );
        let answer = send_raw(stack, &head, b"").await;
        assert_eq!(parsed(&answer)["groupId"], acme::INTERNS, "{accept}");
    }
    // XML stays the default, also for */*.
    for accept in [
        "",
        "Accept: */*\r\n",
        "Accept: application/json;q=0.9, */*\r\n",
    ] {
        let head = format!(
            "GET /group/{} HTTP/1.1\r\n{accept}{}",
            acme::INTERNS,
            auth_headers(world::OWNER)
        );
        let answer = send_raw(stack, &head, b"").await;
        assert_eq!(
            answer.header("content-type"),
            Some("application/xml; charset=utf-8"),
            "{accept}"
        );
    }
}

async fn json_bodies_are_accepted_by_every_write_wrapped_or_not(stack: &TestStack) {
    let renamed = send_json(
        stack,
        "POST",
        &format!("/api/v2/group/{}", acme::EMPTY_GROUP),
        Some(r#"{"request": {"name": " Newcomers "}}"#),
    )
    .await;
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    assert_eq!(renamed.body, "");
    let group = send_json(stack, "GET", &format!("/group/{}", acme::EMPTY_GROUP), None).await;
    assert_eq!(parsed(&group)["name"], "Newcomers");

    let moved = send_json(
        stack,
        "POST",
        &format!("/department/{}/", acme::SUPPORT),
        Some(&format!(
            r#"{{"name": "Customer support", "parentDepartmentId": "{}", "code": ""}}"#,
            acme::ENGINEERING
        )),
    )
    .await;
    assert_eq!(moved.status, 204, "{}", moved.body);

    let deleted = send_json(
        stack,
        "POST",
        "/index.php/api/v2/enrollment/delete",
        Some(&format!(
            r#"{{"enrollmentIds": ["{}"]}}"#,
            acme::LEARNER_WELCOME
        )),
    )
    .await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    assert!(!enrollment_exists(stack, acme::LEARNER_WELCOME).await);

    let points = send_json(
        stack,
        "POST",
        "/gamification/points",
        Some(&format!(r#"{{"userIds": ["{}"]}}"#, acme::LEARNER)),
    )
    .await;
    assert_eq!(points.status, 200, "{}", points.body);
    assert_eq!(
        parsed(&points),
        json!([{"userId": acme::LEARNER, "points": 421}])
    );
}

async fn json_bodies_are_refused_with_the_same_limits_and_messages_as_xml(stack: &TestStack) {
    let before = stack.snapshot().await;
    // The core's messages are the same whichever format carried the field.
    let xml = send_operation(
        stack,
        "POST",
        "/department",
        Some(&format!(
            "<request><name> </name><parentDepartmentId>{}</parentDepartmentId></request>",
            acme::SALES
        )),
        "",
    )
    .await;
    let json = send_json(
        stack,
        "POST",
        "/department",
        Some(&format!(
            r#"{{"name": " ", "parentDepartmentId": "{}"}}"#,
            acme::SALES
        )),
    )
    .await;
    assert_eq!((xml.status, json.status), (400, 400));
    let xml_message = lms_tests::xml::text_of(&xml.body, "message").unwrap();
    assert_eq!(parsed(&json)["message"], xml_message.as_str());

    let too_many: Vec<String> = (0..10_001)
        .map(|n| format!("0191a000-0000-7000-8000-{n:012}"))
        .collect();
    let answer = send_json(
        stack,
        "POST",
        "/enrollment/delete",
        Some(&json!({"enrollmentIds": too_many}).to_string()),
    )
    .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert!(
        parsed(&answer)["message"]
            .as_str()
            .unwrap()
            .contains("10000")
            || answer.body.contains("10,000"),
        "{}",
        answer.body
    );

    for (body, needle) in [
        ("{\"name\": ", "not valid JSON"),
        ("[]", "JSON object"),
        ("", "empty"),
        (r#"{"enrollmentIds": "a,b"}"#, "enrollmentIds"),
        (r#"{"ids": []}"#, "enrollmentIds"),
        (
            r#"{"enrollmentIds": ["a"], "enrollmentIds": ["b"]}"#,
            "\"enrollmentIds\" is given twice",
        ),
    ] {
        let answer = send_json(stack, "POST", "/enrollment/delete", Some(body)).await;
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        let message = parsed(&answer)["message"].as_str().unwrap().to_owned();
        assert!(message.contains(needle), "{body}: {message}");
    }
    let huge = format!(r#"{{"name": "{}"}}"#, "x".repeat(1024 * 1024));
    let answer = send_json(
        stack,
        "POST",
        &format!("/group/{}", acme::INTERNS),
        Some(&huge),
    )
    .await;
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert!(
        parsed(&answer)["message"]
            .as_str()
            .unwrap()
            .contains("1 MiB")
    );
    assert_eq!(
        stack.snapshot().await,
        before,
        "refused bodies change nothing"
    );
}

async fn errors_come_in_the_negotiated_format_and_406_when_neither_is_acceptable(
    stack: &TestStack,
) {
    let head = "GET /api/v2/group/00000000-0000-7000-8000-000000000000 HTTP/1.1\r\n\
                Accept: application/json\r\nX-Request-Id: req-42\r\n\
                X-Auth-Account-Url: https://acme.example.com\r\n\
                X-Auth-Email: owner@acme.example.com\r\nX-Auth-Password: wrong password";
    let answer = send_raw(stack, head, b"").await;
    assert_eq!(answer.status, 401);
    let error = parsed(&answer);
    assert_eq!(error["code"], 401);
    assert_eq!(error["requestId"], "req-42");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("Authentication failed")
    );

    let missing = send_json(
        stack,
        "GET",
        "/api/v2/group/00000000-0000-7000-8000-000000000000",
        None,
    )
    .await;
    assert_eq!(missing.status, 404);
    assert_eq!(parsed(&missing)["code"], 404);

    let head = format!(
        "GET /group/{} HTTP/1.1\r\nAccept: text/html\r\n{}",
        acme::INTERNS,
        auth_headers(world::OWNER)
    );
    let answer = send_raw(stack, &head, b"").await;
    assert_eq!(answer.status, 406, "{}", answer.body);
    assert!(answer.body.contains("<code>406</code>"), "{}", answer.body);
}

/// The keys an XML-to-array converter that upper-cases names produces, in document order
/// (`RESPONSE`, `RESPONSE.CONTENTITEM.TITLE`, ...).
fn upper_cased_paths(body: &str) -> Vec<String> {
    let mut path: Vec<String> = Vec::new();
    let mut found = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find('<') {
        rest = &rest[start + 1..];
        let end = rest.find('>').expect("a closed tag");
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(path.pop().as_deref(), Some(name.to_uppercase().as_str()));
        } else if let Some(name) = tag.strip_suffix('/') {
            found.push(
                [path.join("."), name.to_uppercase()]
                    .join(".")
                    .trim_start_matches('.')
                    .to_owned(),
            );
        } else {
            path.push(tag.to_uppercase());
            found.push(path.join("."));
        }
    }
    found
}

async fn xml_answers_read_by_an_upper_casing_converter_keep_their_shape(stack: &TestStack) {
    let content = send_operation(
        stack,
        "GET",
        &format!("/api/v2/content/{}", acme::WELCOME_COURSE),
        None,
        "",
    )
    .await;
    let paths = upper_cased_paths(&content.body);
    assert!(
        paths.contains(&"RESPONSE.CONTENTITEM.TITLE".to_owned()),
        "{paths:?}"
    );
    let points = send_operation(
        stack,
        "GET",
        &format!(
            "/api/v2/gamification/points?userIds={},{}",
            acme::LEARNER,
            acme::OWNER
        ),
        None,
        "",
    )
    .await;
    let infos = upper_cased_paths(&points.body)
        .into_iter()
        .filter(|path| path == "RESPONSE.USERPOINTSINFO")
        .count();
    assert_eq!(infos, 2, "{}", points.body);
}
