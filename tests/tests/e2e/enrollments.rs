//! `POST /enrollment/delete` (interface 4.5; contract sections 3, 7 and 10) through the
//! real gateway and core.

use lms_core::entities::{account, audit_log, enrollment};
use lms_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
use lms_tests::{
    Backend, Reply, TestStack, on_both_backends,
    testkit::Fixture,
    world::{self, Login, acme, globex},
};
use sea_orm::{
    ColumnTrait as _, EntityTrait as _, QueryFilter as _, QueryOrder as _, prelude::Uuid,
};
use serde_json::json;

const PATH: &str = "/enrollment/delete";

on_both_backends!(
    an_owner_deletes_enrollments_and_each_deletion_is_audited,
    repeating_a_deletion_is_204_and_changes_nothing_more,
    a_repeated_id_counts_once_in_any_letter_case,
    concurrent_retries_delete_and_audit_each_enrollment_once,
    the_gateways_request_id_is_audited_when_the_caller_sends_none,
    enrollments_of_another_account_are_ignored_and_kept,
    malformed_requests_are_400_and_change_nothing,
    owners_and_account_administrators_delete_any_enrollment,
    a_department_administrator_deletes_only_enrollments_of_learners_in_sales,
    a_publisher_deletes_only_enrollments_of_learners_in_engineering,
    a_coordinator_with_enrollment_delete_is_scoped_like_a_department_administrator,
    roles_without_the_permission_are_403_and_delete_nothing,
    moving_a_department_moves_its_learners_between_scopes,
);
lms_tests::testkit::on_both_backends!(BulkEnrollments =>
    exactly_ten_thousand_ids_are_accepted_and_ten_thousand_and_one_refused,
);

/// The documented request body for `ids`.
fn body(ids: &[&str]) -> String {
    let ids: String = ids.iter().map(|id| format!("<id>{id}</id>")).collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><DeleteEnrollments><enrollmentIds>{ids}</enrollmentIds></DeleteEnrollments>"
    )
}

async fn delete(stack: &TestStack, login: Login, ids: &[&str]) -> Reply {
    stack.post_xml(PATH, login, &body(ids)).await
}

#[track_caller]
fn assert_deleted(reply: &Reply) {
    assert_eq!(reply.status, 204, "{}", reply.body);
    assert!(reply.body.is_empty(), "204 has no body: {:?}", reply.body);
}

/// Ids of every stored enrollment (both accounts), ascending.
async fn enrollment_ids(stack: &TestStack) -> Vec<String> {
    enrollment::Entity::find()
        .order_by_asc(enrollment::Column::Id)
        .all(stack.db())
        .await
        .expect("enrollments")
        .into_iter()
        .map(|e| e.id.to_string())
        .collect()
}

/// Every enrollment of the world except `gone`.
fn world_without(gone: &[&str]) -> Vec<String> {
    let mut all = vec![
        acme::LEARNER_WELCOME,
        acme::ENGINEER_WELCOME,
        acme::LEARNER_SECRET,
        acme::SUPPORTER_WELCOME,
        globex::ENROLLMENT,
    ];
    all.retain(|id| !gone.contains(id));
    let mut all: Vec<String> = all.into_iter().map(str::to_owned).collect();
    all.sort();
    all
}

async fn acme_account_id(stack: &TestStack) -> sea_orm::prelude::Uuid {
    account::Entity::find()
        .filter(account::Column::Url.eq(world::ACME_URL))
        .one(stack.db())
        .await
        .expect("accounts")
        .expect("the Acme account")
        .id
}

/// The audit rows of enrollment deletions, ordered by the deleted enrollment.
async fn deletion_audits(stack: &TestStack) -> Vec<audit_log::Model> {
    audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("enrollment.delete"))
        .order_by_asc(audit_log::Column::EntityId)
        .all(stack.db())
        .await
        .expect("audit rows")
}

