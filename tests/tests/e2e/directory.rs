//! `lms.v1.DirectoryService` end to end: a fresh database on each backend seeded by the
//! import module, the core started as `lms-core` starts it, and calls over real gRPC.

use std::{net::SocketAddr, time::Duration};

use futures::TryStreamExt as _;
use lms_core::{
    app::App,
    auth::PasswordHasher,
    entities::audit_log,
    import::{ImportDocument, import_document},
    settings::CoreSettings,
};
use lms_proto::{
    metadata::{ACCOUNT_URL, EMAIL, PASSWORD, REQUEST_ID},
    v1::{
        self as pb, admin_service_client::AdminServiceClient,
        directory_service_client::DirectoryServiceClient,
    },
};
use lms_testkit::{Backend, Fixture, TestDatabase, on_both_backends};
use sea_orm::{ColumnTrait as _, DatabaseConnection, EntityTrait as _, QueryFilter as _};
use tokio::{sync::oneshot, task::JoinHandle};
use tonic::{Code, Request, Response, Status, transport::Channel};

on_both_backends!(Core =>
    an_owner_creates_a_user_who_can_log_in_at_once_with_any_letter_case_of_the_login,
    creating_a_user_with_a_login_that_exists_in_another_letter_case_fails_the_precondition,
    a_login_of_another_account_is_free_in_this_one,
    a_user_created_inactive_cannot_log_in,
    a_created_department_administrator_manages_exactly_the_departments_given,
    a_created_user_with_a_custom_role_gets_exactly_its_permissions,
    create_user_refuses_bad_input_naming_the_field,
    a_new_password_works_on_the_very_next_call_and_the_old_one_is_refused,
    a_user_may_change_its_own_password_and_must_use_the_new_one_next,
    set_user_password_answers_not_found_for_users_outside_the_account_and_names_a_bad_password,
    a_deactivated_user_is_refused_on_the_next_call_and_welcome_again_once_reactivated,
    an_administrator_demoted_to_learner_is_denied_on_the_next_call,
    a_learner_given_a_custom_role_gets_its_permissions_on_the_next_call,
    set_user_role_refuses_bad_roles_naming_the_field_and_unknown_users_as_not_found,
    the_last_active_owner_can_be_neither_demoted_nor_deactivated,
    managed_departments_are_replaced_as_a_whole_and_apply_on_the_next_call,
    a_created_group_reads_back_with_its_name_and_kind,
    create_group_refuses_a_blank_name_and_a_foreign_smart_department,
    added_members_read_back_in_ascending_order_and_adding_a_member_twice_changes_nothing,
    add_group_members_refuses_unknown_groups_smart_groups_and_unknown_users,
    a_created_content_item_reads_back_with_its_date_in_utc_and_its_view_url,
    a_content_item_without_date_or_url_is_dated_now_and_viewed_under_the_account_url,
    the_authors_of_a_created_project_read_its_items_and_other_authors_do_not,
    create_project_refuses_a_blank_name_and_authors_outside_the_account,
    create_content_item_refuses_bad_input_naming_the_field,
    a_created_enrollment_can_be_deleted_and_enrolling_twice_returns_the_same_enrollment,
    create_enrollment_refuses_learners_and_items_outside_the_account,
    added_points_accumulate_and_read_back_through_get_points,
    add_points_answers_not_found_for_users_outside_the_account,
    department_administrators_authors_and_learners_are_denied_every_directory_method,
    account_owners_and_administrators_may_call_every_directory_method,
    calls_without_valid_credentials_are_unauthenticated,
    every_directory_change_is_audited_with_its_actor_and_request_id_but_never_a_password,
);
on_both_backends!(Core, worker_threads = 4 =>
    concurrent_point_additions_are_never_lost,
);

const ACME: &str = "https://acme.example.com";
const OTHER: &str = "https://other.example.com";

const ROOT: &str = "0192a000-0000-7000-8000-000000000001";
const SALES: &str = "0192a000-0000-7000-8000-000000000002";
const SUPPORT: &str = "0192a000-0000-7000-8000-000000000003";
const TRAINER_ROLE: &str = "0192a000-0000-7000-8000-000000000010";
const OWNER: &str = "0192a000-0000-7000-8000-000000000101";
const ADMIN: &str = "0192a000-0000-7000-8000-000000000102";
const DEPT_ADMIN: &str = "0192a000-0000-7000-8000-000000000103";
const LEARNER: &str = "0192a000-0000-7000-8000-000000000104";
const AUTHOR: &str = "0192a000-0000-7000-8000-000000000105";
const INTERNS: &str = "0192a000-0000-7000-8000-000000000201";
const ALL_OF_SALES: &str = "0192a000-0000-7000-8000-000000000202";

const OTHER_ROOT: &str = "0192b000-0000-7000-8000-000000000001";
const OTHER_ROLE: &str = "0192b000-0000-7000-8000-000000000010";
const OTHER_OWNER: &str = "0192b000-0000-7000-8000-000000000101";
const OTHER_GROUP: &str = "0192b000-0000-7000-8000-000000000201";
const OTHER_PROJECT: &str = "0192b000-0000-7000-8000-000000000301";
const OTHER_ITEM: &str = "0192b000-0000-7000-8000-000000000401";

/// A UUID that names nothing anywhere.
const NOWHERE: &str = "0192c000-0000-7000-8000-00000000dead";

/// A login of the seeded account.
#[derive(Debug, Clone, Copy)]
struct Login {
    account: &'static str,
    email: &'static str,
    password: &'static str,
}

const OWNER_LOGIN: Login = Login {
    account: ACME,
    email: "owner@acme.example.com",
    password: "owner-password",
};
const ADMIN_LOGIN: Login = Login {
    account: ACME,
    email: "admin@acme.example.com",
    password: "admin-password",
};
const DEPT_ADMIN_LOGIN: Login = Login {
    account: ACME,
    email: "deptadmin@acme.example.com",
    password: "deptadmin-password",
};
const LEARNER_LOGIN: Login = Login {
    account: ACME,
    email: "learner@acme.example.com",
    password: "learner-password",
};
const AUTHOR_LOGIN: Login = Login {
    account: ACME,
    email: "author@acme.example.com",
    password: "author-password",
};

