//! What every operation shares: header authentication (401, one body for all), and for the
//! operations with a body, the media type (415) and size (413) rules, all leaving stored
//! data untouched.

use lms_tests::{
    Reply, TestStack, on_both_backends,
    world::{self, acme},
};
use reqwest::Method;

on_both_backends!(
    every_operation_refuses_a_caller_without_credentials_with_the_same_401,
    every_operation_with_a_body_refuses_other_media_types_and_oversized_bodies,
);

/// Method, path and a valid body of each of the seven operations.
fn operations() -> Vec<(Method, String, Option<String>)> {
    let xml = |inner: &str| format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>{inner}");
    vec![
        (
            Method::POST,
            format!("/department/{}", acme::SALES),
            Some(xml("<request><name>Sales</name></request>")),
        ),
        (
            Method::POST,
            "/department".to_owned(),
            Some(xml(&format!(
                "<request><name>New</name><parentDepartmentId>{}</parentDepartmentId></request>",
                acme::SALES
            ))),
        ),
        (
            Method::POST,
            format!("/group/{}", acme::INTERNS),
            Some(xml("<request><name>Renamed</name></request>")),
        ),
        (Method::GET, format!("/group/{}", acme::INTERNS), None),
        (
            Method::POST,
            "/enrollment/delete".to_owned(),
            Some(xml(&format!(
                "<DeleteEnrollments><enrollmentIds><id>{}</id></enrollmentIds></DeleteEnrollments>",
                acme::LEARNER_WELCOME
            ))),
        ),
        (
            Method::GET,
            format!("/content/{}", acme::WELCOME_COURSE),
            None,
        ),
        (Method::GET, "/gamification/points".to_owned(), None),
        (Method::GET, format!("/user/{}", acme::LEARNER), None),
        (Method::GET, "/user".to_owned(), None),
        (Method::GET, "/users".to_owned(), None),
    ]
}

/// Method, path and a valid body of each group list and write and points write
/// (neighbours.md sections 7 and 8). A list of its own: sent with another login's wrong
/// password, so the failed-login throttle (10 per login) is not reached.
fn group_and_points_operations() -> Vec<(Method, String, Option<String>)> {
    let xml = |inner: &str| format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>{inner}");
    let points = |root: &str| {
        xml(&format!(
            "<{root}><userId>{}</userId><amount>1</amount></{root}>",
            acme::LEARNER
        ))
    };
    vec![
        (Method::GET, "/group".to_owned(), None),
        (Method::GET, "/groups".to_owned(), None),
        (
            Method::POST,
            "/group".to_owned(),
            Some(xml("<request><name>New</name><userIds/></request>")),
        ),
        (
            Method::POST,
            format!("/group/{}/members", acme::INTERNS),
            Some(xml(&format!(
                "<request><userIds><id>{}</id></userIds></request>",
                acme::LEARNER
            ))),
        ),
        (
            Method::DELETE,
            format!("/group/{}", acme::EMPTY_GROUP),
            None,
        ),
        (
            Method::POST,
            "/gamification/points/award".to_owned(),
            Some(points("awardGamificationPoints")),
        ),
        (
            Method::POST,
            "/gamification/points/withdraw".to_owned(),
            Some(points("withdrawGamificationPoints")),
        ),
    ]
}

async fn every_operation_refuses_a_caller_without_credentials_with_the_same_401(stack: &TestStack) {
    let before = stack.snapshot().await;
    let mut bodies = Vec::new();
    let every = operations()
        .into_iter()
        .map(|operation| (world::OWNER, operation))
        .chain(
            group_and_points_operations()
                .into_iter()
                .map(|operation| (world::ADMIN, operation)),
        );
    for (login, (method, path, body)) in every {
        let mut request = stack
            .http
            .request(method.clone(), format!("{}{path}", stack.base_url))
            .header("X-Request-Id", "one-id")
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", login.email)
            .header("X-Auth-Password", "not the password");
        if let Some(body) = body {
            request = request.header("Content-Type", "application/xml").body(body);
        }
        let reply = Reply::from(request.send().await.expect("request")).await;
        reply.assert_error(401, "authentication failed");
        bodies.push((format!("{method} {path}"), reply.body));
    }
    for (operation, body) in &bodies {
        assert_eq!(body, &bodies[0].1, "the 401 of {operation} differs");
    }
    assert_eq!(
        stack.snapshot().await,
        before,
        "a refused caller changes nothing"
    );
}

async fn every_operation_with_a_body_refuses_other_media_types_and_oversized_bodies(
    stack: &TestStack,
) {
    let before = stack.snapshot().await;
    for (method, path, body) in operations()
        .into_iter()
        .chain(group_and_points_operations())
    {
        let Some(body) = body else { continue };
        let wrong_type = stack
            .post_typed(&path, world::OWNER, "r", Some("text/plain"), body.clone())
            .await;
        wrong_type.assert_error(415, "content-type");
        assert_eq!(method, Method::POST);

        let padding = "x".repeat(1024 * 1024 + 1);
        let huge = body.replacen("?>", &format!("?><!--{padding}-->"), 1);
        let too_large = stack
            .post_typed(&path, world::OWNER, "r", Some("application/xml"), huge)
            .await;
        too_large.assert_error(413, "1 MiB");
    }
    assert_eq!(
        stack.snapshot().await,
        before,
        "refused bodies change nothing"
    );
}
