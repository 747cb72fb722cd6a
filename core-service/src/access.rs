//! What an authenticated caller may do: the permission table of contract section 3.
//!
//! [`Caller::grant`] answers "may this caller perform this operation, and how far?"
//! from the role alone; the services then apply the returned [`Grant`] to the data
//! (scope checks need the department tree, see `service::scope`).

use std::{collections::HashSet, sync::Arc};

use uuid::Uuid;

use crate::{
    domain::roles::{Permission, Role},
    error::{ServiceError, ServiceResult},
};

/// The authenticated user a request acts as.
#[derive(Debug, Clone)]
pub struct Caller {
    pub account_id: Uuid,
    /// The account URL as stored (normalized), used to derive `viewUrl`.
    pub account_url: String,
    pub user_id: Uuid,
    pub role: Role,
    /// Permissions of the custom role; empty for built-in roles.
    pub permissions: HashSet<Permission>,
    /// Departments the user manages; their subtrees are the user's scope.
    pub managed_department_ids: Vec<Uuid>,
    /// The request id the caller sent, recorded in the audit table.
    pub request_id: Option<String>,
    /// The revision of the authenticator that let the caller in (`auth::AuthRevision`),
    /// told when the caller changes who a user is ([`Caller::users_changed`]); `None` for
    /// callers made without one.
    pub auth_revision: Option<Arc<dyn UsersChanged>>,
}

/// Told when a committed write changed who a user is, so that the callers it remembers are
/// read from the database again.
pub trait UsersChanged: Send + Sync + std::fmt::Debug {
    fn users_changed(&self);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    UpdateDepartment,
    CreateDepartment,
    /// Reading one department or listing departments.
    ReadDepartments,
    DeleteDepartment,
    UpdateGroup,
    GetGroup,
    DeleteEnrollments,
    GetContentItem,
    GetPoints,
    /// Listing enrollments (whole or paged).
    ReadEnrollments,
    /// Enrolling learners in content items (`POST /enrollment`).
    CreateEnrollments,
    /// Listing groups (`GET /group`, `GET /groups`).
    ListGroups,
    /// `POST /group`.
    CreateGroup,
    DeleteGroup,
    /// Replacing a plain group's members.
    ReplaceGroupMembers,
    /// Awarding or withdrawing gamification points.
    AwardPoints,
    /// Reading one user's profile or listing users (`GET /user…`; not the paged `/users`).
    ReadUsers,
    /// The paged `GET /users`, which an Author may call too (neighbours 4.4).
    PageUsers,
    /// `POST /user`.
    CreateUser,
    /// `POST /user/{id}`, its password and its status.
    UpdateUser,
    /// `DELETE /user/{id}`.
    DeleteUser,
    /// The internal directory writes (users, groups, projects, content, enrollments, points).
    ManageDirectory,
    /// The learner results lists and a content item's final statuses.
    ReadResults,
    /// Recording results: an administrator's status, a reset, the tracked results.
    WriteResults,
    /// Reading a recording's task: every task of the account ([`Grant::Everything`]) or the
    /// caller's own ([`Grant::Own`]).
    ReadResultTasks,
    /// Every `/webhook` call: owners and account administrators only, since events carry
    /// the whole account and cannot be limited to a scope (no custom-role permission).
    ManageWebhooks,
}

