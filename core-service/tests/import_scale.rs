//! The import at scale: a generated account of a few thousand users lands whole through
//! the streaming JSON reader with its progress reported, a document refused at its very
//! last entry leaves nothing behind, and lists given out of the contract's order are
//! refused exactly as when the document is read whole. On PostgreSQL, where such an account
//! is copied in with its long tables' triggers off, a failure late in the writes and a key
//! broken by those rows both leave nothing behind. On SQLite, where such an account's long
//! tables are indexed after their rows, a failure after those writes leaves every index.
//!
//! Every scenario runs on SQLite, and on PostgreSQL when `LMS_TEST_POSTGRES_URL` names a
//! server (a fresh database is created per test and dropped afterwards); the PostgreSQL-only
//! ones are skipped, saying so, without it.

use std::{path::Path, sync::Mutex};

use lms_core::{
    auth::{PasswordHasher, PasswordPolicy},
    entities::{
        account, department, department_closure, enrollment, group_member, user, user_points,
    },
    import::{
        ImportDocument, ImportError, ImportProgress, ImportStage, import_document, import_file,
        import_file_with_progress,
    },
};
use lms_testkit::{Backend, TestConnection, on_both_backends};
use sea_orm::{ConnectionTrait as _, DatabaseConnection, EntityTrait, PaginatorTrait};
use serde_json::{Value, json};
use uuid::Uuid;

const USERS: usize = 3_000;
const DEPARTMENTS: usize = 30;
const ITEMS: usize = 10;
const ENROLLMENTS_PER_USER: usize = 5;
const GROUPS: usize = 30;
const MEMBERS_PER_GROUP: usize = 20;

on_both_backends!(TestConnection =>
    a_generated_account_lands_whole_with_its_progress,
    a_document_refused_at_its_last_enrollment_changes_nothing,
);

// ---------------------------------------------------------------------------------------
// The generated account

fn hasher() -> PasswordHasher {
    PasswordHasher::new(PasswordPolicy {
        memory_kib: 64,
        iterations: 1,
        parallelism: 1,
    })
    .expect("hasher")
}

fn id(kind: u128, n: usize) -> String {
    Uuid::from_u128((0x0191_a000_0000_7000_8000 << 48) | (kind << 32) | n as u128).to_string()
}

