//! The rows of each table, built from the plan as plain values: one table and one
//! function per table, in the order `write` inserts them.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveEnum as _, Value};
use serde_json::json;
use uuid::Uuid;

use super::{ImportError, ImportSummary};
use crate::{
    db::rows::Table,
    domain::results::TrackedResult,
    import::validate::{AccountPlan, Password, Plan},
    service::audit::{self, Actor, AuditAction, Change},
};

/// `build(account id, item)` for every item `items` picks from each account.
fn per_account<'a, T: 'a, R, I>(
    plan: &'a Plan,
    items: impl Fn(&'a AccountPlan) -> I + 'a,
    build: impl Fn(Uuid, T) -> R + Copy + 'a,
) -> impl Iterator<Item = R> + 'a
where
    I: IntoIterator<Item = T> + 'a,
{
    plan.accounts.iter().flat_map(move |account| {
        items(account)
            .into_iter()
            .map(move |item| build(account.id, item))
    })
}

fn id(id: Uuid) -> Value {
    Value::from(id)
}

fn text(text: &str) -> Value {
    Value::from(text.to_owned())
}

pub(super) const ACCOUNTS: Table<4> = Table {
    name: "accounts",
    columns: ["id", "url", "revision", "created_at"],
    pg_types: ["uuid", "text", "int8", "timestamptz"],
};

pub(super) fn accounts(plan: &Plan, now: DateTime<Utc>) -> impl Iterator<Item = [Value; 4]> + '_ {
    plan.accounts.iter().map(move |account| {
        [
            id(account.id),
            text(&account.url),
            Value::from(0i64),
            Value::from(now),
        ]
    })
}

pub(super) const DEPARTMENTS: Table<7> = Table {
    name: "departments",
    columns: [
        "id",
        "account_id",
        "parent_id",
        "name",
        "code",
        "created_at",
        "updated_at",
    ],
    pg_types: [
        "uuid",
        "uuid",
        "uuid",
        "text",
        "text",
        "timestamptz",
        "timestamptz",
    ],
};

pub(super) fn departments(
    plan: &Plan,
    now: DateTime<Utc>,
) -> impl Iterator<Item = [Value; 7]> + '_ {
    per_account(
        plan,
        |account| &account.departments,
        move |account_id, row| {
            [
                id(row.id),
                id(account_id),
                Value::from(row.parent_id),
                text(&row.name),
                Value::from(row.code.clone()),
                Value::from(now),
                Value::from(now),
            ]
        },
    )
}

pub(super) const CLOSURE: Table<4> = Table {
    name: "department_closure",
    columns: ["account_id", "ancestor_id", "descendant_id", "depth"],
    pg_types: ["uuid", "uuid", "uuid", "int4"],
};

pub(super) fn department_closure(plan: &Plan) -> impl Iterator<Item = [Value; 4]> + '_ {
    per_account(
        plan,
        |account| &account.closure,
        |account_id, row| {
            [
                id(account_id),
                id(row.ancestor),
                id(row.descendant),
                Value::from(row.depth),
            ]
        },
    )
}

pub(super) const CUSTOM_ROLES: Table<3> = Table {
    name: "custom_roles",
    columns: ["id", "account_id", "name"],
    pg_types: ["uuid", "uuid", "text"],
};

pub(super) fn custom_roles(plan: &Plan) -> impl Iterator<Item = [Value; 3]> + '_ {
    per_account(
        plan,
        |account| &account.custom_roles,
        |account_id, row| [id(row.id), id(account_id), text(&row.name)],
    )
}

pub(super) const PERMISSIONS: Table<2> = Table {
    name: "custom_role_permissions",
    columns: ["custom_role_id", "permission"],
    pg_types: ["uuid", "text"],
};

pub(super) fn custom_role_permissions(plan: &Plan) -> impl Iterator<Item = [Value; 2]> + '_ {
    per_account(
        plan,
        |account| {
            account
                .custom_roles
                .iter()
                .flat_map(|row| row.permissions.iter().map(move |p| (row.id, *p)))
        },
        |_, (custom_role_id, permission)| [id(custom_role_id), text(permission.as_str())],
    )
}

pub(super) const USERS: Table<12> = Table {
    name: "users",
    columns: [
        "id",
        "account_id",
        "email",
        "email_key",
        "password_hash",
        "role",
        "custom_role_id",
        "department_id",
        "active",
        "created_at",
        "updated_at",
        "external_id",
    ],
    pg_types: [
        "uuid",
        "uuid",
        "text",
        "text",
        "text",
        "text",
        "uuid",
        "uuid",
        "bool",
        "timestamptz",
        "timestamptz",
        "text",
    ],
};

