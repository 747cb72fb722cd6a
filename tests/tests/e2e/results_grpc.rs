//! Learner results over `lms.v1` (results.md): the lists, a content item's final statuses,
//! an administrator's status, resets, tracked recordings and tasks, called on the real core
//! over gRPC, on both backends. Every refusal is checked for its code, the field or
//! parameter its message names, and that it changed nothing.

use std::collections::BTreeSet;

use futures::TryStreamExt as _;
use lms_core::entities::audit_log;
use lms_proto::{
    metadata::REQUEST_ID,
    v1::{
        self as pb, admin_service_client::AdminServiceClient,
        directory_service_client::DirectoryServiceClient,
    },
};
use lms_tests::{
    TestStack, on_both_backends, rows,
    world::{self, Login, acme, globex},
};
use sea_orm::{ColumnTrait as _, EntityTrait as _, QueryFilter as _};
use tonic::{Code, Status, transport::Channel};

on_both_backends!(
    every_enrollment_has_an_untouched_result_from_its_creation_to_its_deletion,
    recorded_results_read_back_and_a_repeated_recording_changes_nothing,
    a_recording_refused_for_any_record_names_it_and_changes_nothing,
    a_finished_tracked_result_is_never_undone_but_a_reset_starts_it_over,
    an_administrators_status_shows_until_it_is_set_back_to_automatic,
    a_status_update_is_refused_in_the_documented_order_and_changes_nothing,
    a_reset_names_only_the_items_own_module_and_leaves_untouched_results_unaudited,
    every_filter_selects_its_rows_and_a_bad_one_is_named,
    pages_hold_every_row_once_and_tokens_belong_to_their_own_listing,
    scoped_callers_and_custom_roles_meet_the_results_permissions,
    tasks_are_read_by_their_starter_and_the_accounts_administrators_only,
    a_recording_removes_its_accounts_tasks_past_their_thirty_days,
    final_statuses_stream_the_active_learners_of_one_item,
    imported_results_read_back_and_a_bad_entry_is_named_with_its_field,
    a_page_walk_while_results_are_recorded_returns_every_row_exactly_once,
);

fn admin(channel: &Channel) -> AdminServiceClient<Channel> {
    AdminServiceClient::new(channel.clone())
}

fn directory(channel: &Channel) -> DirectoryServiceClient<Channel> {
    DirectoryServiceClient::new(channel.clone())
}

/// `code`, and a message containing `needle`.
#[track_caller]
fn assert_refused<T: std::fmt::Debug>(outcome: Result<T, Status>, code: Code, needle: &str) {
    let status = outcome.expect_err("the call is refused");
    assert_eq!(status.code(), code, "{}", status.message());
    assert!(
        status.message().contains(needle),
        "{:?} does not mention {needle:?}",
        status.message()
    );
}

fn results_request() -> pb::ListLearnerResultsRequest {
    pb::ListLearnerResultsRequest::default()
}

/// One page of the course results as `login`.
async fn list(
    channel: &Channel,
    login: Login,
    request: pb::ListLearnerResultsRequest,
) -> Result<pb::ListLearnerResultsResponse, Status> {
    admin(channel)
        .list_learner_results(login.grpc_request(request))
        .await
        .map(tonic::Response::into_inner)
}

/// Every page of the course results as `login`, walked at `size` rows.
async fn walk(
    channel: &Channel,
    login: Login,
    request: pb::ListLearnerResultsRequest,
    size: u64,
) -> Vec<pb::LearnerResult> {
    let mut rows = Vec::new();
    let mut token = String::new();
    loop {
        let page = list(
            channel,
            login,
            pb::ListLearnerResultsRequest {
                page: Some(pb::PageRequest {
                    page_size: Some(size),
                    page_token: token.clone(),
                }),
                ..request.clone()
            },
        )
        .await
        .expect("a page");
        let next = page.next_page_token;
        if !next.is_empty() {
            assert_eq!(
                page.results.len() as u64,
                size,
                "a page before the last is full"
            );
        }
        rows.extend(page.results);
        if next.is_empty() {
            return rows;
        }
        token = next;
    }
}

fn enrollment_ids(rows: &[pb::LearnerResult]) -> Vec<&str> {
    rows.iter().map(|row| row.enrollment_id.as_str()).collect()
}

/// The row of `enrollment` as the owner reads it.
async fn result_of(channel: &Channel, enrollment: &str) -> pb::LearnerResult {
    let page = list(
        channel,
        world::OWNER,
        pb::ListLearnerResultsRequest {
            enrollment_ids: vec![enrollment.to_owned()],
            user_statuses: vec![1, 3, 5],
            ..results_request()
        },
    )
    .await
    .expect("the owner lists results");
    assert_eq!(page.results.len(), 1, "{enrollment}");
    page.results.into_iter().next().expect("one row")
}

fn record(enrollment: &str, status: &str) -> pb::ResultRecord {
    pb::ResultRecord {
        enrollment_id: enrollment.to_owned(),
        completion_status: status.to_owned(),
        ..Default::default()
    }
}

fn finished(enrollment: &str, status: &str, date: &str) -> pb::ResultRecord {
    pb::ResultRecord {
        progress: 100,
        completion_date: Some(date.to_owned()),
        last_view_date: Some(date.to_owned()),
        time_spent: 5400,
        views_count: 4,
        ..record(enrollment, status)
    }
}

async fn record_as(
    channel: &Channel,
    login: Login,
    request_id: &str,
    results: Vec<pb::ResultRecord>,
) -> Result<u32, Status> {
    let mut request = login.grpc_request(pb::RecordResultsRequest { results });
    request
        .metadata_mut()
        .insert(REQUEST_ID, request_id.parse().expect("ascii"));
    directory(channel)
        .record_results(request)
        .await
        .map(|answer| answer.into_inner().changed)
}

fn course_status(
    course: &str,
    enrollments: &[&str],
    status: &str,
    date: Option<&str>,
) -> pb::UpdateCourseStatusRequest {
    pb::UpdateCourseStatusRequest {
        course_id: course.to_owned(),
        enrollment_ids: enrollments.iter().map(|id| (*id).to_owned()).collect(),
        status: status.to_owned(),
        date: date.map(str::to_owned),
        ..Default::default()
    }
}

async fn set_status(
    channel: &Channel,
    login: Login,
    request_id: &str,
    update: pb::UpdateCourseStatusRequest,
) -> Result<u64, Status> {
    let mut request = login.grpc_request(update);
    request
        .metadata_mut()
        .insert(REQUEST_ID, request_id.parse().expect("ascii"));
    admin(channel)
        .update_course_status(request)
        .await
        .map(|answer| answer.into_inner().task_id)
}

async fn reset(
    channel: &Channel,
    login: Login,
    request_id: &str,
    course: &str,
    enrollments: &[&str],
    modules: &[&str],
) -> Result<u64, Status> {
    let mut request = login.grpc_request(pb::ResetModuleStatisticsRequest {
        course_id: course.to_owned(),
        enrollment_ids: enrollments.iter().map(|id| (*id).to_owned()).collect(),
        content_item_ids: modules.iter().map(|id| (*id).to_owned()).collect(),
    });
    request
        .metadata_mut()
        .insert(REQUEST_ID, request_id.parse().expect("ascii"));
    admin(channel)
        .reset_module_statistics(request)
        .await
        .map(|answer| answer.into_inner().task_id)
}

