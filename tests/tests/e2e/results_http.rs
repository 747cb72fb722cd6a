//! Learner results over HTTP (results.md): `GET /learners/results`,
//! `GET /learners/modules/results`, `GET /content/{id}/final_statuses`,
//! `POST /statistics/course`, `DELETE /statistics/module` and `GET /task/{id}/status`
//! through the real gateway and core: every prefix, both formats byte for byte, every filter
//! alone and combined in every spelling, one-sided windows, paging walks, each refusal with
//! its status and the parameter it names, scopes, tenants, tasks, and both kinds of
//! authentication. Tracked results are recorded through the core's `RecordResults`, as a
//! player would.

use lms_core::entities::enrollment;
use lms_proto::v1::{
    RecordResultsRequest, ResultRecord, directory_service_client::DirectoryServiceClient,
};
use lms_tests::{
    Reply, TestStack, get_json, json_ids, json_of, on_both_backends, post_json,
    rows::grant,
    uuid, walk_json_pages, walk_xml_pages,
    world::{self, Login, acme, globex},
    xml::{PROLOGUE, text_of},
    xml_ids,
};
use reqwest::Method;
use sea_orm::{ActiveModelTrait as _, EntityTrait as _, IntoActiveModel as _, Set};

on_both_backends!(
    every_route_answers_under_every_prefix_with_or_without_a_trailing_slash,
    a_known_path_with_another_method_is_405_with_allow,
    rows_are_written_byte_for_byte_with_every_field_or_their_omissions,
    empty_answers_have_their_empty_shapes,
    each_filter_selects_alone_in_every_spelling,
    filters_combine_and_windows_take_one_side_or_both,
    only_active_learners_are_listed_unless_user_statuses_says_otherwise,
    list_parameters_the_gateway_or_the_core_refuses_are_400_naming_them,
    callers_without_the_right_are_refused_403_before_any_parameter,
    scoped_callers_see_and_change_only_learners_in_their_subtrees,
    another_accounts_results_are_never_read_or_changed,
    pages_walk_every_result_once_and_tokens_stay_in_their_list,
    an_administrator_sets_statuses_from_xml_json_or_the_query_string,
    status_changes_refuse_bad_fields_naming_them_and_change_nothing,
    a_reset_starts_named_results_over,
    tasks_are_read_by_their_starter_and_administrators_only,
    a_token_alone_reads_and_records_results,
);

const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];
const RESULTS: &str = "/learners/results";
const MODULES: &str = "/learners/modules/results";
const COURSE_STATUS: &str = "/statistics/course";
const MODULE_STATISTICS: &str = "/statistics/module";
const ID: &str = "enrollmentId";

/// Acme's enrollments, ascending by id, with their learners' status (all active).
const ACME: [&str; 4] = [
    acme::LEARNER_WELCOME,
    acme::ENGINEER_WELCOME,
    acme::LEARNER_SECRET,
    acme::SUPPORTER_WELCOME,
];

/// The access and due dates the byte-exact rows are written with.
const SECRET_ACCESS: &str = "2025-01-10T09:00:00+00:00";
const SECRET_DUE: &str = "2025-02-10T00:00:00+00:00";
const WELCOME_ACCESS: &str = "2025-01-11T08:00:00+00:00";
const FINISHED: &str = "2025-02-01T12:30:00+00:00";

fn final_statuses(course: &str) -> String {
    format!("/content/{course}/final_statuses")
}

/// Sets the enrollment's access date, due date and lock, as the import would have.
async fn set_dates(stack: &TestStack, id: &str, access: &str, due: Option<&str>, lock: bool) {
    let found = enrollment::Entity::find_by_id(uuid(id))
        .one(stack.db())
        .await
        .expect("read")
        .expect("the enrollment");
    let at = |text: &str| chrono::DateTime::parse_from_rfc3339(text).unwrap().to_utc();
    let mut changed = found.into_active_model();
    changed.access_at = Set(Some(at(access)));
    changed.due_at = Set(due.map(at));
    changed.lock_after_due = Set(lock);
    changed.update(stack.db()).await.expect("dates set");
}

/// A tracked result in a finished status with every field.
fn passed(enrollment: &str) -> ResultRecord {
    ResultRecord {
        enrollment_id: enrollment.to_owned(),
        completion_status: "passed".into(),
        progress: 100,
        awarded_score: 92.5,
        passing_score: 80.0,
        time_spent: 5400,
        views_count: 4,
        completion_date: Some(FINISHED.into()),
        last_view_date: Some(FINISHED.into()),
    }
}

fn in_progress(enrollment: &str, progress: u32) -> ResultRecord {
    ResultRecord {
        enrollment_id: enrollment.to_owned(),
        completion_status: "in_progress".into(),
        progress,
        awarded_score: 83.33,
        passing_score: 80.0,
        time_spent: 60,
        views_count: 1,
        completion_date: None,
        last_view_date: Some(FINISHED.into()),
    }
}

/// Records tracked results as the owner, through the core's directory, as a player would.
async fn record(stack: &TestStack, results: Vec<ResultRecord>) {
    DirectoryServiceClient::new(stack.grpc_channel().await)
        .record_results(world::OWNER.grpc_request(RecordResultsRequest { results }))
        .await
        .expect("the results are recorded");
}

/// The world with dates on the learner's two enrollments and the secret course passed.
async fn with_results(stack: &TestStack) {
    set_dates(
        stack,
        acme::LEARNER_SECRET,
        SECRET_ACCESS,
        Some(SECRET_DUE),
        true,
    )
    .await;
    set_dates(stack, acme::LEARNER_WELCOME, WELCOME_ACCESS, None, false).await;
    record(stack, vec![passed(acme::LEARNER_SECRET)]).await;
}

/// The enrollment ids of a results page, asked as `login`.
async fn ids(stack: &TestStack, path: &str, login: Login) -> Vec<String> {
    xml_ids(&stack.get(path, login).await, ID)
}

async fn send(stack: &TestStack, method: Method, path: &str, login: Login) -> Reply {
    stack.send(method, path, login).await
}

/// `POST /statistics/course` with an XML body.
async fn set_status(stack: &TestStack, login: Login, fields: &str) -> Reply {
    stack
        .post_xml(
            COURSE_STATUS,
            login,
            &format!("<request>{fields}</request>"),
        )
        .await
}

fn status_fields(course: &str, enrollments: &[&str], status: &str, date: &str) -> String {
    let ids: String = enrollments
        .iter()
        .map(|id| format!("<id>{id}</id>"))
        .collect();
    format!(
        "<courseId>{course}</courseId><enrollmentIds>{ids}</enrollmentIds>\
         <status>{status}</status><date>{date}</date>"
    )
}

