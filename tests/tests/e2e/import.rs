//! The import (contract section 9) on a real database built by the real migrations:
//! valid documents land with the right rows (closure included), the demo account
//! imports, and a refused document leaves the database exactly as it was.
//!
//! Every scenario runs on SQLite, and on PostgreSQL when `LMS_TEST_POSTGRES_URL` names a
//! server (a fresh database is created per test and dropped afterwards).

use std::path::Path;

use lms::demo::{DEMO_ACCOUNT_URL, DEMO_PASSWORD, demo_account};
use lms_core::{
    auth::{PasswordHasher, PasswordPolicy},
    entities::{
        account, api_client, audit_log, content_item, custom_role, custom_role_permission,
        department, department_closure, enrollment, group, group_member, project, project_author,
        user, user_managed_department, user_points,
    },
    import::{ImportDocument, ImportError, ImportSummary, import_document, import_file},
};
use lms_testkit::{Backend, TestConnection, on_both_backends};
use sea_orm::{
    ActiveModelTrait as _, ActiveValue::Set, ColumnTrait as _, ConnectionTrait as _,
    DatabaseConnection, DbBackend, EntityTrait, PaginatorTrait as _, QueryFilter as _,
    QueryOrder as _, TransactionTrait as _,
};
use serde_json::{Value, json};
use uuid::Uuid;

on_both_backends!(TestConnection =>
    a_json_document_lands_with_every_row_and_the_closure,
    a_yaml_document_lands_the_same_way,
    the_demo_account_imports,
    a_department_cycle_is_refused_and_nothing_changes,
    an_unknown_reference_is_refused_and_nothing_changes,
    a_duplicate_id_is_refused_and_nothing_changes,
    a_login_repeated_in_another_case_is_refused_and_nothing_changes,
    an_id_already_in_the_database_is_refused_and_nothing_changes,
    an_id_already_in_the_database_is_found_whichever_side_is_larger,
    an_account_url_already_present_is_refused_and_nothing_changes,
    bad_api_clients_are_refused_naming_the_field_and_nothing_changes,
    an_import_racing_another_past_its_checks_gets_the_url_conflict,
    a_large_document_is_written_in_chunks,
    a_failure_in_the_middle_of_the_writes_leaves_nothing_behind,
    a_large_import_keeps_every_foreign_key,
);

// ---------------------------------------------------------------------------------------
// Documents

fn hasher() -> PasswordHasher {
    PasswordHasher::new(PasswordPolicy {
        memory_kib: 64,
        iterations: 1,
        parallelism: 1,
    })
    .expect("cheap policy")
}

mod acme {
    pub(crate) const ACCOUNT: &str = "0193a000-0000-7000-8000-000000000000";
    pub(crate) const ROOT: &str = "0193a000-0000-7000-8000-000000000001";
    pub(crate) const SALES: &str = "0193a000-0000-7000-8000-000000000002";
    pub(crate) const SALES_EAST: &str = "0193a000-0000-7000-8000-000000000003";
    pub(crate) const ENGINEERING: &str = "0193a000-0000-7000-8000-000000000004";
    pub(crate) const TRAINER_ROLE: &str = "0193a000-0000-7000-8000-000000000101";
    pub(crate) const OWNER: &str = "0193a000-0000-7000-8000-000000000201";
    pub(crate) const DEPT_ADMIN: &str = "0193a000-0000-7000-8000-000000000202";
    pub(crate) const AUTHOR: &str = "0193a000-0000-7000-8000-000000000203";
    pub(crate) const LEARNER: &str = "0193a000-0000-7000-8000-000000000204";
    pub(crate) const TRAINER: &str = "0193a000-0000-7000-8000-000000000205";
    pub(crate) const INTERNS: &str = "0193a000-0000-7000-8000-000000000301";
    pub(crate) const ALL_OF_SALES: &str = "0193a000-0000-7000-8000-000000000302";
    pub(crate) const ONBOARDING: &str = "0193a000-0000-7000-8000-000000000401";
    pub(crate) const WELCOME: &str = "0193a000-0000-7000-8000-000000000501";
    pub(crate) const SECRET: &str = "0193a000-0000-7000-8000-000000000502";
    pub(crate) const LEARNER_WELCOME: &str = "0193a000-0000-7000-8000-000000000601";
    pub(crate) const TRAINER_SECRET: &str = "0193a000-0000-7000-8000-000000000602";
    pub(crate) const SYNC_CLIENT: &str = "0193a000-0000-7000-8000-000000000701";
}

/// The secret of Acme's API client: 128 random bits, as hex.
const CLIENT_SECRET: &str = "3f1c9a7be0d24856a1f09c3e7b5d2e4f";

mod globex {
    pub(crate) const ROOT: &str = "0193b000-0000-7000-8000-000000000001";
    pub(crate) const PLANT: &str = "0193b000-0000-7000-8000-000000000002";
    pub(crate) const OWNER: &str = "0193b000-0000-7000-8000-000000000201";
}

const OWNER_PASSWORD: &str = "owner-password";

