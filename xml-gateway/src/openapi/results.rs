//! Learner results (results.md): the two result lists, final statuses, recording and tasks.

use super::Resource;
use super::components::{list_filter, parameter};
use super::node::{Node, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, bounded_id_list, digit_flag, element, formatted, id, id_in, integer, one_of_texts,
    optional, page, reference, required, text, whole_list,
};
use crate::listing::Listing;
use crate::routes::results::{CourseResults, ModuleResults};

const TAG: &str = "Learner results";

const READERS: &str = "Account owners and administrators see every learner; department administrators and custom roles with `results.read` the learners of the departments they manage and their descendants (others' rows are absent).";

const WRITERS: &str = "Account owners and administrators; department administrators and custom roles with `results.write` for learners in their scope (one learner outside it: 403 and nothing changes).";

const STATUSES: [&str; 9] = [
    "not_started",
    "in_progress",
    "pending",
    "complete",
    "passed",
    "accepted",
    "incomplete",
    "failed",
    "declined",
];

fn filter_meaning(name: &str) -> &'static str {
    match name {
        "userIds" => "Only results of these learners.",
        "courseIds" => "Only results in these content items.",
        "departmentIds" => "Only learners whose department is one of these or below one of them.",
        "enrollmentIds" => "Only these enrollments' results.",
        "completionStatuses" => {
            "Only results whose effective status is one of these (the nine statuses, lower case)."
        }
        "userStatuses" => {
            "Only learners of these statuses (1 active, 3 blocked, 5 employment ended); absent: active only."
        }
        _ => "Only results in these content items (each item is its own single module).",
    }
}

fn window(name: &'static str, bound: &str) -> Node {
    object! {
        "name" => format!("{name}[{bound}]"),
        "in" => "query",
        "required" => false,
        "description" => format!("The {bound} of the `{name}` window, inclusive: `YYYY-MM-DD` (a start at 00:00:00 UTC, an end the whole day) or an RFC 3339 date-time. A start later than the end is 400."),
        "schema" => object! { "type" => "string" },
    }
}

