//! `GET /content`, `GET /contents` and `POST /contents` (neighbours.md section 6) through the
//! real gateway and core: both formats, every prefix, the filters, the permission table
//! (authors see the items of their projects), tenant isolation and paging.

use lms_core::entities::content_item;
use lms_tests::{
    TestStack, get_json, json_ids, json_of, on_both_backends, post_json, uuid, walk_json_pages,
    walk_xml_pages,
    world::{self, acme, globex},
    xml::text_of,
    xml_ids,
};
use sea_orm::{ActiveModelTrait as _, Set, prelude::Uuid};

on_both_backends!(
    the_owner_lists_content_in_xml_and_json_under_every_prefix,
    filters_narrow_by_id_and_type,
    authors_see_their_projects_and_roles_without_content_read_are_refused,
    another_accounts_items_are_never_listed,
    pages_hold_exactly_page_size_and_the_last_has_no_token,
    bad_ids_sizes_tokens_and_parameters_are_400_naming_them,
);

const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];
const ACME: [&str; 2] = [acme::WELCOME_COURSE, acme::SECRET_COURSE];
const ID: &str = "contentItemId";

/// Adds a `Quiz` to the Onboarding project with id number `n` (after every world id).
async fn add(stack: &TestStack, n: u128) -> String {
    use sea_orm::EntityTrait as _;
    let welcome = content_item::Entity::find_by_id(uuid(acme::WELCOME_COURSE))
        .one(stack.db())
        .await
        .expect("read")
        .expect("the world's item");
    let id = Uuid::from_u128(0x0191_a000_0000_7000_8000_0000_0000_7000 + n);
    content_item::ActiveModel {
        id: Set(id),
        account_id: Set(welcome.account_id),
        project_id: Set(welcome.project_id),
        title: Set(format!("Quiz {n}")),
        description: Set(String::new()),
        user_id: Set(welcome.user_id),
        added_at: Set(welcome.added_at),
        content_type: Set("Quiz".to_owned()),
        view_url: Set(None),
    }
    .insert(stack.db())
    .await
    .expect("an item added");
    id.to_string()
}

// ---------------------------------------------------------------------------------------------

async fn the_owner_lists_content_in_xml_and_json_under_every_prefix(stack: &TestStack) {
    for prefix in PREFIXES {
        for slash in ["", "/"] {
            let list = stack
                .get(&format!("{prefix}/content{slash}"), world::OWNER)
                .await;
            assert!(
                list.body.contains("<response><contentItem><contentItemId>"),
                "{}",
                list.body
            );
            assert_eq!(xml_ids(&list, ID), ACME);
            let page = stack
                .get(&format!("{prefix}/contents{slash}"), world::OWNER)
                .await;
            assert!(
                page.body.contains("<response><contentItems><contentItem>"),
                "{}",
                page.body
            );
            assert_eq!(xml_ids(&page, ID), ACME);
            assert!(!page.body.contains("nextPageToken"));
        }
        let array = json_of(&get_json(stack, &format!("{prefix}/content"), world::ADMIN).await);
        assert_eq!(json_ids(&array, ID), ACME);
        let page = json_of(
            &get_json(
                stack,
                &format!("{prefix}/contents?pageSize=1"),
                world::ADMIN,
            )
            .await,
        );
        assert_eq!(json_ids(&page["contentItems"], ID), &ACME[..1]);
        assert!(page["nextPageToken"].is_string(), "{page}");
    }
    // The item reads as GET /content/{id} does, with `contentItemType` after `type`.
    let list = stack.get("/content", world::OWNER).await;
    assert!(
        list.body.contains(&format!(
            "<contentItem><contentItemId>{}</contentItemId><title>Welcome to Acme</title>\
             <description>Everything a new colleague needs &amp; more</description>\
             <userId>{}</userId><addedDate>2019-03-26T06:34:57+00:00</addedDate>\
             <viewUrl>https://acme.example.com/view/{}</viewUrl><type>Course</type>\
             <contentItemType>Course</contentItemType></contentItem>",
            acme::WELCOME_COURSE,
            acme::AUTHOR,
            acme::WELCOME_COURSE
        )),
        "{}",
        list.body
    );
    let array = json_of(&get_json(stack, "/content", world::OWNER).await);
    assert_eq!(array[1]["viewUrl"], "https://cdn.acme.example.com/secret");
    assert_eq!(array[1]["addedDate"], "2020-01-02T01:04:05+00:00");
    assert_eq!(array[1]["contentItemType"], "Course");
    // POST /contents takes the query in a body.
    let reply = stack
        .post_xml(
            "/contents",
            world::OWNER,
            &format!(
                "<request><pageSize>5</pageSize><contentItemIds><id>{}</id></contentItemIds></request>",
                acme::SECRET_COURSE
            ),
        )
        .await;
    assert_eq!(xml_ids(&reply, ID), [acme::SECRET_COURSE]);
    let reply = post_json(
        stack,
        "/contents",
        world::OWNER,
        r#"{"contentTypes":["Course"],"pageSize":1}"#,
    )
    .await;
    assert_eq!(json_ids(&json_of(&reply)["contentItems"], ID), &ACME[..1]);
}

