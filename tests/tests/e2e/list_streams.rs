//! The whole-list streams of `lms.v1.AdminService` (`StreamDepartments`, `StreamGroups`,
//! `StreamEnrollments`, `StreamContentItems`, `StreamUsers`) over real gRPC: each streams
//! exactly the rows of the paged walk of the same list, filters and scope included, in
//! messages of at most 1,000 rows; its refusals are the unpaged `List*` call's, answered
//! before any message; and the unpaged `List*` calls refuse more than 10,000 rows.

use futures::TryStreamExt as _;
use lms_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
use lms_tests::{
    Backend, TestStack, on_both_backends,
    testkit::Fixture,
    world::{self, Login, acme, globex},
};
use sea_orm::{ConnectionTrait as _, prelude::Uuid};
use serde_json::json;
use tonic::{Code, Status, transport::Channel};

on_both_backends!(
    each_stream_returns_the_rows_of_the_paged_walk_and_the_unpaged_list_with_every_filter,
    a_department_administrator_streams_its_scope,
    bad_filters_and_refused_roles_are_the_calls_status_before_any_message,
);
lms_tests::testkit::on_both_backends!(BulkAccount =>
    long_lists_stream_in_messages_of_at_most_a_thousand_rows_in_the_paged_walks_order,
    an_unpaged_list_of_more_than_ten_thousand_rows_is_refused_naming_the_stream_and_pages,
    a_database_failure_midway_ends_the_stream_with_its_status,
);

/// One list with its filters (the stream request's, which the paged and unpaged calls take
/// too).
#[derive(Debug, Clone)]
enum List {
    Departments,
    Groups,
    Enrollments(pb::StreamEnrollmentsRequest),
    ContentItems(pb::StreamContentItemsRequest),
    Users(pb::StreamUsersRequest),
}

/// The ids of each message of a stream.
type Messages = Vec<Vec<String>>;

impl List {
    fn users() -> Self {
        Self::Users(pb::StreamUsersRequest::default())
    }

    fn enrollments() -> Self {
        Self::Enrollments(pb::StreamEnrollmentsRequest::default())
    }

    fn content_items() -> Self {
        Self::ContentItems(pb::StreamContentItemsRequest::default())
    }

    fn all() -> [Self; 5] {
        [
            Self::Departments,
            Self::Groups,
            Self::enrollments(),
            Self::content_items(),
            Self::users(),
        ]
    }

    /// The ids of every message of the stream; the call's own status when it is refused.
    async fn stream(&self, admin: &Admin, login: Login) -> Result<Messages, Status> {
        let mut admin = admin.clone();
        Ok(match self.clone() {
            Self::Departments => {
                let messages = admin
                    .stream_departments(login.grpc_request(pb::StreamDepartmentsRequest {}))
                    .await?;
                collect(messages.into_inner(), |m| {
                    ids(&m.departments, |d| &d.department_id)
                })
                .await?
            }
            Self::Groups => {
                let messages = admin
                    .stream_groups(login.grpc_request(pb::StreamGroupsRequest {}))
                    .await?;
                collect(messages.into_inner(), |m| ids(&m.groups, |g| &g.group_id)).await?
            }
            Self::Enrollments(request) => {
                let messages = admin
                    .stream_enrollments(login.grpc_request(request))
                    .await?;
                collect(messages.into_inner(), |m| {
                    ids(&m.enrollments, |e| &e.enrollment_id)
                })
                .await?
            }
            Self::ContentItems(request) => {
                let messages = admin
                    .stream_content_items(login.grpc_request(request))
                    .await?;
                collect(messages.into_inner(), |m| {
                    ids(&m.content_items, |c| &c.content_item_id)
                })
                .await?
            }
            Self::Users(request) => {
                let messages = admin.stream_users(login.grpc_request(request)).await?;
                collect(messages.into_inner(), |m| ids(&m.users, |u| &u.user_id)).await?
            }
        })
    }

