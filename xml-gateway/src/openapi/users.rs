//! Users (neighbours.md section 4).

use super::Resource;
use super::components::{list_filter, parameter};
use super::node::{Node, list, object};
use super::operation::{Media, Operation, both};
use super::schema::{
    Others, bounded_id_list, bounded_text, element, formatted, id, id_in, id_list, integer_between,
    one_of_texts, optional, page, reference, required, response_of, text, whole_list,
    with_xml_name,
};
use crate::listing::{Listing, Paged};
use crate::routes::user::Version;
use crate::routes::user::list::{Users, V1};

const TAG: &str = "Users";

const READERS: &str = "Account owners and administrators see every user; department administrators and custom roles with `user.read` the users of the departments they manage and their descendants.";

const V2: &str = "The `/v2` form names the XML element `userProfileV2`; its JSON is the same.";

/// What each of the user list's filters narrows to.
fn filter(name: &str) -> Node {
    let description = match name {
        "departments" => "Only users whose own department is one of these.",
        "groups" => "Only stored members of one of these groups.",
        "logins" => "Only users with one of these logins (compared case-insensitively).",
        _ => "Only users with one of these e-mail addresses.",
    };
    list_filter(name, description)
}

fn with_filters(mut operation: Operation) -> Operation {
    for name in Users::<V1>::FILTERS {
        operation = operation.query(filter(name));
    }
    operation
}

fn whole(path: &'static str, id: &'static str, version: Version) -> Operation {
    let (list, note) = match version {
        Version::V1 => ("UserList", ""),
        Version::V2 => ("UserV2List", V2),
    };
    with_filters(Operation::get(path, TAG, id).describe(
        "Every matching user",
        &format!("Every user the caller may see that matches the filters (all filters given must match), ascending by id, streamed as it is read. {note} {READERS}"),
    ))
    .answer(200, "The users.", both(list))
    .errors(&[403])
}

fn paged_by_query(path: &'static str, id: &'static str, version: Version) -> Operation {
    let (page, note) = match version {
        Version::V1 => ("UserPage", ""),
        Version::V2 => ("UserV2Page", V2),
    };
    with_filters(Operation::get(path, TAG, id).describe(
        "One page of users",
        &format!(
            "The matching users, one page at a time, ascending by id. {note} {READERS} Authors too."
        ),
    ))
    .query(parameter("pageSize"))
    .query(parameter("pageToken"))
    .answer(200, "One page.", both(page))
    .errors(&[403])
}

fn paged_by_body(path: &'static str, id: &'static str, version: Version) -> Operation {
    let (page, note) = match version {
        Version::V1 => ("UserPage", ""),
        Version::V2 => ("UserV2Page", V2),
    };
    Operation::post(path, TAG, id)
        .describe(
            "One page of users, asked in a body",
            &format!("As the `GET`, the filters and the page given in the body, for filters longer than a URI holds. {note}"),
        )
        .body("The filters and the page. The XML root is `request`.", list_body_media())
        .answer(200, "One page.", both(page))
        .errors(&[403])
}

fn list_body_media() -> Vec<Media> {
    vec![
        Media::xml(reference("UserQuery")).example(
            "<request><departments><id>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</id></departments><pageSize>100</pageSize></request>",
        ),
        Media::json(reference("UserQuery")).example(object! {
            "departments" => vec!["0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60"],
            "pageSize" => 100_i64,
        }),
    ]
}

