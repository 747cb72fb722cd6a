//! A large account of any size, generated deterministically, for the scale benchmark and for
//! trying the service at a customer's size (`cargo run -p lms-tests --bin generate-world`).
//!
//! The same shape always gives the same document, byte for byte: every identifier is a
//! function of the account's number, the kind of row and the row's number ([`Ids`]), so a
//! benchmark can name any row without reading the document or holding its ids. The document
//! is written entry by entry, so a million enrollments never sit in memory.
//!
//! Identifiers are shaped like a real customer's by default ([`IdShape::Scattered`]: UUID v1
//! as iSpring issues them, scattered over the key space in byte order); random v4 ids and the
//! sequential ids of the best case are there to compare with.
//!
//! Shape of the account:
//! - a department tree with fan-out 10 under the root; the first child of the root and its
//!   subtree (the "smart" subtree) hold 15 % of the users, the other departments the rest;
//! - users 0 to 5 are the role logins ([`RoleLogin`]), every other user is a learner;
//! - plain groups of 100 members (one per 1,000 users, at least one), a smart group over the
//!   smart subtree, a custom role;
//! - 10 projects with 10 content items each, `enrollments_per_user` enrollments of every
//!   learner in distinct items, and one points row per user;
//! - one API client per role login, all with [`WORLD_CLIENT_SECRET`].

use std::io::{self, Write};

use lms_core::import::document::{
    ApiClientEntry, ContentItemEntry, CustomRoleEntry, DepartmentEntry, EnrollmentEntry,
    GroupEntry, PointsEntry, ProjectEntry, ResultEntry, RootDepartmentEntry, UserEntry,
};
use serde::Serialize;

use crate::TestStack;
use uuid::Uuid;

const XML_PROLOGUE: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";

/// The password of every login of a generated account.
pub const WORLD_PASSWORD: &str = "large-world-password";
/// The secret of every API client of a generated account.
pub const WORLD_CLIENT_SECRET: &str = "5e1c7a9b3d2f48e0a6c4b2d8f0e1a3c5";

/// The number of members of the plain group.
pub const PLAIN_GROUP_MEMBERS: usize = 100;

const FAN_OUT: usize = 10;
const PROJECTS: usize = 10;
const ITEMS_PER_PROJECT: usize = 10;
/// Out of every 20 users, this many live in the smart subtree (15 %).
const SMART_SHARE_OF_20: usize = 3;

/// How big the generated account is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldShape {
    /// Tells the accounts of one database apart: it is part of every identifier.
    pub world: u16,
    pub account_url: String,
    pub users: usize,
    /// Departments besides the root.
    pub departments: usize,
    pub enrollments_per_user: usize,
    /// How many users carry a plain password (hashed by the import) instead of a hash.
    pub plain_passwords: usize,
    /// How identifiers are made.
    pub id_shape: IdShape,
    /// Whether the document gives enrollments tracked results ([`tracked_result`]); without,
    /// every result is untouched.
    pub results: bool,
}

impl WorldShape {
    /// An account of `users` users, shaped like the customer accounts the benchmark stands for:
    /// one department per 100 users, 10 enrollments per user.
    pub fn with_users(users: usize) -> Self {
        Self {
            world: 0,
            account_url: format!("https://world-{users}.example.com"),
            users: users.max(RoleLogin::ALL.len()),
            departments: (users / 100).max(FAN_OUT),
            enrollments_per_user: 10,
            plain_passwords: 0,
            id_shape: IdShape::default(),
            results: false,
        }
    }

    /// Rows the import writes for this document (departments with the root, users, group
    /// members, projects, items, enrollments and their results, points, API clients; closure
    /// rows not counted).
    pub fn rows(&self) -> usize {
        1 + self.departments
            + self.users
            + self.plain_groups() * PLAIN_GROUP_MEMBERS.min(self.users)
            + PROJECTS
            + PROJECTS * ITEMS_PER_PROJECT
            + 2 * self.enrollments()
            + self.users
            + RoleLogin::ALL.len()
    }

    /// The content items of the account.
    pub fn content_items(&self) -> usize {
        PROJECTS * ITEMS_PER_PROJECT
    }

