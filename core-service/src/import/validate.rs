//! Checks a whole [`ImportDocument`] without touching the database and turns it into a
//! [`Plan`]: rows ready to insert, in an order the foreign keys accept.
//!
//! Every refusal names the entry it is about (`accounts[0].users[3] (email "…")`), so a
//! person can find it in the file. What only the database can answer (is this id or
//! account URL already taken?) is checked by the loader, inside its transaction.

use std::{
    collections::{BTreeSet, HashMap, HashSet},
    fmt,
};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{
    ImportError,
    document::{AccountEntry, ImportDocument},
    tree::{ClosureRow, Cycle, closure_rows, parents_first},
};
use crate::{
    auth::password::validate_argon2id_phc,
    domain::{
        Invalid,
        account_url::AccountUrl,
        content::{AddedDate, ViewUrl},
        ids::{clip, new_id, parse_uuid},
        login::{Login, PlainPassword},
        names::{DepartmentCode, DepartmentName, GroupName},
        roles::{Permission, Role},
        text::{Description, MAX_NAME_CHARS, MAX_TYPE_CHARS, required_text},
    },
};

/// What an import writes, validated.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) accounts: Vec<AccountPlan>,
    /// Every identifier the document gives, with the entry giving it, for the check
    /// against the database.
    pub(crate) ids: Vec<(Uuid, String)>,
}

#[derive(Debug)]
pub(crate) struct AccountPlan {
    pub(crate) entry: String,
    pub(crate) id: Uuid,
    /// Normalized (see [`AccountUrl`]).
    pub(crate) url: String,
    /// The root first, then every department after its parent.
    pub(crate) departments: Vec<DepartmentRow>,
    pub(crate) closure: Vec<ClosureRow>,
    pub(crate) custom_roles: Vec<CustomRoleRow>,
    pub(crate) users: Vec<UserRow>,
    pub(crate) groups: Vec<GroupRow>,
    pub(crate) projects: Vec<ProjectRow>,
    pub(crate) content_items: Vec<ContentItemRow>,
    pub(crate) enrollments: Vec<EnrollmentRow>,
    pub(crate) points: Vec<PointsRow>,
}

#[derive(Debug)]
pub(crate) struct DepartmentRow {
    pub(crate) id: Uuid,
    pub(crate) parent_id: Option<Uuid>,
    pub(crate) name: String,
    pub(crate) code: Option<String>,
}

#[derive(Debug)]
pub(crate) struct CustomRoleRow {
    pub(crate) id: Uuid,
    pub(crate) name: String,
    pub(crate) permissions: BTreeSet<Permission>,
}

/// A password as the document gives it.
pub(crate) enum Password {
    /// Plain text, to be hashed before the transaction opens.
    Plain(String),
    /// An argon2id PHC string, stored as given.
    Hashed(String),
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Password::Plain(_) => f.write_str("Plain(<redacted>)"),
            Password::Hashed(_) => f.write_str("Hashed(<redacted>)"),
        }
    }
}

#[derive(Debug)]
pub(crate) struct UserRow {
    pub(crate) id: Uuid,
    pub(crate) email: String,
    pub(crate) email_key: String,
    pub(crate) password: Password,
    pub(crate) role: Role,
    pub(crate) custom_role_id: Option<Uuid>,
    pub(crate) department_id: Uuid,
    pub(crate) managed_department_ids: BTreeSet<Uuid>,
    pub(crate) active: bool,
}

#[derive(Debug)]
pub(crate) struct GroupRow {
    pub(crate) id: Uuid,
    pub(crate) name: String,
    pub(crate) smart_department_id: Option<Uuid>,
    pub(crate) member_ids: BTreeSet<Uuid>,
}

#[derive(Debug)]
pub(crate) struct ProjectRow {
    pub(crate) id: Uuid,
    pub(crate) name: String,
    pub(crate) author_ids: BTreeSet<Uuid>,
}

#[derive(Debug)]
pub(crate) struct ContentItemRow {
    pub(crate) id: Uuid,
    pub(crate) project_id: Uuid,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) user_id: Uuid,
    pub(crate) added_at: DateTime<Utc>,
    pub(crate) content_type: String,
    pub(crate) view_url: Option<String>,
}