    /// One page (`page` given) or the unpaged answer (`None`): its ids and next token.
    async fn list(
        &self,
        admin: &Admin,
        login: Login,
        page: Option<pb::PageRequest>,
    ) -> Result<(Vec<String>, String), Status> {
        let mut admin = admin.clone();
        Ok(match self.clone() {
            Self::Departments => {
                let answer = admin
                    .list_departments(login.grpc_request(pb::ListDepartmentsRequest { page }))
                    .await?
                    .into_inner();
                let found = ids(&answer.departments, |d| &d.department_id);
                (found, answer.next_page_token)
            }
            Self::Groups => {
                let answer = admin
                    .list_groups(login.grpc_request(pb::ListGroupsRequest { page }))
                    .await?
                    .into_inner();
                (ids(&answer.groups, |g| &g.group_id), answer.next_page_token)
            }
            Self::Enrollments(filter) => {
                let answer = admin
                    .list_enrollments(login.grpc_request(pb::ListEnrollmentsRequest {
                        page,
                        learner_ids: filter.learner_ids,
                        course_ids: filter.course_ids,
                        enrollment_ids: filter.enrollment_ids,
                    }))
                    .await?
                    .into_inner();
                let found = ids(&answer.enrollments, |e| &e.enrollment_id);
                (found, answer.next_page_token)
            }
            Self::ContentItems(filter) => {
                let answer = admin
                    .list_content_items(login.grpc_request(pb::ListContentItemsRequest {
                        page,
                        content_item_ids: filter.content_item_ids,
                        content_types: filter.content_types,
                    }))
                    .await?
                    .into_inner();
                let found = ids(&answer.content_items, |c| &c.content_item_id);
                (found, answer.next_page_token)
            }
            Self::Users(filter) => {
                let answer = admin
                    .list_users(login.grpc_request(pb::ListUsersRequest {
                        page,
                        department_ids: filter.department_ids,
                        group_ids: filter.group_ids,
                        logins: filter.logins,
                        emails: filter.emails,
                        numbered_page: None,
                    }))
                    .await?
                    .into_inner();
                (ids(&answer.users, |u| &u.user_id), answer.next_page_token)
            }
        })
    }

    /// Every id of the list, walked page by page of `size`.
    async fn walk(&self, admin: &Admin, login: Login, size: u64) -> Vec<String> {
        let mut found = Vec::new();
        let mut token = String::new();
        loop {
            let page = pb::PageRequest {
                page_size: Some(size),
                page_token: token,
            };
            let (ids, next) = self
                .list(admin, login, Some(page))
                .await
                .unwrap_or_else(|status| panic!("{self:?} page for {login:?}: {status:?}"));
            found.extend(ids);
            if next.is_empty() {
                return found;
            }
            token = next;
        }
    }

    /// The unpaged answer's ids.
    async fn whole(&self, admin: &Admin, login: Login) -> Result<Vec<String>, Status> {
        Ok(self.list(admin, login, None).await?.0)
    }
}

type Admin = AdminServiceClient<Channel>;

async fn admin(stack: &TestStack) -> Admin {
    AdminServiceClient::new(stack.grpc_channel().await)
}

fn ids<T>(rows: &[T], id: impl Fn(&T) -> &String) -> Vec<String> {
    rows.iter().map(|row| id(row).clone()).collect()
}

async fn collect<M>(
    messages: tonic::Streaming<M>,
    ids: impl Fn(M) -> Vec<String>,
) -> Result<Messages, Status> {
    messages.map_ok(ids).try_collect().await
}

fn sorted(ids: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
    ids.sort();
    ids
}

/// The stream of `list` for `login` holds the rows of its paged walk (pages of 2) and of
/// its unpaged answer, in that order, each once; returns them.
async fn assert_stream_is_the_walk(admin: &Admin, list: &List, login: Login) -> Vec<String> {
    let messages = list
        .stream(admin, login)
        .await
        .unwrap_or_else(|status| panic!("{list:?} stream for {login:?}: {status:?}"));
    assert!(
        messages.iter().all(|m| !m.is_empty()),
        "no empty message: {messages:?}"
    );
    let streamed = messages.concat();
    assert_eq!(streamed, list.walk(admin, login, 2).await, "{list:?}");
    assert_eq!(
        streamed,
        list.whole(admin, login).await.expect("the unpaged list"),
        "{list:?}"
    );
    streamed
}