    /// The enrollments of the account: `enrollments_per_user` of every learner.
    pub fn enrollments(&self) -> usize {
        self.learners() * self.enrollments_per_user.min(self.content_items())
    }

    /// Plain groups of [`PLAIN_GROUP_MEMBERS`] members each, the first one [`Ids::plain_group`].
    pub fn plain_groups(&self) -> usize {
        (self.users / 1_000).max(1)
    }

    pub fn ids(&self) -> Ids {
        Ids {
            world: self.world,
            shape: self.id_shape,
        }
    }

    fn learners(&self) -> usize {
        self.users - RoleLogin::ALL.len()
    }

    /// The department a user works in (for many users, ask one [`WorldShape::placement`]).
    pub fn department_of(&self, user: usize) -> usize {
        self.placement().department_of(user)
    }

    /// Where users work: the tree split once into the smart subtree and the rest.
    pub fn placement(&self) -> Placement {
        let (smart, other) =
            (1..=self.departments).partition(|&department| in_smart_subtree(department));
        Placement { smart, other }
    }

    /// Whether `user` works in the smart subtree, so is a member of the smart group.
    pub fn works_in_smart_subtree(user: usize) -> bool {
        user % 20 < SMART_SHARE_OF_20
    }

    /// The members of the smart group.
    pub fn smart_group_members(&self) -> usize {
        (0..self.users)
            .filter(|&user| Self::works_in_smart_subtree(user))
            .count()
    }
}

/// The departments (1-based numbers) of the smart subtree and of the rest of the tree.
#[derive(Debug, Clone)]
pub struct Placement {
    smart: Vec<usize>,
    other: Vec<usize>,
}

impl Placement {
    pub fn department_of(&self, user: usize) -> usize {
        let departments = if WorldShape::works_in_smart_subtree(user) {
            &self.smart
        } else {
            &self.other
        };
        departments[user % departments.len()]
    }
}

/// Whether department `n` (1-based; 0 is the root) lies under the root's first child.
fn in_smart_subtree(mut department: usize) -> bool {
    while department > FAN_OUT {
        department = parent_of(department);
    }
    department == 1
}

fn parent_of(department: usize) -> usize {
    (department - 1) / FAN_OUT
}

/// The logins of a generated account, one per role the benchmark calls with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleLogin {
    Owner,
    Administrator,
    /// Manages the smart subtree.
    DepartmentAdministrator,
    Publisher,
    Author,
    /// Custom role holding `department.create` and `points.read`, managing the smart subtree.
    Coordinator,
}

impl RoleLogin {
    pub const ALL: [RoleLogin; 6] = [
        RoleLogin::Owner,
        RoleLogin::Administrator,
        RoleLogin::DepartmentAdministrator,
        RoleLogin::Publisher,
        RoleLogin::Author,
        RoleLogin::Coordinator,
    ];

    /// The user number of this login.
    pub fn user(self) -> usize {
        self as usize
    }

    pub fn email(self) -> String {
        user_email(self.user())
    }

    fn role(self) -> &'static str {
        match self {
            RoleLogin::Owner => "account_owner",
            RoleLogin::Administrator => "account_administrator",
            RoleLogin::DepartmentAdministrator => "department_administrator",
            RoleLogin::Publisher => "publisher",
            RoleLogin::Author => "author",
            RoleLogin::Coordinator => "custom",
        }
    }
}

/// How the identifiers of a generated account are made. Every shape is deterministic: the
/// same account number, kind of row and row number always give the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum IdShape {
    /// UUID v1 as iSpring issues them (`1141d74c-a75e-11eb-ad56-0242ac13002a`): the low 32
    /// bits of the 60-bit timestamp come first, so rows made one after another land all over
    /// every index in byte order. What accounts moving from iSpring bring.
    #[default]
    Scattered,
    /// UUID v4, random outright, as HR systems and v4 generators issue them.
    Random,
    /// Counters inside fixed UUID v7 prefixes: every new row lands at the right edge of every
    /// index, next to the previous one. The best case, which no customer has.
    Sequential,
}