#[derive(Debug)]
pub(crate) struct EnrollmentRow {
    pub(crate) id: Uuid,
    pub(crate) learner_id: Uuid,
    pub(crate) content_item_id: Uuid,
}

#[derive(Debug)]
pub(crate) struct PointsRow {
    pub(crate) user_id: Uuid,
    pub(crate) points: i64,
}

/// Checks `doc` as a whole; the first broken rule refuses it.
pub(crate) fn validate(doc: &ImportDocument) -> Result<Plan, ImportError> {
    if doc.accounts.is_empty() {
        return Err(ImportError::invalid(
            "accounts",
            "the document lists no accounts",
        ));
    }
    let mut validator = Validator::default();
    let mut accounts = Vec::with_capacity(doc.accounts.len());
    for (index, account) in doc.accounts.iter().enumerate() {
        accounts.push(validator.account(index, account)?);
    }
    Ok(Plan {
        accounts,
        ids: validator.ordered_ids,
    })
}

/// What must be unique across the whole document.
#[derive(Default)]
struct Validator {
    /// Each id, with the entry that gave it first.
    ids: HashMap<Uuid, String>,
    ordered_ids: Vec<(Uuid, String)>,
    /// Each normalized account URL, with its account's entry.
    urls: HashMap<String, String>,
}

/// The ids of one account, by kind: references must stay inside the account.
#[derive(Default)]
struct Known {
    departments: HashSet<Uuid>,
    custom_roles: HashSet<Uuid>,
    users: HashSet<Uuid>,
    projects: HashSet<Uuid>,
    content_items: HashSet<Uuid>,
}

impl Validator {
    fn register_id(&mut self, entry: &str, raw: &str) -> Result<Uuid, ImportError> {
        let id = parse_uuid(raw).ok_or_else(|| {
            ImportError::invalid(entry, format!("id \"{}\" is not a UUID", clip(raw)))
        })?;
        if let Some(first) = self.ids.get(&id) {
            return Err(ImportError::invalid(
                entry,
                format!("id \"{id}\" is used twice in the document (first by {first})"),
            ));
        }
        self.ids.insert(id, entry.to_owned());
        self.ordered_ids.push((id, entry.to_owned()));
        Ok(id)
    }

    fn account(&mut self, a: usize, account: &AccountEntry) -> Result<AccountPlan, ImportError> {
        let entry = format!("accounts[{a}] (url \"{}\")", clip(&account.url));
        let url = AccountUrl::parse(&account.url)
            .map_err(refused(&entry))?
            .into_inner();
        if let Some(first) = self.urls.get(&url) {
            return Err(ImportError::invalid(
                &entry,
                format!("url names the same account as {first} (\"{url}\" once normalized)"),
            ));
        }
        self.urls.insert(url.clone(), entry.clone());
        let id = match &account.id {
            Some(raw) => self.register_id(&entry, raw)?,
            None => new_id(),
        };

        let mut known = Known::default();
        let (departments, closure) = self.departments(a, account, &mut known)?;
        let custom_roles = self.custom_roles(a, account, &mut known)?;
        let users = self.users(a, account, &mut known)?;
        let groups = self.groups(a, account, &known)?;
        let projects = self.projects(a, account, &mut known)?;
        let content_items = self.content_items(a, account, &mut known)?;
        let enrollments = self.enrollments(a, account, &known)?;
        let points = points(a, account, &known)?;
        Ok(AccountPlan {
            entry,
            id,
            url,
            departments,
            closure,
            custom_roles,
            users,
            groups,
            projects,
            content_items,
            enrollments,
            points,
        })
    }

