//! `GET /content/{contentItemId}` (interface 4.6; contract sections 3, 4 and 8) through
//! the real gateway and core.

use lms_proto::v1::{self as pb, directory_service_client::DirectoryServiceClient};
use lms_tests::{
    TestStack, on_both_backends,
    world::{self, Login, acme, globex},
    xml::{PROLOGUE, element_names, text_of},
};

const CONTENT_ITEM_SHAPE: [&str; 9] = [
    "response",
    "contentItem",
    "contentItemId",
    "title",
    "description",
    "userId",
    "addedDate",
    "viewUrl",
    "type",
];

on_both_backends!(
    an_owner_reads_a_course_with_its_fields_in_the_interfaces_order,
    an_imported_date_is_given_in_utc_and_an_imported_view_url_is_kept,
    a_created_item_is_dated_in_utc_to_the_second_and_its_text_is_escaped,
    every_role_of_the_permission_table_gets_its_answer,
    an_author_reads_only_items_of_projects_it_authors,
    unknown_malformed_and_foreign_content_ids_are_404,
    an_upper_case_id_and_a_lenient_account_url_read_the_same_item,
);

fn path(id: &str) -> String {
    format!("/content/{id}")
}

async fn an_owner_reads_a_course_with_its_fields_in_the_interfaces_order(stack: &TestStack) {
    let reply = stack.get(&path(acme::WELCOME_COURSE), world::OWNER).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    assert!(reply.body.starts_with(PROLOGUE), "{}", reply.body);
    assert_eq!(element_names(&reply.body), CONTENT_ITEM_SHAPE);
    assert_eq!(
        text_of(&reply.body, "contentItemId").as_deref(),
        Some(acme::WELCOME_COURSE)
    );
    assert_eq!(
        text_of(&reply.body, "title").as_deref(),
        Some("Welcome to Acme")
    );
    assert_eq!(
        text_of(&reply.body, "description").as_deref(),
        Some("Everything a new colleague needs & more")
    );
    assert!(
        reply.body.contains("needs &amp; more"),
        "text is escaped: {}",
        reply.body
    );
    assert_eq!(
        text_of(&reply.body, "userId").as_deref(),
        Some(acme::AUTHOR)
    );
    assert_eq!(
        text_of(&reply.body, "addedDate").as_deref(),
        Some("2019-03-26T06:34:57+00:00")
    );
    assert_eq!(
        text_of(&reply.body, "viewUrl"),
        Some(format!(
            "https://acme.example.com/view/{}",
            acme::WELCOME_COURSE
        ))
    );
    assert_eq!(text_of(&reply.body, "type").as_deref(), Some("Course"));
}

async fn an_imported_date_is_given_in_utc_and_an_imported_view_url_is_kept(stack: &TestStack) {
    let reply = stack.get(&path(acme::SECRET_COURSE), world::ADMIN).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(element_names(&reply.body), CONTENT_ITEM_SHAPE);
    // Imported as 2020-01-02T03:04:05+02:00: the same instant, in UTC, never with `Z`.
    assert_eq!(
        text_of(&reply.body, "addedDate").as_deref(),
        Some("2020-01-02T01:04:05+00:00")
    );
    assert_eq!(
        text_of(&reply.body, "viewUrl").as_deref(),
        Some("https://cdn.acme.example.com/secret")
    );
    assert_eq!(text_of(&reply.body, "userId").as_deref(), Some(acme::OWNER));
    assert_eq!(
        text_of(&reply.body, "title").as_deref(),
        Some("Secret plans")
    );
    assert!(
        reply.body.contains("<description></description>") || reply.body.contains("<description/>"),
        "an empty description is an empty element: {}",
        reply.body
    );
    // The other account's item, under its own account URL.
    let foreign = stack.get(&path(globex::COURSE), world::GLOBEX_OWNER).await;
    assert_eq!(foreign.status, 200, "{}", foreign.body);
    assert_eq!(
        text_of(&foreign.body, "addedDate").as_deref(),
        Some("2021-05-06T07:08:09+00:00")
    );
    assert_eq!(
        text_of(&foreign.body, "viewUrl"),
        Some(format!(
            "https://globex.example.com/view/{}",
            globex::COURSE
        ))
    );
}

async fn a_created_item_is_dated_in_utc_to_the_second_and_its_text_is_escaped(stack: &TestStack) {
    let mut directory = DirectoryServiceClient::new(stack.grpc_channel().await);
    let id = directory
        .create_content_item(world::OWNER.grpc_request(pb::CreateContentItemRequest {
            project_id: acme::ONBOARDING.into(),
            title: "Tom & Jerry's \"<Course>\"".into(),
            description: "a < b && c > d".into(),
            user_id: acme::PUBLISHER.into(),
            r#type: "Course".into(),
            added_date: Some("2023-12-31T22:30:59.999-05:30".into()),
            view_url: None,
        }))
        .await
        .expect("the owner creates an item")
        .into_inner()
        .content_item_id;
    let reply = stack.get(&path(&id), world::AUTHOR).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(element_names(&reply.body), CONTENT_ITEM_SHAPE);
    assert_eq!(text_of(&reply.body, "contentItemId"), Some(id.clone()));
    // 22:30:59.999 at -05:30 is 04:00:59.999 UTC the next day, and the year turns.
    assert_eq!(
        text_of(&reply.body, "addedDate").as_deref(),
        Some("2024-01-01T04:00:59+00:00")
    );
    assert_eq!(
        text_of(&reply.body, "viewUrl"),
        Some(format!("https://acme.example.com/view/{id}"))
    );
    assert_eq!(
        text_of(&reply.body, "title").as_deref(),
        Some("Tom & Jerry's \"<Course>\"")
    );
    assert_eq!(
        text_of(&reply.body, "description").as_deref(),
        Some("a < b && c > d")
    );
    assert!(
        reply.body.contains("a &lt; b &amp;&amp; c &gt; d"),
        "{}",
        reply.body
    );
    assert_eq!(
        text_of(&reply.body, "userId").as_deref(),
        Some(acme::PUBLISHER)
    );
}

