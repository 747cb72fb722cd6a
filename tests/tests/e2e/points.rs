//! `GET /gamification/points` (interface 4.7; contract sections 3 and 8) through the real
//! gateway and core, including a list long enough to be streamed in many pieces.

use futures::{StreamExt as _, TryStreamExt as _};
use lms_proto::v1::{self as pb, directory_service_client::DirectoryServiceClient};
use lms_tests::{
    Backend, Reply, TestStack, on_both_backends,
    testkit::Fixture,
    world::{self, Login, acme, globex},
    xml::{PROLOGUE, element_names, texts_of},
};
use sea_orm::prelude::Uuid;
use serde_json::json;

const PATH: &str = "/gamification/points";

on_both_backends!(
    the_owner_sees_every_user_of_the_account_once_in_ascending_order,
    every_spelling_of_the_user_ids_filter_gives_the_same_answer,
    unknown_users_and_users_of_another_account_are_left_out,
    a_malformed_user_id_is_400_naming_it,
    a_department_administrator_sees_only_users_of_sales,
    a_publisher_sees_only_users_of_engineering,
    a_reporter_with_points_read_is_scoped_like_a_publisher,
    a_coordinator_with_points_read_is_scoped_like_a_department_administrator,
    roles_without_the_permission_are_403,
    a_scoped_caller_managing_no_department_sees_nobody_until_given_one,
);
lms_tests::testkit::on_both_backends!(BulkLearners =>
    thousands_of_users_are_streamed_in_ascending_order_as_one_well_formed_document,
);

/// Every Acme user with the points the world gives it, in ascending id order.
fn every_acme_user() -> Vec<(String, i64)> {
    let mut users: Vec<(String, i64)> = acme::USERS
        .into_iter()
        .map(|id| (id.to_owned(), points_in_world(id)))
        .collect();
    users.sort();
    users
}

fn points_in_world(id: &str) -> i64 {
    match id {
        acme::LEARNER => 421,
        acme::ENGINEER => 17,
        acme::OWNER => 5,
        _ => 0,
    }
}

/// The expected rows for `ids`, ascending.
fn rows(ids: &[&str]) -> Vec<(String, i64)> {
    let mut rows: Vec<(String, i64)> = ids
        .iter()
        .map(|id| ((*id).to_owned(), points_in_world(id)))
        .collect();
    rows.sort();
    rows
}

/// Checks a points reply and returns its rows in document order.
#[track_caller]
fn points_rows(reply: &Reply) -> Vec<(String, i64)> {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    rows_of(&reply.body)
}

/// Checks the shape of a points body (`response`, then `userPointsInfo` with `userId`
/// and `points` each) and returns its rows in document order.
#[track_caller]
fn rows_of(body: &str) -> Vec<(String, i64)> {
    assert!(body.starts_with(PROLOGUE), "{body}");
    let names = element_names(body);
    assert_eq!(
        names.first().map(String::as_str),
        Some("response"),
        "{body}"
    );
    for (n, info) in names[1..].chunks(3).enumerate() {
        assert_eq!(
            info,
            ["userPointsInfo", "userId", "points"],
            "entry {n} of {body}"
        );
    }
    let ids = texts_of(body, "userId");
    let points = texts_of(body, "points");
    assert_eq!(ids.len(), points.len());
    assert_eq!(ids.len() * 3 + 1, names.len(), "{body}");
    ids.into_iter()
        .zip(points)
        .map(|(id, points)| {
            (
                id,
                points
                    .parse()
                    .unwrap_or_else(|_| panic!("points {points:?} is an integer")),
            )
        })
        .collect()
}

async fn points(stack: &TestStack, login: Login, query: &str) -> Reply {
    let path = if query.is_empty() {
        PATH.to_owned()
    } else {
        format!("{PATH}?{query}")
    };
    stack.get(&path, login).await
}

async fn the_owner_sees_every_user_of_the_account_once_in_ascending_order(stack: &TestStack) {
    for login in [world::OWNER, world::ADMIN] {
        let reply = points(stack, login, "").await;
        assert_eq!(
            points_rows(&reply),
            every_acme_user(),
            "{}: {}",
            login.email,
            reply.body
        );
        assert!(
            !reply.body.contains(globex::WORKER),
            "no Globex user: {}",
            reply.body
        );
    }
    // An empty filter is no filter.
    assert_eq!(
        points_rows(&points(stack, world::OWNER, "userIds=").await),
        every_acme_user()
    );
    // And the other account sees only its own.
    let globex = points(stack, world::GLOBEX_OWNER, "").await;
    let mut expected = vec![
        (globex::OWNER.to_owned(), 0),
        (globex::WORKER.to_owned(), 99),
    ];
    expected.sort();
    assert_eq!(points_rows(&globex), expected);
}

