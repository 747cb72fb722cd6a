//! `POST /enrollment` (neighbours.md section 5.4) through the real gateway and core: every
//! learner in every course, 201 with no body, XML and JSON under every prefix, a pair already
//! enrolled left as it is, dates and due types, scopes, tenant isolation, the bound on the
//! product, and refusals that change nothing.

use lms_core::entities::{audit_log, enrollment};
use lms_tests::{
    Reply, TestStack, on_both_backends, post_json,
    rows::grant,
    uuid,
    world::{self, Login, acme, globex},
    xml::texts_of,
};
use sea_orm::{ColumnTrait as _, EntityTrait as _, PaginatorTrait as _, QueryFilter as _};
use serde_json::Value;

on_both_backends!(
    the_owner_enrolls_every_learner_in_every_course_audited_under_every_prefix,
    an_enrolled_pair_is_left_as_it_is_and_the_request_still_succeeds,
    due_types_set_the_due_and_expiration_dates,
    scoped_callers_enroll_only_learners_in_their_subtrees_all_or_nothing,
    bad_input_and_other_accounts_ids_are_400_naming_the_field_and_change_nothing,
    a_token_alone_enrolls,
);

const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];

fn ids_xml(name: &str, ids: &[&str]) -> String {
    let ids: String = ids.iter().map(|id| format!("<id>{id}</id>")).collect();
    format!("<{name}>{ids}</{name}>")
}

fn body(courses: &[&str], learners: &[&str], extra: &str) -> String {
    format!(
        "<request>{}{}{extra}</request>",
        ids_xml("courseIds", courses),
        ids_xml("learnerIds", learners)
    )
}

async fn enroll(stack: &TestStack, path: &str, login: Login, xml: &str) -> Reply {
    stack.post_xml(path, login, xml).await
}

#[track_caller]
fn assert_created(reply: &Reply) {
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert!(reply.body.is_empty(), "no body: {}", reply.body);
}

/// The enrollments of `learner` in `course`.
async fn pairs(stack: &TestStack, learner: &str, course: &str) -> Vec<enrollment::Model> {
    enrollment::Entity::find()
        .filter(enrollment::Column::LearnerId.eq(uuid(learner)))
        .filter(enrollment::Column::ContentItemId.eq(uuid(course)))
        .all(stack.db())
        .await
        .expect("read")
}

async fn created_audits(stack: &TestStack) -> u64 {
    audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("enrollment.create"))
        .count(stack.db())
        .await
        .expect("count")
}

// ---------------------------------------------------------------------------------------------

async fn the_owner_enrolls_every_learner_in_every_course_audited_under_every_prefix(
    stack: &TestStack,
) {
    let learners = [acme::ENGINEER, acme::SUPPORTER, acme::PUBLISHER];
    let audits = created_audits(stack).await;
    // Each prefix enrolls one more learner, XML then JSON.
    for (n, prefix) in PREFIXES.into_iter().enumerate() {
        let reply = if n % 2 == 0 {
            enroll(
                stack,
                &format!("{prefix}/enrollment"),
                world::OWNER,
                &body(&[acme::SECRET_COURSE], &[learners[n]], ""),
            )
            .await
        } else {
            post_json(
                stack,
                &format!("{prefix}/enrollment/"),
                world::ADMIN,
                &format!(
                    r#"{{"courseIds":["{}"],"learnerIds":["{}"],"accessDate":null,"dueDateType":"unlimited"}}"#,
                    acme::SECRET_COURSE,
                    learners[n]
                ),
            )
            .await
        };
        assert_created(&reply);
        assert_eq!(
            pairs(stack, learners[n], acme::SECRET_COURSE).await.len(),
            1
        );
    }
    assert_eq!(created_audits(stack).await, audits + 3);
    // Two courses × two learners in one request: four rows.
    let reply = enroll(
        stack,
        "/enrollment",
        world::OWNER,
        &body(
            &[acme::WELCOME_COURSE, acme::SECRET_COURSE],
            &[acme::COORDINATOR, acme::VIEWER],
            "",
        ),
    )
    .await;
    assert_created(&reply);
    for learner in [acme::COORDINATOR, acme::VIEWER] {
        for course in [acme::WELCOME_COURSE, acme::SECRET_COURSE] {
            let made = pairs(stack, learner, course).await;
            assert_eq!(made.len(), 1);
            assert!(made[0].access_at.is_some(), "access from now");
            assert_eq!(made[0].due_at, None);
            assert!(!made[0].lock_after_due);
        }
    }
    assert_eq!(created_audits(stack).await, audits + 7);
    // The new enrollments are listed like any other.
    let list = stack
        .get(
            &format!("/enrollment?learnerIds[]={}", acme::VIEWER),
            world::OWNER,
        )
        .await;
    assert_eq!(texts_of(&list.body, "courseId").len(), 2, "{}", list.body);
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert!(
        texts_of(&list.body, "accessDate")
            .iter()
            .all(|day| *day == today),
        "{}",
        list.body
    );
}