impl IdShape {
    /// The shape named `name` (`scattered`, `random` or `sequential`).
    pub fn named(name: &str) -> Option<Self> {
        <Self as clap::ValueEnum>::from_str(name.trim(), true).ok()
    }
}

impl std::fmt::Display for IdShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IdShape::Scattered => "scattered",
            IdShape::Random => "random",
            IdShape::Sequential => "sequential",
        })
    }
}

/// Identifiers of the rows of one generated account, computed from the account's number, the
/// kind of row and the row's number, so accounts of different numbers never collide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ids {
    world: u16,
    shape: IdShape,
}

impl Ids {
    const BASE: u128 = 0x0192_0000_0000_7000_8000_0000_0000_0000;
    /// The upper 28 bits of the v1 timestamps: late April 2021, as in the example above.
    const V1_TIME_HIGH: u64 = 0x1eb_a75e;
    /// The v1 clock moves on by one unit of its upper bits (about 7 minutes) every this many
    /// rows of a kind, so the ids span weeks as a real account's do.
    const V1_ROWS_PER_TICK: u32 = 1 << 14;
    /// A locally administered MAC of a container, as iSpring's servers have: the account
    /// number and the kind of row fill its last three bytes.
    const V1_NODE: u64 = 0x0242_ac00_0000;

    fn id(self, kind: u16, number: usize) -> Uuid {
        match self.shape {
            IdShape::Sequential => Uuid::from_u128(
                Self::BASE
                    | (u128::from(self.world) << 96)
                    | (u128::from(kind) << 80)
                    | number as u128,
            ),
            IdShape::Scattered => self.v1(kind, Self::row(number)),
            IdShape::Random => self.v4(kind, Self::row(number)),
        }
    }

    fn row(number: usize) -> u32 {
        u32::try_from(number).expect("fewer than 2^32 rows of one kind")
    }

    /// The key of one kind of row of this account, for the mixes below.
    fn key(self, kind: u16) -> u32 {
        (u32::from(self.world) << 16) | u32::from(kind)
    }

    /// A v1 id whose time-low field is a keyed permutation of `number`: distinct for every
    /// row of a kind, scattered like the time-low bits of ids made over weeks.
    fn v1(self, kind: u16, number: u32) -> Uuid {
        let key = self.key(kind);
        let time_low = permute(number, key);
        let time_high = Self::V1_TIME_HIGH + u64::from(number / Self::V1_ROWS_PER_TICK);
        let time_mid = (time_high & 0xffff) as u16;
        let time_hi_and_version = ((time_high >> 16) & 0x0fff) as u16 | 0x1000;
        // RFC 4122 variant, a clock sequence fixed per account and kind.
        let clock_seq = 0x8000 | (permute(key, 0x5eed) as u16 & 0x3fff);
        let node = Self::V1_NODE | (u64::from(self.world) << 8) | u64::from(kind & 0xff);
        let mut tail = [0; 8];
        tail[..2].copy_from_slice(&clock_seq.to_be_bytes());
        tail[2..].copy_from_slice(&node.to_be_bytes()[2..]);
        Uuid::from_fields(time_low, time_mid, time_hi_and_version, &tail)
    }

    /// A v4 id: the first four bytes a keyed permutation of `number` (so no two rows of a
    /// kind share an id), the rest mixed from the account, kind and row.
    fn v4(self, kind: u16, number: u32) -> Uuid {
        let key = self.key(kind);
        let seed = (u64::from(key) << 32) | u64::from(number);
        let mut bytes = [0; 16];
        bytes[..4].copy_from_slice(&permute(number, !key).to_be_bytes());
        bytes[4..12].copy_from_slice(&mix64(seed).to_be_bytes());
        bytes[12..].copy_from_slice(&(mix64(!seed) as u32).to_be_bytes());
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }

