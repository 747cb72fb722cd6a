//! Tenant isolation (contract section 2): with one account's credentials, every
//! identifier of another account behaves exactly as one that exists nowhere, on all
//! seven operations, and nothing of the other account changes. Checked in both
//! directions, by the most privileged user (the account owner), through the XML
//! interface and through the DirectoryService writes that touch logins.

use lms_proto::v1::{self as pb, directory_service_client::DirectoryServiceClient};
use lms_tests::{
    Reply, TestStack, on_both_backends,
    world::{self, Login, acme, globex},
    xml::texts_of,
};
use sea_orm::{EntityTrait as _, prelude::Uuid};
use tonic::Code;

on_both_backends!(
    globex_cannot_read_or_change_anything_of_acme,
    acme_cannot_read_or_change_anything_of_globex,
    a_deletion_naming_both_accounts_deletes_only_the_callers_enrollment,
    points_leave_out_the_other_accounts_users,
    directory_writes_cannot_reach_another_accounts_users,
);

/// A UUID that names nothing in any account.
const NOWHERE: &str = "0191c000-0000-7000-8000-00000000dead";

/// The identifiers of one account a test aims at.
#[derive(Debug, Clone, Copy)]
struct Tenant {
    owner: Login,
    department: &'static str,
    group: &'static str,
    content_item: &'static str,
    enrollment: &'static str,
    user: &'static str,
}

const ACME: Tenant = Tenant {
    owner: world::OWNER,
    department: acme::SALES,
    group: acme::INTERNS,
    content_item: acme::WELCOME_COURSE,
    enrollment: acme::LEARNER_WELCOME,
    user: acme::LEARNER,
};

const GLOBEX: Tenant = Tenant {
    owner: world::GLOBEX_OWNER,
    department: globex::PLANT,
    group: globex::CREW,
    content_item: globex::COURSE,
    enrollment: globex::ENROLLMENT,
    user: globex::WORKER,
};

async fn globex_cannot_read_or_change_anything_of_acme(stack: &TestStack) {
    foreign_ids_behave_as_unknown(stack, GLOBEX, ACME).await;
}

async fn acme_cannot_read_or_change_anything_of_globex(stack: &TestStack) {
    foreign_ids_behave_as_unknown(stack, ACME, GLOBEX).await;
}

/// As `caller`'s owner, aims every operation at `other`'s ids and at ids that name
/// nothing: the answers must be the same (modulo the id), and no row may change.
async fn foreign_ids_behave_as_unknown(stack: &TestStack, caller: Tenant, other: Tenant) {
    let before = stack.snapshot().await;
    let login = caller.owner;
    for operation in operations() {
        let (name, status) = (operation.name, operation.status);
        let foreign_id = (operation.foreign_id)(other);
        let foreign = (operation.request)(caller, foreign_id)
            .send(stack, login)
            .await;
        let unknown = (operation.request)(caller, NOWHERE)
            .send(stack, login)
            .await;
        assert_eq!(
            foreign.status, status,
            "{name} with a foreign id: {}",
            foreign.body
        );
        assert_eq!(
            unknown.status, status,
            "{name} with an unknown id: {}",
            unknown.body
        );
        assert_eq!(
            normalized(&foreign.body, foreign_id),
            normalized(&unknown.body, NOWHERE),
            "{name}: a foreign id must look exactly like one that names nothing"
        );
        if status >= 400 {
            let needle = if status == 400 {
                "parentDepartmentId"
            } else {
                "not found"
            };
            foreign.assert_error(status, needle);
        }
    }
    // The other account's group, read by its own owner, is intact.
    let group = stack
        .get(&format!("/group/{}", other.group), other.owner)
        .await;
    assert_eq!(group.status, 200, "{}", group.body);
    assert_ne!(
        lms_tests::xml::text_of(&group.body, "name").as_deref(),
        Some("Taken over")
    );
    assert_unchanged(&before, &stack.snapshot().await, caller.owner.account_url);
}

async fn a_deletion_naming_both_accounts_deletes_only_the_callers_enrollment(stack: &TestStack) {
    let body = format!(
        "<DeleteEnrollments><enrollmentIds><id>{}</id><id>{}</id><id>{}</id></enrollmentIds></DeleteEnrollments>",
        acme::LEARNER_WELCOME,
        globex::ENROLLMENT,
        acme::LEARNER_SECRET,
    );
    let reply = stack
        .post_xml("/enrollment/delete", world::GLOBEX_OWNER, &body)
        .await;
    assert_eq!(reply.status, 204, "{}", reply.body);
    let exists = |id: &str| {
        let id = Uuid::parse_str(id).expect("uuid");
        async move {
            lms_core::entities::enrollment::Entity::find_by_id(id)
                .one(stack.db())
                .await
                .expect("read enrollment")
                .is_some()
        }
    };
    assert!(
        !exists(globex::ENROLLMENT).await,
        "the caller's own enrollment is deleted"
    );
    assert!(
        exists(acme::LEARNER_WELCOME).await,
        "Acme's enrollments are untouched"
    );
    assert!(
        exists(acme::LEARNER_SECRET).await,
        "Acme's enrollments are untouched"
    );
}