async fn every_spelling_of_the_user_ids_filter_gives_the_same_answer(stack: &TestStack) {
    let (a, b) = (acme::ENGINEER, acme::LEARNER);
    let expected = rows(&[a, b]);
    let spellings = [
        format!("userIds={a},{b}"),
        format!("userIds={b},{a}"),
        format!("userIds={a}&userIds={b}"),
        format!("userIds[]={a}&userIds[]={b}"),
        format!("userIds%5B%5D={a}&userIds%5B%5D={b}"),
        format!("userIds%5b%5d={b}&userIds={a}"),
        format!("userIds={a}%2C{b}"),
        format!("userIds={}&userIds={b},{a}", a.to_uppercase()),
    ];
    for query in spellings {
        let reply = points(stack, world::OWNER, &query).await;
        assert_eq!(points_rows(&reply), expected, "{query}: {}", reply.body);
    }
    let one = points(stack, world::OWNER, &format!("userIds={}", acme::OWNER)).await;
    assert_eq!(points_rows(&one), rows(&[acme::OWNER]));
}

async fn unknown_users_and_users_of_another_account_are_left_out(stack: &TestStack) {
    let unknown = "0191a000-0000-7000-8000-0000000002ff";
    let reply = points(
        stack,
        world::OWNER,
        &format!("userIds={unknown},{},{}", acme::LEARNER, globex::WORKER),
    )
    .await;
    assert_eq!(points_rows(&reply), rows(&[acme::LEARNER]));

    let none = points(
        stack,
        world::OWNER,
        &format!("userIds={unknown}&userIds={}", globex::WORKER),
    )
    .await;
    assert_eq!(points_rows(&none), []);
    assert_eq!(element_names(&none.body), ["response"], "{}", none.body);
    assert!(
        none.body.trim_end().ends_with("</response>")
            || none.body.trim_end().ends_with("<response/>")
    );

    // A scoped caller naming another account's user gets no 403 either: it names nothing.
    let scoped = points(
        stack,
        world::DEPT_ADMIN,
        &format!("userIds={},{}", globex::WORKER, acme::LEARNER),
    )
    .await;
    assert_eq!(points_rows(&scoped), rows(&[acme::LEARNER]));
}

async fn a_malformed_user_id_is_400_naming_it(stack: &TestStack) {
    let reply = points(
        stack,
        world::OWNER,
        &format!("userIds={},not-a-user", acme::LEARNER),
    )
    .await;
    reply.assert_error(400, "not-a-user");
    reply.assert_error(400, "userIds");
    let braces = points(
        stack,
        world::OWNER,
        &format!("userIds[]=%7B{}%7D", acme::LEARNER),
    )
    .await;
    braces.assert_error(400, &format!("{{{}}}", acme::LEARNER));
}

#[track_caller]
fn assert_denied_naming(reply: &Reply, user: &str) {
    reply.assert_error(403, user);
    assert!(!reply.body.contains("<userPointsInfo>"), "{}", reply.body);
}

/// A scoped caller sees exactly `visible` without a filter, may name them, and gets a 403
/// naming the user when it names `outside` (even mixed with visible ones).
async fn scoped_caller_sees_only(stack: &TestStack, login: Login, visible: &[&str], outside: &str) {
    let reply = points(stack, login, "").await;
    assert_eq!(
        points_rows(&reply),
        rows(visible),
        "{}: {}",
        login.email,
        reply.body
    );

    let named = points(stack, login, &format!("userIds={}", visible.join(","))).await;
    assert_eq!(points_rows(&named), rows(visible), "{}", login.email);

    assert_denied_naming(
        &points(stack, login, &format!("userIds={outside}")).await,
        outside,
    );
    let mixed = points(
        stack,
        login,
        &format!("userIds[]={}&userIds[]={outside}", visible[0]),
    )
    .await;
    assert_denied_naming(&mixed, outside);
}

async fn a_department_administrator_sees_only_users_of_sales(stack: &TestStack) {
    // Sales and Sales East.
    let sales = [acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR];
    scoped_caller_sees_only(stack, world::DEPT_ADMIN, &sales, acme::ENGINEER).await;
    assert_denied_naming(
        &points(
            stack,
            world::DEPT_ADMIN,
            &format!("userIds={}", acme::OWNER),
        )
        .await,
        acme::OWNER,
    );
}