    pub fn account(self) -> Uuid {
        self.id(1, 0)
    }
    /// Department 0 is the root.
    pub fn department(self, number: usize) -> Uuid {
        self.id(2, number)
    }
    pub fn user(self, number: usize) -> Uuid {
        self.id(3, number)
    }
    pub fn custom_role(self) -> Uuid {
        self.id(4, 0)
    }
    pub fn plain_group(self) -> Uuid {
        self.id(5, 0)
    }
    pub fn smart_group(self) -> Uuid {
        self.id(5, 1)
    }
    /// Plain group `number`; number 0 is [`Ids::plain_group`].
    pub fn nth_plain_group(self, number: usize) -> Uuid {
        if number == 0 {
            self.plain_group()
        } else {
            self.id(5, 1 + number)
        }
    }
    pub fn project(self, number: usize) -> Uuid {
        self.id(6, number)
    }
    pub fn content_item(self, number: usize) -> Uuid {
        self.id(7, number)
    }
    /// The `k`-th enrollment of `user`.
    pub fn enrollment(self, user: usize, k: usize) -> Uuid {
        self.id(8, user * 1_000 + k)
    }
    /// The API client acting as `login`.
    pub fn api_client(self, login: RoleLogin) -> Uuid {
        self.id(9, login.user())
    }
}

/// A bijection of the 32-bit numbers chosen by `key` (each step is invertible: xor, odd
/// multiplication, xor-shift), so consecutive numbers land far apart and never together.
fn permute(number: u32, key: u32) -> u32 {
    let mut x = number ^ key.wrapping_mul(0x9e37_79b9);
    x ^= x >> 16;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    x = x.wrapping_mul(0xc2b2_ae35);
    x ^= x >> 16;
    x.wrapping_add(key.rotate_left(16))
}