    fn departments(
        &mut self,
        a: usize,
        account: &AccountEntry,
        known: &mut Known,
    ) -> Result<(Vec<DepartmentRow>, Vec<ClosureRow>), ImportError> {
        let root = &account.root_department;
        let root_entry = format!("accounts[{a}].rootDepartment (id \"{}\")", clip(&root.id));
        let root_row = DepartmentRow {
            id: self.register_id(&root_entry, &root.id)?,
            parent_id: None,
            name: DepartmentName::parse(&root.name)
                .map_err(refused(&root_entry))?
                .into_inner(),
            code: optional_code(&root_entry, root.code.as_deref())?,
        };
        known.departments.insert(root_row.id);

        let mut listed = Vec::with_capacity(account.departments.len());
        let mut entries = Vec::with_capacity(account.departments.len());
        for (i, department) in account.departments.iter().enumerate() {
            let entry = label(a, "departments", i, "id", &department.id);
            let row = DepartmentRow {
                id: self.register_id(&entry, &department.id)?,
                parent_id: Some(reference(
                    &entry,
                    "parentDepartmentId",
                    &department.parent_department_id,
                )?),
                name: DepartmentName::parse(&department.name)
                    .map_err(refused(&entry))?
                    .into_inner(),
                code: optional_code(&entry, department.code.as_deref())?,
            };
            known.departments.insert(row.id);
            listed.push(row);
            entries.push(entry);
        }
        // Parents may be listed after their children: check them once all are known.
        let mut edges = Vec::with_capacity(listed.len());
        for (row, entry) in listed.iter().zip(&entries) {
            let parent = row.parent_id.unwrap_or(root_row.id);
            require(
                entry,
                "parentDepartmentId",
                parent,
                &known.departments,
                "department",
            )?;
            edges.push((row.id, parent));
        }
        let order = parents_first(root_row.id, &edges).map_err(|Cycle(cycle)| {
            let path: Vec<String> = cycle
                .iter()
                .chain(cycle.first())
                .map(|&i| format!("\"{}\"", edges[i].0))
                .collect();
            ImportError::invalid(
                &entries[cycle.first().copied().unwrap_or_default()],
                format!(
                    "parentDepartmentId makes a cycle that never reaches the root department: {} \
                     (each names the next as its parent)",
                    path.join(" -> ")
                ),
            )
        })?;

        let mut slots: Vec<Option<DepartmentRow>> = listed.into_iter().map(Some).collect();
        let mut departments = Vec::with_capacity(slots.len() + 1);
        departments.push(root_row);
        departments.extend(order.into_iter().filter_map(|index| slots[index].take()));
        let edges: Vec<(Uuid, Option<Uuid>)> = departments
            .iter()
            .map(|row| (row.id, row.parent_id))
            .collect();
        Ok((departments, closure_rows(&edges)))
    }

    fn custom_roles(
        &mut self,
        a: usize,
        account: &AccountEntry,
        known: &mut Known,
    ) -> Result<Vec<CustomRoleRow>, ImportError> {
        let mut rows = Vec::with_capacity(account.custom_roles.len());
        for (i, role) in account.custom_roles.iter().enumerate() {
            let entry = label(a, "customRoles", i, "id", &role.id);
            let id = self.register_id(&entry, &role.id)?;
            let name =
                required_text("name", &role.name, MAX_NAME_CHARS).map_err(refused(&entry))?;
            let mut permissions = BTreeSet::new();
            for raw in &role.permissions {
                let permission = Permission::parse(raw).ok_or_else(|| {
                    let all: Vec<&str> = Permission::ALL.iter().map(|p| p.as_str()).collect();
                    ImportError::invalid(
                        &entry,
                        format!(
                            "permission \"{}\" is not one of {}",
                            clip(raw),
                            all.join(", ")
                        ),
                    )
                })?;
                permissions.insert(permission);
            }
            known.custom_roles.insert(id);
            rows.push(CustomRoleRow {
                id,
                name,
                permissions,
            });
        }
        Ok(rows)
    }

