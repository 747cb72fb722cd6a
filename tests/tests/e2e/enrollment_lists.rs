//! `GET /enrollment`, `GET /enrollments` and `POST /enrollments` (neighbours.md sections 5.1
//! to 5.3) through the real gateway and core: both formats, every prefix, the filters in every
//! spelling, the permission table with its scopes, tenant isolation and paging a client can
//! trust.

use lms_core::entities::enrollment;
use lms_tests::{
    TestStack, get_json, json_ids, json_of, on_both_backends, post_json,
    rows::grant,
    uuid, walk_json_pages, walk_xml_pages,
    world::{self, acme, globex},
    xml::{text_of, texts_of},
    xml_ids,
};
use sea_orm::{ActiveModelTrait as _, Set, prelude::Uuid};

on_both_backends!(
    the_owner_lists_enrollments_in_xml_and_json_under_every_prefix,
    filters_narrow_in_every_spelling_and_combine,
    scoped_callers_see_only_learners_in_their_subtrees_and_others_are_refused,
    another_accounts_enrollments_are_never_listed,
    pages_hold_exactly_page_size_and_the_last_has_no_token,
    bad_ids_sizes_tokens_and_parameters_are_400_naming_them,
    dates_and_flags_are_written_as_captured,
);

const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];
const ID: &str = "enrollmentId";

/// Acme's enrollments, ascending by id.
const ACME: [&str; 4] = [
    acme::LEARNER_WELCOME,
    acme::ENGINEER_WELCOME,
    acme::LEARNER_SECRET,
    acme::SUPPORTER_WELCOME,
];

/// Adds an enrollment of `learner` in `course` with id number `n` (after every world id).
async fn add(stack: &TestStack, n: u128, learner: &str, course: &str) -> String {
    let id = Uuid::from_u128(0x0191_a000_0000_7000_8000_0000_0000_7000 + n);
    enrollment::ActiveModel {
        id: Set(id),
        account_id: Set(account_of(stack).await),
        learner_id: Set(uuid(learner)),
        content_item_id: Set(uuid(course)),
        created_at: Set(chrono::Utc::now()),
        ..Default::default()
    }
    .insert(stack.db())
    .await
    .expect("an enrollment added");
    id.to_string()
}

async fn account_of(stack: &TestStack) -> Uuid {
    use sea_orm::EntityTrait as _;
    enrollment::Entity::find_by_id(uuid(acme::LEARNER_WELCOME))
        .one(stack.db())
        .await
        .expect("read")
        .expect("the world's enrollment")
        .account_id
}

// ---------------------------------------------------------------------------------------------

async fn the_owner_lists_enrollments_in_xml_and_json_under_every_prefix(stack: &TestStack) {
    for prefix in PREFIXES {
        for slash in ["", "/"] {
            let list = stack
                .get(&format!("{prefix}/enrollment{slash}"), world::OWNER)
                .await;
            assert!(
                list.body.contains("<response><enrollment><enrollmentId>"),
                "unpaged: repeated <enrollment> under <response>: {}",
                list.body
            );
            assert_eq!(xml_ids(&list, ID), ACME);
            let page = stack
                .get(&format!("{prefix}/enrollments{slash}"), world::OWNER)
                .await;
            assert!(
                page.body.contains("<response><enrollments><enrollment>"),
                "{}",
                page.body
            );
            assert_eq!(xml_ids(&page, ID), ACME);
            assert!(!page.body.contains("nextPageToken"));
        }
        let array = json_of(&get_json(stack, &format!("{prefix}/enrollment"), world::ADMIN).await);
        assert_eq!(json_ids(&array, ID), ACME);
        let page = json_of(
            &get_json(
                stack,
                &format!("{prefix}/enrollments?pageSize=3"),
                world::ADMIN,
            )
            .await,
        );
        assert_eq!(json_ids(&page["enrollments"], ID), &ACME[..3]);
        assert!(page["nextPageToken"].is_string(), "{page}");
    }
    // POST /enrollments takes the same query in a body, XML or JSON.
    let reply = stack
        .post_xml(
            "/enrollments",
            world::OWNER,
            &format!(
                "<request><pageSize>1</pageSize><pageToken></pageToken>\
                 <learnerIds><id>{}</id></learnerIds></request>",
                acme::LEARNER
            ),
        )
        .await;
    assert_eq!(xml_ids(&reply, ID), [acme::LEARNER_WELCOME]);
    let token = text_of(&reply.body, "nextPageToken").expect("a second page");
    let reply = post_json(
        stack,
        "/api/v2/enrollments",
        world::OWNER,
        format!(
            r#"{{"pageSize":1,"pageToken":"{token}","learnerIds":["{}"],"courseIds":null}}"#,
            acme::LEARNER
        ),
    )
    .await;
    let page = json_of(&reply);
    assert_eq!(json_ids(&page["enrollments"], ID), [acme::LEARNER_SECRET]);
    assert!(page.get("nextPageToken").is_none(), "{page}");
}

