//! Scheduled deactivation and termination (provisioning.md section 6) through the real gateway
//! and core: `POST|DELETE /user/{id}/scheduled_deactivation` and `/scheduled_termination` in
//! XML and JSON under every prefix; the profile's dates; bad dates, unknown users and refused
//! callers changing nothing; a date on or before today carried out at once; the audit rows;
//! and the scheduler: a change made when its day begins, at the start after downtime, once
//! with two cores on one database, and over more due rows than one batch.
//!
//! The scheduler's "today" is moved with `--scheduler-date-offset-days`: a date stored for a
//! few days ahead falls due on a core started with a larger offset. Waiting on the scheduler
//! polls the database until a generous deadline; nothing is timed.

use std::time::Duration;

use lms_core::entities::{audit_log, user};
use lms_core::scheduler::SchedulerSettings;
use lms_proto::v1::{self as pb, admin_service_client::AdminServiceClient};
use lms_tests::{
    Backend, Reply, TestStack, get_json, json_of, on_both_backends, post_json,
    stack::StackOptions,
    testkit::Fixture,
    world::{self, Login, acme, globex},
};
use reqwest::Method;
use sea_orm::{
    ColumnTrait as _, ConnectionTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _,
    QueryOrder as _, TransactionTrait as _,
};
use serde_json::{Value, json};
use uuid::Uuid;

on_both_backends!(
    dates_are_set_replaced_and_removed_in_xml_and_json_and_every_profile_shows_them,
    a_bad_date_is_400_naming_date_and_changes_nothing,
    a_date_on_or_before_today_is_carried_out_at_once_as_the_bulk_call_would,
    unknown_users_are_404_and_callers_out_of_scope_or_without_the_right_403,
    grpc_callers_meet_the_same_rules,
    the_scheduler_makes_a_change_when_its_day_begins_and_ends_the_users_sign_ins,
    two_cores_on_one_database_make_each_due_change_once,
);

lms_tests::testkit::on_both_backends!(Downtime => a_change_due_while_no_core_ran_is_made_at_the_next_start);
lms_tests::testkit::on_both_backends!(ManyDue => more_due_changes_than_one_batch_are_all_made_once);

/// The UTC date `days` from today (the stack's "today": its offset is 0), `YYYY-MM-DD`.
fn day(days: i64) -> String {
    (chrono::Utc::now().date_naive() + chrono::TimeDelta::days(days))
        .format("%Y-%m-%d")
        .to_string()
}

fn date_xml(date: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><request><date>{date}</date></request>")
}

fn deactivation(id: &str) -> String {
    format!("/user/{id}/scheduled_deactivation")
}

fn termination(id: &str) -> String {
    format!("/user/{id}/scheduled_termination")
}

/// `POST path` with `<request><date>DATE</date></request>` as `login`, with `X-Request-Id`.
async fn schedule(
    stack: &TestStack,
    path: &str,
    login: Login,
    request_id: &str,
    date: &str,
) -> Reply {
    stack
        .post_with_id(path, login, request_id, &date_xml(date))
        .await
}

/// `DELETE path` as `login`, with `X-Request-Id`.
async fn cancel(stack: &TestStack, path: &str, login: Login, request_id: &str) -> Reply {
    Reply::send(
        stack
            .request(Method::DELETE, path, login)
            .header("X-Request-Id", request_id),
    )
    .await
}

#[track_caller]
fn assert_done(reply: &Reply) {
    assert_eq!(
        (reply.status, reply.body.as_str()),
        (200, ""),
        "{}",
        reply.body
    );
}

/// The profile of `id` in JSON, as the owner reads it.
async fn profile(stack: &TestStack, id: &str) -> Value {
    json_of(&get_json(stack, &format!("/user/{id}"), world::OWNER).await)
}

/// The stored row of `id`.
async fn row(db: &DatabaseConnection, id: &str) -> user::Model {
    user::Entity::find_by_id(world::uuid(id))
        .one(db)
        .await
        .expect("read")
        .expect("the user")
}