    fn users(
        &mut self,
        a: usize,
        account: &AccountEntry,
        known: &mut Known,
    ) -> Result<Vec<UserRow>, ImportError> {
        let mut rows = Vec::with_capacity(account.users.len());
        let mut logins: HashMap<String, String> = HashMap::with_capacity(account.users.len());
        for (i, user) in account.users.iter().enumerate() {
            let entry = label(a, "users", i, "email", &user.email);
            let id = self.register_id(&entry, &user.id)?;
            let login = Login::parse(&user.email).map_err(refused(&entry))?;
            let key = login.key();
            let email = login.into_inner();
            if let Some(first) = logins.get(&key) {
                return Err(ImportError::invalid(
                    &entry,
                    format!(
                        "login is used twice in this account (also by {first}; logins are compared regardless of case)"
                    ),
                ));
            }
            logins.insert(key.clone(), entry.clone());

            let role = Role::parse(&user.role).ok_or_else(|| {
                let all: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
                ImportError::invalid(
                    &entry,
                    format!(
                        "role \"{}\" is not one of {}",
                        clip(&user.role),
                        all.join(", ")
                    ),
                )
            })?;
            let custom_role_id = match (role, given(user.custom_role_id.as_deref())) {
                (Role::Custom, None) => {
                    return Err(ImportError::invalid(
                        &entry,
                        "role custom needs a customRoleId",
                    ));
                }
                (Role::Custom, Some(raw)) => {
                    let role_id = reference(&entry, "customRoleId", raw)?;
                    require(
                        &entry,
                        "customRoleId",
                        role_id,
                        &known.custom_roles,
                        "custom role",
                    )?;
                    Some(role_id)
                }
                (_, None) => None,
                (_, Some(_)) => {
                    return Err(ImportError::invalid(
                        &entry,
                        format!(
                            "customRoleId is only for role custom (this user's role is {role})"
                        ),
                    ));
                }
            };
            let password = password(
                &entry,
                user.password.as_deref(),
                user.password_hash.as_deref(),
            )?;
            let department_id = reference(&entry, "departmentId", &user.department_id)?;
            require(
                &entry,
                "departmentId",
                department_id,
                &known.departments,
                "department",
            )?;
            let managed_department_ids = references(
                &entry,
                "managedDepartmentIds",
                &user.managed_department_ids,
                &known.departments,
                "department",
            )?;
            known.users.insert(id);
            rows.push(UserRow {
                id,
                email,
                email_key: key,
                password,
                role,
                custom_role_id,
                department_id,
                managed_department_ids,
                active: user.active,
            });
        }
        Ok(rows)
    }

    fn groups(
        &mut self,
        a: usize,
        account: &AccountEntry,
        known: &Known,
    ) -> Result<Vec<GroupRow>, ImportError> {
        let mut rows = Vec::with_capacity(account.groups.len());
        for (i, group) in account.groups.iter().enumerate() {
            let entry = label(a, "groups", i, "id", &group.id);
            let id = self.register_id(&entry, &group.id)?;
            let name = GroupName::parse(&group.name)
                .map_err(refused(&entry))?
                .into_inner();
            let (smart_department_id, member_ids) =
                match (&group.user_ids, given(group.smart_department_id.as_deref())) {
                    (Some(_), Some(_)) => {
                        return Err(ImportError::invalid(
                            &entry,
                            "a group has either userIds (a plain group) or smartDepartmentId \
                             (a smart group), not both",
                        ));
                    }
                    (_, Some(raw)) => {
                        let department = reference(&entry, "smartDepartmentId", raw)?;
                        require(
                            &entry,
                            "smartDepartmentId",
                            department,
                            &known.departments,
                            "department",
                        )?;
                        (Some(department), BTreeSet::new())
                    }
                    (user_ids, None) => {
                        let user_ids = user_ids.as_deref().unwrap_or_default();
                        (
                            None,
                            references(&entry, "userIds", user_ids, &known.users, "user")?,
                        )
                    }
                };
            rows.push(GroupRow {
                id,
                name,
                smart_department_id,
                member_ids,
            });
        }
        Ok(rows)
    }

    fn projects(
        &mut self,
        a: usize,
        account: &AccountEntry,
        known: &mut Known,
    ) -> Result<Vec<ProjectRow>, ImportError> {
        let mut rows = Vec::with_capacity(account.projects.len());
        for (i, project) in account.projects.iter().enumerate() {
            let entry = label(a, "projects", i, "id", &project.id);
            let id = self.register_id(&entry, &project.id)?;
            let name =
                required_text("name", &project.name, MAX_NAME_CHARS).map_err(refused(&entry))?;
            let author_ids = references(
                &entry,
                "authorIds",
                &project.author_ids,
                &known.users,
                "user",
            )?;
            known.projects.insert(id);
            rows.push(ProjectRow {
                id,
                name,
                author_ids,
            });
        }
        Ok(rows)
    }

