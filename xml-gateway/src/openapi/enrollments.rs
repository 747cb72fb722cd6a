//! Enrollments (interface 4.5; neighbours.md section 5).

use super::Resource;
use super::components::{list_filter, parameter};
use super::node::{Node, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, bounded_id_list, digit_flag, element, formatted, id, id_in, id_list, one_of_texts,
    optional, page, reference, required, text, whole_list,
};
use crate::listing::{Listing, Paged};
use crate::routes::enrollment::Enrollments;

const TAG: &str = "Enrollments";

const READERS: &str = "Account owners and administrators see every enrollment; department administrators, publishers and custom roles with `enrollment.read` those of learners in the departments they manage and their descendants.";

fn filter_meaning(name: &str) -> &'static str {
    match name {
        "learnerIds" => "Only enrollments of these learners.",
        "courseIds" => "Only enrollments in these content items.",
        _ => "Only these enrollments.",
    }
}

fn with_filters(mut operation: Operation) -> Operation {
    for name in Enrollments::FILTERS {
        operation = operation.query(list_filter(name, filter_meaning(name)));
    }
    operation
}

pub(crate) fn resource() -> Resource {
    let operations = vec![
        Operation::post("/enrollment/delete", TAG, "deleteEnrollments")
            .describe(
                "Delete enrollments",
                "Deletes the enrollments named (1 to 10,000 ids; repeated ids count once), all or nothing. Ids that name no enrollment of the account are ignored, so a retry still gets 204. One enrollment of a learner outside the caller's scope: 403 and nothing is deleted. Account owners and administrators; department administrators, publishers and custom roles with `enrollment.delete` for learners in their scope.",
            )
            .body(
                "The enrollments. The XML root is `DeleteEnrollments` (or `request`).",
                vec![
                    Media::xml(reference("DeleteEnrollments")).example(
                        "<DeleteEnrollments><enrollmentIds><id>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</id></enrollmentIds></DeleteEnrollments>",
                    ),
                    Media::json(reference("DeleteEnrollments")).example(object! {
                        "enrollmentIds" => vec!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60"],
                    }),
                ],
            )
            .empty(204, "Deleted (or already gone); no body.")
            .errors(&[403]),
        with_filters(Operation::get("/enrollment", TAG, "listEnrollments").describe(
            "Every matching enrollment",
            &format!("Every enrollment the caller may see that matches the filters (all filters given must match), ascending by id, streamed as it is read. {READERS}"),
        ))
        .answer(200, "The enrollments.", both("EnrollmentList"))
        .errors(&[403]),
        Operation::post("/enrollment", TAG, "enrollLearners")
            .describe(
                "Enroll learners",
                "Enrolls every learner of `learnerIds` in every content item of `courseIds`. Account owners and administrators; department administrators, publishers and custom roles with `enrollment.create` for learners in their scope.",
            )
            .body(
                "The learners, the items and the terms. The XML root is `request`.",
                vec![
                    Media::xml(reference("Enroll")).example(
                        "<request><courseIds><id>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</id></courseIds><learnerIds><id>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f61</id></learnerIds><accessDate>2026-12-01 09:00:00</accessDate><dueDateType>due_period</dueDateType><duePeriod>72</duePeriod></request>",
                    ),
                    Media::json(reference("Enroll")).example(object! {
                        "courseIds" => vec!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60"],
                        "learnerIds" => vec!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f61"],
                        "accessDate" => "2026-12-01 09:00:00",
                        "dueDateType" => "due_period",
                        "duePeriod" => "72",
                    }),
                ],
            )
            .empty(201, "Enrolled; no body.")
            .errors(&[403, 409]),
        with_filters(Operation::get("/enrollments", TAG, "pageEnrollments").describe(
            "One page of enrollments",
            &format!("The matching enrollments, one page at a time, ascending by id. {READERS}"),
        ))
        .query(parameter("pageSize"))
        .query(parameter("pageToken"))
        .answer(200, "One page.", both("EnrollmentPage"))
        .errors(&[403]),
        Operation::post("/enrollments", TAG, "pageEnrollmentsByBody")
            .describe(
                "One page of enrollments, asked in a body",
                "As the `GET`, the filters and the page given in the body, for filters longer than a URI holds.",
            )
            .body(
                "The filters and the page. The XML root is `request`.",
                vec![
                    Media::xml(reference("EnrollmentQuery")).example(
                        "<request><learnerIds><id>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f61</id></learnerIds><pageSize>100</pageSize></request>",
                    ),
                    Media::json(reference("EnrollmentQuery")).example(object! {
                        "learnerIds" => vec!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f61"],
                        "pageSize" => 100_i64,
                    }),
                ],
            )
            .answer(200, "One page.", both("EnrollmentPage"))
            .errors(&[403]),
    ];
    Resource {
        operations,
        schemas: vec![
            ("Enrollment".into(), enrollment()),
            (
                "EnrollmentList".into(),
                whole_list(
                    "Enrollment",
                    "Every matching enrollment: XML `<enrollment>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
            (
                "EnrollmentPage".into(),
                page(
                    Enrollments::PAGE_ELEMENT,
                    "Enrollment",
                    "One page of enrollments.",
                ),
            ),
            ("DeleteEnrollments".into(), delete_enrollments()),
            ("Enroll".into(), enroll()),
            ("EnrollmentQuery".into(), query()),
        ],
    }
}

fn enrollment() -> Node {
    element(
        "enrollment",
        "One learner enrolled in one content item, its elements in this order.",
        vec![
            required("enrollmentId", id("The enrollment's id.")),
            required("courseId", id("The content item.")),
            required("learnerId", id("The learner.")),
            required(
                "accessDate",
                formatted(
                    "date",
                    "From when the learner may open the item, `YYYY-MM-DD` (UTC).",
                ),
            ),
            optional(
                "dueDate",
                formatted(
                    "date",
                    "The due date, `YYYY-MM-DD` (UTC); absent when none.",
                ),
            ),
            optional(
                "expirationDate",
                formatted(
                    "date",
                    "The due date again when the item locks after it; absent otherwise.",
                ),
            ),
            required(
                "enrollmentTypeGroup",
                digit_flag(
                    "1 for an enrollment from the catalogue, 0 when an administrator assigned it.",
                ),
            ),
            required(
                "shouldLockAfterDueDate",
                digit_flag("1 when the item locks after the due date, else 0."),
            ),
        ],
        Others::Refused,
    )
}

fn delete_enrollments() -> Node {
    element(
        "DeleteEnrollments",
        "The enrollments to delete.",
        vec![required(
            "enrollmentIds",
            bounded_id_list(
                id_in("An enrollment."),
                "1 to 10,000 enrollment ids.",
                1,
                10_000,
            ),
        )],
        Others::Ignored,
    )
}

fn enroll() -> Node {
    let date = |description: &str| {
        object! {
            "type" => "string",
            "description" => format!("{description} `YYYY-MM-DD HH:MM:SS` (UTC) or RFC 3339."),
            "examples" => vec!["2026-12-01 09:00:00"],
        }
    };
    element(
        "request",
        "Learners to enroll in content items: every pair of the two lists.",
        vec![
            required(
                "courseIds",
                bounded_id_list(
                    id_in("A content item."),
                    "The content items (at least one).",
                    1,
                    10_000,
                ),
            ),
            required(
                "learnerIds",
                bounded_id_list(
                    id_in("A learner."),
                    "The learners (at least one).",
                    1,
                    10_000,
                ),
            ),
            optional(
                "accessDate",
                date("When the learners may start; now when absent."),
            ),
            optional(
                "dueDateType",
                one_of_texts(
                    &["unlimited", "default", "due_date", "due_period"],
                    "How the due date is set; `unlimited` when absent.",
                ),
            ),
            optional("dueDate", date("The due date, required for `due_date`.")),
            optional(
                "duePeriod",
                text("Hours from the access date, required for `due_period`."),
            ),
            optional(
                "lockAfterDueDate",
                object! { "type" => "boolean", "description" => "Whether the items lock after the due date (`true`/`false`; `1`/`0` are read alike)." },
            ),
        ],
        Others::Ignored,
    )
}

fn query() -> Node {
    let list = |description: &str| {
        let mut ids = id_list(
            object! { "type" => "string" },
            &format!(
                "{description} Each child's text is a value (children of any name), or the element's own text split at commas; in JSON an array of strings or one comma-separated string."
            ),
        );
        ids.set("maxItems", 10_000_u64);
        ids
    };
    element(
        "request",
        "Which enrollments, and which page.",
        vec![
            optional("learnerIds", list("Only enrollments of these learners.")),
            optional(
                "courseIds",
                list("Only enrollments in these content items."),
            ),
            optional("enrollmentIds", list("Only these enrollments.")),
            optional(
                "pageSize",
                super::schema::integer_between(
                    "How many rows a page holds, 1,000 when absent.",
                    1,
                    10_000,
                ),
            ),
            optional(
                "pageToken",
                text("The `nextPageToken` of the previous page; absent or empty for the first."),
            ),
        ],
        Others::Ignored,
    )
}
