//! Every statement of the learner results (results.md section 11) is served by an index:
//! played over `lms.v1` against a populated, analysed database (a generated account of 20,000
//! users and 200,000 results beside smaller accounts), no statement may read `users`,
//! `enrollments`, `learner_results` or `department_closure` whole, or sort them, on either
//! backend. The lists are walked far in, with each filter, as the owner and as scoped
//! callers; the writes record, set and reset 2,000 results at once.
//!
//! Its own test binary: the statement recorder is this process's `tracing` subscriber.

use futures::TryStreamExt as _;
use lms_proto::{
    metadata::{ACCOUNT_URL, EMAIL, PASSWORD},
    v1::{
        self as pb, admin_service_client::AdminServiceClient,
        directory_service_client::DirectoryServiceClient,
    },
};
use lms_tests::{
    Backend,
    large_world::{RoleLogin, WORLD_PASSWORD, WorldShape},
    query_plan::{self, BadPlan},
    rows,
};
use tonic::{Request, transport::Channel};

const USERS: usize = 20_000;
const DEPARTMENTS: usize = 2_000;
const NEIGHBOURS: u16 = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_every_results_statement_is_served_by_an_index() {
    every_statement_is_served_by_an_index(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_every_results_statement_is_served_by_an_index() {
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
    let role = shape.ids().custom_role().to_string();
    rows::grant(&stack, &role, "results.read").await;
    rows::grant(&stack, &role, "results.write").await;
    let channel = stack.grpc_channel().await;
    // Results in several statuses before the reads are played.
    record(&channel, &shape, RoleLogin::Owner, 0..2_000, "passed").await;
    record(
        &channel,
        &shape,
        RoleLogin::Owner,
        2_000..2_300,
        "in_progress",
    )
    .await;

    let statements = query_plan::record(async {
        play_the_lists(&channel, &shape).await;
        play_the_writes(&channel, &shape).await;
    })
    .await;
    for fragment in [
        "\"learner_results\"",
        "\"effective_status\" =",
        "\"learner_id\" =",
        "\"content_item_id\" =",
        "\"effective_completed_at\" >=",
        "\"due_at\" >=",
        "\"access_at\" >=",
        "\"result_tasks\"",
        // Rows read joined to their enrollment, learner and item; changed rows updated in place.
        "JOIN \"content_items\"",
        "UPDATE \"learner_results\" SET",
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
    learners_are_read_from_their_narrow_index(&stack, backend, &statements).await;
    stack.stop().await;
}

/// The learner of every results row is read from `users (id)` with the three columns the
/// lists use (migration 30), never from the wide table row: on SQLite as a covering index,
/// on PostgreSQL as an index-only scan once `VACUUM` has marked the table's pages
/// all-visible (autovacuum's work on a server that runs it; run here by hand).
async fn learners_are_read_from_their_narrow_index(
    stack: &lms_tests::TestStack,
    backend: Backend,
    statements: &std::collections::BTreeSet<String>,
) {
    use sea_orm::ConnectionTrait as _;
    const INDEX: &str = "idx_users_id_department_id_active_employment_ended";
    let expected = match backend {
        Backend::Sqlite => format!("COVERING INDEX {INDEX}"),
        Backend::Postgres => {
            stack
                .db()
                .execute_unprepared("VACUUM \"users\"")
                .await
                .expect("VACUUM users");
            format!("Index Only Scan using {INDEX}")
        }
    };
    let joined: Vec<&String> = statements
        .iter()
        .filter(|s| s.contains("FROM \"learner_results\"") && s.contains("JOIN \"users\""))
        .collect();
    assert!(
        !joined.is_empty(),
        "no results row was read joined to its learner"
    );
    for statement in joined {
        let plan = query_plan::explain(stack.db(), statement).await;
        assert!(
            plan.contains(&expected),
            "the learners of {statement}\nare not read by {expected}:\n{plan}"
        );
    }
}

fn request<T>(shape: &WorldShape, login: RoleLogin, message: T) -> Request<T> {
    let mut request = Request::new(message);
    let metadata = request.metadata_mut();
    metadata.insert(ACCOUNT_URL, shape.account_url.parse().expect("ascii"));
    metadata.insert(EMAIL, login.email().parse().expect("ascii"));
    metadata.insert(PASSWORD, WORLD_PASSWORD.parse().expect("ascii"));
    request
}

/// The first enrollment of learners `users` (skipping the role logins), recorded as `status`.
async fn record(
    channel: &Channel,
    shape: &WorldShape,
    login: RoleLogin,
    users: std::ops::Range<usize>,
    status: &str,
) {
    let ids = shape.ids();
    let finished = status == "passed";
    let results = users
        .map(|user| pb::ResultRecord {
            enrollment_id: ids.enrollment(user + RoleLogin::ALL.len(), 0).to_string(),
            completion_status: status.to_owned(),
            progress: if finished { 100 } else { 50 },
            completion_date: finished.then(|| "2025-02-01T12:30:00+00:00".to_owned()),
            ..Default::default()
        })
        .collect();
    DirectoryServiceClient::new(channel.clone())
        .record_results(request(shape, login, pb::RecordResultsRequest { results }))
        .await
        .expect("recorded");
}

/// Walks `pages` pages of the course results as `login`.
async fn walk(
    channel: &Channel,
    shape: &WorldShape,
    login: RoleLogin,
    filter: pb::ListLearnerResultsRequest,
    size: u64,
    pages: usize,
) {
    let mut admin = AdminServiceClient::new(channel.clone());
    let mut token = String::new();
    for _ in 0..pages {
        let page = admin
            .list_learner_results(request(
                shape,
                login,
                pb::ListLearnerResultsRequest {
                    page: Some(pb::PageRequest {
                        page_size: Some(size),
                        page_token: token.clone(),
                    }),
                    ..filter.clone()
                },
            ))
            .await
            .expect("a page")
            .into_inner();
        if page.next_page_token.is_empty() {
            return;
        }
        token = page.next_page_token;
    }
}

/// The first user, from `from` on, who works in the scoped logins' subtree.
fn in_scope(shape: &WorldShape, from: usize) -> usize {
    (from..shape.users)
        .find(|&user| WorldShape::works_in_smart_subtree(user))
        .expect("the smart subtree has users")
}

async fn play_the_lists(channel: &Channel, shape: &WorldShape) {
    let ids = shape.ids();
    let window = |start: &str, end: &str| {
        Some(pb::DateWindow {
            start_date: Some(start.to_owned()),
            end_date: Some(end.to_owned()),
        })
    };
    let day = |days: i64| {
        (chrono::Utc::now() + chrono::TimeDelta::days(days))
            .format("%Y-%m-%d")
            .to_string()
    };
    let (yesterday, tomorrow) = (day(-1), day(1));
    let filters = [
        pb::ListLearnerResultsRequest::default(),
        pb::ListLearnerResultsRequest {
            completion_statuses: vec!["passed".into(), "in_progress".into()],
            ..Default::default()
        },
        pb::ListLearnerResultsRequest {
            user_ids: vec![
                ids.user(in_scope(shape, 100)).to_string(),
                ids.user(in_scope(shape, 200)).to_string(),
            ],
            ..Default::default()
        },
        pb::ListLearnerResultsRequest {
            course_ids: vec![ids.content_item(3).to_string()],
            ..Default::default()
        },
        pb::ListLearnerResultsRequest {
            department_ids: vec![ids.department(DEPARTMENTS - 1).to_string()],
            ..Default::default()
        },
        pb::ListLearnerResultsRequest {
            department_ids: vec![ids.department(0).to_string()],
            user_statuses: vec![1, 3, 5],
            ..Default::default()
        },
        pb::ListLearnerResultsRequest {
            enrollment_ids: vec![
                ids.enrollment(in_scope(shape, 300), 0).to_string(),
                ids.enrollment(in_scope(shape, 400), 1).to_string(),
            ],
            ..Default::default()
        },
        // Narrow windows, read on their own indexes: the 2,000 results completed today, and
        // windows no row falls in.
        pb::ListLearnerResultsRequest {
            completion_date: window(&yesterday, &tomorrow),
            ..Default::default()
        },
        pb::ListLearnerResultsRequest {
            due_date: window("1999-01-01", "1999-01-02"),
            ..Default::default()
        },
        pb::ListLearnerResultsRequest {
            access_date: window("1999-01-01", "1999-01-02"),
            ..Default::default()
        },
        pb::ListLearnerResultsRequest {
            completion_date: window("2025-01-01", "2025-12-31"),
            access_date: window("2000-01-01", "2100-01-01"),
            due_date: window("2000-01-01", "2100-01-01"),
            ..Default::default()
        },
    ];
    for login in [
        RoleLogin::Owner,
        RoleLogin::DepartmentAdministrator,
        RoleLogin::Coordinator,
    ] {
        for filter in &filters {
            walk(channel, shape, login, filter.clone(), 10, 4).await;
        }
        walk(
            channel,
            shape,
            login,
            pb::ListLearnerResultsRequest::default(),
            2_000,
            2,
        )
        .await;
        let mut admin = AdminServiceClient::new(channel.clone());
        admin
            .list_learner_module_results(request(
                shape,
                login,
                pb::ListLearnerModuleResultsRequest {
                    module_ids: vec![ids.content_item(7).to_string()],
                    ..Default::default()
                },
            ))
            .await
            .expect("module results");
        let stream = admin
            .get_content_item_final_statuses(request(
                shape,
                login,
                pb::GetContentItemFinalStatusesRequest {
                    content_item_id: ids.content_item(5).to_string(),
                },
            ))
            .await
            .expect("final statuses")
            .into_inner();
        let _: Vec<pb::GetContentItemFinalStatusesResponse> =
            stream.try_collect().await.expect("streamed");
    }
}

async fn play_the_writes(channel: &Channel, shape: &WorldShape) {
    let ids = shape.ids();
    record(
        channel,
        shape,
        RoleLogin::Owner,
        3_000..5_000,
        "in_progress",
    )
    .await;
    // Learners past those recorded above: a finished result is never undone.
    let scoped: Vec<usize> = (0..shape.users)
        .filter(|user| *user >= 5_100 && WorldShape::works_in_smart_subtree(*user))
        .take(200)
        .collect();
    let results = scoped
        .iter()
        .map(|user| pb::ResultRecord {
            enrollment_id: ids.enrollment(*user, 0).to_string(),
            completion_status: "pending".to_owned(),
            ..Default::default()
        })
        .collect();
    DirectoryServiceClient::new(channel.clone())
        .record_results(request(
            shape,
            RoleLogin::Coordinator,
            pb::RecordResultsRequest { results },
        ))
        .await
        .expect("recorded in scope");
    // Every learner's first enrollment is in item `(user * 7) % 100`: learner 10's item.
    let course = 70;
    let in_course: Vec<String> = (RoleLogin::ALL.len()..shape.users)
        .filter(|user| user * 7 % 100 == course)
        .take(2_000)
        .map(|user| ids.enrollment(user, 0).to_string())
        .collect();
    let mut admin = AdminServiceClient::new(channel.clone());
    let task_id = admin
        .update_course_status(request(
            shape,
            RoleLogin::Owner,
            pb::UpdateCourseStatusRequest {
                course_id: ids.content_item(course).to_string(),
                enrollment_ids: in_course.clone(),
                status: "passed".to_owned(),
                date: Some("2025-12-31".to_owned()),
                awarded_score: Some(80.0),
                reason: None,
            },
        ))
        .await
        .expect("status set")
        .into_inner()
        .task_id;
    admin
        .reset_module_statistics(request(
            shape,
            RoleLogin::Owner,
            pb::ResetModuleStatisticsRequest {
                course_id: ids.content_item(course).to_string(),
                enrollment_ids: in_course,
                content_item_ids: vec![],
            },
        ))
        .await
        .expect("reset");
    admin
        .get_task_status(request(
            shape,
            RoleLogin::Owner,
            pb::GetTaskStatusRequest { task_id },
        ))
        .await
        .expect("task status");
}