/// A snapshot without the accounts' write-lock counters, which every write transaction
/// bumps even when it finds nothing to change.
async fn stored_data(stack: &TestStack) -> String {
    stack
        .snapshot()
        .await
        .lines()
        .filter(|line| !line.trim_start().starts_with("revision:"))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn an_owner_deletes_enrollments_and_each_deletion_is_audited(stack: &TestStack) {
    let ids = body(&[acme::LEARNER_WELCOME, acme::ENGINEER_WELCOME]);
    let reply = stack
        .post_with_id(PATH, world::OWNER, "delete-two-enrollments", &ids)
        .await;
    assert_deleted(&reply);
    assert_eq!(reply.header("x-request-id"), Some("delete-two-enrollments"));
    assert_eq!(
        enrollment_ids(stack).await,
        world_without(&[acme::LEARNER_WELCOME, acme::ENGINEER_WELCOME])
    );

    let audits = deletion_audits(stack).await;
    assert_eq!(
        audits.len(),
        2,
        "one audit row per deleted enrollment: {audits:#?}"
    );
    let expected = [
        (acme::LEARNER_WELCOME, acme::LEARNER, acme::WELCOME_COURSE),
        (acme::ENGINEER_WELCOME, acme::ENGINEER, acme::WELCOME_COURSE),
    ];
    for (audit, (enrollment_id, learner, course)) in audits.iter().zip(expected) {
        assert_eq!(audit.entity_id.to_string(), enrollment_id);
        assert_eq!(audit.entity_type, "enrollment");
        assert_eq!(
            audit.actor_user_id.map(|id| id.to_string()).as_deref(),
            Some(acme::OWNER)
        );
        assert_eq!(audit.account_id, acme_account_id(stack).await);
        assert_eq!(audit.request_id.as_deref(), Some("delete-two-enrollments"));
        let before: serde_json::Value =
            serde_json::from_str(audit.before.as_deref().expect("the values before"))
                .expect("JSON");
        assert_eq!(before["learnerId"], learner, "{before}");
        assert_eq!(before["contentItemId"], course, "{before}");
        assert_eq!(audit.after, None, "a deletion has no values after");
    }
}

async fn repeating_a_deletion_is_204_and_changes_nothing_more(stack: &TestStack) {
    let ids = [acme::LEARNER_SECRET, acme::SUPPORTER_WELCOME];
    assert_deleted(&delete(stack, world::ADMIN, &ids).await);
    assert_eq!(deletion_audits(stack).await.len(), 2);
    let after_first = stored_data(stack).await;

    let again = delete(stack, world::ADMIN, &ids).await;
    assert_deleted(&again);
    assert_eq!(
        stored_data(stack).await,
        after_first,
        "a retry deletes and audits nothing new"
    );
    assert_eq!(deletion_audits(stack).await.len(), 2);
}

async fn a_repeated_id_counts_once_in_any_letter_case(stack: &TestStack) {
    let upper = acme::LEARNER_WELCOME.to_uppercase();
    let reply = delete(
        stack,
        world::OWNER,
        &[acme::LEARNER_WELCOME, &upper, acme::LEARNER_WELCOME],
    )
    .await;
    assert_deleted(&reply);
    assert_eq!(
        enrollment_ids(stack).await,
        world_without(&[acme::LEARNER_WELCOME])
    );
    let audits = deletion_audits(stack).await;
    assert_eq!(audits.len(), 1, "{audits:#?}");
    assert_eq!(audits[0].entity_id.to_string(), acme::LEARNER_WELCOME);
}

async fn concurrent_retries_delete_and_audit_each_enrollment_once(stack: &TestStack) {
    let ids = [
        acme::LEARNER_WELCOME,
        acme::ENGINEER_WELCOME,
        acme::SUPPORTER_WELCOME,
    ];
    let replies = futures::future::join_all((0..12).map(|n| {
        let login = if n % 2 == 0 {
            world::OWNER
        } else {
            world::ADMIN
        };
        delete(stack, login, &ids)
    }))
    .await;
    for reply in &replies {
        assert_deleted(reply);
    }
    assert_eq!(enrollment_ids(stack).await, world_without(&ids));
    let audited: Vec<String> = deletion_audits(stack)
        .await
        .iter()
        .map(|a| a.entity_id.to_string())
        .collect();
    assert_eq!(
        audited, ids,
        "each enrollment is deleted, and audited, exactly once"
    );
}

async fn the_gateways_request_id_is_audited_when_the_caller_sends_none(stack: &TestStack) {
    let reply = delete(stack, world::OWNER, &[acme::SUPPORTER_WELCOME]).await;
    assert_deleted(&reply);
    let request_id = reply
        .header("x-request-id")
        .expect("every response has a request id");
    assert!(!request_id.is_empty());
    let audits = deletion_audits(stack).await;
    assert_eq!(audits.len(), 1);
    assert_eq!(
        audits[0].request_id.as_deref(),
        Some(request_id),
        "the audit row names the request"
    );
}

async fn enrollments_of_another_account_are_ignored_and_kept(stack: &TestStack) {
    let before = stored_data(stack).await;
    assert_deleted(&delete(stack, world::OWNER, &[globex::ENROLLMENT]).await);
    assert_eq!(
        stored_data(stack).await,
        before,
        "another account's enrollment is untouched"
    );

    let mixed = delete(
        stack,
        world::OWNER,
        &[globex::ENROLLMENT, acme::ENGINEER_WELCOME],
    )
    .await;
    assert_deleted(&mixed);
    assert_eq!(
        enrollment_ids(stack).await,
        world_without(&[acme::ENGINEER_WELCOME])
    );
    let audits = deletion_audits(stack).await;
    assert_eq!(audits.len(), 1, "{audits:#?}");
    assert_eq!(audits[0].entity_id.to_string(), acme::ENGINEER_WELCOME);

    // And the other account still deletes its own.
    assert_deleted(&delete(stack, world::GLOBEX_OWNER, &[globex::ENROLLMENT]).await);
    assert!(
        !enrollment_ids(stack)
            .await
            .contains(&globex::ENROLLMENT.to_owned())
    );
}

async fn malformed_requests_are_400_and_change_nothing(stack: &TestStack) {
    let before = stack.snapshot().await;
    let prologue = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    let cases: [(&str, String, &str); 7] = [
        (
            "missing enrollmentIds",
            format!("{prologue}<DeleteEnrollments></DeleteEnrollments>"),
            "enrollmentIds",
        ),
        (
            "empty enrollmentIds element",
            format!("{prologue}<DeleteEnrollments><enrollmentIds/></DeleteEnrollments>"),
            "enrollmentIds",
        ),
        (
            "enrollmentIds without ids",
            format!(
                "{prologue}<DeleteEnrollments><enrollmentIds>  </enrollmentIds></DeleteEnrollments>"
            ),
            "enrollmentIds",
        ),
        (
            "a malformed id among good ones",
            body(&[
                acme::LEARNER_WELCOME,
                "not-an-enrollment",
                acme::ENGINEER_WELCOME,
            ]),
            "not-an-enrollment",
        ),
        (
            "wrong root element",
            format!(
                "{prologue}<Enrollments><enrollmentIds><id>{}</id></enrollmentIds></Enrollments>",
                acme::LEARNER_WELCOME
            ),
            "DeleteEnrollments",
        ),
        (
            "an empty id",
            body(&[acme::LEARNER_WELCOME, ""]),
            "enrollmentIds",
        ),
        ("empty body", String::new(), "request body is empty"),
    ];
    for (what, request, needle) in cases {
        let reply = stack.post_xml(PATH, world::OWNER, &request).await;
        assert_eq!(reply.status, 400, "{what}: {}", reply.body);
        reply.assert_error(400, needle);
        assert_eq!(stack.snapshot().await, before, "{what} changed stored data");
    }
    // Only the hyphenated form is an id, and a scoped caller gets the same 400.
    let reply = delete(
        stack,
        world::DEPT_ADMIN,
        &["{0191a000-0000-7000-8000-000000000601}"],
    )
    .await;
    reply.assert_error(400, "{0191a000-0000-7000-8000-000000000601}");
    assert_eq!(stack.snapshot().await, before);
    // The one method of the route is POST.
    let get = stack.get(PATH, world::OWNER).await;
    get.assert_error(405, "GET");
    assert_eq!(get.header("allow"), Some("POST"));
}

/// `count` distinct well-formed ids that name nothing, all sorting below `0191…` or above
/// it as asked, so the named enrollments fall where the test wants them in the sorted list.
fn unknown_ids(count: usize, low: bool) -> Vec<String> {
    (0..count)
        .map(|n| {
            if low {
                format!("00000000-0000-4000-8000-{n:012x}")
            } else {
                format!("ffffffff-0000-4000-8000-{n:012x}")
            }
        })
        .collect()
}

/// The world, plus every Acme user enrolled in [`BULK_ITEMS`] more courses of a project
/// "Bulk": [`BULK_ENROLLMENTS`] enrollments, imported with the world.
struct BulkEnrollments {
    stack: TestStack,
    /// The added enrollments' ids.
    created: Vec<String>,
}

const BULK_ITEMS: usize = 50;
const BULK_ENROLLMENTS: usize = BULK_ITEMS * 12;

impl Fixture for BulkEnrollments {
    async fn start(backend: Backend) -> Option<Self> {
        let learners = acme::USERS;
        // Time-ordered like the ids the core makes, so they sort above the world's.
        let project = Uuid::now_v7().to_string();
        let courses: Vec<String> = (0..BULK_ITEMS)
            .map(|_| Uuid::now_v7().to_string())
            .collect();
        let mut created = Vec::with_capacity(BULK_ENROLLMENTS);
        let mut enrollments = Vec::with_capacity(BULK_ENROLLMENTS);
        for course in &courses {
            for learner in learners {
                let id = Uuid::now_v7().to_string();
                enrollments.push(json!({"id": id, "learnerId": learner, "contentItemId": course}));
                created.push(id);
            }
        }
        let mut document = world::document();
        world::add_rows(
            &mut document,
            0,
            "projects",
            vec![json!({"id": project, "name": "Bulk", "authorIds": []})],
        );
        world::add_rows(
            &mut document,
            0,
            "contentItems",
            courses
                .iter()
                .enumerate()
                .map(|(n, course)| {
                    json!({"id": course, "projectId": project, "title": format!("Course {n}"),
                           "description": "", "userId": acme::OWNER,
                           "addedDate": "2024-01-02T03:04:05+00:00", "type": "Course"})
                })
                .collect(),
        );
        world::add_rows(&mut document, 0, "enrollments", enrollments);
        let stack = world::stack_holding(backend, document).await?;
        Some(Self { stack, created })
    }

    async fn stop(self) {
        self.stack.stop().await;
    }
}

async fn exactly_ten_thousand_ids_are_accepted_and_ten_thousand_and_one_refused(
    bulk: &BulkEnrollments,
) {
    let stack = &bulk.stack;
    // 600 real enrollments: more than one audit insert (500 rows each). The core reads the
    // sorted ids 5,000 at a time; 4,800 unknown ids sorting below the real ones put that
    // boundary among them.
    let mut created = bulk.created.clone();
    assert_eq!(created.len(), 600);
    created.sort();
    let mut named: Vec<String> = created.clone();
    named.push(acme::LEARNER_WELCOME.to_owned());
    named.push(globex::ENROLLMENT.to_owned());
    let below = 4_800;
    named.extend(unknown_ids(below, true));
    named.extend(unknown_ids(10_000 - named.len(), false));
    assert_eq!(named.len(), 10_000);
    let named: Vec<&str> = named.iter().map(String::as_str).collect();

    let before = stack.snapshot().await;
    let mut too_many = named.clone();
    too_many.push("ffffffff-ffff-4fff-8fff-ffffffffffff");
    let refused = delete(stack, world::OWNER, &too_many).await;
    refused.assert_error(400, "10000");
    assert_eq!(stack.snapshot().await, before, "10,001 ids change nothing");

    assert_deleted(&delete(stack, world::OWNER, &named).await);
    let left = enrollment_ids(stack).await;
    assert_eq!(
        left,
        world_without(&[acme::LEARNER_WELCOME]),
        "every named enrollment of the account went, the other account's stayed"
    );
    let audits = deletion_audits(stack).await;
    assert_eq!(audits.len(), 601);
    let mut audited: Vec<String> = audits.iter().map(|a| a.entity_id.to_string()).collect();
    audited.sort();
    let mut expected = created;
    expected.push(acme::LEARNER_WELCOME.to_owned());
    expected.sort();
    assert_eq!(audited, expected);
}

async fn owners_and_account_administrators_delete_any_enrollment(stack: &TestStack) {
    assert_deleted(
        &delete(
            stack,
            world::OWNER,
            &[acme::LEARNER_WELCOME, acme::ENGINEER_WELCOME],
        )
        .await,
    );
    assert_deleted(
        &delete(
            stack,
            world::ADMIN,
            &[acme::LEARNER_SECRET, acme::SUPPORTER_WELCOME],
        )
        .await,
    );
    assert_eq!(enrollment_ids(stack).await, [globex::ENROLLMENT]);
    let actors: Vec<String> = deletion_audits(stack)
        .await
        .iter()
        .map(|a| a.actor_user_id.expect("actor").to_string())
        .collect();
    // Ordered by enrollment: the owner deleted the first two, the administrator the others.
    assert_eq!(actors, [acme::OWNER, acme::OWNER, acme::ADMIN, acme::ADMIN]);
}

/// A scoped caller: the enrollment of a learner in scope goes; a request that also names
/// one outside the scope is 403, names the problem, and deletes nothing.
async fn scoped_caller_deletes_only_in_scope(
    stack: &TestStack,
    login: Login,
    in_scope: &str,
    outside: &str,
) {
    let before = stack.snapshot().await;
    for ids in [[in_scope, outside], [outside, in_scope]] {
        let reply = delete(stack, login, &ids).await;
        reply.assert_error(403, "outside");
        assert_eq!(
            stack.snapshot().await,
            before,
            "{} deleted something on a 403",
            login.email
        );
    }
    let alone = delete(stack, login, &[outside]).await;
    alone.assert_error(403, "outside");
    assert_eq!(stack.snapshot().await, before);

    assert_deleted(&delete(stack, login, &[in_scope, globex::ENROLLMENT]).await);
    assert_eq!(enrollment_ids(stack).await, world_without(&[in_scope]));
    let audits = deletion_audits(stack).await;
    assert_eq!(audits.len(), 1);
    assert_eq!(audits[0].entity_id.to_string(), in_scope);
    assert_eq!(
        audits[0].actor_user_id.map(|id| id.to_string()).as_deref(),
        Some(login.id)
    );
}

async fn a_department_administrator_deletes_only_enrollments_of_learners_in_sales(
    stack: &TestStack,
) {
    scoped_caller_deletes_only_in_scope(
        stack,
        world::DEPT_ADMIN,
        acme::LEARNER_WELCOME,
        acme::ENGINEER_WELCOME,
    )
    .await;
    // Support is outside Sales as well.
    delete(stack, world::DEPT_ADMIN, &[acme::SUPPORTER_WELCOME])
        .await
        .assert_error(403, "outside");
}

async fn a_publisher_deletes_only_enrollments_of_learners_in_engineering(stack: &TestStack) {
    scoped_caller_deletes_only_in_scope(
        stack,
        world::PUBLISHER,
        acme::ENGINEER_WELCOME,
        acme::LEARNER_WELCOME,
    )
    .await;
    delete(stack, world::PUBLISHER, &[acme::LEARNER_SECRET])
        .await
        .assert_error(403, "outside");
}

async fn a_coordinator_with_enrollment_delete_is_scoped_like_a_department_administrator(
    stack: &TestStack,
) {
    scoped_caller_deletes_only_in_scope(
        stack,
        world::COORDINATOR,
        acme::LEARNER_WELCOME,
        acme::ENGINEER_WELCOME,
    )
    .await;
    // Sales East is inside Sales: the learner's other enrollment goes too.
    assert_deleted(&delete(stack, world::COORDINATOR, &[acme::LEARNER_SECRET]).await);
}

async fn roles_without_the_permission_are_403_and_delete_nothing(stack: &TestStack) {
    let before = stack.snapshot().await;
    for login in [
        world::VIEWER,
        world::REPORTER,
        world::AUTHOR,
        world::LEARNER,
    ] {
        // The learner asks to drop its own enrollment: still not its call to make.
        let reply = delete(
            stack,
            login,
            &[acme::LEARNER_WELCOME, acme::ENGINEER_WELCOME],
        )
        .await;
        reply.assert_error(403, "permission to delete enrollments");
        assert_eq!(
            stack.snapshot().await,
            before,
            "{} changed stored data",
            login.email
        );
    }
}

async fn moving_a_department_moves_its_learners_between_scopes(stack: &TestStack) {
    // Sales East (the learner's department) moves from Sales to Engineering.
    AdminServiceClient::new(stack.grpc_channel().await)
        .update_department(world::OWNER.grpc_request(pb::UpdateDepartmentRequest {
            department_id: acme::SALES_EAST.into(),
            name: None,
            parent_department_id: Some(acme::ENGINEERING.into()),
            code: None,
        }))
        .await
        .expect("the owner moves Sales East");
    let before = stack.snapshot().await;
    for login in [world::DEPT_ADMIN, world::COORDINATOR] {
        let reply = delete(stack, login, &[acme::LEARNER_WELCOME]).await;
        reply.assert_error(403, "outside");
        assert_eq!(
            stack.snapshot().await,
            before,
            "{} deleted outside its new scope",
            login.email
        );
    }
    assert_deleted(
        &delete(
            stack,
            world::PUBLISHER,
            &[acme::LEARNER_WELCOME, acme::ENGINEER_WELCOME],
        )
        .await,
    );
    assert_eq!(
        enrollment_ids(stack).await,
        world_without(&[acme::LEARNER_WELCOME, acme::ENGINEER_WELCOME])
    );
}