/// 1, 3 or 5, as stored.
fn status(user: &user::Model) -> u8 {
    match (user.active, user.employment_ended) {
        (true, _) => 1,
        (false, false) => 3,
        (false, true) => 5,
    }
}

/// The audit rows `action` of `id`, oldest first.
async fn audits(db: &DatabaseConnection, action: &str, id: &str) -> Vec<audit_log::Model> {
    audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(action))
        .filter(audit_log::Column::EntityId.eq(world::uuid(id)))
        .order_by_asc(audit_log::Column::Id)
        .all(db)
        .await
        .expect("audit rows")
}

fn json_text(text: Option<&str>) -> Value {
    serde_json::from_str(text.expect("recorded")).expect("JSON")
}

fn dates(deactivation: Option<&str>, termination: Option<&str>) -> Value {
    json!({"scheduledDeactivationDate": deactivation, "scheduledTerminationDate": termination})
}

/// Whether `email` with the world's password gets past authentication at `base_url`.
async fn signs_in(base_url: &str, email: &str) -> bool {
    let reply = Reply::send(
        reqwest::Client::new()
            .get(format!("{base_url}/group/{}", acme::INTERNS))
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", email)
            .header("X-Auth-Password", world::PASSWORD),
    )
    .await;
    reply.status != 401
}

/// Polls `condition` every 50 ms until it holds, failing after a minute (far more than a
/// scheduler pass takes; the deadline only keeps a broken scheduler from hanging the run).
async fn eventually<F: AsyncFn() -> bool>(what: &str, condition: F) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !condition().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "still not so after a minute: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Scheduler settings that make dates up to `days` ahead due, looking every 100 ms.
fn ahead(days: i32) -> SchedulerSettings {
    SchedulerSettings {
        interval_ms: 100,
        date_offset_days: days,
    }
}

// ---------------------------------------------------------------------------------------------