async fn each_stream_returns_the_rows_of_the_paged_walk_and_the_unpaged_list_with_every_filter(
    stack: &TestStack,
) {
    let admin = admin(stack).await;
    for list in List::all() {
        let streamed = assert_stream_is_the_walk(&admin, &list, world::OWNER).await;
        assert!(!streamed.is_empty(), "{list:?}");
    }
    // Exactly the world's rows: the other account's never appear.
    let groups = assert_stream_is_the_walk(&admin, &List::Groups, world::OWNER).await;
    assert_eq!(
        groups,
        sorted(&[acme::INTERNS, acme::ALL_OF_SALES, acme::EMPTY_GROUP])
    );
    let globex_groups = assert_stream_is_the_walk(&admin, &List::Groups, world::GLOBEX_OWNER).await;
    assert_eq!(globex_groups, [globex::CREW]);

    let filtered = [
        (
            List::Enrollments(pb::StreamEnrollmentsRequest {
                learner_ids: vec![acme::LEARNER.into()],
                ..Default::default()
            }),
            sorted(&[acme::LEARNER_WELCOME, acme::LEARNER_SECRET]),
        ),
        (
            List::Enrollments(pb::StreamEnrollmentsRequest {
                learner_ids: vec![acme::LEARNER.into(), acme::SUPPORTER.into()],
                course_ids: vec![acme::WELCOME_COURSE.into()],
                ..Default::default()
            }),
            sorted(&[acme::LEARNER_WELCOME, acme::SUPPORTER_WELCOME]),
        ),
        (
            List::Enrollments(pb::StreamEnrollmentsRequest {
                enrollment_ids: vec![acme::ENGINEER_WELCOME.into(), globex::ENROLLMENT.into()],
                ..Default::default()
            }),
            sorted(&[acme::ENGINEER_WELCOME]),
        ),
        (
            List::ContentItems(pb::StreamContentItemsRequest {
                content_item_ids: vec![acme::SECRET_COURSE.into()],
                content_types: vec!["Course".into()],
            }),
            sorted(&[acme::SECRET_COURSE]),
        ),
        (
            List::ContentItems(pb::StreamContentItemsRequest {
                content_types: vec!["Video".into()],
                ..Default::default()
            }),
            Vec::new(),
        ),
        (
            List::Users(pb::StreamUsersRequest {
                department_ids: vec![acme::SALES.into()],
                ..Default::default()
            }),
            sorted(&[acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR]),
        ),
        (
            List::Users(pb::StreamUsersRequest {
                group_ids: vec![acme::INTERNS.into(), acme::ALL_OF_SALES.into()],
                department_ids: vec![acme::ROOT.into()],
                ..Default::default()
            }),
            sorted(&[
                acme::ENGINEER,
                acme::LEARNER,
                acme::DEPT_ADMIN,
                acme::COORDINATOR,
            ]),
        ),
        (
            List::Users(pb::StreamUsersRequest {
                logins: vec!["LEARNER@acme.example.com".into()],
                emails: vec!["learner@ACME.example.com".into()],
                ..Default::default()
            }),
            sorted(&[acme::LEARNER]),
        ),
    ];
    for (list, expected) in filtered {
        assert_eq!(
            assert_stream_is_the_walk(&admin, &list, world::OWNER).await,
            expected,
            "{list:?}"
        );
    }
}

