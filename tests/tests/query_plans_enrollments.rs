//! Every statement of the enrollment and content listings and of `POST /enrollment`
//! (neighbours.md sections 5 and 6) is served by an index: played through the real gateway and
//! core against a populated, analysed database, no statement may read `users`, `enrollments`
//! or `department_closure` whole, or sort them.
//!
//! Its own test binary beside `query_plans.rs`: the statement recorder is this process's
//! `tracing` subscriber.

use lms_tests::{
    Backend, TestStack,
    large_world::{Ids, RoleLogin, WORLD_PASSWORD, WorldShape},
    query_plan::{self, BadPlan},
};

/// Users of the account the scenario plays in: enough that a scan costs more than a search.
/// With scattered ids a page of 2,000 enrollments names about 2,000 learners; the scoped walk
/// checks them in one `IN` list, which a much smaller account would rightly answer with a scan.
const USERS: usize = 20_000;
const DEPARTMENTS: usize = 2_000;
/// Small accounts beside it, as a shared database holds many.
const NEIGHBOURS: u16 = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_every_enrollment_and_content_statement_is_served_by_an_index() {
    every_statement_is_served_by_an_index(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_every_enrollment_and_content_statement_is_served_by_an_index() {
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
        play_the_enrollment_lists(&stack, &shape).await;
        play_the_content_lists(&stack, &shape).await;
        play_the_enrollment_create(&stack, &shape).await;
    })
    .await;
    for fragment in [
        "\"learner_id\" =",
        "\"content_item_id\" =",
        "INSERT INTO \"enrollments\"",
        "\"content_items\"",
        "\"project_authors\"",
    ] {
        assert!(
            statements
                .iter()
                .any(|statement| statement.contains(fragment)),
            "no recorded statement mentions {fragment}: {statements:#?}"
        );
    }
    let bad: Vec<BadPlan> = query_plan::check(stack.db(), &statements).await;
    assert!(bad.is_empty(), "{}", query_plan::describe(&bad));
    stack.stop().await;
}

/// `method path` as `login` with an optional XML body; status and body.
async fn send(
    stack: &TestStack,
    shape: &WorldShape,
    login: RoleLogin,
    path: &str,
    body: Option<String>,
) -> (u16, String) {
    let method = if body.is_some() {
        reqwest::Method::POST
    } else {
        reqwest::Method::GET
    };
    let mut request = stack
        .http
        .request(method, format!("{}{path}", stack.base_url))
        .header("X-Auth-Account-Url", &shape.account_url)
        .header("X-Auth-Email", login.email())
        .header("X-Auth-Password", WORLD_PASSWORD);
    if let Some(body) = body {
        request = request.header("Content-Type", "application/xml").body(body);
    }
    let response = request.send().await.expect("the gateway answers");
    let status = response.status().as_u16();
    (status, response.text().await.expect("a body"))
}

/// Walks `pages` pages of `path` (which takes `&pageToken=` appended) as `login`.
async fn walk(stack: &TestStack, shape: &WorldShape, login: RoleLogin, path: &str, pages: usize) {
    let mut token = String::new();
    for page in 0..pages {
        let (status, body) = send(
            stack,
            shape,
            login,
            &format!("{path}&pageToken={token}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{login:?} {path} page {page}: {body}");
        match lms_tests::xml::text_of(&body, "nextPageToken") {
            Some(next) => token = next,
            None => break,
        }
    }
}

/// The first user, from `from` on, who works in the department administrator's scope.
fn in_scope(shape: &WorldShape, from: usize) -> usize {
    (from..shape.users)
        .find(|&user| WorldShape::works_in_smart_subtree(user))
        .expect("the smart subtree has users")
}

async fn get_ok(stack: &TestStack, shape: &WorldShape, login: RoleLogin, path: &str) {
    let (status, body) = send(stack, shape, login, path, None).await;
    assert_eq!(status, 200, "{login:?} {path}: {body}");
}

/// The account's enrollments page by page far in, one learner's, one course's, some by id, as
/// the owner and as the scoped department administrator (whose walk drops other learners).
async fn play_the_enrollment_lists(stack: &TestStack, shape: &WorldShape) {
    let ids: Ids = shape.ids();
    for login in [RoleLogin::Owner, RoleLogin::DepartmentAdministrator] {
        walk(stack, shape, login, "/enrollments?pageSize=10", 6).await;
        walk(stack, shape, login, "/enrollments?pageSize=2000", 2).await;
        let learner = ids.user(in_scope(shape, 100));
        get_ok(
            stack,
            shape,
            login,
            &format!("/enrollment?learnerIds[]={learner}"),
        )
        .await;
        walk(
            stack,
            shape,
            login,
            &format!(
                "/enrollments?pageSize=5&learnerIds[]={learner}&learnerIds[]={}&courseIds[]={}",
                ids.user(in_scope(shape, 200)),
                ids.content_item(3)
            ),
            3,
        )
        .await;
        walk(
            stack,
            shape,
            login,
            &format!(
                "/enrollments?pageSize=5&courseIds[]={}",
                ids.content_item(3)
            ),
            3,
        )
        .await;
        get_ok(
            stack,
            shape,
            login,
            &format!(
                "/enrollment?enrollmentIds[]={}&enrollmentIds[]={}&learnerIds[]={learner}",
                ids.enrollment(in_scope(shape, 100), 0),
                ids.enrollment(in_scope(shape, 300), 1)
            ),
        )
        .await;
    }
}

/// The account's items page by page, filtered by type and id, as the owner and as the author.
async fn play_the_content_lists(stack: &TestStack, shape: &WorldShape) {
    let ids = shape.ids();
    for login in [RoleLogin::Owner, RoleLogin::Author] {
        walk(stack, shape, login, "/contents?pageSize=7", 4).await;
        get_ok(stack, shape, login, "/content?contentTypes[]=course").await;
        get_ok(
            stack,
            shape,
            login,
            &format!(
                "/content?contentItemIds[]={}&contentItemIds[]={}",
                ids.content_item(5),
                ids.content_item(55)
            ),
        )
        .await;
    }
}

/// Enrollments made by the owner (some pairs new, some existing) and by the department
/// administrator (learners in its scope).
async fn play_the_enrollment_create(stack: &TestStack, shape: &WorldShape) {
    let ids = shape.ids();
    let body = |courses: &[usize], learners: &[usize]| {
        let courses: String = courses
            .iter()
            .map(|n| format!("<id>{}</id>", ids.content_item(*n)))
            .collect();
        let learners: String = learners
            .iter()
            .map(|n| format!("<id>{}</id>", ids.user(*n)))
            .collect();
        format!(
            "<request><courseIds>{courses}</courseIds><learnerIds>{learners}</learnerIds>\
             <dueDateType>due_period</dueDateType><duePeriod>24</duePeriod></request>"
        )
    };
    for (login, learners) in [
        (RoleLogin::Owner, vec![100, 101, 102, 4_000]),
        (
            RoleLogin::DepartmentAdministrator,
            vec![in_scope(shape, 500), in_scope(shape, 600)],
        ),
    ] {
        let (status, reply) = send(
            stack,
            shape,
            login,
            "/enrollment",
            Some(body(&[0, 1, 42, 99], &learners)),
        )
        .await;
        assert_eq!(status, 201, "{login:?}: {reply}");
    }
}