async fn dates_are_set_replaced_and_removed_in_xml_and_json_and_every_profile_shows_them(
    stack: &TestStack,
) {
    let learner = acme::LEARNER;
    let (first, second, third) = (day(30), day(60), day(45));
    assert_done(
        &schedule(
            stack,
            &deactivation(learner),
            world::OWNER,
            "req-set",
            &first,
        )
        .await,
    );

    let xml = stack.get(&format!("/user/{learner}"), world::OWNER).await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert!(
        xml.body.contains(&format!(
            "<addedDate>{}</addedDate><scheduledDeactivationDate>{first}</scheduledDeactivationDate><groups>",
            &profile(stack, learner).await["addedDate"].as_str().expect("addedDate")
        )),
        "after addedDate (no sign-in yet) and before groups: {}",
        xml.body
    );
    assert!(
        !xml.body.contains("scheduledTerminationDate"),
        "{}",
        xml.body
    );

    // JSON under a client prefix with a trailing slash.
    let reply = post_json(
        stack,
        &format!("/api/v2{}/", termination(learner)),
        world::ADMIN,
        json!({ "date": second }),
    )
    .await;
    assert_done(&reply);
    let shown = profile(stack, learner).await;
    assert_eq!(
        (
            &shown["scheduledDeactivationDate"],
            &shown["scheduledTerminationDate"]
        ),
        (&json!(first), &json!(second))
    );
    let v2 = stack
        .get(&format!("/user/{learner}/v2"), world::OWNER)
        .await;
    assert!(
        v2.body.contains(&format!(
            "<scheduledDeactivationDate>{first}</scheduledDeactivationDate>\
             <scheduledTerminationDate>{second}</scheduledTerminationDate><groups>"
        )),
        "{}",
        v2.body
    );
    let list = json_of(&get_json(stack, "/user", world::OWNER).await);
    let listed = list
        .as_array()
        .expect("an array")
        .iter()
        .find(|user| user["userId"] == json!(learner))
        .expect("the learner is listed");
    assert_eq!(listed["scheduledTerminationDate"], json!(second));
    let other = profile(stack, acme::ENGINEER).await;
    assert!(other.get("scheduledDeactivationDate").is_none(), "{other}");

    // Replacing, then the same date again: the second changes nothing.
    assert_done(
        &schedule(
            stack,
            &deactivation(learner),
            world::OWNER,
            "req-replace",
            &third,
        )
        .await,
    );
    assert_eq!(
        profile(stack, learner).await["scheduledDeactivationDate"],
        json!(third)
    );
    let before = stack.snapshot_without_revision().await;
    assert_done(
        &schedule(
            stack,
            &deactivation(learner),
            world::OWNER,
            "req-same",
            &third,
        )
        .await,
    );
    assert_eq!(stack.snapshot_without_revision().await, before);

    let rows = audits(stack.db(), "user.schedule", learner).await;
    assert_eq!(
        rows.len(),
        3,
        "set, set the other kind, replace; not the repeat"
    );
    assert_eq!(rows[0].request_id.as_deref(), Some("req-set"));
    assert_eq!(rows[0].actor_user_id, Some(world::uuid(acme::OWNER)));
    assert_eq!(rows[0].entity_type, "user");
    assert_eq!(
        (
            json_text(rows[0].before.as_deref()),
            json_text(rows[0].after.as_deref())
        ),
        (dates(None, None), dates(Some(&first), None))
    );
    assert_eq!(rows[1].actor_user_id, Some(world::uuid(acme::ADMIN)));
    assert_eq!(
        json_text(rows[2].after.as_deref()),
        dates(Some(&third), Some(&second))
    );

    // DELETE removes one kind; a second DELETE, with nothing stored, answers 200 and changes nothing.
    assert_done(&cancel(stack, &deactivation(learner), world::OWNER, "req-cancel").await);
    let shown = profile(stack, learner).await;
    assert!(shown.get("scheduledDeactivationDate").is_none(), "{shown}");
    assert_eq!(shown["scheduledTerminationDate"], json!(second));
    let before = stack.snapshot_without_revision().await;
    assert_done(&cancel(stack, &deactivation(learner), world::OWNER, "req-again").await);
    assert_eq!(stack.snapshot_without_revision().await, before);
    assert_done(
        &cancel(
            stack,
            &format!("/index.php/api/v2{}", termination(learner)),
            world::OWNER,
            "req-cancel-2",
        )
        .await,
    );
    let shown = profile(stack, learner).await;
    assert!(shown.get("scheduledTerminationDate").is_none(), "{shown}");
    let rows = audits(stack.db(), "user.schedule", learner).await;
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[3].request_id.as_deref(), Some("req-cancel"));
    assert_eq!(
        (
            json_text(rows[3].before.as_deref()),
            json_text(rows[3].after.as_deref())
        ),
        (
            dates(Some(&third), Some(&second)),
            dates(None, Some(&second))
        )
    );
    assert_eq!(json_text(rows[4].after.as_deref()), dates(None, None));
    assert_eq!(
        status(&row(stack.db(), learner).await),
        1,
        "nothing was due"
    );
    assert!(
        audits(stack.db(), "user.set_active", learner)
            .await
            .is_empty()
    );
}

async fn a_bad_date_is_400_naming_date_and_changes_nothing(stack: &TestStack) {
    assert_done(
        &schedule(
            stack,
            &termination(acme::LEARNER),
            world::OWNER,
            "r",
            &day(30),
        )
        .await,
    );
    let before = stack.snapshot().await;
    for path in [deactivation(acme::LEARNER), termination(acme::LEARNER)] {
        for (date, needle) in [
            (
                "2026-02-30",
                "date '2026-02-30' must be a day of the calendar written as YYYY-MM-DD",
            ),
            ("2026-1-5", "date '2026-1-5' must be a day of the calendar"),
            (
                "2026-01-05T00:00:00Z",
                "date '2026-01-05T00:00:00Z' must be a day",
            ),
            ("", "date is required"),
        ] {
            schedule(stack, &path, world::OWNER, "r", date)
                .await
                .assert_error(400, needle);
        }
        stack
            .post_xml(&path, world::OWNER, "<request/>")
            .await
            .assert_error(400, "date is required");
        // No body at all.
        stack
            .send(Method::POST, &path, world::OWNER)
            .await
            .assert_error(400, "date is required");
        for body in [
            json!({"date": "2026-1-5"}),
            json!({"date": "2026-02-30"}),
            json!({}),
        ] {
            let reply = post_json(stack, &path, world::OWNER, &body).await;
            assert_eq!(reply.status, 400, "{body}: {}", reply.body);
            let message = json_of_error(&reply);
            assert!(message.starts_with("date "), "{body}: {message}");
        }
    }
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");
}

