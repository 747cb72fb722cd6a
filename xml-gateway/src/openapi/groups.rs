//! Groups (interface 4.3, 4.4; neighbours.md section 7).

use super::Resource;
use super::components::parameter;
use super::node::{Node, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, bounded_text, digit_flag, element, id, id_in, id_list, integer, optional, page,
    reference, required, response_of, text, whole_list,
};
use crate::listing::Paged;
use crate::routes::group::Groups;

const TAG: &str = "Groups";

const READERS: &str = "Account owners and administrators, department administrators and custom roles with `group.read`.";

pub(crate) fn resource() -> Resource {
    let operations = vec![
        Operation::get("/group", TAG, "listGroups")
            .describe(
                "Every group",
                &format!("Every group of the account, ascending by id, streamed as it is read. `isSmart` is `true`/`false` here (as iSpring writes it in this list), 0/1 in the other group answers. {READERS}"),
            )
            .answer(200, "The groups.", both("GroupList"))
            .errors(&[403]),
        Operation::post("/group", TAG, "createGroup")
            .describe(
                "Create a group",
                "Creates a group named `name` (not blank, at most 255 characters) with the users of `userIds` (optional; `<userIds/>` or `[]` for none). Account owners and administrators, department administrators and custom roles with `group.create`.",
            )
            .body(
                "The new group. The XML root is `request`.",
                vec![
                    Media::xml(reference("NewGroup")).example(
                        "<request><name>New Hires</name><userIds><id>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</id></userIds></request>",
                    ),
                    Media::json(reference("NewGroup")).example(object! {
                        "name" => "New Hires",
                        "userIds" => vec!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60"],
                    }),
                ],
            )
            .answer(201, "The new group's id: `<response>ID</response>`, or the JSON string `\"ID\"`.", both("CreatedId"))
            .errors(&[403, 409]),
        Operation::get("/group/{group_id}", TAG, "getGroup")
            .describe(
                "Read a group",
                &format!("One group with its members' ids, ascending (a smart group's members are computed from its rule). An author gets `usersCount` and an empty `userIds`. {READERS} Authors too."),
            )
            .path_id("group_id", "The group.")
            .answer(
                200,
                "The group: in XML inside `<response>`, in JSON the bare object.",
                vec![
                    Media::xml(reference("GroupDocument")),
                    Media::json(reference("Group")),
                ],
            )
            .errors(&[403]),
        Operation::post("/group/{group_id}", TAG, "renameGroup")
            .describe(
                "Rename a group",
                "Renames the group; without `name` nothing changes. Account owners and administrators, department administrators and custom roles with `group.update`.",
            )
            .path_id("group_id", "The group to rename.")
            .body(
                "The new name. The XML root is `request`.",
                vec![
                    Media::xml(reference("GroupName"))
                        .example("<request><name>Interns 2026</name></request>"),
                    Media::json(reference("GroupName")).example(object! { "name" => "Interns 2026" }),
                ],
            )
            .empty(200, "Renamed; the body is empty.")
            .errors(&[403, 409]),
        Operation::delete("/group/{group_id}", TAG, "deleteGroup")
            .describe(
                "Delete a group",
                "Deletes the group (its users stay). Account owners and administrators, department administrators and custom roles with `group.delete`.",
            )
            .path_id("group_id", "The group to delete.")
            .empty(204, "Deleted; no body.")
            .errors(&[403]),
        Operation::post("/group/{group_id}/members", TAG, "replaceGroupMembers")
            .describe(
                "Replace a group's members",
                "Makes `userIds` the group's members; an empty list removes every member. For a department administrator or custom role (`group.members`) every user sent is added, but only members in the caller's scope are removed. A smart group has no stored members: 400.",
            )
            .path_id("group_id", "The group.")
            .body(
                "The members. `userIds` is required. The XML root is `request`.",
                vec![
                    Media::xml(reference("GroupMembers")).example(
                        "<request><userIds><id>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</id></userIds></request>",
                    ),
                    Media::json(reference("GroupMembers")).example(object! {
                        "userIds" => vec!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60"],
                    }),
                ],
            )
            .empty(200, "Replaced; the body is empty.")
            .errors(&[403, 409]),
        Operation::get("/groups", TAG, "pageGroups")
            .describe(
                "One page of groups",
                &format!("The account's groups, one page at a time, ascending by id. {READERS}"),
            )
            .query(parameter("pageSize"))
            .query(parameter("pageToken"))
            .answer(200, "One page.", both("GroupPage"))
            .errors(&[403]),
    ];
    Resource {
        operations,
        schemas: vec![
            ("Group".into(), group()),
            ("GroupDocument".into(), response_of("group", "Group")),
            ("ListedGroup".into(), listed_group(false)),
            ("PagedGroup".into(), listed_group(true)),
            (
                "GroupList".into(),
                whole_list(
                    "ListedGroup",
                    "Every group: XML `<group>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
            (
                "GroupPage".into(),
                page(Groups::PAGE_ELEMENT, "PagedGroup", "One page of groups."),
            ),
            ("NewGroup".into(), new_group()),
            ("GroupName".into(), group_name()),
            ("GroupMembers".into(), group_members()),
        ],
    }
}

fn group() -> Node {
    element(
        "group",
        "A group, its elements in this order.",
        vec![
            required("usersCount", integer("How many users are members.")),
            required(
                "userIds",
                id_list(
                    id("A member."),
                    "The members, ascending; empty (`<userIds/>`, `[]`) for an author.",
                ),
            ),
            required("groupId", id("The group's id.")),
            required("name", text("Its name.")),
            required(
                "isSmart",
                digit_flag(
                    "1 for a smart group (members are a department subtree's users), else 0.",
                ),
            ),
        ],
        Others::Refused,
    )
}

/// A row of the whole list (`isSmart` a boolean) or of a page (0 or 1).
fn listed_group(paged: bool) -> Node {
    let is_smart = if paged {
        digit_flag("1 for a smart group, else 0.")
    } else {
        object! { "type" => "boolean", "description" => "Whether the group is smart." }
    };
    element(
        "group",
        "A group in a list.",
        vec![
            required("groupId", id("The group's id.")),
            required("name", text("Its name.")),
            required("isSmart", is_smart),
        ],
        Others::Refused,
    )
}

fn new_group() -> Node {
    element(
        "request",
        "A new group.",
        vec![
            required("name", bounded_text("Its name, not blank.", 255)),
            optional(
                "userIds",
                id_list(id_in("A user of the account."), "Its first members."),
            ),
        ],
        Others::Ignored,
    )
}

fn group_name() -> Node {
    element(
        "request",
        "A group's new name.",
        vec![optional(
            "name",
            bounded_text("The new name, not blank; absent changes nothing.", 255),
        )],
        Others::Ignored,
    )
}

fn group_members() -> Node {
    element(
        "request",
        "A group's new members.",
        vec![required(
            "userIds",
            id_list(
                id_in("A user of the account."),
                "The members; empty removes every member (of the caller's scope).",
            ),
        )],
        Others::Ignored,
    )
}