/// An account of [`USERS`] users in a tree of [`DEPARTMENTS`] departments, with plain
/// groups, content items, enrollments and points, as JSON in the contract's order.
fn generated(password_hash: &str) -> Value {
    let department = |n: usize| id(1, n);
    let user = |n: usize| id(2, n);
    let item = |n: usize| id(4, n);
    json!({"accounts": [{
        "id": id(0, 0),
        "url": "https://scale.example.com",
        "rootDepartment": {"id": department(0), "name": "Head office"},
        "departments": (1..=DEPARTMENTS).map(|n| json!({
            "id": department(n), "name": format!("Department {n}"),
            "parentDepartmentId": department((n - 1) / 3),
        })).collect::<Vec<_>>(),
        "users": (0..USERS).map(|n| json!({
            "id": user(n), "email": format!("user-{n}@scale.example.com"),
            "passwordHash": password_hash,
            "role": if n == 0 { "account_owner" } else { "learner" },
            "departmentId": department(n % (DEPARTMENTS + 1)),
        })).collect::<Vec<_>>(),
        "groups": (0..GROUPS).map(|g| json!({
            "id": id(3, g), "name": format!("Group {g}"),
            "userIds": (0..MEMBERS_PER_GROUP).map(|m| user(g * MEMBERS_PER_GROUP + m)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "projects": [{"id": id(5, 0), "name": "Courses", "authorIds": [user(0)]}],
        "contentItems": (0..ITEMS).map(|n| json!({
            "id": item(n), "projectId": id(5, 0), "title": format!("Course {n}"),
            "userId": user(0), "addedDate": "2026-01-15T09:30:00+00:00", "type": "course",
        })).collect::<Vec<_>>(),
        "enrollments": (0..USERS * ENROLLMENTS_PER_USER).map(|n| json!({
            "id": id(6, n), "learnerId": user(n / ENROLLMENTS_PER_USER),
            "contentItemId": item(n % ITEMS),
        })).collect::<Vec<_>>(),
        "points": (0..USERS).map(|n| json!({"userId": user(n), "points": n % 1000}))
            .collect::<Vec<_>>(),
    }]})
}

fn password_hash() -> String {
    hasher().hash("scale-password").expect("hash")
}

/// The keys of an account in the contract's order, as the export writes them.
const CONTRACT_ORDER: [&str; 11] = [
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
];

/// Writes `doc` (one account) with the account's keys in `order` (serde_json's own maps
/// would sort them).
fn write(folder: &Path, name: &str, doc: &Value, order: &[&str]) -> std::path::PathBuf {
    let account = doc["accounts"][0].as_object().expect("an account");
    let fields: Vec<String> = order
        .iter()
        .filter_map(|key| {
            let value = account.get(*key)?;
            Some(format!("{}:{}", json!(key), value))
        })
        .collect();
    let file = folder.join(name);
    let text = format!("{{\"accounts\":[{{{}}}]}}", fields.join(","));
    std::fs::write(&file, text).expect("write");
    file
}

/// The generated account in the contract's order, written as `scale.json` in `folder`.
fn generated_file(folder: &Path) -> std::path::PathBuf {
    write(
        folder,
        "scale.json",
        &generated(&password_hash()),
        &CONTRACT_ORDER,
    )
}

/// Imports `file`, which the database itself refuses with an error naming `cause`, and
/// checks that nothing of it landed.
async fn assert_refused_by_database(db: &DatabaseConnection, file: &Path, cause: &str) {
    let err = import_file(db, file, &hasher())
        .await
        .expect_err("the database refuses the import");
    assert!(matches!(err, ImportError::Database(_)), "{err}");
    assert!(format!("{err:?}").contains(cause), "{err:?}");
    assert_nothing_landed(db).await;
}

fn reversed_order() -> Vec<&'static str> {
    CONTRACT_ORDER.iter().rev().copied().collect()
}

async fn count<E: EntityTrait>(db: &DatabaseConnection) -> u64
where
    E::Model: Sync,
{
    E::find().count(db).await.expect("count")
}

// ---------------------------------------------------------------------------------------
// Scenarios

async fn a_generated_account_lands_whole_with_its_progress(db: &DatabaseConnection) {
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = generated_file(folder.path());
    let indexes = index_definitions(db).await;
    let reports: Mutex<Vec<ImportProgress>> = Mutex::new(Vec::new());
    let record = |progress| reports.lock().expect("reports").push(progress);
    let summary = import_file_with_progress(db, &file, &hasher(), Some(&record))
        .await
        .expect("the generated account imports");
    assert_eq!(index_definitions(db).await, indexes);
    let enrollments = USERS * ENROLLMENTS_PER_USER;
    assert_eq!(summary.users, USERS);
    assert_eq!(summary.enrollments, enrollments);
    assert_eq!(count::<account::Entity>(db).await, 1);
    assert_eq!(
        count::<department::Entity>(db).await,
        DEPARTMENTS as u64 + 1
    );
    assert!(count::<department_closure::Entity>(db).await > DEPARTMENTS as u64);
    assert_eq!(count::<user::Entity>(db).await, USERS as u64);
    assert_eq!(
        count::<group_member::Entity>(db).await,
        (GROUPS * MEMBERS_PER_GROUP) as u64
    );
    assert_eq!(count::<enrollment::Entity>(db).await, enrollments as u64);
    assert_eq!(count::<user_points::Entity>(db).await, USERS as u64);

    let reports = reports.into_inner().expect("reports");
    let writing: Vec<&ImportProgress> = reports
        .iter()
        .filter(|p| p.stage == ImportStage::Writing)
        .collect();
    let last = writing.last().expect("writing is reported");
    assert_eq!(last.done, last.total);
    assert!(last.total >= (USERS * 2 + enrollments) as u64, "{last:?}");
    assert!(writing.windows(2).all(|w| w[0].done <= w[1].done));
    assert_eq!(
        reports.last().map(|p| p.stage),
        Some(ImportStage::Analyzing)
    );
    // SQLite builds the long tables' indexes after their rows; PostgreSQL keeps them.
    let indexing: Vec<&ImportProgress> = reports
        .iter()
        .filter(|p| p.stage == ImportStage::Indexing)
        .collect();
    if db.get_database_backend() == sea_orm::DbBackend::Sqlite {
        let last = indexing.last().expect("indexing is reported");
        assert_eq!(last.done, last.total);
        assert!(last.total >= 5, "{last:?}");
        let stages: Vec<ImportStage> = reports.iter().map(|p| p.stage).collect();
        let writing_ends = stages.iter().rposition(|s| *s == ImportStage::Writing);
        let indexing_begins = stages.iter().position(|s| *s == ImportStage::Indexing);
        assert!(writing_ends < indexing_begins, "{stages:?}");
        let plan = db
            .query_all_raw(sea_orm::Statement::from_string(
                sea_orm::DbBackend::Sqlite,
                format!(
                    "EXPLAIN QUERY PLAN SELECT id FROM enrollments WHERE learner_id = '{}'",
                    id(2, 7)
                ),
            ))
            .await
            .expect("plan");
        let detail: Vec<String> = plan
            .iter()
            .map(|row| row.try_get::<String>("", "detail").expect("detail"))
            .collect();
        assert!(
            detail
                .iter()
                .any(|d| d.contains("idx_enrollments_learner_id_id")),
            "{detail:?}"
        );
    } else {
        assert!(indexing.is_empty(), "{indexing:?}");
    }
}

/// Every index of the schema, as its definition: an import leaves them as it found them.
async fn index_definitions(db: &DatabaseConnection) -> Vec<String> {
    let sql = match db.get_database_backend() {
        sea_orm::DbBackend::Sqlite => {
            "SELECT sql AS definition FROM sqlite_schema \
             WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
        }
        _ => {
            "SELECT indexdef AS definition FROM pg_indexes \
             WHERE schemaname = current_schema() ORDER BY indexname"
        }
    };
    let rows = db
        .query_all_raw(sea_orm::Statement::from_string(
            db.get_database_backend(),
            sql,
        ))
        .await
        .expect("indexes read");
    let definitions: Vec<String> = rows
        .iter()
        .map(|row| row.try_get("", "definition").expect("definition"))
        .collect();
    assert!(
        definitions
            .iter()
            .any(|d| d.contains("idx_enrollments_learner_id_id")),
        "{definitions:?}"
    );
    definitions
}

async fn a_document_refused_at_its_last_enrollment_changes_nothing(db: &DatabaseConnection) {
    let folder = tempfile::tempdir().expect("temporary folder");
    let mut doc = generated(&password_hash());
    let last = USERS * ENROLLMENTS_PER_USER - 1;
    let unknown = id(9, 9);
    doc["accounts"][0]["enrollments"][last]["contentItemId"] = json!(unknown);
    let file = write(folder.path(), "broken.json", &doc, &CONTRACT_ORDER);
    let err = import_file(db, &file, &hasher())
        .await
        .expect_err("refused");
    let ImportError::Invalid { entry, problem } = &err else {
        panic!("{err}")
    };
    assert_eq!(
        entry,
        &format!("accounts[0].enrollments[{last}] (id \"{}\")", id(6, last))
    );
    assert_eq!(
        problem,
        &format!("contentItemId \"{unknown}\" names no content item of this account")
    );
    assert_eq!(count::<account::Entity>(db).await, 0);
    assert_eq!(count::<user::Entity>(db).await, 0);
    assert_eq!(count::<enrollment::Entity>(db).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn lists_out_of_the_contracts_order_land_the_same() {
    let db = TestConnection::create(Backend::Sqlite)
        .await
        .expect("SQLite is always available");
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = write(
        folder.path(),
        "reversed.json",
        &generated(&password_hash()),
        &reversed_order(),
    );
    let summary = import_file(&db.db, &file, &hasher())
        .await
        .expect("the reordered account imports");
    assert_eq!(summary.users, USERS);
    assert_eq!(summary.points, USERS);
    assert_eq!(
        count::<enrollment::Entity>(&db.db).await,
        (USERS * ENROLLMENTS_PER_USER) as u64
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_document_is_refused_as_the_whole_document_is() {
    let db = TestConnection::create(Backend::Sqlite)
        .await
        .expect("SQLite is always available");
    let folder = tempfile::tempdir().expect("temporary folder");
    let hash = password_hash();
    let mut brokens = Vec::new();
    // An enrollment taking a group's id: which entry is named depends on the order of
    // the checks, not on the order of the file.
    let mut duplicate = generated(&hash);
    duplicate["accounts"][0]["enrollments"][7]["id"] = json!(id(3, 2));
    brokens.push(duplicate);
    // A user given points twice, and an unknown department further up.
    let mut twice = generated(&hash);
    twice["accounts"][0]["points"][9]["userId"] = json!(id(2, 3));
    brokens.push(twice.clone());
    twice["accounts"][0]["users"][5]["departmentId"] = json!(id(1, 999));
    brokens.push(twice);
    // An id written in capitals, taken again by a later entry.
    let mut capitals = generated(&hash);
    capitals["accounts"][0]["enrollments"][3]["id"] = json!(id(6, 3).to_uppercase());
    capitals["accounts"][0]["enrollments"][8]["id"] = json!(id(6, 3));
    brokens.push(capitals);

    for (n, broken) in brokens.iter().enumerate() {
        let whole: ImportDocument = serde_json::from_value(broken.clone()).expect("parses");
        let expected = import_document(&db.db, whole, &hasher())
            .await
            .expect_err("refused")
            .to_string();
        for order in [CONTRACT_ORDER.to_vec(), reversed_order()] {
            let file = write(folder.path(), &format!("broken-{n}.json"), broken, &order);
            let streamed = import_file(&db.db, &file, &hasher())
                .await
                .expect_err("refused")
                .to_string();
            assert_eq!(streamed, expected, "document {n}");
        }
    }
    assert_eq!(count::<account::Entity>(&db.db).await, 0);
}

/// SQLite builds the long tables' indexes after a large import's rows: an import refused
/// by the database after the enrollments and results went in (a trigger refuses every
/// points row) rolls back the dropped indexes with the rows, and the same document lands
/// once the trigger is gone, with every index back.
#[tokio::test(flavor = "multi_thread")]
async fn sqlite_an_import_refused_after_its_long_tables_keeps_every_index() {
    let fixture = TestConnection::create(Backend::Sqlite)
        .await
        .expect("SQLite is always available");
    let db = &fixture.db;
    let indexes = index_definitions(db).await;
    db.execute_unprepared(
        "CREATE TRIGGER test_points_refused BEFORE INSERT ON user_points \
         BEGIN SELECT RAISE(ABORT, 'test_points_refused'); END",
    )
    .await
    .expect("trigger added");
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = generated_file(folder.path());
    assert_refused_by_database(db, &file, "test_points_refused").await;
    assert_eq!(index_definitions(db).await, indexes);

    db.execute_unprepared("DROP TRIGGER test_points_refused")
        .await
        .expect("trigger dropped");
    let summary = import_file(db, &file, &hasher())
        .await
        .expect("the account imports");
    assert_eq!(
        count::<enrollment::Entity>(db).await,
        summary.enrollments as u64
    );
    assert_eq!(index_definitions(db).await, indexes);
}

// ---------------------------------------------------------------------------------------
// PostgreSQL: the long tables copied in with their triggers off

/// Nothing of the generated account is in the database.
async fn assert_nothing_landed(db: &DatabaseConnection) {
    assert_eq!(count::<account::Entity>(db).await, 0);
    assert_eq!(count::<department::Entity>(db).await, 0);
    assert_eq!(count::<user::Entity>(db).await, 0);
    assert_eq!(count::<group_member::Entity>(db).await, 0);
    assert_eq!(count::<enrollment::Entity>(db).await, 0);
    assert_eq!(count::<user_points::Entity>(db).await, 0);
}

/// `session_replication_role` of every connection the pool hands out: the import's
/// `SET LOCAL` must end with its transaction.
async fn assert_triggers_on(db: &DatabaseConnection) {
    for _ in 0..4 {
        let row = db
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DbBackend::Postgres,
                "SELECT current_setting('session_replication_role') AS role",
            ))
            .await
            .expect("setting read")
            .expect("a row");
        assert_eq!(row.try_get::<String>("", "role").expect("role"), "origin");
    }
}

/// The database refuses the last long table's rows (a `CHECK` holds whatever the
/// triggers do): the users and enrollments already copied in are rolled back with it, and
/// the same document lands once the rule is gone.
#[tokio::test(flavor = "multi_thread")]
async fn postgresql_a_copy_failing_at_the_last_long_table_leaves_nothing() {
    let Some(fixture) = TestConnection::create(Backend::Postgres).await else {
        return;
    };
    let db = &fixture.db;
    db.execute_unprepared(
        "ALTER TABLE user_points ADD CONSTRAINT ck_test_points CHECK (points < 999)",
    )
    .await
    .expect("rule added");
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = generated_file(folder.path());
    assert_refused_by_database(db, &file, "ck_test_points").await;
    assert_triggers_on(db).await;

    db.execute_unprepared("ALTER TABLE user_points DROP CONSTRAINT ck_test_points")
        .await
        .expect("rule dropped");
    let summary = import_file(db, &file, &hasher())
        .await
        .expect("the account imports");
    assert_eq!(
        count::<user_points::Entity>(db).await,
        summary.points as u64
    );
    assert_triggers_on(db).await;
}

/// A foreign key the imported rows break is refused as its own trigger would refuse it,
/// however the long tables' keys were checked, and nothing lands. The key here points at a
/// table the import never fills.
#[tokio::test(flavor = "multi_thread")]
async fn postgresql_a_key_broken_by_the_copied_rows_refuses_the_import() {
    let Some(fixture) = TestConnection::create(Backend::Postgres).await else {
        return;
    };
    let db = &fixture.db;
    for statement in [
        "CREATE TABLE test_accounts (id uuid PRIMARY KEY)",
        "ALTER TABLE enrollments ADD CONSTRAINT fk_test_enrollments_account \
         FOREIGN KEY (account_id) REFERENCES test_accounts (id)",
    ] {
        db.execute_unprepared(statement).await.expect("key added");
    }
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = generated_file(folder.path());
    assert_refused_by_database(db, &file, "fk_test_enrollments_account").await;
    assert_triggers_on(db).await;
}