/// SplitMix64's finaliser: 64 well-mixed bits from any 64.
fn mix64(seed: u64) -> u64 {
    let mut x = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

pub fn user_email(user: usize) -> String {
    format!("user-{user:07}@world.example.com")
}

/// Writes the import document of `shape` as JSON. `password_hash` is the argon2id PHC string
/// of [`WORLD_PASSWORD`] given to every user without a plain password (hashing 100,000
/// passwords would dominate every import of the benchmark).
pub fn write_world(
    shape: &WorldShape,
    password_hash: &str,
    out: &mut impl Write,
) -> io::Result<()> {
    let ids = shape.ids();
    let placement = shape.placement();
    let mut doc = JsonStream { out };
    doc.raw("{\"accounts\":[{\"id\":")?;
    doc.value(&ids.account().to_string())?;
    doc.raw(",\"url\":")?;
    doc.value(&shape.account_url)?;
    doc.raw(",\"rootDepartment\":")?;
    doc.value(&RootDepartmentEntry {
        id: ids.department(0).to_string(),
        name: "Head office".into(),
        code: Some("ROOT".into()),
    })?;

    doc.list(
        "departments",
        (1..=shape.departments).map(|n| DepartmentEntry {
            id: ids.department(n).to_string(),
            name: format!("Department {n}"),
            code: Some(format!("D{n:05}")),
            parent_department_id: ids.department(parent_of(n)).to_string(),
        }),
    )?;

    doc.list(
        "customRoles",
        std::iter::once(CustomRoleEntry {
            id: ids.custom_role().to_string(),
            name: "Division coordinator".into(),
            permissions: vec!["department.create".into(), "points.read".into()],
        }),
    )?;

    doc.list(
        "users",
        (0..shape.users).map(|user| {
            let login = RoleLogin::ALL.get(user).copied();
            let plain = user < shape.plain_passwords;
            UserEntry {
                id: ids.user(user).to_string(),
                email: user_email(user),
                password: plain.then(|| WORLD_PASSWORD.to_owned()),
                password_hash: (!plain).then(|| password_hash.to_owned()),
                role: login.map_or("learner", RoleLogin::role).to_owned(),
                custom_role_id: (login == Some(RoleLogin::Coordinator))
                    .then(|| ids.custom_role().to_string()),
                department_id: ids.department(placement.department_of(user)).to_string(),
                managed_department_ids: if matches!(
                    login,
                    Some(RoleLogin::DepartmentAdministrator | RoleLogin::Coordinator)
                ) {
                    vec![ids.department(1).to_string()]
                } else {
                    vec![]
                },
                active: true,
                external_id: None,
            }
        }),
    )?;

    let smart = GroupEntry {
        id: ids.smart_group().to_string(),
        name: "Everyone in the first division".into(),
        user_ids: None,
        smart_department_id: Some(ids.department(1).to_string()),
    };
    doc.list(
        "groups",
        (0..shape.plain_groups())
            .map(|number| GroupEntry {
                id: ids.nth_plain_group(number).to_string(),
                name: format!("Hundred {number}"),
                user_ids: Some(
                    plain_group_members(shape, number)
                        .map(|user| ids.user(user).to_string())
                        .collect(),
                ),
                smart_department_id: None,
            })
            .chain(std::iter::once(smart)),
    )?;

    doc.list(
        "projects",
        (0..PROJECTS).map(|n| ProjectEntry {
            id: ids.project(n).to_string(),
            name: format!("Project {n}"),
            author_ids: vec![ids.user(RoleLogin::Author.user()).to_string()],
        }),
    )?;

    doc.list(
        "contentItems",
        (0..PROJECTS * ITEMS_PER_PROJECT).map(|n| ContentItemEntry {
            id: ids.content_item(n).to_string(),
            project_id: ids.project(n / ITEMS_PER_PROJECT).to_string(),
            title: format!("Course {n}"),
            description: format!("Everything about topic {n}."),
            user_id: ids.user(RoleLogin::Author.user()).to_string(),
            added_date: "2026-01-15T09:30:00+00:00".into(),
            content_type: "course".into(),
            view_url: None,
        }),
    )?;

    let per_user = shape.enrollments_per_user.min(PROJECTS * ITEMS_PER_PROJECT);
    doc.list(
        "enrollments",
        (RoleLogin::ALL.len()..shape.users).flat_map(|user| {
            (0..per_user).map(move |k| EnrollmentEntry {
                id: ids.enrollment(user, k).to_string(),
                learner_id: ids.user(user).to_string(),
                content_item_id: ids
                    .content_item((user * 7 + k) % (PROJECTS * ITEMS_PER_PROJECT))
                    .to_string(),
                access_date: None,
                due_date: None,
                lock_after_due_date: false,
            })
        }),
    )?;

    if shape.results {
        doc.list(
            "results",
            (RoleLogin::ALL.len()..shape.users)
                .flat_map(|user| (0..per_user).filter_map(move |k| tracked_result(ids, user, k))),
        )?;
    }

    doc.list(
        "points",
        (0..shape.users).map(|user| PointsEntry {
            user_id: ids.user(user).to_string(),
            points: (user as i64 * 37) % 1_000,
        }),
    )?;
    doc.list(
        "apiClients",
        RoleLogin::ALL.iter().map(|login| ApiClientEntry {
            client_id: ids.api_client(*login).to_string(),
            client_secret: WORLD_CLIENT_SECRET.to_owned(),
            user_id: ids.user(login.user()).to_string(),
            scim: false,
        }),
    )?;
    doc.raw("}]}")?;
    doc.out.flush()
}

/// The tracked result a document with results gives the `k`-th enrollment of `user`: a
/// quarter each untouched (no entry), in progress, passed and failed, the finished ones
/// completed on one of the first 28 days of a month of 2025, spread over the year.
pub fn tracked_result(ids: Ids, user: usize, k: usize) -> Option<ResultEntry> {
    let day = (user * 10 + k) % (12 * 28);
    let date = format!(
        "2025-{:02}-{:02}T10:00:00+00:00",
        day / 28 + 1,
        day % 28 + 1
    );
    let (status, progress, score, completed) = match (user + k) % 4 {
        0 => return None,
        1 => ("in_progress", 40, 0.0, false),
        2 => ("passed", 100, 92.5, true),
        _ => ("failed", 100, 41.0, true),
    };
    Some(ResultEntry {
        enrollment_id: ids.enrollment(user, k).to_string(),
        completion_status: status.to_owned(),
        progress,
        awarded_score: score,
        passing_score: 80.0,
        time_spent: 600,
        views_count: 2,
        completion_date: completed.then(|| date.clone()),
        last_view_date: Some(date),
    })
}

/// The enrollments of content item `item` (`ids.enrollment(user, k)` of each learner that
/// has one), in the order of the learners.
pub fn enrollments_of_item(shape: &WorldShape, item: usize) -> impl Iterator<Item = Uuid> + '_ {
    let ids = shape.ids();
    let items = shape.content_items();
    let per_user = shape.enrollments_per_user.min(items);
    (RoleLogin::ALL.len()..shape.users).filter_map(move |user| {
        (0..per_user)
            .find(|k| (user * 7 + k) % items == item)
            .map(|k| ids.enrollment(user, k))
    })
}

