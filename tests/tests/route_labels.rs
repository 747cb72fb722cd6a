//! Every route the gateway serves is counted under its template: one successful call of each
//! method of each route moves `http_server_requests_total{route="<template>",…}` on the real
//! `/metrics` page, and none is counted as `unmatched`.
//!
//! The routes come from the gateway itself (`lms_tests::routes::served_routes`: its templates,
//! and the methods each serves found by asking it), so a route added later is walked too, and
//! fails here until it has a successful call below. A binary
//! of its own: the metrics recorder is process-wide.

use std::net::SocketAddr;

use lms_proto::v1::{CreateApiClientRequest, directory_service_client::DirectoryServiceClient};
use lms_runtime::metrics::MetricsServer;
use lms_tests::routes::{ANY_ID, served_routes};
use lms_tests::{
    Reply, TestStack, on_both_backends,
    world::{self, acme},
    xml::text_of,
};
use reqwest::Method;
use sea_orm::EntityTrait as _;

on_both_backends!(every_route_is_counted_under_its_template_after_a_successful_call);

/// What one successful call sends.
enum Body {
    None,
    Xml(String),
    Form(String),
}

/// What earlier calls made, for the calls that need it.
#[derive(Default)]
struct Made {
    department: Option<String>,
    task: Option<String>,
    /// The confirmation code `POST /webhook/code/send` made, read from the database.
    code: Option<String>,
    /// The SCIM client `POST /scim_tokens` made.
    scim_client: Option<String>,
}

