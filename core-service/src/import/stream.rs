//! A JSON document checked as it is read, so a million enrollments are never held as
//! serde structs: each entry becomes a compact row of the plan and is dropped.
//!
//! Two passes over the file. The first reads every entry with the document's own serde
//! types and drops it: a file that does not parse is refused with the same message and
//! position as when it is read whole, before any rule is checked. It also notes which
//! lists each account gives, in which order. The second pass checks the entries in the
//! validator's order (departments, custom roles, users, groups, projects, content
//! items, enrollments, points, API clients, results): a list that arrives in that order is
//! checked entry by entry as it is read; one that arrives early is held until its turn. But
//! `results`, which depends on nothing checked after the enrollments, is checked as it is read
//! once they are, even ahead of `points` and `apiClients` (where the world generator writes
//! it), the refusal of its first bad entry kept for its turn. Documents written in the
//! contract's order (as the export writes them) or the generator's are thus checked in one
//! streaming walk, and every document gets the same first refusal as
//! [`super::validate::validate`] over the whole of it.
//!
//! YAML documents are read whole: the format has no cheap streaming reader here.

use std::{
    fmt,
    fs::File,
    io::{BufReader, Read as _, Seek as _, SeekFrom},
    marker::PhantomData,
    path::Path,
    sync::atomic::AtomicU64,
};

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};

use super::{
    ImportError,
    document::{
        ApiClientEntry, ContentItemEntry, CustomRoleEntry, DepartmentEntry, EnrollmentEntry,
        GroupEntry, PointsEntry, ProjectEntry, ResultEntry, RootDepartmentEntry, UserEntry,
    },
    error::Cause,
    progress::Counted,
    validate::{AccountCheck, ListSizes, Plan, Validator},
};

/// The keys of an account entry, in the order the validator checks what they give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Id,
    Url,
    RootDepartment,
    Departments,
    CustomRoles,
    Users,
    Groups,
    Projects,
    ContentItems,
    Enrollments,
    Points,
    ApiClients,
    Results,
}

const ACCOUNT_FIELDS: &[&str] = &[
    "id",
    "url",
    "rootDepartment",
    "departments",
    "customRoles",
    "users",
    "groups",
    "projects",
    "contentItems",
    "enrollments",
    "points",
    "apiClients",
    "results",
];