/// Every enrollment and audit row, as text: what a write that changes nothing leaves alone
/// (the account's lock revision moves with every write, so the whole snapshot would not do).
async fn enrollments_and_audit(stack: &TestStack) -> String {
    let enrollments = enrollment::Entity::find()
        .all(stack.db())
        .await
        .expect("read");
    let audit = audit_log::Entity::find()
        .all(stack.db())
        .await
        .expect("read");
    format!("{enrollments:#?}\n{audit:#?}")
}

async fn an_enrolled_pair_is_left_as_it_is_and_the_request_still_succeeds(stack: &TestStack) {
    let before = enrollments_and_audit(stack).await;
    let reply = enroll(
        stack,
        "/enrollment",
        world::OWNER,
        &body(
            &[acme::WELCOME_COURSE],
            &[acme::LEARNER, acme::ENGINEER],
            "<accessDate>2030-01-01 00:00:00</accessDate><dueDateType>due_date</dueDateType>\
             <dueDate>2030-02-01</dueDate><lockAfterDueDate>true</lockAfterDueDate>",
        ),
    )
    .await;
    assert_created(&reply);
    assert!(
        enrollments_and_audit(stack).await == before,
        "both pairs existed: nothing changed"
    );
    // A retry of a request that made rows makes none the second time.
    let request = body(&[acme::SECRET_COURSE], &[acme::SUPPORTER], "");
    assert_created(&enroll(stack, "/enrollment", world::OWNER, &request).await);
    let after_first = enrollments_and_audit(stack).await;
    assert_created(&enroll(stack, "/enrollment", world::OWNER, &request).await);
    assert!(enrollments_and_audit(stack).await == after_first);
    assert_eq!(
        pairs(stack, acme::SUPPORTER, acme::SECRET_COURSE)
            .await
            .len(),
        1
    );
}