async fn points_leave_out_the_other_accounts_users(stack: &TestStack) {
    let mixed = stack
        .get(
            &format!(
                "/gamification/points?userIds={},{},{}",
                acme::LEARNER,
                globex::WORKER,
                acme::OWNER
            ),
            world::GLOBEX_OWNER,
        )
        .await;
    assert_eq!(mixed.status, 200, "{}", mixed.body);
    assert_eq!(texts_of(&mixed.body, "userId"), [globex::WORKER]);
    assert_eq!(texts_of(&mixed.body, "points"), ["99"]);

    let everyone = stack.get("/gamification/points", world::GLOBEX_OWNER).await;
    assert_eq!(everyone.status, 200, "{}", everyone.body);
    assert_eq!(
        texts_of(&everyone.body, "userId"),
        [globex::OWNER, globex::WORKER]
    );

    let repeated = stack
        .get(
            &format!(
                "/gamification/points?userIds[]={}&userIds[]={}",
                acme::ENGINEER,
                acme::LEARNER
            ),
            world::GLOBEX_OWNER,
        )
        .await;
    assert_eq!(repeated.status, 200, "{}", repeated.body);
    assert!(
        texts_of(&repeated.body, "userId").is_empty(),
        "{}",
        repeated.body
    );
}

/// The writes that decide who can log in, aimed at another account's users.
async fn directory_writes_cannot_reach_another_accounts_users(stack: &TestStack) {
    let before = stack.snapshot().await;
    let mut directory = DirectoryServiceClient::new(stack.grpc_channel().await);
    for target in [acme::ADMIN, NOWHERE] {
        let password = directory
            .set_user_password(
                world::GLOBEX_OWNER.grpc_request(pb::SetUserPasswordRequest {
                    user_id: target.into(),
                    password: "taken over at last".into(),
                }),
            )
            .await;
        assert_eq!(
            code(password),
            Some(Code::NotFound),
            "SetUserPassword {target}"
        );
        let role = directory
            .set_user_role(world::GLOBEX_OWNER.grpc_request(pb::SetUserRoleRequest {
                user_id: target.into(),
                role: Some(pb::RoleAssignment {
                    role: pb::Role::Learner.into(),
                    custom_role_id: None,
                }),
            }))
            .await;
        assert_eq!(code(role), Some(Code::NotFound), "SetUserRole {target}");
        let active = directory
            .set_user_active(world::GLOBEX_OWNER.grpc_request(pb::SetUserActiveRequest {
                user_id: target.into(),
                active: false,
            }))
            .await;
        assert_eq!(code(active), Some(Code::NotFound), "SetUserActive {target}");
        let managed = directory
            .set_user_managed_departments(world::GLOBEX_OWNER.grpc_request(
                pb::SetUserManagedDepartmentsRequest {
                    user_id: target.into(),
                    managed_department_ids: vec![],
                },
            ))
            .await;
        assert_eq!(
            code(managed),
            Some(Code::NotFound),
            "SetUserManagedDepartments {target}"
        );
    }
    // Managing another account's department is refused like managing none.
    let foreign_department = directory
        .set_user_managed_departments(world::GLOBEX_OWNER.grpc_request(
            pb::SetUserManagedDepartmentsRequest {
                user_id: globex::WORKER.into(),
                managed_department_ids: vec![acme::SALES.into()],
            },
        ))
        .await;
    assert_eq!(code(foreign_department), Some(Code::InvalidArgument));

    assert_unchanged(&before, &stack.snapshot().await, world::GLOBEX_URL);
    let admin = stack
        .get(&format!("/group/{}", acme::INTERNS), world::ADMIN)
        .await;
    assert_eq!(
        admin.status, 200,
        "Acme's admin still logs in with its password: {}",
        admin.body
    );
}

/// One of the seven operations, aimed at an id of another account.
struct Operation {
    name: &'static str,
    /// The request `caller`'s owner sends, naming `id`.
    request: fn(Tenant, &str) -> Request,
    /// The identifier of the other account it names.
    foreign_id: fn(Tenant) -> &'static str,
    /// The answer for an id that names nothing (and so for a foreign one).
    status: u16,
}

