//! The bulk lifecycle calls of directory provisioning (provisioning.md sections 2 to 5) and
//! scheduled deactivation and termination (section 6).

use super::Resource;
use super::node::{Node, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, bounded_id_list, element, formatted, id, id_in, reference, required, with_xml_name,
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

/// The stored date of one kind of scheduled change: `POST` sets it, `DELETE` removes it.
struct Scheduled {
    path: &'static str,
    ids: [&'static str; 2],
    summaries: [&'static str; 2],
    /// What the change does at its date.
    change: &'static str,
}

fn scheduled(kind: Scheduled) -> [Operation; 2] {
    let Scheduled {
        path,
        ids: [set_id, cancel_id],
        summaries: [set_summary, cancel_summary],
        change,
    } = kind;
    let set = Operation::post(path, TAG, set_id)
        .describe(
            set_summary,
            &format!(
                "A date after today (the UTC date plus `--scheduler-date-offset-days`) is stored, replacing the date of this kind; the profile shows it. At 00:00 UTC of that day the core {change}, as the bulk call would, with a `user.set_active` audit row naming no actor, and removes the date; a core that was down then does it at its next start, and several cores do it once. A date on or before today is carried out at once in this request, and nothing of this kind stays stored. Storing or removing a date is audited as `user.schedule` (both dates before and after); setting the date already stored changes nothing. 400 naming `date` unless it is a day of the calendar written exactly `YYYY-MM-DD`; 409 when a change made at once would leave no active account owner. {CHANGERS}"
            ),
        )
        .path_id("user_id", "The user.")
        .body(
            "The day, `YYYY-MM-DD` (UTC). The XML root is `request`.",
            vec![
                Media::xml(reference("ScheduledDate"))
                    .example("<request><date>2026-12-31</date></request>"),
                Media::json(reference("ScheduledDate")).example(object! { "date" => "2026-12-31" }),
            ],
        )
        .empty(200, "Stored, or carried out; the body is empty.")
        .errors(&[403, 409]);
    let cancel = Operation::delete(path, TAG, cancel_id)
        .describe(
            cancel_summary,
            &format!(
                "Removes the stored date of this kind, audited as `user.schedule`; with none stored it changes nothing and answers 200 too. {CHANGERS}"
            ),
        )
        .path_id("user_id", "The user.")
        .empty(200, "No date of this kind is stored; the body is empty.")
        .errors(&[403]);
    [set, cancel]
}

pub(crate) fn resource() -> Resource {
    let [schedule_deactivation, cancel_deactivation] = scheduled(Scheduled {
        path: "/user/{user_id}/scheduled_deactivation",
        ids: ["scheduleUserDeactivation", "cancelUserDeactivation"],
        summaries: [
            "Schedule a user's deactivation",
            "Cancel a scheduled deactivation",
        ],
        change: "sets status 3 if the user is still active",
    });
    let [schedule_termination, cancel_termination] = scheduled(Scheduled {
        path: "/user/{user_id}/scheduled_termination",
        ids: ["scheduleUserTermination", "cancelUserTermination"],
        summaries: [
            "Schedule the end of a user's employment",
            "Cancel a scheduled end of employment",
        ],
        change: "sets status 5 if the user has status 1 or 3",
    });
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
        schedule_deactivation,
        cancel_deactivation,
        schedule_termination,
        cancel_termination,
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
            ("ScheduledDate".into(), scheduled_date()),
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

/// `<request><date>YYYY-MM-DD</date></request>`.
fn scheduled_date() -> Node {
    element(
        "request",
        "The day a scheduled change falls due.",
        vec![required(
            "date",
            formatted(
                "date",
                "A day of the calendar written exactly `YYYY-MM-DD` (UTC): `2026-1-5` and `2026-02-30` are refused.",
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
