//! The bulk lifecycle calls of provisioning.md (sections 1 to 5) through the real gateway and
//! core: `POST /users/activate`, `/users/deactivate`, `/users/terminate`,
//! `/users/find_existing`, `/department/{id}/user/move` and `/user/{id}/groups/remove`, in XML
//! and JSON under every prefix; passwords and tokens of a user leaving status 1 refused at once;
//! 10,000 ids in one call; scopes; bad input refused with nothing changed; audit rows.

use lms_core::entities::{audit_log, user};
use lms_tests::{
    Backend, Reply, TestStack, json_of, on_both_backends, post_json,
    testkit::Fixture,
    world::{self, Login, acme, globex},
};
use sea_orm::{ColumnTrait as _, EntityTrait as _, QueryFilter as _, QueryOrder as _};
use serde_json::{Value, json};
use uuid::Uuid;

on_both_backends!(
    each_status_call_changes_only_the_statuses_its_table_names,
    a_user_leaving_status_1_is_refused_at_once_and_its_tokens_stay_refused,
    scoped_callers_change_only_users_of_their_subtrees_and_nothing_on_a_refusal,
    find_existing_answers_the_readable_ids_ascending_and_never_fails_on_unknown_ones,
    bad_input_is_400_naming_the_field_and_changes_nothing,
    the_last_active_owner_cannot_leave_status_1,
    a_move_and_a_group_removal_are_audited_once_and_retry_safely,
    grpc_callers_meet_the_same_rules_and_codes,
);

lms_tests::testkit::on_both_backends!(TenThousandUsers => ten_thousand_ids_are_one_call_and_one_more_is_refused);

/// `<request><NAME><id>…</id>…</NAME></request>`.
fn ids_xml(name: &str, ids: &[&str]) -> String {
    let ids: String = ids.iter().map(|id| format!("<id>{id}</id>")).collect();
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><request><{name}>{ids}</{name}></request>")
}

/// `{"NAME": […]}`.
fn ids_json(name: &str, ids: &[&str]) -> String {
    json!({ name: ids }).to_string()
}

/// `path` in XML as `login`, with `X-Request-Id: request_id`.
async fn post_ids(
    stack: &TestStack,
    path: &str,
    login: Login,
    request_id: &str,
    ids: &[&str],
) -> Reply {
    stack
        .post_with_id(path, login, request_id, &ids_xml("userIds", ids))
        .await
}

/// The status a user's profile shows.
async fn status_of(stack: &TestStack, id: &str) -> i64 {
    let profile = json_of(&lms_tests::get_json(stack, &format!("/user/{id}"), world::OWNER).await);
    profile["status"].as_i64().expect("a status")
}

/// Whether `email` with the world's password gets past authentication.
async fn signs_in(stack: &TestStack, email: &str) -> bool {
    let reply = Reply::send(
        stack
            .http
            .get(format!("{}/group/{}", stack.base_url, acme::INTERNS))
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", email)
            .header("X-Auth-Password", world::PASSWORD),
    )
    .await;
    reply.status != 401
}

/// The status `GET /group/{INTERNS}` answers to `authorization`.
async fn with_token(stack: &TestStack, authorization: &str) -> u16 {
    Reply::send(
        stack
            .http
            .get(format!("{}/group/{}", stack.base_url, acme::INTERNS))
            .header("Authorization", authorization),
    )
    .await
    .status
}

/// The audit rows `action` of `id`, oldest first.
async fn audits(stack: &TestStack, action: &str, id: &str) -> Vec<audit_log::Model> {
    audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(action))
        .filter(audit_log::Column::EntityId.eq(world::uuid(id)))
        .order_by_asc(audit_log::Column::Id)
        .all(stack.db())
        .await
        .expect("audit rows")
}

fn json_text(text: Option<&str>) -> Value {
    serde_json::from_str(text.expect("recorded")).expect("JSON")
}

// ---------------------------------------------------------------------------------------------