async fn every_role_of_the_permission_table_gets_its_answer(stack: &TestStack) {
    let allowed = [
        world::OWNER,
        world::ADMIN,
        world::DEPT_ADMIN,
        world::COORDINATOR,
    ];
    for course in [acme::WELCOME_COURSE, acme::SECRET_COURSE] {
        for login in allowed {
            let reply = stack.get(&path(course), login).await;
            assert_eq!(
                reply.status, 200,
                "{} should read {course}: {}",
                login.email, reply.body
            );
            assert_eq!(
                text_of(&reply.body, "contentItemId").as_deref(),
                Some(course)
            );
        }
        let denied: [Login; 4] = [
            world::PUBLISHER,
            world::LEARNER,
            world::VIEWER,
            world::REPORTER,
        ];
        for login in denied {
            let reply = stack.get(&path(course), login).await;
            assert_eq!(
                reply.status, 403,
                "{} must not read {course}: {}",
                login.email, reply.body
            );
            reply.assert_error(403, "permission to read content items");
        }
    }
}

async fn an_author_reads_only_items_of_projects_it_authors(stack: &TestStack) {
    let reply = stack.get(&path(acme::WELCOME_COURSE), world::AUTHOR).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(element_names(&reply.body), CONTENT_ITEM_SHAPE);
    assert_eq!(
        text_of(&reply.body, "title").as_deref(),
        Some("Welcome to Acme")
    );

    let secret = stack.get(&path(acme::SECRET_COURSE), world::AUTHOR).await;
    secret.assert_error(403, "projects you author");
    assert!(!secret.body.contains("Secret plans"), "{}", secret.body);

    // Not being an author of the project is a 403, but a foreign item is still a 404.
    let foreign = stack.get(&path(globex::COURSE), world::AUTHOR).await;
    foreign.assert_error(404, "not found");
}

async fn unknown_malformed_and_foreign_content_ids_are_404(stack: &TestStack) {
    let unknown_id = "0191a000-0000-7000-8000-0000000005ff";
    let unknown = stack.get(&path(unknown_id), world::OWNER).await;
    unknown.assert_error(404, "not found");
    let malformed = stack.get("/content/not-a-course", world::OWNER).await;
    malformed.assert_error(404, "not found");
    let foreign = stack.get(&path(globex::COURSE), world::OWNER).await;
    foreign.assert_error(404, "not found");
    assert!(!foreign.body.contains("Safety first"), "{}", foreign.body);
    // Exactly as if it did not exist.
    assert_eq!(
        foreign.error_message().replace(globex::COURSE, "ID"),
        unknown.error_message().replace(unknown_id, "ID")
    );
    for login in [world::ADMIN, world::DEPT_ADMIN, world::COORDINATOR] {
        stack
            .get(&path(globex::COURSE), login)
            .await
            .assert_error(404, "not found");
    }
}

async fn an_upper_case_id_and_a_lenient_account_url_read_the_same_item(stack: &TestStack) {
    let lenient = Login {
        account_url: "HTTPS://ACME.Example.COM:443/",
        email: "OWNER@acme.example.com",
        id: acme::OWNER,
    };
    let reply = stack
        .get(&path(&acme::WELCOME_COURSE.to_uppercase()), lenient)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        text_of(&reply.body, "contentItemId").as_deref(),
        Some(acme::WELCOME_COURSE)
    );
    // The view URL hangs off the account's URL, not off how the caller spelled it.
    assert_eq!(
        text_of(&reply.body, "viewUrl"),
        Some(format!(
            "https://acme.example.com/view/{}",
            acme::WELCOME_COURSE
        ))
    );
    let post = stack
        .post_xml(&path(acme::WELCOME_COURSE), world::OWNER, "")
        .await;
    post.assert_error(405, "POST");
    assert!(
        post.header("allow")
            .is_some_and(|allow| allow.contains("GET")),
        "{:?}",
        post.headers
    );
}

on_both_backends!(a_path_id_with_surrounding_spaces_names_nothing);

async fn a_path_id_with_surrounding_spaces_names_nothing(stack: &TestStack) {
    let padded = stack
        .get(
            &format!("/content/%20{}", acme::WELCOME_COURSE),
            world::OWNER,
        )
        .await;
    padded.assert_error(404, "not found");
    let group = stack
        .get(&format!("/group/{}%20", acme::INTERNS), world::OWNER)
        .await;
    group.assert_error(404, "not found");
}