/// The message of a JSON error body.
fn json_of_error(reply: &Reply) -> String {
    let body: Value = serde_json::from_str(&reply.body).expect("a JSON error body");
    body["message"]
        .as_str()
        .or_else(|| body["error"]["message"].as_str())
        .unwrap_or_else(|| panic!("no message in {}", reply.body))
        .to_owned()
}

async fn a_date_on_or_before_today_is_carried_out_at_once_as_the_bulk_call_would(
    stack: &TestStack,
) {
    let db = stack.db();
    let token = stack.bearer_for(acme::ENGINEER).await;
    // A stored later date of the same kind goes when one on or before today is given.
    assert_done(
        &schedule(
            stack,
            &termination(acme::LEARNER),
            world::OWNER,
            "r0",
            &day(30),
        )
        .await,
    );
    assert_done(
        &schedule(
            stack,
            &termination(acme::LEARNER),
            world::OWNER,
            "req-now",
            &day(0),
        )
        .await,
    );
    assert_eq!(status(&row(db, acme::LEARNER).await), 5);
    let shown = profile(stack, acme::LEARNER).await;
    assert_eq!(shown["status"], json!(5));
    assert!(
        shown.get("scheduledTerminationDate").is_none(),
        "nothing stays: {shown}"
    );
    let set = audits(db, "user.set_active", acme::LEARNER).await;
    assert_eq!(set.len(), 1);
    assert_eq!(
        (set[0].actor_user_id, set[0].request_id.as_deref()),
        (Some(world::uuid(acme::OWNER)), Some("req-now"))
    );
    assert_eq!(
        (
            json_text(set[0].before.as_deref()),
            json_text(set[0].after.as_deref())
        ),
        (
            json!({"active": true, "employmentEnded": false}),
            json!({"active": false, "employmentEnded": true})
        )
    );
    let scheduled = audits(db, "user.schedule", acme::LEARNER).await;
    assert_eq!(
        scheduled.len(),
        2,
        "stored, then removed by the change at once"
    );
    assert_eq!(json_text(scheduled[1].after.as_deref()), dates(None, None));
    assert!(!signs_in(&stack.base_url, world::LEARNER.email).await);

    // A past deactivation of an active user, in JSON: its password and token refused at once.
    assert_ne!(
        Reply::send(
            stack
                .http
                .get(format!("{}/group/{}", stack.base_url, acme::INTERNS))
                .header("Authorization", &token)
        )
        .await
        .status,
        401,
        "a learner's token may be refused a group (403), not its credentials"
    );
    assert!(signs_in(&stack.base_url, "engineer@acme.example.com").await);
    let reply = post_json(
        stack,
        &deactivation(acme::ENGINEER),
        world::ADMIN,
        json!({"date": "2020-02-29"}),
    )
    .await;
    assert_done(&reply);
    assert_eq!(status(&row(db, acme::ENGINEER).await), 3);
    assert!(!signs_in(&stack.base_url, "engineer@acme.example.com").await);
    assert_eq!(
        Reply::send(
            stack
                .http
                .get(format!("{}/group/{}", stack.base_url, acme::INTERNS))
                .header("Authorization", &token)
        )
        .await
        .status,
        401
    );
    assert!(
        audits(db, "user.schedule", acme::ENGINEER).await.is_empty(),
        "nothing was stored before or after"
    );

    // Deactivating changes only an active user: status 5 stays 5, and nothing is recorded.
    let before = stack.snapshot_without_revision().await;
    assert_done(
        &schedule(
            stack,
            &deactivation(acme::LEARNER),
            world::OWNER,
            "r2",
            &day(-3),
        )
        .await,
    );
    assert_eq!(stack.snapshot_without_revision().await, before);
    // Terminating makes 5 of 3.
    assert_done(
        &schedule(
            stack,
            &termination(acme::ENGINEER),
            world::OWNER,
            "r3",
            &day(-1),
        )
        .await,
    );
    assert_eq!(status(&row(db, acme::ENGINEER).await), 5);

    // The last active account owner: 409, nothing changed (the later date stays too).
    assert_done(
        &schedule(
            stack,
            &deactivation(acme::OWNER),
            world::ADMIN,
            "r4",
            &day(9),
        )
        .await,
    );
    let before = stack.snapshot().await;
    schedule(
        stack,
        &deactivation(acme::OWNER),
        world::ADMIN,
        "r5",
        &day(0),
    )
    .await
    .assert_error(409, "last active account owner");
    schedule(
        stack,
        &termination(acme::OWNER),
        world::OWNER,
        "r6",
        &day(-1),
    )
    .await
    .assert_error(409, "last active account owner");
    assert_eq!(stack.snapshot().await, before);
}