async fn task_status(channel: &Channel, login: Login, task_id: u64) -> Result<String, Status> {
    admin(channel)
        .get_task_status(login.grpc_request(pb::GetTaskStatusRequest { task_id }))
        .await
        .map(|answer| answer.into_inner().status)
}

/// The (action, entity id) of each audit row written under `request_id`.
async fn audited(stack: &TestStack, request_id: &str) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = rows::audit_rows(stack, request_id)
        .await
        .into_iter()
        .map(|row| (row.action, row.entity_id.to_string()))
        .collect();
    rows.sort();
    rows
}

async fn change_user_status(channel: &Channel, user: &str, status: u32) {
    admin(channel)
        .change_user_status(world::OWNER.grpc_request(pb::ChangeUserStatusRequest {
            user_id: user.to_owned(),
            status,
        }))
        .await
        .expect("the owner changes a status");
}

/// A custom-role user with `results.read` and `results.write`, managing Sales.
async fn results_coordinator(stack: &TestStack, write: bool) -> Login {
    rows::grant(stack, acme::COORDINATOR_ROLE, "results.read").await;
    if write {
        rows::grant(stack, acme::COORDINATOR_ROLE, "results.write").await;
    }
    stack.forget_remembered_callers();
    world::COORDINATOR
}

const DAY: &str = "2025-02-01T12:30:00+00:00";

async fn every_enrollment_has_an_untouched_result_from_its_creation_to_its_deletion(
    stack: &TestStack,
) {
    let channel = stack.grpc_channel().await;
    let rows = walk(&channel, world::OWNER, results_request(), 1000).await;
    assert_eq!(
        enrollment_ids(&rows),
        [
            acme::LEARNER_WELCOME,
            acme::ENGINEER_WELCOME,
            acme::LEARNER_SECRET,
            acme::SUPPORTER_WELCOME
        ],
        "every enrollment of the account, none of another's, ascending"
    );
    let first = &rows[0];
    assert_eq!(first.user_id, acme::LEARNER);
    assert_eq!(first.course_id, acme::WELCOME_COURSE);
    assert_eq!(first.course_title, "Welcome to Acme");
    assert_eq!(first.completion_status, "not_started");
    assert_eq!(
        (first.progress, first.time_spent, first.views_count),
        (0, 0, 0)
    );
    assert_eq!((first.awarded_score, first.passing_score), (0.0, 0.0));
    assert_eq!(first.completion_date, None);
    assert_eq!(first.last_view_date, None);
    assert_eq!(first.due_date, None);
    assert!(!first.is_overdue);
    assert!(
        first.access_date.ends_with("+00:00") && first.access_date.len() == 25,
        "{}",
        first.access_date
    );

    // Enrolled with a past due date that locks: overdue, and the due date expires it.
    admin(&channel)
        .enroll_learners(world::OWNER.grpc_request(pb::EnrollLearnersRequest {
            course_ids: vec![acme::SECRET_COURSE.to_owned()],
            learner_ids: vec![acme::ENGINEER.to_owned()],
            access_date: Some("2024-01-10 09:00:00".to_owned()),
            due_date_type: Some("due_date".to_owned()),
            due_date: Some("2024-02-10T00:00:00Z".to_owned()),
            due_period: None,
            lock_after_due_date: Some(true),
        }))
        .await
        .expect("enrolled");
    let page = list(
        &channel,
        world::OWNER,
        pb::ListLearnerResultsRequest {
            user_ids: vec![acme::ENGINEER.to_owned()],
            course_ids: vec![acme::SECRET_COURSE.to_owned()],
            ..results_request()
        },
    )
    .await
    .expect("listed");
    let [new] = page.results.as_slice() else {
        panic!("one new result: {page:?}");
    };
    assert_eq!(new.completion_status, "not_started");
    assert_eq!(new.access_date, "2024-01-10T09:00:00+00:00");
    assert_eq!(new.due_date.as_deref(), Some("2024-02-10T00:00:00+00:00"));
    assert_eq!(
        new.expiration_date.as_deref(),
        Some("2024-02-10T00:00:00+00:00")
    );
    assert!(new.is_overdue, "unfinished after its due date");

    // Deleting the enrollment deletes its result, with no audit row of its own.
    let mut request = world::OWNER.grpc_request(pb::DeleteEnrollmentsRequest {
        enrollment_ids: vec![new.enrollment_id.clone()],
    });
    request
        .metadata_mut()
        .insert(REQUEST_ID, "delete-one".parse().expect("ascii"));
    admin(&channel)
        .delete_enrollments(request)
        .await
        .expect("deleted");
    assert_eq!(
        audited(stack, "delete-one").await,
        [("enrollment.delete".to_owned(), new.enrollment_id.clone())]
    );
    let rows = walk(&channel, world::OWNER, results_request(), 1000).await;
    assert_eq!(rows.len(), 4);
    let left = lms_core::entities::learner_result::Entity::find()
        .filter(
            lms_core::entities::learner_result::Column::EnrollmentId
                .eq(world::uuid(&new.enrollment_id)),
        )
        .one(stack.db())
        .await
        .expect("read");
    assert!(left.is_none(), "the result went with its enrollment");
}

async fn recorded_results_read_back_and_a_repeated_recording_changes_nothing(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    let records = vec![
        pb::ResultRecord {
            awarded_score: 92.5,
            passing_score: 80.0,
            ..finished(acme::LEARNER_WELCOME, "passed", "2025-02-01T14:30:00+02:00")
        },
        pb::ResultRecord {
            progress: 40,
            awarded_score: 83.335,
            time_spent: 60,
            views_count: 1,
            last_view_date: Some(DAY.to_owned()),
            ..record(acme::ENGINEER_WELCOME, "in_progress")
        },
    ];
    let changed = record_as(&channel, world::OWNER, "record-1", records.clone())
        .await
        .expect("recorded");
    assert_eq!(changed, 2);
    let passed = result_of(&channel, acme::LEARNER_WELCOME).await;
    assert_eq!(passed.completion_status, "passed");
    assert_eq!(
        passed.completion_date.as_deref(),
        Some("2025-02-01T12:30:00+00:00")
    );
    assert_eq!(passed.last_view_date.as_deref(), Some(DAY));
    assert_eq!(
        (passed.progress, passed.time_spent, passed.views_count),
        (100, 5400, 4)
    );
    assert_eq!((passed.awarded_score, passed.passing_score), (92.5, 80.0));
    let started = result_of(&channel, acme::ENGINEER_WELCOME).await;
    assert_eq!(started.completion_status, "in_progress");
    assert_eq!(started.awarded_score, 83.34, "rounded half away from zero");
    assert_eq!(started.completion_date, None);
    assert_eq!(
        audited(stack, "record-1").await,
        [
            ("result.record".to_owned(), acme::LEARNER_WELCOME.to_owned()),
            (
                "result.record".to_owned(),
                acme::ENGINEER_WELCOME.to_owned()
            ),
        ]
    );
    let row = audit_log::Entity::find()
        .filter(audit_log::Column::RequestId.eq("record-1"))
        .filter(audit_log::Column::EntityId.eq(world::uuid(acme::LEARNER_WELCOME)))
        .one(stack.db())
        .await
        .expect("read")
        .expect("the row");
    assert_eq!(row.entity_type, "result");
    assert_eq!(row.actor_user_id, Some(world::uuid(acme::OWNER)));
    let before: serde_json::Value =
        serde_json::from_str(row.before.as_deref().expect("before")).expect("json");
    let after: serde_json::Value =
        serde_json::from_str(row.after.as_deref().expect("after")).expect("json");
    assert_eq!(before["completionStatus"], "not_started");
    assert_eq!(after["completionStatus"], "passed");
    assert_eq!(after["awardedScore"], 92.5);
    assert_eq!(after["administratorStatus"], serde_json::Value::Null);

    let snapshot = stack.snapshot().await;
    let changed = record_as(&channel, world::OWNER, "record-2", records)
        .await
        .expect("recorded again");
    assert_eq!(changed, 0, "the same results change nothing");
    assert!(audited(stack, "record-2").await.is_empty());
    assert_eq!(
        stack.snapshot_without_revision().await,
        lms_tests::snapshot::without_revision(&snapshot)
    );
}