fn document() -> ImportDocument {
    let user = |id: &str, email: &str, password: &str, role: &str, department: &str| {
        serde_json::json!({
            "id": id, "email": email, "password": password, "role": role,
            "departmentId": department,
        })
    };
    let mut dept_admin = user(
        DEPT_ADMIN,
        DEPT_ADMIN_LOGIN.email,
        DEPT_ADMIN_LOGIN.password,
        "department_administrator",
        SALES,
    );
    dept_admin["managedDepartmentIds"] = serde_json::json!([SALES]);
    let doc = serde_json::json!({
        "accounts": [
            {
                "url": ACME,
                "rootDepartment": {"id": ROOT, "name": "Acme", "code": "ACME"},
                "departments": [
                    {"id": SALES, "name": "Sales", "parentDepartmentId": ROOT},
                    {"id": SUPPORT, "name": "Support", "parentDepartmentId": ROOT}
                ],
                "customRoles": [
                    {"id": TRAINER_ROLE, "name": "Trainer", "permissions": ["group.read"]}
                ],
                "users": [
                    user(OWNER, OWNER_LOGIN.email, OWNER_LOGIN.password, "account_owner", ROOT),
                    user(ADMIN, ADMIN_LOGIN.email, ADMIN_LOGIN.password, "account_administrator", ROOT),
                    dept_admin,
                    user(LEARNER, LEARNER_LOGIN.email, LEARNER_LOGIN.password, "learner", SALES),
                    user(AUTHOR, AUTHOR_LOGIN.email, AUTHOR_LOGIN.password, "author", SUPPORT)
                ],
                "groups": [
                    {"id": INTERNS, "name": "Interns", "userIds": [LEARNER]},
                    {"id": ALL_OF_SALES, "name": "All of Sales", "smartDepartmentId": SALES}
                ]
            },
            {
                "url": OTHER,
                "rootDepartment": {"id": OTHER_ROOT, "name": "Other"},
                "customRoles": [{"id": OTHER_ROLE, "name": "Other trainer", "permissions": []}],
                "users": [
                    user(OTHER_OWNER, "owner@other.example.com", "other-password", "account_owner", OTHER_ROOT)
                ],
                "groups": [{"id": OTHER_GROUP, "name": "Other group", "userIds": [OTHER_OWNER]}],
                "projects": [{"id": OTHER_PROJECT, "name": "Other project", "authorIds": []}],
                "contentItems": [{
                    "id": OTHER_ITEM, "projectId": OTHER_PROJECT, "title": "Other course",
                    "userId": OTHER_OWNER, "addedDate": "2019-03-26T06:34:57+00:00",
                    "type": "Course"
                }]
            }
        ]
    });
    ImportDocument::from_json(&doc.to_string()).expect("the test document parses")
}

/// A running core over a fresh database holding [`document`].
struct Core {
    addr: SocketAddr,
    db: DatabaseConnection,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<anyhow::Result<()>>,
    /// Declared last: the database goes after the core that uses it.
    _database: TestDatabase,
}

impl Fixture for Core {
    async fn start(backend: Backend) -> Option<Self> {
        let database = TestDatabase::create(backend).await?;
        let mut settings = CoreSettings::for_database(database.url.clone());
        settings.grpc_addr = "127.0.0.1:0".parse().expect("address");
        settings.argon2_memory_kib = 64;
        settings.argon2_iterations = 1;
        let app = App::build(&settings).await.expect("the core starts");
        let db = app.state().db.clone();
        let hasher = PasswordHasher::new(settings.password_policy()).expect("hasher");
        import_document(&db, document(), &hasher)
            .await
            .expect("the test document imports");
        let addr = app.grpc_addr();
        let (shutdown, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(app.run_until(async move {
            let _ = stopped.await;
        }));
        Some(Core {
            addr,
            db,
            shutdown,
            task,
            _database: database,
        })
    }

    async fn stop(self) {
        let _ = self.shutdown.send(());
        self.task
            .await
            .expect("the core task")
            .expect("the core stops cleanly");
    }
}

impl Core {
    async fn channel(&self) -> Channel {
        Channel::from_shared(format!("http://{}", self.addr))
            .expect("endpoint")
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .expect("the core accepts connections")
    }

    async fn directory(&self) -> DirectoryServiceClient<Channel> {
        DirectoryServiceClient::new(self.channel().await)
    }

