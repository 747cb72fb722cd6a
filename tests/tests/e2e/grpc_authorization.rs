//! Authorization lives in the core (contract section 3): a caller that bypasses the gateway
//! and speaks `lms.v1` directly meets the same rules as an XML caller.

use lms_proto::{
    metadata::{ACCOUNT_URL, EMAIL, PASSWORD},
    v1::{
        self as pb, admin_service_client::AdminServiceClient,
        directory_service_client::DirectoryServiceClient,
    },
};
use lms_tests::{
    TestStack, on_both_backends,
    world::{self, Login, acme},
};
use tonic::{Code, Request, Status, transport::Channel};

on_both_backends!(
    a_learner_is_denied_every_admin_method_and_nothing_changes,
    a_learner_is_denied_every_directory_method_and_nothing_changes,
    scoped_callers_meet_their_scope_over_grpc_too,
    calls_without_valid_credentials_are_unauthenticated,
);

/// `message` with the credentials of `login`; `None` sends no credentials at all.
fn request<T>(login: Option<Login>, message: T) -> Request<T> {
    match login {
        Some(login) => login.grpc_request(message),
        None => Request::new(message),
    }
}

/// The outcome of a call, its answer dropped.
fn done<T>(result: Result<tonic::Response<T>, Status>) -> Result<(), Status> {
    result.map(|_| ())
}

/// `(name, outcome)` of `client.method(login, message)`: the message sent with the
/// credentials of `login` (see [`request`]), its answer dropped.
macro_rules! call {
    ($name:expr, $client:ident.$method:ident($login:expr, $message:expr $(,)?)) => {
        (
            $name,
            done($client.$method(request($login, $message)).await),
        )
    };
}