impl Key {
    fn parse(name: &str) -> Option<Key> {
        Some(match name {
            "id" => Key::Id,
            "url" => Key::Url,
            "rootDepartment" => Key::RootDepartment,
            "departments" => Key::Departments,
            "customRoles" => Key::CustomRoles,
            "users" => Key::Users,
            "groups" => Key::Groups,
            "projects" => Key::Projects,
            "contentItems" => Key::ContentItems,
            "enrollments" => Key::Enrollments,
            "points" => Key::Points,
            "apiClients" => Key::ApiClients,
            "results" => Key::Results,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        ACCOUNT_FIELDS[self as usize]
    }
}

/// Reads the JSON file at `path` into a plan.
#[cfg(test)]
pub(crate) fn read_json(path: &Path) -> Result<Plan, ImportError> {
    read_json_counted(path, &AtomicU64::new(0))
}

/// [`read_json`], adding to `read` every byte it reads: the file's length twice once done
/// (one pass to learn its shape, one to check it).
pub(crate) fn read_json_counted(path: &Path, read: &AtomicU64) -> Result<Plan, ImportError> {
    let read_error = |source| ImportError::Read {
        file: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(read_error)?;
    let shapes = {
        let mut pass = Pass::Shape(Vec::new());
        parse(path, &mut file, &mut pass, read)?;
        match pass {
            Pass::Shape(shapes) => shapes,
            Pass::Check { .. } => Vec::new(),
        }
    };
    file.seek(SeekFrom::Start(0)).map_err(read_error)?;
    let mut validator = Box::<Validator>::default();
    validator.reserve_ids(shapes.iter().map(Shape::ids).sum());
    let mut pass = Pass::Check {
        shapes,
        validator,
        refusal: None,
    };
    let parsed = parse(path, &mut file, &mut pass, read);
    let Pass::Check {
        validator, refusal, ..
    } = pass
    else {
        return Err(ImportError::invalid(
            "accounts",
            "the document lists no accounts",
        ));
    };
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    parsed?;
    validator.finish()
}

/// What the first pass learns of an account.
#[derive(Debug, Default, Clone)]
struct Shape {
    /// Its keys in document order.
    keys: Vec<Key>,
    sizes: ListSizes,
    /// Entries of its other lists (custom roles, groups, projects, API clients), which give
    /// ids too.
    other_entries: usize,
}

impl Shape {
    /// Identifiers the account gives to the id map: its own, its root's, and one per
    /// entry but enrollments (whose rows hold theirs) and points.
    fn ids(&self) -> usize {
        let ListSizes {
            departments,
            users,
            content_items,
            enrollments: _,
            points: _,
            results: _,
        } = self.sizes;
        2 + departments + users + content_items + self.other_entries
    }

    fn count(&mut self, key: Key, entries: usize) {
        let sizes = &mut self.sizes;
        match key {
            Key::Departments => sizes.departments = entries,
            Key::Users => sizes.users = entries,
            Key::ContentItems => sizes.content_items = entries,
            Key::Enrollments => sizes.enrollments = entries,
            Key::Points => sizes.points = entries,
            Key::Results => sizes.results = entries,
            Key::CustomRoles | Key::Groups | Key::Projects | Key::ApiClients => {
                self.other_entries += entries
            }
            Key::Id | Key::Url | Key::RootDepartment => {}
        }
    }
}

/// One walk over the document.
enum Pass {
    /// Parsing only; the shape of each account.
    Shape(Vec<Shape>),
    /// Checking, knowing the shape of each account; the first refusal stops the walk.
    Check {
        shapes: Vec<Shape>,
        validator: Box<Validator>,
        refusal: Option<ImportError>,
    },
}

fn parse(
    path: &Path,
    file: &mut File,
    pass: &mut Pass,
    read: &AtomicU64,
) -> Result<(), ImportError> {
    let mut reader = BufReader::with_capacity(1 << 16, file);
    // A UTF-8 byte order mark is harmless; serde_json would refuse it.
    let mut bom = [0u8; 3];
    let skipped = reader.read_exact(&mut bom).is_ok() && bom == [0xEF, 0xBB, 0xBF];
    let reader = reader.into_inner();
    reader
        .seek(SeekFrom::Start(if skipped { 3 } else { 0 }))
        .map_err(|source| ImportError::Read {
            file: path.to_path_buf(),
            source,
        })?;
    let counted = Counted::new(reader, read);
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 16, counted));
    let result = DocumentSeed { pass: &mut *pass }
        .deserialize(&mut de)
        .and_then(|()| de.end());
    result.map_err(|err| {
        let (line, column) = (err.line(), err.column());
        let known = line > 0;
        let source: Cause = err.into();
        ImportError::Parse {
            file: path.to_path_buf(),
            line: known.then_some(line),
            column: known.then_some(column),
            message: source.to_string(),
            source,
        }
    })
}

/// The document: `{"accounts": [...]}` and nothing else.
struct DocumentSeed<'p> {
    pass: &'p mut Pass,
}

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_struct("ImportDocument", &["accounts"], self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct ImportDocument")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = false;
        while let Some(key) = map.next_key::<String>()? {
            if key != "accounts" {
                return Err(de::Error::unknown_field(&key, &["accounts"]));
            }
            if seen {
                return Err(de::Error::duplicate_field("accounts"));
            }
            seen = true;
            map.next_value_seed(AccountsSeed {
                pass: &mut *self.pass,
            })?;
        }
        if !seen {
            return Err(de::Error::missing_field("accounts"));
        }
        Ok(())
    }
}

struct AccountsSeed<'p> {
    pass: &'p mut Pass,
}

impl<'de> DeserializeSeed<'de> for AccountsSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for AccountsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut a = 0;
        while seq
            .next_element_seed(AccountSeed {
                pass: &mut *self.pass,
                a,
            })?
            .is_some()
        {
            a += 1;
        }
        Ok(())
    }
}

struct AccountSeed<'p> {
    pass: &'p mut Pass,
    a: usize,
}

impl<'de> DeserializeSeed<'de> for AccountSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_struct("AccountEntry", ACCOUNT_FIELDS, self)
    }
}