/// The one row of `enrollment` in the course results, as JSON.
async fn row(stack: &TestStack, enrollment: &str) -> serde_json::Value {
    let page = json_of(
        &get_json(
            stack,
            &format!("{RESULTS}?enrollmentIds={enrollment}&userStatuses=1,3,5"),
            world::OWNER,
        )
        .await,
    );
    assert_eq!(json_ids(&page["results"], ID), [enrollment], "{page}");
    page["results"][0].clone()
}

// ---------------------------------------------------------------------------------------------

async fn every_route_answers_under_every_prefix_with_or_without_a_trailing_slash(
    stack: &TestStack,
) {
    let task = text_of(
        &set_status(
            stack,
            world::OWNER,
            &status_fields(
                acme::WELCOME_COURSE,
                &[acme::ENGINEER_WELCOME],
                "passed",
                "2025-12-31",
            ),
        )
        .await
        .body,
        "taskId",
    )
    .expect("a task");
    for prefix in PREFIXES {
        for slash in ["", "/"] {
            for list in [RESULTS, MODULES] {
                let reply = stack
                    .get(&format!("{prefix}{list}{slash}"), world::OWNER)
                    .await;
                assert_eq!(xml_ids(&reply, ID), ACME, "{prefix}{list}{slash}");
            }
            let statuses = stack
                .get(
                    &format!("{prefix}{}{slash}", final_statuses(acme::WELCOME_COURSE)),
                    world::OWNER,
                )
                .await;
            assert_eq!(
                xml_ids(&statuses, ID),
                [
                    acme::LEARNER_WELCOME,
                    acme::ENGINEER_WELCOME,
                    acme::SUPPORTER_WELCOME
                ]
            );
            let status = stack
                .get(&format!("{prefix}/task/{task}/status{slash}"), world::OWNER)
                .await;
            assert_eq!(
                status.body,
                format!("{PROLOGUE}<response><status>complete</status></response>")
            );
            let set = stack
                .post_xml(
                    &format!("{prefix}{COURSE_STATUS}{slash}"),
                    world::OWNER,
                    &format!(
                        "<request>{}</request>",
                        status_fields(
                            acme::WELCOME_COURSE,
                            &[acme::ENGINEER_WELCOME],
                            "failed",
                            "2025-12-30"
                        )
                    ),
                )
                .await;
            assert_eq!(set.status, 200, "{}", set.body);
            let reset = send(
                stack,
                Method::DELETE,
                &format!(
                    "{prefix}{MODULE_STATISTICS}{slash}?courseId={}&enrollmentIds[]={}",
                    acme::WELCOME_COURSE,
                    acme::ENGINEER_WELCOME
                ),
                world::OWNER,
            )
            .await;
            assert!(text_of(&reset.body, "taskId").is_some(), "{}", reset.body);
        }
    }
    // The lists also answer under `/api/v1`, where a real client calls them.
    for path in [
        "/api/v1/learners/results",
        "/api/v1/learners/results/",
        "/api/v1/learners/modules/results",
    ] {
        assert_eq!(ids(stack, path, world::OWNER).await, ACME, "{path}");
    }
    stack
        .get("/api/v1/learners/users", world::OWNER)
        .await
        .assert_error(404, "no resource");
    stack
        .get(&format!("/api/v1/task/{task}/status"), world::OWNER)
        .await
        .assert_error(404, "no resource");
}

async fn a_known_path_with_another_method_is_405_with_allow(stack: &TestStack) {
    for (method, path, allowed) in [
        (Method::POST, RESULTS.to_owned(), "GET"),
        (Method::DELETE, MODULES.to_owned(), "GET"),
        (Method::PUT, final_statuses(acme::WELCOME_COURSE), "GET"),
        (Method::GET, COURSE_STATUS.to_owned(), "POST"),
        (Method::POST, MODULE_STATISTICS.to_owned(), "DELETE"),
        (Method::DELETE, "/task/1/status".to_owned(), "GET"),
        (Method::POST, "/api/v1/learners/results".to_owned(), "GET"),
    ] {
        let reply = send(stack, method.clone(), &path, world::OWNER).await;
        reply.assert_error(405, method.as_ref());
        let allow = reply.header("allow").unwrap_or_default();
        assert!(allow.contains(allowed), "{method} {path}: Allow {allow}");
    }
}