fn listing(mut operation: Operation, filters: &[&str], windows: &[&'static str]) -> Operation {
    for name in filters {
        operation = operation.query(list_filter(name, filter_meaning(name)));
    }
    for name in windows {
        operation = operation
            .query(window(name, "startDate"))
            .query(window(name, "endDate"));
    }
    operation
        .query(parameter("pageSize"))
        .query(parameter("pageToken"))
}

fn task_answer(operation: Operation) -> Operation {
    operation
        .answer(
            200,
            "Applied; the task is already complete.",
            both("ResultTask"),
        )
        .errors(&[403])
}

pub(crate) fn resource() -> Resource {
    let operations = vec![
        listing(
            Operation::get("/learners/results", TAG, "listLearnerResults").describe(
                "One page of course results",
                &format!("One row per enrollment the caller may see that every filter selects, ascending by enrollment id; also under `/api/v1/learners/results`. {READERS}"),
            ),
            CourseResults::FILTERS,
            CourseResults::WINDOWS,
        )
        .answer(200, "One page.", both("LearnerResultPage"))
        .errors(&[403]),
        listing(
            Operation::get("/learners/modules/results", TAG, "listLearnerModuleResults").describe(
                "One page of module results",
                &format!("As the course results, one row per enrollment, each content item being its own single module; also under `/api/v1/learners/modules/results`. {READERS}"),
            ),
            ModuleResults::FILTERS,
            ModuleResults::WINDOWS,
        )
        .answer(200, "One page.", both("LearnerModuleResultPage"))
        .errors(&[403]),
        Operation::get("/content/{content_item_id}/final_statuses", TAG, "getFinalStatuses")
            .describe(
                "Final statuses of one content item",
                &format!("One entry per enrollment in the item whose learner is active, ascending by enrollment id, streamed. {READERS}"),
            )
            .path_id("content_item_id", "The content item.")
            .answer(200, "The statuses.", both("FinalStatusList"))
            .errors(&[403]),
        task_answer(
            Operation::post("/statistics/course", TAG, "setCourseStatus")
                .describe(
                    "Set course statuses",
                    &format!("Sets the administrator's status of the named enrollments' results in one transaction (`automatic` removes it). With an empty body the fields are read from the query string. Repeating a request changes nothing. {WRITERS}"),
                )
                .body(
                    "The course, the enrollments and the status. The XML root is `request`.",
                    vec![
                        Media::xml(reference("CourseStatus")).example(
                            "<request><courseId>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</courseId><enrollmentIds><id>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f61</id></enrollmentIds><status>passed</status><date>2025-12-31</date><awardedScore>80</awardedScore></request>",
                        ),
                        Media::json(reference("CourseStatus")).example(object! {
                            "courseId" => "0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60",
                            "enrollmentIds" => vec!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f61"],
                            "status" => "passed",
                            "date" => "2025-12-31",
                            "awardedScore" => 80_i64,
                        }),
                    ],
                ),
        ),
        task_answer(
            Operation::delete("/statistics/module", TAG, "resetModuleStatistics")
                .describe(
                    "Reset results",
                    &format!("Starts the named enrollments' results over: not started, every number 0, no dates, no administrator's status. {WRITERS}"),
                )
                .query(required_query("courseId", "The content item."))
                .query(list_filter("enrollmentIds", "The enrollments, 1 to 10,000, each in `courseId`."))
                .query(list_filter("contentItemIds", "Optional; each must be `courseId` (the item's only module).")),
        ),
        Operation::get("/task/{task_id}/status", TAG, "getTaskStatus")
            .describe(
                "Status of a task",
                "The status of a recording task. Owners and account administrators read every task of the account; other callers with a results right their own. Not a positive integer, unknown or another account's: 404.",
            )
            .path_id("task_id", "The task: a positive integer.")
            .answer(200, "The status.", both("TaskStatus"))
            .errors(&[403]),
    ];
    Resource {
        operations,
        schemas: vec![
            ("LearnerResult".into(), course_row()),
            ("LearnerModuleResult".into(), module_row()),
            (
                "LearnerResultPage".into(),
                page("results", "LearnerResult", "One page of course results."),
            ),
            (
                "LearnerModuleResultPage".into(),
                page(
                    "results",
                    "LearnerModuleResult",
                    "One page of module results.",
                ),
            ),
            ("FinalStatus".into(), final_status()),
            (
                "FinalStatusList".into(),
                whole_list(
                    "FinalStatus",
                    "The statuses: XML `<status>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
            ("CourseStatus".into(), course_status()),
            ("ResultTask".into(), task()),
            ("TaskStatus".into(), task_status()),
        ],
    }
}

fn required_query(name: &str, description: &str) -> Node {
    object! {
        "name" => name,
        "in" => "query",
        "required" => true,
        "description" => description,
        "schema" => object! { "type" => "string" },
    }
}

fn date(description: &str) -> Node {
    formatted(
        "date-time",
        &format!("{description} UTC with a numeric offset, `2025-02-01T12:30:00+00:00`."),
    )
}

fn score(description: &str) -> Node {
    object! {
        "type" => "number",
        "minimum" => 0_i64,
        "maximum" => 100_i64,
        "description" => format!("{description} 0 to 100, at most 2 decimals, written as the shortest decimal."),
    }
}

/// The row's elements after its identifying ones, shared by both lists.
fn common_tail(mut head: Vec<super::schema::Property>) -> Vec<super::schema::Property> {
    head.extend([
        required(
            "accessDate",
            date("When the learner was enrolled (the enrollment's access date)."),
        ),
        required(
            "completionStatus",
            one_of_texts(&STATUSES, "The effective completion status."),
        ),
        required(
            "isOverdue",
            digit_flag("1 when a due date has passed unfinished, or was passed by the completion."),
        ),
        required("enrollmentId", id("The enrollment.")),
        optional(
            "completionDate",
            date("When it was finished; absent when not finished."),
        ),
        optional(
            "dueDate",
            date("The enrollment's due date; absent when none."),
        ),
        optional(
            "expirationDate",
            date("The due date when the item locks after it; absent otherwise."),
        ),
        required("progress", integer("Percent done, 0 to 100.")),
        required("timeSpent", integer("Seconds spent.")),
        required("awardedScore", score("The score earned.")),
        required("passingScore", score("The score needed.")),
        required("viewsCount", integer("Times opened.")),
        optional(
            "lastViewDate",
            date("When it was last opened; absent when never."),
        ),
    ]);
    head
}

fn course_row() -> Node {
    element(
        "result",
        "One enrollment's course result, its elements in this order.",
        common_tail(vec![
            required("userId", id("The learner.")),
            required("courseId", id("The content item.")),
            required("courseTitle", text("The content item's title.")),
        ]),
        Others::Refused,
    )
}

fn module_row() -> Node {
    element(
        "result",
        "One enrollment's module result (the item is its own single module), its elements in this order.",
        common_tail(vec![
            required("userId", id("The learner.")),
            required("courseId", id("The content item.")),
            required("moduleId", id("The module: the content item.")),
            required("moduleTitle", text("The content item's title.")),
            required("courseItemId", id("The content item.")),
        ]),
        Others::Refused,
    )
}

fn final_status() -> Node {
    element(
        "status",
        "One active learner's result in the item, its elements in this order.",
        vec![
            required("userId", id("The learner.")),
            required(
                "status",
                one_of_texts(&STATUSES, "The effective completion status."),
            ),
            required("progress", integer("Percent done, 0 to 100.")),
            optional(
                "completionDate",
                date("When it was finished; absent when not finished."),
            ),
            optional(
                "lastViewDate",
                date("When it was last opened; absent when never."),
            ),
            required("enrollmentId", id("The enrollment.")),
        ],
        Others::Refused,
    )
}

fn course_status() -> Node {
    element(
        "request",
        "An administrator's status for results of one content item.",
        vec![
            required("courseId", id_in("The content item.")),
            required(
                "enrollmentIds",
                bounded_id_list(
                    id_in("An enrollment in `courseId`."),
                    "1 to 10,000 enrollment ids.",
                    1,
                    10_000,
                ),
            ),
            required(
                "status",
                one_of_texts(
                    &["complete", "passed", "failed", "incomplete", "automatic"],
                    "The status; `automatic` removes the administrator's status.",
                ),
            ),
            optional(
                "date",
                text(
                    "The completion date for `complete`, `passed` and `failed`: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS` (UTC) or RFC 3339.",
                ),
            ),
            optional("awardedScore", score("The score to show.")),
            optional(
                "reason",
                text("At most 1,000 characters; kept in the audit record only."),
            ),
        ],
        Others::Ignored,
    )
}

fn task() -> Node {
    element(
        "response",
        "The task that applied the change (JSON: the object without the wrapper).",
        vec![required(
            "taskId",
            integer("The task's id, a positive integer below 2^53."),
        )],
        Others::Refused,
    )
}

fn task_status() -> Node {
    element(
        "response",
        "A task's status (JSON: the object without the wrapper).",
        vec![required(
            "status",
            one_of_texts(
                &["waiting", "in_progress", "complete", "cancelled", "error"],
                "Always `complete`: every change is applied before it is answered.",
            ),
        )],
        Others::Refused,
    )
}