async fn a_publisher_sees_only_users_of_engineering(stack: &TestStack) {
    let engineering = [
        acme::PUBLISHER,
        acme::AUTHOR,
        acme::ENGINEER,
        acme::REPORTER,
    ];
    scoped_caller_sees_only(stack, world::PUBLISHER, &engineering, acme::LEARNER).await;
    assert_denied_naming(
        &points(
            stack,
            world::PUBLISHER,
            &format!("userIds={}", acme::SUPPORTER),
        )
        .await,
        acme::SUPPORTER,
    );
}

async fn a_reporter_with_points_read_is_scoped_like_a_publisher(stack: &TestStack) {
    let engineering = [
        acme::PUBLISHER,
        acme::AUTHOR,
        acme::ENGINEER,
        acme::REPORTER,
    ];
    scoped_caller_sees_only(stack, world::REPORTER, &engineering, acme::LEARNER).await;
}

async fn a_coordinator_with_points_read_is_scoped_like_a_department_administrator(
    stack: &TestStack,
) {
    let sales = [acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR];
    scoped_caller_sees_only(stack, world::COORDINATOR, &sales, acme::SUPPORTER).await;
}

async fn roles_without_the_permission_are_403(stack: &TestStack) {
    for login in [world::VIEWER, world::AUTHOR, world::LEARNER] {
        let all = points(stack, login, "").await;
        all.assert_error(403, "permission to read points");
        // Not even its own points.
        let own = points(stack, login, &format!("userIds={}", login.id)).await;
        own.assert_error(403, "permission to read points");
    }
    // POST reads the filter from a body (for lists too long for a URI); other methods are 405.
    let delete = Reply::send(stack.request(reqwest::Method::DELETE, PATH, world::OWNER)).await;
    delete.assert_error(405, "DELETE");
    assert!(
        delete
            .header("allow")
            .is_some_and(|allow| allow.contains("GET") && allow.contains("POST")),
        "{:?}",
        delete.headers
    );
}

async fn a_scoped_caller_managing_no_department_sees_nobody_until_given_one(stack: &TestStack) {
    let mut directory = DirectoryServiceClient::new(stack.grpc_channel().await);
    let email = "new.reporter@acme.example.com";
    let user_id = directory
        .create_user(world::OWNER.grpc_request(pb::CreateUserRequest {
            email: email.into(),
            password: world::PASSWORD.into(),
            role: Some(pb::RoleAssignment {
                role: pb::Role::Custom.into(),
                custom_role_id: Some(acme::REPORTER_ROLE.into()),
            }),
            department_id: acme::SUPPORT.into(),
            managed_department_ids: vec![],
            active: true,
        }))
        .await
        .expect("the owner creates a reporter")
        .into_inner()
        .user_id;
    let login = Login {
        account_url: world::ACME_URL,
        email,
        id: user_id.clone().leak(),
    };

    assert_eq!(
        points_rows(&points(stack, login, "").await),
        [],
        "an empty scope holds nobody"
    );
    // Not even itself: a user is in scope by the departments it manages, not its own.
    assert_denied_naming(
        &points(stack, login, &format!("userIds={user_id}")).await,
        &user_id,
    );

    directory
        .set_user_managed_departments(world::OWNER.grpc_request(
            pb::SetUserManagedDepartmentsRequest {
                user_id: user_id.clone(),
                managed_department_ids: vec![acme::SUPPORT.into()],
            },
        ))
        .await
        .expect("the owner gives it Support");
    let mut expected = rows(&[acme::VIEWER, acme::SUPPORTER]);
    expected.push((user_id.clone(), 0));
    expected.sort();
    assert_eq!(
        points_rows(&points(stack, login, "").await),
        expected,
        "the new scope applies at once"
    );

    // Overlapping subtrees (Sales East is inside Sales): each user still appears once.
    directory
        .set_user_managed_departments(world::OWNER.grpc_request(
            pb::SetUserManagedDepartmentsRequest {
                user_id: user_id.clone(),
                managed_department_ids: vec![
                    acme::SALES_EAST.into(),
                    acme::SALES.into(),
                    acme::SUPPORT.into(),
                ],
            },
        ))
        .await
        .expect("the owner gives it Sales too");
    let mut expected = rows(&[
        acme::VIEWER,
        acme::SUPPORTER,
        acme::DEPT_ADMIN,
        acme::LEARNER,
        acme::COORDINATOR,
    ]);
    expected.push((user_id, 0));
    expected.sort();
    assert_eq!(points_rows(&points(stack, login, "").await), expected);
    let named = points(stack, login, &format!("userIds={0},{0}", acme::LEARNER)).await;
    assert_eq!(points_rows(&named), rows(&[acme::LEARNER]));
}

