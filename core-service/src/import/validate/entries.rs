//! Every id of a document with the entry that gave it, kept small: a million ids each
//! holding its formatted entry name would outweigh the rows themselves.
//!
//! Enrollment ids are not in the map: a million of them are checked from the plan's rows
//! instead (see `enrollment_ids`), and only a name that cannot be rebuilt is kept here.
//!
//! An entry is remembered by its place (account, list, index); its name is written out
//! only when a message needs it. Names that cannot be rebuilt from the id alone (a user
//! named by its email, an account by its URL, an id not written in canonical form) are
//! kept as text.

use std::collections::HashMap;

use uuid::Uuid;

use super::label;

/// The lists that give ids, in the order the validator registers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum List {
    Account,
    RootDepartment,
    Departments,
    CustomRoles,
    Users,
    Groups,
    Projects,
    ContentItems,
    Enrollments,
    ApiClients,
}

impl List {
    pub(crate) fn key(self) -> &'static str {
        match self {
            List::Account => "accounts",
            List::RootDepartment => "rootDepartment",
            List::Departments => "departments",
            List::CustomRoles => "customRoles",
            List::Users => "users",
            List::Groups => "groups",
            List::Projects => "projects",
            List::ContentItems => "contentItems",
            List::Enrollments => "enrollments",
            List::ApiClients => "apiClients",
        }
    }
}

/// Where an entry is; ordered as the document is validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Place {
    pub(crate) account: u32,
    pub(crate) list: List,
    pub(crate) index: u32,
}

impl Place {
    pub(crate) fn new(account: usize, list: List, index: usize) -> Self {
        Self {
            account: u32::try_from(account).unwrap_or(u32::MAX),
            list,
            index: u32::try_from(index).unwrap_or(u32::MAX),
        }
    }
}

/// The ids of a document and where each was given.
#[derive(Debug, Default)]
pub(crate) struct Entries {
    places: HashMap<Uuid, Place>,
    /// Names that [`Entries::name`] cannot rebuild.
    names: HashMap<Place, Box<str>>,
}

impl Entries {
    pub(crate) fn reserve(&mut self, ids: usize) {
        self.places.reserve(ids);
    }

    /// Remembers `id`, written `raw`, as given by the entry at `place`, named by
    /// `entry` when [`Entries::name`] could not rebuild it; the place of the first entry
    /// when the id is already known.
    pub(crate) fn insert(
        &mut self,
        id: Uuid,
        raw: &str,
        place: Place,
        entry: impl FnOnce() -> String,
    ) -> Result<(), Place> {
        if let Some(first) = self.places.get(&id) {
            return Err(*first);
        }
        self.places.insert(id, place);
        if matches!(place.list, List::Account | List::Users) || !canonical(id, raw) {
            self.names.insert(place, entry().into());
        }
        Ok(())
    }

    /// Notes the name of an entry whose id is kept outside the map (an enrollment's),
    /// when [`Entries::name`] could not rebuild it.
    pub(crate) fn note_name(
        &mut self,
        id: Uuid,
        raw: &str,
        place: Place,
        entry: impl FnOnce() -> String,
    ) {
        if !canonical(id, raw) {
            self.names.insert(place, entry().into());
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.places.len()
    }

    pub(crate) fn ids(&self) -> impl Iterator<Item = Uuid> + '_ {
        self.places.keys().copied()
    }

    /// The entry of `id`, if the document gives it.
    pub(crate) fn place(&self, id: Uuid) -> Option<Place> {
        self.places.get(&id).copied()
    }

    /// The name of the entry at `place`, as messages write it.
    pub(crate) fn name(&self, id: Uuid, place: Place) -> String {
        match self.names.get(&place) {
            Some(name) => name.to_string(),
            None => rebuilt(id, place).unwrap_or_default(),
        }
    }
}

/// Whether `raw` is how `id` prints: lowercase, hyphenated.
fn canonical(id: Uuid, raw: &str) -> bool {
    let mut buffer = Uuid::encode_buffer();
    id.hyphenated().encode_lower(&mut buffer) == raw
}

/// The name of an entry named by its own id, as the validator writes it; `None` for
/// entries named otherwise.
fn rebuilt(id: Uuid, place: Place) -> Option<String> {
    let account = place.account as usize;
    let id = id.to_string();
    match place.list {
        List::Account | List::Users => None,
        List::RootDepartment => Some(format!("accounts[{account}].rootDepartment (id \"{id}\")")),
        List::ApiClients => Some(label(
            account,
            List::ApiClients.key(),
            place.index as usize,
            "clientId",
            &id,
        )),
        list => Some(label(account, list.key(), place.index as usize, "id", &id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_rebuilt_or_kept() {
        let mut entries = Entries::default();
        let id = Uuid::from_u128(7);
        let place = Place::new(0, List::Enrollments, 3);
        let entry = label(0, "enrollments", 3, "id", &id.to_string());
        let raw = id.to_string();
        assert_eq!(entries.insert(id, &raw, place, || entry.clone()), Ok(()));
        assert!(entries.names.is_empty());
        assert_eq!(entries.name(id, place), entry);

        let upper = Uuid::from_u128(8);
        let place = Place::new(0, List::Enrollments, 4);
        let raw = upper.to_string().to_uppercase();
        let entry = label(0, "enrollments", 4, "id", &raw);
        assert_eq!(entries.insert(upper, &raw, place, || entry.clone()), Ok(()));
        assert_eq!(entries.name(upper, place), entry);
        assert_eq!(
            entries.insert(upper, &raw, Place::new(0, List::Users, 0), String::new),
            Err(place)
        );
    }
}