/// A successful call of `method` on `template`: its path and body. `None` for a route this
/// test does not know yet, which fails it.
fn call(
    method: &Method,
    template: &str,
    made: &Made,
    client: &(String, String),
) -> Option<(String, Body)> {
    let xml = |inner: String| Body::Xml(inner);
    let points = |root: &str| {
        xml(format!(
            "<{root}><userId>{}</userId><amount>5</amount><reason>Quiz</reason></{root}>",
            acme::LEARNER
        ))
    };
    let (path, body) = match (method.as_str(), template) {
        ("GET", "/healthz" | "/readyz" | "/openapi.json") => (template.to_owned(), Body::None),
        ("GET", "/department" | "/departments" | "/group" | "/groups" | "/user" | "/user/v2")
        | ("GET", "/users" | "/users/v2" | "/enrollment" | "/enrollments" | "/content")
        | ("GET", "/contents" | "/gamification/points") => (template.to_owned(), Body::None),
        ("POST", "/users" | "/users/v2" | "/user/list" | "/enrollments" | "/contents")
        | ("POST", "/gamification/points") => (template.to_owned(), xml("<request/>".into())),
        ("GET", "/department/{department_id}") => {
            (format!("/department/{}", acme::SALES), Body::None)
        }
        ("POST", "/department") => (
            template.to_owned(),
            xml(format!(
                "<request><name>Temporary</name><parentDepartmentId>{}</parentDepartmentId></request>",
                acme::SALES
            )),
        ),
        ("POST", "/department/{department_id}") => (
            format!("/department/{}", acme::SALES),
            xml("<request><name>Sales</name></request>".into()),
        ),
        ("DELETE", "/department/{department_id}") => (
            // The one `POST /department` made (the walk deletes after everything else).
            format!(
                "/department/{}",
                made.department.as_deref().unwrap_or(ANY_ID)
            ),
            Body::None,
        ),
        ("POST", "/group") => (
            template.to_owned(),
            xml("<request><name>New</name><userIds/></request>".into()),
        ),
        ("GET", "/group/{group_id}") => (format!("/group/{}", acme::INTERNS), Body::None),
        ("POST", "/group/{group_id}") => (
            format!("/group/{}", acme::INTERNS),
            xml("<request><name>Interns</name></request>".into()),
        ),
        ("DELETE", "/group/{group_id}") => (format!("/group/{}", acme::EMPTY_GROUP), Body::None),
        ("POST", "/group/{group_id}/members") => (
            format!("/group/{}/members", acme::INTERNS),
            xml(format!(
                "<request><userIds><id>{}</id></userIds></request>",
                acme::LEARNER
            )),
        ),
        ("POST", "/user") => (
            template.to_owned(),
            xml(format!(
                "<request><departmentId>{}</departmentId><password>{}</password><fields>\
                 <login>new.hire@acme.example.com</login><email>new.hire@acme.example.com</email>\
                 <first_name>New</first_name><last_name>Hire</last_name></fields></request>",
                acme::SALES,
                world::PASSWORD
            )),
        ),
        ("GET", "/user/{user_id}" | "/user/{user_id}/v2") => {
            (template.replace("{user_id}", acme::LEARNER), Body::None)
        }
        ("POST", "/user/{user_id}") => (
            format!("/user/{}", acme::LEARNER),
            xml("<request><fields><first_name>Lena</first_name></fields></request>".into()),
        ),
        ("DELETE", "/user/{user_id}") => (format!("/user/{}", acme::FORMER_ADMIN), Body::None),
        ("POST", "/user/{user_id}/password") => (
            format!("/user/{}/password", acme::VIEWER),
            xml("<request><password>another long password</password></request>".into()),
        ),
        ("POST", "/user/{user_id}/status") => (
            format!("/user/{}/status", acme::VIEWER),
            xml("<request><status>3</status></request>".into()),
        ),
        ("POST", "/user/{user_id}/groups/remove") => (
            format!("/user/{}/groups/remove", acme::LEARNER),
            xml(format!(
                "<request><groupIds><id>{}</id></groupIds></request>",
                acme::INTERNS
            )),
        ),
        (
            "POST",
            "/user/{user_id}/scheduled_deactivation" | "/user/{user_id}/scheduled_termination",
        ) => (
            template.replace("{user_id}", acme::ENGINEER),
            xml("<request><date>2099-12-31</date></request>".into()),
        ),
        (
            "DELETE",
            "/user/{user_id}/scheduled_deactivation" | "/user/{user_id}/scheduled_termination",
        ) => (template.replace("{user_id}", acme::ENGINEER), Body::None),
        ("POST", "/users/activate" | "/users/find_existing") => (
            template.to_owned(),
            xml(format!(
                "<request><userIds><id>{}</id></userIds></request>",
                acme::VIEWER
            )),
        ),
        ("POST", "/users/deactivate" | "/users/terminate") => (
            template.to_owned(),
            xml(format!(
                "<request><userIds><id>{}</id></userIds></request>",
                acme::SUPPORTER
            )),
        ),
        ("POST", "/department/{department_id}/user/move") => (
            format!("/department/{}/user/move", acme::SALES),
            xml(format!(
                "<request><userIds><id>{}</id></userIds></request>",
                acme::LEARNER
            )),
        ),
        ("POST", "/enrollment") => (
            template.to_owned(),
            xml(format!(
                "<request><courseIds><id>{}</id></courseIds><learnerIds><id>{}</id></learnerIds></request>",
                acme::WELCOME_COURSE,
                acme::VIEWER
            )),
        ),
        ("POST", "/enrollment/delete") => (
            template.to_owned(),
            xml(format!(
                "<DeleteEnrollments><enrollmentIds><id>{}</id></enrollmentIds></DeleteEnrollments>",
                acme::LEARNER_WELCOME
            )),
        ),
        ("GET", "/content/{content_item_id}") => {
            (format!("/content/{}", acme::WELCOME_COURSE), Body::None)
        }
        ("POST", "/gamification/points/award") => {
            (template.to_owned(), points("awardGamificationPoints"))
        }
        ("POST", "/gamification/points/withdraw") => {
            (template.to_owned(), points("withdrawGamificationPoints"))
        }
        ("GET", "/learners/results" | "/learners/modules/results") => {
            (template.to_owned(), Body::None)
        }
        ("GET", "/content/{content_item_id}/final_statuses") => (
            format!("/content/{}/final_statuses", acme::WELCOME_COURSE),
            Body::None,
        ),
        ("POST", "/statistics/course") => (
            template.to_owned(),
            xml(format!(
                "<request><courseId>{}</courseId><enrollmentIds><id>{}</id></enrollmentIds>\
                 <status>passed</status><date>2025-12-31</date></request>",
                acme::WELCOME_COURSE,
                acme::ENGINEER_WELCOME
            )),
        ),
        ("DELETE", "/statistics/module") => (
            format!(
                "{template}?courseId={}&enrollmentIds[]={}",
                acme::WELCOME_COURSE,
                acme::ENGINEER_WELCOME
            ),
            Body::None,
        ),
        ("GET", "/task/{task_id}/status") => (
            // The task of the one `POST /statistics/course` (registered before this route).
            format!("/task/{}/status", made.task.as_deref().unwrap_or("1")),
            Body::None,
        ),
        ("GET" | "POST", "/scim_tokens") => (template.to_owned(), Body::None),
        ("DELETE", "/scim_tokens/{client_id}") => (
            format!(
                "/scim_tokens/{}",
                made.scim_client.as_deref().unwrap_or(ANY_ID)
            ),
            Body::None,
        ),
        ("POST", "/api/v3/token") => (
            template.to_owned(),
            Body::Form(
                form_urlencoded::Serializer::new(String::new())
                    .append_pair("client_id", &client.0)
                    .append_pair("client_secret", &client.1)
                    .append_pair("grant_type", "client_credentials")
                    .finish(),
            ),
        ),
        ("POST", "/webhook/register" | "/webhook/settings/change") => (
            template.to_owned(),
            xml("<request><subscriberName>crm</subscriberName>\
                 <callbackUrl>https://hooks.example.com/lms</callbackUrl></request>"
                .into()),
        ),
        (
            "POST",
            "/webhook/code/send" | "/webhook/enable" | "/webhook/disable" | "/webhook/remove",
        ) => (
            template.to_owned(),
            xml("<request><subscriberName>crm</subscriberName></request>".into()),
        ),
        ("POST", "/webhook/confirm") => (
            template.to_owned(),
            xml(format!(
                "<request><subscriberName>crm</subscriberName><code>{}</code></request>",
                made.code.as_deref().unwrap_or_default()
            )),
        ),
        ("POST", "/webhook/subscribe") => (
            template.to_owned(),
            xml(
                "<request><subscriberName>crm</subscriberName><subscription>\
                 <subscriptionType>USER_REGISTERED</subscriptionType></subscription></request>"
                    .into(),
            ),
        ),
        ("POST", "/webhook/unsubscribe") => (
            template.to_owned(),
            xml("<request><subscriberName>crm</subscriberName>\
                 <subscriptionType>USER_REGISTERED</subscriptionType></request>"
                .into()),
        ),
        ("GET", "/webhook/subscription/list" | "/webhook/subscriber/info") => {
            (format!("{template}?subscriberName=crm"), Body::None)
        }
        ("GET", "/webhook/subscribers") => (template.to_owned(), Body::None),
        _ => return None,
    };
    Some((path, body))
}

