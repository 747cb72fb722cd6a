//! `lms.v1` requests into the services' parsed inputs. Each conversion checks the fields
//! in the order the interface lists them, so the first broken rule is the one reported.
//! Ids of addressed resources never fail here ([`ResourceRef`]): they answer NOT_FOUND,
//! after the fields.

use lms_proto::v1 as pb;
use uuid::Uuid;

use crate::{
    domain::{
        Invalid, Reason,
        content::{AddedDate, ViewUrl},
        ids::{IdList, ResourceRef, parse_field_id, parse_optional_field_id},
        login::{EmailAddress, Login, PlainPassword},
        names::{DepartmentCode, DepartmentName, GroupName, ProjectName},
        profile_fields::ProfileFields,
        roles::Role,
        schedule::ScheduleKind,
        text::{Description, MAX_NAME_CHARS, MAX_TYPE_CHARS, required_text},
    },
    service::{
        content::{NewContentItem, NewProject},
        departments::{DepartmentChanges, NewDepartment},
        enrollments::NewEnrollments,
        groups::{GroupChanges, NewGroup, NewMembers},
        points::{PointsMove, PointsUser},
        users::{self, NamedIds, Names, NewProfile, ProfileChanges, RoleChoice, email_of},
    },
};

/// A role of the contract as the domain's; `None` for ROLE_UNSPECIFIED.
fn domain_role(role: pb::Role) -> Option<Role> {
    Some(match role {
        pb::Role::Unspecified => return None,
        pb::Role::AccountOwner => Role::AccountOwner,
        pb::Role::AccountAdministrator => Role::AccountAdministrator,
        pb::Role::DepartmentAdministrator => Role::DepartmentAdministrator,
        pb::Role::Publisher => Role::Publisher,
        pb::Role::Author => Role::Author,
        pb::Role::Learner => Role::Learner,
        pb::Role::Custom => Role::Custom,
    })
}

/// The assignment's role: missing (no assignment, or ROLE_UNSPECIFIED) and numbers the
/// contract does not list (a newer client's) are refused naming the field.
fn role_choice(assignment: Option<&pb::RoleAssignment>) -> Result<RoleChoice, Invalid> {
    let Some(assignment) = assignment else {
        return Err(Invalid::new("role", Reason::Missing));
    };
    let role = pb::Role::try_from(assignment.role).map_err(|_| {
        let names: Vec<&str> = Role::ALL
            .iter()
            .map(|role| pb_role(*role).as_str_name())
            .collect();
        Invalid::new(
            "role",
            Reason::NotOneOf {
                raw: assignment.role.to_string(),
                allowed: names.join(", "),
            },
        )
    })?;
    let role = domain_role(role).ok_or_else(|| Invalid::new("role", Reason::Missing))?;
    RoleChoice::with_role(role, assignment.custom_role_id.as_deref())
}

/// The contract's name of a domain role.
fn pb_role(role: Role) -> pb::Role {
    match role {
        Role::AccountOwner => pb::Role::AccountOwner,
        Role::AccountAdministrator => pb::Role::AccountAdministrator,
        Role::DepartmentAdministrator => pb::Role::DepartmentAdministrator,
        Role::Publisher => pb::Role::Publisher,
        Role::Author => pb::Role::Author,
        Role::Learner => pb::Role::Learner,
        Role::Custom => pb::Role::Custom,
    }
}

impl TryFrom<pb::CreateUserRequest> for NewProfile {
    type Error = Invalid;

    fn try_from(req: pb::CreateUserRequest) -> Result<Self, Invalid> {
        Ok(Self {
            login: Login::parse(&req.email)?,
            names: Names::default(),
            email: None,
            fields: ProfileFields::default(),
            group_ids: IdList::default(),
            password: Some(PlainPassword::parse(&req.password)?),
            role: role_choice(req.role.as_ref())?,
            department_id: parse_field_id("departmentId", &req.department_id)?,
            managed_department_ids: IdList::parse(
                "managedDepartmentIds",
                &req.managed_department_ids,
            )?,
            active: req.active,
            external_id: None,
        })
    }
}

/// `SetUserRole`: a change of the role alone.
impl TryFrom<&pb::SetUserRoleRequest> for ProfileChanges {
    type Error = Invalid;

    fn try_from(req: &pb::SetUserRoleRequest) -> Result<Self, Invalid> {
        Ok(Self {
            role: Some(role_choice(req.role.as_ref())?),
            ..Self::default()
        })
    }
}

