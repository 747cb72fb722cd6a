//! The bulk lifecycle calls of directory provisioning (provisioning.md sections 2 to 5).

use super::Resource;
use super::node::{Node, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, bounded_id_list, element, id, id_in, reference, required, with_xml_name,
};

const TAG: &str = "Users";

const EXAMPLE_ID: &str = "0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60";

const CHANGERS: &str = "Account owners and administrators; department administrators and custom roles with `user.update` for users of the departments they manage and their descendants, never for account owners or administrators.";

const ALL_OR_NOTHING: &str = "Judged in this order, the first failure answering with nothing changed: 403 for a caller without the right; 400 naming `userIds` for a missing or empty list, more than 10,000 `id` entries (counted as sent, repeats then counting once) or a malformed id; 400 naming `userIds` and the id for an id naming no user of the account; 403 for a user outside a scoped caller's departments, or an account owner or administrator named by one.";

/// The body `<request><userIds>…</userIds></request>` / `{"userIds": […]}`.
fn user_ids_body() -> Vec<Media> {
    vec![
        Media::xml(reference("UserIds")).example(format!(
            "<request><userIds><id>{EXAMPLE_ID}</id></userIds></request>"
        )),
        Media::json(reference("UserIds")).example(object! { "userIds" => vec![EXAMPLE_ID] }),
    ]
}

/// One of the three bulk status calls; `rule` says which users it changes.
fn set_status(
    path: &'static str,
    id: &'static str,
    summary: &'static str,
    rule: &str,
) -> Operation {
    Operation::post(path, TAG, id)
        .describe(
            summary,
            &format!(
                "{rule} A repeated call changes nothing more and answers 200 again. One transaction: each user whose status changes gets one `user.set_active` audit row. A user leaving status 1 is refused from its next request on (password or token), and its access tokens stay refused when it is active again; its API clients stay. {ALL_OR_NOTHING} 409 when no active account owner would remain. {CHANGERS}"
            ),
        )
        .body(
            "1 to 10,000 user ids. The XML root is `request`.",
            user_ids_body(),
        )
        .empty(200, "Done; the body is empty.")
        .errors(&[403])
}

pub(crate) fn resource() -> Resource {
    let operations = vec![
        set_status(
            "/users/activate",
            "activateUsers",
            "Activate users",
            "Sets status 1 on each named user with status 3 or 5; active users stay as they are.",
        ),
        set_status(
            "/users/deactivate",
            "deactivateUsers",
            "Deactivate users",
            "Sets status 3 on each named active user; users with status 3 or 5 stay as they are.",
        )
        .errors(&[409]),
        set_status(
            "/users/terminate",
            "terminateUsers",
            "End users' employment",
            "Sets status 5 on each named user with status 1 or 3; users with status 5 stay as they are.",
        )
        .errors(&[409]),
        Operation::post("/users/find_existing", TAG, "findExistingUsers")
            .describe(
                "Which ids name users",
                "The ids among those sent that name a user of the account the caller may read (any status), each once, ascending. Unknown ids, other accounts' ids and users outside a scoped caller's departments are left out, never an error. 400 naming `userIds` for a missing or empty list, more than 10,000 ids or a malformed one. Account owners and administrators; department administrators and custom roles with `user.read` for users of the departments they manage and their descendants.",
            )
            .body("1 to 10,000 user ids. The XML root is `request`.", user_ids_body())
            .answer(
                200,
                "The ids found: `<response><id>…</id>…</response>` (`<response/>` when none), in JSON a top-level array.",
                both("FoundUserIds"),
            )
            .errors(&[403]),
        Operation::post("/department/{department_id}/user/move", TAG, "moveUsers")
            .describe(
                "Move users into a department",
                &format!(
                    "Every named user gets the path's department as its own; users already there stay as they are. One transaction: one `user.update` audit row (`departmentId` before and after) per moved user. {ALL_OR_NOTHING} 404 for a department that names nothing in the account; 403 for a scoped caller whose departments do not hold the target. Account owners and administrators; department administrators and custom roles with `user.update` for the department and users of the departments they manage."
                ),
            )
            .path_id("department_id", "The department the users move into.")
            .body("1 to 10,000 user ids. The XML root is `request`.", user_ids_body())
            .empty(204, "Moved; no body.")
            .errors(&[403]),
        Operation::post("/user/{user_id}/groups/remove", TAG, "removeUserFromGroups")
            .describe(
                "Take a user out of groups",
                &format!(
                    "Takes the user out of the named plain groups; a group it is not in is ignored, so a retry answers 200. 400 naming `groupIds` for a missing or empty list, more than 10,000 ids, a malformed id, or one naming no group of the account or a smart group. Audited as `user.update` (`groupIds` before and after) when something changed. {CHANGERS}"
                ),
            )
            .path_id("user_id", "The user.")
            .body(
                "1 to 10,000 group ids. The XML root is `request`.",
                vec![
                    Media::xml(reference("GroupIdsToLeave")).example(format!(
                        "<request><groupIds><id>{EXAMPLE_ID}</id></groupIds></request>"
                    )),
                    Media::json(reference("GroupIdsToLeave"))
                        .example(object! { "groupIds" => vec![EXAMPLE_ID] }),
                ],
            )
            .empty(200, "Done; the body is empty.")
            .errors(&[403]),
    ];
    Resource {
        operations,
        schemas: vec![
            ("UserIds".into(), ids_body("userIds", "A user.")),
            (
                "GroupIdsToLeave".into(),
                ids_body("groupIds", "A plain group."),
            ),
            ("FoundUserIds".into(), found_ids()),
        ],
    }
}

/// `<request><NAME><id>…</id>…</NAME></request>`: 1 to 10,000 ids.
fn ids_body(name: &'static str, item: &str) -> Node {
    element(
        "request",
        "The ids.",
        vec![required(
            name,
            bounded_id_list(
                id_in(item),
                "1 to 10,000 ids; repeated ids count once.",
                1,
                10_000,
            ),
        )],
        Others::Ignored,
    )
}

fn found_ids() -> Node {
    object! {
        "type" => "array",
        "description" => "The ids found, ascending: XML `<id>` elements directly under `<response>`; JSON a top-level array of strings.",
        "items" => with_xml_name(id("A user."), "id"),
        "xml" => object! { "name" => "response", "wrapped" => true },
    }
}