    fn content_items(
        &mut self,
        a: usize,
        account: &AccountEntry,
        known: &mut Known,
    ) -> Result<Vec<ContentItemRow>, ImportError> {
        let mut rows = Vec::with_capacity(account.content_items.len());
        for (i, item) in account.content_items.iter().enumerate() {
            let entry = label(a, "contentItems", i, "id", &item.id);
            let id = self.register_id(&entry, &item.id)?;
            let project_id = reference(&entry, "projectId", &item.project_id)?;
            require(&entry, "projectId", project_id, &known.projects, "project")?;
            let user_id = reference(&entry, "userId", &item.user_id)?;
            require(&entry, "userId", user_id, &known.users, "user")?;
            let title =
                required_text("title", &item.title, MAX_NAME_CHARS).map_err(refused(&entry))?;
            let description = Description::parse(&item.description).map_err(refused(&entry))?;
            let added_at = AddedDate::parse(&item.added_date).map_err(refused(&entry))?;
            let content_type = required_text("type", &item.content_type, MAX_TYPE_CHARS)
                .map_err(refused(&entry))?;
            let view_url = ViewUrl::parse_optional(item.view_url.as_deref())
                .map_err(refused(&entry))?
                .map(ViewUrl::into_inner);
            known.content_items.insert(id);
            rows.push(ContentItemRow {
                id,
                project_id,
                title,
                description: description.into_inner(),
                user_id,
                added_at: added_at.into_inner(),
                content_type,
                view_url,
            });
        }
        Ok(rows)
    }

    fn enrollments(
        &mut self,
        a: usize,
        account: &AccountEntry,
        known: &Known,
    ) -> Result<Vec<EnrollmentRow>, ImportError> {
        let mut rows = Vec::with_capacity(account.enrollments.len());
        for (i, enrollment) in account.enrollments.iter().enumerate() {
            let entry = label(a, "enrollments", i, "id", &enrollment.id);
            let id = self.register_id(&entry, &enrollment.id)?;
            let learner_id = reference(&entry, "learnerId", &enrollment.learner_id)?;
            require(&entry, "learnerId", learner_id, &known.users, "user")?;
            let content_item_id = reference(&entry, "contentItemId", &enrollment.content_item_id)?;
            require(
                &entry,
                "contentItemId",
                content_item_id,
                &known.content_items,
                "content item",
            )?;
            rows.push(EnrollmentRow {
                id,
                learner_id,
                content_item_id,
            });
        }
        Ok(rows)
    }
}

fn points(a: usize, account: &AccountEntry, known: &Known) -> Result<Vec<PointsRow>, ImportError> {
    let mut rows = Vec::with_capacity(account.points.len());
    let mut seen: HashMap<Uuid, String> = HashMap::with_capacity(account.points.len());
    for (i, entry_points) in account.points.iter().enumerate() {
        let entry = label(a, "points", i, "userId", &entry_points.user_id);
        let user_id = reference(&entry, "userId", &entry_points.user_id)?;
        require(&entry, "userId", user_id, &known.users, "user")?;
        if let Some(first) = seen.get(&user_id) {
            return Err(ImportError::invalid(
                &entry,
                format!("the user already has points in {first}; give at most one entry per user"),
            ));
        }
        if entry_points.points < 0 {
            return Err(ImportError::invalid(&entry, "points must not be negative"));
        }
        seen.insert(user_id, entry.clone());
        rows.push(PointsRow {
            user_id,
            points: entry_points.points,
        });
    }
    Ok(rows)
}

/// `accounts[0].users[3] (email "bob@acme.example.com")`.
fn label(account: usize, list: &str, index: usize, key: &str, value: &str) -> String {
    format!(
        "accounts[{account}].{list}[{index}] ({key} \"{}\")",
        clip(value)
    )
}

/// An optional field given as `null`, omitted, or blank counts as not given.
fn given(raw: Option<&str>) -> Option<&str> {
    raw.filter(|raw| !raw.trim().is_empty())
}

fn reference(entry: &str, field: &str, raw: &str) -> Result<Uuid, ImportError> {
    parse_uuid(raw).ok_or_else(|| {
        ImportError::invalid(entry, format!("{field} \"{}\" is not a UUID", clip(raw)))
    })
}

fn require(
    entry: &str,
    field: &str,
    id: Uuid,
    known: &HashSet<Uuid>,
    what: &str,
) -> Result<(), ImportError> {
    if known.contains(&id) {
        Ok(())
    } else {
        Err(ImportError::invalid(
            entry,
            format!("{field} \"{id}\" names no {what} of this account"),
        ))
    }
}