/// Calls every AdminService method as `login` with a request an account owner could
/// make (existing ids, valid values), and returns each outcome by method name. GetPoints
/// counts as refused only when the call itself fails, before any message.
async fn call_every_admin_method(
    channel: Channel,
    login: Option<Login>,
) -> Vec<(&'static str, Result<(), Status>)> {
    let mut admin = AdminServiceClient::new(channel);
    let points = |user_ids: Vec<String>| pb::GetPointsRequest { user_ids };
    let created = admin
        .create_department(request(
            login,
            pb::CreateDepartmentRequest {
                name: "Marketing".into(),
                parent_department_id: acme::ROOT.into(),
                code: Some("M".into()),
            },
        ))
        .await;
    let mut outcomes = vec![
        call!(
            "UpdateDepartment",
            admin.update_department(
                login,
                pb::UpdateDepartmentRequest {
                    department_id: acme::SALES_EAST.into(),
                    name: Some("Sales East renamed".into()),
                    parent_department_id: Some(acme::ENGINEERING.into()),
                    code: Some(String::new()),
                }
            )
        ),
        (
            "CreateDepartment",
            created.as_ref().map(|_| ()).map_err(Clone::clone),
        ),
        call!(
            "UpdateGroup",
            admin.update_group(
                login,
                pb::UpdateGroupRequest {
                    group_id: acme::INTERNS.into(),
                    name: Some("Renamed".into()),
                }
            )
        ),
        call!(
            "GetGroup",
            admin.get_group(
                login,
                pb::GetGroupRequest {
                    group_id: acme::INTERNS.into(),
                }
            )
        ),
        call!("DeleteEnrollments", admin.delete_enrollments(login,
                        // Its own enrollments, for the learner.
                        pb::DeleteEnrollmentsRequest {
                            enrollment_ids: vec![
                                acme::LEARNER_WELCOME.into(),
                                acme::LEARNER_SECRET.into(),
                            ],
                        })),
        call!(
            "GetContentItem",
            admin.get_content_item(
                login,
                pb::GetContentItemRequest {
                    content_item_id: acme::WELCOME_COURSE.into(),
                }
            )
        ),
        call!(
            "ListDepartments",
            admin.list_departments(
                login,
                pb::ListDepartmentsRequest {
                    page: Some(pb::PageRequest::default()),
                }
            )
        ),
        call!(
            "ListEnrollments",
            admin.list_enrollments(
                login,
                // Its own enrollments, for the learner.
                pb::ListEnrollmentsRequest {
                    learner_ids: vec![acme::LEARNER.into()],
                    ..Default::default()
                }
            )
        ),
        call!(
            "ListContentItems",
            admin.list_content_items(
                login,
                pb::ListContentItemsRequest {
                    page: Some(pb::PageRequest::default()),
                    ..Default::default()
                }
            )
        ),
        call!(
            "EnrollLearners",
            admin.enroll_learners(
                login,
                // Itself, in a course it is not enrolled in yet.
                pb::EnrollLearnersRequest {
                    course_ids: vec![acme::WELCOME_COURSE.into(), acme::SECRET_COURSE.into(),],
                    learner_ids: vec![acme::LEARNER.into(), acme::SUPPORTER.into()],
                    ..Default::default()
                }
            )
        ),
        call!(
            "CreateScimToken",
            admin.create_scim_token(login, pb::CreateScimTokenRequest::default())
        ),
        call!(
            "ListScimTokens",
            admin.list_scim_tokens(login, pb::ListScimTokensRequest {})
        ),
    ];
    // The department CreateDepartment made, empty, where the caller may make one (the owner);
    // otherwise its own department (the learner's), which it must not delete either. (One call
    // more than the methods would take a deactivated login past the failed-login throttle.)
    let doomed = created.map_or_else(
        |_| acme::SALES_EAST.to_owned(),
        |made| made.into_inner().department_id,
    );
    outcomes.push(call!(
        "DeleteDepartment",
        admin.delete_department(
            login,
            pb::DeleteDepartmentRequest {
                department_id: doomed,
            },
        )
    ));
    // Every user, and (for the learner) only its own points.
    for (name, user_ids) in [
        ("GetPoints", vec![]),
        ("GetPoints of the caller", vec![acme::LEARNER.to_owned()]),
    ] {
        let outcome = match admin.get_points(request(login, points(user_ids))).await {
            Ok(response) => {
                let mut stream = response.into_inner();
                // An allowed call must stream without error to the end.
                loop {
                    match stream.message().await {
                        Ok(Some(_)) => continue,
                        Ok(None) => break Ok(()),
                        Err(status) => {
                            panic!("{name} failed midway instead of up front: {status:?}")
                        }
                    }
                }
            }
            Err(status) => Err(status),
        };
        outcomes.push((name, outcome));
    }
    outcomes
}

/// Calls every AdminService method of the group lists and writes and the points writes as
/// `login`, with requests an account owner could make, and returns each outcome by name.
/// Kept apart from [`call_every_admin_method`] so that a deactivated login can make both
/// batches with the failed-login throttle's window passed in between.
async fn call_every_group_and_points_method(
    channel: Channel,
    login: Option<Login>,
) -> Vec<(&'static str, Result<(), Status>)> {
    let mut admin = AdminServiceClient::new(channel);
    vec![
        call!(
            "ListGroups",
            admin.list_groups(
                login,
                pb::ListGroupsRequest {
                    page: Some(pb::PageRequest::default()),
                }
            )
        ),
        call!(
            "AddGroup",
            admin.add_group(
                login,
                pb::AddGroupRequest {
                    name: "New hires".into(),
                    user_ids: vec![acme::ENGINEER.into()],
                }
            )
        ),
        call!(
            "DeleteGroup",
            admin.delete_group(
                login,
                pb::DeleteGroupRequest {
                    group_id: acme::EMPTY_GROUP.into(),
                }
            )
        ),
        call!(
            "ReplaceGroupMembers",
            admin.replace_group_members(
                login,
                pb::ReplaceGroupMembersRequest {
                    group_id: acme::INTERNS.into(),
                    user_ids: vec![acme::LEARNER.into()],
                }
            )
        ),
        call!(
            "AwardPoints",
            admin.award_points(
                login,
                pb::AwardPointsRequest {
                    user_id: acme::LEARNER.into(),
                    amount: "5".into(),
                    reason: Some("Quiz".into()),
                }
            )
        ),
        call!(
            "WithdrawPoints",
            admin.withdraw_points(
                login,
                pb::WithdrawPointsRequest {
                    user_id: acme::LEARNER.into(),
                    amount: "5".into(),
                    reason: None,
                }
            )
        ),
    ]
}