/// The users of plain group `number`: spread over the whole account, not its first hundred.
pub fn plain_group_members(
    shape: &WorldShape,
    number: usize,
) -> impl Iterator<Item = usize> + use<> {
    let step = (shape.users / PLAIN_GROUP_MEMBERS).max(1);
    let users = shape.users;
    (0..PLAIN_GROUP_MEMBERS.min(users)).map(move |n| (n * step + number) % users)
}

/// Imports the account `shape` describes into the stack's database through the real import,
/// written to a file entry by entry first; `password_hash` is given to every user (see
/// [`write_world`]).
pub async fn import_account(
    stack: &TestStack,
    shape: &WorldShape,
    hasher: &lms_core::auth::PasswordHasher,
    password_hash: &str,
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("world.json");
    let mut file = io::BufWriter::new(std::fs::File::create(&path).expect("file"));
    write_world(shape, password_hash, &mut file).expect("document");
    drop(file);
    lms_core::import::import_file(stack.db(), &path, hasher)
        .await
        .expect("the generated account imports");
}

/// One request to the XML interface of a stack holding a generated account.
#[derive(Debug, Clone)]
pub struct Call {
    pub path: String,
    /// The XML document of a POST, without its prologue.
    pub body: Option<String>,
    /// A DELETE rather than a GET (only without a body).
    pub delete: bool,
}

impl Call {
    pub fn get(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            body: None,
            delete: false,
        }
    }

    pub fn post(path: impl Into<String>, body: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            body: Some(body.into()),
            delete: false,
        }
    }

    pub fn delete(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            body: None,
            delete: true,
        }
    }

    /// Sends the request as `login` of the account `shape` describes and reads the whole
    /// answer; the HTTP status.
    pub async fn send(
        &self,
        stack: &TestStack,
        shape: &WorldShape,
        login: RoleLogin,
    ) -> reqwest::Result<u16> {
        let request = self
            .request(stack)
            .header("X-Auth-Account-Url", &shape.account_url)
            .header("X-Auth-Email", login.email())
            .header("X-Auth-Password", WORLD_PASSWORD);
        Self::status(request).await
    }

    /// Sends the request with `Authorization: Bearer <token>` alone; the HTTP status.
    pub async fn send_with_token(&self, stack: &TestStack, token: &str) -> reqwest::Result<u16> {
        let request = self
            .request(stack)
            .header("Authorization", format!("Bearer {token}"));
        Self::status(request).await
    }

    /// The request without credentials.
    fn request(&self, stack: &TestStack) -> reqwest::RequestBuilder {
        let url = format!("{}{}", stack.base_url, self.path);
        match &self.body {
            None if self.delete => stack.http.delete(url),
            None => stack.http.get(url),
            Some(body) => stack
                .http
                .post(url)
                .header("Content-Type", "application/xml")
                .body(format!("{XML_PROLOGUE}{body}")),
        }
    }

    async fn status(request: reqwest::RequestBuilder) -> reqwest::Result<u16> {
        let response = request.send().await?;
        let status = response.status().as_u16();
        response.bytes().await?;
        Ok(status)
    }
}

/// A token for the API client of `login` in the account `shape` describes.
pub async fn world_token(stack: &TestStack, shape: &WorldShape, login: RoleLogin) -> String {
    let form = format!(
        "grant_type=client_credentials&client_id={}&client_secret={WORLD_CLIENT_SECRET}",
        shape.ids().api_client(login)
    );
    let response = stack
        .http
        .post(format!("{}/api/v3/token", stack.base_url))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .expect("the gateway answers");
    assert_eq!(response.status().as_u16(), 200, "a token for {login:?}");
    let body = response.bytes().await.expect("an answer");
    let body: serde_json::Value = serde_json::from_slice(&body).expect("a JSON answer");
    body["access_token"]
        .as_str()
        .expect("an access token")
        .to_owned()
}