/// A list of references; repeats count once.
fn references(
    entry: &str,
    field: &str,
    raw_ids: &[String],
    known: &HashSet<Uuid>,
    what: &str,
) -> Result<BTreeSet<Uuid>, ImportError> {
    let mut ids = BTreeSet::new();
    for raw in raw_ids {
        let id = reference(entry, field, raw)?;
        require(entry, field, id, known, what)?;
        ids.insert(id);
    }
    Ok(ids)
}

/// A department code: empty (or `null`) means none.
fn optional_code(entry: &str, raw: Option<&str>) -> Result<Option<String>, ImportError> {
    match raw {
        Some(raw) => Ok(DepartmentCode::parse(raw)
            .map_err(refused(entry))?
            .into_inner()),
        None => Ok(None),
    }
}

/// The refusal of `entry` for a value that breaks its rule.
fn refused(entry: &str) -> impl Fn(Invalid) -> ImportError + '_ {
    move |invalid| ImportError::invalid(entry, invalid.to_string())
}

/// Exactly one of a plain password (sendable in `X-Auth-Password`) and an argon2id hash.
fn password(entry: &str, plain: Option<&str>, hash: Option<&str>) -> Result<Password, ImportError> {
    match (plain, hash) {
        (Some(_), Some(_)) => Err(ImportError::invalid(
            entry,
            "give either password or passwordHash, not both",
        )),
        (None, None) => Err(ImportError::invalid(
            entry,
            "password or passwordHash is required",
        )),
        (Some(plain), None) => {
            let plain = PlainPassword::parse(plain).map_err(refused(entry))?;
            Ok(Password::Plain(plain.expose().to_owned()))
        }
        (None, Some(hash)) => {
            let hash = hash.trim();
            validate_argon2id_phc(hash).map_err(|_| {
                ImportError::invalid(
                    entry,
                    "passwordHash must be an argon2id PHC string ($argon2id$v=19$m=…)",
                )
            })?;
            Ok(Password::Hashed(hash.to_owned()))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    const ROOT: &str = "0191a000-0000-7000-8000-000000000001";
    const SALES: &str = "0191a000-0000-7000-8000-000000000002";
    const EAST: &str = "0191a000-0000-7000-8000-000000000003";
    const ROLE: &str = "0191a000-0000-7000-8000-000000000101";
    const OWNER: &str = "0191a000-0000-7000-8000-000000000201";
    const TRAINER: &str = "0191a000-0000-7000-8000-000000000202";
    const GROUP: &str = "0191a000-0000-7000-8000-000000000301";
    const PROJECT: &str = "0191a000-0000-7000-8000-000000000401";
    const ITEM: &str = "0191a000-0000-7000-8000-000000000501";
    const ENROLLMENT: &str = "0191a000-0000-7000-8000-000000000601";

    fn document() -> Value {
        json!({"accounts": [{
            "url": "HTTPS://Acme.Example.com:443/",
            "rootDepartment": {"id": ROOT, "name": "Acme", "code": "ACME"},
            "departments": [
                {"id": EAST, "name": "Sales East", "parentDepartmentId": SALES},
                {"id": SALES, "name": " Sales ", "code": "", "parentDepartmentId": ROOT}
            ],
            "customRoles": [{"id": ROLE, "name": "Trainer", "permissions": ["group.read", "group.read"]}],
            "users": [
                {"id": OWNER, "email": "Owner@Acme.example.com", "password": "password", "role": "account_owner",
                 "departmentId": ROOT},
                {"id": TRAINER, "email": "trainer@acme.example.com", "password": "password", "role": "custom",
                 "customRoleId": ROLE, "departmentId": EAST, "managedDepartmentIds": [SALES, SALES]}
            ],
            "groups": [{"id": GROUP, "name": "Interns", "userIds": [TRAINER]}],
            "projects": [{"id": PROJECT, "name": "Onboarding", "authorIds": [OWNER]}],
            "contentItems": [{"id": ITEM, "projectId": PROJECT, "title": "Welcome", "userId": OWNER,
                              "addedDate": "2019-03-26T08:34:57.250+02:00", "type": "Course"}],
            "enrollments": [{"id": ENROLLMENT, "learnerId": TRAINER, "contentItemId": ITEM}],
            "points": [{"userId": TRAINER, "points": 421}]
        }]})
    }

    fn check(value: Value) -> Result<Plan, ImportError> {
        validate(&serde_json::from_value(value).unwrap())
    }

    fn refusal(value: Value) -> String {
        check(value).unwrap_err().to_string()
    }

    #[test]
    fn a_valid_document_becomes_a_plan() {
        let plan = check(document()).unwrap();
        let account = &plan.accounts[0];
        assert_eq!(account.url, "https://acme.example.com");
        let names: Vec<&str> = account
            .departments
            .iter()
            .map(|d| d.name.as_str())
            .collect();
        assert_eq!(names, ["Acme", "Sales", "Sales East"]);
        assert_eq!(account.departments[1].code, None);
        // 3 self rows, Sales under Acme, East under Sales and Acme.
        assert_eq!(account.closure.len(), 6);
        assert_eq!(account.custom_roles[0].permissions.len(), 1);
        assert_eq!(account.users[0].email, "Owner@Acme.example.com");
        assert_eq!(account.users[0].email_key, "owner@acme.example.com");
        assert_eq!(account.users[1].managed_department_ids.len(), 1);
        assert_eq!(
            account.content_items[0].added_at.to_rfc3339(),
            "2019-03-26T06:34:57+00:00"
        );
        assert_eq!(account.content_items[0].view_url, None);
        assert_eq!(plan.ids.len(), 10);
    }

    #[test]
    fn a_cycle_is_refused_naming_a_department_in_it() {
        let mut doc = document();
        doc["accounts"][0]["departments"][1]["parentDepartmentId"] = json!(EAST);
        let message = refusal(doc);
        assert!(
            message.starts_with(&format!("accounts[0].departments[0] (id \"{EAST}\"): ")),
            "{message}"
        );
        assert!(message.contains("cycle"), "{message}");
    }

    #[test]
    fn unknown_references_are_refused_naming_the_field() {
        let mut doc = document();
        doc["accounts"][0]["users"][1]["departmentId"] =
            json!("0191a000-0000-7000-8000-0000000009ff");
        let message = refusal(doc);
        assert!(message.starts_with(
            "accounts[0].users[1] (email \"trainer@acme.example.com\"): departmentId"
        ));
        assert!(
            message.contains("names no department of this account"),
            "{message}"
        );

        let mut doc = document();
        doc["accounts"][0]["departments"][0]["parentDepartmentId"] = json!("nope");
        assert!(refusal(doc).contains("parentDepartmentId \"nope\" is not a UUID"));
    }

    #[test]
    fn duplicate_ids_of_any_kind_are_refused() {
        let mut doc = document();
        doc["accounts"][0]["projects"][0]["id"] = json!(GROUP.to_uppercase());
        let message = refusal(doc);
        assert!(message.starts_with("accounts[0].projects[0]"), "{message}");
        assert!(
            message.contains("used twice") && message.contains("accounts[0].groups[0]"),
            "{message}"
        );
    }

    #[test]
    fn logins_differing_only_in_case_are_refused() {
        let mut doc = document();
        doc["accounts"][0]["users"][1]["email"] = json!("OWNER@acme.example.COM");
        let message = refusal(doc);
        assert!(message.starts_with(
            "accounts[0].users[1] (email \"OWNER@acme.example.COM\"): login is used twice"
        ));
    }

    #[test]
    fn the_same_account_url_twice_is_refused() {
        let mut doc = document();
        let mut second = json!({"url": "https://acme.example.com", "rootDepartment": {
            "id": "0191a000-0000-7000-8000-000000000aaa", "name": "Again"}});
        second["url"] = json!("https://ACME.example.com/");
        doc["accounts"].as_array_mut().unwrap().push(second);
        let message = refusal(doc);
        assert!(
            message.starts_with("accounts[1]") && message.contains("same account as accounts[0]"),
            "{message}"
        );
    }

    #[test]
    fn references_must_stay_inside_their_account() {
        let mut doc = document();
        doc["accounts"].as_array_mut().unwrap().push(json!({
            "url": "https://globex.example.com",
            "rootDepartment": {"id": "0191b000-0000-7000-8000-000000000001", "name": "Globex"},
            "groups": [{"id": "0191b000-0000-7000-8000-000000000301", "name": "Crew", "userIds": [OWNER]}]
        }));
        let message = refusal(doc);
        assert!(
            message.starts_with("accounts[1].groups[0]") && message.contains("names no user"),
            "{message}"
        );
    }

    #[test]
    fn roles_and_custom_role_ids_must_agree() {
        let mut doc = document();
        doc["accounts"][0]["users"][0]["customRoleId"] = json!(ROLE);
        assert!(refusal(doc).contains("customRoleId is only for role custom"));
        let mut doc = document();
        doc["accounts"][0]["users"][1]["customRoleId"] = Value::Null;
        assert!(refusal(doc).contains("role custom needs a customRoleId"));
        let mut doc = document();
        doc["accounts"][0]["users"][0]["role"] = json!("admin");
        assert!(refusal(doc).contains("role \"admin\" is not one of account_owner"));
        let mut doc = document();
        doc["accounts"][0]["customRoles"][0]["permissions"] = json!(["groups.read"]);
        assert!(refusal(doc).contains("permission \"groups.read\" is not one of"));
    }

    #[test]
    fn passwords_are_plain_xor_argon2id_hashes() {
        let mut doc = document();
        doc["accounts"][0]["users"][0]["passwordHash"] =
            json!("$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA");
        assert!(refusal(doc).contains("not both"));
        let mut doc = document();
        doc["accounts"][0]["users"][0]["password"] = json!("");
        assert!(refusal(doc).contains("password must not be empty"));
        let mut doc = document();
        doc["accounts"][0]["users"][0]
            .as_object_mut()
            .unwrap()
            .remove("password");
        assert!(refusal(doc).contains("password or passwordHash is required"));
        let mut doc = document();
        doc["accounts"][0]["users"][0]
            .as_object_mut()
            .unwrap()
            .remove("password");
        doc["accounts"][0]["users"][0]["passwordHash"] = json!("$2b$12$abcdefghijklmnopqrstuv");
        assert!(refusal(doc).contains("argon2id PHC"));
    }

    #[test]
    fn an_imported_password_needs_the_same_eight_characters_as_one_set_over_grpc() {
        let mut doc = document();
        doc["accounts"][0]["users"][0]["password"] = json!("seven77");
        let message = refusal(doc);
        assert!(
            message.starts_with("accounts[0].users[0]")
                && message.contains("password must be at least 8 characters"),
            "{message}"
        );
        let mut doc = document();
        doc["accounts"][0]["users"][0]["password"] = json!("eight888");
        assert!(check(doc).is_ok());
    }

    #[test]
    fn groups_are_plain_or_smart_not_both() {
        let mut doc = document();
        doc["accounts"][0]["groups"][0]["smartDepartmentId"] = json!(SALES);
        assert!(refusal(doc).contains("not both"));
        let mut doc = document();
        doc["accounts"][0]["groups"][0] =
            json!({"id": GROUP, "name": "Sales", "smartDepartmentId": SALES});
        let plan = check(doc).unwrap();
        assert!(plan.accounts[0].groups[0].smart_department_id.is_some());
    }

    #[test]
    fn names_codes_dates_and_points_are_bounded() {
        let mut doc = document();
        doc["accounts"][0]["departments"][0]["name"] = json!("  ");
        assert!(refusal(doc).contains("name must not be blank"));
        let mut doc = document();
        doc["accounts"][0]["rootDepartment"]["code"] = json!("c".repeat(65));
        assert!(refusal(doc).contains("code must be at most 64"));
        let mut doc = document();
        doc["accounts"][0]["groups"][0]["name"] = json!("g".repeat(256));
        assert!(refusal(doc).contains("name must be at most 255"));
        let mut doc = document();
        doc["accounts"][0]["contentItems"][0]["addedDate"] = json!("2019-03-26T06:34:57");
        assert!(refusal(doc).contains("addedDate"));
        let mut doc = document();
        doc["accounts"][0]["contentItems"][0]["type"] = json!("");
        assert!(refusal(doc).contains("type must not be blank"));
        let mut doc = document();
        doc["accounts"][0]["points"] =
            json!([{"userId": OWNER, "points": 1}, {"userId": OWNER, "points": 2}]);
        assert!(refusal(doc).contains("at most one entry per user"));
    }
}
