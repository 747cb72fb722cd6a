//! Departments (interface 4.1, 4.2; neighbours.md section 3).

use super::Resource;
use super::components::parameter;
use super::node::{Node, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, bounded_text, element, id, id_in, one_of_texts, optional, page, reference, required,
    response_of, text, whole_list,
};
use crate::listing::Paged;
use crate::routes::department::Departments;

const TAG: &str = "Departments";

const SCOPE: &str = "Account owners and administrators see every department; department administrators, publishers and custom roles with `department.read` the departments they manage and their descendants.";

pub(crate) fn resource() -> Resource {
    let operations = vec![
        Operation::get("/department", TAG, "listDepartments")
            .describe(
                "Every department",
                &format!("Every department the caller may see, ascending by id, streamed as it is read (no paging; `GET /departments` pages). {SCOPE}"),
            )
            .answer(200, "The departments.", both("DepartmentList"))
            .errors(&[403]),
        Operation::post("/department", TAG, "createDepartment")
            .describe(
                "Create a department",
                "Creates a department under `parentDepartmentId`. `name` is required (not blank, at most 255 characters), `code` optional (at most 64). Account owners and administrators; custom roles with `department.create` under a parent in their scope.",
            )
            .body(
                "The new department. The XML root is `request`.",
                vec![
                    Media::xml(reference("NewDepartment")).example(
                        "<request><name>Sales</name><parentDepartmentId>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</parentDepartmentId><code>S-1</code></request>",
                    ),
                    Media::json(reference("NewDepartment")).example(object! {
                        "name" => "Sales",
                        "parentDepartmentId" => "0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60",
                        "code" => "S-1",
                    }),
                ],
            )
            .answer(201, "The new department's id: `<response>ID</response>`, or the JSON string `\"ID\"`.", both("CreatedId"))
            .errors(&[403, 409]),
        Operation::get("/department/{department_id}", TAG, "getDepartment")
            .describe("Read a department", &format!("One department. {SCOPE}"))
            .path_id("department_id", "The department.")
            .answer(
                200,
                "The department: in XML inside `<response>`, in JSON the bare object.",
                vec![
                    Media::xml(reference("DepartmentDocument")),
                    Media::json(reference("Department")),
                ],
            )
            .errors(&[403]),
        Operation::post("/department/{department_id}", TAG, "updateDepartment")
            .describe(
                "Update a department",
                "Changes the fields given; none at all changes nothing. A present `name` must not be blank; a present but empty `code` clears the code; the new parent must be in the account and not the department itself or one of its descendants. Account owners and administrators; department administrators and custom roles with `department.update` for a department and a new parent in their scope.",
            )
            .path_id("department_id", "The department to change.")
            .body(
                "The fields to change. The XML root is `request`.",
                vec![
                    Media::xml(reference("DepartmentChanges"))
                        .example("<request><name>Sales (EMEA)</name><code/></request>"),
                    Media::json(reference("DepartmentChanges"))
                        .example(object! { "name" => "Sales (EMEA)", "code" => "" }),
                ],
            )
            .empty(204, "Changed; no body.")
            .errors(&[403, 409]),
        Operation::delete("/department/{department_id}", TAG, "deleteDepartment")
            .describe(
                "Delete a department",
                "Deletes an empty department. The root, a department with users or sub-departments, and one that someone manages are refused with 400 naming why. Account owners and administrators; department administrators and custom roles with `department.delete` within their scope.",
            )
            .path_id("department_id", "The department to delete.")
            .empty(204, "Deleted; no body.")
            .errors(&[403]),
        Operation::get("/departments", TAG, "pageDepartments")
            .describe(
                "One page of departments",
                &format!("The departments the caller may see, one page at a time, ascending by id. {SCOPE}"),
            )
            .query(parameter("pageSize"))
            .query(parameter("pageToken"))
            .answer(200, "One page.", both("DepartmentPage"))
            .errors(&[403]),
    ];
    Resource {
        operations,
        schemas: vec![
            ("Department".into(), department()),
            (
                "DepartmentDocument".into(),
                response_of("department", "Department"),
            ),
            (
                "DepartmentList".into(),
                whole_list(
                    "Department",
                    "Every department: XML `<department>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
            (
                "DepartmentPage".into(),
                page(
                    Departments::PAGE_ELEMENT,
                    "Department",
                    "One page of departments.",
                ),
            ),
            ("NewDepartment".into(), new_department()),
            ("DepartmentChanges".into(), department_changes()),
            ("CreatedId".into(), created_id()),
        ],
    }
}

fn subordination() -> Node {
    element(
        "subordination",
        "Who supervises the department. No supervisors are kept: the root has `no_supervisor`, every other department `inherit`.",
        vec![required(
            "subordinationType",
            one_of_texts(
                &["inherit", "no_supervisor"],
                "How the supervisor is found.",
            ),
        )],
        Others::Refused,
    )
}

fn department() -> Node {
    let mut co_subordination = subordination();
    co_subordination.set("xml", object! { "name" => "coSubordination" });
    element(
        "department",
        "A department, its elements in this order.",
        vec![
            required("departmentId", id("The department's id.")),
            required("name", text("Its name.")),
            optional(
                "parentDepartmentId",
                id("Its parent; absent for the account's root department."),
            ),
            optional("code", text("Its code; absent when it has none.")),
            required("subordination", subordination()),
            required("coSubordination", co_subordination),
        ],
        Others::Refused,
    )
}

fn new_department() -> Node {
    element(
        "request",
        "A new department.",
        vec![
            required("name", bounded_text("Its name, not blank.", 255)),
            required(
                "parentDepartmentId",
                id_in("The department it goes under, in the caller's account."),
            ),
            optional(
                "code",
                bounded_text("Its code; absent or `null` for none.", 64),
            ),
        ],
        Others::Ignored,
    )
}

fn department_changes() -> Node {
    element(
        "request",
        "The fields to change; an absent (or `null`) field stays as it is.",
        vec![
            optional("name", bounded_text("The new name, not blank.", 255)),
            optional(
                "parentDepartmentId",
                id_in(
                    "The new parent: in the account, not the department itself nor a descendant.",
                ),
            ),
            optional("code", bounded_text("The new code; empty clears it.", 64)),
        ],
        Others::Ignored,
    )
}

/// `<response>ID</response>`, or the JSON string.
fn created_id() -> Node {
    object! {
        "type" => "string",
        "format" => "uuid",
        "description" => "The new item's id: the text of `<response>` in XML, a JSON string.",
        "xml" => object! { "name" => "response" },
    }
}