async fn filters_narrow_in_every_spelling_and_combine(stack: &TestStack) {
    for query in [
        format!("learnerIds[]={}", acme::LEARNER),
        format!("learnerIds%5B%5D={}", acme::LEARNER),
        format!("learnerIds[0]={}", acme::LEARNER),
        format!("learnerIds={}", acme::LEARNER),
        format!("learnerIds={}&learnerIds={}", acme::LEARNER, globex::WORKER),
    ] {
        let reply = stack
            .get(&format!("/enrollment?{query}"), world::OWNER)
            .await;
        assert_eq!(
            xml_ids(&reply, ID),
            [acme::LEARNER_WELCOME, acme::LEARNER_SECRET],
            "{query}"
        );
    }
    let by_course = stack
        .get(
            &format!("/enrollment/?courseIds[]={}", acme::WELCOME_COURSE),
            world::OWNER,
        )
        .await;
    assert_eq!(
        xml_ids(&by_course, ID),
        [
            acme::LEARNER_WELCOME,
            acme::ENGINEER_WELCOME,
            acme::SUPPORTER_WELCOME
        ]
    );
    // Filters combine as AND, as C12's xpath on courseId and learnerId expects.
    let both = stack
        .get(
            &format!(
                "/enrollments?learnerIds[]={}&courseIds[]={}",
                acme::LEARNER,
                acme::SECRET_COURSE
            ),
            world::OWNER,
        )
        .await;
    assert_eq!(xml_ids(&both, ID), [acme::LEARNER_SECRET]);
    let by_id = stack
        .get(
            &format!(
                "/enrollment?enrollmentIds[]={}&enrollmentIds[]={}&courseIds[]={}",
                acme::SUPPORTER_WELCOME,
                acme::LEARNER_SECRET,
                acme::WELCOME_COURSE
            ),
            world::OWNER,
        )
        .await;
    assert_eq!(xml_ids(&by_id, ID), [acme::SUPPORTER_WELCOME]);
    // A filter matching nothing is an empty list, not an error.
    let none = stack
        .get(
            &format!("/enrollment?learnerIds[]={}", acme::OWNER),
            world::OWNER,
        )
        .await;
    assert_eq!(none.status, 200);
    assert!(xml_ids(&none, ID).is_empty());
    assert_eq!(
        json_of(&get_json(stack, "/enrollment?learnerIds=", world::OWNER).await)
            .as_array()
            .map(Vec::len),
        Some(4),
        "an empty filter does not narrow"
    );
}