/// Calls the user methods of AdminService as `login`, as an owner could. Kept apart from
/// [`call_every_admin_method`] so that a deactivated login's calls stay below the
/// failed-login throttle.
async fn call_user_methods(
    channel: Channel,
    login: Option<Login>,
) -> Vec<(&'static str, Result<(), Status>)> {
    let mut admin = AdminServiceClient::new(channel);
    vec![
        call!(
            "GetUser",
            admin.get_user(
                login,
                pb::GetUserRequest {
                    user_id: acme::ENGINEER.into(),
                }
            )
        ),
        call!(
            "AddUser",
            admin.add_user(
                login,
                pb::AddUserRequest {
                    login: "grpc.made@acme.example.com".into(),
                    password: None,
                    role: "learner".into(),
                    role_id: None,
                    department_id: acme::SALES_EAST.into(),
                    managed_department_ids: vec![],
                    first_name: None,
                    last_name: None,
                    email: None,
                    fields: vec![],
                    group_ids: vec![],
                }
            )
        ),
        call!(
            "ChangeUserPassword",
            admin.change_user_password(
                login,
                pb::ChangeUserPasswordRequest {
                    user_id: acme::ENGINEER.into(),
                    password: "another long password".into(),
                }
            )
        ),
        call!(
            "ChangeUserStatus",
            admin.change_user_status(
                login,
                pb::ChangeUserStatusRequest {
                    user_id: acme::ENGINEER.into(),
                    status: 1,
                }
            )
        ),
        call!(
            "UpdateUser",
            admin.update_user(
                login,
                pb::UpdateUserRequest {
                    user_id: acme::ENGINEER.into(),
                    first_name: Some("Grace".into()),
                    ..Default::default()
                }
            )
        ),
        call!(
            "SetUsersStatus",
            admin.set_users_status(
                login,
                pb::SetUsersStatusRequest {
                    user_ids: vec![acme::ENGINEER.into()],
                    status: 3,
                }
            )
        ),
        call!(
            "FindExistingUsers",
            admin.find_existing_users(
                login,
                pb::FindExistingUsersRequest {
                    user_ids: vec![acme::ENGINEER.into()],
                }
            )
        ),
        call!(
            "MoveUsersToDepartment",
            admin.move_users_to_department(
                login,
                pb::MoveUsersToDepartmentRequest {
                    department_id: acme::SUPPORT.into(),
                    user_ids: vec![acme::ENGINEER.into()],
                }
            )
        ),
        call!(
            "RemoveUserFromGroups",
            admin.remove_user_from_groups(
                login,
                pb::RemoveUserFromGroupsRequest {
                    user_id: acme::ENGINEER.into(),
                    group_ids: vec![acme::INTERNS.into()],
                }
            )
        ),
        call!(
            "DeleteUser",
            admin.delete_user(
                login,
                pb::DeleteUserRequest {
                    user_id: acme::SUPPORTER.into(),
                }
            )
        ),
        call!(
            "ListUsers",
            admin.list_users(
                login,
                pb::ListUsersRequest {
                    page: None,
                    department_ids: vec![acme::ROOT.into()],
                    ..Default::default()
                }
            )
        ),
    ]
}

