//! `pageSize` (and the numbered `page`) are decimal digits and nothing else on every paged
//! list, in the query and in XML and JSON bodies (issue 28): a sign or a space, which the
//! number readers of before let through (`pageSize=+5`, `pageSize=%205`), is a 400 naming the
//! parameter, as `ten` is, and the list is not read.

use lms_tests::{TestStack, on_both_backends, world};

on_both_backends!(
    a_sign_or_a_space_in_a_page_size_is_refused_naming_it_on_every_paged_list,
    digits_alone_are_a_page_size_everywhere,
);

const PAGED: [&str; 7] = [
    "/departments",
    "/groups",
    "/enrollments",
    "/contents",
    "/users",
    "/users/v2",
    "/api/v2/users",
];

/// The lists that also take their query in a body.
const PAGED_BY_POST: [&str; 4] = ["/enrollments", "/contents", "/users", "/users/v2"];

async fn a_sign_or_a_space_in_a_page_size_is_refused_naming_it_on_every_paged_list(
    stack: &TestStack,
) {
    for path in PAGED {
        for size in ["%2B5", "+5", "%205", "5%20", "%20", "-5", "5.0"] {
            stack
                .get(&format!("{path}?pageSize={size}"), world::OWNER)
                .await
                .assert_error(400, "pageSize must be a whole number");
        }
    }
    for path in PAGED_BY_POST {
        stack
            .post_xml(
                path,
                world::OWNER,
                "<request><pageSize>+5</pageSize></request>",
            )
            .await
            .assert_error(400, "pageSize must be a whole number; got \"+5\"");
        let reply = lms_tests::Reply::from(
            stack
                .request(reqwest::Method::POST, path, world::OWNER)
                .header("Content-Type", "application/json")
                .body(r#"{"pageSize":"5 5"}"#)
                .send()
                .await
                .expect("request"),
        )
        .await;
        assert_eq!(reply.status, 400, "{path}: {}", reply.body);
        assert!(
            reply.body.contains("pageSize must be a whole number"),
            "{}",
            reply.body
        );
    }
    for (body, name) in [
        ("<request><page>+1</page></request>", "page"),
        ("<request><pageSize>+1</pageSize></request>", "pageSize"),
    ] {
        stack
            .post_xml("/user/list", world::OWNER, body)
            .await
            .assert_error(400, &format!("{name} must be a whole number"));
    }
}

async fn digits_alone_are_a_page_size_everywhere(stack: &TestStack) {
    for path in PAGED {
        let reply = stack.get(&format!("{path}?pageSize=1"), world::OWNER).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert!(
            reply.body.contains("<nextPageToken>"),
            "{path}: {}",
            reply.body
        );
    }
    for path in PAGED_BY_POST {
        // The XML reader trims an element's text, as it does for every value.
        let reply = stack
            .post_xml(
                path,
                world::OWNER,
                "<request><pageSize> 1 </pageSize></request>",
            )
            .await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert!(
            reply.body.contains("<nextPageToken>"),
            "{path}: {}",
            reply.body
        );
    }
}