async fn rows_are_written_byte_for_byte_with_every_field_or_their_omissions(stack: &TestStack) {
    with_results(stack).await;
    let query = format!(
        "?enrollmentIds={},{}",
        acme::LEARNER_SECRET,
        acme::LEARNER_WELCOME
    );
    let (learner, secret, welcome) = (acme::LEARNER, acme::SECRET_COURSE, acme::WELCOME_COURSE);
    let (secret_id, welcome_id) = (acme::LEARNER_SECRET, acme::LEARNER_WELCOME);
    let tail = |id: &str, finished: bool| {
        if finished {
            format!(
                "<accessDate>{SECRET_ACCESS}</accessDate><completionStatus>passed</completionStatus>\
                 <isOverdue>0</isOverdue><enrollmentId>{id}</enrollmentId>\
                 <completionDate>{FINISHED}</completionDate><dueDate>{SECRET_DUE}</dueDate>\
                 <expirationDate>{SECRET_DUE}</expirationDate><progress>100</progress>\
                 <timeSpent>5400</timeSpent><awardedScore>92.5</awardedScore>\
                 <passingScore>80</passingScore><viewsCount>4</viewsCount>\
                 <lastViewDate>{FINISHED}</lastViewDate>"
            )
        } else {
            format!(
                "<accessDate>{WELCOME_ACCESS}</accessDate>\
                 <completionStatus>not_started</completionStatus><isOverdue>0</isOverdue>\
                 <enrollmentId>{id}</enrollmentId><progress>0</progress><timeSpent>0</timeSpent>\
                 <awardedScore>0</awardedScore><passingScore>0</passingScore>\
                 <viewsCount>0</viewsCount>"
            )
        }
    };
    let courses = stack.get(&format!("{RESULTS}{query}"), world::OWNER).await;
    assert_eq!(
        courses.body,
        format!(
            "{PROLOGUE}<response><results>\
             <result><userId>{learner}</userId><courseId>{welcome}</courseId>\
             <courseTitle>Welcome to Acme</courseTitle>{}</result>\
             <result><userId>{learner}</userId><courseId>{secret}</courseId>\
             <courseTitle>Secret plans</courseTitle>{}</result></results></response>",
            tail(welcome_id, false),
            tail(secret_id, true)
        )
    );
    assert_eq!(
        courses.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    let modules = stack.get(&format!("{MODULES}{query}"), world::OWNER).await;
    assert_eq!(
        modules.body,
        format!(
            "{PROLOGUE}<response><results>\
             <result><userId>{learner}</userId><courseId>{welcome}</courseId>\
             <moduleId>{welcome}</moduleId><moduleTitle>Welcome to Acme</moduleTitle>\
             <courseItemId>{welcome}</courseItemId>{}</result>\
             <result><userId>{learner}</userId><courseId>{secret}</courseId>\
             <moduleId>{secret}</moduleId><moduleTitle>Secret plans</moduleTitle>\
             <courseItemId>{secret}</courseItemId>{}</result></results></response>",
            tail(welcome_id, false),
            tail(secret_id, true)
        )
    );
    let json = get_json(stack, &format!("{RESULTS}{query}"), world::OWNER).await;
    assert_eq!(json.header("content-type"), Some("application/json"));
    assert_eq!(
        json.body,
        format!(
            r#"{{"results":[{{"userId":"{learner}","courseId":"{welcome}","courseTitle":"Welcome to Acme","accessDate":"{WELCOME_ACCESS}","completionStatus":"not_started","isOverdue":0,"enrollmentId":"{welcome_id}","progress":0,"timeSpent":0,"awardedScore":0,"passingScore":0,"viewsCount":0}},{{"userId":"{learner}","courseId":"{secret}","courseTitle":"Secret plans","accessDate":"{SECRET_ACCESS}","completionStatus":"passed","isOverdue":0,"enrollmentId":"{secret_id}","completionDate":"{FINISHED}","dueDate":"{SECRET_DUE}","expirationDate":"{SECRET_DUE}","progress":100,"timeSpent":5400,"awardedScore":92.5,"passingScore":80,"viewsCount":4,"lastViewDate":"{FINISHED}"}}]}}"#
        )
    );
    let json = get_json(stack, &format!("{MODULES}{query}"), world::OWNER).await;
    assert_eq!(
        json.body,
        format!(
            r#"{{"results":[{{"userId":"{learner}","courseId":"{welcome}","moduleId":"{welcome}","moduleTitle":"Welcome to Acme","courseItemId":"{welcome}","accessDate":"{WELCOME_ACCESS}","completionStatus":"not_started","isOverdue":0,"enrollmentId":"{welcome_id}","progress":0,"timeSpent":0,"awardedScore":0,"passingScore":0,"viewsCount":0}},{{"userId":"{learner}","courseId":"{secret}","moduleId":"{secret}","moduleTitle":"Secret plans","courseItemId":"{secret}","accessDate":"{SECRET_ACCESS}","completionStatus":"passed","isOverdue":0,"enrollmentId":"{secret_id}","completionDate":"{FINISHED}","dueDate":"{SECRET_DUE}","expirationDate":"{SECRET_DUE}","progress":100,"timeSpent":5400,"awardedScore":92.5,"passingScore":80,"viewsCount":4,"lastViewDate":"{FINISHED}"}}]}}"#
        )
    );
    // Final statuses: directly under <response>, or a top-level array.
    let statuses = stack.get(&final_statuses(secret), world::OWNER).await;
    assert_eq!(
        statuses.body,
        format!(
            "{PROLOGUE}<response><status><userId>{learner}</userId><status>passed</status>\
             <progress>100</progress><completionDate>{FINISHED}</completionDate>\
             <lastViewDate>{FINISHED}</lastViewDate><enrollmentId>{secret_id}</enrollmentId>\
             </status></response>"
        )
    );
    record(stack, vec![in_progress(acme::ENGINEER_WELCOME, 40)]).await;
    let statuses = get_json(stack, &final_statuses(welcome), world::OWNER).await;
    assert_eq!(
        statuses.body,
        format!(
            r#"[{{"userId":"{learner}","status":"not_started","progress":0,"enrollmentId":"{welcome_id}"}},{{"userId":"{}","status":"in_progress","progress":40,"lastViewDate":"{FINISHED}","enrollmentId":"{}"}},{{"userId":"{}","status":"not_started","progress":0,"enrollmentId":"{}"}}]"#,
            acme::ENGINEER,
            acme::ENGINEER_WELCOME,
            acme::SUPPORTER,
            acme::SUPPORTER_WELCOME
        )
    );
    // Scores keep their shortest decimal; an overdue result without a completion says 1.
    set_dates(
        stack,
        acme::ENGINEER_WELCOME,
        WELCOME_ACCESS,
        Some("2025-01-20T00:00:00+00:00"),
        false,
    )
    .await;
    let engineer = row(stack, acme::ENGINEER_WELCOME).await;
    assert_eq!(engineer["awardedScore"].to_string(), "83.33");
    assert_eq!(engineer["isOverdue"], 1);
    assert_eq!(engineer["dueDate"], "2025-01-20T00:00:00+00:00");
    assert!(engineer.get("expirationDate").is_none(), "{engineer}");
}

async fn empty_answers_have_their_empty_shapes(stack: &TestStack) {
    let none = format!("?userIds={}", acme::OWNER);
    for list in [RESULTS, MODULES] {
        let reply = stack.get(&format!("{list}{none}"), world::OWNER).await;
        assert_eq!(
            reply.body,
            format!("{PROLOGUE}<response><results/></response>")
        );
        let reply = get_json(stack, &format!("{list}{none}"), world::OWNER).await;
        assert_eq!(reply.body, r#"{"results":[]}"#);
    }
    let deleted = stack
        .post_xml(
            "/enrollment/delete",
            world::OWNER,
            &format!(
                "<DeleteEnrollments><enrollmentIds><id>{}</id></enrollmentIds></DeleteEnrollments>",
                acme::LEARNER_SECRET
            ),
        )
        .await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    let path = final_statuses(acme::SECRET_COURSE);
    assert_eq!(
        stack.get(&path, world::OWNER).await.body,
        format!("{PROLOGUE}<response/>")
    );
    assert_eq!(get_json(stack, &path, world::OWNER).await.body, "[]");
    // The deleted enrollment's result went with it.
    assert!(
        ids(
            stack,
            &format!("{RESULTS}?enrollmentIds={}", acme::LEARNER_SECRET),
            world::OWNER
        )
        .await
        .is_empty()
    );
}

async fn each_filter_selects_alone_in_every_spelling(stack: &TestStack) {
    with_results(stack).await;
    let learner = acme::LEARNER;
    for list in [RESULTS, MODULES] {
        for query in [
            format!("userIds={learner}"),
            format!("userIds={}", learner.to_uppercase()),
            format!("userIds={learner},{}", globex::WORKER),
            format!("userIds={learner}&userIds={}", acme::OWNER),
            format!("userIds[]={learner}&userIds[]={}", acme::OWNER),
            format!("userIds%5B%5D={learner}"),
            format!("userIds[0]={learner}&userIds[1]={}", acme::OWNER),
            format!("userIds%5B0%5D={learner}"),
            format!("userIds=&userIds={learner}"),
        ] {
            assert_eq!(
                ids(stack, &format!("{list}?{query}"), world::OWNER).await,
                [acme::LEARNER_WELCOME, acme::LEARNER_SECRET],
                "{list}?{query}"
            );
        }
    }
    let welcome = [
        acme::LEARNER_WELCOME,
        acme::ENGINEER_WELCOME,
        acme::SUPPORTER_WELCOME,
    ];
    for (query, expected) in [
        (format!("courseIds={}", acme::WELCOME_COURSE), &welcome[..]),
        (
            format!("courseIds[]={}", acme::SECRET_COURSE.to_uppercase()),
            &[acme::LEARNER_SECRET][..],
        ),
        (
            format!("departmentIds={}", acme::SALES),
            &[acme::LEARNER_WELCOME, acme::LEARNER_SECRET][..],
        ),
        (
            format!("departmentIds[]={}", acme::ENGINEERING),
            &[acme::ENGINEER_WELCOME][..],
        ),
        (format!("departmentIds={}", acme::ROOT), &ACME[..]),
        (
            format!(
                "enrollmentIds={},{}",
                acme::SUPPORTER_WELCOME,
                acme::ENGINEER_WELCOME
            ),
            &[acme::ENGINEER_WELCOME, acme::SUPPORTER_WELCOME][..],
        ),
        (
            "completionStatuses=passed".to_owned(),
            &[acme::LEARNER_SECRET][..],
        ),
        ("completionStatuses[]=not_started".to_owned(), &welcome[..]),
        ("completionStatuses=failed,complete".to_owned(), &[][..]),
        ("userStatuses=1".to_owned(), &ACME[..]),
        (
            "accessDate[endDate]=2025-01-10".to_owned(),
            &[acme::LEARNER_SECRET][..],
        ),
        (
            "dueDate%5BstartDate%5D=2025-01-01".to_owned(),
            &[acme::LEARNER_SECRET][..],
        ),
        (
            "completionDate[endDate]=2025-12-31".to_owned(),
            &[acme::LEARNER_SECRET][..],
        ),
    ] {
        for list in [RESULTS, MODULES] {
            assert_eq!(
                ids(stack, &format!("{list}?{query}"), world::OWNER).await,
                expected,
                "{list}?{query}"
            );
        }
    }
    // The module list's own filters name the content item, as its only module.
    for name in ["moduleIds", "courseItemIds"] {
        assert_eq!(
            ids(
                stack,
                &format!("{MODULES}?{name}[]={}", acme::SECRET_COURSE),
                world::OWNER
            )
            .await,
            [acme::LEARNER_SECRET],
            "{name}"
        );
    }
    // A well-formed id naming nothing, or another account's, matches nothing.
    for query in [
        format!("courseIds={}", globex::COURSE),
        format!("enrollmentIds={}", globex::ENROLLMENT),
        format!("departmentIds={}", globex::ROOT),
        "userIds=0191a000-0000-7000-8000-00000000ffff".to_owned(),
    ] {
        let reply = stack.get(&format!("{RESULTS}?{query}"), world::OWNER).await;
        assert!(xml_ids(&reply, ID).is_empty(), "{query}: {}", reply.body);
    }
}

async fn filters_combine_and_windows_take_one_side_or_both(stack: &TestStack) {
    with_results(stack).await;
    record(stack, vec![in_progress(acme::ENGINEER_WELCOME, 40)]).await;
    for (query, expected) in [
        (
            format!(
                "userIds={}&courseIds={}",
                acme::LEARNER,
                acme::WELCOME_COURSE
            ),
            &[acme::LEARNER_WELCOME][..],
        ),
        (
            format!(
                "courseIds={}&completionStatuses=passed",
                acme::WELCOME_COURSE
            ),
            &[][..],
        ),
        (
            format!(
                "departmentIds={}&completionStatuses=passed,in_progress",
                acme::ROOT
            ),
            &[acme::ENGINEER_WELCOME, acme::LEARNER_SECRET][..],
        ),
        (
            format!(
                "enrollmentIds={},{}&userIds={}",
                acme::LEARNER_SECRET,
                acme::ENGINEER_WELCOME,
                acme::ENGINEER
            ),
            &[acme::ENGINEER_WELCOME][..],
        ),
        // Windows: inclusive bounds, a date-only end meaning its whole day (UTC).
        (
            "accessDate[startDate]=2025-01-10&accessDate[endDate]=2025-01-11".to_owned(),
            &[acme::LEARNER_WELCOME, acme::LEARNER_SECRET][..],
        ),
        (
            "accessDate[startDate]=2025-01-11".to_owned(),
            &[
                acme::LEARNER_WELCOME,
                acme::ENGINEER_WELCOME,
                acme::SUPPORTER_WELCOME,
            ][..],
        ),
        // An unencoded `+` before the offset arrives as a space, and is read as `+`.
        (
            "accessDate[startDate]=2025-01-10T10:00:00+01:00\
             &accessDate[endDate]=2025-01-10T09:00:00Z"
                .to_owned(),
            &[acme::LEARNER_SECRET][..],
        ),
        (
            "accessDate%5BstartDate%5D=2025-01-10T09:00:00.001%2B00:00".to_owned(),
            &[
                acme::LEARNER_WELCOME,
                acme::ENGINEER_WELCOME,
                acme::SUPPORTER_WELCOME,
            ][..],
        ),
        (
            "completionDate[startDate]=2025-02-01T12:30:00.000Z&completionDate[endDate]="
                .to_owned(),
            &[acme::LEARNER_SECRET][..],
        ),
        ("completionDate[startDate]=2025-02-02".to_owned(), &[][..]),
        (
            "dueDate[endDate]=2025-02-09&dueDate[startDate]=".to_owned(),
            &[][..],
        ),
        (
            format!(
                "dueDate[endDate]=2025-02-10&courseIds={}&completionStatuses=passed\
                 &completionDate[startDate]=2025-02-01",
                acme::SECRET_COURSE
            ),
            &[acme::LEARNER_SECRET][..],
        ),
    ] {
        for list in [RESULTS, MODULES] {
            assert_eq!(
                ids(stack, &format!("{list}?{query}"), world::OWNER).await,
                expected,
                "{list}?{query}"
            );
        }
    }
}

async fn only_active_learners_are_listed_unless_user_statuses_says_otherwise(stack: &TestStack) {
    let blocked = stack
        .post_xml(
            &format!("/user/{}/status", acme::SUPPORTER),
            world::OWNER,
            "<request><status>3</status></request>",
        )
        .await;
    assert_eq!(blocked.status, 200, "{}", blocked.body);
    let active = &ACME[..3];
    assert_eq!(ids(stack, RESULTS, world::OWNER).await, active);
    assert_eq!(
        ids(stack, &format!("{MODULES}?userStatuses="), world::OWNER).await,
        active
    );
    assert_eq!(
        ids(stack, &format!("{RESULTS}?userStatuses=3"), world::OWNER).await,
        [acme::SUPPORTER_WELCOME]
    );
    assert_eq!(
        ids(
            stack,
            &format!("{MODULES}?userStatuses[]=1&userStatuses[]=3"),
            world::OWNER
        )
        .await,
        ACME
    );
    assert!(
        ids(stack, &format!("{RESULTS}?userStatuses=5"), world::OWNER)
            .await
            .is_empty()
    );
    // The final statuses hold active learners only.
    assert_eq!(
        xml_ids(
            &stack
                .get(&final_statuses(acme::WELCOME_COURSE), world::OWNER)
                .await,
            ID
        ),
        [acme::LEARNER_WELCOME, acme::ENGINEER_WELCOME]
    );
}

async fn list_parameters_the_gateway_or_the_core_refuses_are_400_naming_them(stack: &TestStack) {
    let before = stack.snapshot().await;
    let modules_token = text_of(
        &stack
            .get(&format!("{MODULES}?pageSize=1"), world::OWNER)
            .await
            .body,
        "nextPageToken",
    )
    .expect("a second page");
    let enrollments_token = text_of(
        &stack
            .get("/enrollments?pageSize=1", world::OWNER)
            .await
            .body,
        "nextPageToken",
    )
    .expect("a second page");
    for (query, needle) in [
        ("userIds=not-a-uuid".to_owned(), "userIds"),
        ("courseIds[]=42".to_owned(), "courseIds"),
        (format!("departmentIds={},x", acme::SALES), "departmentIds"),
        ("enrollmentIds%5B0%5D=%7B%7D".to_owned(), "enrollmentIds"),
        ("completionStatuses=PASSED".to_owned(), "completionStatuses"),
        ("completionStatuses=done".to_owned(), "completionStatuses"),
        ("userStatuses=2".to_owned(), "userStatuses"),
        ("userStatuses=active".to_owned(), "userStatuses"),
        (
            "accessDate[startDate]=yesterday".to_owned(),
            "accessDate[startDate]",
        ),
        ("dueDate[endDate]=2025-02-30".to_owned(), "dueDate[endDate]"),
        (
            "completionDate[startDate]=2025-02-01T12:30:00".to_owned(),
            "completionDate[startDate]",
        ),
        (
            "accessDate[startDate]=2025-02-02&accessDate[endDate]=2025-02-01".to_owned(),
            "accessDate",
        ),
        ("accessDate[from]=2025-01-01".to_owned(), "accessDate[from]"),
        ("accessDate=2025-01-01".to_owned(), "accessDate"),
        (
            "dueDate[startDate]=2025-01-01&dueDate%5BstartDate%5D=2025-01-02".to_owned(),
            "dueDate[startDate]",
        ),
        ("pageSize=0".to_owned(), "pageSize"),
        ("pageSize=10001".to_owned(), "pageSize"),
        ("pageSize=ten".to_owned(), "pageSize"),
        ("pageToken=bm90IGEgdG9rZW4".to_owned(), "pageToken"),
        (format!("pageToken={modules_token}"), "pageToken"),
        (format!("pageToken={enrollments_token}"), "pageToken"),
        ("learnerIds=a".to_owned(), "learnerIds"),
        ("moduleIds=a".to_owned(), "moduleIds"),
        ("userids=a".to_owned(), "userids"),
    ] {
        stack
            .get(&format!("{RESULTS}?{query}"), world::OWNER)
            .await
            .assert_error(400, needle);
    }
    // The module list refuses the same, and its own filters' malformed ids.
    for (query, needle) in [
        ("moduleIds=x".to_owned(), "moduleIds"),
        ("courseItemIds[]=x".to_owned(), "courseItemIds"),
        (
            "completionDate[to]=2025-01-01".to_owned(),
            "completionDate[to]",
        ),
        ("courseTitle=x".to_owned(), "courseTitle"),
    ] {
        stack
            .get(&format!("{MODULES}?{query}"), world::OWNER)
            .await
            .assert_error(400, needle);
    }
    // The final statuses take no parameter at all; their path id is a UUID of the account.
    stack
        .get(
            &format!(
                "{}?userIds={}",
                final_statuses(acme::WELCOME_COURSE),
                acme::LEARNER
            ),
            world::OWNER,
        )
        .await
        .assert_error(400, "userIds");
    for course in [
        "not-a-uuid",
        globex::COURSE,
        "0191a000-0000-7000-8000-00000000ffff",
    ] {
        stack
            .get(&final_statuses(course), world::OWNER)
            .await
            .assert_error(404, "not found");
    }
    assert_eq!(stack.snapshot().await, before, "reads change nothing");
}

async fn callers_without_the_right_are_refused_403_before_any_parameter(stack: &TestStack) {
    let before = stack.snapshot().await;
    let write = status_fields(
        acme::WELCOME_COURSE,
        &[acme::LEARNER_WELCOME],
        "passed",
        "2025-12-31",
    );
    for login in [
        world::AUTHOR,
        world::LEARNER,
        world::PUBLISHER,
        world::VIEWER,
        world::COORDINATOR,
    ] {
        for path in [
            RESULTS.to_owned(),
            format!("{MODULES}?pageSize=5"),
            format!("{RESULTS}?unknown=1"),
            format!("{RESULTS}?accessDate[from]=x&userStatuses=9"),
            format!("{MODULES}?pageSize=0"),
            final_statuses(acme::WELCOME_COURSE),
            format!("{}?x=1", final_statuses(acme::WELCOME_COURSE)),
        ] {
            stack
                .get(&path, login)
                .await
                .assert_error(403, "permission");
        }
        set_status(stack, login, &write)
            .await
            .assert_error(403, "permission");
        set_status(
            stack,
            login,
            "<courseId>x</courseId><awardedScore>abc</awardedScore>",
        )
        .await
        .assert_error(403, "permission");
        stack
            .post_xml(COURSE_STATUS, login, "<request><unclosed></request>")
            .await
            .assert_error(403, "permission");
        for query in [
            format!(
                "?courseId={}&enrollmentIds={}",
                acme::WELCOME_COURSE,
                acme::LEARNER_WELCOME
            ),
            "?unknown=1".to_owned(),
        ] {
            send(
                stack,
                Method::DELETE,
                &format!("{MODULE_STATISTICS}{query}"),
                login,
            )
            .await
            .assert_error(403, "permission");
        }
    }
    for login in [world::AUTHOR, world::LEARNER, world::PUBLISHER] {
        for task in ["1", "abc"] {
            stack
                .get(&format!("/task/{task}/status"), login)
                .await
                .assert_error(403, "permission");
        }
    }
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");
}

async fn scoped_callers_see_and_change_only_learners_in_their_subtrees(stack: &TestStack) {
    let sales = [acme::LEARNER_WELCOME, acme::LEARNER_SECRET];
    grant(stack, acme::COORDINATOR_ROLE, "results.read").await;
    grant(stack, acme::COORDINATOR_ROLE, "results.write").await;
    stack.forget_remembered_callers();
    for login in [world::DEPT_ADMIN, world::COORDINATOR] {
        for list in [RESULTS, MODULES] {
            assert_eq!(ids(stack, list, login).await, sales, "{list}");
            // A department above the scope selects the part of the scope below it.
            assert_eq!(
                ids(
                    stack,
                    &format!("{list}?departmentIds={}", acme::ROOT),
                    login
                )
                .await,
                sales
            );
            for query in [
                format!("departmentIds={}", acme::ENGINEERING),
                format!("userIds={}", acme::ENGINEER),
                format!("enrollmentIds={}", acme::SUPPORTER_WELCOME),
            ] {
                assert!(
                    ids(stack, &format!("{list}?{query}"), login)
                        .await
                        .is_empty(),
                    "{query}: rows out of scope are absent, not refused"
                );
            }
        }
        assert_eq!(
            xml_ids(
                &stack
                    .get(&final_statuses(acme::WELCOME_COURSE), login)
                    .await,
                ID
            ),
            [acme::LEARNER_WELCOME]
        );
    }
    // Changing an out-of-scope learner's result is refused, and changes nothing.
    let before = stack.snapshot().await;
    for login in [world::DEPT_ADMIN, world::COORDINATOR] {
        set_status(
            stack,
            login,
            &status_fields(
                acme::WELCOME_COURSE,
                &[acme::LEARNER_WELCOME, acme::ENGINEER_WELCOME],
                "passed",
                "2025-12-31",
            ),
        )
        .await
        .assert_error(403, "outside");
        send(
            stack,
            Method::DELETE,
            &format!(
                "{MODULE_STATISTICS}?courseId={}&enrollmentIds={}",
                acme::WELCOME_COURSE,
                acme::SUPPORTER_WELCOME
            ),
            login,
        )
        .await
        .assert_error(403, "outside");
    }
    assert_eq!(stack.snapshot().await, before);
    // In scope, the change lands.
    let set = set_status(
        stack,
        world::DEPT_ADMIN,
        &status_fields(
            acme::WELCOME_COURSE,
            &[acme::LEARNER_WELCOME],
            "complete",
            "2025-12-31",
        ),
    )
    .await;
    assert_eq!(set.status, 200, "{}", set.body);
    assert_eq!(
        row(stack, acme::LEARNER_WELCOME).await["completionStatus"],
        "complete"
    );
}

async fn another_accounts_results_are_never_read_or_changed(stack: &TestStack) {
    assert_eq!(
        ids(stack, RESULTS, world::GLOBEX_OWNER).await,
        [globex::ENROLLMENT]
    );
    assert_eq!(
        xml_ids(
            &stack
                .get(&final_statuses(globex::COURSE), world::GLOBEX_OWNER)
                .await,
            ID
        ),
        [globex::ENROLLMENT]
    );
    for query in [
        format!("userIds={}", globex::WORKER),
        format!("courseIds={}", globex::COURSE),
        format!("enrollmentIds={}", globex::ENROLLMENT),
        format!("departmentIds={}", globex::PLANT),
    ] {
        assert!(
            ids(stack, &format!("{MODULES}?{query}"), world::OWNER)
                .await
                .is_empty()
        );
    }
    stack
        .get(&final_statuses(globex::COURSE), world::OWNER)
        .await
        .assert_error(404, "not found");
    let before = stack.snapshot().await;
    set_status(
        stack,
        world::OWNER,
        &status_fields(
            globex::COURSE,
            &[globex::ENROLLMENT],
            "passed",
            "2025-12-31",
        ),
    )
    .await
    .assert_error(400, "courseId");
    set_status(
        stack,
        world::OWNER,
        &status_fields(
            acme::WELCOME_COURSE,
            &[globex::ENROLLMENT],
            "passed",
            "2025-12-31",
        ),
    )
    .await
    .assert_error(400, "enrollmentIds");
    send(
        stack,
        Method::DELETE,
        &format!(
            "{MODULE_STATISTICS}?courseId={}&enrollmentIds={}",
            globex::COURSE,
            globex::ENROLLMENT
        ),
        world::OWNER,
    )
    .await
    .assert_error(400, "courseId");
    assert_eq!(stack.snapshot().await, before);
    // Another account's task is unknown.
    let task = text_of(
        &set_status(
            stack,
            world::GLOBEX_OWNER,
            &status_fields(
                globex::COURSE,
                &[globex::ENROLLMENT],
                "passed",
                "2025-12-31",
            ),
        )
        .await
        .body,
        "taskId",
    )
    .expect("a task");
    stack
        .get(&format!("/task/{task}/status"), world::OWNER)
        .await
        .assert_error(404, "task");
}

async fn pages_walk_every_result_once_and_tokens_stay_in_their_list(stack: &TestStack) {
    let headers = world::OWNER.headers();
    for list in [RESULTS, MODULES, "/api/v1/learners/results"] {
        for size in [1, 3, 4] {
            let path = format!("{list}?pageSize={size}");
            let walk = walk_xml_pages(stack, &path, &headers, ID).await;
            assert_eq!(walk.ids, ACME, "{path}");
            walk.assert_full_before_last(size);
            assert_eq!(walk.tokens.len(), ACME.len().div_ceil(size) - 1, "{path}");
            let walk = walk_json_pages(stack, &path, &headers, "results", ID).await;
            assert_eq!(walk.ids, ACME, "{path}");
            walk.assert_full_before_last(size);
        }
    }
    // Filters apply on every page; the next request repeats them.
    let path = format!("{RESULTS}?courseIds={}&pageSize=2", acme::WELCOME_COURSE);
    let walk = walk_xml_pages(stack, &path, &headers, ID).await;
    assert_eq!(
        walk.ids,
        [
            acme::LEARNER_WELCOME,
            acme::ENGINEER_WELCOME,
            acme::SUPPORTER_WELCOME
        ]
    );
    assert_eq!(walk.sizes, [2, 1]);
    // A result recorded during a walk neither moves nor repeats a row.
    let first = stack
        .get(&format!("{RESULTS}?pageSize=2"), world::OWNER)
        .await;
    let token = text_of(&first.body, "nextPageToken").expect("a second page");
    record(
        stack,
        vec![
            passed(acme::LEARNER_WELCOME),
            in_progress(acme::SUPPORTER_WELCOME, 10),
        ],
    )
    .await;
    let second = stack
        .get(
            &format!("{RESULTS}?pageSize=2&pageToken={token}"),
            world::OWNER,
        )
        .await;
    assert_eq!([xml_ids(&first, ID), xml_ids(&second, ID)].concat(), ACME);
    assert!(text_of(&second.body, "nextPageToken").is_none());
    // A token of one list is refused by the other.
    stack
        .get(&format!("{MODULES}?pageToken={token}"), world::OWNER)
        .await
        .assert_error(400, "pageToken");
}

async fn an_administrator_sets_statuses_from_xml_json_or_the_query_string(stack: &TestStack) {
    record(stack, vec![in_progress(acme::LEARNER_WELCOME, 40)]).await;
    // XML, with a score.
    let reply = set_status(
        stack,
        world::ADMIN,
        &format!(
            "{}<awardedScore>80</awardedScore><reason>Offline exam</reason>",
            status_fields(
                acme::WELCOME_COURSE,
                &[acme::LEARNER_WELCOME, acme::SUPPORTER_WELCOME],
                "passed",
                "2025-12-31"
            )
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let task = text_of(&reply.body, "taskId").expect("a task");
    assert!(
        reply.body == format!("{PROLOGUE}<response><taskId>{task}</taskId></response>")
            && task.parse::<u64>().is_ok_and(|id| id > 0),
        "{}",
        reply.body
    );
    for id in [acme::LEARNER_WELCOME, acme::SUPPORTER_WELCOME] {
        let result = row(stack, id).await;
        assert_eq!(result["completionStatus"], "passed", "{result}");
        assert_eq!(result["completionDate"], "2025-12-31T00:00:00+00:00");
        assert_eq!(result["awardedScore"], 80);
    }
    // The tracked values other than status, score and date stay.
    assert_eq!(row(stack, acme::LEARNER_WELCOME).await["progress"], 40);
    // JSON, wrapped or not, a score as a string; the answer a number.
    for body in [
        format!(
            r#"{{"courseId":"{}","enrollmentIds":["{}"],"status":"failed","date":"2025-12-30 10:20:30","awardedScore":"12.5"}}"#,
            acme::WELCOME_COURSE,
            acme::LEARNER_WELCOME
        ),
        format!(
            r#"{{"request":{{"courseId":"{}","enrollmentIds":["{}"],"status":"failed","date":"2025-12-30T10:20:30Z","awardedScore":12.5,"reason":null}}}}"#,
            acme::WELCOME_COURSE,
            acme::LEARNER_WELCOME
        ),
    ] {
        let answer = json_of(&post_json(stack, COURSE_STATUS, world::OWNER, &body).await);
        assert!(
            answer["taskId"].as_u64().is_some_and(|id| id > 0),
            "{answer}"
        );
        let result = row(stack, acme::LEARNER_WELCOME).await;
        assert_eq!(result["completionStatus"], "failed");
        assert_eq!(result["completionDate"], "2025-12-30T10:20:30+00:00");
        assert_eq!(result["awardedScore"], 12.5);
    }
    // The query string with an empty body, as iSpring's own sample sends it.
    let query = format!(
        "?courseId={}&enrollmentIds[]={}&status=incomplete&awardedScore=70",
        acme::WELCOME_COURSE,
        acme::LEARNER_WELCOME
    );
    let reply = send(
        stack,
        Method::POST,
        &format!("{COURSE_STATUS}{query}"),
        world::OWNER,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let result = row(stack, acme::LEARNER_WELCOME).await;
    assert_eq!(result["completionStatus"], "incomplete");
    assert!(result.get("completionDate").is_none(), "{result}");
    assert_eq!(result["awardedScore"], 70);
    // `automatic` shows the tracked result again.
    let reply = send(
        stack,
        Method::POST,
        &format!(
            "{COURSE_STATUS}?courseId={}&enrollmentIds={}&status=automatic",
            acme::WELCOME_COURSE,
            acme::LEARNER_WELCOME
        ),
        world::OWNER,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let result = row(stack, acme::LEARNER_WELCOME).await;
    assert_eq!(result["completionStatus"], "in_progress");
    assert_eq!(result["awardedScore"], 83.33);
    assert!(result.get("completionDate").is_none(), "{result}");
    // Each change's task is complete.
    let status = json_of(&get_json(stack, &format!("/task/{task}/status/"), world::ADMIN).await);
    assert_eq!(status, serde_json::json!({"status": "complete"}));
}

async fn status_changes_refuse_bad_fields_naming_them_and_change_nothing(stack: &TestStack) {
    let before = stack.snapshot().await;
    let good = |status: &str, date: &str| {
        status_fields(acme::WELCOME_COURSE, &[acme::LEARNER_WELCOME], status, date)
    };
    for (fields, needle) in [
        (String::new(), "courseId"),
        (
            good("passed", "2025-12-31").replace(acme::WELCOME_COURSE, "x"),
            "courseId",
        ),
        (
            good("passed", "2025-12-31").replace(acme::WELCOME_COURSE, acme::SECRET_COURSE),
            "enrollmentIds",
        ),
        (
            format!(
                "<courseId>{}</courseId><status>passed</status>",
                acme::WELCOME_COURSE
            ),
            "enrollmentIds",
        ),
        (
            good("passed", "2025-12-31").replace(acme::LEARNER_WELCOME, "nope"),
            "enrollmentIds",
        ),
        (good("in_progress", "2025-12-31"), "status"),
        (good("not_started", "2025-12-31"), "status"),
        (good("Passed", "2025-12-31"), "status"),
        (good("passed", ""), "date"),
        (good("passed", "31.12.2025"), "date"),
        (good("incomplete", "not a date"), "date"),
        (
            format!(
                "{}<awardedScore>abc</awardedScore>",
                good("passed", "2025-12-31")
            ),
            "awardedScore",
        ),
        (
            format!(
                "{}<awardedScore>1e2</awardedScore>",
                good("passed", "2025-12-31")
            ),
            "awardedScore",
        ),
        (
            format!(
                "{}<awardedScore>100.5</awardedScore>",
                good("passed", "2025-12-31")
            ),
            "awardedScore",
        ),
        (
            format!("{}<awardedScore>-1</awardedScore>", good("automatic", "")),
            "awardedScore",
        ),
        (
            format!(
                "{}<reason>{}</reason>",
                good("passed", "2025-12-31"),
                "r".repeat(1001)
            ),
            "reason",
        ),
        (
            format!("{}<status>failed</status>", good("passed", "2025-12-31")),
            "status",
        ),
    ] {
        set_status(stack, world::OWNER, &fields)
            .await
            .assert_error(400, needle);
    }
    // A body and a query parameter together: which to believe cannot be known.
    stack
        .post_xml(
            &format!("{COURSE_STATUS}?status=failed"),
            world::OWNER,
            &format!("<request>{}</request>", good("passed", "2025-12-31")),
        )
        .await
        .assert_error(400, "\"status\"");
    for query in [
        format!(
            "?courseId={}&status=passed&date=2025-12-31&user=1",
            acme::WELCOME_COURSE
        ),
        format!("?courseId={0}&courseId={0}", acme::WELCOME_COURSE),
    ] {
        send(
            stack,
            Method::POST,
            &format!("{COURSE_STATUS}{query}"),
            world::OWNER,
        )
        .await
        .assert_error(400, "query parameter");
    }
    let malformed = stack
        .post_xml(COURSE_STATUS, world::OWNER, "<request><courseId>")
        .await;
    assert_eq!(malformed.status, 400, "{}", malformed.body);
    let json = post_json(
        stack,
        COURSE_STATUS,
        world::OWNER,
        r#"{"awardedScore":true}"#,
    )
    .await;
    assert_eq!(json.status, 400, "{}", json.body);
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");
}

async fn a_reset_starts_named_results_over(stack: &TestStack) {
    with_results(stack).await;
    let set = set_status(
        stack,
        world::OWNER,
        &status_fields(
            acme::SECRET_COURSE,
            &[acme::LEARNER_SECRET],
            "failed",
            "2025-03-01",
        ),
    )
    .await;
    assert_eq!(set.status, 200, "{}", set.body);
    let before = stack.snapshot().await;
    for (query, needle) in [
        (
            format!("enrollmentIds={}", acme::LEARNER_SECRET),
            "courseId",
        ),
        (format!("courseId={}", acme::SECRET_COURSE), "enrollmentIds"),
        (
            format!(
                "courseId={}&enrollmentIds={}&contentItemIds={}",
                acme::SECRET_COURSE,
                acme::LEARNER_SECRET,
                acme::WELCOME_COURSE
            ),
            "contentItemIds",
        ),
        (
            format!(
                "courseId={}&enrollmentIds={}",
                acme::WELCOME_COURSE,
                acme::LEARNER_SECRET
            ),
            "enrollmentIds",
        ),
        (
            format!(
                "courseId={}&enrollmentIds={}&status=x",
                acme::SECRET_COURSE,
                acme::LEARNER_SECRET
            ),
            "status",
        ),
    ] {
        send(
            stack,
            Method::DELETE,
            &format!("{MODULE_STATISTICS}?{query}"),
            world::OWNER,
        )
        .await
        .assert_error(400, needle);
    }
    assert_eq!(stack.snapshot().await, before);
    let reply = Reply::from(
        stack
            .request(
                Method::DELETE,
                &format!(
                    "{MODULE_STATISTICS}?courseId={0}&enrollmentIds[0]={1}&contentItemIds[]={0}",
                    acme::SECRET_COURSE,
                    acme::LEARNER_SECRET
                ),
                world::OWNER,
            )
            .header("Accept", "application/json")
            .send()
            .await
            .expect("request"),
    )
    .await;
    let answer = json_of(&reply);
    assert!(
        answer["taskId"].as_u64().is_some_and(|id| id > 0),
        "{answer}"
    );
    let result = row(stack, acme::LEARNER_SECRET).await;
    assert_eq!(result["completionStatus"], "not_started", "{result}");
    for (key, zero) in [
        ("progress", 0),
        ("timeSpent", 0),
        ("awardedScore", 0),
        ("passingScore", 0),
        ("viewsCount", 0),
    ] {
        assert_eq!(result[key], zero, "{key}");
    }
    for key in ["completionDate", "lastViewDate"] {
        assert!(result.get(key).is_none(), "{key}: {result}");
    }
    // The enrollment's own dates stay.
    assert_eq!(result["dueDate"], SECRET_DUE);
}

async fn tasks_are_read_by_their_starter_and_administrators_only(stack: &TestStack) {
    let reply = set_status(
        stack,
        world::DEPT_ADMIN,
        &status_fields(
            acme::WELCOME_COURSE,
            &[acme::LEARNER_WELCOME],
            "passed",
            "2025-12-31",
        ),
    )
    .await;
    let task = text_of(&reply.body, "taskId").expect("a task");
    let path = format!("/task/{task}/status");
    for login in [world::DEPT_ADMIN, world::OWNER, world::ADMIN] {
        let status = stack.get(&path, login).await;
        assert_eq!(
            status.body,
            format!("{PROLOGUE}<response><status>complete</status></response>"),
            "{login:?}"
        );
    }
    grant(stack, acme::COORDINATOR_ROLE, "results.write").await;
    stack.forget_remembered_callers();
    stack
        .get(&path, world::COORDINATOR)
        .await
        .assert_error(403, "only the tasks you started");
    for id in [
        "0",
        "-1",
        "+1",
        "1.5",
        "abc",
        "9007199254740992",
        "99999999999999999999",
        "0191a000-0000-7000-8000-000000000601",
        "9007199254740991",
    ] {
        stack
            .get(&format!("/task/{id}/status"), world::OWNER)
            .await
            .assert_error(404, "task");
    }
    stack
        .get(&format!("{path}?x=1"), world::OWNER)
        .await
        .assert_error(400, "\"x\"");
}

async fn a_token_alone_reads_and_records_results(stack: &TestStack) {
    let bearer = stack.bearer_for(acme::ADMIN).await;
    let get = |path: String| {
        let request = stack
            .http
            .get(format!("{}{path}", stack.base_url))
            .header("Authorization", bearer.clone());
        async move { Reply::send(request).await }
    };
    assert_eq!(xml_ids(&get(RESULTS.to_owned()).await, ID), ACME);
    assert_eq!(
        xml_ids(&get(final_statuses(acme::SECRET_COURSE)).await, ID),
        [acme::LEARNER_SECRET]
    );
    let reply = Reply::send(
        stack
            .http
            .post(format!(
                "{}{COURSE_STATUS}?courseId={}&enrollmentIds={}&status=complete&date=2025-12-31",
                stack.base_url,
                acme::SECRET_COURSE,
                acme::LEARNER_SECRET
            ))
            .header("Authorization", bearer.clone()),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let task = text_of(&reply.body, "taskId").expect("a task");
    assert!(
        get(format!("/task/{task}/status"))
            .await
            .body
            .contains("complete")
    );
    assert_eq!(
        row(stack, acme::LEARNER_SECRET).await["completionStatus"],
        "complete"
    );
}