async fn each_status_call_changes_only_the_statuses_its_table_names(stack: &TestStack) {
    let (learner, engineer, supporter) = (acme::LEARNER, acme::ENGINEER, acme::SUPPORTER);
    let reply = post_ids(
        stack,
        "/users/deactivate",
        world::OWNER,
        "req-deactivate",
        &[learner, engineer],
    )
    .await;
    assert_eq!((reply.status, reply.body.as_str()), (200, ""));
    assert_eq!(status_of(stack, learner).await, 3);
    assert_eq!(status_of(stack, engineer).await, 3);
    let rows = audits(stack, "user.set_active", learner).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].request_id.as_deref(), Some("req-deactivate"));
    assert_eq!(rows[0].actor_user_id, Some(world::uuid(acme::OWNER)));
    assert_eq!(
        (
            json_text(rows[0].before.as_deref()),
            json_text(rows[0].after.as_deref())
        ),
        (
            json!({"active": true, "employmentEnded": false}),
            json!({"active": false, "employmentEnded": false})
        )
    );

    // JSON, under a client prefix with a trailing slash: 3 becomes 5, 1 becomes 5.
    let reply = post_json(
        stack,
        "/api/v2/users/terminate/",
        world::OWNER,
        ids_json("userIds", &[learner, supporter]),
    )
    .await;
    assert_eq!((reply.status, reply.body.as_str()), (200, ""));
    assert_eq!(status_of(stack, learner).await, 5);
    assert_eq!(status_of(stack, supporter).await, 5);
    assert_eq!(status_of(stack, engineer).await, 3);

    // Deactivating leaves 3 and 5 as they are; a repeat changes nothing more.
    let before = stack.snapshot_without_revision().await;
    for path in ["/index.php/api/v2/users/deactivate", "/users/terminate"] {
        let reply = post_ids(
            stack,
            path,
            world::OWNER,
            "req-again",
            &[learner, supporter],
        )
        .await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
    }
    assert_eq!(stack.snapshot_without_revision().await, before);
    assert_eq!(audits(stack, "user.set_active", learner).await.len(), 2);

    let reply = post_ids(
        stack,
        "/users/activate",
        world::ADMIN,
        "req-activate",
        &[learner, engineer, supporter, acme::OWNER],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    for id in [learner, engineer, supporter] {
        assert_eq!(status_of(stack, id).await, 1, "{id}");
    }
    let rows = audits(stack, "user.set_active", learner).await;
    assert_eq!(rows.len(), 3);
    assert_eq!(
        json_text(rows[2].before.as_deref()),
        json!({"active": false, "employmentEnded": true})
    );
    assert!(
        audits(stack, "user.set_active", acme::OWNER)
            .await
            .is_empty(),
        "an active user named by activate stays as it is"
    );
    assert!(signs_in(stack, world::LEARNER.email).await);
}

