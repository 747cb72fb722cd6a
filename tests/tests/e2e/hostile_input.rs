//! Attacks on the XML interface before and around authentication, through the real gateway and
//! core: each is refused cheaply with a 4xx in the contract's format, and callers with valid
//! credentials running at the same time are neither failed nor held up.

use std::time::{Duration, Instant};

use futures::future::join_all;
use lms_tests::{
    Reply, TestStack, on_both_backends,
    world::{self, acme},
    xml::texts_of,
};
use reqwest::Method;

on_both_backends!(
    forty_thousand_attributes_with_a_wrong_password_are_refused_at_once_while_others_are_served,
    oversized_credential_headers_are_401_while_other_callers_all_succeed,
    a_one_mib_root_element_name_gets_an_error_body_under_1_kb,
    ten_thousand_user_ids_are_accepted_in_a_post_body,
);

/// A department update whose `name` carries `count` attributes (about 1 MiB at 40,000).
fn many_attributes(count: usize) -> String {
    let mut body = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?><request><name");
    for n in 0..count {
        body.push_str(&format!(" a{n}=\"v\""));
    }
    body.push_str(">Sales</name></request>");
    body
}

/// A valid read as the owner: the group of interns.
async fn valid_read(stack: &TestStack) -> (Reply, Duration) {
    let started = Instant::now();
    let reply = stack
        .get(&format!("/group/{}", acme::INTERNS), world::OWNER)
        .await;
    (reply, started.elapsed())
}

async fn forty_thousand_attributes_with_a_wrong_password_are_refused_at_once_while_others_are_served(
    stack: &TestStack,
) {
    let before = stack.snapshot().await;
    let body = many_attributes(40_000);
    let attack = |_| {
        let body = body.clone();
        async move {
            let started = Instant::now();
            let reply = Reply::send(
                stack
                    .http
                    .post(format!("{}/department/{}", stack.base_url, acme::SALES))
                    .header("X-Auth-Account-Url", world::ACME_URL)
                    .header("X-Auth-Email", world::OWNER.email)
                    .header("X-Auth-Password", "wrong password")
                    .header("Content-Type", "application/xml")
                    .body(body),
            )
            .await;
            (reply, started.elapsed())
        }
    };
    let (attacks, valid) = tokio::join!(
        join_all((0..4).map(attack)),
        join_all((0..4).map(|_| valid_read(stack)))
    );
    for (reply, took) in attacks {
        reply.assert_error(400, "more than 32 attributes");
        assert!(took < Duration::from_secs(2), "an attack took {took:?}");
    }
    for (reply, took) in valid {
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(took < Duration::from_secs(2), "a valid read took {took:?}");
    }
    assert_eq!(stack.snapshot().await, before);
}

async fn oversized_credential_headers_are_401_while_other_callers_all_succeed(stack: &TestStack) {
    let oversized = |(header, size): (&'static str, usize)| async move {
        let mut request = stack
            .http
            .get(format!("{}/group/{}", stack.base_url, acme::INTERNS))
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", world::OWNER.email)
            .header("X-Auth-Password", world::PASSWORD);
        // reqwest appends; the oversized value must be the only one.
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(header, "a".repeat(size).parse().unwrap());
        request = request.headers(headers);
        let reply = Reply::from(request.send().await.expect("request")).await;
        (header, size, reply)
    };
    let attacks = (0..30).map(|n| {
        let header = ["X-Auth-Password", "X-Auth-Account-Url", "X-Auth-Email"][n % 3];
        let size = if n % 2 == 0 { 16 * 1024 } else { 100 * 1024 };
        oversized((header, size))
    });
    let (attacks, valid) = tokio::join!(
        join_all(attacks),
        join_all((0..30).map(|_| valid_read(stack)))
    );
    for (header, size, reply) in attacks {
        assert_eq!(
            reply.status, 401,
            "{header} of {size} bytes: {}",
            reply.body
        );
        reply.assert_error(401, "Authentication failed");
        assert!(reply.header("x-request-id").is_some());
    }
    for (reply, _) in valid {
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    // The shared connection to the core is intact afterwards.
    let (reply, _) = valid_read(stack).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

async fn a_one_mib_root_element_name_gets_an_error_body_under_1_kb(stack: &TestStack) {
    let name = "r".repeat(1024 * 1024 - 64);
    for body in [format!("<{name}/>"), format!("<{name}>")] {
        let reply = stack
            .post_xml(&format!("/department/{}", acme::SALES), world::OWNER, &body)
            .await;
        reply.assert_error(400, "rrrr");
        assert!(reply.body.len() < 1024, "{} bytes", reply.body.len());
    }
}

async fn ten_thousand_user_ids_are_accepted_in_a_post_body(stack: &TestStack) {
    // Ids that name nobody are left out; the two real ones are answered.
    let mut ids: Vec<String> = (0..9_998_u32)
        .map(|n| format!("0191c000-0000-7000-8000-{n:012x}"))
        .collect();
    ids.push(acme::LEARNER.to_owned());
    ids.push(acme::ENGINEER.to_owned());
    assert_eq!(ids.len(), 10_000);
    let body = |ids: &[String]| {
        let mut xml = String::from("<request><userIds>");
        for id in ids {
            xml.push_str(&format!("<id>{id}</id>"));
        }
        xml.push_str("</userIds></request>");
        xml
    };
    let reply = stack
        .post_xml("/gamification/points", world::OWNER, &body(&ids))
        .await;
    assert_eq!(reply.status, 200, "{:.500}", reply.body);
    let mut expected = vec![acme::ENGINEER.to_owned(), acme::LEARNER.to_owned()];
    expected.sort();
    assert_eq!(texts_of(&reply.body, "userId"), expected);

    // In a query string, a list is as long as a URI may be (65,534 bytes: 1,500 ids here);
    // past that no HTTP library builds or parses the request (the gateway's own tests send
    // one over a raw socket: a 414 in XML pointing to the body).
    let query = ids[8_500..].join(",");
    let reply = stack
        .get(
            &format!("/gamification/points?userIds={query}"),
            world::OWNER,
        )
        .await;
    assert_eq!(reply.status, 200, "{:.500}", reply.body);
    assert_eq!(texts_of(&reply.body, "userId"), expected);

    let mut too_many = ids.clone();
    too_many.push("0191a000-0000-7000-8000-ffffffffffff".to_owned());
    let reply = stack
        .request(Method::POST, "/gamification/points", world::OWNER)
        .header("Content-Type", "application/xml")
        .body(body(&too_many))
        .send()
        .await
        .expect("request");
    Reply::from(reply).await.assert_error(400, "10000");
}