async fn unknown_users_are_404_and_callers_out_of_scope_or_without_the_right_403(
    stack: &TestStack,
) {
    let before = stack.snapshot().await;
    let unknown = Uuid::now_v7().to_string();
    for id in [unknown.as_str(), globex::WORKER, "not-an-id"] {
        for path in [deactivation(id), termination(id)] {
            schedule(stack, &path, world::OWNER, "r", &day(30))
                .await
                .assert_error(404, "was not found");
            cancel(stack, &path, world::OWNER, "r")
                .await
                .assert_error(404, "was not found");
        }
    }
    // The department administrator manages Sales: not the engineer, never an administrator.
    for id in [acme::ENGINEER, acme::ADMIN] {
        for path in [deactivation(id), termination(id)] {
            schedule(stack, &path, world::DEPT_ADMIN, "r", &day(30))
                .await
                .assert_error(403, "departments you manage");
            cancel(stack, &path, world::DEPT_ADMIN, "r")
                .await
                .assert_error(403, "departments you manage");
        }
    }
    // Without the right: 403 whatever the body says.
    for login in [
        world::LEARNER,
        world::PUBLISHER,
        world::AUTHOR,
        world::COORDINATOR,
    ] {
        for date in [day(30), "2026-02-30".to_owned(), String::new()] {
            schedule(stack, &deactivation(acme::LEARNER), login, "r", &date)
                .await
                .assert_error(403, "change users");
        }
        cancel(stack, &termination(acme::LEARNER), login, "r")
            .await
            .assert_error(403, "change users");
    }
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");

    // In scope: the department administrator, and a custom role once it has `user.update`.
    assert_done(
        &schedule(
            stack,
            &deactivation(acme::LEARNER),
            world::DEPT_ADMIN,
            "r",
            &day(30),
        )
        .await,
    );
    lms_tests::rows::grant(stack, acme::COORDINATOR_ROLE, "user.update").await;
    stack.forget_remembered_callers();
    assert_done(&cancel(stack, &deactivation(acme::LEARNER), world::COORDINATOR, "r").await);
    schedule(
        stack,
        &deactivation(acme::ENGINEER),
        world::COORDINATOR,
        "r",
        &day(30),
    )
    .await
    .assert_error(403, "departments you manage");
}