/// Refused when a user still has a plain password: every one was hashed before the
/// transaction opened, and a plain one must never be stored.
pub(super) fn users(
    plan: &Plan,
    now: DateTime<Utc>,
) -> Result<impl Iterator<Item = [Value; 12]> + '_, ImportError> {
    let unhashed = plan
        .accounts
        .iter()
        .flat_map(|account| &account.users)
        .find(|row| !matches!(row.password, Password::Hashed(_)));
    if let Some(row) = unhashed {
        return Err(ImportError::Hashing(
            format!("user {} has no password hash", row.id).into(),
        ));
    }
    Ok(per_account(
        plan,
        |account| &account.users,
        move |account_id, row| {
            // A plain password was refused above; it never reaches this column.
            let hash = match &row.password {
                Password::Hashed(hash) => hash.as_str(),
                Password::Plain(_) => "",
            };
            [
                id(row.id),
                id(account_id),
                text(&row.email),
                text(&row.email_key),
                text(hash),
                Value::from(row.role.to_value()),
                Value::from(row.custom_role_id),
                id(row.department_id),
                Value::from(row.active),
                Value::from(now),
                Value::from(now),
                Value::from(row.external_id.clone()),
            ]
        },
    ))
}

pub(super) const MANAGED: Table<2> = Table {
    name: "user_managed_departments",
    columns: ["user_id", "department_id"],
    pg_types: ["uuid", "uuid"],
};

pub(super) fn user_managed_departments(plan: &Plan) -> impl Iterator<Item = [Value; 2]> + '_ {
    per_account(
        plan,
        |account| {
            account
                .users
                .iter()
                .flat_map(|row| row.managed_department_ids.iter().map(move |d| (row.id, *d)))
        },
        |_, (user_id, department_id)| [id(user_id), id(department_id)],
    )
}

pub(super) const GROUPS: Table<6> = Table {
    name: "groups",
    columns: [
        "id",
        "account_id",
        "name",
        "smart_department_id",
        "created_at",
        "updated_at",
    ],
    pg_types: ["uuid", "uuid", "text", "uuid", "timestamptz", "timestamptz"],
};

/// Stamped with the import time like departments and users: SCIM shows a group's
/// `meta.created` and `lastModified`, which a group without them would show as the epoch.
pub(super) fn groups(plan: &Plan, now: DateTime<Utc>) -> impl Iterator<Item = [Value; 6]> + '_ {
    per_account(
        plan,
        |account| &account.groups,
        move |account_id, row| {
            [
                id(row.id),
                id(account_id),
                text(&row.name),
                Value::from(row.smart_department_id),
                Value::from(now),
                Value::from(now),
            ]
        },
    )
}

pub(super) const MEMBERS: Table<2> = Table {
    name: "group_members",
    columns: ["group_id", "user_id"],
    pg_types: ["uuid", "uuid"],
};

pub(super) fn group_members(plan: &Plan) -> impl Iterator<Item = [Value; 2]> + '_ {
    per_account(
        plan,
        |account| {
            account
                .groups
                .iter()
                .flat_map(|row| row.member_ids.iter().map(move |u| (row.id, *u)))
        },
        |_, (group_id, user_id)| [id(group_id), id(user_id)],
    )
}

pub(super) const PROJECTS: Table<3> = Table {
    name: "projects",
    columns: ["id", "account_id", "name"],
    pg_types: ["uuid", "uuid", "text"],
};

pub(super) fn projects(plan: &Plan) -> impl Iterator<Item = [Value; 3]> + '_ {
    per_account(
        plan,
        |account| &account.projects,
        |account_id, row| [id(row.id), id(account_id), text(&row.name)],
    )
}

pub(super) const AUTHORS: Table<2> = Table {
    name: "project_authors",
    columns: ["project_id", "user_id"],
    pg_types: ["uuid", "uuid"],
};

pub(super) fn project_authors(plan: &Plan) -> impl Iterator<Item = [Value; 2]> + '_ {
    per_account(
        plan,
        |account| {
            account
                .projects
                .iter()
                .flat_map(|row| row.author_ids.iter().map(move |u| (row.id, *u)))
        },
        |_, (project_id, user_id)| [id(project_id), id(user_id)],
    )
}

pub(super) const CONTENT_ITEMS: Table<9> = Table {
    name: "content_items",
    columns: [
        "id",
        "account_id",
        "project_id",
        "title",
        "description",
        "user_id",
        "added_at",
        "content_type",
        "view_url",
    ],
    pg_types: [
        "uuid",
        "uuid",
        "uuid",
        "text",
        "text",
        "uuid",
        "timestamptz",
        "text",
        "text",
    ],
};