pub(crate) fn resource() -> Resource {
    let profile_answer = |version: Version| {
        let document = match version {
            Version::V1 => "UserProfileDocument",
            Version::V2 => "UserProfileV2Document",
        };
        vec![
            Media::xml(reference(document)),
            Media::json(reference("UserProfile")),
        ]
    };
    let operations = vec![
        whole("/user", "listUsers", Version::V1),
        Operation::post("/user", TAG, "createUser")
            .describe(
                "Create a user",
                "Adds a user to `departmentId`. `fields` carries `login` (the sign-in name; without it the e-mail address is the login), `email`, `first_name`, `last_name` and any other profile field by name (`job_title`, `phone`, …). `role` is `learner` when absent. A login or e-mail address already used in the account is 409, the message ending with the existing user's id. Account owners and administrators, department administrators and custom roles with `user.create` in their scope.",
            )
            .body(
                "The new user. The XML root is `request`. In JSON, `fields` may also be a list of `{\"name\", \"value\"}` pairs, and `login` and `email` may be given at the top level.",
                vec![
                    Media::xml(reference("NewUser")).example(
                        "<request><departmentId>0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60</departmentId><password>a long password</password><role>learner</role><fields><login>ann.lee</login><email>ann.lee@example.com</email><first_name>Ann</first_name><last_name>Lee</last_name><job_title>Analyst</job_title></fields></request>",
                    ),
                    Media::json(reference("NewUser")).example(object! {
                        "departmentId" => "0198f0a2-5b1c-7e3d-8a4f-1c2b3d4e5f60",
                        "password" => "a long password",
                        "role" => "learner",
                        "fields" => object! {
                            "login" => "ann.lee",
                            "email" => "ann.lee@example.com",
                            "first_name" => "Ann",
                            "last_name" => "Lee",
                            "job_title" => "Analyst",
                        },
                    }),
                ],
            )
            .answer(201, "The new user's id: `<response>ID</response>`, or the JSON string `\"ID\"`.", both("CreatedId"))
            .errors(&[403, 409]),
        whole("/user/v2", "listUsersV2", Version::V2),
        Operation::post("/user/list", TAG, "numberUsers")
            .describe(
                "A numbered page of users",
                &format!("The matching users by page number (`page`, from 1) rather than by token, with the number of all matching users. {READERS}"),
            )
            .body(
                "The filters, `page` and `pageSize`. The XML root is `request`.",
                vec![
                    Media::xml(reference("NumberedUserQuery"))
                        .example("<request><page>2</page><pageSize>50</pageSize></request>"),
                    Media::json(reference("NumberedUserQuery"))
                        .example(object! { "page" => 2_i64, "pageSize" => 50_i64 }),
                ],
            )
            .answer(200, "The page.", both("NumberedUserPage"))
            .errors(&[403]),
        Operation::get("/user/{user_id}", TAG, "getUser")
            .describe("Read a user", &format!("One user's profile. {READERS}"))
            .path_id("user_id", "The user.")
            .answer(200, "The profile: in XML inside `<response>`, in JSON the bare object.", profile_answer(Version::V1))
            .errors(&[403]),
        Operation::post("/user/{user_id}", TAG, "updateUser")
            .describe(
                "Update a user",
                "Changes what is given, in the body of `POST /user`: profile fields (an empty value removes an optional field), `role`, `roleId`, `departmentId`, `groupIds`, `manageableDepartmentIds`; empty `role` and `departmentId` change nothing. Account owners and administrators, department administrators and custom roles with `user.update` in their scope.",
            )
            .path_id("user_id", "The user to change.")
            .body(
                "The changes. The XML root is `request`.",
                vec![
                    Media::xml(reference("UserChanges")).example(
                        "<request><fields><job_title>Lead analyst</job_title></fields></request>",
                    ),
                    Media::json(reference("UserChanges")).example(object! {
                        "fields" => object! { "job_title" => "Lead analyst" },
                    }),
                ],
            )
            .empty(200, "Changed; the body is empty.")
            .errors(&[403, 409]),
        Operation::delete("/user/{user_id}", TAG, "deleteUser")
            .describe(
                "Delete a user",
                "Deletes the user. The last active account owner cannot be deleted (409). Account owners and administrators, department administrators and custom roles with `user.delete` in their scope.",
            )
            .path_id("user_id", "The user to delete.")
            .empty(204, "Deleted; no body.")
            .errors(&[403, 409]),
        Operation::get("/user/{user_id}/v2", TAG, "getUserV2")
            .describe("Read a user (v2)", &format!("As `GET /user/{{user_id}}`. {V2} {READERS}"))
            .path_id("user_id", "The user.")
            .answer(200, "The profile: in XML inside `<response>`, in JSON the bare object.", profile_answer(Version::V2))
            .errors(&[403]),
        Operation::post("/user/{user_id}/password", TAG, "changeUserPassword")
            .describe(
                "Set a user's password",
                "Sets a new password (8 to 1,024 characters). The user's cached sign-ins are forgotten; its tokens stay valid. As `POST /user/{user_id}`.",
            )
            .path_id("user_id", "The user.")
            .body(
                "The password. The XML root is `request`.",
                vec![
                    Media::xml(reference("NewPassword"))
                        .example("<request><password>another long password</password></request>"),
                    Media::json(reference("NewPassword"))
                        .example(object! { "password" => "another long password" }),
                ],
            )
            .empty(200, "Set; the body is empty.")
            .errors(&[403]),
        Operation::post("/user/{user_id}/status", TAG, "changeUserStatus")
            .describe(
                "Set a user's status",
                "1 active, 3 blocked, 5 employment ended; a user that is not active cannot sign in, and its tokens stop working. The last active account owner cannot be deactivated (409). As `POST /user/{user_id}`.",
            )
            .path_id("user_id", "The user.")
            .body(
                "The status. The XML root is `request`.",
                vec![
                    Media::xml(reference("NewStatus")).example("<request><status>3</status></request>"),
                    Media::json(reference("NewStatus")).example(object! { "status" => 3_i64 }),
                ],
            )
            .empty(200, "Set; the body is empty.")
            .errors(&[403, 409]),
        paged_by_query("/users", "pageUsers", Version::V1),
        paged_by_body("/users", "pageUsersByBody", Version::V1),
        paged_by_query("/users/v2", "pageUsersV2", Version::V2),
        paged_by_body("/users/v2", "pageUsersV2ByBody", Version::V2),
    ];
    let v1 = Version::V1.profile_element();
    let v2 = Version::V2.profile_element();
    let mut profile_v2 = profile(v2);
    profile_v2.set(
        "description",
        "A user's profile, as `UserProfile`, under the element name of the `/v2` routes.",
    );
    Resource {
        operations,
        schemas: vec![
            ("UserProfile".into(), profile(v1)),
            ("UserProfileV2".into(), profile_v2),
            (
                "UserProfileDocument".into(),
                response_of("userProfile", "UserProfile"),
            ),
            (
                "UserProfileV2Document".into(),
                response_of("userProfileV2", "UserProfileV2"),
            ),
            (
                "UserList".into(),
                whole_list(
                    "UserProfile",
                    "Every matching user: XML `<userProfile>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
            (
                "UserV2List".into(),
                whole_list(
                    "UserProfileV2",
                    "Every matching user: XML `<userProfileV2>` elements directly under `<response>`; JSON a top-level array.",
                ),
            ),
            (
                "UserPage".into(),
                page(
                    Users::<V1>::PAGE_ELEMENT,
                    "UserProfile",
                    "One page of users.",
                ),
            ),
            (
                "UserV2Page".into(),
                page(
                    Users::<V1>::PAGE_ELEMENT,
                    "UserProfileV2",
                    "One page of users (`/v2`).",
                ),
            ),
            ("NumberedUserPage".into(), numbered_page()),
            ("UserQuery".into(), user_query(false)),
            ("NumberedUserQuery".into(), user_query(true)),
            ("NewUser".into(), user_body(true)),
            ("UserChanges".into(), user_body(false)),
            ("NewPassword".into(), new_password()),
            ("NewStatus".into(), new_status()),
        ],
    }
}

fn optional_ids(description: &str) -> Node {
    let mut ids = id_list(id("A department."), description);
    ids.set("minItems", 1_u64);
    ids
}

/// The profile (neighbours.md 4.1) as `element`.
fn profile(element_name: &str) -> Node {
    let field = element(
        "field",
        "One profile field.",
        vec![
            required(
                "name",
                text(
                    "Its name, upper-case: `FIRST_NAME`, `LAST_NAME`, `LOGIN`, `EMAIL`, `JOB_TITLE`, …",
                ),
            ),
            required("value", text("Its value; empty when not given.")),
        ],
        Others::Refused,
    );
    let user_role = element(
        "userRole",
        "The user's role.",
        vec![
            required("roleId", id("As `roleId` of the profile.")),
            required(
                "roleType",
                one_of_texts(
                    &[
                        "owner",
                        "administrator",
                        "department_administrator",
                        "publisher",
                        "studio_author",
                        "learner",
                        "custom",
                    ],
                    "As `role`, an author being `studio_author`.",
                ),
            ),
            optional(
                "manageableDepartmentIds",
                optional_ids("The departments the user manages; absent when none."),
            ),
        ],
        Others::Refused,
    );
    element(
        element_name,
        "A user's profile, its elements in this order (empty lists are left out).",
        vec![
            required(
                "role",
                one_of_texts(
                    &[
                        "owner",
                        "administrator",
                        "department_administrator",
                        "publisher",
                        "author",
                        "learner",
                        "custom",
                    ],
                    "The user's role.",
                ),
            ),
            required(
                "roleId",
                id("The custom role's id, or the built-in role's fixed id in this account."),
            ),
            required("userId", id("The user's id.")),
            required("departmentId", id("The user's own department.")),
            required(
                "status",
                object! { "type" => "integer", "enum" => list![1_i64, 3_i64, 5_i64], "description" => "1 active, 3 blocked, 5 employment ended." },
            ),
            required(
                "fields",
                object! {
                    "type" => "array",
                    "description" => "The profile fields: always `FIRST_NAME`, `LAST_NAME`, `LOGIN` and `EMAIL` (empty ones with an empty value), then the others given, by name.",
                    "minItems" => 4_u64,
                    "items" => field,
                    "xml" => object! { "wrapped" => true },
                },
            ),
            required(
                "addedDate",
                formatted("date", "When the user was added, `YYYY-MM-DD` (UTC)."),
            ),
            optional(
                "lastLoginDate",
                formatted(
                    "date",
                    "When the user last made an authenticated request, `YYYY-MM-DD` (UTC); absent when never.",
                ),
            ),
            optional(
                "scheduledDeactivationDate",
                formatted(
                    "date",
                    "The UTC day a scheduled deactivation falls due, `YYYY-MM-DD`; absent when none is stored (`POST /user/{user_id}/scheduled_deactivation`).",
                ),
            ),
            optional(
                "scheduledTerminationDate",
                formatted(
                    "date",
                    "The UTC day a scheduled end of employment falls due, `YYYY-MM-DD`; absent when none is stored (`POST /user/{user_id}/scheduled_termination`).",
                ),
            ),
            optional("groups", {
                let mut groups = id_list(
                    id("A group."),
                    "The groups the user is a stored member of, ascending; absent when none.",
                );
                groups.set("minItems", 1_u64);
                groups
            }),
            optional(
                "manageableDepartmentIds",
                optional_ids("The departments the user manages, ascending; absent when none."),
            ),
            required(
                "userRoles",
                object! {
                    "type" => "array",
                    "description" => "The user's one role, with its managed departments.",
                    "minItems" => 1_u64,
                    "maxItems" => 1_u64,
                    "items" => user_role,
                    "xml" => object! { "wrapped" => true },
                },
            ),
        ],
        Others::Refused,
    )
}

fn numbered_page() -> Node {
    element(
        "response",
        "A numbered page of users.",
        vec![
            required(
                "pageNumber",
                object! { "type" => "integer", "minimum" => 1_i64, "description" => "The page's number, from 1." },
            ),
            required(
                "totalUsersNumber",
                object! { "type" => "integer", "minimum" => 0_i64, "description" => "How many users match, on every page." },
            ),
            required(
                Users::<V1>::PAGE_ELEMENT,
                object! {
                    "type" => "array",
                    "description" => "The page's users, ascending by id.",
                    "items" => reference("UserProfile"),
                    "xml" => object! { "wrapped" => true },
                },
            ),
        ],
        Others::Refused,
    )
}

/// The filters of the user list in a body, and its page (by token or, `numbered`, by number).
fn user_query(numbered: bool) -> Node {
    let text_list = |description: &str| {
        let mut list = id_list(
            object! { "type" => "string" },
            &format!(
                "{description} Each child's text is a value (children of any name), or the element's own text split at commas; in JSON an array of strings or one comma-separated string."
            ),
        );
        list.set("maxItems", 10_000_u64);
        list
    };
    let mut properties = vec![
        optional(
            "departments",
            text_list("Only users whose own department is one of these."),
        ),
        optional(
            "groups",
            text_list("Only stored members of one of these groups."),
        ),
        optional("logins", text_list("Only users with one of these logins.")),
        optional(
            "emails",
            text_list("Only users with one of these e-mail addresses."),
        ),
    ];
    if numbered {
        properties.push(optional(
            "page",
            integer_between("The page's number, 1 when absent.", 1, i64::from(u32::MAX)),
        ));
        properties.push(optional(
            "pageSize",
            integer_between("How many users a page holds, 1,000 when absent.", 1, 10_000),
        ));
    } else {
        properties.push(optional(
            "pageSize",
            integer_between("How many users a page holds, 1,000 when absent.", 1, 10_000),
        ));
        properties.push(optional(
            "pageToken",
            text("The `nextPageToken` of the previous page; absent or empty for the first."),
        ));
    }
    element(
        "request",
        "Which users, and which page.",
        properties,
        Others::Ignored,
    )
}

/// The body of `POST /user` (`new`) and `POST /user/{user_id}`.
fn user_body(new: bool) -> Node {
    let fields = object! {
        "type" => "object",
        "description" => "The profile fields by name (lower-case in XML, any case in JSON): `login`, `email`, `first_name`, `last_name`, and any other field (at most 100 fields of at most 1,000 characters each).",
        "properties" => object! {
            "login" => bounded_text("The sign-in name, unique in the account.", 255),
            "email" => bounded_text("The e-mail address, unique in the account.", 255),
            "first_name" => bounded_text("The first name.", 255),
            "last_name" => bounded_text("The last name.", 255),
        },
        "additionalProperties" => object! { "type" => "string", "maxLength" => 1_000_u64 },
    };
    let department = if new {
        required("departmentId", id_in("The user's own department."))
    } else {
        optional(
            "departmentId",
            id_in("The user's new department; empty changes nothing."),
        )
    };
    element(
        "request",
        if new {
            "A new user."
        } else {
            "The changes to a user; what is absent stays."
        },
        vec![
            department,
            optional(
                "password",
                object! { "type" => "string", "minLength" => 8_u64, "maxLength" => 1_024_u64, "description" => "The password (8 to 1,024 characters). Without one the user cannot sign in with a password." },
            ),
            optional(
                "role",
                one_of_texts(
                    &[
                        "owner",
                        "administrator",
                        "account_owner",
                        "account_administrator",
                        "department_administrator",
                        "publisher",
                        "author",
                        "learner",
                        "custom",
                    ],
                    "The role (`custom` with `roleId`); a learner when absent.",
                ),
            ),
            optional("roleId", id_in("The custom role, for `custom`.")),
            optional(
                "manageableDepartmentIds",
                bounded_id_list(
                    id_in("A department."),
                    "The departments the user manages.",
                    0,
                    10_000,
                ),
            ),
            optional(
                "groupIds",
                bounded_id_list(
                    id_in("A group."),
                    "The groups the user is a member of (`groups` is read alike).",
                    0,
                    10_000,
                ),
            ),
            optional("fields", fields),
        ],
        Others::Ignored,
    )
}

fn new_password() -> Node {
    element(
        "request",
        "A new password.",
        vec![required(
            "password",
            object! { "type" => "string", "minLength" => 8_u64, "maxLength" => 1_024_u64, "description" => "The password." },
        )],
        Others::Ignored,
    )
}

fn new_status() -> Node {
    element(
        "request",
        "A new status.",
        vec![required(
            "status",
            with_xml_name(
                object! { "type" => "integer", "enum" => list![1_i64, 3_i64, 5_i64], "description" => "1 active, 3 blocked, 5 employment ended." },
                "status",
            ),
        )],
        Others::Ignored,
    )
}