/// Two accounts; Acme's departments come children first.
fn document() -> Value {
    use acme as a;
    let hashed_password = hasher().hash("hashed-elsewhere").expect("hash");
    json!({"accounts": [
        {
            "id": a::ACCOUNT,
            "url": "HTTPS://Acme.Example.com:443/",
            "rootDepartment": {"id": a::ROOT, "name": "Acme", "code": "ACME"},
            "departments": [
                {"id": a::SALES_EAST, "name": "Sales East", "code": "SE", "parentDepartmentId": a::SALES},
                {"id": a::SALES, "name": "Sales", "code": "S", "parentDepartmentId": a::ROOT},
                {"id": a::ENGINEERING, "name": "Engineering", "parentDepartmentId": a::ROOT}
            ],
            "customRoles": [{"id": a::TRAINER_ROLE, "name": "Trainer",
                             "permissions": ["group.read", "points.read"]}],
            "users": [
                {"id": a::OWNER, "email": "Owner@Acme.example.com", "password": OWNER_PASSWORD,
                 "role": "account_owner", "customRoleId": null, "departmentId": a::ROOT,
                 "managedDepartmentIds": [], "active": true},
                {"id": a::DEPT_ADMIN, "email": "sales.admin@acme.example.com", "password": "dept-admin-pw",
                 "role": "department_administrator", "departmentId": a::SALES,
                 "managedDepartmentIds": [a::SALES]},
                {"id": a::AUTHOR, "email": "author@acme.example.com", "passwordHash": hashed_password,
                 "role": "author", "departmentId": a::ENGINEERING},
                {"id": a::LEARNER, "email": "learner@acme.example.com", "password": "learner-pw",
                 "role": "learner", "departmentId": a::SALES_EAST, "active": false},
                {"id": a::TRAINER, "email": "trainer@acme.example.com", "password": "trainer-pw",
                 "role": "custom", "customRoleId": a::TRAINER_ROLE, "departmentId": a::SALES,
                 "managedDepartmentIds": [a::SALES, a::ENGINEERING]}
            ],
            "groups": [
                {"id": a::INTERNS, "name": "Interns", "userIds": [a::LEARNER, a::TRAINER]},
                {"id": a::ALL_OF_SALES, "name": "All of Sales", "smartDepartmentId": a::SALES}
            ],
            "projects": [{"id": a::ONBOARDING, "name": "Onboarding", "authorIds": [a::AUTHOR]}],
            "contentItems": [
                {"id": a::WELCOME, "projectId": a::ONBOARDING, "title": "Welcome", "description": "Hello",
                 "userId": a::AUTHOR, "addedDate": "2019-03-26T06:34:57+00:00", "type": "Course",
                 "viewUrl": null},
                {"id": a::SECRET, "projectId": a::ONBOARDING, "title": "Secret",
                 "userId": a::OWNER, "addedDate": "2020-01-02T03:04:05+02:00", "type": "Course",
                 "viewUrl": "https://cdn.acme.example.com/secret"}
            ],
            "enrollments": [
                {"id": a::LEARNER_WELCOME, "learnerId": a::LEARNER, "contentItemId": a::WELCOME},
                {"id": a::TRAINER_SECRET, "learnerId": a::TRAINER, "contentItemId": a::SECRET}
            ],
            "points": [{"userId": a::LEARNER, "points": 421}, {"userId": a::OWNER, "points": 0}],
            "apiClients": [{"clientId": a::SYNC_CLIENT, "clientSecret": CLIENT_SECRET,
                            "userId": a::DEPT_ADMIN}]
        },
        {
            "url": "https://globex.example.com",
            "rootDepartment": {"id": globex::ROOT, "name": "Globex"},
            "departments": [{"id": globex::PLANT, "name": "Plant", "parentDepartmentId": globex::ROOT}],
            "users": [{"id": globex::OWNER, "email": "owner@globex.example.com", "password": "globex-pw",
                       "role": "account_owner", "departmentId": globex::ROOT}]
        }
    ]})
}

const EXPECTED_SUMMARY: ImportSummary = ImportSummary {
    accounts: 2,
    departments: 6,
    custom_roles: 1,
    users: 6,
    groups: 2,
    projects: 1,
    content_items: 2,
    enrollments: 2,
    points: 2,
    api_clients: 1,
    results: 0,
};

mod initech {
    pub(crate) const ROOT: &str = "0193c000-0000-7000-8000-000000000001";
    pub(crate) const A: &str = "0193c000-0000-7000-8000-000000000002";
    pub(crate) const B: &str = "0193c000-0000-7000-8000-000000000003";
    pub(crate) const C: &str = "0193c000-0000-7000-8000-000000000004";
    pub(crate) const OWNER: &str = "0193c000-0000-7000-8000-000000000201";
    pub(crate) const PETER: &str = "0193c000-0000-7000-8000-000000000202";
}

/// A valid document of a third account, which the refusal tests break one way each.
fn another_document() -> Value {
    use initech as i;
    json!({"accounts": [{
        "url": "https://initech.example.com",
        "rootDepartment": {"id": i::ROOT, "name": "Initech"},
        "departments": [
            {"id": i::A, "name": "A", "parentDepartmentId": i::ROOT},
            {"id": i::B, "name": "B", "parentDepartmentId": i::A},
            {"id": i::C, "name": "C", "parentDepartmentId": i::B}
        ],
        "users": [
            {"id": i::OWNER, "email": "owner@initech.example.com", "password": "initech-pw",
             "role": "account_owner", "departmentId": i::ROOT},
            {"id": i::PETER, "email": "peter@initech.example.com", "password": "initech-pw",
             "role": "learner", "departmentId": i::C}
        ]
    }]})
}

fn parse(value: Value) -> ImportDocument {
    serde_json::from_value(value).expect("a document of the right shape")
}

// ---------------------------------------------------------------------------------------
// Reading the database back

/// Every row of every table, as sorted JSON text: equal snapshots mean an unchanged database.
async fn snapshot(db: &DatabaseConnection) -> Vec<(&'static str, Vec<String>)> {
    async fn rows<E: EntityTrait>(db: &DatabaseConnection) -> Vec<String> {
        let mut rows: Vec<String> = E::find()
            .into_json()
            .all(db)
            .await
            .expect("table reads")
            .into_iter()
            .map(|row| row.to_string())
            .collect();
        rows.sort();
        rows
    }
    vec![
        ("accounts", rows::<account::Entity>(db).await),
        ("departments", rows::<department::Entity>(db).await),
        (
            "department_closure",
            rows::<department_closure::Entity>(db).await,
        ),
        ("custom_roles", rows::<custom_role::Entity>(db).await),
        (
            "custom_role_permissions",
            rows::<custom_role_permission::Entity>(db).await,
        ),
        ("users", rows::<user::Entity>(db).await),
        (
            "user_managed_departments",
            rows::<user_managed_department::Entity>(db).await,
        ),
        ("groups", rows::<group::Entity>(db).await),
        ("group_members", rows::<group_member::Entity>(db).await),
        ("projects", rows::<project::Entity>(db).await),
        ("project_authors", rows::<project_author::Entity>(db).await),
        ("content_items", rows::<content_item::Entity>(db).await),
        ("enrollments", rows::<enrollment::Entity>(db).await),
        ("user_points", rows::<user_points::Entity>(db).await),
        ("audit_log", rows::<audit_log::Entity>(db).await),
        ("api_clients", rows::<api_client::Entity>(db).await),
    ]
}