pub(super) fn content_items(plan: &Plan) -> impl Iterator<Item = [Value; 9]> + '_ {
    per_account(
        plan,
        |account| &account.content_items,
        |account_id, row| {
            [
                id(row.id),
                id(account_id),
                id(row.project_id),
                text(&row.title),
                text(&row.description),
                id(row.user_id),
                Value::from(row.added_at),
                text(&row.content_type),
                Value::from(row.view_url.clone()),
            ]
        },
    )
}

pub(super) const ENROLLMENTS: Table<8> = Table {
    name: "enrollments",
    columns: [
        "id",
        "account_id",
        "learner_id",
        "content_item_id",
        "created_at",
        "access_at",
        "due_at",
        "lock_after_due",
    ],
    pg_types: [
        "uuid",
        "uuid",
        "uuid",
        "uuid",
        "timestamptz",
        "timestamptz",
        "timestamptz",
        "bool",
    ],
};

/// An enrollment without an access date is open from the import on.
pub(super) fn enrollments(
    plan: &Plan,
    now: DateTime<Utc>,
) -> impl Iterator<Item = [Value; 8]> + '_ {
    per_account(
        plan,
        |account| &account.enrollments,
        move |account_id, row| {
            [
                id(row.id),
                id(account_id),
                id(row.learner_id),
                id(row.content_item_id),
                Value::from(now),
                Value::from(row.access_at.unwrap_or(now)),
                Value::from(row.due_at),
                Value::from(row.lock_after_due),
            ]
        },
    )
}

pub(super) use crate::service::results::RESULTS;

/// One result per enrollment: the tracked result its entry of `results` gives, else an
/// untouched one. The enrollments are sorted by id once checked, and the results are sorted
/// the same way before the write, so the two are walked side by side.
pub(super) fn results(plan: &Plan) -> impl Iterator<Item = [Value; 15]> + '_ {
    plan.accounts.iter().flat_map(|account| {
        let mut given = account.results.iter().peekable();
        account.enrollments.iter().map(move |row| {
            let tracked = match given.peek() {
                Some(result) if result.enrollment_id == row.id => {
                    given.next().map(|result| result.tracked)
                }
                _ => None,
            };
            crate::service::results::tracked_values(
                row.id,
                account.id,
                &tracked.unwrap_or_else(TrackedResult::untouched),
            )
        })
    })
}

pub(super) const POINTS: Table<3> = Table {
    name: "user_points",
    columns: ["user_id", "account_id", "points"],
    pg_types: ["uuid", "uuid", "int8"],
};

pub(super) fn user_points(plan: &Plan) -> impl Iterator<Item = [Value; 3]> + '_ {
    per_account(
        plan,
        |account| &account.points,
        |account_id, row| [id(row.user_id), id(account_id), Value::from(row.points)],
    )
}

pub(super) const API_CLIENTS: Table<7> = Table {
    name: "api_clients",
    columns: [
        "id",
        "account_id",
        "user_id",
        "secret_hash",
        "revoked",
        "created_at",
        "scim",
    ],
    pg_types: [
        "uuid",
        "uuid",
        "uuid",
        "text",
        "bool",
        "timestamptz",
        "bool",
    ],
};

pub(super) fn api_clients(
    plan: &Plan,
    now: DateTime<Utc>,
) -> impl Iterator<Item = [Value; 7]> + '_ {
    per_account(
        plan,
        |account| &account.api_clients,
        move |account_id, row| {
            [
                id(row.id),
                id(account_id),
                id(row.user_id),
                text(&row.secret_hash),
                Value::from(false),
                Value::from(now),
                Value::from(row.scim),
            ]
        },
    )
}

/// One row per account, by nobody, with what the import wrote into it (`summaries`, one per
/// account, counted before any of its rows were freed).
pub(super) fn audit_log<'a>(
    plan: &'a Plan,
    summaries: &'a [ImportSummary],
    now: DateTime<Utc>,
) -> impl Iterator<Item = [Value; 10]> + 'a {
    plan.accounts
        .iter()
        .zip(summaries)
        .map(move |(account, summary)| {
            let mut after = serde_json::to_value(summary).unwrap_or_else(|_| json!({}));
            if let Some(object) = after.as_object_mut() {
                object.remove("accounts");
                object.insert("url".to_owned(), json!(account.url));
            }
            let change = Change {
                action: AuditAction::Imported,
                entity_id: account.id,
                before: None,
                after: Some(after),
            };
            audit::row(&Actor::system(account.id), change, now)
        })
}
