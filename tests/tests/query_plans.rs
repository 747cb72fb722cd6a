//! Every statement on the path of the seven operations and of authentication is served by an
//! index: played through the real gateway and core against a populated, analysed database,
//! no statement may read `users`, `enrollments`, `group_members`, `department_closure` or
//! `user_points` whole, or sort them.
//!
//! Its own test binary: the statement recorder is this process's `tracing` subscriber.

use lms_core::entities::user;
use lms_tests::{
    Backend, TestStack,
    large_world::{Call, Ids, RoleLogin, WORLD_PASSWORD, WorldShape, world_token},
    query_plan::{self, BadPlan},
};
use sea_orm::{ColumnTrait as _, EntityTrait as _, QueryFilter as _, sea_query::Expr};

#[path = "query_plans/groups.rs"]
mod groups;

/// Users of the account the scenario plays in: enough that a scan costs more than a search.
const USERS: usize = 5_000;
/// Departments of that account: a tree of thousands, as customers have.
const DEPARTMENTS: usize = 2_000;
/// Small accounts beside it, as a shared database holds many.
const NEIGHBOURS: u16 = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_every_statement_of_the_seven_operations_is_served_by_an_index() {
    every_statement_is_served_by_an_index(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_every_statement_of_the_seven_operations_is_served_by_an_index() {
    every_statement_is_served_by_an_index(Backend::Postgres).await;
}

async fn every_statement_is_served_by_an_index(backend: Backend) {
    let _alone = query_plan::ONE_AT_A_TIME.lock().await;
    query_plan::install_recorder();
    let Some((stack, shape)) =
        query_plan::populated_stack(backend, USERS, DEPARTMENTS, NEIGHBOURS).await
    else {
        return;
    };

    let statements = query_plan::record(async {
        play_the_seven_operations(&stack, &shape).await;
        play_with_tokens(&stack, &shape).await;
        play_the_department_directory(&stack, &shape).await;
        groups::play_groups_and_points(&stack, &shape).await;
        play_the_user_directory(&stack, &shape).await;
        play_the_scim_filters(&stack, &shape).await;
    })
    .await;
    // The recorder saw the statements of authentication, the group read, the points read
    // and the enrollment deletion, or it saw nothing worth checking.
    for fragment in [
        "email_key",
        "group_members",
        "user_points",
        "DELETE FROM \"enrollments\"",
        "api_tokens",
        "DELETE FROM \"api_tokens\"",
        "DELETE FROM \"departments\"",
        "smart_department_id",
        "DELETE FROM \"groups\"",
        "DELETE FROM \"group_members\"",
        "actor_user_id",
        "DELETE FROM \"users\"",
        "OFFSET",
        "external_id",
        // The SCIM lookups by name in any case, of a department and of a group.
        "LOWER(\"name\")",
        "\"smart_department_id\" IS NULL AND LOWER(\"name\")",
    ] {
        assert!(
            statements
                .iter()
                .any(|statement| statement.contains(fragment)),
            "no recorded statement mentions {fragment}: {statements:#?}"
        );
    }
    if backend == Backend::Postgres {
        // The group read of PostgreSQL, batched (`db/reads/batches.rs`), is checked as well.
        assert!(
            statements.iter().any(|s| s.contains("WITH ORDINALITY")),
            "the batched group read was not recorded"
        );
    }
    let bad: Vec<BadPlan> = query_plan::check(stack.db(), &statements).await;
    assert!(bad.is_empty(), "{}", query_plan::describe(&bad));
    groups::check_the_group_list(&stack, &statements).await;
    stack.stop().await;
}

/// Every operation, as the account's owner, its department administrator and its custom-role
/// coordinator (scoped reads and writes), each login's first call authenticating cold.
async fn play_the_seven_operations(stack: &TestStack, shape: &WorldShape) {
    let ids = shape.ids();
    let calls = |n: usize| -> Vec<(RoleLogin, Call)> {
        vec![
            (
                RoleLogin::Owner,
                Call::get(format!("/group/{}", ids.plain_group())),
            ),
            (
                RoleLogin::Owner,
                Call::get(format!("/group/{}", ids.smart_group())),
            ),
            (
                RoleLogin::Owner,
                rename(format!("/group/{}", ids.plain_group()), n),
            ),
            (RoleLogin::Owner, create_department(ids, 2, n)),
            (
                RoleLogin::Owner,
                rename(format!("/department/{}", ids.department(3)), n),
            ),
            (RoleLogin::Owner, move_department(ids, 33, 4)),
            (RoleLogin::Owner, delete_enrollments(ids, 100 + n)),
            (
                RoleLogin::Owner,
                Call::get(format!("/content/{}", ids.content_item(n))),
            ),
            (RoleLogin::Owner, Call::get("/gamification/points")),
            (
                RoleLogin::Owner,
                Call::get(format!(
                    "/gamification/points?userIds={},{}",
                    ids.user(7),
                    ids.user(70)
                )),
            ),
            (
                RoleLogin::DepartmentAdministrator,
                Call::get(format!("/group/{}", ids.smart_group())),
            ),
            (RoleLogin::Coordinator, create_department(ids, 1, n)),
            (
                RoleLogin::DepartmentAdministrator,
                rename(format!("/department/{}", ids.department(11)), n),
            ),
            (
                RoleLogin::DepartmentAdministrator,
                move_department(ids, 14, 12),
            ),
            (
                RoleLogin::DepartmentAdministrator,
                delete_enrollments(ids, in_smart_subtree(shape, 200 + n)),
            ),
            (
                RoleLogin::DepartmentAdministrator,
                Call::get("/gamification/points"),
            ),
            (
                RoleLogin::DepartmentAdministrator,
                Call::get(format!(
                    "/gamification/points?userIds={}",
                    ids.user(in_smart_subtree(shape, 300))
                )),
            ),
            (RoleLogin::Coordinator, Call::get("/gamification/points")),
        ]
    };
    for n in 0..2 {
        for (login, call) in calls(n) {
            let status = call
                .send(stack, shape, login)
                .await
                .expect("the gateway answers");
            assert!(status < 300, "{login:?} {} answered {status}", call.path);
        }
    }
}

/// Tokens: issued (with the expired ones cleared), used by a plain and by a scoped role, and
/// refused and deleted once their user's rights changed.
async fn play_with_tokens(stack: &TestStack, shape: &WorldShape) {
    let ids = shape.ids();
    let group = Call::get(format!("/group/{}", ids.smart_group()));
    let points = Call::get("/gamification/points");
    for (login, calls) in [
        (RoleLogin::Owner, vec![group.clone(), points.clone()]),
        (
            RoleLogin::DepartmentAdministrator,
            vec![group.clone(), points.clone()],
        ),
        (RoleLogin::Coordinator, vec![points.clone()]),
    ] {
        let token = world_token(stack, shape, login).await;
        for call in calls {
            let status = call
                .send_with_token(stack, &token)
                .await
                .expect("the gateway answers");
            assert!(status < 300, "{login:?} {} answered {status}", call.path);
        }
    }
    let token = world_token(stack, shape, RoleLogin::Publisher).await;
    user::Entity::update_many()
        .col_expr(user::Column::Role, Expr::value("author"))
        .filter(user::Column::Id.eq(ids.user(RoleLogin::Publisher.user())))
        .exec(stack.db())
        .await
        .expect("a role changed by hand");
    let status = points
        .send_with_token(stack, &token)
        .await
        .expect("the gateway answers");
    assert_eq!(status, 401, "a token outlived its user's role");
}

/// The department reads and the delete (neighbours.md section 3): the whole list, a first page
/// and a page far into the account (its keyset position read from the pages before), one
/// department, as the owner and as the scoped department administrator; and the delete of an
/// empty department, whose checks all pass, so every one of them runs.
async fn play_the_department_directory(stack: &TestStack, shape: &WorldShape) {
    let ids = shape.ids();
    for login in [RoleLogin::Owner, RoleLogin::DepartmentAdministrator] {
        let mut token = String::new();
        for _ in 0..8 {
            let page = as_login(
                stack,
                shape,
                login,
                reqwest::Method::GET,
                &format!("/departments?pageSize=10&pageToken={token}"),
            )
            .await;
            assert_eq!(page.0, 200, "{login:?}: {}", page.1);
            token = lms_tests::xml::text_of(&page.1, "nextPageToken").expect("more pages");
        }
        for path in [
            "/department".to_owned(),
            format!("/department/{}", ids.department(11)),
        ] {
            let status = Call::get(path.clone())
                .send(stack, shape, login)
                .await
                .expect("the gateway answers");
            assert_eq!(status, 200, "{login:?} {path}");
        }
    }
    let (status, body) = as_login(
        stack,
        shape,
        RoleLogin::Owner,
        reqwest::Method::POST,
        "/department",
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let created = lms_tests::xml::text_of(&body, "response").expect("the new id");
    let status = Call::delete(format!("/department/{created}"))
        .send(stack, shape, RoleLogin::Owner)
        .await
        .expect("the gateway answers");
    assert_eq!(status, 204, "the empty department is deleted");
}

/// The user reads (neighbours.md section 4): pages far into the account, one profile, the
/// login lookup and the department and group filters, as the owner and as the scoped
/// department administrator.
async fn play_the_user_directory(stack: &TestStack, shape: &WorldShape) {
    let ids = shape.ids();
    for login in [RoleLogin::Owner, RoleLogin::DepartmentAdministrator] {
        let mut token = String::new();
        for _ in 0..8 {
            let path = format!("/users?pageSize=10&pageToken={token}");
            let page = as_login(stack, shape, login, reqwest::Method::GET, &path).await;
            assert_eq!(page.0, 200, "{login:?}: {}", page.1);
            token = lms_tests::xml::text_of(&page.1, "nextPageToken").expect("more pages");
        }
        for path in [
            format!("/user/{}", ids.user(login.user())),
            format!("/user?logins[]={}", lms_tests::large_world::user_email(7)),
            format!("/user?emails[]={}", lms_tests::large_world::user_email(8)),
            format!("/user?departments[]={}", ids.department(11)),
            format!("/user?groups[]={}", ids.plain_group()),
        ] {
            let status = Call::get(path.clone())
                .send(stack, shape, login)
                .await
                .expect("the gateway answers");
            assert_eq!(status, 200, "{login:?} {path}");
        }
        let list = with_body(
            stack,
            shape,
            login,
            "/user/list",
            r#"{"page":3,"pageSize":10}"#,
        );
        assert_eq!(list.await.0, 200, "{login:?} /user/list");
    }
    // A user made, changed and deleted by the owner: the login and address lookups, the
    // profile fields, the scope's and the delete's checks.
    let new = format!(
        r#"{{"departmentId":"{}","fields":{{"login":"made","email":"made@world.example.com","job_title":"Maker"}}}}"#,
        ids.department(5)
    );
    let (status, body) = with_body(stack, shape, RoleLogin::Owner, "/user", &new).await;
    assert_eq!(status, 201, "{body}");
    let made: String = serde_json::from_str(&body).expect("the new id");
    let change =
        r#"{"fields":{"first_name":"Made","email":"made.again@world.example.com","phone":"1"}}"#;
    let path = format!("/user/{made}");
    let (status, body) = with_body(stack, shape, RoleLogin::Owner, &path, change).await;
    assert_eq!(status, 200, "{body}");
    let status = Call::delete(path)
        .send(stack, shape, RoleLogin::Owner)
        .await
        .expect("the gateway answers");
    assert_eq!(status, 204, "the new user is deleted");
    play_the_bulk_lifecycle_calls(stack, shape).await;
}

/// The bulk lifecycle calls of provisioning by the department administrator, for users of its
/// subtree: the named users' reads, the scope's checks, the status and department writes, the
/// deletion of their tokens; then a group removal by the owner.
async fn play_the_bulk_lifecycle_calls(stack: &TestStack, shape: &WorldShape) {
    let ids = shape.ids();
    let in_scope: Vec<String> = (100..1_000)
        .filter(|&user| WorldShape::works_in_smart_subtree(user))
        .take(50)
        .map(|user| ids.user(user).to_string())
        .collect();
    let body = serde_json::json!({ "userIds": in_scope }).to_string();
    let move_path = format!("/department/{}/user/move", ids.department(1));
    for (path, expected) in [
        ("/users/deactivate", 200),
        ("/users/terminate", 200),
        ("/users/activate", 200),
        ("/users/find_existing", 200),
        (move_path.as_str(), 204),
    ] {
        let login = RoleLogin::DepartmentAdministrator;
        let (status, answer) = with_body(stack, shape, login, path, &body).await;
        assert_eq!(status, expected, "{path}: {answer}");
    }
    let path = format!("/user/{}/groups/remove", ids.user(101));
    let groups = serde_json::json!({ "groupIds": [ids.plain_group()] }).to_string();
    let (status, answer) = with_body(stack, shape, RoleLogin::Owner, &path, &groups).await;
    assert_eq!(status, 200, "{answer}");
}

/// SCIM's user filters (provisioning.md section 15): `userName`, `externalId` and an e-mail
/// address, each one index lookup, and the unfiltered list a walk of `(account_id, id)`; then
/// SCIM creates.
async fn play_the_scim_filters(stack: &TestStack, shape: &WorldShape) {
    let (status, made) = with_body(stack, shape, RoleLogin::Owner, "/scim_tokens", "{}").await;
    assert_eq!(status, 201, "{made}");
    let made: serde_json::Value = serde_json::from_str(&made).expect("JSON");
    let token = made["token"].as_str().expect("a token");
    let email = lms_tests::large_world::user_email(500);
    for filter in [
        format!("userName eq \"{}\"", email.to_uppercase()),
        "externalId eq \"00u-nobody\"".to_owned(),
        format!("emails.value eq \"{email}\""),
        format!("userName eq \"{email}\" and externalId eq \"x\""),
    ] {
        let encoded: String = form_urlencoded::byte_serialize(filter.as_bytes()).collect();
        let path = format!("/scim/v2/Users?filter={encoded}");
        let status = scim_get(stack, &path, token).await;
        assert_eq!(status, 200, "{filter}");
    }
    for path in [
        "/scim/v2/Users?count=10",
        "/scim/v2/Users?startIndex=900&count=10",
        // A group by name in any case: `groups (account_id, lower(name), id)`.
        "/scim/v2/Groups?filter=displayName%20eq%20%22HUNDRED%201%22",
    ] {
        assert_eq!(scim_get(stack, path, token).await, 200, "{path}");
    }
    // Creates (section 15: 100,000 in a row): the uniqueness lookups, the insert and the
    // resource read back; the last one names its department by name in another case (no
    // code matches it), found on `departments (account_id, lower(name), id)`.
    for n in 0..3 {
        let mut body = serde_json::json!({
            "userName": format!("scim-plan-{n}@world.example.com"),
            "externalId": format!("00u-plan-{n}"),
            "name": {"givenName": "Plan", "familyName": "Scim"},
        });
        if n == 2 {
            body["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"] =
                serde_json::json!({"department": "DEPARTMENT 7"});
        }
        let status = stack
            .http
            .post(format!("{}/scim/v2/Users", stack.base_url))
            .header("Authorization", format!("Bearer {token}"))
            .header("Content-Type", "application/scim+json")
            .body(body.to_string())
            .send()
            .await
            .expect("the gateway answers")
            .status()
            .as_u16();
        assert_eq!(status, 201, "create {n}");
    }
}

async fn scim_get(stack: &TestStack, path: &str, token: &str) -> u16 {
    stack
        .http
        .get(format!("{}{path}", stack.base_url))
        .header("Authorization", format!("Bearer {token}"))
        .send()
        .await
        .expect("the gateway answers")
        .status()
        .as_u16()
}

/// `POST path` with a JSON `body` as `login`; status and body.
async fn with_body(
    stack: &TestStack,
    shape: &WorldShape,
    login: RoleLogin,
    path: &str,
    body: &str,
) -> (u16, String) {
    let response = stack
        .http
        .post(format!("{}{path}", stack.base_url))
        .header("X-Auth-Account-Url", &shape.account_url)
        .header("X-Auth-Email", login.email())
        .header("X-Auth-Password", WORLD_PASSWORD)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("the gateway answers");
    let status = response.status().as_u16();
    (status, response.text().await.expect("a body"))
}

/// `method path` as `login`, with a new department's body when it is a POST; status and body.
async fn as_login(
    stack: &TestStack,
    shape: &WorldShape,
    login: RoleLogin,
    method: reqwest::Method,
    path: &str,
) -> (u16, String) {
    let mut request = stack
        .http
        .request(method.clone(), format!("{}{path}", stack.base_url))
        .header("X-Auth-Account-Url", &shape.account_url)
        .header("X-Auth-Email", login.email())
        .header("X-Auth-Password", WORLD_PASSWORD);
    if method == reqwest::Method::POST {
        request = request.header("Content-Type", "application/xml").body(format!(
            "<request><name>To be deleted</name><parentDepartmentId>{}</parentDepartmentId></request>",
            shape.ids().department(5)
        ));
    }
    let response = request.send().await.expect("the gateway answers");
    let status = response.status().as_u16();
    (status, response.text().await.expect("a body"))
}

/// The first user, from `from` on, who works in the department administrator's scope.
fn in_smart_subtree(shape: &WorldShape, from: usize) -> usize {
    (from..shape.users)
        .find(|&user| WorldShape::works_in_smart_subtree(user))
        .expect("the smart subtree has users")
}

fn rename(path: String, n: usize) -> Call {
    Call::post(path, format!("<request><name>Renamed {n}</name></request>"))
}

fn create_department(ids: Ids, parent: usize, n: usize) -> Call {
    Call::post(
        "/department",
        format!(
            "<request><name>New {parent}-{n}</name><parentDepartmentId>{}</parentDepartmentId></request>",
            ids.department(parent)
        ),
    )
}

fn move_department(ids: Ids, department: usize, parent: usize) -> Call {
    Call::post(
        format!("/department/{}", ids.department(department)),
        format!(
            "<request><parentDepartmentId>{}</parentDepartmentId></request>",
            ids.department(parent)
        ),
    )
}

fn delete_enrollments(ids: Ids, learner: usize) -> Call {
    let ids: String = (0..3)
        .map(|k| format!("<id>{}</id>", ids.enrollment(learner, k)))
        .collect();
    Call::post(
        "/enrollment/delete",
        format!("<DeleteEnrollments><enrollmentIds>{ids}</enrollmentIds></DeleteEnrollments>"),
    )
}