async fn count<E: EntityTrait>(db: &DatabaseConnection) -> u64
where
    E::Model: Sync,
{
    E::find().count(db).await.expect("count")
}

fn id(raw: &str) -> Uuid {
    Uuid::parse_str(raw).expect("test ids are UUIDs")
}

/// Imports `document()` so that refusals are tested against a database that is not empty.
async fn seed(db: &DatabaseConnection) {
    let summary = import_document(db, parse(document()), &hasher())
        .await
        .expect("the seed imports");
    assert_eq!(summary, EXPECTED_SUMMARY);
}

/// Imports `broken`, expects a refusal naming `entry` and mentioning `problem`, and
/// checks that the database did not change at all.
async fn assert_refused(db: &DatabaseConnection, broken: Value, entry: &str, problem: &str) {
    let before = snapshot(db).await;
    let err = import_document(db, parse(broken), &hasher())
        .await
        .expect_err("the import is refused");
    let ImportError::Invalid {
        entry: named,
        problem: said,
    } = &err
    else {
        panic!("expected a refusal naming an entry, got: {err}");
    };
    assert!(
        named.starts_with(entry),
        "entry {named:?} should start with {entry:?}"
    );
    assert!(
        said.contains(problem),
        "problem {said:?} should mention {problem:?}"
    );
    assert_eq!(err.to_string(), format!("{named}: {said}"));
    assert_eq!(
        snapshot(db).await,
        before,
        "a refused import must not change the database"
    );
}

// ---------------------------------------------------------------------------------------
// Scenarios

async fn a_json_document_lands_with_every_row_and_the_closure(db: &DatabaseConnection) {
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = folder.path().join("accounts.json");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&document()).expect("json"),
    )
    .expect("write");

    let summary = import_file(db, &file, &hasher())
        .await
        .expect("the document imports");
    assert_eq!(summary, EXPECTED_SUMMARY);
    assert_lands_completely(db).await;
}

async fn a_yaml_document_lands_the_same_way(db: &DatabaseConnection) {
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = folder.path().join("accounts.yml");
    std::fs::write(&file, serde_norway::to_string(&document()).expect("yaml")).expect("write");

    let summary = import_file(db, &file, &hasher())
        .await
        .expect("the document imports");
    assert_eq!(summary, EXPECTED_SUMMARY);
    assert_lands_completely(db).await;
}

async fn assert_lands_completely(db: &DatabaseConnection) {
    use acme as a;
    assert_eq!(count::<account::Entity>(db).await, 2);
    assert_eq!(count::<department::Entity>(db).await, 6);
    assert_eq!(count::<custom_role::Entity>(db).await, 1);
    assert_eq!(count::<custom_role_permission::Entity>(db).await, 2);
    assert_eq!(count::<user::Entity>(db).await, 6);
    assert_eq!(count::<user_managed_department::Entity>(db).await, 3);
    assert_eq!(count::<group::Entity>(db).await, 2);
    assert_eq!(count::<group_member::Entity>(db).await, 2);
    assert_eq!(count::<project::Entity>(db).await, 1);
    assert_eq!(count::<project_author::Entity>(db).await, 1);
    assert_eq!(count::<content_item::Entity>(db).await, 2);
    assert_eq!(count::<enrollment::Entity>(db).await, 2);
    assert_eq!(count::<user_points::Entity>(db).await, 2);
    assert_eq!(count::<audit_log::Entity>(db).await, 2);
    // The client acts as its user; its secret is stored as the RPC-made clients' are.
    let client = api_client::Entity::find_by_id(id(a::SYNC_CLIENT))
        .one(db)
        .await
        .expect("read")
        .expect("the API client landed");
    assert_eq!(
        (client.account_id, client.user_id, client.revoked),
        (id(a::ACCOUNT), id(a::DEPT_ADMIN), false)
    );
    assert_eq!(
        client.secret_hash,
        lms_core::auth::tokens::secret_hash(CLIENT_SECRET)
    );

    // The account URL is stored normalized, the given id kept, the revision at 0.
    let acme = account::Entity::find_by_id(id(a::ACCOUNT))
        .one(db)
        .await
        .expect("read")
        .expect("acme");
    assert_eq!(acme.url, "https://acme.example.com");
    assert_eq!(acme.revision, 0);

    // Closure: Acme has 4 self rows, Sales/Engineering under the root, East under
    // Sales and the root (8); Globex has 2 self rows and Plant under the root (3).
    assert_eq!(count::<department_closure::Entity>(db).await, 11);
    let closure: Vec<(Uuid, i32)> = department_closure::Entity::find()
        .filter(department_closure::Column::DescendantId.eq(id(a::SALES_EAST)))
        .order_by_asc(department_closure::Column::Depth)
        .all(db)
        .await
        .expect("read")
        .into_iter()
        .map(|row| {
            assert_eq!(row.account_id, id(a::ACCOUNT));
            (row.ancestor_id, row.depth)
        })
        .collect();
    assert_eq!(
        closure,
        vec![(id(a::SALES_EAST), 0), (id(a::SALES), 1), (id(a::ROOT), 2)]
    );
    let root = department::Entity::find_by_id(id(a::ROOT))
        .one(db)
        .await
        .expect("read")
        .expect("root");
    assert_eq!((root.parent_id, root.code.as_deref()), (None, Some("ACME")));
    let engineering = department::Entity::find_by_id(id(a::ENGINEERING))
        .one(db)
        .await
        .expect("read")
        .expect("dept");
    assert_eq!(
        (engineering.parent_id, engineering.code),
        (Some(id(a::ROOT)), None)
    );

    // Users: email as given, lower-cased key, plain passwords hashed, given hashes kept.
    let owner = user::Entity::find_by_id(id(a::OWNER))
        .one(db)
        .await
        .expect("read")
        .expect("owner");
    assert_eq!(owner.email, "Owner@Acme.example.com");
    assert_eq!(owner.email_key, "owner@acme.example.com");
    assert!(owner.password_hash.starts_with("$argon2id$"));
    assert!(hasher().verify(OWNER_PASSWORD, &owner.password_hash));
    assert!(
        owner.active && owner.role.as_str() == "account_owner" && owner.custom_role_id.is_none()
    );
    let author = user::Entity::find_by_id(id(a::AUTHOR))
        .one(db)
        .await
        .expect("read")
        .expect("author");
    assert!(hasher().verify("hashed-elsewhere", &author.password_hash));
    let learner = user::Entity::find_by_id(id(a::LEARNER))
        .one(db)
        .await
        .expect("read")
        .expect("learner");
    assert!(!learner.active);
    let trainer = user::Entity::find_by_id(id(a::TRAINER))
        .one(db)
        .await
        .expect("read")
        .expect("trainer");
    assert_eq!(
        (trainer.role.as_str(), trainer.custom_role_id),
        ("custom", Some(id(a::TRAINER_ROLE)))
    );

    // Groups: the smart one has no stored members.
    let smart = group::Entity::find_by_id(id(a::ALL_OF_SALES))
        .one(db)
        .await
        .expect("read")
        .expect("group");
    assert_eq!(smart.smart_department_id, Some(id(a::SALES)));
    let members = group_member::Entity::find()
        .filter(group_member::Column::GroupId.eq(id(a::INTERNS)))
        .count(db)
        .await
        .expect("count");
    assert_eq!(members, 2);

    // Content items: dates in UTC, view URL only when given.
    let welcome = content_item::Entity::find_by_id(id(a::WELCOME))
        .one(db)
        .await
        .expect("read")
        .expect("item");
    assert_eq!(welcome.added_at.to_rfc3339(), "2019-03-26T06:34:57+00:00");
    assert_eq!(
        (welcome.view_url, welcome.content_type.as_str()),
        (None, "Course")
    );
    let secret = content_item::Entity::find_by_id(id(a::SECRET))
        .one(db)
        .await
        .expect("read")
        .expect("item");
    assert_eq!(secret.added_at.to_rfc3339(), "2020-01-02T01:04:05+00:00");
    assert_eq!(
        secret.view_url.as_deref(),
        Some("https://cdn.acme.example.com/secret")
    );
    assert_eq!(secret.description, "");

    let points = user_points::Entity::find_by_id(id(a::LEARNER))
        .one(db)
        .await
        .expect("read")
        .expect("points");
    assert_eq!((points.points, points.account_id), (421, id(a::ACCOUNT)));

    // One audit row per account, by nobody, with the counts.
    let audit = audit_log::Entity::find()
        .filter(audit_log::Column::AccountId.eq(id(a::ACCOUNT)))
        .one(db)
        .await
        .expect("read")
        .expect("audit row");
    assert_eq!(
        (audit.action.as_str(), audit.entity_type.as_str()),
        ("import", "account")
    );
    assert_eq!(
        (audit.entity_id, audit.actor_user_id),
        (id(a::ACCOUNT), None)
    );
    let after: Value = serde_json::from_str(audit.after.as_deref().expect("after")).expect("json");
    assert_eq!(after["users"], 5);
    assert_eq!(after["departments"], 4);
    assert_eq!(after["url"], "https://acme.example.com");
}