async fn a_recording_refused_for_any_record_names_it_and_changes_nothing(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    let snapshot = stack.snapshot().await;
    let good = record(acme::LEARNER_WELCOME, "in_progress");
    let cases: Vec<(Vec<pb::ResultRecord>, Code, &str)> = vec![
        (
            vec![],
            Code::InvalidArgument,
            "results must hold from 1 to 10000",
        ),
        (
            vec![
                good.clone(),
                pb::ResultRecord {
                    progress: 101,
                    ..record(acme::ENGINEER_WELCOME, "in_progress")
                },
            ],
            Code::InvalidArgument,
            "results[1].progress",
        ),
        (
            vec![pb::ResultRecord {
                awarded_score: 100.01,
                ..good.clone()
            }],
            Code::InvalidArgument,
            "results[0].awarded_score",
        ),
        (
            vec![record(acme::LEARNER_WELCOME, "done")],
            Code::InvalidArgument,
            "results[0].completion_status",
        ),
        (
            vec![record(acme::LEARNER_WELCOME, "passed")],
            Code::InvalidArgument,
            "results[0].completion_date is required",
        ),
        (
            vec![pb::ResultRecord {
                completion_date: Some(DAY.to_owned()),
                ..good.clone()
            }],
            Code::InvalidArgument,
            "results[0].completion_date must not be given",
        ),
        (
            vec![pb::ResultRecord {
                last_view_date: Some(DAY.to_owned()),
                ..record(acme::LEARNER_WELCOME, "not_started")
            }],
            Code::InvalidArgument,
            "results[0].last_view_date",
        ),
        (
            vec![pb::ResultRecord {
                last_view_date: Some("yesterday".to_owned()),
                ..good.clone()
            }],
            Code::InvalidArgument,
            "results[0].last_view_date 'yesterday'",
        ),
        (
            vec![good.clone(), good.clone()],
            Code::InvalidArgument,
            "recorded twice, by results[0] and results[1]",
        ),
        (
            vec![record("not-an-id", "in_progress")],
            Code::InvalidArgument,
            "results[0].enrollment_id 'not-an-id'",
        ),
        (
            vec![good.clone(), record(globex::ENROLLMENT, "in_progress")],
            Code::InvalidArgument,
            "results[1].enrollment_id",
        ),
        (
            vec![record(
                "0191a000-0000-7000-8000-00000000ffff",
                "in_progress",
            )],
            Code::InvalidArgument,
            "does not name an enrollment of this account",
        ),
    ];
    for (records, code, needle) in cases {
        assert_refused(
            record_as(&channel, world::OWNER, "refused", records).await,
            code,
            needle,
        );
    }
    // The ranges of the stored integers.
    assert_refused(
        record_as(
            &channel,
            world::OWNER,
            "refused",
            vec![pb::ResultRecord {
                time_spent: u64::MAX,
                ..good.clone()
            }],
        )
        .await,
        Code::InvalidArgument,
        "results[0].time_spent",
    );
    for login in [
        world::LEARNER,
        world::PUBLISHER,
        world::AUTHOR,
        world::VIEWER,
    ] {
        assert_refused(
            record_as(&channel, login, "refused", vec![good.clone()]).await,
            Code::PermissionDenied,
            "record learner results",
        );
    }
    // A department administrator of Sales: the engineer is outside its scope.
    assert_refused(
        record_as(
            &channel,
            world::DEPT_ADMIN,
            "refused",
            vec![good.clone(), record(acme::ENGINEER_WELCOME, "in_progress")],
        )
        .await,
        Code::PermissionDenied,
        "outside the departments you manage",
    );
    assert_eq!(stack.snapshot().await, snapshot, "nothing changed");
    assert!(audited(stack, "refused").await.is_empty());
    // Within its scope it records.
    assert_eq!(
        record_as(&channel, world::DEPT_ADMIN, "in-scope", vec![good])
            .await
            .ok(),
        Some(1)
    );
}

async fn a_finished_tracked_result_is_never_undone_but_a_reset_starts_it_over(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    let e = acme::LEARNER_WELCOME;
    record_as(
        &channel,
        world::OWNER,
        "fail",
        vec![finished(e, "failed", DAY)],
    )
    .await
    .expect("failed");
    let snapshot = stack.snapshot().await;
    for status in ["in_progress", "incomplete", "pending"] {
        assert_refused(
            record_as(&channel, world::OWNER, "undo", vec![record(e, status)]).await,
            Code::FailedPrecondition,
            e,
        );
    }
    assert_refused(
        record_as(
            &channel,
            world::OWNER,
            "undo",
            vec![record(e, "not_started")],
        )
        .await,
        Code::FailedPrecondition,
        "only a reset starts it over",
    );
    assert_eq!(stack.snapshot().await, snapshot);
    // A retake: finished to finished.
    assert_eq!(
        record_as(
            &channel,
            world::OWNER,
            "retake",
            vec![finished(e, "passed", DAY)]
        )
        .await
        .ok(),
        Some(1)
    );
    assert_eq!(result_of(&channel, e).await.completion_status, "passed");
    // An unfinished result may not go back to not_started either.
    record_as(
        &channel,
        world::OWNER,
        "start",
        vec![record(acme::ENGINEER_WELCOME, "in_progress")],
    )
    .await
    .expect("started");
    assert_refused(
        record_as(
            &channel,
            world::OWNER,
            "undo",
            vec![record(acme::ENGINEER_WELCOME, "not_started")],
        )
        .await,
        Code::FailedPrecondition,
        "cannot become not_started",
    );

    reset(
        &channel,
        world::OWNER,
        "reset",
        acme::WELCOME_COURSE,
        &[e],
        &[],
    )
    .await
    .expect("reset");
    let started_over = result_of(&channel, e).await;
    assert_eq!(started_over.completion_status, "not_started");
    assert_eq!(started_over.completion_date, None);
    assert_eq!(started_over.last_view_date, None);
    assert_eq!((started_over.progress, started_over.views_count), (0, 0));
    assert_eq!(
        audited(stack, "reset").await,
        [("result.reset".to_owned(), e.to_owned())]
    );
    assert_eq!(
        record_as(
            &channel,
            world::OWNER,
            "again",
            vec![record(e, "in_progress")]
        )
        .await
        .ok(),
        Some(1)
    );
}