const BULK_USERS: usize = 2_500;

/// The world, plus a department "Bulk" under Sales holding [`BULK_USERS`] learners
/// (imported with the world, in random id order), every 25th of whom has been given
/// points through the DirectoryService.
struct BulkLearners {
    stack: TestStack,
    /// The added learners with their points, ascending.
    users: Vec<(String, i64)>,
}

impl Fixture for BulkLearners {
    async fn start(backend: Backend) -> Option<Self> {
        let department = Uuid::new_v4().to_string();
        // Random ids: the order they are stored in says nothing about the order asked for.
        let ids: Vec<String> = (0..BULK_USERS)
            .map(|_| Uuid::new_v4().to_string())
            .collect();
        let mut document = world::document();
        world::add_rows(
            &mut document,
            0,
            "departments",
            vec![json!({"id": department, "name": "Bulk", "parentDepartmentId": acme::SALES})],
        );
        world::add_bulk_learners(&mut document, &ids, &department);
        let stack = world::stack_holding(backend, document).await?;

        let directory = DirectoryServiceClient::new(stack.grpc_channel().await);
        let mut users: Vec<(String, i64)> = futures::stream::iter(ids.into_iter().enumerate())
            .map(|(n, user_id)| {
                let mut directory = directory.clone();
                async move {
                    let mut points = 0;
                    if n % 25 == 0 {
                        let given = i64::try_from(n).expect("small") - 1_000;
                        points = directory
                            .add_points(world::OWNER.grpc_request(pb::AddPointsRequest {
                                user_id: user_id.clone(),
                                points: given,
                            }))
                            .await?
                            .into_inner()
                            .total;
                        assert_eq!(points, given);
                    }
                    Ok::<_, tonic::Status>((user_id, points))
                }
            })
            .buffer_unordered(4)
            .try_collect()
            .await
            .expect("bulk points");
        users.sort();
        Some(Self { stack, users })
    }

    async fn stop(self) {
        self.stack.stop().await;
    }
}

async fn thousands_of_users_are_streamed_in_ascending_order_as_one_well_formed_document(
    learners: &BulkLearners,
) {
    let stack = &learners.stack;
    let bulk = &learners.users;

    // The owner: the world and the bulk, read as a stream of body chunks.
    let response = stack
        .request(reqwest::Method::GET, PATH, world::OWNER)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "application/xml; charset=utf-8"
    );
    let chunks: Vec<Vec<u8>> = response
        .bytes_stream()
        .map_ok(|b| b.to_vec())
        .try_collect()
        .await
        .expect("the whole body");
    assert!(chunks.len() > 1, "a long list arrives in several pieces");
    let body = String::from_utf8(chunks.concat()).expect("UTF-8");
    assert!(
        body.starts_with(&format!("{PROLOGUE}<response>")),
        "{}",
        &body[..200.min(body.len())]
    );
    assert!(body.ends_with("</response>"), "the document is closed");
    assert_eq!(body.matches("<response>").count(), 1);
    assert_eq!(
        body.matches("<userPointsInfo>").count(),
        body.matches("</userPointsInfo>").count()
    );
    let mut expected = every_acme_user();
    expected.extend(bulk.iter().cloned());
    expected.sort();
    let got = rows_of(&body);
    assert_eq!(got.len(), BULK_USERS + 12);
    assert!(
        got.windows(2).all(|w| w[0].0 < w[1].0),
        "strictly ascending, each user once"
    );
    assert_eq!(got, expected);

    // A department administrator of Sales pages through its scope, Bulk included.
    let scoped = points_rows(&points(stack, world::DEPT_ADMIN, "").await);
    let mut expected = rows(&[acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR]);
    expected.extend(bulk.iter().cloned());
    expected.sort();
    assert_eq!(scoped, expected);
    // ... while the publisher still sees only Engineering.
    let engineering = points_rows(&points(stack, world::PUBLISHER, "").await);
    assert_eq!(
        engineering,
        rows(&[
            acme::PUBLISHER,
            acme::AUTHOR,
            acme::ENGINEER,
            acme::REPORTER
        ])
    );

    // A filter longer than one page of the core, named in descending order.
    let named: Vec<&str> = bulk
        .iter()
        .rev()
        .take(1_100)
        .map(|(id, _)| id.as_str())
        .collect();
    let filtered =
        points_rows(&points(stack, world::OWNER, &format!("userIds={}", named.join(","))).await);
    let mut expected: Vec<(String, i64)> = bulk.iter().rev().take(1_100).cloned().collect();
    expected.sort();
    assert_eq!(filtered, expected);
}