async fn due_types_set_the_due_and_expiration_dates(stack: &TestStack) {
    let cases = [
        (
            acme::ENGINEER,
            "<accessDate>2030-01-01 10:30:00</accessDate><dueDateType>due_period</dueDateType>\
             <duePeriod>48</duePeriod><lockAfterDueDate>true</lockAfterDueDate>",
            "2030-01-01",
            Some("2030-01-03"),
            true,
        ),
        (
            acme::SUPPORTER,
            "<accessDate>2030-05-06T23:30:00-02:00</accessDate><dueDateType>due_date</dueDateType>\
             <dueDate>2030-06-01 00:00:00</dueDate><lockAfterDueDate>false</lockAfterDueDate>",
            "2030-05-07",
            Some("2030-06-01"),
            false,
        ),
        (
            acme::PUBLISHER,
            "<accessDate>2030-01-01</accessDate><dueDateType>default</dueDateType>",
            "2030-01-01",
            None,
            false,
        ),
    ];
    for (learner, extra, access, due, lock) in cases {
        assert_created(
            &enroll(
                stack,
                "/enrollment",
                world::OWNER,
                &body(&[acme::SECRET_COURSE], &[learner], extra),
            )
            .await,
        );
        let list = Reply::send(
            stack
                .request(
                    reqwest::Method::GET,
                    &format!(
                        "/enrollment?learnerIds[]={learner}&courseIds[]={}",
                        acme::SECRET_COURSE
                    ),
                    world::OWNER,
                )
                .header("Accept", "application/json"),
        )
        .await;
        let list: Value = serde_json::from_str(&list.body).expect("JSON");
        let one = &list[0];
        assert_eq!(one["accessDate"], access, "{one}");
        assert_eq!(one["dueDate"].as_str(), due, "{one}");
        assert_eq!(
            one["expirationDate"].as_str(),
            due.filter(|_| lock),
            "{one}"
        );
        assert_eq!(one["shouldLockAfterDueDate"], u8::from(lock), "{one}");
    }
    // As C11 sends it: JSON, an ISO 8601 access date with milliseconds, no dueDateType, a
    // JSON boolean.
    let reply = post_json(
        stack,
        "/enrollment",
        world::OWNER,
        &format!(
            r#"{{"courseIds":["{}"],"learnerIds":["{}"],"accessDate":"2030-03-04T05:06:07.000Z","lockAfterDueDate":true}}"#,
            acme::WELCOME_COURSE,
            acme::COORDINATOR
        ),
    )
    .await;
    assert_created(&reply);
    let made = pairs(stack, acme::COORDINATOR, acme::WELCOME_COURSE).await;
    assert_eq!(made.len(), 1);
    assert_eq!(
        made[0].access_at.map(|at| at.to_rfc3339()).as_deref(),
        Some("2030-03-04T05:06:07+00:00")
    );
    assert_eq!(made[0].due_at, None);
    assert!(made[0].lock_after_due);
}

async fn scoped_callers_enroll_only_learners_in_their_subtrees_all_or_nothing(stack: &TestStack) {
    // The department administrator manages Sales: the learner (Sales East) is in scope, the
    // engineer is not.
    assert_created(
        &enroll(
            stack,
            "/enrollment",
            world::DEPT_ADMIN,
            &body(&[acme::SECRET_COURSE], &[acme::COORDINATOR], ""),
        )
        .await,
    );
    let before = stack.snapshot().await;
    enroll(
        stack,
        "/enrollment",
        world::DEPT_ADMIN,
        &body(
            &[acme::SECRET_COURSE],
            &[acme::DEPT_ADMIN, acme::ENGINEER],
            "",
        ),
    )
    .await
    .assert_error(403, "outside the departments you manage");
    assert_eq!(stack.snapshot().await, before, "nobody was enrolled");
    for login in [
        world::PUBLISHER,
        world::AUTHOR,
        world::LEARNER,
        world::VIEWER,
    ] {
        // Permission comes before input: a bad body is still a 403.
        enroll(stack, "/enrollment", login, "<request/>")
            .await
            .assert_error(403, "permission to enroll learners");
    }
    assert_eq!(stack.snapshot().await, before);
    // A custom role with enrollment.create (the reporter manages Engineering).
    grant(stack, acme::REPORTER_ROLE, "enrollment.create").await;
    assert_created(
        &enroll(
            stack,
            "/enrollment",
            world::REPORTER,
            &body(&[acme::SECRET_COURSE], &[acme::ENGINEER], ""),
        )
        .await,
    );
    assert_eq!(
        pairs(stack, acme::ENGINEER, acme::SECRET_COURSE)
            .await
            .len(),
        1
    );
}

