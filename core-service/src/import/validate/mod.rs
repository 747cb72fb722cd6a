//! Checks an import document without touching the database and turns it into a
//! [`Plan`]: rows ready to insert, in an order the foreign keys accept.
//!
//! Every refusal names the entry it is about (`accounts[0].users[3] (email "…")`), so a
//! person can find it in the file. What only the database can answer (is this id or
//! account URL already taken?) is checked by the loader, inside its transaction.
//!
//! The checks take one entry at a time, in one fixed order (departments, custom roles,
//! users, groups, projects, content items, enrollments, points, API clients, results), so a document read as
//! a stream is checked as it arrives and gives the same first refusal as a whole one.
//!
//! Layout:
//! - this module: [`validate`], [`Validator`] (what is unique across the document),
//!   [`AccountCheck`] (one account's known ids) and the helpers every list shares.
//! - `plan`: the rows.
//! - `entries`: every id with the place of its entry, compact; `enrollment_ids`: the
//!   enrollments' ids, checked from their rows instead.
//! - `departments`, `users` (custom roles, users, passwords), `groups`, `content`
//!   (projects, content items), `enrollments` (enrollments, points), `api_clients`,
//!   `results` (the enrollments' tracked results): one list each.

use std::collections::{BTreeSet, HashMap, HashSet};

use uuid::Uuid;

mod api_clients;
mod content;
mod departments;
mod enrollment_ids;
mod enrollments;
mod entries;
mod groups;
mod plan;
mod results;
mod users;

pub(crate) use self::{
    entries::{Entries, List, Place},
    plan::{AccountPlan, Password, Plan},
};
use super::{
    ImportError,
    document::{AccountEntry, ImportDocument},
};
use crate::domain::{
    Invalid,
    account_url::{AccountUrl, without_scheme},
    ids::{clip, new_id, parse_uuid},
};

/// Checks `doc` as a whole; the first broken rule refuses it.
pub(crate) fn validate(doc: &ImportDocument) -> Result<Plan, ImportError> {
    let mut validator = Validator::default();
    for (index, account) in doc.accounts.iter().enumerate() {
        let mut check = validator
            .account(index, &account.url, account.id.as_deref())
            .map_err(|refusal| validator.refuse(None, refusal))?;
        if let Err(refusal) = check.all_lists(&mut validator, account) {
            return Err(validator.refuse(Some(&mut check), refusal));
        }
        validator.push(check);
    }
    validator.finish()
}

/// What must be unique across the whole document, and the accounts checked so far.
#[derive(Default)]
pub(crate) struct Validator {
    ids: Entries,
    /// Each normalized account URL, with its account's entry.
    urls: HashMap<String, String>,
    accounts: Vec<AccountPlan>,
}

impl Validator {
    fn register_id(&mut self, place: Place, entry: &str, raw: &str) -> Result<Uuid, ImportError> {
        let id = parse_uuid(raw).ok_or_else(|| {
            ImportError::invalid(entry, format!("id \"{}\" is not a UUID", clip(raw)))
        })?;
        if let Err(first) = self.ids.insert(id, raw, place, || entry.to_owned()) {
            let first = self.ids.name(id, first);
            return Err(ImportError::invalid(
                entry,
                format!("id \"{id}\" is used twice in the document (first by {first})"),
            ));
        }
        Ok(id)
    }

    /// The id of an enrollment entry; `None` when it is not a UUID. Not registered: its
    /// row holds it, and [`enrollment_ids`] checks the rows (see there).
    fn enrollment_id(&mut self, place: Place, raw: &str) -> Option<Uuid> {
        let id = parse_uuid(raw)?;
        self.ids.note_name(id, raw, place, || {
            label(
                place.account as usize,
                List::Enrollments.key(),
                place.index as usize,
                "id",
                raw,
            )
        });
        Some(id)
    }

    /// `refusal`, unless an entry checked before it repeats an enrollment's id: that
    /// entry is refused first, as it would be if enrollment ids were registered in turn.
    /// `current` is the account being checked, if any.
    pub(crate) fn refuse(
        &mut self,
        current: Option<&mut AccountCheck>,
        refusal: ImportError,
    ) -> ImportError {
        let current = current.map(|check| enrollment_ids::Run {
            account: check.a,
            rows: &mut check.plan.enrollments,
        });
        self.first_repeat(current).unwrap_or(refusal)
    }

    fn first_repeat(&mut self, current: Option<enrollment_ids::Run<'_>>) -> Option<ImportError> {
        let runs = self
            .accounts
            .iter_mut()
            .enumerate()
            .map(|(account, plan)| enrollment_ids::Run {
                account,
                rows: &mut plan.enrollments,
            })
            .chain(current)
            .collect();
        enrollment_ids::first_repeat(&self.ids, runs)
    }

    /// Starts account number `a`: its URL and id, before any of its lists.
    pub(crate) fn account(
        &mut self,
        a: usize,
        raw_url: &str,
        raw_id: Option<&str>,
    ) -> Result<AccountCheck, ImportError> {
        let entry = format!("accounts[{a}] (url \"{}\")", clip(raw_url));
        let url = AccountUrl::parse(raw_url)
            .map_err(refused(&entry))?
            .into_inner();
        // Either scheme names one account (authentication reads it so), so two accounts may
        // not differ by their scheme alone.
        let key = without_scheme(&url).to_owned();
        if let Some(first) = self.urls.get(&key) {
            return Err(ImportError::invalid(
                &entry,
                format!(
                    "url names the same account as {first} (\"{url}\" once normalized, whatever the scheme)"
                ),
            ));
        }
        self.urls.insert(key, entry.clone());
        let id = match raw_id {
            Some(raw) => self.register_id(Place::new(a, List::Account, 0), &entry, raw)?,
            None => new_id(),
        };
        Ok(AccountCheck {
            a,
            plan: AccountPlan {
                entry,
                id,
                url,
                departments: Vec::new(),
                closure: Vec::new(),
                custom_roles: Vec::new(),
                users: Vec::new(),
                groups: Vec::new(),
                projects: Vec::new(),
                content_items: Vec::new(),
                enrollments: Vec::new(),
                points: Vec::new(),
                api_clients: Vec::new(),
                results: Vec::new(),
            },
            known: Known::default(),
            logins: HashMap::new(),
            external_ids: HashMap::new(),
            points_given: HashMap::new(),
            result_of: None,
        })
    }