impl Operation {
    fn permission(self) -> Option<Permission> {
        Some(match self {
            Operation::UpdateDepartment => Permission::DepartmentUpdate,
            Operation::CreateDepartment => Permission::DepartmentCreate,
            Operation::ReadDepartments => Permission::DepartmentRead,
            Operation::DeleteDepartment => Permission::DepartmentDelete,
            Operation::UpdateGroup => Permission::GroupUpdate,
            Operation::GetGroup => Permission::GroupRead,
            Operation::DeleteEnrollments => Permission::EnrollmentDelete,
            Operation::GetContentItem => Permission::ContentRead,
            Operation::GetPoints => Permission::PointsRead,
            Operation::ReadEnrollments => Permission::EnrollmentRead,
            Operation::CreateEnrollments => Permission::EnrollmentCreate,
            Operation::ListGroups => Permission::GroupRead,
            Operation::CreateGroup => Permission::GroupCreate,
            Operation::DeleteGroup => Permission::GroupDelete,
            Operation::ReplaceGroupMembers => Permission::GroupMembers,
            Operation::AwardPoints => Permission::PointsAward,
            Operation::ReadUsers | Operation::PageUsers => Permission::UserRead,
            Operation::CreateUser => Permission::UserCreate,
            Operation::UpdateUser => Permission::UserUpdate,
            Operation::DeleteUser => Permission::UserDelete,
            Operation::ReadResults => Permission::ResultsRead,
            Operation::WriteResults => Permission::ResultsWrite,
            Operation::ManageDirectory | Operation::ReadResultTasks | Operation::ManageWebhooks => {
                return None;
            }
        })
    }

    /// How far a scoped role (department administrator, publisher, custom) reaches.
    fn scoped_grant(self) -> Grant {
        match self {
            Operation::UpdateDepartment
            | Operation::CreateDepartment
            | Operation::ReadDepartments
            | Operation::DeleteDepartment
            | Operation::DeleteEnrollments
            | Operation::GetPoints
            | Operation::ReadEnrollments
            | Operation::CreateEnrollments
            | Operation::CreateGroup
            | Operation::DeleteGroup
            | Operation::ReplaceGroupMembers
            | Operation::AwardPoints
            | Operation::ReadUsers
            | Operation::PageUsers
            | Operation::CreateUser
            | Operation::UpdateUser
            | Operation::DeleteUser
            | Operation::ReadResults
            | Operation::WriteResults => Grant::InScope,
            Operation::ReadResultTasks => Grant::Own,
            Operation::UpdateGroup
            | Operation::GetGroup
            | Operation::ListGroups
            | Operation::GetContentItem
            | Operation::ManageDirectory
            | Operation::ManageWebhooks => Grant::Everything,
        }
    }

    fn denial(self) -> &'static str {
        match self {
            Operation::UpdateDepartment => "You do not have permission to update departments.",
            Operation::CreateDepartment => "You do not have permission to add departments.",
            Operation::ReadDepartments => "You do not have permission to read departments.",
            Operation::DeleteDepartment => "You do not have permission to delete departments.",
            Operation::UpdateGroup => "You do not have permission to update groups.",
            Operation::GetGroup => "You do not have permission to read groups.",
            Operation::DeleteEnrollments => "You do not have permission to delete enrollments.",
            Operation::GetContentItem => "You do not have permission to read content items.",
            Operation::GetPoints => "You do not have permission to read points.",
            Operation::ReadEnrollments => "You do not have permission to read enrollments.",
            Operation::CreateEnrollments => "You do not have permission to enroll learners.",
            Operation::ListGroups => "You do not have permission to read groups.",
            Operation::CreateGroup => "You do not have permission to add groups.",
            Operation::DeleteGroup => "You do not have permission to delete groups.",
            Operation::ReplaceGroupMembers => {
                "You do not have permission to change the members of groups."
            }
            Operation::AwardPoints => "You do not have permission to award or withdraw points.",
            Operation::ReadUsers | Operation::PageUsers => {
                "You do not have permission to read users."
            }
            Operation::CreateUser => "You do not have permission to add users.",
            Operation::UpdateUser => "You do not have permission to change users.",
            Operation::DeleteUser => "You do not have permission to delete users.",
            Operation::ManageDirectory => "You do not have permission to manage the directory.",
            Operation::ReadResults => "You do not have permission to read learner results.",
            Operation::WriteResults => "You do not have permission to record learner results.",
            Operation::ReadResultTasks => "You do not have permission to read tasks.",
            Operation::ManageWebhooks => "You do not have permission to manage webhooks.",
        }
    }
}