async fn an_administrators_status_shows_until_it_is_set_back_to_automatic(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    let e = acme::LEARNER_WELCOME;
    record_as(
        &channel,
        world::OWNER,
        "tracked",
        vec![pb::ResultRecord {
            awarded_score: 40.0,
            ..finished(e, "failed", DAY)
        }],
    )
    .await
    .expect("recorded");
    let update = pb::UpdateCourseStatusRequest {
        awarded_score: Some(80.0),
        reason: Some("Offline exam".to_owned()),
        ..course_status(acme::WELCOME_COURSE, &[e, e], "passed", Some("2025-12-31"))
    };
    let task = set_status(&channel, world::ADMIN, "set", update.clone())
        .await
        .expect("set");
    assert!(task > 0 && task < 1 << 53, "{task}");
    assert_eq!(
        task_status(&channel, world::ADMIN, task)
            .await
            .ok()
            .as_deref(),
        Some("complete")
    );
    let shown = result_of(&channel, e).await;
    assert_eq!(shown.completion_status, "passed");
    assert_eq!(
        shown.completion_date.as_deref(),
        Some("2025-12-31T00:00:00+00:00")
    );
    assert_eq!(shown.awarded_score, 80.0);
    assert_eq!(shown.progress, 100, "the tracked progress still shows");
    let rows = rows::audit_rows(stack, "set").await;
    assert_eq!(rows.len(), 1, "repeated ids count once");
    assert_eq!(rows[0].action, "result.set_status");
    let after: serde_json::Value =
        serde_json::from_str(rows[0].after.as_deref().expect("after")).expect("json");
    assert_eq!(after["reason"], "Offline exam");
    assert_eq!(after["administratorStatus"], "passed");
    assert_eq!(
        after["completionStatus"], "failed",
        "the tracked layer is kept"
    );

    // The same request again: the same results, a new task, no audit row.
    let again = set_status(&channel, world::ADMIN, "set-again", update)
        .await
        .expect("set again");
    assert_ne!(again, task);
    assert!(audited(stack, "set-again").await.is_empty());

    // Incomplete has no completion date, whatever date is sent.
    set_status(
        &channel,
        world::ADMIN,
        "incomplete",
        course_status(acme::WELCOME_COURSE, &[e], "incomplete", Some("2025-12-31")),
    )
    .await
    .expect("incomplete");
    let shown = result_of(&channel, e).await;
    assert_eq!(shown.completion_status, "incomplete");
    assert_eq!(shown.completion_date, None);
    assert_eq!(shown.awarded_score, 40.0, "no score given: the tracked one");

    set_status(
        &channel,
        world::ADMIN,
        "automatic",
        course_status(acme::WELCOME_COURSE, &[e], "automatic", None),
    )
    .await
    .expect("automatic");
    let shown = result_of(&channel, e).await;
    assert_eq!(shown.completion_status, "failed");
    assert_eq!(shown.completion_date.as_deref(), Some(DAY));
    assert_eq!(shown.awarded_score, 40.0);
}

async fn a_status_update_is_refused_in_the_documented_order_and_changes_nothing(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    let snapshot = stack.snapshot().await;
    let welcome = acme::WELCOME_COURSE;
    let e = acme::LEARNER_WELCOME;
    let passed = |ids: &[&str]| course_status(welcome, ids, "passed", Some("2025-12-31"));
    assert_refused(
        set_status(
            &channel,
            world::LEARNER,
            "x",
            course_status("", &[], "", None),
        )
        .await,
        Code::PermissionDenied,
        "record learner results",
    );
    let cases: Vec<(pb::UpdateCourseStatusRequest, &str)> = vec![
        (
            course_status("", &[e], "passed", Some("2025-12-31")),
            "courseId",
        ),
        (
            course_status("nope", &[e], "passed", Some("2025-12-31")),
            "courseId",
        ),
        (passed(&[]), "enrollmentIds"),
        (passed(&["nope"]), "enrollmentIds"),
        (course_status(welcome, &[e], "", None), "status"),
        (
            course_status(welcome, &[e], "in_progress", Some("2025-12-31")),
            "status",
        ),
        (course_status(welcome, &[e], "not_started", None), "status"),
        (course_status(welcome, &[e], "passed", None), "date"),
        (
            course_status(welcome, &[e], "passed", Some("31.12.2025")),
            "date",
        ),
        (
            course_status(welcome, &[e], "automatic", Some("31.12.2025")),
            "date",
        ),
        (
            pb::UpdateCourseStatusRequest {
                awarded_score: Some(-1.0),
                ..passed(&[e])
            },
            "awardedScore",
        ),
        (
            pb::UpdateCourseStatusRequest {
                reason: Some("x".repeat(1001)),
                ..passed(&[e])
            },
            "reason",
        ),
        (
            course_status(globex::COURSE, &[e], "passed", Some("2025-12-31")),
            "courseId",
        ),
        (passed(&[e, acme::LEARNER_SECRET]), "enrollmentIds"),
        (passed(&[e, globex::ENROLLMENT]), "enrollmentIds"),
    ];
    for (update, field) in cases {
        let outcome = set_status(&channel, world::OWNER, "x", update.clone()).await;
        let status = outcome.expect_err("refused");
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "{update:?}: {}",
            status.message()
        );
        assert!(
            status.message().starts_with(field),
            "{:?} should name {field}",
            status.message()
        );
    }
    // Out of scope comes after every field check.
    assert_refused(
        set_status(
            &channel,
            world::DEPT_ADMIN,
            "x",
            passed(&[e, acme::ENGINEER_WELCOME]),
        )
        .await,
        Code::PermissionDenied,
        "outside the departments you manage",
    );
    assert_eq!(stack.snapshot().await, snapshot, "nothing changed, no task");
}

async fn a_reset_names_only_the_items_own_module_and_leaves_untouched_results_unaudited(
    stack: &TestStack,
) {
    let channel = stack.grpc_channel().await;
    let e = acme::LEARNER_WELCOME;
    let snapshot = stack.snapshot().await;
    assert_refused(
        reset(
            &channel,
            world::OWNER,
            "x",
            acme::WELCOME_COURSE,
            &[e],
            &[acme::SECRET_COURSE],
        )
        .await,
        Code::InvalidArgument,
        "contentItemIds",
    );
    assert_refused(
        reset(&channel, world::OWNER, "x", acme::WELCOME_COURSE, &[], &[]).await,
        Code::InvalidArgument,
        "enrollmentIds",
    );
    assert_refused(
        reset(
            &channel,
            world::AUTHOR,
            "x",
            acme::WELCOME_COURSE,
            &[e],
            &[],
        )
        .await,
        Code::PermissionDenied,
        "record learner results",
    );
    assert_eq!(stack.snapshot().await, snapshot);
    let task = reset(
        &channel,
        world::OWNER,
        "untouched",
        acme::WELCOME_COURSE,
        &[e],
        &[acme::WELCOME_COURSE],
    )
    .await
    .expect("reset");
    assert_eq!(
        task_status(&channel, world::OWNER, task)
            .await
            .ok()
            .as_deref(),
        Some("complete")
    );
    assert!(
        audited(stack, "untouched").await.is_empty(),
        "an untouched result changes nothing"
    );
}