/// `SetUserManagedDepartments`: a change of the managed departments alone.
impl TryFrom<&pb::SetUserManagedDepartmentsRequest> for ProfileChanges {
    type Error = Invalid;

    fn try_from(req: &pb::SetUserManagedDepartmentsRequest) -> Result<Self, Invalid> {
        let field = "managedDepartmentIds";
        Ok(Self {
            managed_department_ids: Some(NamedIds {
                field,
                ids: IdList::parse(field, &req.managed_department_ids)?,
            }),
            ..Self::default()
        })
    }
}

/// `SetUserActive`: active, or blocked (the directory does not tell an ended employment).
pub(super) fn active_status(active: bool) -> users::UserStatus {
    if active {
        users::UserStatus::Active
    } else {
        users::UserStatus::Blocked
    }
}

impl TryFrom<pb::CreateGroupRequest> for NewGroup {
    type Error = Invalid;

    fn try_from(req: pb::CreateGroupRequest) -> Result<Self, Invalid> {
        Ok(Self {
            name: GroupName::parse(&req.name)?,
            smart_department_id: parse_optional_field_id(
                "smartDepartmentId",
                req.smart_department_id.as_deref(),
            )?,
            user_ids: IdList::default(),
            external_id: None,
        })
    }
}

impl TryFrom<pb::AddGroupMembersRequest> for NewMembers {
    type Error = Invalid;

    fn try_from(req: pb::AddGroupMembersRequest) -> Result<Self, Invalid> {
        Ok(Self {
            user_ids: IdList::parse("userIds", &req.user_ids)?,
            group: ResourceRef::parse(req.group_id),
        })
    }
}

impl TryFrom<pb::CreateProjectRequest> for NewProject {
    type Error = Invalid;

    fn try_from(req: pb::CreateProjectRequest) -> Result<Self, Invalid> {
        Ok(Self {
            name: ProjectName::parse(&req.name)?,
            author_ids: IdList::parse("authorIds", &req.author_ids)?,
        })
    }
}

impl TryFrom<pb::CreateContentItemRequest> for NewContentItem {
    type Error = Invalid;

    fn try_from(req: pb::CreateContentItemRequest) -> Result<Self, Invalid> {
        Ok(Self {
            project_id: parse_field_id("projectId", &req.project_id)?,
            user_id: parse_field_id("userId", &req.user_id)?,
            title: required_text("title", &req.title, MAX_NAME_CHARS)?,
            description: Description::parse(&req.description)?,
            content_type: required_text("type", &req.r#type, MAX_TYPE_CHARS)?,
            added_date: AddedDate::parse_or_now(req.added_date.as_deref())?,
            view_url: ViewUrl::parse_optional(req.view_url.as_deref())?,
        })
    }
}

impl TryFrom<pb::CreateEnrollmentRequest> for NewEnrollments {
    type Error = Invalid;

    fn try_from(req: pb::CreateEnrollmentRequest) -> Result<Self, Invalid> {
        Ok(Self::one(
            parse_field_id("learnerId", &req.learner_id)?,
            parse_field_id("contentItemId", &req.content_item_id)?,
        ))
    }
}

/// A signed addition (`Direction::Add`) to the total of the user the call is about.
impl From<pb::AddPointsRequest> for PointsMove {
    fn from(req: pb::AddPointsRequest) -> Self {
        Self {
            user: PointsUser::Addressed(ResourceRef::parse(req.user_id)),
            amount: req.points,
            reason: None,
        }
    }
}

impl TryFrom<pb::CreateDepartmentRequest> for NewDepartment {
    type Error = Invalid;

    fn try_from(req: pb::CreateDepartmentRequest) -> Result<Self, Invalid> {
        Ok(Self {
            name: DepartmentName::parse(&req.name)?,
            parent_department_id: parse_field_id("parentDepartmentId", &req.parent_department_id)?,
            code: req
                .code
                .as_deref()
                .map(DepartmentCode::parse)
                .transpose()?
                .unwrap_or_default(),
        })
    }
}

impl TryFrom<pb::UpdateDepartmentRequest> for DepartmentChanges {
    type Error = Invalid;