async fn filters_narrow_by_id_and_type(stack: &TestStack) {
    let quiz = add(stack, 1).await;
    for query in [
        "contentTypes[]=Quiz",
        "contentTypes=Quiz",
        "contentTypes%5B%5D=Quiz",
        "contentTypes[0]=Quiz&contentTypes[1]=Link",
    ] {
        let reply = stack.get(&format!("/content?{query}"), world::OWNER).await;
        assert_eq!(xml_ids(&reply, ID), [quiz.as_str()], "{query}");
    }
    let courses = stack
        .get("/contents?contentTypes=Course", world::OWNER)
        .await;
    assert_eq!(xml_ids(&courses, ID), ACME);
    let by_id = stack
        .get(
            &format!(
                "/content?contentItemIds[]={quiz}&contentItemIds[]={}",
                acme::SECRET_COURSE
            ),
            world::OWNER,
        )
        .await;
    assert_eq!(xml_ids(&by_id, ID), [acme::SECRET_COURSE, quiz.as_str()]);
    let both = stack
        .get(
            &format!("/content?contentItemIds[]={quiz}&contentTypes[]=Course"),
            world::OWNER,
        )
        .await;
    assert!(xml_ids(&both, ID).is_empty());
}

async fn authors_see_their_projects_and_roles_without_content_read_are_refused(stack: &TestStack) {
    let quiz = add(stack, 2).await;
    // The author authors Onboarding (the welcome course and the quiz), not Secret.
    assert_eq!(
        xml_ids(&stack.get("/content", world::AUTHOR).await, ID),
        [acme::WELCOME_COURSE, quiz.as_str()]
    );
    let first = stack.get("/contents?pageSize=1", world::AUTHOR).await;
    assert_eq!(xml_ids(&first, ID), [acme::WELCOME_COURSE]);
    let token = text_of(&first.body, "nextPageToken").expect("the quiz follows");
    let second = stack
        .get(
            &format!("/contents?pageSize=1&pageToken={token}"),
            world::AUTHOR,
        )
        .await;
    assert_eq!(xml_ids(&second, ID), [quiz.as_str()]);
    assert!(text_of(&second.body, "nextPageToken").is_none());
    // Department administrators and content.read read every item, as GET /content/{id}.
    let all = [acme::WELCOME_COURSE, acme::SECRET_COURSE, quiz.as_str()];
    for login in [world::DEPT_ADMIN, world::COORDINATOR] {
        assert_eq!(xml_ids(&stack.get("/content", login).await, ID), all);
    }
    for login in [
        world::PUBLISHER,
        world::LEARNER,
        world::VIEWER,
        world::REPORTER,
    ] {
        for path in ["/content", "/contents", "/contents?pageSize=0"] {
            stack
                .get(path, login)
                .await
                .assert_error(403, "permission to read content items");
        }
    }
}

async fn another_accounts_items_are_never_listed(stack: &TestStack) {
    assert_eq!(
        xml_ids(&stack.get("/content", world::GLOBEX_OWNER).await, ID),
        [globex::COURSE]
    );
    let reply = stack
        .get(
            &format!("/content?contentItemIds[]={}", globex::COURSE),
            world::OWNER,
        )
        .await;
    assert!(xml_ids(&reply, ID).is_empty(), "{}", reply.body);
}

async fn pages_hold_exactly_page_size_and_the_last_has_no_token(stack: &TestStack) {
    let mut all: Vec<String> = ACME.iter().map(|id| (*id).to_owned()).collect();
    for n in 10..19 {
        all.push(add(stack, n).await);
    }
    for (size, pages) in [(5, vec![5, 5, 1]), (11, vec![11]), (1000, vec![11])] {
        let path = format!("/contents?pageSize={size}");
        let xml = walk_xml_pages(stack, &path, &world::OWNER.headers(), ID).await;
        assert_eq!(xml.sizes, pages, "pageSize={size}");
        assert_eq!(xml.ids, all, "pageSize={size}");
        let json = walk_json_pages(stack, &path, &world::OWNER.headers(), "contentItems", ID).await;
        assert_eq!(json.sizes, pages, "JSON, pageSize={size}");
        assert_eq!(json.ids, all, "JSON, pageSize={size}");
    }
    // The author's walk skips the secret course without short pages.
    let author = walk_xml_pages(stack, "/contents?pageSize=2", &world::AUTHOR.headers(), ID).await;
    assert_eq!(author.sizes, [2, 2, 2, 2, 2]);
}

async fn bad_ids_sizes_tokens_and_parameters_are_400_naming_them(stack: &TestStack) {
    let before = stack.snapshot().await;
    for size in ["0", "10001", "x"] {
        stack
            .get(&format!("/contents?pageSize={size}"), world::OWNER)
            .await
            .assert_error(400, "pageSize must be a whole number");
    }
    let enrollments = stack.get("/enrollments?pageSize=1", world::OWNER).await;
    let foreign = text_of(&enrollments.body, "nextPageToken").expect("an enrollment token");
    stack
        .get(&format!("/contents?pageToken={foreign}"), world::OWNER)
        .await
        .assert_error(
            400,
            "pageToken is not a page token of this listing (content)",
        );
    stack
        .get("/content?contentItemIds[]=nope", world::OWNER)
        .await
        .assert_error(400, "contentItemIds");
    for (path, name) in [
        ("/content?pageSize=5", "pageSize"),
        ("/contents?type=Course", "type"),
    ] {
        stack
            .get(path, world::OWNER)
            .await
            .assert_error(400, &format!("\"{name}\""));
    }
    assert_eq!(stack.snapshot().await, before, "reads change nothing");
}