    /// Makes room for about `ids` identifiers at once (enrollments' not counted): a
    /// large map that grows by doubling holds its old and new tables together at each step.
    pub(crate) fn reserve_ids(&mut self, ids: usize) {
        self.ids.reserve(ids);
    }

    /// Adds a checked account to the plan.
    pub(crate) fn push(&mut self, check: AccountCheck) {
        self.accounts.push(check.plan);
    }

    /// The plan, its enrollments sorted by id; refused when the document lists no
    /// accounts or repeats an enrollment's id.
    pub(crate) fn finish(mut self) -> Result<Plan, ImportError> {
        if self.accounts.is_empty() {
            return Err(ImportError::invalid(
                "accounts",
                "the document lists no accounts",
            ));
        }
        if let Some(refusal) = self.first_repeat(None) {
            return Err(refusal);
        }
        Ok(Plan {
            accounts: self.accounts,
            ids: self.ids,
        })
    }
}

/// One account being checked: the ids it has given so far, by kind (references must
/// stay inside the account), and its rows.
pub(crate) struct AccountCheck {
    a: usize,
    plan: AccountPlan,
    known: Known,
    /// Each login key, with the index of the user entry that has it (names are written out
    /// only for a refusal: a hundred thousand of them would weigh more than the keys).
    logins: HashMap<String, u32>,
    /// Each SCIM `externalId`, with the index of the user entry that has it.
    external_ids: HashMap<String, u32>,
    /// Each user given points, with the index of the points entry.
    points_given: HashMap<Uuid, u32>,
    /// For each of the account's enrollments, in id order, the index of the result entry
    /// given for it (`u32::MAX`: none yet); made when its first result is checked.
    result_of: Option<Vec<u32>>,
}

#[derive(Default)]
struct Known {
    departments: HashSet<Uuid>,
    custom_roles: HashSet<Uuid>,
    users: HashSet<Uuid>,
    projects: HashSet<Uuid>,
    content_items: HashSet<Uuid>,
}

/// How many entries each list of an account gives, when known before they are checked.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ListSizes {
    pub(crate) departments: usize,
    pub(crate) users: usize,
    pub(crate) content_items: usize,
    pub(crate) enrollments: usize,
    pub(crate) points: usize,
    pub(crate) results: usize,
}

impl AccountCheck {
    /// The entry name of the account's `index`th user, for a message that points back at it.
    fn user_label(&self, index: usize) -> String {
        let email = self
            .plan
            .users
            .get(index)
            .map_or("", |user| user.email.as_str());
        label(self.a, "users", index, "email", email)
    }

    /// Sizes the account's rows and lookups once, for the lists it is about to check.
    pub(crate) fn reserve(&mut self, sizes: &ListSizes) {
        self.plan.departments.reserve(sizes.departments + 1);
        self.plan.users.reserve(sizes.users);
        self.plan.enrollments.reserve(sizes.enrollments);
        self.plan.points.reserve(sizes.points);
        self.plan.results.reserve(sizes.results);
        self.known.departments.reserve(sizes.departments + 1);
        self.known.users.reserve(sizes.users);
        self.known.content_items.reserve(sizes.content_items);
        self.logins.reserve(sizes.users);
        self.points_given.reserve(sizes.points);
    }
    /// Every list of a whole account entry, in the order of the checks.
    fn all_lists(
        &mut self,
        validator: &mut Validator,
        account: &AccountEntry,
    ) -> Result<(), ImportError> {
        self.departments(validator, &account.root_department, &account.departments)?;
        for (i, role) in account.custom_roles.iter().enumerate() {
            self.custom_role(validator, i, role)?;
        }
        for (i, user) in account.users.iter().enumerate() {
            self.user(validator, i, user)?;
        }
        for (i, group) in account.groups.iter().enumerate() {
            self.group(validator, i, group)?;
        }
        for (i, project) in account.projects.iter().enumerate() {
            self.project(validator, i, project)?;
        }
        for (i, item) in account.content_items.iter().enumerate() {
            self.content_item(validator, i, item)?;
        }
        for (i, enrollment) in account.enrollments.iter().enumerate() {
            self.enrollment(validator, i, enrollment)?;
        }
        for (i, points) in account.points.iter().enumerate() {
            self.points(i, points)?;
        }
        for (i, client) in account.api_clients.iter().enumerate() {
            self.api_client(validator, i, client)?;
        }
        for (i, result) in account.results.iter().enumerate() {
            self.result(i, result)?;
        }
        Ok(())
    }
}

/// `accounts[0].users[3] (email "bob@acme.example.com")`.
pub(crate) fn label(account: usize, list: &str, index: usize, key: &str, value: &str) -> String {
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

/// The refusal of `entry` for a value that breaks its rule.
fn refused(entry: &str) -> impl Fn(Invalid) -> ImportError + '_ {
    move |invalid| ImportError::invalid(entry, invalid.to_string())
}

#[cfg(test)]
mod tests;