    fn try_from(req: pb::UpdateDepartmentRequest) -> Result<Self, Invalid> {
        Ok(Self {
            name: req.name.as_deref().map(DepartmentName::parse).transpose()?,
            code: req.code.as_deref().map(DepartmentCode::parse).transpose()?,
            parent_department_id: req
                .parent_department_id
                .as_deref()
                .map(|raw| parse_field_id("parentDepartmentId", raw))
                .transpose()?,
            department: ResourceRef::parse(req.department_id),
        })
    }
}

impl TryFrom<pb::UpdateGroupRequest> for GroupChanges {
    type Error = Invalid;

    fn try_from(req: pb::UpdateGroupRequest) -> Result<Self, Invalid> {
        Ok(Self {
            name: req.name.as_deref().map(GroupName::parse).transpose()?,
            group: ResourceRef::parse(req.group_id),
        })
    }
}

/// `enrollmentIds` of a deletion: at least one.
impl TryFrom<pb::AddGroupRequest> for NewGroup {
    type Error = Invalid;

    fn try_from(req: pb::AddGroupRequest) -> Result<Self, Invalid> {
        Ok(Self {
            name: GroupName::parse(&req.name)?,
            smart_department_id: None,
            user_ids: IdList::parse("userIds", &req.user_ids)?,
            external_id: None,
        })
    }
}

impl TryFrom<pb::ReplaceGroupMembersRequest> for NewMembers {
    type Error = Invalid;

    fn try_from(req: pb::ReplaceGroupMembersRequest) -> Result<Self, Invalid> {
        Ok(Self {
            user_ids: IdList::parse("userIds", &req.user_ids)?,
            group: ResourceRef::parse(req.group_id),
        })
    }
}

impl TryFrom<pb::AwardPointsRequest> for PointsMove {
    type Error = Invalid;

    fn try_from(req: pb::AwardPointsRequest) -> Result<Self, Invalid> {
        PointsMove::parse(&req.user_id, &req.amount, req.reason.as_deref())
    }
}

impl TryFrom<pb::WithdrawPointsRequest> for PointsMove {
    type Error = Invalid;