async fn every_filter_selects_its_rows_and_a_bad_one_is_named(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    record_as(
        &channel,
        world::OWNER,
        "setup",
        vec![
            finished(acme::LEARNER_WELCOME, "passed", "2025-02-01T12:30:00+00:00"),
            finished(acme::LEARNER_SECRET, "failed", "2025-03-05T00:00:00+00:00"),
            record(acme::ENGINEER_WELCOME, "in_progress"),
        ],
    )
    .await
    .expect("recorded");
    let ids = async |request: pb::ListLearnerResultsRequest| -> BTreeSet<String> {
        walk(&channel, world::OWNER, request, 2)
            .await
            .into_iter()
            .map(|row| row.enrollment_id)
            .collect()
    };
    let set = |ids: &[&str]| {
        ids.iter()
            .map(|id| (*id).to_owned())
            .collect::<BTreeSet<_>>()
    };
    let r = results_request;
    let window = |start: Option<&str>, end: Option<&str>| {
        Some(pb::DateWindow {
            start_date: start.map(str::to_owned),
            end_date: end.map(str::to_owned),
        })
    };

    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            completion_statuses: vec!["passed".into(), "failed".into()],
            ..r()
        })
        .await,
        set(&[acme::LEARNER_WELCOME, acme::LEARNER_SECRET])
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            completion_statuses: vec!["not_started".into()],
            ..r()
        })
        .await,
        set(&[acme::SUPPORTER_WELCOME])
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            user_ids: vec![acme::LEARNER.to_uppercase(), globex::WORKER.into()],
            ..r()
        })
        .await,
        set(&[acme::LEARNER_WELCOME, acme::LEARNER_SECRET]),
        "ids in any case; another account's id matches nothing"
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            course_ids: vec![acme::SECRET_COURSE.into()],
            ..r()
        })
        .await,
        set(&[acme::LEARNER_SECRET])
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            department_ids: vec![acme::SALES.into()],
            ..r()
        })
        .await,
        set(&[acme::LEARNER_WELCOME, acme::LEARNER_SECRET]),
        "sub-departments are included"
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            department_ids: vec![globex::PLANT.into()],
            ..r()
        })
        .await,
        set(&[])
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            enrollment_ids: vec![acme::SUPPORTER_WELCOME.into(), globex::ENROLLMENT.into()],
            ..r()
        })
        .await,
        set(&[acme::SUPPORTER_WELCOME])
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            completion_date: window(Some("2025-02-01"), Some("2025-02-01")),
            ..r()
        })
        .await,
        set(&[acme::LEARNER_WELCOME]),
        "a date-only end is the whole day"
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            completion_date: window(Some("2025-02-01T12:30:01 00:00"), None),
            ..r()
        })
        .await,
        set(&[acme::LEARNER_SECRET]),
        "a space stands for the offset's plus"
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            access_date: window(Some("2000-01-01"), None),
            due_date: window(None, Some("2100-01-01")),
            ..r()
        })
        .await,
        set(&[]),
        "no enrollment has a due date"
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            access_date: window(Some("2000-01-01"), Some("")),
            ..r()
        })
        .await
        .len(),
        4
    );

    // Learner statuses: active only unless asked.
    change_user_status(&channel, acme::SUPPORTER, 3).await;
    change_user_status(&channel, acme::ENGINEER, 5).await;
    assert_eq!(
        ids(r()).await,
        set(&[acme::LEARNER_WELCOME, acme::LEARNER_SECRET])
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            user_statuses: vec![3],
            ..r()
        })
        .await,
        set(&[acme::SUPPORTER_WELCOME])
    );
    assert_eq!(
        ids(pb::ListLearnerResultsRequest {
            user_statuses: vec![5, 1],
            ..r()
        })
        .await,
        set(&[
            acme::LEARNER_WELCOME,
            acme::LEARNER_SECRET,
            acme::ENGINEER_WELCOME
        ])
    );

    let refusals: Vec<(pb::ListLearnerResultsRequest, &str)> = vec![
        (
            pb::ListLearnerResultsRequest {
                user_ids: vec!["x".into()],
                ..r()
            },
            "userIds",
        ),
        (
            pb::ListLearnerResultsRequest {
                course_ids: vec!["x".into()],
                ..r()
            },
            "courseIds",
        ),
        (
            pb::ListLearnerResultsRequest {
                department_ids: vec!["x".into()],
                ..r()
            },
            "departmentIds",
        ),
        (
            pb::ListLearnerResultsRequest {
                enrollment_ids: vec!["x".into()],
                ..r()
            },
            "enrollmentIds",
        ),
        (
            pb::ListLearnerResultsRequest {
                completion_statuses: vec!["Passed".into()],
                ..r()
            },
            "completionStatuses",
        ),
        (
            pb::ListLearnerResultsRequest {
                user_statuses: vec![2],
                ..r()
            },
            "userStatuses",
        ),
        (
            pb::ListLearnerResultsRequest {
                access_date: window(Some("01.02.2025"), None),
                ..r()
            },
            "accessDate[startDate]",
        ),
        (
            pb::ListLearnerResultsRequest {
                due_date: window(None, Some("soon")),
                ..r()
            },
            "dueDate[endDate]",
        ),
        (
            pb::ListLearnerResultsRequest {
                completion_date: window(Some("2025-02-02"), Some("2025-02-01")),
                ..r()
            },
            "completionDate:",
        ),
        (
            pb::ListLearnerResultsRequest {
                page: Some(pb::PageRequest {
                    page_size: Some(10_001),
                    page_token: String::new(),
                }),
                ..r()
            },
            "pageSize",
        ),
        (
            pb::ListLearnerResultsRequest {
                page: Some(pb::PageRequest {
                    page_size: None,
                    page_token: "bogus".into(),
                }),
                ..r()
            },
            "pageToken",
        ),
    ];
    for (request, name) in refusals {
        let status = list(&channel, world::OWNER, request.clone())
            .await
            .expect_err("refused");
        assert_eq!(status.code(), Code::InvalidArgument, "{request:?}");
        assert!(
            status.message().starts_with(name),
            "{:?} should name {name}",
            status.message()
        );
    }
}