/// Calls every DirectoryService method as `login` with a request an account owner could
/// make, and returns each outcome by method name.
async fn call_every_directory_method(
    channel: Channel,
    login: Option<Login>,
) -> Vec<(&'static str, Result<(), Status>)> {
    let mut directory = DirectoryServiceClient::new(channel);
    let role = |name: &str| {
        Some(pb::RoleAssignment {
            role: pb::Role::from_str_name(&format!("ROLE_{}", name.to_uppercase()))
                .expect("a role of the contract")
                .into(),
            custom_role_id: None,
        })
    };
    vec![
        call!(
            "CreateUser",
            directory.create_user(
                login,
                pb::CreateUserRequest {
                    email: "new.admin@acme.example.com".into(),
                    password: "a long enough password".into(),
                    role: role("account_administrator"),
                    department_id: acme::SALES_EAST.into(),
                    managed_department_ids: vec![],
                    active: true,
                }
            )
        ),
        call!(
            "SetUserPassword",
            directory.set_user_password(
                login,
                pb::SetUserPasswordRequest {
                    user_id: acme::ENGINEER.into(),
                    password: "another password".into(),
                }
            )
        ),
        call!(
            "SetUserPassword of the caller",
            directory.set_user_password(
                login,
                pb::SetUserPasswordRequest {
                    user_id: acme::LEARNER.into(),
                    password: "my own new password".into(),
                }
            )
        ),
        call!(
            "SetUserRole",
            directory.set_user_role(
                login,
                pb::SetUserRoleRequest {
                    user_id: acme::LEARNER.into(),
                    role: role("account_owner"),
                }
            )
        ),
        call!(
            "SetUserManagedDepartments",
            directory.set_user_managed_departments(
                login,
                pb::SetUserManagedDepartmentsRequest {
                    user_id: acme::LEARNER.into(),
                    managed_department_ids: vec![acme::ROOT.into()],
                }
            )
        ),
        call!(
            "SetUserActive",
            directory.set_user_active(
                login,
                pb::SetUserActiveRequest {
                    user_id: acme::ADMIN.into(),
                    active: false,
                }
            )
        ),
        call!(
            "CreateGroup",
            directory.create_group(
                login,
                pb::CreateGroupRequest {
                    name: "Learners' club".into(),
                    smart_department_id: None,
                }
            )
        ),
        call!(
            "AddGroupMembers",
            directory.add_group_members(
                login,
                pb::AddGroupMembersRequest {
                    group_id: acme::EMPTY_GROUP.into(),
                    user_ids: vec![acme::LEARNER.into()],
                }
            )
        ),
        call!(
            "CreateProject",
            directory.create_project(
                login,
                pb::CreateProjectRequest {
                    name: "Side project".into(),
                    author_ids: vec![],
                }
            )
        ),
        call!(
            "CreateContentItem",
            directory.create_content_item(
                login,
                pb::CreateContentItemRequest {
                    project_id: acme::ONBOARDING.into(),
                    title: "Shortcut".into(),
                    description: String::new(),
                    user_id: acme::LEARNER.into(),
                    r#type: "Course".into(),
                    added_date: None,
                    view_url: None,
                }
            )
        ),
        call!(
            "CreateEnrollment",
            directory.create_enrollment(
                login,
                pb::CreateEnrollmentRequest {
                    learner_id: acme::ENGINEER.into(),
                    content_item_id: acme::SECRET_COURSE.into(),
                }
            )
        ),
        call!(
            "AddPoints",
            directory.add_points(
                login,
                pb::AddPointsRequest {
                    user_id: acme::LEARNER.into(),
                    points: 1_000,
                }
            )
        ),
    ]
}