async fn grpc_callers_meet_the_same_rules(stack: &TestStack) {
    let mut admin = AdminServiceClient::new(stack.grpc_channel().await);
    let request = |kind: pb::ScheduleKind, date: &str| pb::ScheduleUserStatusRequest {
        user_id: acme::LEARNER.to_owned(),
        kind: kind.into(),
        date: date.to_owned(),
    };
    let refused = admin
        .schedule_user_status(
            world::OWNER.grpc_request(request(pb::ScheduleKind::Unspecified, &day(3))),
        )
        .await
        .expect_err("no kind");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(
        refused.message().starts_with("kind"),
        "{}",
        refused.message()
    );
    let refused = admin
        .schedule_user_status(
            world::OWNER.grpc_request(request(pb::ScheduleKind::Termination, "2026-1-5")),
        )
        .await
        .expect_err("a bad date");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(
        refused.message().starts_with("date"),
        "{}",
        refused.message()
    );
    let refused = admin
        .schedule_user_status(
            world::LEARNER.grpc_request(request(pb::ScheduleKind::Termination, "2026-1-5")),
        )
        .await
        .expect_err("no right");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    let refused = admin
        .cancel_scheduled_user_status(world::OWNER.grpc_request(
            pb::CancelScheduledUserStatusRequest {
                user_id: Uuid::now_v7().to_string(),
                kind: pb::ScheduleKind::Deactivation.into(),
            },
        ))
        .await
        .expect_err("unknown");
    assert_eq!(refused.code(), tonic::Code::NotFound);

    admin
        .schedule_user_status(
            world::OWNER.grpc_request(request(pb::ScheduleKind::Termination, &day(7))),
        )
        .await
        .expect("stored");
    let profile = admin
        .get_user(world::OWNER.grpc_request(pb::GetUserRequest {
            user_id: acme::LEARNER.to_owned(),
        }))
        .await
        .expect("the profile")
        .into_inner()
        .user
        .expect("a user");
    assert_eq!(
        (
            profile.scheduled_deactivation_date.as_str(),
            profile.scheduled_termination_date.as_str()
        ),
        ("", day(7).as_str())
    );
    admin
        .cancel_scheduled_user_status(world::OWNER.grpc_request(
            pb::CancelScheduledUserStatusRequest {
                user_id: acme::LEARNER.to_owned(),
                kind: pb::ScheduleKind::Termination.into(),
            },
        ))
        .await
        .expect("removed");
    assert_eq!(
        row(stack.db(), acme::LEARNER)
            .await
            .scheduled_termination_date,
        None
    );
}

async fn the_scheduler_makes_a_change_when_its_day_begins_and_ends_the_users_sign_ins(
    stack: &TestStack,
) {
    let db = stack.db();
    let token = stack.bearer_for(acme::LEARNER).await;
    for (path, request_id, days) in [
        (deactivation(acme::LEARNER), "r1", 3),
        (termination(acme::SUPPORTER), "r2", 2),
        // Not due yet on a core three days ahead.
        (termination(acme::ENGINEER), "r3", 4),
        // Due, but a deactivation changes only an active user: its date just goes.
        (deactivation(acme::FORMER_ADMIN), "r4", 1),
    ] {
        assert_done(&schedule(stack, &path, world::OWNER, request_id, &day(days)).await);
    }
    assert!(signs_in(&stack.base_url, world::LEARNER.email).await);

    // This stack's own scheduler ("today" is today) leaves them stored; a second core three
    // days ahead carries out those due by then.
    let ahead = stack
        .replica(StackOptions {
            scheduler: ahead(3),
            ..StackOptions::new(stack.backend())
        })
        .await;
    eventually("the due changes are made", async || {
        let learner = row(db, acme::LEARNER).await;
        let supporter = row(db, acme::SUPPORTER).await;
        let former = row(db, acme::FORMER_ADMIN).await;
        status(&learner) == 3
            && status(&supporter) == 5
            && former.scheduled_deactivation_date.is_none()
    })
    .await;
    let learner = row(db, acme::LEARNER).await;
    assert_eq!(
        learner.scheduled_deactivation_date, None,
        "removed with the change"
    );
    assert_eq!(
        row(db, acme::SUPPORTER).await.scheduled_termination_date,
        None
    );
    let engineer = row(db, acme::ENGINEER).await;
    assert_eq!(
        (
            status(&engineer),
            engineer.scheduled_termination_date.map(|d| d.to_string())
        ),
        (1, Some(day(4)))
    );
    assert_eq!(status(&row(db, acme::FORMER_ADMIN).await), 3);
    assert!(
        audits(db, "user.set_active", acme::FORMER_ADMIN)
            .await
            .is_empty()
    );

    for id in [acme::LEARNER, acme::SUPPORTER] {
        let rows = audits(db, "user.set_active", id).await;
        assert_eq!(rows.len(), 1, "{id}");
        assert_eq!(
            (rows[0].actor_user_id, rows[0].request_id.as_deref()),
            (None, None),
            "{id}"
        );
    }
    let rows = audits(db, "user.set_active", acme::LEARNER).await;
    assert_eq!(
        json_text(rows[0].after.as_deref()),
        json!({"active": false, "employmentEnded": false})
    );
    // Refused at once on the core that made the change, and soon on the other.
    assert!(!signs_in(&ahead.base_url, world::LEARNER.email).await);
    eventually("the other core refuses the learner too", async || {
        !signs_in(&stack.base_url, world::LEARNER.email).await
    })
    .await;
    let with_token = Reply::send(
        stack
            .http
            .get(format!("{}/group/{}", ahead.base_url, acme::INTERNS))
            .header("Authorization", &token),
    )
    .await;
    assert_eq!(with_token.status, 401, "its tokens are gone");
    ahead.stop().await;
}