async fn pages_hold_every_row_once_and_tokens_belong_to_their_own_listing(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    admin(&channel)
        .enroll_learners(world::OWNER.grpc_request(pb::EnrollLearnersRequest {
            course_ids: vec![acme::WELCOME_COURSE.into(), acme::SECRET_COURSE.into()],
            learner_ids: acme::USERS.iter().map(|id| (*id).to_owned()).collect(),
            ..Default::default()
        }))
        .await
        .expect("enrolled");
    let everyone = pb::ListLearnerResultsRequest {
        user_statuses: vec![1, 3, 5],
        ..results_request()
    };
    let whole = walk(&channel, world::OWNER, everyone.clone(), 10_000).await;
    assert_eq!(whole.len(), 24, "every user in both items, once each");
    let mut sorted = enrollment_ids(&whole);
    sorted.sort_unstable();
    assert_eq!(sorted, enrollment_ids(&whole), "ascending by enrollment id");
    for size in [1, 5, 7, 24] {
        let walked = walk(&channel, world::OWNER, everyone.clone(), size).await;
        assert_eq!(
            enrollment_ids(&walked),
            enrollment_ids(&whole),
            "pages of {size}"
        );
    }
    // A date window holding them all is paged on its own index: the same rows, in the same
    // order, page by page.
    let in_window = pb::ListLearnerResultsRequest {
        access_date: Some(pb::DateWindow {
            start_date: Some("2000-01-01".into()),
            end_date: Some("2100-01-01".into()),
        }),
        ..everyone.clone()
    };
    for size in [1, 7, 24] {
        let walked = walk(&channel, world::OWNER, in_window.clone(), size).await;
        assert_eq!(
            enrollment_ids(&walked),
            enrollment_ids(&whole),
            "pages of {size} in an access window"
        );
    }
    let first = list(
        &channel,
        world::OWNER,
        pb::ListLearnerResultsRequest {
            page: Some(pb::PageRequest {
                page_size: Some(24),
                page_token: String::new(),
            }),
            ..everyone.clone()
        },
    )
    .await
    .expect("one page");
    assert!(
        first.next_page_token.is_empty(),
        "no token leads to an empty page"
    );

    // The module list: the same rows, each item its own module, with tokens of its own.
    let modules = admin(&channel)
        .list_learner_module_results(world::OWNER.grpc_request(
            pb::ListLearnerModuleResultsRequest {
                page: Some(pb::PageRequest {
                    page_size: Some(5),
                    page_token: String::new(),
                }),
                user_statuses: vec![1, 3, 5],
                module_ids: vec![acme::WELCOME_COURSE.into()],
                ..Default::default()
            },
        ))
        .await
        .expect("module results")
        .into_inner();
    assert_eq!(modules.results.len(), 5);
    for row in &modules.results {
        assert_eq!(row.module_id, acme::WELCOME_COURSE);
        assert_eq!(row.course_item_id, acme::WELCOME_COURSE);
        assert_eq!(row.module_title, "Welcome to Acme");
    }
    let module_token = modules.next_page_token;
    assert!(!module_token.is_empty());
    assert_refused(
        list(
            &channel,
            world::OWNER,
            pb::ListLearnerResultsRequest {
                page: Some(pb::PageRequest {
                    page_size: Some(5),
                    page_token: module_token,
                }),
                ..results_request()
            },
        )
        .await,
        Code::InvalidArgument,
        "pageToken",
    );
    let course_token = list(
        &channel,
        world::OWNER,
        pb::ListLearnerResultsRequest {
            page: Some(pb::PageRequest {
                page_size: Some(5),
                page_token: String::new(),
            }),
            ..everyone
        },
    )
    .await
    .expect("a page")
    .next_page_token;
    let crossed = admin(&channel)
        .list_learner_module_results(world::OWNER.grpc_request(
            pb::ListLearnerModuleResultsRequest {
                page: Some(pb::PageRequest {
                    page_size: Some(5),
                    page_token: course_token,
                }),
                ..Default::default()
            },
        ))
        .await;
    assert_refused(crossed, Code::InvalidArgument, "pageToken");
    let none = admin(&channel)
        .list_learner_module_results(world::OWNER.grpc_request(
            pb::ListLearnerModuleResultsRequest {
                course_ids: vec![acme::WELCOME_COURSE.into()],
                course_item_ids: vec![acme::SECRET_COURSE.into()],
                ..Default::default()
            },
        ))
        .await
        .expect("listed")
        .into_inner();
    assert!(
        none.results.is_empty(),
        "filters naming items combine with AND"
    );
}

async fn scoped_callers_and_custom_roles_meet_the_results_permissions(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    for login in [
        world::LEARNER,
        world::PUBLISHER,
        world::AUTHOR,
        world::VIEWER,
    ] {
        assert_refused(
            list(&channel, login, results_request()).await,
            Code::PermissionDenied,
            "read learner results",
        );
        // Refused before any parameter is looked at.
        assert_refused(
            list(
                &channel,
                login,
                pb::ListLearnerResultsRequest {
                    user_ids: vec!["x".into()],
                    ..results_request()
                },
            )
            .await,
            Code::PermissionDenied,
            "read learner results",
        );
    }
    // The Sales administrator sees the learner of Sales East only.
    let rows = walk(&channel, world::DEPT_ADMIN, results_request(), 10).await;
    assert_eq!(
        enrollment_ids(&rows),
        [acme::LEARNER_WELCOME, acme::LEARNER_SECRET]
    );
    // A department filter above the scope selects the part of the scope below it.
    let rows = walk(
        &channel,
        world::DEPT_ADMIN,
        pb::ListLearnerResultsRequest {
            department_ids: vec![acme::ROOT.into()],
            ..results_request()
        },
        10,
    )
    .await;
    assert_eq!(rows.len(), 2);
    // A learner outside the scope named by id: simply absent.
    let rows = walk(
        &channel,
        world::DEPT_ADMIN,
        pb::ListLearnerResultsRequest {
            user_ids: vec![acme::ENGINEER.into()],
            ..results_request()
        },
        10,
    )
    .await;
    assert!(rows.is_empty());

    // A custom role with results.read reads learners in its scope, but may not record.
    let coordinator = results_coordinator(stack, false).await;
    let rows = walk(&channel, coordinator, results_request(), 10).await;
    assert_eq!(
        enrollment_ids(&rows),
        [acme::LEARNER_WELCOME, acme::LEARNER_SECRET]
    );
    assert_refused(
        record_as(
            &channel,
            coordinator,
            "x",
            vec![record(acme::LEARNER_WELCOME, "in_progress")],
        )
        .await,
        Code::PermissionDenied,
        "record learner results",
    );
    rows::grant(stack, acme::COORDINATOR_ROLE, "results.write").await;
    stack.forget_remembered_callers();
    assert_eq!(
        record_as(
            &channel,
            coordinator,
            "player",
            vec![record(acme::LEARNER_WELCOME, "in_progress")],
        )
        .await
        .ok(),
        Some(1),
        "a custom role with results.write is the intended identity of a player"
    );
    // Another custom role reads the learners of its own scope.
    rows::grant(stack, acme::REPORTER_ROLE, "results.read").await;
    stack.forget_remembered_callers();
    let rows = walk(&channel, world::REPORTER, results_request(), 10).await;
    assert_eq!(
        enrollment_ids(&rows),
        [acme::ENGINEER_WELCOME],
        "Engineering holds the engineer"
    );
    // The other tenant sees its own results only.
    let rows = walk(&channel, world::GLOBEX_OWNER, results_request(), 10).await;
    assert_eq!(enrollment_ids(&rows), [globex::ENROLLMENT]);
}

async fn tasks_are_read_by_their_starter_and_the_accounts_administrators_only(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    let by_dept_admin = set_status(
        &channel,
        world::DEPT_ADMIN,
        "t1",
        course_status(
            acme::WELCOME_COURSE,
            &[acme::LEARNER_WELCOME],
            "passed",
            Some("2025-12-31 10:00:00"),
        ),
    )
    .await
    .expect("in scope");
    let by_owner = reset(
        &channel,
        world::OWNER,
        "t2",
        acme::WELCOME_COURSE,
        &[acme::ENGINEER_WELCOME],
        &[],
    )
    .await
    .expect("reset");
    assert!(by_owner > by_dept_admin);
    for login in [world::DEPT_ADMIN, world::OWNER, world::ADMIN] {
        assert_eq!(
            task_status(&channel, login, by_dept_admin)
                .await
                .ok()
                .as_deref(),
            Some("complete"),
            "{login:?}"
        );
    }
    assert_refused(
        task_status(&channel, world::DEPT_ADMIN, by_owner).await,
        Code::PermissionDenied,
        "tasks you started",
    );
    let coordinator = results_coordinator(stack, true).await;
    assert_refused(
        task_status(&channel, coordinator, by_dept_admin).await,
        Code::PermissionDenied,
        "tasks you started",
    );
    for login in [world::LEARNER, world::PUBLISHER, world::AUTHOR] {
        assert_refused(
            task_status(&channel, login, by_owner).await,
            Code::PermissionDenied,
            "read tasks",
        );
    }
    for unknown in [0, by_owner + 1000, u64::MAX] {
        assert_refused(
            task_status(&channel, world::OWNER, unknown).await,
            Code::NotFound,
            "No task",
        );
    }
    assert_refused(
        task_status(&channel, world::GLOBEX_OWNER, by_owner).await,
        Code::NotFound,
        "No task",
    );
    assert_eq!(
        result_of(&channel, acme::LEARNER_WELCOME)
            .await
            .completion_date
            .as_deref(),
        Some("2025-12-31T10:00:00+00:00"),
        "YYYY-MM-DD HH:MM:SS is UTC"
    );
}