/// A JSON document written piece by piece.
struct JsonStream<'w, W: Write> {
    out: &'w mut W,
}

impl<W: Write> JsonStream<'_, W> {
    fn raw(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(text.as_bytes())
    }

    fn value(&mut self, value: &impl Serialize) -> io::Result<()> {
        serde_json::to_writer(&mut *self.out, value).map_err(io::Error::other)
    }

    /// `,"key":[a,b,…]`
    fn list<T: Serialize>(&mut self, key: &str, items: impl Iterator<Item = T>) -> io::Result<()> {
        write!(self.out, ",\"{key}\":[")?;
        for (n, item) in items.enumerate() {
            if n > 0 {
                self.raw(",")?;
            }
            self.value(&item)?;
        }
        self.raw("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smart_subtree_holds_about_fifteen_percent_of_the_users() {
        let shape = WorldShape::with_users(10_000);
        let placement = shape.placement();
        let placed_in_subtree = (0..shape.users)
            .filter(|&user| in_smart_subtree(placement.department_of(user)))
            .count();
        assert_eq!(placed_in_subtree, 1_500);
        assert_eq!(shape.smart_group_members(), placed_in_subtree);
    }

    #[test]
    fn accounts_of_different_numbers_share_no_identifier() {
        let mut first = WorldShape::with_users(100);
        let mut second = first.clone();
        first.world = 1;
        second.world = 2;
        assert_ne!(first.ids().account(), second.ids().account());
        assert_ne!(first.ids().user(7), second.ids().user(7));
        assert_ne!(first.ids().enrollment(7, 3), second.ids().enrollment(7, 3));
    }

    /// Ids of one kind in the order the document writes them.
    fn users(ids: Ids, count: usize) -> Vec<Uuid> {
        (0..count).map(|user| ids.user(user)).collect()
    }

    /// How many of `ids` are smaller in byte order than the one before.
    fn descents(ids: &[Uuid]) -> usize {
        ids.windows(2)
            .filter(|pair| pair[1].as_bytes() < pair[0].as_bytes())
            .count()
    }

    #[test]
    fn default_ids_are_version_1_and_scattered_in_byte_order() {
        let shape = WorldShape::with_users(100_000);
        assert_eq!(shape.id_shape, IdShape::Scattered);
        let ids = users(shape.ids(), 10_000);
        for id in &ids {
            assert_eq!(id.get_version(), Some(uuid::Version::Mac), "{id}");
            assert_eq!(id.get_variant(), uuid::Variant::RFC4122, "{id}");
        }
        // Random order descends at half the steps; ascending order at none.
        let down = descents(&ids);
        assert!(
            (4_000..6_000).contains(&down),
            "{down} descents in 9,999 steps"
        );
        // The timestamps are those of real ids: spring 2021.
        let (seconds, _) = ids[0].get_timestamp().expect("a v1 timestamp").to_unix();
        assert!(
            (1_619_000_000..1_625_000_000).contains(&seconds),
            "{seconds}"
        );
    }

    #[test]
    fn random_ids_are_version_4_and_scattered_in_byte_order() {
        let mut shape = WorldShape::with_users(100);
        shape.id_shape = IdShape::Random;
        let ids = users(shape.ids(), 10_000);
        assert!(
            ids.iter()
                .all(|id| id.get_version() == Some(uuid::Version::Random))
        );
        let down = descents(&ids);
        assert!(
            (4_000..6_000).contains(&down),
            "{down} descents in 9,999 steps"
        );
    }

    #[test]
    fn sequential_ids_ascend_in_byte_order() {
        let mut shape = WorldShape::with_users(100);
        shape.id_shape = IdShape::Sequential;
        assert_eq!(descents(&users(shape.ids(), 10_000)), 0);
    }

    #[test]
    fn no_two_rows_of_a_large_account_share_an_id_in_any_shape() {
        for shape in [IdShape::Scattered, IdShape::Random, IdShape::Sequential] {
            let mut world = WorldShape::with_users(100_000);
            world.id_shape = shape;
            let ids = world.ids();
            let mut seen = std::collections::HashSet::new();
            let all = (0..world.users)
                .map(|user| ids.user(user))
                .chain(
                    (0..world.users).flat_map(|user| (0..10).map(move |k| ids.enrollment(user, k))),
                )
                .chain((0..=world.departments).map(|n| ids.department(n)));
            for id in all {
                assert!(seen.insert(id), "{shape}: {id} given twice");
            }
        }
    }

    /// The ids are part of what a benchmark's figures and a saved document name: the same
    /// account, kind and row give the same id in every run and every build.
    #[test]
    fn each_shape_gives_the_same_ids_in_every_run() {
        let expected = [
            (
                IdShape::Scattered,
                "8ef6b03c-a75e-11eb-9887-0242ac000203",
                "d070af80-a75e-11eb-8e2d-0242ac000208",
            ),
            (
                IdShape::Random,
                "9b944916-9798-44d2-9461-573aeb789f40",
                "08980d32-87b3-442d-80f6-40d86d94978f",
            ),
            (
                IdShape::Sequential,
                "01920002-0003-7000-8000-000000000007",
                "01920002-0008-7000-8000-000000001b5b",
            ),
        ];
        for (shape, user, enrollment) in expected {
            let mut world = WorldShape::with_users(1_000);
            world.world = 2;
            world.id_shape = shape;
            assert_eq!(world.ids().user(7).to_string(), user, "{shape}");
            assert_eq!(
                world.ids().enrollment(7, 3).to_string(),
                enrollment,
                "{shape}"
            );
        }
    }

    #[test]
    fn the_same_shape_gives_the_same_document() {
        for id_shape in [IdShape::Scattered, IdShape::Random, IdShape::Sequential] {
            let shape = WorldShape {
                id_shape,
                ..WorldShape::with_users(300)
            };
            the_same_document(&shape);
        }
    }

    fn the_same_document(shape: &WorldShape) {
        let mut first = Vec::new();
        let mut second = Vec::new();
        write_world(shape, "$argon2id$hash", &mut first).unwrap();
        write_world(shape, "$argon2id$hash", &mut second).unwrap();
        assert_eq!(first, second);
        let document: lms_core::import::ImportDocument = serde_json::from_slice(&first).unwrap();
        let account = &document.accounts[0];
        assert_eq!(account.users.len(), 300);
        assert_eq!(account.departments.len(), 10);
        assert_eq!(account.enrollments.len(), (300 - 6) * 10);
        assert_eq!(account.points.len(), 300);
        assert_eq!(account.api_clients.len(), RoleLogin::ALL.len());
        assert_eq!(account.groups.len(), 2);
        assert_eq!(
            account.groups[0].user_ids.as_ref().map(Vec::len),
            Some(PLAIN_GROUP_MEMBERS)
        );
        assert!(account.results.is_empty());
    }

    #[test]
    fn results_are_given_for_three_quarters_of_the_enrollments_and_items_list_their_own() {
        let shape = WorldShape {
            results: true,
            ..WorldShape::with_users(1_006)
        };
        let mut bytes = Vec::new();
        write_world(&shape, "$argon2id$hash", &mut bytes).unwrap();
        let document: lms_core::import::ImportDocument = serde_json::from_slice(&bytes).unwrap();
        let account = &document.accounts[0];
        assert_eq!(account.results.len(), shape.enrollments() * 3 / 4);
        let finished = account
            .results
            .iter()
            .filter(|result| result.completion_date.is_some())
            .count();
        assert_eq!(finished, shape.enrollments() / 2);

        let item = 3;
        let course = shape.ids().content_item(item).to_string();
        let of_item: std::collections::HashSet<_> = enrollments_of_item(&shape, item)
            .map(|id| id.to_string())
            .collect();
        let expected: std::collections::HashSet<_> = account
            .enrollments
            .iter()
            .filter(|enrollment| enrollment.content_item_id == course)
            .map(|enrollment| enrollment.id.clone())
            .collect();
        assert_eq!(of_item, expected);
        assert_eq!(of_item.len(), shape.enrollments() / shape.content_items());
    }
}