async fn two_cores_on_one_database_make_each_due_change_once(stack: &TestStack) {
    let db = stack.db();
    let due = [
        acme::LEARNER,
        acme::ENGINEER,
        acme::SUPPORTER,
        acme::AUTHOR,
        acme::PUBLISHER,
        acme::VIEWER,
    ];
    for id in due {
        assert_done(&schedule(stack, &termination(id), world::OWNER, "r", &day(1)).await);
    }
    // On PostgreSQL the account's write lock is held while both cores start, so that both
    // read the due rows and wait for the lock: the one that gets it second finds them gone.
    let held = if stack.backend() == Backend::Postgres {
        let txn = db.begin().await.expect("a transaction");
        txn.execute_unprepared(&format!(
            "UPDATE accounts SET revision = revision + 1 WHERE url = '{}'",
            world::ACME_URL
        ))
        .await
        .expect("the account's lock");
        Some(txn)
    } else {
        None
    };
    let options = StackOptions {
        scheduler: ahead(1),
        ..StackOptions::new(stack.backend())
    };
    let first = stack.replica(options.clone()).await;
    let second = stack.replica(options).await;
    if let Some(txn) = held {
        eventually("both cores wait for the account's lock", async || {
            let waiting = db
                .query_one_raw(sea_orm::Statement::from_string(
                    db.get_database_backend(),
                    "SELECT count(*)::bigint AS waiting FROM pg_stat_activity \
                     WHERE datname = current_database() AND wait_event_type = 'Lock' \
                     AND query LIKE 'UPDATE \"accounts\"%'",
                ))
                .await
                .expect("pg_stat_activity")
                .expect("a row")
                .try_get::<i64>("", "waiting")
                .expect("a count");
            waiting >= 2
        })
        .await;
        txn.rollback().await.expect("the lock goes");
    }
    eventually("every due change is made", async || {
        for id in due {
            if status(&row(db, id).await) != 5 {
                return false;
            }
        }
        true
    })
    .await;
    // Stopping waits for each core's pass in progress: nothing more can come after.
    first.stop().await;
    second.stop().await;
    for id in due {
        let rows = audits(db, "user.set_active", id).await;
        assert_eq!(rows.len(), 1, "{id}: one change, one audit row");
        assert_eq!(rows[0].actor_user_id, None);
        assert_eq!(row(db, id).await.scheduled_termination_date, None);
    }
}

// ---------------------------------------------------------------------------------------------

/// The world behind a gateway whose core can be stopped and started again with other
/// settings (behind a lock: scenarios get their fixture shared).
struct Downtime(tokio::sync::Mutex<lms_tests::fault::SplitStack>);

impl Fixture for Downtime {
    async fn start(backend: Backend) -> Option<Self> {
        let split = lms_tests::fault::SplitStack::start(backend).await?;
        Some(Self(tokio::sync::Mutex::new(split)))
    }