/// An error that only stops the walk: the refusal itself is kept in the pass.
fn stop<E: de::Error>() -> E {
    E::custom("the document was refused")
}

/// One account as the check pass walks it.
struct AccountWalk {
    a: usize,
    /// The lists this account gives, in the validator's order; the first not yet
    /// checked is `keys[next]`.
    keys: Vec<Key>,
    sizes: ListSizes,
    next: usize,
    url: Option<String>,
    /// `Some` once the `id` key is read (its value may be `null`).
    id: Option<Option<String>>,
    root: Option<RootDepartmentEntry>,
    held: Held,
    /// `Some` once `results` has been checked ahead of its turn (see [`receive`]), with the
    /// refusal of its first bad entry, given when its turn comes.
    early_results: Option<Option<ImportError>>,
    check: Option<AccountCheck>,
}

/// Lists that arrived before their turn.
#[derive(Default)]
struct Held {
    departments: Option<Vec<DepartmentEntry>>,
    custom_roles: Option<Vec<CustomRoleEntry>>,
    users: Option<Vec<UserEntry>>,
    groups: Option<Vec<GroupEntry>>,
    projects: Option<Vec<ProjectEntry>>,
    content_items: Option<Vec<ContentItemEntry>>,
    enrollments: Option<Vec<EnrollmentEntry>>,
    points: Option<Vec<PointsEntry>>,
    api_clients: Option<Vec<ApiClientEntry>>,
    results: Option<Vec<ResultEntry>>,
}

impl AccountWalk {
    /// The key whose turn it is, if any is left.
    fn turn(&self) -> Option<Key> {
        self.keys.get(self.next).copied()
    }