    async fn admin(&self) -> AdminServiceClient<Channel> {
        AdminServiceClient::new(self.channel().await)
    }
}

/// `message` with the credentials of `login`.
fn as_user<T>(login: Login, message: T) -> Request<T> {
    let mut request = Request::new(message);
    let metadata = request.metadata_mut();
    metadata.insert(ACCOUNT_URL, login.account.parse().expect("ascii"));
    metadata.insert(EMAIL, login.email.parse().expect("ascii"));
    metadata.insert(PASSWORD, login.password.parse().expect("ascii"));
    request
}

#[track_caller]
fn assert_code<T: std::fmt::Debug>(result: Result<Response<T>, Status>, code: Code, needle: &str) {
    match result {
        Ok(response) => panic!(
            "expected {code:?} mentioning {needle:?}, got {:?}",
            response.get_ref()
        ),
        Err(status) => {
            assert_eq!(status.code(), code, "{status:?}");
            assert!(
                status.message().contains(needle),
                "expected the message to mention {needle:?}: {:?}",
                status.message()
            );
        }
    }
}

/// The assignment of the role named as the import document names it (`learner`, `custom`, …).
fn role(name: &str) -> Option<pb::RoleAssignment> {
    Some(pb::RoleAssignment {
        role: role_number(name),
        custom_role_id: None,
    })
}

fn role_number(name: &str) -> i32 {
    pb::Role::from_str_name(&format!("ROLE_{}", name.to_uppercase()))
        .unwrap_or_else(|| panic!("no role {name}"))
        .into()
}

fn new_user(email: &str, password: &str, role_name: &str) -> pb::CreateUserRequest {
    pb::CreateUserRequest {
        email: email.into(),
        password: password.into(),
        role: role(role_name),
        department_id: SALES.into(),
        managed_department_ids: vec![],
        active: true,
    }
}

fn is_lower_case_uuid(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok_and(|parsed| parsed.to_string() == id)
}

async fn get_group(core: &Core, group_id: &str) -> pb::Group {
    core.admin()
        .await
        .get_group(as_user(
            OWNER_LOGIN,
            pb::GetGroupRequest {
                group_id: group_id.into(),
            },
        ))
        .await
        .expect("the group reads")
        .into_inner()
        .group
        .expect("a group")
}

async fn points_of(core: &Core, user_id: &str) -> i64 {
    let rows: Vec<pb::UserPoints> = core
        .admin()
        .await
        .get_points(as_user(
            OWNER_LOGIN,
            pb::GetPointsRequest {
                user_ids: vec![user_id.into()],
            },
        ))
        .await
        .expect("points read")
        .into_inner()
        .try_collect()
        .await
        .expect("points stream");
    assert_eq!(rows.len(), 1, "{rows:?}");
    rows[0].points
}

async fn rename_department(core: &Core, login: Login, department_id: &str) -> Result<(), Status> {
    core.admin()
        .await
        .update_department(as_user(
            login,
            pb::UpdateDepartmentRequest {
                department_id: department_id.into(),
                name: Some("Renamed".into()),
                ..Default::default()
            },
        ))
        .await
        .map(|_| ())
}

/// A call any account administrator may make; used to see whether a login works.
async fn probe(core: &Core, login: Login) -> Result<Response<pb::AddPointsResponse>, Status> {
    core.directory()
        .await
        .add_points(as_user(
            login,
            pb::AddPointsRequest {
                user_id: LEARNER.into(),
                points: 0,
            },
        ))
        .await
}

// ---- users ----

async fn an_owner_creates_a_user_who_can_log_in_at_once_with_any_letter_case_of_the_login(
    core: &Core,
) {
    let mut directory = core.directory().await;
    let created = directory
        .create_user(as_user(
            OWNER_LOGIN,
            new_user(
                "  New.Admin@Acme.example.com ",
                "new-admin-password",
                "account_administrator",
            ),
        ))
        .await
        .expect("the user is created")
        .into_inner();
    assert!(is_lower_case_uuid(&created.user_id), "{}", created.user_id);

    let new_admin = Login {
        account: ACME,
        email: "new.admin@ACME.example.com",
        password: "new-admin-password",
    };
    probe(core, new_admin)
        .await
        .expect("the new administrator may manage the directory");
    let wrong_password = Login {
        password: "not-the-password",
        ..new_admin
    };
    assert_code(
        probe(core, wrong_password).await,
        Code::Unauthenticated,
        "Authentication failed",
    );
}

async fn creating_a_user_with_a_login_that_exists_in_another_letter_case_fails_the_precondition(
    core: &Core,
) {
    let result = core
        .directory()
        .await
        .create_user(as_user(
            ADMIN_LOGIN,
            new_user("LEARNER@acme.example.com", "some-password", "learner"),
        ))
        .await;
    assert_code(result, Code::FailedPrecondition, "LEARNER@acme.example.com");
}

async fn a_login_of_another_account_is_free_in_this_one(core: &Core) {
    core.directory()
        .await
        .create_user(as_user(
            OWNER_LOGIN,
            new_user("owner@other.example.com", "some-password", "learner"),
        ))
        .await
        .expect("logins are unique per account only");
}

async fn a_user_created_inactive_cannot_log_in(core: &Core) {
    let mut request = new_user(
        "dormant@acme.example.com",
        "dormant-password",
        "account_administrator",
    );
    request.active = false;
    core.directory()
        .await
        .create_user(as_user(OWNER_LOGIN, request))
        .await
        .expect("created");
    let dormant = Login {
        account: ACME,
        email: "dormant@acme.example.com",
        password: "dormant-password",
    };
    assert_code(
        probe(core, dormant).await,
        Code::Unauthenticated,
        "Authentication failed",
    );
}

async fn a_created_department_administrator_manages_exactly_the_departments_given(core: &Core) {
    let mut request = new_user(
        "support.admin@acme.example.com",
        "support-password",
        "department_administrator",
    );
    request.managed_department_ids = vec![SUPPORT.to_uppercase(), SUPPORT.into()];
    core.directory()
        .await
        .create_user(as_user(OWNER_LOGIN, request))
        .await
        .expect("created");
    let support_admin = Login {
        account: ACME,
        email: "support.admin@acme.example.com",
        password: "support-password",
    };
    rename_department(core, support_admin, SUPPORT)
        .await
        .expect("Support is in scope");
    assert_code(
        core.admin()
            .await
            .update_department(as_user(
                support_admin,
                pb::UpdateDepartmentRequest {
                    department_id: SALES.into(),
                    name: Some("Renamed".into()),
                    ..Default::default()
                },
            ))
            .await,
        Code::PermissionDenied,
        "manage",
    );
}

async fn a_created_user_with_a_custom_role_gets_exactly_its_permissions(core: &Core) {
    let mut request = new_user("trainer@acme.example.com", "trainer-password", "custom");
    request.role = Some(pb::RoleAssignment {
        role: role_number("custom"),
        custom_role_id: Some(TRAINER_ROLE.into()),
    });
    core.directory()
        .await
        .create_user(as_user(OWNER_LOGIN, request))
        .await
        .expect("created");
    let trainer = Login {
        account: ACME,
        email: "trainer@acme.example.com",
        password: "trainer-password",
    };
    let mut admin = core.admin().await;
    admin
        .get_group(as_user(
            trainer,
            pb::GetGroupRequest {
                group_id: INTERNS.into(),
            },
        ))
        .await
        .expect("group.read allows reading groups");
    assert_code(
        admin
            .update_group(as_user(
                trainer,
                pb::UpdateGroupRequest {
                    group_id: INTERNS.into(),
                    name: Some("X".into()),
                },
            ))
            .await,
        Code::PermissionDenied,
        "groups",
    );
}

async fn create_user_refuses_bad_input_naming_the_field(core: &Core) {
    let mut directory = core.directory().await;
    let fresh = || new_user("fresh@acme.example.com", "fresh-password", "learner");
    let cases: Vec<(pb::CreateUserRequest, &str)> = vec![
        (
            pb::CreateUserRequest {
                email: "  ".into(),
                ..fresh()
            },
            "email",
        ),
        (
            pb::CreateUserRequest {
                email: format!("{}@acme.example.com", "a".repeat(250)),
                ..fresh()
            },
            "email",
        ),
        (
            pb::CreateUserRequest {
                email: "no-at-sign".into(),
                ..fresh()
            },
            "email",
        ),
        (
            pb::CreateUserRequest {
                password: String::new(),
                ..fresh()
            },
            "password",
        ),
        (
            pb::CreateUserRequest {
                password: "short".into(),
                ..fresh()
            },
            "password",
        ),
        (
            pb::CreateUserRequest {
                role: None,
                ..fresh()
            },
            "role",
        ),
        (
            pb::CreateUserRequest {
                role: Some(pb::RoleAssignment {
                    role: 99,
                    custom_role_id: None,
                }),
                ..fresh()
            },
            "role '99' is not one of ROLE_ACCOUNT_OWNER",
        ),
        (
            pb::CreateUserRequest {
                role: role("custom"),
                ..fresh()
            },
            "customRoleId",
        ),
        (
            pb::CreateUserRequest {
                role: Some(pb::RoleAssignment {
                    role: role_number("custom"),
                    custom_role_id: Some(OTHER_ROLE.into()),
                }),
                ..fresh()
            },
            "customRoleId",
        ),
        (
            pb::CreateUserRequest {
                role: Some(pb::RoleAssignment {
                    role: role_number("learner"),
                    custom_role_id: Some(TRAINER_ROLE.into()),
                }),
                ..fresh()
            },
            "customRoleId",
        ),
        (
            pb::CreateUserRequest {
                department_id: String::new(),
                ..fresh()
            },
            "departmentId",
        ),
        (
            pb::CreateUserRequest {
                department_id: "sales".into(),
                ..fresh()
            },
            "departmentId",
        ),
        (
            pb::CreateUserRequest {
                department_id: OTHER_ROOT.into(),
                ..fresh()
            },
            "departmentId",
        ),
        (
            pb::CreateUserRequest {
                managed_department_ids: vec![SALES.into(), "x".into()],
                ..fresh()
            },
            "managedDepartmentIds",
        ),
        (
            pb::CreateUserRequest {
                managed_department_ids: vec![NOWHERE.into()],
                ..fresh()
            },
            "managedDepartmentIds",
        ),
    ];
    for (request, field) in cases {
        let result = directory
            .create_user(as_user(OWNER_LOGIN, request.clone()))
            .await;
        match result {
            Err(status) => {
                assert_eq!(
                    status.code(),
                    Code::InvalidArgument,
                    "{request:?}: {status:?}"
                );
                assert!(status.message().contains(field), "{request:?}: {status:?}");
            }
            Ok(_) => panic!("{request:?} was accepted"),
        }
    }
    // Nothing of the refused requests was stored: the login is still free.
    directory
        .create_user(as_user(OWNER_LOGIN, fresh()))
        .await
        .expect("the login was never taken");
}

async fn a_new_password_works_on_the_very_next_call_and_the_old_one_is_refused(core: &Core) {
    // A first call, so that the old password's verification is remembered.
    probe(core, ADMIN_LOGIN)
        .await
        .expect("the administrator works before the change");
    core.directory()
        .await
        .set_user_password(as_user(
            OWNER_LOGIN,
            pb::SetUserPasswordRequest {
                user_id: ADMIN.into(),
                password: "brand-new-password".into(),
            },
        ))
        .await
        .expect("the password is set");
    assert_code(
        probe(core, ADMIN_LOGIN).await,
        Code::Unauthenticated,
        "Authentication failed",
    );
    let renewed = Login {
        password: "brand-new-password",
        ..ADMIN_LOGIN
    };
    probe(core, renewed).await.expect("the new password works");
}

async fn a_user_may_change_its_own_password_and_must_use_the_new_one_next(core: &Core) {
    core.directory()
        .await
        .set_user_password(as_user(
            ADMIN_LOGIN,
            pb::SetUserPasswordRequest {
                user_id: ADMIN.into(),
                password: "my-own-new-one".into(),
            },
        ))
        .await
        .expect("the password is set");
    assert_code(
        probe(core, ADMIN_LOGIN).await,
        Code::Unauthenticated,
        "Authentication failed",
    );
    probe(
        core,
        Login {
            password: "my-own-new-one",
            ..ADMIN_LOGIN
        },
    )
    .await
    .expect("new one works");
}

async fn set_user_password_answers_not_found_for_users_outside_the_account_and_names_a_bad_password(
    core: &Core,
) {
    let mut directory = core.directory().await;
    for user_id in ["not-a-uuid", NOWHERE, OTHER_OWNER] {
        let result = directory
            .set_user_password(as_user(
                OWNER_LOGIN,
                pb::SetUserPasswordRequest {
                    user_id: user_id.into(),
                    password: "long-enough".into(),
                },
            ))
            .await;
        assert_code(result, Code::NotFound, user_id);
    }
    let result = directory
        .set_user_password(as_user(
            OWNER_LOGIN,
            pb::SetUserPasswordRequest {
                user_id: LEARNER.into(),
                password: "short".into(),
            },
        ))
        .await;
    assert_code(result, Code::InvalidArgument, "password");
    // The other account's owner still logs in with its old password.
    let other = Login {
        account: OTHER,
        email: "owner@other.example.com",
        password: "other-password",
    };
    probe_other(core, other).await;
}

async fn probe_other(core: &Core, login: Login) {
    core.directory()
        .await
        .add_points(as_user(
            login,
            pb::AddPointsRequest {
                user_id: OTHER_OWNER.into(),
                points: 0,
            },
        ))
        .await
        .expect("the other account is untouched");
}

async fn a_deactivated_user_is_refused_on_the_next_call_and_welcome_again_once_reactivated(
    core: &Core,
) {
    probe(core, ADMIN_LOGIN).await.expect("active at first");
    let mut directory = core.directory().await;
    let set_active = |active: bool| {
        as_user(
            OWNER_LOGIN,
            pb::SetUserActiveRequest {
                user_id: ADMIN.into(),
                active,
            },
        )
    };
    directory
        .set_user_active(set_active(false))
        .await
        .expect("deactivated");
    assert_code(
        probe(core, ADMIN_LOGIN).await,
        Code::Unauthenticated,
        "Authentication failed",
    );
    // Deactivating twice is a no-op.
    directory
        .set_user_active(set_active(false))
        .await
        .expect("still deactivated");
    directory
        .set_user_active(set_active(true))
        .await
        .expect("reactivated");
    probe(core, ADMIN_LOGIN).await.expect("active again");
    assert_code(
        directory
            .set_user_active(as_user(
                OWNER_LOGIN,
                pb::SetUserActiveRequest {
                    user_id: OTHER_OWNER.into(),
                    active: false,
                },
            ))
            .await,
        Code::NotFound,
        OTHER_OWNER,
    );
}

async fn an_administrator_demoted_to_learner_is_denied_on_the_next_call(core: &Core) {
    probe(core, ADMIN_LOGIN)
        .await
        .expect("an administrator at first");
    let mut directory = core.directory().await;
    directory
        .set_user_role(as_user(
            OWNER_LOGIN,
            pb::SetUserRoleRequest {
                user_id: ADMIN.into(),
                role: role("learner"),
            },
        ))
        .await
        .expect("demoted");
    assert_code(
        probe(core, ADMIN_LOGIN).await,
        Code::PermissionDenied,
        "permission",
    );
    directory
        .set_user_role(as_user(
            OWNER_LOGIN,
            pb::SetUserRoleRequest {
                user_id: ADMIN.into(),
                role: role("account_administrator"),
            },
        ))
        .await
        .expect("promoted back");
    probe(core, ADMIN_LOGIN)
        .await
        .expect("an administrator again");
}

async fn a_learner_given_a_custom_role_gets_its_permissions_on_the_next_call(core: &Core) {
    let mut admin = core.admin().await;
    let read = |login| {
        as_user(
            login,
            pb::GetGroupRequest {
                group_id: INTERNS.into(),
            },
        )
    };
    assert_code(
        admin.get_group(read(LEARNER_LOGIN)).await,
        Code::PermissionDenied,
        "groups",
    );
    core.directory()
        .await
        .set_user_role(as_user(
            OWNER_LOGIN,
            pb::SetUserRoleRequest {
                user_id: LEARNER.into(),
                role: Some(pb::RoleAssignment {
                    role: role_number("custom"),
                    custom_role_id: Some(TRAINER_ROLE.to_uppercase()),
                }),
            },
        ))
        .await
        .expect("the custom role is given");
    admin
        .get_group(read(LEARNER_LOGIN))
        .await
        .expect("group.read now allows it");
}

async fn set_user_role_refuses_bad_roles_naming_the_field_and_unknown_users_as_not_found(
    core: &Core,
) {
    let mut directory = core.directory().await;
    let set = |user_id: &str, assignment: Option<pb::RoleAssignment>| {
        as_user(
            OWNER_LOGIN,
            pb::SetUserRoleRequest {
                user_id: user_id.into(),
                role: assignment,
            },
        )
    };
    assert_code(
        directory.set_user_role(set(LEARNER, None)).await,
        Code::InvalidArgument,
        "role",
    );
    assert_code(
        directory
            .set_user_role(set(
                LEARNER,
                Some(pb::RoleAssignment {
                    role: pb::Role::Unspecified.into(),
                    custom_role_id: None,
                }),
            ))
            .await,
        Code::InvalidArgument,
        "role",
    );
    assert_code(
        directory.set_user_role(set(LEARNER, role("custom"))).await,
        Code::InvalidArgument,
        "customRoleId",
    );
    assert_code(
        directory
            .set_user_role(set(
                LEARNER,
                Some(pb::RoleAssignment {
                    role: role_number("custom"),
                    custom_role_id: Some(OTHER_ROLE.into()),
                }),
            ))
            .await,
        Code::InvalidArgument,
        "customRoleId",
    );
    assert_code(
        directory.set_user_role(set(NOWHERE, role("learner"))).await,
        Code::NotFound,
        NOWHERE,
    );
    assert_code(
        directory
            .set_user_role(set(OTHER_OWNER, role("learner")))
            .await,
        Code::NotFound,
        OTHER_OWNER,
    );
}

async fn the_last_active_owner_can_be_neither_demoted_nor_deactivated(core: &Core) {
    let mut directory = core.directory().await;
    assert_code(
        directory
            .set_user_role(as_user(
                ADMIN_LOGIN,
                pb::SetUserRoleRequest {
                    user_id: OWNER.into(),
                    role: role("learner"),
                },
            ))
            .await,
        Code::FailedPrecondition,
        "owner",
    );
    assert_code(
        directory
            .set_user_active(as_user(
                ADMIN_LOGIN,
                pb::SetUserActiveRequest {
                    user_id: OWNER.into(),
                    active: false,
                },
            ))
            .await,
        Code::FailedPrecondition,
        "owner",
    );
    // With a second owner, the first may step down.
    directory
        .set_user_role(as_user(
            OWNER_LOGIN,
            pb::SetUserRoleRequest {
                user_id: ADMIN.into(),
                role: role("account_owner"),
            },
        ))
        .await
        .expect("a second owner");
    directory
        .set_user_role(as_user(
            ADMIN_LOGIN,
            pb::SetUserRoleRequest {
                user_id: OWNER.into(),
                role: role("account_administrator"),
            },
        ))
        .await
        .expect("the first owner steps down");
}

async fn managed_departments_are_replaced_as_a_whole_and_apply_on_the_next_call(core: &Core) {
    rename_department(core, DEPT_ADMIN_LOGIN, SALES)
        .await
        .expect("Sales is managed at first");
    let mut directory = core.directory().await;
    let set = |ids: Vec<String>| {
        as_user(
            OWNER_LOGIN,
            pb::SetUserManagedDepartmentsRequest {
                user_id: DEPT_ADMIN.into(),
                managed_department_ids: ids,
            },
        )
    };
    directory
        .set_user_managed_departments(set(vec![SUPPORT.into()]))
        .await
        .expect("replaced");
    assert_code(
        rename_department(core, DEPT_ADMIN_LOGIN, SALES)
            .await
            .map(Response::new),
        Code::PermissionDenied,
        "manage",
    );
    rename_department(core, DEPT_ADMIN_LOGIN, SUPPORT)
        .await
        .expect("Support is managed now");

    directory
        .set_user_managed_departments(set(vec![]))
        .await
        .expect("cleared");
    assert_code(
        rename_department(core, DEPT_ADMIN_LOGIN, SUPPORT)
            .await
            .map(Response::new),
        Code::PermissionDenied,
        "manage",
    );

    for bad in [NOWHERE, OTHER_ROOT, "nope"] {
        assert_code(
            directory
                .set_user_managed_departments(set(vec![SALES.into(), bad.into()]))
                .await,
            Code::InvalidArgument,
            "managedDepartmentIds",
        );
    }
    assert_code(
        directory
            .set_user_managed_departments(as_user(
                OWNER_LOGIN,
                pb::SetUserManagedDepartmentsRequest {
                    user_id: OTHER_OWNER.into(),
                    managed_department_ids: vec![],
                },
            ))
            .await,
        Code::NotFound,
        OTHER_OWNER,
    );
}

// ---- groups ----

async fn a_created_group_reads_back_with_its_name_and_kind(core: &Core) {
    let mut directory = core.directory().await;
    let plain = directory
        .create_group(as_user(
            ADMIN_LOGIN,
            pb::CreateGroupRequest {
                name: "  Mentors ".into(),
                smart_department_id: None,
            },
        ))
        .await
        .expect("created")
        .into_inner()
        .group_id;
    assert!(is_lower_case_uuid(&plain));
    let group = get_group(core, &plain).await;
    assert_eq!(
        (group.name.as_str(), group.is_smart, group.users_count),
        ("Mentors", false, 0)
    );

    let smart = directory
        .create_group(as_user(
            ADMIN_LOGIN,
            pb::CreateGroupRequest {
                name: "Sales people".into(),
                smart_department_id: Some(SALES.into()),
            },
        ))
        .await
        .expect("created")
        .into_inner()
        .group_id;
    let group = get_group(core, &smart).await;
    assert!(group.is_smart);
    let mut expected = vec![DEPT_ADMIN.to_owned(), LEARNER.to_owned()];
    expected.sort();
    assert_eq!(group.user_ids, expected);
}

async fn create_group_refuses_a_blank_name_and_a_foreign_smart_department(core: &Core) {
    let mut directory = core.directory().await;
    let create = |name: &str, smart: Option<&str>| {
        as_user(
            OWNER_LOGIN,
            pb::CreateGroupRequest {
                name: name.into(),
                smart_department_id: smart.map(Into::into),
            },
        )
    };
    assert_code(
        directory.create_group(create(" ", None)).await,
        Code::InvalidArgument,
        "name",
    );
    assert_code(
        directory.create_group(create(&"g".repeat(256), None)).await,
        Code::InvalidArgument,
        "name",
    );
    for bad in [OTHER_ROOT, NOWHERE, "x"] {
        assert_code(
            directory.create_group(create("G", Some(bad))).await,
            Code::InvalidArgument,
            "smartDepartmentId",
        );
    }
}

async fn added_members_read_back_in_ascending_order_and_adding_a_member_twice_changes_nothing(
    core: &Core,
) {
    let mut directory = core.directory().await;
    let add = |ids: &[&str]| {
        as_user(
            OWNER_LOGIN,
            pb::AddGroupMembersRequest {
                group_id: INTERNS.to_uppercase(),
                user_ids: ids.iter().map(|id| (*id).to_owned()).collect(),
            },
        )
    };
    directory
        .add_group_members(add(&[AUTHOR, LEARNER, AUTHOR, ADMIN]))
        .await
        .expect("added");
    let mut expected = vec![ADMIN.to_owned(), AUTHOR.to_owned(), LEARNER.to_owned()];
    expected.sort();
    let group = get_group(core, INTERNS).await;
    assert_eq!(group.user_ids, expected);
    assert_eq!(group.users_count, 3);

    directory
        .add_group_members(add(&[LEARNER, AUTHOR]))
        .await
        .expect("a no-op");
    assert_eq!(get_group(core, INTERNS).await.user_ids, expected);
}

async fn add_group_members_refuses_unknown_groups_smart_groups_and_unknown_users(core: &Core) {
    let mut directory = core.directory().await;
    let add = |group_id: &str, user_ids: &[&str]| {
        as_user(
            OWNER_LOGIN,
            pb::AddGroupMembersRequest {
                group_id: group_id.into(),
                user_ids: user_ids.iter().map(|id| (*id).to_owned()).collect(),
            },
        )
    };
    for group in [OTHER_GROUP, NOWHERE, "interns"] {
        assert_code(
            directory.add_group_members(add(group, &[AUTHOR])).await,
            Code::NotFound,
            group,
        );
    }
    assert_code(
        directory
            .add_group_members(add(ALL_OF_SALES, &[AUTHOR]))
            .await,
        Code::InvalidArgument,
        "smart",
    );
    assert_code(
        directory
            .add_group_members(add(INTERNS, &[AUTHOR, OTHER_OWNER]))
            .await,
        Code::InvalidArgument,
        OTHER_OWNER,
    );
    assert_code(
        directory
            .add_group_members(add(INTERNS, &[AUTHOR, "bob"]))
            .await,
        Code::InvalidArgument,
        "userIds",
    );
    // All or nothing: the valid author of the refused calls was not added.
    assert_eq!(
        get_group(core, INTERNS).await.user_ids,
        vec![LEARNER.to_owned()]
    );
}

// ---- projects, content, enrollments ----

async fn create_project(core: &Core, author_ids: &[&str]) -> String {
    core.directory()
        .await
        .create_project(as_user(
            OWNER_LOGIN,
            pb::CreateProjectRequest {
                name: "Onboarding".into(),
                author_ids: author_ids.iter().map(|id| (*id).to_owned()).collect(),
            },
        ))
        .await
        .expect("the project is created")
        .into_inner()
        .project_id
}

fn new_item(project_id: &str) -> pb::CreateContentItemRequest {
    pb::CreateContentItemRequest {
        project_id: project_id.into(),
        title: "Safety first".into(),
        description: "Read before you start.".into(),
        user_id: AUTHOR.into(),
        r#type: "Course".into(),
        added_date: None,
        view_url: None,
    }
}

async fn create_item(core: &Core, request: pb::CreateContentItemRequest) -> String {
    core.directory()
        .await
        .create_content_item(as_user(OWNER_LOGIN, request))
        .await
        .expect("the content item is created")
        .into_inner()
        .content_item_id
}

async fn get_item(core: &Core, login: Login, id: &str) -> Result<pb::ContentItem, Status> {
    core.admin()
        .await
        .get_content_item(as_user(
            login,
            pb::GetContentItemRequest {
                content_item_id: id.into(),
            },
        ))
        .await
        .map(|response| response.into_inner().content_item.expect("an item"))
}

async fn a_created_content_item_reads_back_with_its_date_in_utc_and_its_view_url(core: &Core) {
    let project = create_project(core, &[]).await;
    let id = create_item(
        core,
        pb::CreateContentItemRequest {
            added_date: Some("2019-03-26T08:34:57+02:00".into()),
            view_url: Some("https://cdn.example.com/courses/42".into()),
            ..new_item(&project)
        },
    )
    .await;
    assert!(is_lower_case_uuid(&id));
    let item = get_item(core, OWNER_LOGIN, &id).await.expect("readable");
    assert_eq!(
        item,
        pb::ContentItem {
            content_item_id: id.clone(),
            title: "Safety first".into(),
            description: "Read before you start.".into(),
            user_id: AUTHOR.into(),
            added_date: "2019-03-26T06:34:57+00:00".into(),
            view_url: "https://cdn.example.com/courses/42".into(),
            r#type: "Course".into(),
        }
    );
}

async fn a_content_item_without_date_or_url_is_dated_now_and_viewed_under_the_account_url(
    core: &Core,
) {
    let project = create_project(core, &[]).await;
    let before = chrono::Utc::now().timestamp();
    let id = create_item(core, new_item(&project)).await;
    let after = chrono::Utc::now().timestamp();
    let item = get_item(core, OWNER_LOGIN, &id).await.expect("readable");
    assert_eq!(item.view_url, format!("{ACME}/view/{id}"));
    assert!(item.added_date.ends_with("+00:00"), "{}", item.added_date);
    let added = chrono::DateTime::parse_from_rfc3339(&item.added_date)
        .expect("rfc 3339")
        .timestamp();
    assert!(
        (before..=after).contains(&added),
        "{before} <= {added} <= {after}"
    );
}

async fn the_authors_of_a_created_project_read_its_items_and_other_authors_do_not(core: &Core) {
    let authored = create_project(core, &[AUTHOR, AUTHOR]).await;
    let foreign = create_project(core, &[ADMIN]).await;
    let mine = create_item(core, new_item(&authored)).await;
    let theirs = create_item(core, new_item(&foreign)).await;
    get_item(core, AUTHOR_LOGIN, &mine)
        .await
        .expect("the author reads its project's item");
    assert_code(
        get_item(core, AUTHOR_LOGIN, &theirs)
            .await
            .map(Response::new),
        Code::PermissionDenied,
        "author",
    );
}

async fn create_project_refuses_a_blank_name_and_authors_outside_the_account(core: &Core) {
    let mut directory = core.directory().await;
    let create = |name: &str, authors: &[&str]| {
        as_user(
            OWNER_LOGIN,
            pb::CreateProjectRequest {
                name: name.into(),
                author_ids: authors.iter().map(|id| (*id).to_owned()).collect(),
            },
        )
    };
    assert_code(
        directory.create_project(create("", &[])).await,
        Code::InvalidArgument,
        "name",
    );
    assert_code(
        directory
            .create_project(create(&"p".repeat(256), &[]))
            .await,
        Code::InvalidArgument,
        "name",
    );
    assert_code(
        directory
            .create_project(create("P", &[AUTHOR, OTHER_OWNER]))
            .await,
        Code::InvalidArgument,
        OTHER_OWNER,
    );
    assert_code(
        directory.create_project(create("P", &["someone"])).await,
        Code::InvalidArgument,
        "authorIds",
    );
}

async fn create_content_item_refuses_bad_input_naming_the_field(core: &Core) {
    let project = create_project(core, &[]).await;
    let mut directory = core.directory().await;
    let ok = || new_item(&project);
    let cases: Vec<(pb::CreateContentItemRequest, &str)> = vec![
        (
            pb::CreateContentItemRequest {
                project_id: String::new(),
                ..ok()
            },
            "projectId",
        ),
        (
            pb::CreateContentItemRequest {
                project_id: OTHER_PROJECT.into(),
                ..ok()
            },
            "projectId",
        ),
        (
            pb::CreateContentItemRequest {
                project_id: NOWHERE.into(),
                ..ok()
            },
            "projectId",
        ),
        (
            pb::CreateContentItemRequest {
                user_id: "me".into(),
                ..ok()
            },
            "userId",
        ),
        (
            pb::CreateContentItemRequest {
                user_id: OTHER_OWNER.into(),
                ..ok()
            },
            "userId",
        ),
        (
            pb::CreateContentItemRequest {
                title: "  ".into(),
                ..ok()
            },
            "title",
        ),
        (
            pb::CreateContentItemRequest {
                r#type: String::new(),
                ..ok()
            },
            "type",
        ),
        (
            pb::CreateContentItemRequest {
                added_date: Some("2019-03-26T06:34:57".into()),
                ..ok()
            },
            "addedDate",
        ),
        (
            pb::CreateContentItemRequest {
                added_date: Some("yesterday".into()),
                ..ok()
            },
            "addedDate",
        ),
        (
            pb::CreateContentItemRequest {
                view_url: Some("/view/1".into()),
                ..ok()
            },
            "viewUrl",
        ),
        (
            pb::CreateContentItemRequest {
                view_url: Some("ftp://cdn.example.com/1".into()),
                ..ok()
            },
            "viewUrl",
        ),
    ];
    for (request, field) in cases {
        match directory
            .create_content_item(as_user(OWNER_LOGIN, request.clone()))
            .await
        {
            Err(status) => {
                assert_eq!(
                    status.code(),
                    Code::InvalidArgument,
                    "{request:?}: {status:?}"
                );
                assert!(status.message().contains(field), "{request:?}: {status:?}");
            }
            Ok(_) => panic!("{request:?} was accepted"),
        }
    }
}

async fn a_created_enrollment_can_be_deleted_and_enrolling_twice_returns_the_same_enrollment(
    core: &Core,
) {
    let project = create_project(core, &[]).await;
    let item = create_item(core, new_item(&project)).await;
    let mut directory = core.directory().await;
    let enroll = || {
        as_user(
            ADMIN_LOGIN,
            pb::CreateEnrollmentRequest {
                learner_id: LEARNER.into(),
                content_item_id: item.clone(),
            },
        )
    };
    let first = directory
        .create_enrollment(enroll())
        .await
        .expect("enrolled")
        .into_inner();
    assert!(is_lower_case_uuid(&first.enrollment_id));
    let again = directory
        .create_enrollment(enroll())
        .await
        .expect("still enrolled")
        .into_inner();
    assert_eq!(again.enrollment_id, first.enrollment_id);

    let deleted = core
        .admin()
        .await
        .delete_enrollments(as_user(
            OWNER_LOGIN,
            pb::DeleteEnrollmentsRequest {
                enrollment_ids: vec![first.enrollment_id.clone()],
            },
        ))
        .await
        .expect("deleted")
        .into_inner();
    assert_eq!(deleted.deleted_count, 1);
    let renewed = directory
        .create_enrollment(enroll())
        .await
        .expect("enrolled again")
        .into_inner();
    assert_ne!(renewed.enrollment_id, first.enrollment_id);
}

async fn create_enrollment_refuses_learners_and_items_outside_the_account(core: &Core) {
    let project = create_project(core, &[]).await;
    let item = create_item(core, new_item(&project)).await;
    let mut directory = core.directory().await;
    let enroll = |learner: &str, content: &str| {
        as_user(
            OWNER_LOGIN,
            pb::CreateEnrollmentRequest {
                learner_id: learner.into(),
                content_item_id: content.into(),
            },
        )
    };
    for (learner, content, field) in [
        (OTHER_OWNER, item.as_str(), "learnerId"),
        (NOWHERE, item.as_str(), "learnerId"),
        ("", item.as_str(), "learnerId"),
        (LEARNER, OTHER_ITEM, "contentItemId"),
        (LEARNER, "course-1", "contentItemId"),
    ] {
        assert_code(
            directory.create_enrollment(enroll(learner, content)).await,
            Code::InvalidArgument,
            field,
        );
    }
}

// ---- points ----

async fn added_points_accumulate_and_read_back_through_get_points(core: &Core) {
    let mut directory = core.directory().await;
    let add = |points: i64| {
        as_user(
            OWNER_LOGIN,
            pb::AddPointsRequest {
                user_id: AUTHOR.into(),
                points,
            },
        )
    };
    assert_eq!(points_of(core, AUTHOR).await, 0);
    assert_eq!(
        directory
            .add_points(add(421))
            .await
            .expect("added")
            .into_inner()
            .total,
        421
    );
    assert_eq!(
        directory
            .add_points(add(-21))
            .await
            .expect("taken")
            .into_inner()
            .total,
        400
    );
    assert_eq!(points_of(core, AUTHOR).await, 400);
    assert_code(
        directory.add_points(add(i64::MAX)).await,
        Code::InvalidArgument,
        "points",
    );
    assert_eq!(points_of(core, AUTHOR).await, 400);
}

async fn concurrent_point_additions_are_never_lost(core: &Core) {
    let directory = core.directory().await;
    let calls = (0..24).map(|_| {
        let mut client = directory.clone();
        async move {
            client
                .add_points(as_user(
                    ADMIN_LOGIN,
                    pb::AddPointsRequest {
                        user_id: LEARNER.into(),
                        points: 1,
                    },
                ))
                .await
                .map(|response| response.into_inner().total)
        }
    });
    let mut totals: Vec<i64> = futures::future::try_join_all(calls)
        .await
        .expect("every add succeeds");
    totals.sort_unstable();
    assert_eq!(totals, (1..=24).collect::<Vec<i64>>());
    assert_eq!(points_of(core, LEARNER).await, 24);
}

async fn add_points_answers_not_found_for_users_outside_the_account(core: &Core) {
    let mut directory = core.directory().await;
    for user_id in [OTHER_OWNER, NOWHERE, "learner"] {
        assert_code(
            directory
                .add_points(as_user(
                    OWNER_LOGIN,
                    pb::AddPointsRequest {
                        user_id: user_id.into(),
                        points: 5,
                    },
                ))
                .await,
            Code::NotFound,
            user_id,
        );
    }
}

// ---- permissions, authentication, audit ----

/// Calls every DirectoryService method as `login`, with requests that would succeed
/// for an owner, and returns each outcome by method name.
async fn call_every_method(core: &Core, login: Login) -> Vec<(&'static str, Result<(), Status>)> {
    let mut d = core.directory().await;
    let project = create_project(core, &[]).await;
    let item = create_item(core, new_item(&project)).await;
    /// `(name, outcome)` of `client.method(login, message)`, the answer dropped.
    macro_rules! call {
        ($name:expr, $client:ident.$method:ident($login:expr, $message:expr $(,)?)) => {
            (
                $name,
                $client.$method(as_user($login, $message)).await.map(|_| ()),
            )
        };
    }
    vec![
        call!(
            "CreateUser",
            d.create_user(
                login,
                new_user("x@acme.example.com", "x-password", "learner")
            )
        ),
        call!(
            "SetUserPassword",
            d.set_user_password(
                login,
                pb::SetUserPasswordRequest {
                    user_id: AUTHOR.into(),
                    password: "new-password".into(),
                }
            )
        ),
        call!(
            "SetUserRole",
            d.set_user_role(
                login,
                pb::SetUserRoleRequest {
                    user_id: AUTHOR.into(),
                    role: role("learner"),
                }
            )
        ),
        call!(
            "SetUserManagedDepartments",
            d.set_user_managed_departments(
                login,
                pb::SetUserManagedDepartmentsRequest {
                    user_id: AUTHOR.into(),
                    managed_department_ids: vec![SALES.into()],
                }
            )
        ),
        call!(
            "SetUserActive",
            d.set_user_active(
                login,
                pb::SetUserActiveRequest {
                    user_id: AUTHOR.into(),
                    active: false,
                }
            )
        ),
        call!(
            "CreateGroup",
            d.create_group(
                login,
                pb::CreateGroupRequest {
                    name: "G".into(),
                    smart_department_id: None,
                }
            )
        ),
        call!(
            "AddGroupMembers",
            d.add_group_members(
                login,
                pb::AddGroupMembersRequest {
                    group_id: INTERNS.into(),
                    user_ids: vec![AUTHOR.into()],
                }
            )
        ),
        call!(
            "CreateProject",
            d.create_project(
                login,
                pb::CreateProjectRequest {
                    name: "P".into(),
                    author_ids: vec![],
                }
            )
        ),
        call!(
            "CreateContentItem",
            d.create_content_item(login, new_item(&project))
        ),
        call!(
            "CreateEnrollment",
            d.create_enrollment(
                login,
                pb::CreateEnrollmentRequest {
                    learner_id: LEARNER.into(),
                    content_item_id: item,
                }
            )
        ),
        call!(
            "AddPoints",
            d.add_points(
                login,
                pb::AddPointsRequest {
                    user_id: LEARNER.into(),
                    points: 1,
                }
            )
        ),
    ]
}

async fn department_administrators_authors_and_learners_are_denied_every_directory_method(
    core: &Core,
) {
    for login in [DEPT_ADMIN_LOGIN, AUTHOR_LOGIN, LEARNER_LOGIN] {
        for (method, result) in call_every_method(core, login).await {
            let status = result.expect_err(method);
            assert_eq!(
                status.code(),
                Code::PermissionDenied,
                "{} calling {method}: {status:?}",
                login.email
            );
            assert!(status.message().contains("directory"), "{status:?}");
        }
    }
    // Nothing the refused calls asked for happened.
    assert_eq!(points_of(core, LEARNER).await, 0);
    assert_eq!(
        get_group(core, INTERNS).await.user_ids,
        vec![LEARNER.to_owned()]
    );
    probe(core, OWNER_LOGIN)
        .await
        .expect("the owner is untouched");
}

async fn account_owners_and_administrators_may_call_every_directory_method(core: &Core) {
    for (method, result) in call_every_method(core, ADMIN_LOGIN).await {
        result.unwrap_or_else(|status| panic!("{method}: {status:?}"));
    }
}

async fn calls_without_valid_credentials_are_unauthenticated(core: &Core) {
    let mut directory = core.directory().await;
    let anonymous = Request::new(pb::CreateGroupRequest {
        name: "G".into(),
        smart_department_id: None,
    });
    assert_code(
        directory.create_group(anonymous).await,
        Code::Unauthenticated,
        "Authentication failed",
    );
    let wrong = Login {
        password: "wrong-password",
        ..OWNER_LOGIN
    };
    assert_code(
        directory
            .create_group(as_user(
                wrong,
                pb::CreateGroupRequest {
                    name: "G".into(),
                    smart_department_id: None,
                },
            ))
            .await,
        Code::Unauthenticated,
        "Authentication failed",
    );
}

async fn every_directory_change_is_audited_with_its_actor_and_request_id_but_never_a_password(
    core: &Core,
) {
    let mut directory = core.directory().await;
    let mut request = as_user(
        OWNER_LOGIN,
        pb::SetUserPasswordRequest {
            user_id: LEARNER.into(),
            password: "secret-password".into(),
        },
    );
    request
        .metadata_mut()
        .insert(REQUEST_ID, "req-password-1".parse().expect("ascii"));
    directory.set_user_password(request).await.expect("set");
    let mut request = as_user(
        OWNER_LOGIN,
        pb::CreateGroupRequest {
            name: "Audited".into(),
            smart_department_id: None,
        },
    );
    request
        .metadata_mut()
        .insert(REQUEST_ID, "req-group-1".parse().expect("ascii"));
    let group_id = directory
        .create_group(request)
        .await
        .expect("created")
        .into_inner()
        .group_id;

    let rows = audit_log::Entity::find()
        .filter(audit_log::Column::ActorUserId.eq(uuid::Uuid::parse_str(OWNER).expect("uuid")))
        .all(&core.db)
        .await
        .expect("audit rows");
    let password_row = rows
        .iter()
        .find(|row| row.action == "user.set_password")
        .expect("the password change is audited");
    assert_eq!(password_row.entity_id.to_string(), LEARNER);
    assert_eq!(password_row.request_id.as_deref(), Some("req-password-1"));
    let group_row = rows
        .iter()
        .find(|row| row.action == "group.create")
        .expect("audited");
    assert_eq!(group_row.entity_id.to_string(), group_id);
    assert_eq!(group_row.request_id.as_deref(), Some("req-group-1"));
    assert!(
        group_row
            .after
            .as_deref()
            .is_some_and(|after| after.contains("Audited"))
    );
    for row in &rows {
        let text = format!("{:?}{:?}", row.before, row.after);
        assert!(
            !text.contains("secret-password") && !text.contains("$argon2"),
            "{row:?}"
        );
    }
}