async fn final_statuses_stream_the_active_learners_of_one_item(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    let statuses = async |login: Login,
                          item: &str|
           -> Result<Vec<pb::ContentItemFinalStatus>, Status> {
        let stream = admin(&channel)
            .get_content_item_final_statuses(login.grpc_request(
                pb::GetContentItemFinalStatusesRequest {
                    content_item_id: item.to_owned(),
                },
            ))
            .await?
            .into_inner();
        let messages: Vec<pb::GetContentItemFinalStatusesResponse> = stream.try_collect().await?;
        Ok(messages.into_iter().flat_map(|m| m.statuses).collect())
    };
    record_as(
        &channel,
        world::OWNER,
        "setup",
        vec![finished(acme::LEARNER_WELCOME, "passed", DAY)],
    )
    .await
    .expect("recorded");
    let entries = statuses(world::OWNER, acme::WELCOME_COURSE)
        .await
        .expect("streamed");
    let ids: Vec<&str> = entries.iter().map(|e| e.enrollment_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            acme::LEARNER_WELCOME,
            acme::ENGINEER_WELCOME,
            acme::SUPPORTER_WELCOME
        ]
    );
    assert_eq!(entries[0].user_id, acme::LEARNER);
    assert_eq!(entries[0].status, "passed");
    assert_eq!(entries[0].progress, 100);
    assert_eq!(entries[0].completion_date.as_deref(), Some(DAY));
    assert_eq!(entries[1].status, "not_started");
    assert_eq!(entries[1].completion_date, None);

    change_user_status(&channel, acme::SUPPORTER, 3).await;
    let entries = statuses(world::OWNER, acme::WELCOME_COURSE)
        .await
        .expect("streamed");
    assert_eq!(entries.len(), 2, "active learners only");
    let entries = statuses(world::DEPT_ADMIN, acme::WELCOME_COURSE)
        .await
        .expect("streamed");
    assert_eq!(entries.len(), 1, "learners in scope only");
    for item in [
        globex::COURSE,
        "not-a-uuid",
        "0191a000-0000-7000-8000-0000000005ff",
    ] {
        assert_refused(
            statuses(world::OWNER, item).await,
            Code::NotFound,
            "was not found",
        );
    }
    assert_refused(
        statuses(world::AUTHOR, acme::WELCOME_COURSE).await,
        Code::PermissionDenied,
        "read learner results",
    );
}

/// Pages walked while another caller records results of the same rows, over and over: the
/// walk returns every row exactly once, since recording never moves a row.
async fn a_page_walk_while_results_are_recorded_returns_every_row_exactly_once(stack: &TestStack) {
    let channel = stack.grpc_channel().await;
    admin(&channel)
        .enroll_learners(world::OWNER.grpc_request(pb::EnrollLearnersRequest {
            course_ids: vec![acme::WELCOME_COURSE.into(), acme::SECRET_COURSE.into()],
            learner_ids: acme::USERS.iter().map(|id| (*id).to_owned()).collect(),
            ..Default::default()
        }))
        .await
        .expect("enrolled");
    let everyone = pb::ListLearnerResultsRequest {
        user_statuses: vec![1, 3, 5],
        ..results_request()
    };
    let all: Vec<String> = walk(&channel, world::OWNER, everyone.clone(), 1000)
        .await
        .into_iter()
        .map(|row| row.enrollment_id)
        .collect();
    assert_eq!(all.len(), 24);
    let recorder = {
        let channel = channel.clone();
        let all = all.clone();
        tokio::spawn(async move {
            for round in 0..20u32 {
                let status = if round % 2 == 0 {
                    "in_progress"
                } else {
                    "pending"
                };
                let records = all
                    .iter()
                    .map(|id| pb::ResultRecord {
                        progress: round,
                        ..record(id, status)
                    })
                    .collect();
                record_as(&channel, world::OWNER, "concurrent", records)
                    .await
                    .expect("recorded");
            }
        })
    };
    for _ in 0..10 {
        let walked: Vec<String> = walk(&channel, world::OWNER, everyone.clone(), 3)
            .await
            .into_iter()
            .map(|row| row.enrollment_id)
            .collect();
        assert_eq!(walked, all, "every row once, in order");
    }
    recorder.await.expect("the recorder finished");
}