#[track_caller]
fn assert_every_call_refused(
    outcomes: Vec<(&'static str, Result<(), Status>)>,
    code: Code,
    who: &str,
) {
    for (method, outcome) in outcomes {
        let status = outcome
            .err()
            .unwrap_or_else(|| panic!("{who} calling {method} was allowed"));
        assert_eq!(status.code(), code, "{who} calling {method}: {status:?}");
        assert!(
            !status.message().is_empty(),
            "{method}: the refusal says why"
        );
    }
}

#[track_caller]
fn assert_every_call_allowed(outcomes: Vec<(&'static str, Result<(), Status>)>) {
    for (method, outcome) in outcomes {
        outcome.unwrap_or_else(|status| panic!("the owner calling {method}: {status:?}"));
    }
}

async fn a_learner_is_denied_every_admin_method_and_nothing_changes(stack: &TestStack) {
    let before = stack.snapshot().await;
    let outcomes = call_every_admin_method(stack.grpc_channel().await, Some(world::LEARNER)).await;
    assert_eq!(outcomes.len(), 15);
    assert_every_call_refused(outcomes, Code::PermissionDenied, "the learner");
    let outcomes =
        call_every_group_and_points_method(stack.grpc_channel().await, Some(world::LEARNER)).await;
    assert_eq!(outcomes.len(), 6);
    assert_every_call_refused(outcomes, Code::PermissionDenied, "the learner");
    let outcomes = call_user_methods(stack.grpc_channel().await, Some(world::LEARNER)).await;
    assert_eq!(outcomes.len(), 11);
    assert_every_call_refused(outcomes, Code::PermissionDenied, "the learner");
    assert_eq!(
        stack.snapshot().await,
        before,
        "a refused call changed stored data"
    );

    // The very same requests are valid: the owner's go through.
    assert_every_call_allowed(
        call_every_admin_method(stack.grpc_channel().await, Some(world::OWNER)).await,
    );
    assert_every_call_allowed(
        call_every_group_and_points_method(stack.grpc_channel().await, Some(world::OWNER)).await,
    );
    assert_every_call_allowed(
        call_user_methods(stack.grpc_channel().await, Some(world::OWNER)).await,
    );
    assert_ne!(stack.snapshot().await, before);
}

async fn a_learner_is_denied_every_directory_method_and_nothing_changes(stack: &TestStack) {
    let before = stack.snapshot().await;
    let outcomes =
        call_every_directory_method(stack.grpc_channel().await, Some(world::LEARNER)).await;
    assert_eq!(outcomes.len(), 12);
    assert_every_call_refused(outcomes, Code::PermissionDenied, "the learner");
    assert_eq!(
        stack.snapshot().await,
        before,
        "a refused call changed stored data"
    );

    // Only the role refused them: the owner's identical requests go through.
    assert_every_call_allowed(
        call_every_directory_method(stack.grpc_channel().await, Some(world::OWNER)).await,
    );
    assert_ne!(stack.snapshot().await, before);
}

async fn scoped_callers_meet_their_scope_over_grpc_too(stack: &TestStack) {
    let mut admin = AdminServiceClient::new(stack.grpc_channel().await);
    let before = stack.snapshot().await;

    let mixed = pb::DeleteEnrollmentsRequest {
        enrollment_ids: vec![acme::LEARNER_WELCOME.into(), acme::ENGINEER_WELCOME.into()],
    };
    let status = admin
        .delete_enrollments(request(Some(world::DEPT_ADMIN), mixed))
        .await
        .expect_err("an enrollment of Engineering is outside Sales");
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");

    let status = admin
        .get_points(request(
            Some(world::PUBLISHER),
            pb::GetPointsRequest {
                user_ids: vec![acme::LEARNER.into()],
            },
        ))
        .await
        .expect_err("the learner is outside Engineering");
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    assert!(status.message().contains(acme::LEARNER), "{status:?}");

    let status = admin
        .update_department(request(
            Some(world::DEPT_ADMIN),
            pb::UpdateDepartmentRequest {
                department_id: acme::ENGINEERING.into(),
                name: Some("Mine now".into()),
                parent_department_id: None,
                code: None,
            },
        ))
        .await
        .expect_err("Engineering is outside Sales");
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");

    let status = admin
        .get_content_item(request(
            Some(world::AUTHOR),
            pb::GetContentItemRequest {
                content_item_id: acme::SECRET_COURSE.into(),
            },
        ))
        .await
        .expect_err("the author does not author the secret project");
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");

    let group = admin
        .get_group(request(
            Some(world::AUTHOR),
            pb::GetGroupRequest {
                group_id: acme::INTERNS.into(),
            },
        ))
        .await
        .expect("an author reads the count")
        .into_inner()
        .group
        .expect("group");
    assert_eq!(group.users_count, 2);
    assert!(
        group.user_ids.is_empty(),
        "an author gets no member ids over gRPC either: {group:?}"
    );

    assert_eq!(stack.snapshot().await, before);

    // Inside the scope the same caller succeeds.
    let own = pb::DeleteEnrollmentsRequest {
        enrollment_ids: vec![acme::LEARNER_WELCOME.into()],
    };
    let deleted = admin
        .delete_enrollments(request(Some(world::DEPT_ADMIN), own))
        .await
        .expect("the learner is in Sales East")
        .into_inner();
    assert_eq!(deleted.deleted_count, 1);
    let again = pb::DeleteEnrollmentsRequest {
        enrollment_ids: vec![
            acme::LEARNER_WELCOME.into(),
            acme::LEARNER_WELCOME.to_uppercase(),
        ],
    };
    let deleted = admin
        .delete_enrollments(request(Some(world::DEPT_ADMIN), again))
        .await
        .expect("a retry succeeds")
        .into_inner();
    assert_eq!(
        deleted.deleted_count, 0,
        "already deleted ones do not count"
    );
}

async fn calls_without_valid_credentials_are_unauthenticated(stack: &TestStack) {
    let before = stack.snapshot().await;
    let channel = stack.grpc_channel().await;
    assert_every_call_refused(
        call_every_admin_method(channel.clone(), None).await,
        Code::Unauthenticated,
        "an anonymous caller",
    );
    assert_every_call_refused(
        call_every_group_and_points_method(channel.clone(), None).await,
        Code::Unauthenticated,
        "an anonymous caller",
    );
    assert_every_call_refused(
        call_user_methods(channel.clone(), None).await,
        Code::Unauthenticated,
        "an anonymous caller",
    );
    assert_every_call_refused(
        call_every_directory_method(channel.clone(), None).await,
        Code::Unauthenticated,
        "an anonymous caller",
    );
    // A deactivated administrator is nobody, too. Its calls count as failed logins: once the
    // throttle's limit is reached the rest are held and answered RESOURCE_EXHAUSTED, which
    // refuses them just the same.
    let outcomes = call_every_admin_method(channel.clone(), Some(world::FORMER_ADMIN)).await;
    let throttled = outcomes
        .iter()
        .position(|(_, outcome)| {
            matches!(outcome, Err(status) if status.code() == Code::ResourceExhausted)
        })
        .unwrap_or(outcomes.len());
    assert!(throttled >= 9, "throttled after {throttled} calls");
    let mut outcomes = outcomes;
    let after = outcomes.split_off(throttled);
    assert_every_call_refused(
        outcomes,
        Code::Unauthenticated,
        "a deactivated administrator",
    );
    assert_every_call_refused(
        after,
        Code::ResourceExhausted,
        "a throttled deactivated administrator",
    );
    // Past the failed-login throttle's window (300 s), so the next batch meets the same rule.
    stack.clock.advance(std::time::Duration::from_secs(301));
    assert_every_call_refused(
        call_every_group_and_points_method(channel.clone(), Some(world::FORMER_ADMIN)).await,
        Code::Unauthenticated,
        "a deactivated administrator",
    );
    // A wrong password, once (ten would throttle the login).
    let mut wrong = Request::new(pb::GetGroupRequest {
        group_id: acme::INTERNS.into(),
    });
    wrong
        .metadata_mut()
        .insert(ACCOUNT_URL, world::ACME_URL.parse().expect("ascii"));
    wrong
        .metadata_mut()
        .insert(EMAIL, world::OWNER.email.parse().expect("ascii"));
    wrong
        .metadata_mut()
        .insert(PASSWORD, "not the password".parse().expect("ascii"));
    let status = AdminServiceClient::new(channel)
        .get_group(wrong)
        .await
        .expect_err("wrong password");
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(stack.snapshot().await, before);
}