async fn scoped_callers_see_only_learners_in_their_subtrees_and_others_are_refused(
    stack: &TestStack,
) {
    // Sales (managed by the department administrator) holds the learner; Engineering (the
    // publisher's) the engineer.
    let sales = [acme::LEARNER_WELCOME, acme::LEARNER_SECRET];
    assert_eq!(
        xml_ids(&stack.get("/enrollment", world::DEPT_ADMIN).await, ID),
        sales
    );
    assert_eq!(
        xml_ids(
            &stack
                .get("/enrollments?pageSize=1", world::DEPT_ADMIN)
                .await,
            ID
        ),
        sales[..1]
    );
    assert_eq!(
        xml_ids(&stack.get("/enrollment", world::PUBLISHER).await, ID),
        [acme::ENGINEER_WELCOME]
    );
    // A filter naming learners outside the scope narrows to nothing; it reveals nothing.
    assert!(
        xml_ids(
            &stack
                .get(
                    &format!("/enrollment?learnerIds[]={}", acme::SUPPORTER),
                    world::DEPT_ADMIN
                )
                .await,
            ID
        )
        .is_empty()
    );
    for login in [
        world::AUTHOR,
        world::LEARNER,
        world::REPORTER,
        world::VIEWER,
    ] {
        for path in ["/enrollment", "/enrollments", "/enrollments?pageSize=0"] {
            stack
                .get(path, login)
                .await
                .assert_error(403, "permission to read enrollments");
        }
    }
    // A custom role with enrollment.read sees its scope (the coordinator manages Sales; its
    // role is granted before its first call, as callers are remembered).
    grant(stack, acme::COORDINATOR_ROLE, "enrollment.read").await;
    assert_eq!(
        xml_ids(&stack.get("/enrollment", world::COORDINATOR).await, ID),
        sales
    );
}

async fn another_accounts_enrollments_are_never_listed(stack: &TestStack) {
    let globex = stack.get("/enrollment", world::GLOBEX_OWNER).await;
    assert_eq!(xml_ids(&globex, ID), [globex::ENROLLMENT]);
    for query in [
        format!("enrollmentIds[]={}", globex::ENROLLMENT),
        format!("learnerIds[]={}", globex::WORKER),
        format!("courseIds[]={}", globex::COURSE),
    ] {
        let reply = stack
            .get(&format!("/enrollment?{query}"), world::OWNER)
            .await;
        assert!(xml_ids(&reply, ID).is_empty(), "{query}: {}", reply.body);
    }
}

async fn pages_hold_exactly_page_size_and_the_last_has_no_token(stack: &TestStack) {
    let mut all: Vec<String> = ACME.iter().map(|id| (*id).to_owned()).collect();
    for n in 0..7 {
        all.push(add(stack, n, acme::ENGINEER, acme::SECRET_COURSE).await);
    }
    assert_eq!(
        xml_ids(&stack.get("/enrollment", world::OWNER).await, ID),
        all
    );
    for (size, pages) in [
        (5, vec![5, 5, 1]),
        (4, vec![4, 4, 3]),
        (11, vec![11]),
        (1000, vec![11]),
    ] {
        let path = format!("/enrollments?pageSize={size}");
        let xml = walk_xml_pages(stack, &path, &world::OWNER.headers(), ID).await;
        assert_eq!(xml.sizes, pages, "pageSize={size}");
        assert_eq!(xml.ids, all, "pageSize={size}");
        let json = walk_json_pages(stack, &path, &world::OWNER.headers(), "enrollments", ID).await;
        assert_eq!(json.sizes, pages, "JSON, pageSize={size}");
        assert_eq!(json.ids, all, "JSON, pageSize={size}");
    }
    // A scoped walk skips other departments' enrollments without short pages: the engineer's
    // seven are in the publisher's scope, the others are not (but one).
    let scoped = walk_xml_pages(
        stack,
        "/enrollments?pageSize=3",
        &world::PUBLISHER.headers(),
        ID,
    )
    .await;
    assert_eq!(scoped.sizes, [3, 3, 2]);
    // Walking one learner's enrollments pages the same way.
    let learner_pages = stack
        .get(
            &format!("/enrollments?pageSize=4&learnerIds[]={}", acme::ENGINEER),
            world::OWNER,
        )
        .await;
    assert_eq!(xml_ids(&learner_pages, ID).len(), 4);
    assert!(text_of(&learner_pages.body, "nextPageToken").is_some());
}