async fn a_department_administrator_streams_its_scope(stack: &TestStack) {
    // The department administrator manages Sales (with Sales East below it).
    let admin = admin(stack).await;
    let cases = [
        (List::Departments, sorted(&[acme::SALES, acme::SALES_EAST])),
        (
            List::users(),
            sorted(&[acme::DEPT_ADMIN, acme::LEARNER, acme::COORDINATOR]),
        ),
        (
            List::enrollments(),
            sorted(&[acme::LEARNER_WELCOME, acme::LEARNER_SECRET]),
        ),
        // Groups belong to the account: it lists every one of them, as unpaged.
        (
            List::Groups,
            sorted(&[acme::INTERNS, acme::ALL_OF_SALES, acme::EMPTY_GROUP]),
        ),
    ];
    for (list, expected) in cases {
        assert_eq!(
            assert_stream_is_the_walk(&admin, &list, world::DEPT_ADMIN).await,
            expected,
            "{list:?}"
        );
    }
    // A filter narrows the scope; it never widens it.
    let engineering = List::Users(pb::StreamUsersRequest {
        department_ids: vec![acme::ENGINEERING.into()],
        ..Default::default()
    });
    assert_eq!(
        assert_stream_is_the_walk(&admin, &engineering, world::DEPT_ADMIN).await,
        Vec::<String>::new()
    );
}

async fn bad_filters_and_refused_roles_are_the_calls_status_before_any_message(stack: &TestStack) {
    let admin = admin(stack).await;
    let unknown = Uuid::now_v7().to_string();
    let cases = [
        (
            List::Enrollments(pb::StreamEnrollmentsRequest {
                learner_ids: vec!["not-a-uuid".into()],
                ..Default::default()
            }),
            world::OWNER,
            Code::InvalidArgument,
            "learnerIds",
        ),
        (
            List::Enrollments(pb::StreamEnrollmentsRequest {
                course_ids: vec![acme::WELCOME_COURSE.into(), "12".into()],
                ..Default::default()
            }),
            world::DEPT_ADMIN,
            Code::InvalidArgument,
            "courseIds",
        ),
        (
            List::ContentItems(pb::StreamContentItemsRequest {
                content_item_ids: vec!["x".into()],
                ..Default::default()
            }),
            world::OWNER,
            Code::InvalidArgument,
            "contentItemIds",
        ),
        (
            List::Users(pb::StreamUsersRequest {
                department_ids: vec!["sales".into()],
                ..Default::default()
            }),
            world::OWNER,
            Code::InvalidArgument,
            "departments",
        ),
        (
            List::Users(pb::StreamUsersRequest {
                department_ids: vec![unknown.clone()],
                ..Default::default()
            }),
            world::ADMIN,
            Code::InvalidArgument,
            &unknown,
        ),
        (
            List::Users(pb::StreamUsersRequest {
                group_ids: vec![globex::CREW.into()],
                ..Default::default()
            }),
            world::OWNER,
            Code::InvalidArgument,
            globex::CREW,
        ),
        // Permission before input: a refused caller learns nothing of the filter's rules.
        (
            List::Users(pb::StreamUsersRequest {
                department_ids: vec!["sales".into()],
                ..Default::default()
            }),
            world::LEARNER,
            Code::PermissionDenied,
            "permission",
        ),
        // An author pages users but may not read the whole list, streamed or not.
        (
            List::users(),
            world::AUTHOR,
            Code::PermissionDenied,
            "permission",
        ),
        (
            List::Groups,
            world::PUBLISHER,
            Code::PermissionDenied,
            "permission to read groups",
        ),
    ];
    let refused_learner =
        List::all().map(|list| (list, world::LEARNER, Code::PermissionDenied, "permission"));
    for (list, login, code, needle) in cases.into_iter().chain(refused_learner) {
        // The call itself fails: no message was sent before the status.
        let status = list
            .stream(&admin, login)
            .await
            .expect_err("the stream is refused");
        assert_eq!(status.code(), code, "{list:?} {login:?}: {status:?}");
        assert!(
            status.message().contains(needle),
            "{list:?} {login:?}: {status:?} should name {needle:?}"
        );
        // The same refusal as the unpaged list's.
        let unpaged = list
            .whole(&admin, login)
            .await
            .expect_err("the unpaged list is refused");
        assert_eq!(
            (unpaged.code(), unpaged.message()),
            (status.code(), status.message()),
            "{list:?} {login:?}"
        );
    }
}