async fn bad_input_and_other_accounts_ids_are_400_naming_the_field_and_change_nothing(
    stack: &TestStack,
) {
    let before = stack.snapshot().await;
    let many: Vec<String> = (0..101)
        .map(|n| format!("0191a000-0000-7000-8000-{:012x}", 0x9000 + n))
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let cases: Vec<(String, &str)> = vec![
        (
            body(&[], &[acme::LEARNER], ""),
            "courseIds must contain at least one id",
        ),
        (
            body(&[acme::SECRET_COURSE], &[], ""),
            "learnerIds must contain at least one id",
        ),
        (
            format!(
                "<request>{}</request>",
                ids_xml("courseIds", &[acme::SECRET_COURSE])
            ),
            "learnerIds must contain at least one id",
        ),
        (body(&["nope"], &[acme::LEARNER], ""), "courseIds"),
        (
            body(&[globex::COURSE], &[acme::ENGINEER], ""),
            globex::COURSE,
        ),
        (
            body(&[acme::SECRET_COURSE], &[globex::WORKER], ""),
            globex::WORKER,
        ),
        (
            body(&many, &many[..100], ""),
            "courseIds × learnerIds must make at most 10000 enrollments",
        ),
        (
            body(
                &[acme::SECRET_COURSE],
                &[acme::ENGINEER],
                "<dueDateType>later</dueDateType>",
            ),
            "dueDateType 'later' is not one of",
        ),
        (
            body(
                &[acme::SECRET_COURSE],
                &[acme::ENGINEER],
                "<dueDateType>due_date</dueDateType>",
            ),
            "dueDate is required",
        ),
        (
            body(
                &[acme::SECRET_COURSE],
                &[acme::ENGINEER],
                "<accessDate>tomorrow</accessDate>",
            ),
            "accessDate 'tomorrow' must be a date",
        ),
        (
            body(
                &[acme::SECRET_COURSE],
                &[acme::ENGINEER],
                "<dueDateType>due_period</dueDateType><duePeriod>-3</duePeriod>",
            ),
            "duePeriod must be a whole number",
        ),
        (
            body(
                &[acme::SECRET_COURSE],
                &[acme::ENGINEER],
                "<lockAfterDueDate>yes</lockAfterDueDate>",
            ),
            "lockAfterDueDate must be true or false",
        ),
    ];
    for (xml, needle) in cases {
        enroll(stack, "/enrollment", world::OWNER, &xml)
            .await
            .assert_error(400, needle);
    }
    // A learner of another account among valid ones: nobody is enrolled.
    enroll(
        stack,
        "/enrollment",
        world::OWNER,
        &body(
            &[acme::SECRET_COURSE],
            &[acme::ENGINEER, globex::WORKER],
            "",
        ),
    )
    .await
    .assert_error(400, "learnerIds");
    let reply = post_json(
        stack,
        "/enrollment",
        world::OWNER,
        r#"{"courseIds":"x","learnerIds":[]}"#,
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    enroll(
        stack,
        "/enrollment?learnerIds[]=x",
        world::OWNER,
        &body(&[acme::SECRET_COURSE], &[acme::ENGINEER], ""),
    )
    .await
    .assert_error(400, "\"learnerIds[]\"");
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");
}

async fn a_token_alone_enrolls(stack: &TestStack) {
    let bearer = stack.bearer_for(acme::ADMIN).await;
    let reply = Reply::send(
        stack
            .http
            .post(format!("{}/api/v2/enrollment", stack.base_url))
            .header("Authorization", bearer.as_str())
            .header("Content-Type", "application/xml")
            .body(body(&[acme::SECRET_COURSE], &[acme::ENGINEER], "")),
    )
    .await;
    assert_created(&reply);
    let list = Reply::send(
        stack
            .http
            .get(format!(
                "{}/enrollments?learnerIds[]={}",
                stack.base_url,
                acme::ENGINEER
            ))
            .header("Authorization", bearer.as_str())
            .header("Accept", "application/json"),
    )
    .await;
    let page: Value = serde_json::from_str(&list.body).expect("JSON");
    assert_eq!(
        page["enrollments"].as_array().map(Vec::len),
        Some(2),
        "{page}"
    );
    let contents = Reply::send(
        stack
            .http
            .get(format!("{}/contents?pageSize=1", stack.base_url))
            .header("Authorization", bearer.as_str()),
    )
    .await;
    assert_eq!(contents.status, 200, "{}", contents.body);
    assert_eq!(
        texts_of(&contents.body, "contentItemId"),
        [acme::WELCOME_COURSE]
    );
}