    /// Checks every stage whose inputs are all in, in order.
    fn advance(&mut self, validator: &mut Validator) -> Result<(), ImportError> {
        while let Some(key) = self.turn() {
            match key {
                Key::Id | Key::Url => {
                    let has_id = self.keys.contains(&Key::Id);
                    let (Some(url), true) = (&self.url, !has_id || self.id.is_some()) else {
                        return Ok(());
                    };
                    let id = self.id.as_ref().and_then(Option::as_deref);
                    let mut check = validator.account(self.a, url, id)?;
                    check.reserve(&self.sizes);
                    self.check = Some(check);
                    self.next = self.keys.partition_point(|k| *k <= Key::Url);
                    continue;
                }
                Key::RootDepartment | Key::Departments => {
                    let has_departments = self.keys.contains(&Key::Departments);
                    let (Some(root), true) = (
                        &self.root,
                        !has_departments || self.held.departments.is_some(),
                    ) else {
                        return Ok(());
                    };
                    let departments = self.held.departments.take().unwrap_or_default();
                    if let Some(check) = self.check.as_mut() {
                        check.departments(validator, root, &departments)?;
                    }
                    self.next = self.keys.partition_point(|k| *k <= Key::Departments);
                    continue;
                }
                _ => {}
            }
            let Some(check) = self.check.as_mut() else {
                return Ok(());
            };
            macro_rules! replay {
                ($field:ident, $method:ident) => {{
                    let Some(items) = self.held.$field.take() else {
                        return Ok(());
                    };
                    for (i, item) in items.iter().enumerate() {
                        check.$method(validator, i, item)?;
                    }
                }};
            }
            match key {
                Key::CustomRoles => replay!(custom_roles, custom_role),
                Key::Users => replay!(users, user),
                Key::Groups => replay!(groups, group),
                Key::Projects => replay!(projects, project),
                Key::ContentItems => replay!(content_items, content_item),
                Key::Enrollments => replay!(enrollments, enrollment),
                Key::ApiClients => replay!(api_clients, api_client),
                Key::Points => {
                    let Some(items) = self.held.points.take() else {
                        return Ok(());
                    };
                    for (i, item) in items.iter().enumerate() {
                        check.points(i, item)?;
                    }
                }
                Key::Results => {
                    if let Some(early) = self.early_results.take() {
                        if let Some(refusal) = early {
                            return Err(refusal);
                        }
                    } else {
                        let Some(items) = self.held.results.take() else {
                            return Ok(());
                        };
                        for (i, item) in items.iter().enumerate() {
                            check.result(i, item)?;
                        }
                    }
                }
                _ => {}
            }
            self.next += 1;
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for AccountSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct AccountEntry")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut order = Vec::new();
        let mut shape = Shape::default();
        let mut walk = match &*self.pass {
            Pass::Shape(_) => None,
            Pass::Check { shapes, .. } => {
                let known = shapes.get(self.a).cloned().unwrap_or_default();
                let mut keys = known.keys;
                keys.sort();
                Some(AccountWalk {
                    a: self.a,
                    keys,
                    sizes: known.sizes,
                    next: 0,
                    url: None,
                    id: None,
                    root: None,
                    held: Held::default(),
                    early_results: None,
                    check: None,
                })
            }
        };
        while let Some(name) = map.next_key::<String>()? {
            let key =
                Key::parse(&name).ok_or_else(|| de::Error::unknown_field(&name, ACCOUNT_FIELDS))?;
            if order.contains(&key) {
                return Err(de::Error::duplicate_field(key.name()));
            }
            order.push(key);
            match (&mut walk, &mut *self.pass) {
                (None, _) | (_, Pass::Shape(_)) => {
                    let entries = read_and_drop(&mut map, key)?;
                    shape.count(key, entries);
                }
                (
                    Some(walk),
                    Pass::Check {
                        validator, refusal, ..
                    },
                ) => {
                    if refusal.is_some() {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    let outcome = receive(&mut map, key, walk, validator)?;
                    if let Err(err) = outcome.and_then(|()| walk.advance(validator)) {
                        *refusal = Some(validator.refuse(walk.check.as_mut(), err));
                        return Err(stop());
                    }
                }
            }
        }
        for required in [Key::Url, Key::RootDepartment] {
            if !order.contains(&required) {
                return Err(de::Error::missing_field(required.name()));
            }
        }
        match (walk, &mut *self.pass) {
            (_, Pass::Shape(shapes)) => {
                shape.keys = order;
                shapes.push(shape);
            }
            (
                Some(mut walk),
                Pass::Check {
                    validator, refusal, ..
                },
            ) => {
                if refusal.is_none() {
                    match walk.advance(validator) {
                        Ok(()) => {
                            if let Some(check) = walk.check.take() {
                                validator.push(check);
                            }
                        }
                        Err(err) => {
                            *refusal = Some(validator.refuse(walk.check.as_mut(), err));
                            return Err(stop());
                        }
                    }
                }
            }
            (None, _) => {}
        }
        Ok(())
    }
}

/// The shape pass: every value read with its serde type, then dropped. Returns how many
/// entries a list held (0 for any other value).
fn read_and_drop<'de, A: MapAccess<'de>>(map: &mut A, key: Key) -> Result<usize, A::Error> {
    fn count<'de, T: DeserializeOwned, A: MapAccess<'de>>(map: &mut A) -> Result<usize, A::Error> {
        let mut entries = 0;
        map.next_value_seed(Each::<T, _>::new(|_, _| {
            entries += 1;
            Ok(())
        }))?;
        Ok(entries)
    }
    match key {
        Key::Id => drop(map.next_value::<Option<String>>()?),
        Key::Url => drop(map.next_value::<String>()?),
        Key::RootDepartment => drop(map.next_value::<RootDepartmentEntry>()?),
        Key::Departments => return count::<DepartmentEntry, A>(map),
        Key::CustomRoles => return count::<CustomRoleEntry, A>(map),
        Key::Users => return count::<UserEntry, A>(map),
        Key::Groups => return count::<GroupEntry, A>(map),
        Key::Projects => return count::<ProjectEntry, A>(map),
        Key::ContentItems => return count::<ContentItemEntry, A>(map),
        Key::Enrollments => return count::<EnrollmentEntry, A>(map),
        Key::Points => return count::<PointsEntry, A>(map),
        Key::ApiClients => return count::<ApiClientEntry, A>(map),
        Key::Results => return count::<ResultEntry, A>(map),
    }
    Ok(0)
}

/// The check pass: a list whose turn it is goes entry by entry through the validator;
/// any other value is held. The outer `Result` is the parser's, the inner the rules'.
fn receive<'de, A: MapAccess<'de>>(
    map: &mut A,
    key: Key,
    walk: &mut AccountWalk,
    validator: &mut Validator,
) -> Result<Result<(), ImportError>, A::Error> {
    let in_turn = walk.turn() == Some(key) && walk.check.is_some();
    macro_rules! list {
        ($entry:ty, $field:ident, $method:ident) => {{
            if in_turn {
                let Some(check) = walk.check.as_mut() else {
                    return Ok(Ok(()));
                };
                let mut refusal = None;
                let result = map.next_value_seed(Each::<$entry, _>::new(|i, item: $entry| {
                    check.$method(validator, i, &item).map_err(|err| {
                        refusal = Some(err);
                    })
                }));
                if let Some(err) = refusal {
                    return Ok(Err(err));
                }
                result?;
                walk.next += 1;
            } else {
                walk.held.$field = Some(map.next_value()?);
            }
        }};
    }
    match key {
        Key::Id => walk.id = Some(map.next_value()?),
        Key::Url => walk.url = Some(map.next_value()?),
        Key::RootDepartment => walk.root = Some(map.next_value()?),
        Key::Departments => walk.held.departments = Some(map.next_value()?),
        Key::CustomRoles => list!(CustomRoleEntry, custom_roles, custom_role),
        Key::Users => list!(UserEntry, users, user),
        Key::Groups => list!(GroupEntry, groups, group),
        Key::Projects => list!(ProjectEntry, projects, project),
        Key::ContentItems => list!(ContentItemEntry, content_items, content_item),
        Key::Enrollments => list!(EnrollmentEntry, enrollments, enrollment),
        Key::ApiClients => list!(ApiClientEntry, api_clients, api_client),
        Key::Points => {
            if in_turn {
                let Some(check) = walk.check.as_mut() else {
                    return Ok(Ok(()));
                };
                let mut refusal = None;
                let result =
                    map.next_value_seed(Each::<PointsEntry, _>::new(|i, item: PointsEntry| {
                        check.points(i, &item).map_err(|err| {
                            refusal = Some(err);
                        })
                    }));
                if let Some(err) = refusal {
                    return Ok(Err(err));
                }
                result?;
                walk.next += 1;
            } else {
                walk.held.points = Some(map.next_value()?);
            }
        }
        Key::Results => {
            // Results depend on nothing checked after the enrollments, so once those are
            // checked, results that come before their turn (ahead of `points` or
            // `apiClients`, as the world generator writes them) are checked as they are read
            // rather than held: three quarters of a million entries held as text weighed
            // about 200 MiB. A refusal of one of them waits for its turn, so that a bad entry
            // of a list checked before `results` is still refused first.
            let early = !in_turn && walk.turn().is_some_and(|turn| turn > Key::Enrollments);
            let Some(check) = walk.check.as_mut().filter(|_| in_turn || early) else {
                walk.held.results = Some(map.next_value()?);
                return Ok(Ok(()));
            };
            let mut refusal = None;
            let result =
                map.next_value_seed(Each::<ResultEntry, _>::new(|i, item: ResultEntry| {
                    if refusal.is_some() {
                        // Early: the rest of the list is only read.
                        return Ok(());
                    }
                    match check.result(i, &item) {
                        Ok(()) => Ok(()),
                        Err(err) => {
                            refusal = Some(err);
                            if early { Ok(()) } else { Err(()) }
                        }
                    }
                }));
            if in_turn {
                if let Some(err) = refusal {
                    return Ok(Err(err));
                }
                result?;
                walk.next += 1;
            } else {
                result?;
                walk.early_results = Some(refusal);
            }
        }
    }
    Ok(Ok(()))
}

/// A list read one entry at a time, each handed to `each` with its index and dropped.
/// `each` failing stops the walk.
struct Each<T, F> {
    each: F,
    entry: PhantomData<fn() -> T>,
}

impl<T, F> Each<T, F> {
    fn new(each: F) -> Self {
        Self {
            each,
            entry: PhantomData,
        }
    }
}

impl<'de, T, F> DeserializeSeed<'de> for Each<T, F>
where
    T: DeserializeOwned,
    F: FnMut(usize, T) -> Result<(), ()>,
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T, F> Visitor<'de> for Each<T, F>
where
    T: DeserializeOwned,
    F: FnMut(usize, T) -> Result<(), ()>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(item) = seq.next_element::<T>()? {
            (self.each)(index, item).map_err(|()| stop::<A::Error>())?;
            index += 1;
        }
        Ok(())
    }
}