async fn the_demo_account_imports(db: &DatabaseConnection) {
    let demo = demo_account();
    let summary = import_document(db, demo.document.clone(), &hasher())
        .await
        .expect("the demo imports");
    assert_eq!(summary.accounts, 1);
    assert_eq!(summary.users, demo.logins.len());

    let stored = account::Entity::find_by_id(demo.account_id)
        .one(db)
        .await
        .expect("read")
        .expect("demo");
    assert_eq!(stored.url, DEMO_ACCOUNT_URL);
    let owner = user::Entity::find()
        .filter(user::Column::EmailKey.eq(demo.owner_login.to_lowercase()))
        .one(db)
        .await
        .expect("read")
        .expect("owner");
    assert_eq!(owner.role.as_str(), "account_owner");
    assert!(hasher().verify(DEMO_PASSWORD, &owner.password_hash));
    let plain = group::Entity::find_by_id(demo.plain_group_id)
        .one(db)
        .await
        .expect("read")
        .expect("group");
    assert_eq!(plain.smart_department_id, None);
    let members = group_member::Entity::find()
        .filter(group_member::Column::GroupId.eq(demo.plain_group_id))
        .count(db)
        .await
        .expect("count");
    assert!((2..=3).contains(&members));
    let smart = group::Entity::find_by_id(demo.smart_group_id)
        .one(db)
        .await
        .expect("read")
        .expect("group");
    assert!(smart.smart_department_id.is_some());

    // The demo's ids are fixed: a second import of it is refused, and changes nothing.
    let before = snapshot(db).await;
    let err = import_document(db, demo.document, &hasher())
        .await
        .expect_err("already there");
    assert!(err.to_string().contains("already exists"), "{err}");
    assert_eq!(snapshot(db).await, before);
}

async fn a_department_cycle_is_refused_and_nothing_changes(db: &DatabaseConnection) {
    seed(db).await;
    let mut broken = another_document();
    // A's parent becomes C: A -> C -> B -> A.
    broken["accounts"][0]["departments"][0]["parentDepartmentId"] = json!(initech::C);
    assert_refused(
        db,
        broken,
        &format!("accounts[0].departments[0] (id \"{}\")", initech::A),
        "cycle",
    )
    .await;
}

async fn an_unknown_reference_is_refused_and_nothing_changes(db: &DatabaseConnection) {
    seed(db).await;
    let mut broken = another_document();
    // A department of another account (already in the database) is unknown here.
    broken["accounts"][0]["users"][1]["departmentId"] = json!(acme::SALES);
    assert_refused(
        db,
        broken,
        "accounts[0].users[1] (email \"peter@initech.example.com\")",
        "departmentId",
    )
    .await;
}

async fn a_duplicate_id_is_refused_and_nothing_changes(db: &DatabaseConnection) {
    seed(db).await;
    let mut broken = another_document();
    // A user with a department's id (in upper case: ids are compared as UUIDs).
    broken["accounts"][0]["users"][1]["id"] = json!(initech::B.to_uppercase());
    assert_refused(
        db,
        broken,
        "accounts[0].users[1] (email \"peter@initech.example.com\")",
        "used twice in the document",
    )
    .await;
}

async fn a_login_repeated_in_another_case_is_refused_and_nothing_changes(db: &DatabaseConnection) {
    seed(db).await;
    let mut broken = another_document();
    broken["accounts"][0]["users"][1]["email"] = json!("OWNER@Initech.example.com");
    assert_refused(
        db,
        broken,
        "accounts[0].users[1] (email \"OWNER@Initech.example.com\")",
        "login is used twice in this account",
    )
    .await;
}