async fn bad_ids_sizes_tokens_and_parameters_are_400_naming_them(stack: &TestStack) {
    let before = stack.snapshot().await;
    for size in ["0", "10001", "-1", "ten"] {
        stack
            .get(&format!("/enrollments?pageSize={size}"), world::OWNER)
            .await
            .assert_error(400, "pageSize must be a whole number");
    }
    use base64::Engine as _;
    let encode = |text: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text);
    let departments = stack.get("/departments?pageSize=1", world::OWNER).await;
    let foreign = text_of(&departments.body, "nextPageToken").expect("a department token");
    for token in [
        foreign,
        encode(&format!("v1:content:{}", acme::LEARNER_WELCOME)),
        encode(acme::LEARNER_WELCOME),
        "%%%".to_owned(),
    ] {
        stack
            .get(&format!("/enrollments?pageToken={token}"), world::OWNER)
            .await
            .assert_error(
                400,
                "pageToken is not a page token of this listing (enrollments)",
            );
    }
    for (query, field) in [
        ("learnerIds[]=nope", "learnerIds"),
        ("courseIds[]=nope", "courseIds"),
        ("enrollmentIds=1,2", "enrollmentIds"),
    ] {
        stack
            .get(&format!("/enrollment?{query}"), world::OWNER)
            .await
            .assert_error(400, field);
    }
    for (path, name) in [
        ("/enrollment?pageSize=5", "pageSize"),
        ("/enrollment?userIds[]=x", "userIds[]"),
        ("/enrollments?learnerId=x", "learnerId"),
    ] {
        stack
            .get(path, world::OWNER)
            .await
            .assert_error(400, &format!("\"{name}\""));
    }
    let reply = stack
        .post_xml(
            "/enrollments",
            world::OWNER,
            "<request><pageSize>x</pageSize></request>",
        )
        .await;
    reply.assert_error(400, "pageSize");
    assert_eq!(stack.snapshot().await, before, "reads change nothing");
}

async fn dates_and_flags_are_written_as_captured(stack: &TestStack) {
    use sea_orm::{EntityTrait as _, IntoActiveModel as _};
    let found = enrollment::Entity::find_by_id(uuid(acme::LEARNER_SECRET))
        .one(stack.db())
        .await
        .expect("read")
        .expect("the enrollment");
    let mut changed = found.into_active_model();
    let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap().to_utc();
    changed.access_at = Set(Some(at("2022-07-14T10:30:00Z")));
    changed.due_at = Set(Some(at("2022-08-01T00:00:00Z")));
    changed.lock_after_due = Set(true);
    changed.update(stack.db()).await.expect("dates set");
    let reply = stack
        .get(
            &format!("/enrollment?learnerIds[]={}", acme::LEARNER),
            world::OWNER,
        )
        .await;
    assert!(
        reply.body.contains(&format!(
            "<enrollment><enrollmentId>{}</enrollmentId><courseId>{}</courseId>\
             <learnerId>{}</learnerId><accessDate>2022-07-14</accessDate>\
             <dueDate>2022-08-01</dueDate><expirationDate>2022-08-01</expirationDate>\
             <enrollmentTypeGroup>0</enrollmentTypeGroup>\
             <shouldLockAfterDueDate>1</shouldLockAfterDueDate></enrollment>",
            acme::LEARNER_SECRET,
            acme::SECRET_COURSE,
            acme::LEARNER
        )),
        "{}",
        reply.body
    );
    // Without dates: the access date is the creation day; no due or expiration element.
    let plain = texts_of(&reply.body, "accessDate");
    assert_eq!(plain.len(), 2);
    assert_eq!(texts_of(&reply.body, "dueDate").len(), 1);
    let json = json_of(
        &get_json(
            stack,
            &format!("/enrollment?enrollmentIds[]={}", acme::LEARNER_SECRET),
            world::OWNER,
        )
        .await,
    );
    assert_eq!(json[0]["shouldLockAfterDueDate"], 1);
    assert_eq!(json[0]["enrollmentTypeGroup"], 0);
    assert_eq!(json[0]["dueDate"], "2022-08-01");
    let other = json_of(
        &get_json(
            stack,
            &format!("/enrollment?enrollmentIds[]={}", acme::LEARNER_WELCOME),
            world::OWNER,
        )
        .await,
    );
    assert!(other[0].get("dueDate").is_none(), "{other}");
    assert!(other[0].get("expirationDate").is_none(), "{other}");
}