/// The import's `results` (results.md section 8): read back as recorded, counted in the
/// import's audit row, and each bad entry refused naming the entry and the field, with
/// nothing of the document landing.
async fn imported_results_read_back_and_a_bad_entry_is_named_with_its_field(stack: &TestStack) {
    use lms_core::import::{ImportDocument, import_document};
    let hasher =
        lms_core::auth::PasswordHasher::new(lms_tests::stack::TEST_POLICY).expect("policy");
    const ROOT: &str = "0193a000-0000-7000-8000-000000000001";
    const OWNER: &str = "0193a000-0000-7000-8000-000000000002";
    const LEARNER: &str = "0193a000-0000-7000-8000-000000000003";
    const PROJECT: &str = "0193a000-0000-7000-8000-000000000004";
    const ITEM: &str = "0193a000-0000-7000-8000-000000000005";
    const PASSED: &str = "0193a000-0000-7000-8000-000000000006";
    const UNTOUCHED: &str = "0193a000-0000-7000-8000-000000000007";
    let document = |results: serde_json::Value, enrollment_extra: serde_json::Value| {
        let mut due = serde_json::json!({
            "id": UNTOUCHED, "learnerId": LEARNER, "contentItemId": ITEM,
        });
        if let (Some(due), Some(extra)) = (due.as_object_mut(), enrollment_extra.as_object()) {
            due.extend(extra.clone());
        }
        serde_json::json!({"accounts": [{
            "url": "https://initech.example.com",
            "rootDepartment": {"id": ROOT, "name": "Initech"},
            "users": [
                {"id": OWNER, "email": "owner@initech.example.com", "password": world::PASSWORD,
                 "role": "account_owner", "departmentId": ROOT},
                {"id": LEARNER, "email": "peter@initech.example.com", "password": world::PASSWORD,
                 "role": "learner", "departmentId": ROOT}
            ],
            "projects": [{"id": PROJECT, "name": "TPS", "authorIds": []}],
            "contentItems": [{"id": ITEM, "projectId": PROJECT, "title": "TPS reports",
                              "userId": OWNER, "addedDate": "2019-03-26T06:34:57+00:00",
                              "type": "Course"}],
            "enrollments": [
                {"id": PASSED, "learnerId": LEARNER, "contentItemId": ITEM},
                due
            ],
            "results": results
        }]})
    };
    let good = serde_json::json!({"enrollmentId": PASSED, "completionStatus": "passed",
        "progress": 100, "awardedScore": 92.5, "passingScore": 80, "timeSpent": 5400,
        "viewsCount": 4, "completionDate": DAY, "lastViewDate": DAY});
    let refused = |entry: serde_json::Value, extra: serde_json::Value| {
        let doc = document(serde_json::json!([good.clone(), entry]), extra);
        ImportDocument::from_json(&doc.to_string()).expect("a document")
    };
    let snapshot = stack.snapshot().await;
    let cases = [
        (
            serde_json::json!({"enrollmentId": globex::ENROLLMENT, "completionStatus": "passed"}),
            serde_json::json!({}),
            "accounts[0].results[1] (enrollmentId",
            "names no enrollment of this account",
        ),
        (
            serde_json::json!({"enrollmentId": PASSED, "completionStatus": "in_progress"}),
            serde_json::json!({}),
            "accounts[0].results[1]",
            "already has a result in accounts[0].results[0]",
        ),
        (
            serde_json::json!({"enrollmentId": UNTOUCHED, "completionStatus": "done"}),
            serde_json::json!({}),
            "accounts[0].results[1]",
            "completionStatus 'done' is not one of",
        ),
        (
            serde_json::json!({"enrollmentId": UNTOUCHED, "completionStatus": "in_progress",
                               "awardedScore": 101}),
            serde_json::json!({}),
            "accounts[0].results[1]",
            "awardedScore must be a number from 0 to 100",
        ),
        (
            serde_json::json!({"enrollmentId": UNTOUCHED, "completionStatus": "failed"}),
            serde_json::json!({}),
            "accounts[0].results[1]",
            "completionDate is required",
        ),
        (
            serde_json::json!({"enrollmentId": UNTOUCHED, "completionStatus": "not_started",
                               "timeSpent": 3}),
            serde_json::json!({}),
            "accounts[0].results[1]",
            "timeSpent must be 0 for not_started",
        ),
        (
            serde_json::json!({"enrollmentId": UNTOUCHED, "completionStatus": "in_progress",
                               "lastViewDate": "yesterday"}),
            serde_json::json!({}),
            "accounts[0].results[1]",
            "lastViewDate 'yesterday'",
        ),
        (
            serde_json::json!({"enrollmentId": UNTOUCHED, "completionStatus": "in_progress"}),
            serde_json::json!({"lockAfterDueDate": true}),
            "accounts[0].enrollments[1]",
            "lockAfterDueDate may be true only with a dueDate",
        ),
        (
            serde_json::json!({"enrollmentId": UNTOUCHED, "completionStatus": "in_progress"}),
            serde_json::json!({"dueDate": "2025-13-01"}),
            "accounts[0].enrollments[1]",
            "dueDate \"2025-13-01\"",
        ),
    ];
    for (entry, extra, place, problem) in cases {
        let error = import_document(stack.db(), refused(entry.clone(), extra), &hasher)
            .await
            .expect_err("refused")
            .to_string();
        assert!(
            error.starts_with(place) && error.contains(problem),
            "{entry}: {error}"
        );
    }
    assert_eq!(
        stack.snapshot().await,
        snapshot,
        "nothing of a refused document lands"
    );

    let doc = document(
        serde_json::json!([good]),
        serde_json::json!({"accessDate": "2025-01-10T09:00:00+00:00",
                           "dueDate": "2025-02-10T00:00:00+00:00", "lockAfterDueDate": true}),
    );
    let summary = import_document(
        stack.db(),
        ImportDocument::from_json(&doc.to_string()).expect("a document"),
        &hasher,
    )
    .await
    .expect("imported");
    assert_eq!(summary.results, 1);
    let audit = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("import"))
        .filter(
            audit_log::Column::EntityId.eq(world::uuid(
                &lms_core::entities::account::Entity::find()
                    .filter(
                        lms_core::entities::account::Column::Url.eq("https://initech.example.com"),
                    )
                    .one(stack.db())
                    .await
                    .expect("read")
                    .expect("the account")
                    .id
                    .to_string(),
            )),
        )
        .one(stack.db())
        .await
        .expect("read")
        .expect("the import's audit row");
    let after: serde_json::Value =
        serde_json::from_str(audit.after.as_deref().expect("after")).expect("json");
    assert_eq!(after["results"], 1);

    let owner = Login {
        account_url: "https://initech.example.com",
        email: "owner@initech.example.com",
        id: OWNER,
    };
    let channel = stack.grpc_channel().await;
    let rows = walk(&channel, owner, results_request(), 10).await;
    assert_eq!(enrollment_ids(&rows), [PASSED, UNTOUCHED]);
    assert_eq!(rows[0].completion_status, "passed");
    assert_eq!(rows[0].completion_date.as_deref(), Some(DAY));
    assert_eq!((rows[0].awarded_score, rows[0].passing_score), (92.5, 80.0));
    assert_eq!((rows[0].time_spent, rows[0].views_count), (5400, 4));
    assert_eq!(rows[1].completion_status, "not_started");
    assert_eq!(rows[1].access_date, "2025-01-10T09:00:00+00:00");
    assert_eq!(
        rows[1].due_date.as_deref(),
        Some("2025-02-10T00:00:00+00:00")
    );
    assert_eq!(
        rows[1].expiration_date.as_deref(),
        Some("2025-02-10T00:00:00+00:00")
    );
    assert!(rows[1].is_overdue);
}

/// Tasks are kept 30 days (results.md promises at least 7): a recording removes its account's
/// older ones, and none younger or of another account.
async fn a_recording_removes_its_accounts_tasks_past_their_thirty_days(stack: &TestStack) {
    use lms_core::entities::{result_task, user};
    use sea_orm::{ActiveModelTrait as _, NotSet, Set};
    let account_of = async |id: &str| {
        user::Entity::find_by_id(uuid::Uuid::parse_str(id).expect("uuid"))
            .one(stack.db())
            .await
            .expect("read")
            .expect("the user")
            .account_id
    };
    let (acme_account, globex_account) = (
        account_of(acme::OWNER).await,
        account_of(globex::OWNER).await,
    );
    let aged = |account_id, started_by: &str, days: i64| result_task::ActiveModel {
        id: NotSet,
        account_id: Set(account_id),
        started_by: Set(uuid::Uuid::parse_str(started_by).expect("uuid")),
        status: Set("complete".into()),
        created_at: Set(chrono::Utc::now() - chrono::TimeDelta::days(days)),
    };
    let expired = aged(acme_account, acme::OWNER, 31)
        .insert(stack.db())
        .await
        .expect("an expired task");
    let kept = aged(acme_account, acme::OWNER, 29)
        .insert(stack.db())
        .await
        .expect("a young task");
    let other = aged(globex_account, globex::OWNER, 40)
        .insert(stack.db())
        .await
        .expect("another account's task");

    let channel = stack.grpc_channel().await;
    let new = reset(
        &channel,
        world::OWNER,
        "t-retention",
        acme::WELCOME_COURSE,
        &[acme::ENGINEER_WELCOME],
        &[],
    )
    .await
    .expect("reset");
    let status = |id: i64| task_status(&channel, world::OWNER, id as u64);
    assert_refused(status(expired.id).await, Code::NotFound, "No task");
    assert_eq!(status(kept.id).await.ok().as_deref(), Some("complete"));
    assert_eq!(status(new as i64).await.ok().as_deref(), Some("complete"));
    assert!(
        result_task::Entity::find_by_id(other.id)
            .one(stack.db())
            .await
            .expect("read")
            .is_some(),
        "another account's tasks stay"
    );
}
