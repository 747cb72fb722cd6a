//! The plan: what an import writes, validated, in compact rows (ids as [`Uuid`]).

use std::{collections::BTreeSet, fmt};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::entries::{Entries, List, Place};
use crate::{
    domain::{
        results::TrackedResult,
        roles::{Permission, Role},
    },
    import::tree::ClosureRow,
};

/// What an import writes, validated.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) accounts: Vec<AccountPlan>,
    /// Every identifier the document gives but the enrollments', with the entry giving
    /// it, for the check against the database. The enrollments' ids are their rows',
    /// sorted by id.
    pub(crate) ids: Entries,
}

impl Plan {
    /// Rows the plan writes, link tables included, audit rows not.
    pub(crate) fn row_count(&self) -> usize {
        self.accounts.iter().map(AccountPlan::row_count).sum()
    }

    /// Every identifier the document gives: those of [`Plan::ids`] and the enrollments'.
    pub(crate) fn all_ids(&self) -> impl Iterator<Item = Uuid> + '_ {
        let enrollments = self
            .accounts
            .iter()
            .flat_map(|account| account.enrollments.iter().map(|row| row.id));
        self.ids.ids().chain(enrollments)
    }

    /// Where `id` is given, if the document gives it.
    pub(crate) fn place(&self, id: Uuid) -> Option<Place> {
        self.ids.place(id).or_else(|| {
            self.accounts.iter().enumerate().find_map(|(a, account)| {
                let rows = &account.enrollments;
                let found = rows.binary_search_by_key(&id, |row| row.id).ok()?;
                Some(Place::new(a, List::Enrollments, rows[found].index as usize))
            })
        })
    }

    pub(crate) fn has_plain_passwords(&self) -> bool {
        self.accounts
            .iter()
            .flat_map(|account| &account.users)
            .any(|user| matches!(user.password, Password::Plain(_)))
    }
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
    pub(crate) api_clients: Vec<ApiClientRow>,
    /// At most one per enrollment; the others are untouched.
    pub(crate) results: Vec<ResultRow>,
}

impl AccountPlan {
    fn row_count(&self) -> usize {
        let permissions: usize = self.custom_roles.iter().map(|r| r.permissions.len()).sum();
        let managed: usize = self
            .users
            .iter()
            .map(|u| u.managed_department_ids.len())
            .sum();
        let members: usize = self.groups.iter().map(|g| g.member_ids.len()).sum();
        let authors: usize = self.projects.iter().map(|p| p.author_ids.len()).sum();
        1 + self.departments.len()
            + self.closure.len()
            + self.custom_roles.len()
            + permissions
            + self.users.len()
            + managed
            + self.groups.len()
            + members
            + self.projects.len()
            + authors
            + self.content_items.len()
            + self.enrollments.len()
            // Every enrollment's result.
            + self.enrollments.len()
            + self.points.len()
            + self.api_clients.len()
    }
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
    pub(crate) external_id: Option<String>,
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
    /// Its entry's index in the account's `enrollments`: the rows are sorted by id once
    /// the document is checked, and a refusal still names the entry.
    pub(crate) index: u32,
    pub(crate) learner_id: Uuid,
    pub(crate) content_item_id: Uuid,
    /// `None`: the time of the import.
    pub(crate) access_at: Option<DateTime<Utc>>,
    pub(crate) due_at: Option<DateTime<Utc>>,
    pub(crate) lock_after_due: bool,
}

/// The tracked result an entry of `results` gives an enrollment of the account.
#[derive(Debug)]
pub(crate) struct ResultRow {
    pub(crate) enrollment_id: Uuid,
    pub(crate) tracked: TrackedResult,
}

#[derive(Debug)]
pub(crate) struct PointsRow {
    pub(crate) user_id: Uuid,
    pub(crate) points: i64,
}

/// An API client; its secret is hashed as soon as it is checked and never kept.
#[derive(Debug)]
pub(crate) struct ApiClientRow {
    pub(crate) id: Uuid,
    pub(crate) user_id: Uuid,
    /// SHA-256 of the secret, as the RPC-made clients store it.
    pub(crate) secret_hash: String,
    /// A SCIM client: the secret is a SCIM token.
    pub(crate) scim: bool,
}