async fn send(stack: &TestStack, method: &Method, path: &str, body: Body) -> Reply {
    let request = stack.request(method.clone(), path, world::OWNER);
    let request = match body {
        Body::None => request,
        Body::Xml(xml) => request
            .header("Content-Type", "application/xml")
            .body(format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>{xml}")),
        Body::Form(form) => request
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form),
    };
    Reply::from(request.send().await.expect("the gateway answers")).await
}

async fn scrape(metrics: SocketAddr) -> String {
    reqwest::get(format!("http://{metrics}/metrics"))
        .await
        .expect("the metrics endpoint answers")
        .text()
        .await
        .expect("a page")
}

/// The value of one sample (`name{labels} value`), 0 when absent.
fn sample(page: &str, series: &str) -> f64 {
    page.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse::<f64>().ok())
        .unwrap_or(0.0)
}

async fn every_route_is_counted_under_its_template_after_a_successful_call(stack: &TestStack) {
    let metrics = MetricsServer::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("a metrics address");
    let metrics_addr = metrics.local_addr();
    tokio::spawn(metrics.run_until(std::future::pending()));
    let made = DirectoryServiceClient::new(stack.grpc_channel().await)
        .create_api_client(world::OWNER.grpc_request(CreateApiClientRequest {
            user_id: acme::ADMIN.to_owned(),
            scim: false,
        }))
        .await
        .expect("the owner makes an API client")
        .into_inner();
    let client = (made.client_id, made.client_secret);

    let mut routes = served_routes(stack).await;
    assert!(
        routes.iter().any(|(_, template)| *template == "/users"),
        "{routes:?}"
    );
    // Deletions last, so nothing another call needs is gone.
    routes.sort_by_key(|(method, _)| *method == Method::DELETE);
    let unknown: Vec<String> = routes
        .iter()
        .filter(|(method, template)| call(method, template, &Made::default(), &client).is_none())
        .map(|(method, template)| format!("{method} {template}"))
        .collect();
    assert!(
        unknown.is_empty(),
        "routes without a successful call in this test (add one): {unknown:?}"
    );

    let before = scrape(metrics_addr).await;
    let mut made = Made::default();
    let mut counted = Vec::new();
    for (method, template) in &routes {
        let (path, body) = call(method, template, &made, &client).expect("a call");
        let reply = send(stack, method, &path, body).await;
        assert!(
            (200..300).contains(&reply.status),
            "{method} {path}: {} {}",
            reply.status,
            reply.body
        );
        if (method, *template) == (&Method::POST, "/department") {
            made.department = text_of(&reply.body, "response");
        }
        if (method, *template) == (&Method::POST, "/scim_tokens") {
            made.scim_client = text_of(&reply.body, "clientId");
        }
        if (method, *template) == (&Method::POST, "/statistics/course") {
            made.task = text_of(&reply.body, "taskId");
        }
        if (method, *template) == (&Method::POST, "/webhook/code/send") {
            made.code = lms_core::entities::webhook_subscriber::Entity::find()
                .one(stack.db())
                .await
                .expect("read")
                .and_then(|subscriber| subscriber.code)
                .map(|code| code.0);
        }
        counted.push(format!(
            r#"http_server_requests_total{{route="{template}",method="{method}",status="{}"}}"#,
            reply.status
        ));
    }
    let after = scrape(metrics_addr).await;
    for series in &counted {
        assert!(
            sample(&after, series) - sample(&before, series) >= 1.0,
            "{series} did not move:\n{after}"
        );
    }
    let unmatched_successes: Vec<&str> = after
        .lines()
        .filter(|line| {
            line.starts_with(r#"http_server_requests_total{route="unmatched""#)
                && line.contains(r#"status="2"#)
        })
        .collect();
    assert!(
        unmatched_successes.is_empty(),
        "successes counted as unmatched: {unmatched_successes:?}"
    );
}