async fn an_id_already_in_the_database_is_refused_and_nothing_changes(db: &DatabaseConnection) {
    seed(db).await;
    let mut broken = another_document();
    broken["accounts"][0]["users"][1]["id"] = json!(acme::LEARNER);
    assert_refused(
        db,
        broken,
        "accounts[0].users[1] (email \"peter@initech.example.com\")",
        "already used in the database",
    )
    .await;
}

/// An account whose departments have exactly `ids` (the first is the root) and one owner;
/// other ids come from `other`, far from the departments' range.
fn departments_document(url: &str, other: u128, ids: &[Uuid]) -> Value {
    let root = ids[0];
    let departments: Vec<Value> = ids[1..]
        .iter()
        .enumerate()
        .map(|(n, id)| json!({"id": id, "name": format!("D{n}"), "parentDepartmentId": root}))
        .collect();
    json!({"accounts": [{
        "url": url,
        "rootDepartment": {"id": root, "name": "Root"},
        "departments": departments,
        "users": [{"id": Uuid::from_u128(other), "email": format!("owner@{}", &url[8..]),
                   "password": "owner-password", "role": "account_owner",
                   "departmentId": root}]
    }]})
}

/// The taken ids are found by reading the table's ids when the table is the smaller side,
/// by probing its key when the document is, and by both when the table holds more rows
/// than the document has ids in its range (the read stops, the ids beyond are probed).
async fn an_id_already_in_the_database_is_found_whichever_side_is_larger(db: &DatabaseConnection) {
    const BASE: u128 = 0x0193_e000_0000_7000_8000_0000_0000_0000;
    let seeded: Vec<Uuid> = (0..=50)
        .map(|k| Uuid::from_u128(BASE + k * 1_000))
        .collect();
    import_document(
        db,
        parse(departments_document(
            "https://seeded.example.com",
            BASE + 0xF0_0000,
            &seeded,
        )),
        &hasher(),
    )
    .await
    .expect("the seed imports");
    let other_root = Uuid::from_u128(BASE - 1_000_000);
    let document = |taken_at: usize, ids: Vec<u128>| {
        let mut ids: Vec<Uuid> = ids.into_iter().map(|n| Uuid::from_u128(BASE + n)).collect();
        ids.insert(0, other_root);
        let entry = format!(
            "accounts[0].departments[{taken_at}] (id \"{}\")",
            ids[taken_at + 1]
        );
        let url = "https://second.example.com";
        (departments_document(url, BASE + 0xF1_0000, &ids), entry)
    };
    // 300 ids inside the seeded range, more than the 51 rows: the whole table is read.
    let mut many: Vec<u128> = vec![20_000];
    many.extend((0..300).map(|k| 7 * k + 3));
    // 3 ids in range: 3 rows read (the ids 0, 1,000 and 2,000), the rest probed.
    let cases = [
        document(0, many),
        document(2, vec![1_500, 2_500, 40_000]),
        document(0, vec![1_000, 1_500, 2_500]),
    ];
    for (broken, entry) in cases {
        assert_refused(db, broken, &entry, "already used in the database").await;
    }
}

async fn an_account_url_already_present_is_refused_and_nothing_changes(db: &DatabaseConnection) {
    seed(db).await;
    let mut broken = another_document();
    broken["accounts"][0]["url"] = json!("https://ACME.example.com/");
    assert_refused(
        db,
        broken,
        "accounts[0] (url \"https://ACME.example.com/\")",
        "already exists",
    )
    .await;
    // Either scheme names the account, so the other scheme is taken too.
    let mut broken = another_document();
    broken["accounts"][0]["url"] = json!("http://acme.example.com");
    assert_refused(
        db,
        broken,
        "accounts[0] (url \"http://acme.example.com\")",
        "already exists (either scheme names it)",
    )
    .await;
}

async fn bad_api_clients_are_refused_naming_the_field_and_nothing_changes(db: &DatabaseConnection) {
    seed(db).await;
    let entry = |client: &str| format!("accounts[0].apiClients[0] (clientId \"{client}\")");
    let client = "0193c000-0000-7000-8000-000000000701";
    let good = json!({"clientId": client, "clientSecret": CLIENT_SECRET, "userId": initech::PETER});
    let with = |field: &str, value: Value| {
        let mut client = good.clone();
        client[field] = value;
        let mut document = another_document();
        document["accounts"][0]["apiClients"] = json!([client]);
        document
    };
    let cases = [
        (
            with("clientId", json!("sync")),
            entry("sync"),
            "clientId \"sync\" is not a UUID",
        ),
        (
            with("clientId", json!(initech::B)),
            entry(initech::B),
            "used twice in the document",
        ),
        (
            with("clientId", json!(acme::SYNC_CLIENT)),
            entry(acme::SYNC_CLIENT),
            "already used in the database",
        ),
        (
            with("clientSecret", json!("0123456789abcdef")),
            entry(client),
            "clientSecret must be at least 32 characters",
        ),
        (
            with("clientSecret", json!("ab".repeat(20))),
            entry(client),
            "clientSecret must use at least 8 different characters",
        ),
        (
            with("clientSecret", json!(format!("{CLIENT_SECRET} and more"))),
            entry(client),
            "clientSecret must consist of visible ASCII characters",
        ),
        (
            with("userId", json!(acme::DEPT_ADMIN)),
            entry(client),
            "userId \"0193a000-0000-7000-8000-000000000202\" names no user of this account",
        ),
        (
            with("userId", json!("peter")),
            entry(client),
            "userId \"peter\" is not a UUID",
        ),
    ];
    for (broken, entry, problem) in cases {
        assert_refused(db, broken, &entry, problem).await;
    }
    // The secret is never echoed, whatever is wrong with it.
    let err = import_document(
        db,
        parse(with("clientSecret", json!("tooshort"))),
        &hasher(),
    )
    .await
    .expect_err("refused");
    assert!(!err.to_string().contains("tooshort"), "{err}");
    // A misspelt field is a parse error, not a default.
    let mut broken = with("clientSecret", json!(CLIENT_SECRET));
    broken["accounts"][0]["apiClients"][0]["secret"] = json!(CLIENT_SECRET);
    let err = serde_json::from_value::<ImportDocument>(broken).expect_err("unknown field");
    assert!(err.to_string().contains("unknown field `secret`"), "{err}");
}