/// How far an allowed operation reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// Everything in the account.
    Everything,
    /// Only departments, learners or users inside the caller's scope.
    InScope,
    /// A group's member count, not its members (Author).
    CountOnly,
    /// Content items of projects the caller authors (Author).
    AuthoredProjects,
    /// What the caller itself made (a recording's task).
    Own,
}

impl Caller {
    /// The caller has committed a change to who a user is: every caller the authenticator
    /// remembers is read from the database again on its next request. `service::write`
    /// calls this; nothing else needs to.
    pub fn users_changed(&self) {
        if let Some(revision) = &self.auth_revision {
            revision.users_changed();
        }
    }

    /// The caller's grant for `operation`, or PERMISSION_DENIED.
    pub fn grant(&self, operation: Operation) -> ServiceResult<Grant> {
        use Operation as Op;
        let grant = match (self.role, operation) {
            (Role::AccountOwner | Role::AccountAdministrator, _) => Some(Grant::Everything),
            (
                Role::DepartmentAdministrator,
                Op::UpdateDepartment | Op::ReadDepartments | Op::DeleteDepartment,
            ) => Some(Grant::InScope),
            (Role::Publisher, Op::ReadDepartments) => Some(Grant::InScope),
            (
                Role::DepartmentAdministrator,
                Op::UpdateGroup | Op::GetGroup | Op::GetContentItem,
            ) => Some(Grant::Everything),
            (
                Role::DepartmentAdministrator | Role::Publisher,
                Op::DeleteEnrollments | Op::GetPoints | Op::ReadEnrollments,
            ) => Some(Grant::InScope),
            (Role::DepartmentAdministrator, Op::CreateEnrollments) => Some(Grant::InScope),
            (Role::DepartmentAdministrator, Op::ListGroups) => Some(Grant::Everything),
            (
                Role::DepartmentAdministrator,
                Op::CreateGroup | Op::DeleteGroup | Op::ReplaceGroupMembers | Op::AwardPoints,
            ) => Some(Grant::InScope),
            (
                Role::DepartmentAdministrator,
                Op::ReadUsers | Op::PageUsers | Op::CreateUser | Op::UpdateUser | Op::DeleteUser,
            ) => Some(Grant::InScope),
            // Only the paged list names Authors among its callers (neighbours 4.4); their
            // profiles are everyone's, as an Author has no scope.
            (Role::Author, Op::PageUsers) => Some(Grant::Everything),
            (Role::Author, Op::GetGroup) => Some(Grant::CountOnly),
            (Role::Author, Op::GetContentItem) => Some(Grant::AuthoredProjects),
            (Role::DepartmentAdministrator, Op::ReadResults | Op::WriteResults) => {
                Some(Grant::InScope)
            }
            (Role::DepartmentAdministrator, Op::ReadResultTasks) => Some(Grant::Own),
            // A custom role's tasks are those it recorded, which took `results.write`.
            (Role::Custom, Op::ReadResultTasks) => {
                (self.permissions.contains(&Permission::ResultsWrite)
                    || self.permissions.contains(&Permission::ResultsRead))
                .then_some(Grant::Own)
            }
            (Role::Custom, op) => op
                .permission()
                .filter(|p| self.permissions.contains(p))
                .map(|_| op.scoped_grant()),
            _ => None,
        };
        grant.ok_or_else(|| ServiceError::denied(operation.denial()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(role: Role, permissions: &[Permission]) -> Caller {
        Caller {
            account_id: Uuid::nil(),
            account_url: "https://a.example.com".into(),
            user_id: Uuid::nil(),
            role,
            permissions: permissions.iter().copied().collect(),
            managed_department_ids: vec![],
            request_id: None,
            auth_revision: None,
        }
    }

    const OPS: [Operation; 7] = [
        Operation::UpdateDepartment,
        Operation::CreateDepartment,
        Operation::UpdateGroup,
        Operation::GetGroup,
        Operation::DeleteEnrollments,
        Operation::GetContentItem,
        Operation::GetPoints,
    ];

    fn row(role: Role, permissions: &[Permission]) -> Vec<Option<Grant>> {
        let c = caller(role, permissions);
        OPS.iter().map(|op| c.grant(*op).ok()).collect()
    }

    use Grant::*;

    #[test]
    fn the_permission_table_of_the_contract_holds() {
        let all = vec![Some(Everything); 7];
        assert_eq!(row(Role::AccountOwner, &[]), all);
        assert_eq!(row(Role::AccountAdministrator, &[]), all);
        assert_eq!(
            row(Role::DepartmentAdministrator, &[]),
            vec![
                Some(InScope),
                None,
                Some(Everything),
                Some(Everything),
                Some(InScope),
                Some(Everything),
                Some(InScope)
            ]
        );
        assert_eq!(
            row(Role::Publisher, &[]),
            vec![None, None, None, None, Some(InScope), None, Some(InScope)]
        );
        assert_eq!(
            row(Role::Author, &[]),
            vec![
                None,
                None,
                None,
                Some(CountOnly),
                None,
                Some(AuthoredProjects),
                None
            ]
        );
        assert_eq!(row(Role::Learner, &[]), vec![None; 7]);
    }

    #[test]
    fn custom_roles_get_exactly_their_permissions() {
        assert_eq!(row(Role::Custom, &[]), vec![None; 7]);
        assert_eq!(
            row(Role::Custom, &Permission::ALL),
            vec![
                Some(InScope),
                Some(InScope),
                Some(Everything),
                Some(Everything),
                Some(InScope),
                Some(Everything),
                Some(InScope)
            ]
        );
        assert_eq!(
            row(Role::Custom, &[Permission::GroupRead]),
            vec![None, None, None, Some(Everything), None, None, None]
        );
    }

    #[test]
    fn department_reads_and_deletes_follow_neighbours_section_3() {
        let grants = |role, permissions: &[Permission]| {
            let c = caller(role, permissions);
            [Operation::ReadDepartments, Operation::DeleteDepartment].map(|op| c.grant(op).ok())
        };
        for role in [Role::AccountOwner, Role::AccountAdministrator] {
            assert_eq!(grants(role, &[]), [Some(Everything); 2]);
        }
        assert_eq!(
            grants(Role::DepartmentAdministrator, &[]),
            [Some(InScope); 2]
        );
        assert_eq!(grants(Role::Publisher, &[]), [Some(InScope), None]);
        assert_eq!(grants(Role::Author, &[]), [None; 2]);
        assert_eq!(grants(Role::Learner, &[]), [None; 2]);
        assert_eq!(grants(Role::Custom, &[]), [None; 2]);
        assert_eq!(
            grants(Role::Custom, &[Permission::DepartmentRead]),
            [Some(InScope), None]
        );
        assert_eq!(
            grants(Role::Custom, &[Permission::DepartmentDelete]),
            [None, Some(InScope)]
        );
    }

    #[test]
    fn enrollment_reads_and_creates_follow_neighbours_section_5() {
        let grants = |role, permissions: &[Permission]| {
            let c = caller(role, permissions);
            [Operation::ReadEnrollments, Operation::CreateEnrollments].map(|op| c.grant(op).ok())
        };
        for role in [Role::AccountOwner, Role::AccountAdministrator] {
            assert_eq!(grants(role, &[]), [Some(Everything); 2]);
        }
        assert_eq!(
            grants(Role::DepartmentAdministrator, &[]),
            [Some(InScope); 2]
        );
        assert_eq!(grants(Role::Publisher, &[]), [Some(InScope), None]);
        assert_eq!(grants(Role::Author, &[]), [None; 2]);
        assert_eq!(grants(Role::Learner, &[]), [None; 2]);
        assert_eq!(grants(Role::Custom, &[]), [None; 2]);
        assert_eq!(
            grants(Role::Custom, &[Permission::EnrollmentRead]),
            [Some(InScope), None]
        );
        assert_eq!(
            grants(Role::Custom, &[Permission::EnrollmentCreate]),
            [None, Some(InScope)]
        );
    }

    #[test]
    fn group_lists_and_writes_and_points_writes_follow_neighbours_sections_7_to_9() {
        const NEW: [Operation; 5] = [
            Operation::ListGroups,
            Operation::CreateGroup,
            Operation::DeleteGroup,
            Operation::ReplaceGroupMembers,
            Operation::AwardPoints,
        ];
        let grants = |role, permissions: &[Permission]| {
            let c = caller(role, permissions);
            NEW.map(|op| c.grant(op).ok())
        };
        for role in [Role::AccountOwner, Role::AccountAdministrator] {
            assert_eq!(grants(role, &[]), [Some(Everything); 5]);
        }
        assert_eq!(
            grants(Role::DepartmentAdministrator, &[]),
            [
                Some(Everything),
                Some(InScope),
                Some(InScope),
                Some(InScope),
                Some(InScope)
            ]
        );
        for role in [Role::Publisher, Role::Author, Role::Learner, Role::Custom] {
            assert_eq!(grants(role, &[]), [None; 5], "{role}");
        }
        assert_eq!(
            grants(Role::Custom, &[Permission::GroupRead]),
            [Some(Everything), None, None, None, None]
        );
        let pairs = [
            (Permission::GroupCreate, 1),
            (Permission::GroupDelete, 2),
            (Permission::GroupMembers, 3),
            (Permission::PointsAward, 4),
        ];
        for (permission, index) in pairs {
            let mut expected = [None; 5];
            expected[index] = Some(InScope);
            assert_eq!(
                grants(Role::Custom, &[permission]),
                expected,
                "{permission}"
            );
        }
    }

    #[test]
    fn only_account_owners_and_administrators_manage_the_directory() {
        assert!(
            caller(Role::AccountOwner, &[])
                .grant(Operation::ManageDirectory)
                .is_ok()
        );
        assert!(
            caller(Role::AccountAdministrator, &[])
                .grant(Operation::ManageDirectory)
                .is_ok()
        );
        for role in [
            Role::DepartmentAdministrator,
            Role::Publisher,
            Role::Author,
            Role::Learner,
        ] {
            assert!(caller(role, &[]).grant(Operation::ManageDirectory).is_err());
        }
        assert!(
            caller(Role::Custom, &Permission::ALL)
                .grant(Operation::ManageDirectory)
                .is_err()
        );
    }

    #[test]
    fn user_reads_follow_neighbours_section_4() {
        let grants = |role, permissions: &[Permission]| {
            let c = caller(role, permissions);
            [Operation::ReadUsers, Operation::PageUsers].map(|op| c.grant(op).ok())
        };
        for role in [Role::AccountOwner, Role::AccountAdministrator] {
            assert_eq!(grants(role, &[]), [Some(Everything); 2]);
        }
        assert_eq!(
            grants(Role::DepartmentAdministrator, &[]),
            [Some(InScope); 2]
        );
        assert_eq!(grants(Role::Author, &[]), [None, Some(Everything)]);
        assert_eq!(grants(Role::Publisher, &[]), [None; 2]);
        assert_eq!(grants(Role::Learner, &[]), [None; 2]);
        assert_eq!(grants(Role::Custom, &[]), [None; 2]);
        assert_eq!(
            grants(Role::Custom, &[Permission::UserRead]),
            [Some(InScope); 2]
        );
        let writes = |role, permissions: &[Permission]| {
            let c = caller(role, permissions);
            [Operation::CreateUser, Operation::UpdateUser].map(|op| c.grant(op).ok())
        };
        assert_eq!(
            writes(Role::AccountAdministrator, &[]),
            [Some(Everything); 2]
        );
        assert_eq!(
            writes(Role::DepartmentAdministrator, &[]),
            [Some(InScope); 2]
        );
        for role in [Role::Publisher, Role::Author, Role::Learner, Role::Custom] {
            assert_eq!(writes(role, &[]), [None; 2]);
        }
        assert_eq!(
            writes(Role::Custom, &[Permission::UserUpdate]),
            [None, Some(InScope)]
        );
    }
}