fn operations() -> [Operation; 8] {
    const RENAME: &str = "<request><name>Taken over</name></request>";
    [
        Operation {
            name: "update department (path id)",
            request: |_, id| Request::post(format!("/department/{id}"), RENAME.to_owned()),
            foreign_id: |other| other.department,
            status: 404,
        },
        Operation {
            name: "update department (new parent)",
            request: |caller, id| {
                Request::post(
                    format!("/department/{}", caller.department),
                    format!("<request><parentDepartmentId>{id}</parentDepartmentId></request>"),
                )
            },
            foreign_id: |other| other.department,
            status: 400,
        },
        Operation {
            name: "create department (parent)",
            request: |_, id| {
                Request::post(
                    "/department".to_owned(),
                    format!(
                        "<request><name>Annex</name><parentDepartmentId>{id}</parentDepartmentId></request>"
                    ),
                )
            },
            foreign_id: |other| other.department,
            status: 400,
        },
        Operation {
            name: "update group",
            request: |_, id| Request::post(format!("/group/{id}"), RENAME.to_owned()),
            foreign_id: |other| other.group,
            status: 404,
        },
        Operation {
            name: "get group",
            request: |_, id| Request::get(format!("/group/{id}")),
            foreign_id: |other| other.group,
            status: 404,
        },
        Operation {
            name: "delete enrollments (ignored, as ids naming nothing are)",
            request: |_, id| {
                Request::post(
                    "/enrollment/delete".to_owned(),
                    format!(
                        "<DeleteEnrollments><enrollmentIds><id>{id}</id></enrollmentIds></DeleteEnrollments>"
                    ),
                )
            },
            foreign_id: |other| other.enrollment,
            status: 204,
        },
        Operation {
            name: "get content item",
            request: |_, id| Request::get(format!("/content/{id}")),
            foreign_id: |other| other.content_item,
            status: 404,
        },
        Operation {
            name: "get points (the user is left out)",
            request: |_, id| Request::get(format!("/gamification/points?userIds={id}")),
            foreign_id: |other| other.user,
            status: 200,
        },
    ]
}

/// The error code of a call, `None` when it succeeded.
fn code<T>(result: Result<T, tonic::Status>) -> Option<Code> {
    result.err().map(|status| status.code())
}

/// One HTTP request, built for an id.
struct Request {
    method: reqwest::Method,
    path: String,
    body: Option<String>,
}

impl Request {
    fn get(path: String) -> Self {
        Self {
            method: reqwest::Method::GET,
            path,
            body: None,
        }
    }

    fn post(path: String, body: String) -> Self {
        Self {
            method: reqwest::Method::POST,
            path,
            body: Some(body),
        }
    }

    async fn send(self, stack: &TestStack, login: Login) -> Reply {
        let mut request = stack.request(self.method, &self.path, login);
        if let Some(body) = self.body {
            request = request.header("Content-Type", "application/xml").body(body);
        }
        Reply::from(request.send().await.expect("request")).await
    }
}

/// Asserts that no stored row changed, except the write-lock counter of the caller's own
/// account (`accounts.revision`, bumped by every write transaction the caller opens,
/// even one that finds nothing to change).
#[track_caller]
fn assert_unchanged(before: &str, after: &str, caller_url: &str) {
    let (before, after) = (
        without_revision(before, caller_url),
        without_revision(after, caller_url),
    );
    if let Some((n, (was, is))) = before
        .lines()
        .zip(after.lines())
        .enumerate()
        .find(|(_, (was, is))| was != is)
    {
        panic!("stored data changed at line {n}: {was:?} became {is:?}");
    }
    assert_eq!(
        before.lines().count(),
        after.lines().count(),
        "rows were added or removed"
    );
}

fn without_revision(snapshot: &str, account_url: &str) -> String {
    let mut out = String::new();
    let mut in_caller_account = false;
    for line in snapshot.lines() {
        if line.trim_start().starts_with("url: ") {
            in_caller_account = line.contains(&format!("\"{account_url}\""));
        }
        if in_caller_account && line.trim_start().starts_with("revision: ") {
            out.push_str("        revision: (caller's write lock),\n");
            in_caller_account = false;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The body with `id` replaced and the per-request id dropped, for comparing answers.
fn normalized(body: &str, id: &str) -> String {
    let body = body.replace(id, "ID");
    match (body.find("<requestId>"), body.find("</requestId>")) {
        (Some(start), Some(end)) => format!("{}{}", &body[..start], &body[end..]),
        _ => body,
    }
}