/// Two imports of one account under different schemes, each past its checks before the other
/// commits: the URL-key index makes the later one wait and then refuses it with the conflict
/// a taken URL gives, and nothing of it lands. PostgreSQL only: SQLite's imports take the write
/// lock before their checks, so the later one's check already sees the first.
async fn an_import_racing_another_past_its_checks_gets_the_url_conflict(db: &DatabaseConnection) {
    if db.get_database_backend() != DbBackend::Postgres {
        return;
    }
    // The other import, its account written but not committed.
    let other = db.begin().await.expect("begin");
    account::ActiveModel {
        id: Set(Uuid::now_v7()),
        url: Set("http://initech.example.com".to_owned()),
        revision: Set(0),
        created_at: Set(chrono::Utc::now()),
    }
    .insert(&other)
    .await
    .expect("the other import's account");
    let racing = {
        let db = db.clone();
        tokio::spawn(
            async move { import_document(&db, parse(another_document()), &hasher()).await },
        )
    };
    // Commit only once the import waits on the index, past its own checks.
    // Each test has a database of its own, so a waiter in it is the import.
    let waiting = "SELECT count(*) AS waiting FROM pg_stat_activity \
                   WHERE datname = current_database() AND wait_event_type = 'Lock'";
    let mut waited = 0;
    loop {
        let row = db
            .query_one_raw(sea_orm::Statement::from_string(
                DbBackend::Postgres,
                waiting,
            ))
            .await
            .expect("pg_stat_activity")
            .expect("a row");
        if row.try_get::<i64>("", "waiting").expect("a count") > 0 {
            break;
        }
        waited += 1;
        assert!(
            waited < 500,
            "the import never waited on the other's account"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    other.commit().await.expect("commit");
    let refused = racing
        .await
        .expect("the import ran")
        .expect_err("the later import is refused");
    let ImportError::Conflict(message) = &refused else {
        panic!("expected the URL conflict, got: {refused}");
    };
    assert_eq!(*message, "An account with this URL already exists.");
    assert_eq!(count::<account::Entity>(db).await, 1);
    assert_eq!(count::<user::Entity>(db).await, 0);
}

/// More rows than one statement may bind parameters for, on either backend.
async fn a_large_document_is_written_in_chunks(db: &DatabaseConnection) {
    const DEPARTMENTS: u128 = 3_000;
    const USERS: u128 = 3_500;
    let base = 0x0193_d000_0000_7000_8000_0000_0000_0000u128;
    let uuid = |n: u128| Uuid::from_u128(base + n).to_string();
    let root = uuid(0);
    // Departments in two levels: 100 under the root, the rest under those.
    let departments: Vec<Value> = (1..=DEPARTMENTS)
        .map(|n| {
            let parent = if n <= 100 {
                root.clone()
            } else {
                uuid(1 + n % 100)
            };
            json!({"id": uuid(n), "name": format!("Department {n}"), "parentDepartmentId": parent})
        })
        .collect();
    // One precomputed hash keeps the test fast; it is what would be stored anyway.
    let hash = hasher().hash("pw").expect("hash");
    let users: Vec<Value> = (1..=USERS)
        .map(|n| {
            json!({"id": uuid(10_000 + n), "email": format!("user{n}@big.example.com"),
                   "passwordHash": hash, "role": "learner",
                   "departmentId": uuid(1 + n % DEPARTMENTS),
                   "managedDepartmentIds": [uuid(1 + n % DEPARTMENTS)]})
        })
        .collect();
    let members: Vec<String> = (1..=USERS).map(|n| uuid(10_000 + n)).collect();
    let points: Vec<Value> = (1..=USERS)
        .map(|n| json!({"userId": uuid(10_000 + n), "points": n}))
        .collect();
    let doc = json!({"accounts": [{
        "url": "https://big.example.com",
        "rootDepartment": {"id": root, "name": "Big"},
        "departments": departments,
        "users": users,
        "groups": [{"id": uuid(20_000), "name": "Everyone", "userIds": members}],
        "points": points
    }]});

    let summary = import_document(db, parse(doc), &hasher())
        .await
        .expect("the big document imports");
    let users = USERS as u64;
    let departments = DEPARTMENTS as u64 + 1;
    assert_eq!(summary.users as u64, users);
    assert_eq!(count::<department::Entity>(db).await, departments);
    // Self rows, one root row for each non-root, one middle row for the third level.
    assert_eq!(
        count::<department_closure::Entity>(db).await,
        departments + (departments - 1) + (departments - 101)
    );
    assert_eq!(count::<user::Entity>(db).await, users);
    assert_eq!(count::<user_managed_department::Entity>(db).await, users);
    assert_eq!(count::<group_member::Entity>(db).await, users);
    assert_eq!(count::<user_points::Entity>(db).await, users);
}

/// All or nothing even when the database fails after most rows are written: a trigger
/// refuses the enrollments, which are inserted last but one.
async fn a_failure_in_the_middle_of_the_writes_leaves_nothing_behind(db: &DatabaseConnection) {
    seed(db).await;
    let trigger = match db.get_database_backend() {
        DbBackend::Sqlite => vec![
            "CREATE TRIGGER refuse_enrollments BEFORE INSERT ON enrollments \
             BEGIN SELECT RAISE(ABORT, 'enrollments refused by the test'); END",
        ],
        _ => vec![
            "CREATE FUNCTION refuse_enrollments() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'enrollments refused by the test'; END $$",
            "CREATE TRIGGER refuse_enrollments BEFORE INSERT ON enrollments \
             FOR EACH ROW EXECUTE FUNCTION refuse_enrollments()",
        ],
    };
    for statement in trigger {
        db.execute_unprepared(statement)
            .await
            .expect("trigger installed");
    }
    let mut doc = another_document();
    let account = &mut doc["accounts"][0];
    account["projects"] = json!([{"id": "0193c000-0000-7000-8000-000000000401", "name": "P"}]);
    account["contentItems"] = json!([{"id": "0193c000-0000-7000-8000-000000000501",
        "projectId": "0193c000-0000-7000-8000-000000000401", "title": "T",
        "userId": initech::OWNER, "addedDate": "2019-03-26T06:34:57+00:00", "type": "Course"}]);
    account["enrollments"] = json!([{"id": "0193c000-0000-7000-8000-000000000601",
        "learnerId": initech::PETER, "contentItemId": "0193c000-0000-7000-8000-000000000501"}]);

    let before = snapshot(db).await;
    let err = import_document(db, parse(doc), &hasher())
        .await
        .expect_err("the trigger refuses");
    assert!(matches!(err, ImportError::Database(_)), "{err}");
    assert_eq!(
        snapshot(db).await,
        before,
        "a failed import must not leave rows behind"
    );
}

// ---------------------------------------------------------------------------------------
// Files (no database work happens before these fail)

#[tokio::test]
async fn a_file_of_another_format_is_refused_by_its_extension() {
    let db = TestConnection::create(Backend::Sqlite)
        .await
        .expect("SQLite is always available");
    let err = import_file(&db, Path::new("accounts.csv"), &hasher())
        .await
        .expect_err("refused");
    assert!(
        matches!(err, ImportError::UnsupportedFormat { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("accounts.csv"), "{err}");
}

#[tokio::test]
async fn a_malformed_file_is_refused_with_its_line_and_column() {
    let db = TestConnection::create(Backend::Sqlite)
        .await
        .expect("SQLite is always available");
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = folder.path().join("broken.json");
    std::fs::write(
        &file,
        "{\n  \"accounts\": [\n    {\"url\": \"https://x.example\",}\n  ]\n}\n",
    )
    .expect("write");
    let err = import_file(&db, &file, &hasher())
        .await
        .expect_err("refused");
    let ImportError::Parse { line, column, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(*line, Some(3));
    assert!(column.is_some());
    assert!(err.to_string().contains("broken.json"), "{err}");

    let missing = folder.path().join("missing.yaml");
    let err = import_file(&db, &missing, &hasher())
        .await
        .expect_err("refused");
    assert!(matches!(err, ImportError::Read { .. }), "{err}");
    assert_eq!(count::<account::Entity>(&db).await, 0);
}

// ---------------------------------------------------------------------------------------
// Foreign keys of a large import

/// Every foreign key of the schema: (table, name or referenced columns, definition), with
/// PostgreSQL's object id, which changes when a key is dropped and added back.
async fn foreign_keys(db: &DatabaseConnection) -> Vec<(String, String, String, i64)> {
    let sql = match db.get_database_backend() {
        DbBackend::Postgres => {
            "SELECT conrelid::regclass::text AS t, conname::text AS n, \
                    pg_get_constraintdef(oid) AS d, oid::int8 AS o \
             FROM pg_constraint WHERE contype = 'f' ORDER BY 1, 2"
        }
        _ => {
            "SELECT m.name AS t, k.\"from\" AS n, \
                    k.\"table\" || '.' || coalesce(k.\"to\", '') || ' ' || k.on_delete AS d, 0 AS o \
             FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS k \
             WHERE m.type = 'table' ORDER BY 1, 2, 3"
        }
    };
    catalog(db, sql).await
}

/// Every index of the schema: (table, name, definition), with PostgreSQL's object id, which
/// changes when an index is dropped and built again.
async fn indexes(db: &DatabaseConnection) -> Vec<(String, String, String, i64)> {
    let sql = match db.get_database_backend() {
        DbBackend::Postgres => {
            "SELECT t.relname::text AS t, c.relname::text AS n, \
                    pg_get_indexdef(i.indexrelid) AS d, i.indexrelid::int8 AS o \
             FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid \
             JOIN pg_class AS t ON t.oid = i.indrelid \
             JOIN pg_namespace AS ns ON ns.oid = t.relnamespace \
             WHERE ns.nspname = current_schema() ORDER BY 1, 2"
        }
        _ => {
            "SELECT tbl_name AS t, name AS n, sql AS d, 0 AS o FROM sqlite_schema \
             WHERE type = 'index' AND sql IS NOT NULL ORDER BY 1, 2"
        }
    };
    catalog(db, sql).await
}

/// The rows of a catalog query selecting `t`, `n`, `d` and `o`.
async fn catalog(db: &DatabaseConnection, sql: &str) -> Vec<(String, String, String, i64)> {
    db.query_all_raw(sea_orm::Statement::from_string(
        db.get_database_backend(),
        sql,
    ))
    .await
    .expect("catalog read")
    .iter()
    .map(|row| {
        (
            row.try_get("", "t").expect("t"),
            row.try_get("", "n").expect("n"),
            row.try_get("", "d").expect("d"),
            row.try_get("", "o").expect("o"),
        )
    })
    .collect()
}

/// The long tables' indexes that are neither unique nor a key's, which a large first load
/// drops and builds again (PostgreSQL's names: `idx_…`).
fn rebuilt(index: &(String, String, String, i64)) -> bool {
    ["users", "enrollments", "learner_results", "user_points"].contains(&index.0.as_str())
        && index.1.starts_with("idx_")
}

/// The keys without their object ids.
fn definitions(keys: &[(String, String, String, i64)]) -> Vec<(String, String, String)> {
    keys.iter()
        .map(|(t, n, d, _)| (t.clone(), n.clone(), d.clone()))
        .collect()
}

/// The generated account of `users` users, imported from a file.
async fn import_world(db: &DatabaseConnection, users: usize) -> ImportSummary {
    let shape = lms_tests::large_world::WorldShape::with_users(users);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("world.json");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("file"));
    let hash = hasher().hash("pw").expect("hash");
    lms_tests::large_world::write_world(&shape, &hash, &mut file).expect("document");
    drop(file);
    import_file(db, &path, &hasher())
        .await
        .expect("the generated account imports")
}

/// An orphan enrollment, refused by the database itself.
async fn assert_orphans_refused(db: &DatabaseConnection) {
    let account: Uuid = account::Entity::find()
        .one(db)
        .await
        .expect("read")
        .expect("an account")
        .id;
    let item: Uuid = content_item::Entity::find()
        .one(db)
        .await
        .expect("read")
        .expect("an item")
        .id;
    let orphan = enrollment::ActiveModel {
        id: sea_orm::Set(Uuid::from_u128(0x0199_0000_0000_7000_8000_dead_0000_0002)),
        account_id: sea_orm::Set(account),
        learner_id: sea_orm::Set(Uuid::from_u128(0x0199_0000_0000_7000_8000_dead_0000_0001)),
        content_item_id: sea_orm::Set(item),
        created_at: sea_orm::Set(chrono::Utc::now()),
        ..Default::default()
    };
    let refused = sea_orm::ActiveModelTrait::insert(orphan, db).await;
    assert!(refused.is_err(), "an enrollment of no user must be refused");
}

/// Enough rows that PostgreSQL checks the long tables' keys once rather than per row
/// (triggers off and one query per key, or, without the right to turn triggers off, the keys
/// dropped and added back): afterwards every key is there as before, and the database still
/// refuses an orphan.
async fn a_large_import_keeps_every_foreign_key(db: &DatabaseConnection) {
    let before = foreign_keys(db).await;
    let indexes_before = indexes(db).await;
    let summary = import_world(db, 1_000).await;
    let indexes_after = indexes(db).await;
    assert_eq!(
        definitions(&indexes_before),
        definitions(&indexes_after),
        "the import must leave every index as it was"
    );
    if db.get_database_backend() == DbBackend::Postgres {
        // A first load: the long tables' own indexes were built again after the rows.
        let pairs = || indexes_before.iter().zip(&indexes_after);
        assert!(pairs().filter(|(old, _)| rebuilt(old)).count() >= 8);
        assert!(
            pairs().all(|(old, new)| (old.3 != new.3) == rebuilt(old)),
            "{indexes_before:?}\n{indexes_after:?}"
        );
    }
    assert!(summary.enrollments + summary.points >= 10_000, "{summary}");
    assert_eq!(
        count::<enrollment::Entity>(db).await,
        summary.enrollments as u64
    );
    assert_eq!(
        definitions(&before),
        definitions(&foreign_keys(db).await),
        "the import must leave every foreign key as it was"
    );
    assert_orphans_refused(db).await;
}

/// PostgreSQL: a database that already holds an account is serving it, and dropping the keys
/// would lock out its every request for the import's seconds: a large import beside it keeps
/// the keys (checked row by row, or with the triggers off and one query per key when it may
/// turn them off).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_import_beside_another_account_keeps_the_keys_in_place() {
    let Some(fixture) = TestConnection::create(Backend::Postgres).await else {
        return;
    };
    let db = &fixture.db;
    seed(db).await;
    let before = foreign_keys(db).await;
    let indexes_before = indexes(db).await;
    let summary = import_world(db, 1_000).await;
    assert!(summary.enrollments + summary.points >= 10_000, "{summary}");
    assert_eq!(
        before,
        foreign_keys(db).await,
        "no key was dropped while another account is served"
    );
    assert_eq!(
        indexes_before,
        indexes(db).await,
        "no index was dropped while another account is served"
    );
    assert_orphans_refused(db).await;
    fixture.db.close().await.ok();
}

/// PostgreSQL: a request of the service holding `users` keeps a large import from taking
/// its locks; the import still lands, its keys in place (checked row by row, or with the
/// triggers off, which locks nothing), without waiting on the request. (SQLite keeps its keys
/// whatever the import's size.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_import_beside_a_busy_postgresql_service_checks_keys_row_by_row() {
    use sea_orm::TransactionTrait as _;
    let Some(fixture) = TestConnection::create(Backend::Postgres).await else {
        return;
    };
    let db = &fixture.db;
    let before = foreign_keys(db).await;
    let reader = db.begin().await.expect("a second connection");
    let _ = user::Entity::find().one(&reader).await.expect("read");
    let summary = import_world(db, 1_000).await;
    reader.commit().await.expect("the reader ends");
    assert!(summary.enrollments + summary.points >= 10_000, "{summary}");
    let after = foreign_keys(db).await;
    assert_eq!(
        before, after,
        "no key was dropped while the table was in use"
    );
    assert_orphans_refused(db).await;
    fixture.db.close().await.ok();
}

/// PostgreSQL, imported by the tables' owner who is no superuser and so may not turn
/// triggers off: a large first load drops the long tables' keys and adds them back (each with
/// a new object id), and every key holds afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_first_load_without_the_right_to_skip_triggers_drops_and_adds_back_the_keys() {
    const OWNER: &str = "lms_test_import_owner";
    let Some(fixture) = TestConnection::create(Backend::Postgres).await else {
        return;
    };
    let db = &fixture.db;
    for statement in [
        format!(
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{OWNER}') \
             THEN CREATE ROLE {OWNER} NOLOGIN NOSUPERUSER; END IF; END $$"
        ),
        format!(
            "DO $$ DECLARE t text; BEGIN \
             FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' LOOP \
             EXECUTE format('ALTER TABLE %I OWNER TO {OWNER}', t); END LOOP; END $$"
        ),
    ] {
        db.execute_unprepared(&statement)
            .await
            .expect("the owner set up");
    }
    // Every connection of this pool acts as the owner.
    let owner =
        sea_orm::Database::connect(format!("{}?options[role]={OWNER}", fixture.database.url))
            .await
            .expect("connected as the owner");
    let before = foreign_keys(&owner).await;
    let indexes_before = indexes(&owner).await;
    let summary = import_world(&owner, 1_000).await;
    assert!(summary.enrollments + summary.points >= 10_000, "{summary}");
    // The owner may not create in the schema, so the indexes were left in place.
    assert_eq!(indexes_before, indexes(&owner).await);
    let after = foreign_keys(&owner).await;
    assert_eq!(definitions(&before), definitions(&after));
    let long = |t: &str| ["users", "enrollments", "learner_results", "user_points"].contains(&t);
    assert!(
        before
            .iter()
            .zip(&after)
            .filter(|((t, ..), _)| long(t))
            .all(|((.., old), (.., new))| old != new),
        "the long tables' keys were dropped and added back, so checked once"
    );
    assert_orphans_refused(&owner).await;
    owner.close().await.ok();
    // The role is the server's, not the test database's.
    for statement in [
        format!("REASSIGN OWNED BY {OWNER} TO CURRENT_USER"),
        format!("DROP ROLE {OWNER}"),
    ] {
        db.execute_unprepared(&statement).await.ok();
    }
    fixture.db.close().await.ok();
}