/// Learners added to the world in a department "Bulk" under Sales: with the world's twelve
/// Acme users, the account holds one more than an unpaged list answers.
const BULK_USERS: usize = 10_001 - 12;
/// Groups, sub-departments of Bulk, content items and enrollments added: each list needs
/// two messages and ends with a short one.
const BULK_ROWS: usize = 1_200;

/// The world with an account of [`BULK_USERS`] more users (random ids) and [`BULK_ROWS`]
/// more groups, departments, content items and enrollments, imported in one transaction.
struct BulkAccount {
    stack: TestStack,
    /// The Bulk department.
    department: String,
    /// A bulk learner in no group and without enrollments.
    lone_learner: String,
}

impl Fixture for BulkAccount {
    async fn start(backend: Backend) -> Option<Self> {
        let department = Uuid::new_v4().to_string();
        let project = Uuid::new_v4().to_string();
        let fresh = |n: usize| (0..n).map(|_| Uuid::new_v4().to_string()).collect();
        let users: Vec<String> = fresh(BULK_USERS);
        let mut document = world::document();
        let mut departments = vec![json!({"id": department, "name": "Bulk",
                                          "parentDepartmentId": acme::SALES})];
        departments.extend((0..BULK_ROWS).map(|n| {
            json!({"id": Uuid::new_v4().to_string(), "name": format!("Team {n}"),
                   "parentDepartmentId": department})
        }));
        world::add_rows(&mut document, 0, "departments", departments);
        world::add_bulk_learners(&mut document, &users, &department);
        world::add_rows(
            &mut document,
            0,
            "groups",
            (0..BULK_ROWS)
                .map(|n| {
                    json!({"id": Uuid::new_v4().to_string(), "name": format!("Group {n}"),
                           "userIds": [users[n]]})
                })
                .collect(),
        );
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
            (0..BULK_ROWS)
                .map(|n| {
                    json!({"id": Uuid::new_v4().to_string(), "projectId": project,
                           "title": format!("Course {n}"), "description": "",
                           "userId": acme::OWNER, "addedDate": "2024-01-02T03:04:05+00:00",
                           "type": "Course"})
                })
                .collect(),
        );
        world::add_rows(
            &mut document,
            0,
            "enrollments",
            users[..BULK_ROWS]
                .iter()
                .map(|learner| {
                    json!({"id": Uuid::new_v4().to_string(), "learnerId": learner,
                           "contentItemId": acme::WELCOME_COURSE})
                })
                .collect(),
        );
        let lone_learner = users.last().expect("bulk users").clone();
        let stack = world::stack_holding(backend, document).await?;
        Some(Self {
            stack,
            department,
            lone_learner,
        })
    }

    async fn stop(self) {
        self.stack.stop().await;
    }
}

async fn long_lists_stream_in_messages_of_at_most_a_thousand_rows_in_the_paged_walks_order(
    bulk: &BulkAccount,
) {
    let admin = admin(&bulk.stack).await;
    let in_bulk = List::Users(pb::StreamUsersRequest {
        department_ids: vec![bulk.department.clone()],
        ..Default::default()
    });
    // (list, caller, rows expected)
    let cases = [
        (List::users(), world::OWNER, 10_001),
        (in_bulk, world::OWNER, BULK_USERS),
        // Sales holds three of the world's users and the Bulk department.
        (List::users(), world::DEPT_ADMIN, BULK_USERS + 3),
        (List::Groups, world::OWNER, BULK_ROWS + 3),
        (List::Departments, world::OWNER, BULK_ROWS + 6),
        (List::Departments, world::DEPT_ADMIN, BULK_ROWS + 3),
        (List::content_items(), world::OWNER, BULK_ROWS + 2),
        (List::enrollments(), world::OWNER, BULK_ROWS + 4),
        (List::enrollments(), world::DEPT_ADMIN, BULK_ROWS + 2),
    ];
    for (list, login, rows) in cases {
        let messages = list.stream(&admin, login).await.expect("the stream");
        let sizes: Vec<usize> = messages.iter().map(Vec::len).collect();
        let (last, full) = sizes.split_last().expect("some messages");
        assert!(
            full.iter().all(|size| *size == 1_000) && (1..=1_000).contains(last),
            "{list:?} {login:?}: messages of {sizes:?}"
        );
        let streamed = messages.concat();
        assert_eq!(streamed.len(), rows, "{list:?} {login:?}");
        assert!(
            streamed.windows(2).all(|w| w[0] < w[1]),
            "{list:?} {login:?}: strictly ascending"
        );
        assert_eq!(
            streamed,
            list.walk(&admin, login, 10_000).await,
            "{list:?} {login:?}"
        );
    }
}