    fn try_from(req: pb::WithdrawPointsRequest) -> Result<Self, Invalid> {
        PointsMove::parse(&req.user_id, &req.amount, req.reason.as_deref())
    }
}

pub(super) fn enrollment_ids(req: &pb::DeleteEnrollmentsRequest) -> Result<IdList, Invalid> {
    IdList::parse_non_empty("enrollmentIds", &req.enrollment_ids)
}

/// `userIds` of a bulk user call: 1 to 10,000 ids, counted as sent.
pub(super) fn user_ids(raw: &[String]) -> Result<IdList, Invalid> {
    IdList::parse_non_empty("userIds", raw)
}

/// `userIds` of a points read: none means every user the caller may see.
pub(super) fn points_filter(req: &pb::GetPointsRequest) -> Result<IdList, Invalid> {
    IdList::parse("userIds", &req.user_ids)
}

/// The filters of an enrollment listing (learners, courses, enrollments); each malformed id
/// is refused naming its list.
pub(super) fn enrollment_filter(
    [learner_ids, course_ids, enrollment_ids]: [&[String]; 3],
) -> Result<crate::service::enrollments::EnrollmentFilter, Invalid> {
    Ok(crate::service::enrollments::EnrollmentFilter {
        learner_ids: IdList::parse("learnerIds", learner_ids)?,
        course_ids: IdList::parse("courseIds", course_ids)?,
        enrollment_ids: IdList::parse("enrollmentIds", enrollment_ids)?,
    })
}

/// The learners, courses and dates of `POST /enrollment`.
pub(super) fn new_enrollments(
    req: &pb::EnrollLearnersRequest,
) -> Result<crate::service::enrollments::NewEnrollments, Invalid> {
    use crate::service::enrollments::RawEnrollments;
    NewEnrollments::parse(&RawEnrollments {
        course_ids: &req.course_ids,
        learner_ids: &req.learner_ids,
        access_date: req.access_date.as_deref(),
        due_date_type: req.due_date_type.as_deref(),
        due_date: req.due_date.as_deref(),
        due_period: req.due_period.as_deref(),
        lock_after_due_date: req.lock_after_due_date,
    })
}

/// A user's profile as the contract shows it.
pub(super) fn user_profile(profile: users::UserProfile) -> pb::UserProfile {
    let users::UserProfile {
        user,
        group_ids,
        managed_department_ids,
        fields,
        last_sign_in_at,
    } = profile;
    let status = match (user.active, user.employment_ended) {
        (true, _) => 1,
        (false, false) => 3,
        (false, true) => 5,
    };
    let ids = |ids: Vec<Uuid>| ids.iter().map(ToString::to_string).collect();
    let day = |date: Option<chrono::NaiveDate>| {
        date.map(|day| day.format("%Y-%m-%d").to_string())
            .unwrap_or_default()
    };
    pb::UserProfile {
        user_id: user.id.to_string(),
        role: pb_role(user.role).into(),
        role_id: user
            .custom_role_id
            .unwrap_or_else(|| built_in_role_id(user.account_id, user.role))
            .to_string(),
        department_id: user.department_id.to_string(),
        active: user.active,
        email: email_of(&user).to_owned(),
        login: user.email,
        added_at: user
            .created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        status,
        last_sign_in_at: last_sign_in_at
            .map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .unwrap_or_default(),
        fields: fields
            .into_iter()
            .map(|field| pb::ProfileField {
                name: field.name,
                value: field.value,
            })
            .collect(),
        group_ids: ids(group_ids),
        managed_department_ids: ids(managed_department_ids),
        scheduled_deactivation_date: day(user.scheduled_deactivation_date),
        scheduled_termination_date: day(user.scheduled_termination_date),
        first_name: user.first_name,
        last_name: user.last_name,
    }
}

/// The filters of a user listing (departments, groups, logins, e-mail addresses), each id
/// list checked for form.
pub(super) fn user_filter(
    [department_ids, group_ids, logins, emails]: [&[String]; 4],
) -> Result<users::UserFilter, Invalid> {
    Ok(users::UserFilter {
        department_ids: IdList::parse("departments", department_ids)?,
        group_ids: IdList::parse("groups", group_ids)?,
        logins: logins.to_vec(),
        emails: emails.to_vec(),
    })
}

/// The id a built-in role shows in `account_id`'s profiles: the same on every read and
/// replica, different per account (as iSpring's are), and never stored.
fn built_in_role_id(account_id: Uuid, role: Role) -> Uuid {
    use sha2::Digest as _;
    let digest = sha2::Sha256::new()
        .chain_update(b"lms built-in role id\0")
        .chain_update(account_id.as_bytes())
        .chain_update(role.as_str().as_bytes())
        .finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

/// A user to add over HTTP. The role is named as the interface names it (`owner`,
/// `administrator`) or as the contract does; absent or blank, a learner.
pub(super) fn new_profile(req: pb::AddUserRequest) -> Result<users::NewProfile, Invalid> {
    let role = match req.role.trim() {
        "" => "learner",
        "owner" => "account_owner",
        "administrator" => "account_administrator",
        other => other,
    };
    let email = req
        .email
        .as_deref()
        .filter(|email| !email.trim().is_empty())
        .map(EmailAddress::parse)
        .transpose()?;
    // Without a login the e-mail address is the login (as every contract login is).
    let login = match (req.login.trim(), &email) {
        ("", Some(email)) => Login::parse(email.as_str())?,
        (login, _) => Login::parse_name(login)?,
    };
    Ok(users::NewProfile {
        login,
        email,
        fields: profile_fields(&req.fields)?,
        group_ids: IdList::parse("groupIds", &req.group_ids)?,
        names: Names {
            first: person_name("first_name", req.first_name.as_deref())?.unwrap_or_default(),
            last: person_name("last_name", req.last_name.as_deref())?.unwrap_or_default(),
        },
        password: req
            .password
            .as_deref()
            .map(PlainPassword::parse)
            .transpose()?,
        role: RoleChoice::parse(Some(role), req.role_id.as_deref())?,
        department_id: parse_field_id("departmentId", &req.department_id)?,
        managed_department_ids: IdList::parse(MANAGEABLE, &req.managed_department_ids)?,
        active: true,
        external_id: None,
    })
}

fn profile_fields(fields: &[pb::ProfileField]) -> Result<ProfileFields, Invalid> {
    ProfileFields::parse(
        fields
            .iter()
            .map(|field| (field.name.as_str(), field.value.as_str())),
    )
}

/// A first or last name: trimmed, at most 255 characters; empty is allowed (it clears).
fn person_name(field: &'static str, raw: Option<&str>) -> Result<Option<String>, Invalid> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let name = raw.trim();
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(Invalid::new(
            field,
            Reason::TooLong {
                max: MAX_NAME_CHARS,
            },
        ));
    }
    Ok(Some(name.to_owned()))
}

/// The changes of `POST /user/{id}`; the role named as in [`new_profile`].
pub(super) fn profile_changes(
    req: &pb::UpdateUserRequest,
) -> Result<users::ProfileChanges, Invalid> {
    let role = match req.role.as_deref().map(str::trim) {
        None | Some("") => None,
        Some("owner") => Some("account_owner"),
        Some("administrator") => Some("account_administrator"),
        Some(other) => Some(other),
    };
    let given = |raw: &Option<String>| raw.clone().filter(|text| !text.trim().is_empty());
    Ok(users::ProfileChanges {
        login: given(&req.login)
            .as_deref()
            .map(Login::parse_name)
            .transpose()?,
        email: given(&req.email)
            .as_deref()
            .map(EmailAddress::parse)
            .transpose()?,
        fields: profile_fields(&req.fields)?,
        group_ids: req
            .group_ids
            .as_ref()
            .map(|list| IdList::parse("groupIds", &list.ids))
            .transpose()?,
        first_name: person_name("first_name", req.first_name.as_deref())?,
        last_name: person_name("last_name", req.last_name.as_deref())?,
        role: role
            .map(|role| RoleChoice::parse(Some(role), req.role_id.as_deref()))
            .transpose()?,
        department_id: req
            .department_id
            .as_deref()
            .map(|raw| parse_field_id("departmentId", raw))
            .transpose()?,
        managed_department_ids: req
            .managed_department_ids
            .as_ref()
            .map(|list| IdList::parse(MANAGEABLE, &list.ids))
            .transpose()?
            .map(|ids| NamedIds {
                field: MANAGEABLE,
                ids,
            }),
        external_id: None,
    })
}

/// What the HTTP interface calls a user's managed departments.
const MANAGEABLE: &str = "manageableDepartmentIds";

/// Neighbours 4.10's codes; the SOAP interface refused others the same way.
/// The kind of a scheduled status change; INVALID_ARGUMENT naming `kind` when not set.
pub(super) fn schedule_kind(kind: i32) -> Result<ScheduleKind, Invalid> {
    match pb::ScheduleKind::try_from(kind) {
        Ok(pb::ScheduleKind::Deactivation) => Ok(ScheduleKind::Deactivation),
        Ok(pb::ScheduleKind::Termination) => Ok(ScheduleKind::Termination),
        Ok(pb::ScheduleKind::Unspecified) | Err(_) => Err(Invalid::new(
            "kind",
            Reason::NotOneOf {
                raw: kind.to_string(),
                allowed: "SCHEDULE_KIND_DEACTIVATION, SCHEDULE_KIND_TERMINATION".to_owned(),
            },
        )),
    }
}

pub(super) fn user_status(status: u32) -> Result<users::UserStatus, Invalid> {
    use users::UserStatus;
    match status {
        1 => Ok(UserStatus::Active),
        3 => Ok(UserStatus::Blocked),
        5 => Ok(UserStatus::EmploymentEnded),
        other => Err(Invalid::new(
            "status",
            Reason::NotOneOf {
                raw: other.to_string(),
                allowed: "1 (active), 3 (blocked), 5 (employment ended)".to_owned(),
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assignment(role: i32) -> pb::RoleAssignment {
        pb::RoleAssignment {
            role,
            custom_role_id: None,
        }
    }

    #[test]
    fn every_contract_role_is_a_domain_role_and_back() {
        for role in Role::ALL {
            assert_eq!(domain_role(pb_role(role)), Some(role));
        }
        assert_eq!(domain_role(pb::Role::Unspecified), None);
    }

    #[test]
    fn an_unspecified_or_unknown_role_is_refused_naming_the_field() {
        let missing = role_choice(Some(&assignment(pb::Role::Unspecified.into()))).unwrap_err();
        assert_eq!(
            missing.to_string(),
            role_choice(None).unwrap_err().to_string()
        );
        assert!(missing.to_string().starts_with("role "), "{missing}");
        let unknown = role_choice(Some(&assignment(99))).unwrap_err().to_string();
        assert!(
            unknown.starts_with("role '99' is not one of ROLE_ACCOUNT_OWNER, "),
            "{unknown}"
        );
        assert!(!unknown.contains("UNSPECIFIED"), "{unknown}");
    }

    #[test]
    fn a_listed_role_is_taken() {
        let choice = role_choice(Some(&assignment(pb::Role::Learner.into()))).unwrap();
        assert_eq!(choice.role, Role::Learner);
        assert_eq!(choice.custom_role_id, None);
    }
}