    async fn stop(self) {
        self.0.into_inner().stop().await;
    }
}

async fn a_change_due_while_no_core_ran_is_made_at_the_next_start(downtime: &Downtime) {
    let mut split = downtime.0.lock().await;
    let db = split.inspect().await;
    let reply = Reply::send(
        world::OWNER.headers().into_iter().fold(
            reqwest::Client::new()
                .post(format!("{}{}", split.base_url, termination(acme::LEARNER)))
                .header("Content-Type", "application/xml")
                .body(date_xml(&day(2))),
            |request, (name, value)| request.header(name, value),
        ),
    )
    .await;
    assert_done(&reply);
    assert_eq!(status(&row(&db, acme::LEARNER).await), 1);
    split.kill_core();
    // Two days later the core starts again. It looks once an hour after its start, so only
    // the look at start can make the change.
    split
        .restart_core_with(|core| {
            core.scheduler = SchedulerSettings {
                interval_ms: 3_600_000,
                date_offset_days: 2,
            };
        })
        .await;
    eventually("the change is made at start", async || {
        status(&row(&db, acme::LEARNER).await) == 5
    })
    .await;
    let rows = audits(&db, "user.set_active", acme::LEARNER).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].actor_user_id, rows[0].request_id.as_deref()),
        (None, None)
    );
    assert_eq!(
        row(&db, acme::LEARNER).await.scheduled_termination_date,
        None
    );
    db.close().await.ok();
}

// ---------------------------------------------------------------------------------------------

/// The world plus more learners than one scheduler batch, each with a deactivation due
/// tomorrow (stored straight in the database: the routes are tested above).
struct ManyDue {
    stack: TestStack,
}

const MANY: usize = 2_500;

impl Fixture for ManyDue {
    async fn start(backend: Backend) -> Option<Self> {
        assert!(
            MANY as u64 > 2 * lms_core::scheduler::BATCH,
            "more than two batches"
        );
        let ids: Vec<String> = (0..MANY).map(|_| Uuid::now_v7().to_string()).collect();
        let mut document = world::document();
        world::add_bulk_learners(&mut document, &ids, acme::SUPPORT);
        let stack = world::stack_holding(backend, document).await?;
        user::Entity::update_many()
            .col_expr(
                user::Column::ScheduledDeactivationDate,
                sea_orm::prelude::Expr::value(chrono::Utc::now().date_naive().succ_opt()),
            )
            .filter(user::Column::Email.starts_with("bulk"))
            .exec(stack.db())
            .await
            .expect("the dates are stored");
        Some(Self { stack })
    }

    async fn stop(self) {
        self.stack.stop().await;
    }
}

async fn more_due_changes_than_one_batch_are_all_made_once(many: &ManyDue) {
    let stack = &many.stack;
    let db = stack.db();
    let bulk = || user::Entity::find().filter(user::Column::Email.starts_with("bulk"));
    assert_eq!(bulk().all(db).await.expect("read").len(), MANY);
    let ahead = stack
        .replica(StackOptions {
            scheduler: ahead(1),
            ..StackOptions::new(stack.backend())
        })
        .await;
    eventually("every bulk learner is deactivated", async || {
        bulk()
            .filter(user::Column::Active.eq(true))
            .all(db)
            .await
            .expect("read")
            .is_empty()
    })
    .await;
    ahead.stop().await;
    let rows = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("user.set_active"))
        .all(db)
        .await
        .expect("audit rows");
    assert_eq!(rows.len(), MANY, "one row per user");
    assert!(rows.iter().all(|row| row.actor_user_id.is_none()));
    let entities: std::collections::HashSet<Uuid> = rows.iter().map(|row| row.entity_id).collect();
    assert_eq!(entities.len(), MANY);
    let left = bulk()
        .filter(user::Column::ScheduledDeactivationDate.is_not_null())
        .all(db)
        .await
        .expect("read");
    assert!(left.is_empty(), "every date removed");
}