async fn an_unpaged_list_of_more_than_ten_thousand_rows_is_refused_naming_the_stream_and_pages(
    bulk: &BulkAccount,
) {
    let admin = admin(&bulk.stack).await;
    let refusal = "The list has more than 10,000 users: read them with StreamUsers or by pages \
         (page_size/page_token).";
    let whole_account = List::Users(pb::StreamUsersRequest {
        department_ids: vec![acme::ROOT.into()],
        ..Default::default()
    });
    for list in [List::users(), whole_account] {
        let status = list
            .whole(&admin, world::OWNER)
            .await
            .expect_err("more than 10,000 users");
        assert_eq!(
            (status.code(), status.message()),
            (Code::FailedPrecondition, refusal),
            "{list:?}"
        );
    }
    // Lists below the limit still answer whole.
    let scoped = List::users()
        .whole(&admin, world::DEPT_ADMIN)
        .await
        .expect("the scope holds fewer than 10,000");
    assert_eq!(scoped.len(), BULK_USERS + 3);
    let groups = List::Groups
        .whole(&admin, world::OWNER)
        .await
        .expect("groups");
    assert_eq!(groups.len(), BULK_ROWS + 3);

    // Exactly 10,000 are answered: one user fewer.
    let streamed = List::users()
        .stream(&admin, world::OWNER)
        .await
        .expect("the stream")
        .concat();
    let bulk_user = bulk.lone_learner.clone();
    admin
        .clone()
        .delete_user(world::OWNER.grpc_request(pb::DeleteUserRequest {
            user_id: bulk_user.clone(),
        }))
        .await
        .expect("the owner deletes a bulk learner");
    let whole = List::users()
        .whole(&admin, world::OWNER)
        .await
        .expect("exactly 10,000 users answer whole");
    assert_eq!(whole.len(), 10_000);
    let expected: Vec<String> = streamed.into_iter().filter(|id| *id != bulk_user).collect();
    assert_eq!(whole, expected);
}

async fn a_database_failure_midway_ends_the_stream_with_its_status(bulk: &BulkAccount) {
    let stack = &bulk.stack;
    let mut admin = admin(stack).await;
    let mut messages = admin
        .stream_users(world::OWNER.grpc_request(pb::StreamUsersRequest::default()))
        .await
        .expect("the stream starts")
        .into_inner();
    let first = messages
        .message()
        .await
        .expect("a first message")
        .expect("not the end");
    assert_eq!(first.users.len(), 1_000);
    // The users' table goes away under the open stream: the chunks not read yet fail.
    stack
        .db()
        .execute_unprepared("ALTER TABLE users RENAME TO users_away")
        .await
        .expect("rename");
    let mut received = first.users.len();
    let status = loop {
        match messages.message().await {
            Ok(Some(message)) => received += message.users.len(),
            Ok(None) => panic!("the stream ended cleanly after {received} users"),
            Err(status) => break status,
        }
    };
    assert_eq!(status.code(), Code::Internal, "{status:?}");
    assert_eq!(status.message(), "Internal error.");
    // The core had not read the list ahead: most of it was still to come.
    assert!(
        received < 10_001 / 2,
        "{received} users arrived before the failure"
    );
    stack
        .db()
        .execute_unprepared("ALTER TABLE users_away RENAME TO users")
        .await
        .expect("rename back");
}