async fn a_user_leaving_status_1_is_refused_at_once_and_its_tokens_stay_refused(stack: &TestStack) {
    let token = stack.bearer_for(acme::DEPT_ADMIN).await;
    assert_eq!(with_token(stack, &token).await, 200);
    assert!(signs_in(stack, world::DEPT_ADMIN.email).await);
    let reply = post_ids(
        stack,
        "/users/deactivate",
        world::OWNER,
        "r1",
        &[acme::DEPT_ADMIN],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        !signs_in(stack, world::DEPT_ADMIN.email).await,
        "the password at once"
    );
    assert_eq!(with_token(stack, &token).await, 401, "the token at once");

    let reply = post_ids(
        stack,
        "/users/activate",
        world::OWNER,
        "r2",
        &[acme::DEPT_ADMIN],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(signs_in(stack, world::DEPT_ADMIN.email).await);
    assert_eq!(
        with_token(stack, &token).await,
        401,
        "an old token stays refused"
    );
    let fresh = stack.bearer_for(acme::DEPT_ADMIN).await;
    assert_eq!(
        with_token(stack, &fresh).await,
        200,
        "its client gets a new one"
    );

    // The single status route ends tokens the same way.
    let reply = stack
        .post_xml(
            &format!("/user/{}/status", acme::DEPT_ADMIN),
            world::OWNER,
            "<request><status>5</status></request>",
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply = stack
        .post_xml(
            &format!("/user/{}/status", acme::DEPT_ADMIN),
            world::OWNER,
            "<request><status>1</status></request>",
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(with_token(stack, &fresh).await, 401);
}

async fn scoped_callers_change_only_users_of_their_subtrees_and_nothing_on_a_refusal(
    stack: &TestStack,
) {
    let before = stack.snapshot().await;
    // The department administrator manages Sales (with Sales East); the engineer is elsewhere.
    for path in ["/users/deactivate", "/users/terminate", "/users/activate"] {
        post_ids(
            stack,
            path,
            world::DEPT_ADMIN,
            "r",
            &[acme::LEARNER, acme::ENGINEER],
        )
        .await
        .assert_error(403, acme::ENGINEER);
        post_ids(
            stack,
            path,
            world::DEPT_ADMIN,
            "r",
            &[acme::LEARNER, acme::ADMIN],
        )
        .await
        .assert_error(403, "account owner or administrator");
    }
    stack
        .post_xml(
            &format!("/department/{}/user/move", acme::SALES),
            world::DEPT_ADMIN,
            &ids_xml("userIds", &[acme::LEARNER, acme::ENGINEER]),
        )
        .await
        .assert_error(403, acme::ENGINEER);
    stack
        .post_xml(
            &format!("/department/{}/user/move", acme::ENGINEERING),
            world::DEPT_ADMIN,
            &ids_xml("userIds", &[acme::LEARNER]),
        )
        .await
        .assert_error(403, "outside the departments you manage");
    stack
        .post_xml(
            &format!("/user/{}/groups/remove", acme::ENGINEER),
            world::DEPT_ADMIN,
            &ids_xml("groupIds", &[acme::INTERNS]),
        )
        .await
        .assert_error(403, "departments you manage");
    // Without the right: 403 whatever the body says, even when it is empty.
    for login in [
        world::LEARNER,
        world::PUBLISHER,
        world::AUTHOR,
        world::COORDINATOR,
    ] {
        for body in [
            ids_xml("userIds", &[acme::LEARNER]),
            "<request/>".to_owned(),
        ] {
            stack
                .post_xml("/users/deactivate", login, &body)
                .await
                .assert_error(403, "change users");
        }
        stack
            .post_xml("/users/find_existing", login, "<request/>")
            .await
            .assert_error(403, "read users");
    }
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");

    let reply = post_ids(
        stack,
        "/users/deactivate",
        world::DEPT_ADMIN,
        "r",
        &[acme::LEARNER],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply = stack
        .post_xml(
            &format!("/department/{}/user/move", acme::SALES),
            world::DEPT_ADMIN,
            &ids_xml("userIds", &[acme::LEARNER]),
        )
        .await;
    assert_eq!(reply.status, 204, "{}", reply.body);
}

async fn find_existing_answers_the_readable_ids_ascending_and_never_fails_on_unknown_ones(
    stack: &TestStack,
) {
    let unknown = "0191a000-0000-7000-8000-0000000009ff";
    let named = [
        acme::ENGINEER,
        unknown,
        globex::WORKER,
        acme::LEARNER,
        acme::FORMER_ADMIN,
        acme::LEARNER,
    ];
    let xml = post_ids(stack, "/users/find_existing", world::OWNER, "r", &named).await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert_eq!(
        xml.body,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><id>{}</id><id>{}</id><id>{}</id></response>",
            acme::LEARNER,
            acme::ENGINEER,
            acme::FORMER_ADMIN
        )
    );
    let json = json_of(
        &post_json(
            stack,
            "/users/find_existing",
            world::OWNER,
            ids_json("userIds", &named),
        )
        .await,
    );
    assert_eq!(
        json,
        json!([acme::LEARNER, acme::ENGINEER, acme::FORMER_ADMIN])
    );
    // A scoped caller finds only the users of its subtrees.
    let json = json_of(
        &post_json(
            stack,
            "/users/find_existing",
            world::DEPT_ADMIN,
            ids_json("userIds", &named),
        )
        .await,
    );
    assert_eq!(json, json!([acme::LEARNER]));
    let none = post_ids(stack, "/users/find_existing", world::OWNER, "r", &[unknown]).await;
    assert_eq!(none.status, 200);
    assert!(
        none.body.ends_with("<response></response>") || none.body.ends_with("<response/>"),
        "{}",
        none.body
    );
    let none = post_json(
        stack,
        "/users/find_existing",
        world::OWNER,
        ids_json("userIds", &[globex::WORKER]),
    )
    .await;
    assert_eq!(json_of(&none), json!([]));
}

async fn bad_input_is_400_naming_the_field_and_changes_nothing(stack: &TestStack) {
    let before = stack.snapshot().await;
    let too_many: Vec<String> = (0..10_001)
        .map(|n| format!("00000000-0000-4000-8000-{n:012x}"))
        .collect();
    let too_many: Vec<&str> = too_many.iter().map(String::as_str).collect();
    let repeated = vec![acme::LEARNER; 10_001];
    let move_path = format!("/department/{}/user/move", acme::SUPPORT);
    for path in [
        "/users/activate",
        "/users/deactivate",
        "/users/terminate",
        "/users/find_existing",
        move_path.as_str(),
    ] {
        for (body, needle) in [
            (
                "<request/>".to_owned(),
                "userIds must contain at least one id",
            ),
            (
                ids_xml("userIds", &[]),
                "userIds must contain at least one id",
            ),
            (ids_xml("userIds", &["nope"]), "userIds: 'nope'"),
            (ids_xml("userIds", &too_many), "at most 10000"),
            (ids_xml("userIds", &repeated), "at most 10000"),
        ] {
            stack
                .post_xml(path, world::OWNER, &body)
                .await
                .assert_error(400, needle);
        }
        let reply = post_json(stack, path, world::OWNER, r#"{"userIds": []}"#).await;
        assert_eq!(reply.status, 400, "{path}: {}", reply.body);
        assert!(reply.body.contains("userIds"), "{}", reply.body);
    }
    for path in [
        "/users/activate",
        "/users/deactivate",
        "/users/terminate",
        move_path.as_str(),
    ] {
        for id in ["0191a000-0000-7000-8000-0000000009ff", globex::WORKER] {
            stack
                .post_xml(
                    path,
                    world::OWNER,
                    &ids_xml("userIds", &[acme::LEARNER, id]),
                )
                .await
                .assert_error(400, &format!("userIds '{id}' does not name a user"));
        }
    }
    // The legacy header is not read.
    let reply = Reply::send(
        stack
            .request(reqwest::Method::POST, "/users/deactivate", world::OWNER)
            .header("X-User-Ids", acme::LEARNER)
            .header("Content-Type", "application/xml")
            .body("<request/>"),
    )
    .await;
    reply.assert_error(400, "userIds");
    stack
        .post_xml(
            &format!("/department/{}/user/move", globex::PLANT),
            world::OWNER,
            &ids_xml("userIds", &[acme::LEARNER]),
        )
        .await
        .assert_error(404, "was not found");
    stack
        .post_xml(
            "/department/nope/user/move",
            world::OWNER,
            &ids_xml("userIds", &[acme::LEARNER]),
        )
        .await
        .assert_error(404, "was not found");
    let remove = format!("/user/{}/groups/remove", acme::LEARNER);
    for (body, needle) in [
        (
            "<request/>".to_owned(),
            "groupIds must contain at least one id",
        ),
        (ids_xml("groupIds", &["nope"]), "groupIds: 'nope'"),
        (ids_xml("groupIds", &too_many), "at most 10000"),
        (ids_xml("groupIds", &[acme::ALL_OF_SALES]), "smart group"),
        (ids_xml("groupIds", &[globex::CREW]), "groupIds"),
    ] {
        stack
            .post_xml(&remove, world::OWNER, &body)
            .await
            .assert_error(400, needle);
    }
    for user in [globex::WORKER, "nope"] {
        stack
            .post_xml(
                &format!("/user/{user}/groups/remove"),
                world::OWNER,
                &ids_xml("groupIds", &[acme::INTERNS]),
            )
            .await
            .assert_error(404, "was not found");
    }
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");
}

async fn the_last_active_owner_cannot_leave_status_1(stack: &TestStack) {
    let before = stack.snapshot().await;
    for path in ["/users/deactivate", "/users/terminate"] {
        post_ids(
            stack,
            path,
            world::ADMIN,
            "r",
            &[acme::LEARNER, acme::OWNER],
        )
        .await
        .assert_error(409, "last active account owner");
    }
    assert_eq!(
        stack.snapshot().await,
        before,
        "nothing changes, the learner neither"
    );
    assert!(signs_in(stack, world::OWNER.email).await);
}

async fn a_move_and_a_group_removal_are_audited_once_and_retry_safely(stack: &TestStack) {
    let path = format!("/department/{}/user/move", acme::SUPPORT);
    let named = [acme::LEARNER, acme::ENGINEER, acme::SUPPORTER];
    let reply = post_json(stack, &path, world::OWNER, ids_json("userIds", &named)).await;
    assert_eq!((reply.status, reply.body.as_str()), (204, ""));
    for id in named {
        let profile =
            json_of(&lms_tests::get_json(stack, &format!("/user/{id}"), world::OWNER).await);
        assert_eq!(profile["departmentId"], acme::SUPPORT);
    }
    let rows = audits(stack, "user.update", acme::LEARNER).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            json_text(rows[0].before.as_deref()),
            json_text(rows[0].after.as_deref())
        ),
        (
            json!({"departmentId": acme::SALES_EAST}),
            json!({"departmentId": acme::SUPPORT})
        )
    );
    assert!(
        audits(stack, "user.update", acme::SUPPORTER)
            .await
            .is_empty(),
        "a user already there is left as it is"
    );
    let before = stack.snapshot_without_revision().await;
    let again = stack
        .post_xml(&path, world::OWNER, &ids_xml("userIds", &named))
        .await;
    assert_eq!(again.status, 204, "{}", again.body);
    assert_eq!(stack.snapshot_without_revision().await, before);

    let remove = format!("/api/v2/user/{}/groups/remove", acme::ENGINEER);
    let body = ids_xml("groupIds", &[acme::INTERNS, acme::EMPTY_GROUP]);
    let reply = stack.post_xml(&remove, world::OWNER, &body).await;
    assert_eq!((reply.status, reply.body.as_str()), (200, ""));
    let rows = audits(stack, "user.update", acme::ENGINEER).await;
    assert_eq!(rows.len(), 2, "the move and the removal");
    assert_eq!(
        (
            json_text(rows[1].before.as_deref()),
            json_text(rows[1].after.as_deref())
        ),
        (
            json!({"groupIds": [acme::INTERNS]}),
            json!({"groupIds": []})
        )
    );
    let before = stack.snapshot_without_revision().await;
    let again = post_json(
        stack,
        &remove,
        world::OWNER,
        ids_json("groupIds", &[acme::INTERNS]),
    )
    .await;
    assert_eq!((again.status, again.body.as_str()), (200, ""));
    assert_eq!(stack.snapshot_without_revision().await, before);
    // The learner stays in the group.
    let group = json_of(
        &lms_tests::get_json(stack, &format!("/group/{}", acme::INTERNS), world::OWNER).await,
    );
    assert_eq!(group["userIds"], json!([acme::LEARNER]));
}

async fn grpc_callers_meet_the_same_rules_and_codes(stack: &TestStack) {
    use lms_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
    use tonic::Code;
    let mut admin = AdminServiceClient::new(stack.grpc_channel().await);
    let before = stack.snapshot().await;
    let status = |user_ids: &[&str], status: u32| pb::SetUsersStatusRequest {
        user_ids: user_ids.iter().map(|id| (*id).to_owned()).collect(),
        status,
    };
    for (request, code, needle) in [
        (
            status(&[acme::LEARNER], 7),
            Code::InvalidArgument,
            "status '7'",
        ),
        (status(&[], 3), Code::InvalidArgument, "userIds"),
        (
            status(&[globex::WORKER], 3),
            Code::InvalidArgument,
            globex::WORKER,
        ),
        (
            status(&[acme::OWNER], 5),
            Code::FailedPrecondition,
            "last active account owner",
        ),
    ] {
        let refused = admin
            .set_users_status(world::OWNER.grpc_request(request))
            .await
            .expect_err("refused");
        assert_eq!(refused.code(), code, "{refused:?}");
        assert!(refused.message().contains(needle), "{refused:?}");
    }
    let refused = admin
        .move_users_to_department(world::OWNER.grpc_request(pb::MoveUsersToDepartmentRequest {
            department_id: globex::PLANT.into(),
            user_ids: vec![acme::LEARNER.into()],
        }))
        .await
        .expect_err("refused");
    assert_eq!(refused.code(), Code::NotFound, "{refused:?}");
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");
    let found = admin
        .find_existing_users(
            world::DEPT_ADMIN.grpc_request(pb::FindExistingUsersRequest {
                user_ids: vec![acme::ENGINEER.into(), acme::LEARNER.into()],
            }),
        )
        .await
        .expect("found")
        .into_inner();
    assert_eq!(found.user_ids, [acme::LEARNER]);
}

// ---------------------------------------------------------------------------------------------

/// The world plus 10,000 learners in Sales East.
struct TenThousandUsers {
    stack: TestStack,
    /// The added users' ids, ascending.
    ids: Vec<String>,
}

const BULK_USERS: usize = 10_000;

impl Fixture for TenThousandUsers {
    async fn start(backend: Backend) -> Option<Self> {
        let mut ids: Vec<String> = (0..BULK_USERS)
            .map(|_| Uuid::now_v7().to_string())
            .collect();
        ids.sort();
        let mut document = world::document();
        world::add_bulk_learners(&mut document, &ids, acme::SALES_EAST);
        let stack = world::stack_holding(backend, document).await?;
        Some(Self { stack, ids })
    }

    async fn stop(self) {
        self.stack.stop().await;
    }
}

async fn ten_thousand_ids_are_one_call_and_one_more_is_refused(bulk: &TenThousandUsers) {
    let stack = &bulk.stack;
    let ids: Vec<&str> = bulk.ids.iter().map(String::as_str).collect();
    let before = stack.snapshot().await;
    let mut too_many = ids.clone();
    too_many.push(acme::LEARNER);
    post_ids(
        stack,
        "/users/deactivate",
        world::DEPT_ADMIN,
        "r",
        &too_many,
    )
    .await
    .assert_error(400, "at most 10000 ids");
    let mut one_outside = ids.clone();
    one_outside[BULK_USERS / 2] = acme::ENGINEER;
    post_ids(
        stack,
        "/users/deactivate",
        world::DEPT_ADMIN,
        "r",
        &one_outside,
    )
    .await
    .assert_error(403, acme::ENGINEER);
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");

    let reply = post_ids(stack, "/users/deactivate", world::DEPT_ADMIN, "bulk", &ids).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let still_active = user::Entity::find()
        .filter(user::Column::Id.is_in(bulk.ids.iter().map(|id| world::uuid(id))))
        .filter(user::Column::Active.eq(true))
        .all(stack.db())
        .await
        .expect("users");
    assert!(still_active.is_empty());
    let audited = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("user.set_active"))
        .filter(audit_log::Column::RequestId.eq("bulk"))
        .all(stack.db())
        .await
        .expect("audit rows");
    assert_eq!(audited.len(), BULK_USERS);

    let found = json_of(
        &post_json(
            stack,
            "/users/find_existing",
            world::DEPT_ADMIN,
            ids_json("userIds", &ids),
        )
        .await,
    );
    assert_eq!(found, json!(bulk.ids));

    let path = format!("/department/{}/user/move", acme::SALES);
    let reply = post_json(stack, &path, world::OWNER, ids_json("userIds", &ids)).await;
    assert_eq!(reply.status, 204, "{}", reply.body);
    let moved = user::Entity::find()
        .filter(user::Column::DepartmentId.eq(world::uuid(acme::SALES)))
        .all(stack.db())
        .await
        .expect("users");
    assert_eq!(
        moved.len(),
        BULK_USERS + 2,
        "with the administrator and the coordinator"
    );

    let reply = post_ids(stack, "/users/activate", world::OWNER, "r", &ids).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}
