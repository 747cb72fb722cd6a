//! The migrations go up, all the way down and up again on a fresh database, and leave
//! exactly the tables, indexes and foreign-key actions of `docs/data-model.md`, with
//! `users.role` held to the role names.
//!
//! SQLite always runs; PostgreSQL runs when `LMS_TEST_POSTGRES_URL` names a server
//! (a fresh database is created there for the test and dropped afterwards).

use std::collections::BTreeSet;

use lms_migrations::{Migrator, MigratorTrait as _, USER_ROLE_VALUES};
use lms_testkit::{Backend, TestDatabase};
use sea_orm_migration::sea_orm::{
    ConnectOptions, ConnectionTrait as _, Database, DatabaseConnection, DbBackend, DbErr,
    Statement, TransactionTrait as _,
};

const TABLES: &[&str] = &[
    "accounts",
    "api_clients",
    "api_tokens",
    "audit_log",
    "auth_revisions",
    "content_items",
    "custom_role_permissions",
    "custom_roles",
    "department_closure",
    "departments",
    "enrollments",
    "group_members",
    "groups",
    "learner_results",
    "project_authors",
    "projects",
    "result_tasks",
    "user_fields",
    "user_managed_departments",
    "user_points",
    "user_sign_ins",
    "users",
    "webhook_deliveries",
    "webhook_event_counters",
    "webhook_events",
    "webhook_subscribers",
    "webhook_subscriptions",
];

/// The named indexes of the data model, as (table, index, unique).
const INDEXES: &[(&str, &str, bool)] = &[
    ("accounts", "uq_accounts_url", true),
    ("accounts", "uq_accounts_url_key", true),
    ("departments", "idx_departments_account_id_id", false),
    ("departments", "idx_departments_account_id_code_id", false),
    (
        "departments",
        "idx_departments_account_id_lower_name_id",
        false,
    ),
    ("departments", "idx_departments_parent_id", false),
    (
        "department_closure",
        "idx_department_closure_descendant_id",
        false,
    ),
    ("custom_roles", "idx_custom_roles_account_id", false),
    ("users", "uq_users_account_id_email_key", true),
    ("users", "idx_users_account_id_id", false),
    ("users", "idx_users_department_id_id_account_id", false),
    ("users", "idx_users_account_id_contact_email_key", false),
    ("users", "uq_users_account_email_address", true),
    ("users", "idx_users_scheduled_deactivation_date_id", false),
    ("users", "idx_users_scheduled_termination_date_id", false),
    ("users", "uq_users_account_id_external_id", true),
    (
        "users",
        "idx_users_id_department_id_active_employment_ended",
        false,
    ),
    (
        "user_managed_departments",
        "idx_user_managed_departments_department_id",
        false,
    ),
    ("groups", "idx_groups_account_id_id", false),
    ("groups", "idx_groups_account_id_lower_name_id", false),
    ("groups", "idx_groups_smart_department_id", false),
    ("group_members", "idx_group_members_user_id", false),
    ("projects", "idx_projects_account_id", false),
    ("project_authors", "idx_project_authors_user_id", false),
    ("content_items", "idx_content_items_account_id_id", false),
    ("content_items", "idx_content_items_project_id", false),
    ("content_items", "idx_content_items_user_id", false),
    ("enrollments", "idx_enrollments_account_id_id", false),
    ("enrollments", "idx_enrollments_learner_id_id", false),
    ("enrollments", "idx_enrollments_content_item_id_id", false),
    (
        "enrollments",
        "idx_enrollments_account_id_access_at_id",
        false,
    ),
    ("enrollments", "idx_enrollments_account_id_due_at_id", false),
    (
        "learner_results",
        "idx_learner_results_account_id_enrollment_id",
        false,
    ),
    (
        "learner_results",
        "idx_learner_results_account_id_effective_status_enrollment_id",
        false,
    ),
    (
        "learner_results",
        "idx_learner_results_account_effective_completed_at_enrollment",
        false,
    ),
    ("result_tasks", "idx_result_tasks_account_id_id", false),
    ("user_points", "idx_user_points_account_id", false),
    ("audit_log", "idx_audit_log_account_id_created_at", false),
    ("audit_log", "idx_audit_log_actor_user_id", false),
    ("api_clients", "idx_api_clients_user_id", false),
    ("api_clients", "idx_api_clients_secret_hash", false),
    ("api_tokens", "idx_api_tokens_client_id", false),
    ("api_tokens", "idx_api_tokens_expires_at", false),
    (
        "webhook_subscribers",
        "uq_webhook_subscribers_account_id_name",
        true,
    ),
    (
        "webhook_subscribers",
        "idx_webhook_subscribers_has_events",
        false,
    ),
    (
        "webhook_subscribers",
        "idx_webhook_subscribers_confirmation_retry_at",
        false,
    ),
    (
        "webhook_subscriptions",
        "uq_webhook_subscriptions_subscriber_id_event_type",
        true,
    ),
    (
        "webhook_subscriptions",
        "idx_webhook_subscriptions_account_id_event_type",
        false,
    ),
    (
        "webhook_deliveries",
        "idx_webhook_deliveries_subscriber_id",
        false,
    ),
    ("webhook_events", "idx_webhook_events_created_at", false),
];

/// Link tables: every foreign key out of them cascades on delete; all others restrict.
const LINK_TABLES: [&str; 5] = [
    "department_closure",
    "custom_role_permissions",
    "user_managed_departments",
    "group_members",
    "project_authors",
];

/// (table, column, referenced table) for every foreign key of the data model. The audit log
/// has none: it is history, and outlives what it names.
const FOREIGN_KEYS: &[(&str, &str, &str)] = &[
    ("departments", "account_id", "accounts"),
    ("departments", "parent_id", "departments"),
    ("department_closure", "account_id", "accounts"),
    ("department_closure", "ancestor_id", "departments"),
    ("department_closure", "descendant_id", "departments"),
    ("custom_roles", "account_id", "accounts"),
    ("custom_role_permissions", "custom_role_id", "custom_roles"),
    ("users", "account_id", "accounts"),
    ("users", "custom_role_id", "custom_roles"),
    ("users", "department_id", "departments"),
    ("user_managed_departments", "user_id", "users"),
    ("user_managed_departments", "department_id", "departments"),
    ("groups", "account_id", "accounts"),
    ("groups", "smart_department_id", "departments"),
    ("group_members", "group_id", "groups"),
    ("group_members", "user_id", "users"),
    ("projects", "account_id", "accounts"),
    ("project_authors", "project_id", "projects"),
    ("project_authors", "user_id", "users"),
    ("content_items", "account_id", "accounts"),
    ("content_items", "project_id", "projects"),
    ("content_items", "user_id", "users"),
    ("enrollments", "account_id", "accounts"),
    ("enrollments", "learner_id", "users"),
    ("enrollments", "content_item_id", "content_items"),
    ("user_points", "user_id", "users"),
    ("user_points", "account_id", "accounts"),
    ("api_clients", "account_id", "accounts"),
    ("learner_results", "account_id", "accounts"),
    ("result_tasks", "account_id", "accounts"),
    ("webhook_subscribers", "account_id", "accounts"),
];

/// Keys outside the link tables that go with what they point at: a user's API clients, and
/// a client's tokens.
const CASCADING_KEYS: &[(&str, &str, &str)] = &[
    ("api_clients", "user_id", "users"),
    ("api_tokens", "client_id", "api_clients"),
    ("user_fields", "user_id", "users"),
    ("user_sign_ins", "user_id", "users"),
    ("learner_results", "enrollment_id", "enrollments"),
    ("result_tasks", "started_by", "users"),
    (
        "webhook_subscriptions",
        "subscriber_id",
        "webhook_subscribers",
    ),
    ("webhook_deliveries", "subscriber_id", "webhook_subscribers"),
    ("webhook_events", "subscriber_id", "webhook_subscribers"),
    ("webhook_event_counters", "account_id", "accounts"),
];

/// Indexes of some rows only: e-mail addresses that are set (migration 18), rows with a date
/// (migration 26), subscribers with events (migration 27).
const PARTIAL_INDEXES: &[&str] = &[
    "uq_users_account_email_address",
    "idx_enrollments_account_id_due_at_id",
    "idx_learner_results_account_effective_completed_at_enrollment",
    "idx_webhook_subscribers_has_events",
];

fn expected_indexes() -> BTreeSet<(String, String, bool)> {
    INDEXES
        .iter()
        .map(|(table, name, unique)| ((*table).to_owned(), (*name).to_owned(), *unique))
        .collect()
}

/// The key PostgreSQL keeps by triggers instead (migration 28): a delete of many
/// enrollments removes their results in one statement, not by a query per row.
const KEPT_BY_TRIGGERS: (&str, &str, &str) = ("learner_results", "enrollment_id", "enrollments");

fn expected_foreign_keys(backend: DbBackend) -> BTreeSet<(String, String, String, String)> {
    FOREIGN_KEYS
        .iter()
        .chain(CASCADING_KEYS)
        .filter(|key| backend != DbBackend::Postgres || **key != KEPT_BY_TRIGGERS)
        .map(|(table, column, target)| {
            let action = if LINK_TABLES.contains(table)
                || CASCADING_KEYS.contains(&(*table, *column, *target))
            {
                "CASCADE"
            } else {
                "RESTRICT"
            };
            (
                (*table).to_owned(),
                (*column).to_owned(),
                (*target).to_owned(),
                action.to_owned(),
            )
        })
        .collect()
}

fn expected_tables() -> BTreeSet<String> {
    TABLES.iter().map(|t| (*t).to_owned()).collect()
}

/// Runs `sql`, every column of which must be text, and returns the rows.
async fn strings(db: &DatabaseConnection, sql: &str) -> Vec<Vec<String>> {
    let backend = db.get_database_backend();
    let rows = db
        .query_all_raw(Statement::from_string(backend, sql))
        .await
        .expect(sql);
    rows.iter()
        .map(|row| {
            (0..row.column_names().len())
                .map(|i| row.try_get_by_index::<String>(i).expect(sql))
                .collect()
        })
        .collect()
}

/// The application tables (without sea-orm-migration's own `seaql_migrations`).
async fn tables(db: &DatabaseConnection) -> BTreeSet<String> {
    let sql = match db.get_database_backend() {
        DbBackend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        }
        DbBackend::Postgres => {
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
        }
        other => panic!("unsupported backend {other:?}"),
    };
    strings(db, sql)
        .await
        .into_iter()
        .map(|mut row| row.remove(0))
        .filter(|name| name != "seaql_migrations")
        .collect()
}

/// Named (not primary-key) indexes as (table, index, unique).
async fn indexes(db: &DatabaseConnection) -> BTreeSet<(String, String, bool)> {
    let sql = match db.get_database_backend() {
        DbBackend::Sqlite => {
            "SELECT m.tbl_name, il.name, CASE il.\"unique\" WHEN 1 THEN 'true' ELSE 'false' END \
             FROM sqlite_master m JOIN pragma_index_list(m.name) il \
             WHERE m.type = 'table' AND il.origin = 'c'"
        }
        DbBackend::Postgres => {
            "SELECT t.relname::text, i.relname::text, \
                    CASE WHEN x.indisunique THEN 'true' ELSE 'false' END \
             FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
             JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace \
             WHERE n.nspname = current_schema() AND NOT x.indisprimary"
        }
        other => panic!("unsupported backend {other:?}"),
    };
    strings(db, sql)
        .await
        .into_iter()
        .map(|row| (row[0].clone(), row[1].clone(), row[2] == "true"))
        .filter(|(table, _, _)| table != "seaql_migrations")
        .collect()
}

/// Foreign keys as (table, column, referenced table, ON DELETE action).
async fn foreign_keys(db: &DatabaseConnection) -> BTreeSet<(String, String, String, String)> {
    let sql = match db.get_database_backend() {
        DbBackend::Sqlite => {
            "SELECT m.name, fk.\"from\", fk.\"table\", fk.on_delete \
             FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) fk \
             WHERE m.type = 'table'"
        }
        DbBackend::Postgres => {
            "SELECT kcu.table_name::text, kcu.column_name::text, ccu.table_name::text, \
                    rc.delete_rule::text \
             FROM information_schema.referential_constraints rc \
             JOIN information_schema.key_column_usage kcu \
               ON kcu.constraint_name = rc.constraint_name \
              AND kcu.constraint_schema = rc.constraint_schema \
             JOIN information_schema.constraint_column_usage ccu \
               ON ccu.constraint_name = rc.unique_constraint_name \
              AND ccu.constraint_schema = rc.unique_constraint_schema \
             WHERE rc.constraint_schema = current_schema()"
        }
        other => panic!("unsupported backend {other:?}"),
    };
    strings(db, sql)
        .await
        .into_iter()
        .map(|row| {
            (
                row[0].clone(),
                row[1].clone(),
                row[2].clone(),
                row[3].clone(),
            )
        })
        .collect()
}

/// The indexes that hold only some rows of their table (`CREATE INDEX … WHERE`).
async fn partial_indexes(db: &DatabaseConnection) -> BTreeSet<String> {
    let sql = match db.get_database_backend() {
        DbBackend::Sqlite => {
            "SELECT il.name FROM sqlite_master m JOIN pragma_index_list(m.name) il \
             WHERE m.type = 'table' AND il.partial = 1"
        }
        DbBackend::Postgres => {
            "SELECT i.relname::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
             JOIN pg_namespace n ON n.oid = i.relnamespace \
             WHERE n.nspname = current_schema() AND x.indpred IS NOT NULL"
        }
        other => panic!("unsupported backend {other:?}"),
    };
    strings(db, sql)
        .await
        .into_iter()
        .map(|mut row| row.remove(0))
        .collect()
}

/// Applies every migration before `name` (which stays pending), so a test can write rows
/// under the schema it changes.
async fn up_to_before(db: &DatabaseConnection, name: &str) {
    let before = Migrator::migrations()
        .iter()
        .position(|m| m.name() == name)
        .unwrap_or_else(|| panic!("{name} is listed"));
    Migrator::up(db, Some(before as u32))
        .await
        .unwrap_or_else(|err| panic!("up to {name}: {err}"));
}

async fn assert_full_schema(db: &DatabaseConnection) {
    assert_eq!(tables(db).await, expected_tables());
    assert_eq!(indexes(db).await, expected_indexes());
    assert_eq!(
        partial_indexes(db).await,
        PARTIAL_INDEXES
            .iter()
            .map(|name| (*name).to_owned())
            .collect(),
        "the partial indexes"
    );
    assert_eq!(
        foreign_keys(db).await,
        expected_foreign_keys(db.get_database_backend())
    );
    let status = Migrator::get_pending_migrations(db)
        .await
        .expect("pending migrations");
    assert!(status.is_empty(), "no migration may stay pending after up");
}

const ACCOUNT: &str = "0192a000-0000-7000-8000-000000000001";
const ROOT: &str = "0192a000-0000-7000-8000-000000000002";
const USER: &str = "0192a000-0000-7000-8000-000000000003";

const PROJECT: &str = "0192a000-0000-7000-8000-0000000000b1";
const ITEM: &str = "0192a000-0000-7000-8000-0000000000b2";

/// Inserts a project and its content item `ITEM`, added by `USER` (inserted before).
async fn insert_item(db: &DatabaseConnection, now: &str) {
    for statement in [
        format!(
            "INSERT INTO projects (id, account_id, name) VALUES ('{PROJECT}', '{ACCOUNT}', 'P')"
        ),
        format!(
            "INSERT INTO content_items (id, account_id, project_id, title, description, user_id, \
                                        added_at, content_type, view_url) \
             VALUES ('{ITEM}', '{ACCOUNT}', '{PROJECT}', 'T', '', '{USER}', '{now}', 'Course', NULL)"
        ),
    ] {
        db.execute_unprepared(&statement).await.expect(&statement);
    }
}

/// Inserts a user with `role` (and, the first time, its account and department) by hand,
/// as SQL typed into a console would.
async fn insert_user(db: &DatabaseConnection, id: &str, role: &str) -> Result<(), DbErr> {
    let now = "2026-11-23 06:34:57+00:00";
    for statement in [
        format!(
            "INSERT INTO accounts (id, url, revision, created_at) \
             SELECT '{ACCOUNT}', 'https://acme.example.com', 0, '{now}' \
             WHERE NOT EXISTS (SELECT 1 FROM accounts)"
        ),
        format!(
            "INSERT INTO departments (id, account_id, parent_id, name, code, created_at, updated_at) \
             SELECT '{ROOT}', '{ACCOUNT}', NULL, 'Acme', NULL, '{now}', '{now}' \
             WHERE NOT EXISTS (SELECT 1 FROM departments)"
        ),
    ] {
        db.execute_unprepared(&statement).await.expect(&statement);
    }
    db.execute_unprepared(&format!(
        "INSERT INTO users (id, account_id, email, email_key, password_hash, role, \
                            custom_role_id, department_id, active, created_at, updated_at) \
         VALUES ('{id}', '{ACCOUNT}', '{id}@acme.example.com', '{id}@acme.example.com', 'x', \
                 '{role}', NULL, '{ROOT}', TRUE, '{now}', '{now}')"
    ))
    .await
    .map(drop)
}

async fn set_role(db: &DatabaseConnection, id: &str, role: &str) -> Result<(), DbErr> {
    db.execute_unprepared(&format!(
        "UPDATE users SET role = '{role}' WHERE id = '{id}'"
    ))
    .await
    .map(drop)
}

/// Every role name of the contract is stored; anything else is refused on insert and on
/// update, naming the rule.
async fn assert_role_values_checked(db: &DatabaseConnection) {
    for (n, role) in USER_ROLE_VALUES.iter().enumerate() {
        let id = format!("0192a000-0000-7000-8000-00000000010{n}");
        insert_user(db, &id, role).await.expect(role);
    }
    let refused = insert_user(db, USER, "superuser")
        .await
        .expect_err("an unknown role is refused on insert");
    assert!(refused.to_string().contains("ck_users_role"), "{refused}");
    let refused = set_role(db, "0192a000-0000-7000-8000-000000000100", "Learner")
        .await
        .expect_err("an unknown role is refused on update");
    assert!(refused.to_string().contains("ck_users_role"), "{refused}");
    set_role(db, "0192a000-0000-7000-8000-000000000100", "learner")
        .await
        .expect("a known role is accepted on update");
    clear(db).await;
}

async fn clear(db: &DatabaseConnection) {
    for table in ["users", "departments", "accounts"] {
        db.execute_unprepared(&format!("DELETE FROM {table}"))
            .await
            .expect(table);
    }
}

/// Undoes the migrations from the last one down to `name`, included.
async fn step_down_through(db: &DatabaseConnection, name: &str) {
    let migrations = Migrator::migrations();
    let position = migrations
        .iter()
        .position(|m| m.name() == name)
        .unwrap_or_else(|| panic!("{name} is listed"));
    let steps = u32::try_from(migrations.len() - position).expect("few migrations");
    Migrator::down(db, Some(steps))
        .await
        .unwrap_or_else(|err| panic!("step down through {name}: {err}"));
}

/// The check on role values comes and goes with its migration.
async fn role_check_steps_down_and_up(db: &DatabaseConnection) {
    step_down_through(db, "m20261123_000006_user_role_values").await;
    insert_user(db, USER, "superuser")
        .await
        .expect("without the check, any value is stored");
    clear(db).await;
    Migrator::up(db, None)
        .await
        .expect("step up the role check");
    assert_role_values_checked(db).await;
}

/// Accounts that differ only by scheme stop the URL-key migration, named, with nothing
/// changed; once one is renamed it goes through, and the index refuses such twins after.
async fn url_key_twins_are_named(db: &DatabaseConnection) {
    step_down_through(db, "m20261123_000010_account_url_keys").await;
    let insert = |id: &str, url: &str| {
        format!(
            "INSERT INTO accounts (id, url, revision, created_at) \
             VALUES ('{id}', '{url}', 0, '2026-11-23 06:34:57+00:00')"
        )
    };
    let twin = "0192a000-0000-7000-8000-000000000009";
    for statement in [
        insert(ACCOUNT, "https://acme.example.com"),
        insert(twin, "http://acme.example.com"),
    ] {
        db.execute_unprepared(&statement).await.expect(&statement);
    }
    let refused = Migrator::up(db, None)
        .await
        .expect_err("twins cannot take the index");
    assert!(
        refused
            .to_string()
            .contains("http://acme.example.com and https://acme.example.com"),
        "{refused}"
    );
    assert!(
        !indexes(db)
            .await
            .iter()
            .any(|(_, name, _)| name == "uq_accounts_url_key")
    );
    db.execute_unprepared(&format!(
        "UPDATE accounts SET url = 'http://acme-old.example.com' WHERE id = '{twin}'"
    ))
    .await
    .expect("rename the twin");
    Migrator::up(db, None)
        .await
        .expect("up once the twin is renamed");
    assert_full_schema(db).await;
    let refused = db
        .execute_unprepared(&insert(USER, "http://acme.example.com"))
        .await
        .expect_err("the index refuses a twin");
    assert!(
        refused.to_string().contains("uq_accounts_url_key"),
        "{refused}"
    );
    clear(db).await;
}

/// Up, all the way down, up again; the schema is complete after each up and empty after down.
async fn round_trip(db: &DatabaseConnection) {
    Migrator::up(db, None).await.expect("first up");
    assert_full_schema(db).await;
    assert_role_values_checked(db).await;
    role_check_steps_down_and_up(db).await;
    url_key_twins_are_named(db).await;
    // Up again is a no-op.
    Migrator::up(db, None).await.expect("repeated up");

    Migrator::down(db, None).await.expect("down");
    assert_eq!(
        tables(db).await,
        BTreeSet::new(),
        "down must drop every table up made"
    );
    assert_eq!(indexes(db).await, BTreeSet::new());
    assert_eq!(
        Migrator::get_applied_migrations(db)
            .await
            .expect("applied")
            .len(),
        0,
        "down must unrecord every migration"
    );

    Migrator::up(db, None).await.expect("second up");
    assert_full_schema(db).await;

    // Step by step works too.
    let count = Migrator::migrations().len();
    for _ in 0..count {
        Migrator::down(db, Some(1)).await.expect("one step down");
    }
    assert_eq!(tables(db).await, BTreeSet::new());
    for _ in 0..count {
        Migrator::up(db, Some(1)).await.expect("one step up");
    }
    assert_full_schema(db).await;
}

/// `round_trip` on a fresh, empty database of `backend`.
async fn round_trip_on(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    round_trip(&db).await;
    db.close().await.expect("close");
}

#[tokio::test]
async fn sqlite_migrations_go_up_down_and_up_again() {
    round_trip_on(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_migrations_go_up_down_and_up_again() {
    round_trip_on(Backend::Postgres).await;
}

/// An audit row written under the old schema (with keys) survives the migration that drops
/// them, and afterwards a row may name a user that is gone.
async fn audit_rows_survive_losing_their_keys(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    up_to_before(&db, "m20261123_000011_audit_log_history").await;
    insert_user(&db, USER, "learner").await.expect("user");
    let audit = |id: &str, actor: &str| {
        format!(
            "INSERT INTO audit_log (id, account_id, actor_user_id, action, entity_type, \
                                    entity_id, request_id, before, after, created_at) \
             VALUES ('{id}', '{ACCOUNT}', '{actor}', 'user.update', 'user', '{actor}', NULL, \
                     NULL, '{{}}', '2026-11-23 06:34:57+00:00')"
        )
    };
    const OLD: &str = "0192a000-0000-7000-8000-0000000000a1";
    const NEW: &str = "0192a000-0000-7000-8000-0000000000a2";
    const NOBODY: &str = "0192a000-0000-7000-8000-0000000000ff";
    db.execute_unprepared(&audit(OLD, USER))
        .await
        .expect("an audit row under the old schema");
    assert!(
        db.execute_unprepared(&audit(NEW, NOBODY)).await.is_err(),
        "the old schema refuses an actor that does not exist"
    );

    Migrator::up(&db, None)
        .await
        .expect("the history migration");
    assert_full_schema(&db).await;
    db.execute_unprepared(&audit(NEW, NOBODY))
        .await
        .expect("history may name a user that is gone");
    let rows = strings(
        &db,
        "SELECT CAST(id AS TEXT), CAST(actor_user_id AS TEXT) FROM audit_log ORDER BY 1",
    )
    .await;
    assert_eq!(
        rows,
        [
            vec![OLD.to_owned(), USER.to_owned()],
            vec![NEW.to_owned(), NOBODY.to_owned()]
        ]
    );
    db.close().await.expect("close");
}

#[tokio::test]
async fn sqlite_audit_rows_survive_losing_their_keys() {
    audit_rows_survive_losing_their_keys(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_audit_rows_survive_losing_their_keys() {
    audit_rows_survive_losing_their_keys(Backend::Postgres).await;
}

/// An enrollment written before the enrollment dates keeps working: no access or due date
/// (read as "from its creation", "never due") and not locked after a due date.
async fn enrollments_survive_gaining_their_dates(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    up_to_before(&db, "m20261123_000014_enrollment_dates").await;
    insert_user(&db, USER, "learner").await.expect("user");
    const ENROLLMENT: &str = "0192a000-0000-7000-8000-0000000000b3";
    let now = "2026-11-23 06:34:57+00:00";
    insert_item(&db, now).await;
    for statement in [format!(
        "INSERT INTO enrollments (id, account_id, learner_id, content_item_id, created_at) \
             VALUES ('{ENROLLMENT}', '{ACCOUNT}', '{USER}', '{ITEM}', '{now}')"
    )] {
        db.execute_unprepared(&statement).await.expect(&statement);
    }
    Migrator::up(&db, None).await.expect("the dates migration");
    assert_full_schema(&db).await;
    let rows = strings(
        &db,
        "SELECT CAST(id AS TEXT), \
                CASE WHEN access_at IS NULL THEN 'no access date' ELSE 'access date' END, \
                CASE WHEN due_at IS NULL THEN 'no due date' ELSE 'due date' END, \
                CASE WHEN lock_after_due THEN 'locks' ELSE 'open' END \
         FROM enrollments",
    )
    .await;
    // Migration 19 gives every enrollment without an access date its creation time.
    assert_eq!(
        rows,
        [vec![
            ENROLLMENT.to_owned(),
            "access date".to_owned(),
            "no due date".to_owned(),
            "open".to_owned()
        ]]
    );
    db.close().await.expect("close");
}

#[tokio::test]
async fn sqlite_enrollments_survive_gaining_their_dates() {
    enrollments_survive_gaining_their_dates(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_enrollments_survive_gaining_their_dates() {
    enrollments_survive_gaining_their_dates(Backend::Postgres).await;
}

/// Users made before migration 17 keep working: their login is their e-mail address (no
/// address apart), their status is what `active` said, and they have no other fields.
async fn users_survive_gaining_their_profile(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    up_to_before(&db, "m20261126_000017_user_directory_profile").await;
    insert_user(&db, USER, "learner").await.expect("user");
    Migrator::up(&db, None)
        .await
        .expect("the profile migration");
    assert_full_schema(&db).await;
    let rows = strings(
        &db,
        "SELECT CAST(id AS TEXT), \
                CASE WHEN contact_email IS NULL AND contact_email_key IS NULL \
                     THEN 'login is the address' ELSE 'address apart' END, \
                CASE WHEN employment_ended THEN 'ended' ELSE 'employed' END, \
                (SELECT CAST(COUNT(*) AS TEXT) FROM user_fields), \
                (SELECT CAST(COUNT(*) AS TEXT) FROM user_sign_ins) \
         FROM users",
    )
    .await;
    assert_eq!(
        rows,
        [vec![
            USER.to_owned(),
            "login is the address".to_owned(),
            "employed".to_owned(),
            "0".to_owned(),
            "0".to_owned(),
        ]]
    );
    db.close().await.expect("close");
}

#[tokio::test]
async fn sqlite_users_survive_gaining_their_profile() {
    users_survive_gaining_their_profile(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_users_survive_gaining_their_profile() {
    users_survive_gaining_their_profile(Backend::Postgres).await;
}

/// A database migrated through the learner results (the release before webhooks) gains the
/// webhook tables and keeps its rows.
async fn a_database_with_learner_results_gains_webhooks(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    let before_webhooks = Migrator::migrations()
        .iter()
        .position(|m| m.name() == "m20261127_000020_webhooks")
        .expect("the webhooks migration is listed");
    assert_eq!(
        Migrator::migrations()[before_webhooks - 1].name(),
        "m20261127_000019_learner_results",
        "webhooks come right after the learner results"
    );
    Migrator::up(&db, Some(before_webhooks as u32))
        .await
        .expect("up to the learner results");
    insert_user(&db, USER, "learner").await.expect("user");
    Migrator::up(&db, None)
        .await
        .expect("the webhooks migration");
    assert_full_schema(&db).await;
    let users = strings(&db, "SELECT CAST(id AS TEXT) FROM users").await;
    assert_eq!(users, [vec![USER.to_owned()]]);
    db.close().await.expect("close");
}

#[tokio::test]
async fn sqlite_a_database_with_learner_results_gains_webhooks() {
    a_database_with_learner_results_gains_webhooks(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_a_database_with_learner_results_gains_webhooks() {
    a_database_with_learner_results_gains_webhooks(Backend::Postgres).await;
}

/// An account that had webhook subscriptions before migration 25 gains a counter row with a
/// known (non-zero) subscriptions revision: the core reads "no counter row" as "no
/// subscriptions".
async fn subscriptions_gain_their_revision(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    up_to_before(&db, "m20261129_000025_webhook_subscriptions_revision").await;
    insert_user(&db, USER, "account_owner").await.expect("user");
    let now = "2026-11-29 00:30:00+00:00";
    let subscriber = "0192a000-0000-7000-8000-000000000004";
    for statement in [
        format!(
            "INSERT INTO webhook_subscribers (id, account_id, name, callback_url, secret, active, \
                 confirmed, confirmation_attempts, pending_events, failures, created_at, updated_at) \
             VALUES ('{subscriber}', '{ACCOUNT}', 'crm', 'https://crm.example.com/hook', NULL, \
                 TRUE, TRUE, 0, 0, 0, '{now}', '{now}')"
        ),
        format!(
            "INSERT INTO webhook_subscriptions (id, subscriber_id, account_id, event_type, \
                 user_ids, course_ids, course_item_ids, created_at) \
             VALUES ('0192a000-0000-7000-8000-000000000005', '{subscriber}', '{ACCOUNT}', \
                 'USER_REGISTERED', '[]', '[]', '[]', '{now}')"
        ),
    ] {
        db.execute_unprepared(&statement).await.expect(&statement);
    }
    Migrator::up(&db, None)
        .await
        .expect("the revision migration");
    assert_full_schema(&db).await;
    let counters = strings(
        &db,
        "SELECT CAST(last_seq AS TEXT), \
                CASE WHEN subscriptions_revision <> 0 THEN 'known' ELSE 'not known' END \
         FROM webhook_event_counters",
    )
    .await;
    assert_eq!(counters, [vec!["0".to_owned(), "known".to_owned()]]);
    db.close().await.expect("close");
}

#[tokio::test]
async fn sqlite_subscriptions_gain_their_revision() {
    subscriptions_gain_their_revision(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_subscriptions_gain_their_revision() {
    subscriptions_gain_their_revision(Backend::Postgres).await;
}

/// Subscribers that had stored events before migration 27 keep them and gain the raised
/// flag the poll finds them by; a subscriber without events gains a lowered one.
async fn subscribers_with_events_gain_the_flag(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    up_to_before(&db, "m20261129_000027_webhook_events_flag").await;
    insert_user(&db, USER, "account_owner").await.expect("user");
    let now = "2026-11-29 00:30:00+00:00";
    let (busy, idle) = (
        "0192a000-0000-7000-8000-000000000004",
        "0192a000-0000-7000-8000-000000000006",
    );
    let mut statements = Vec::new();
    for (subscriber, name, pending) in [(busy, "crm", 2), (idle, "erp", 0)] {
        statements.push(format!(
            "INSERT INTO webhook_subscribers (id, account_id, name, callback_url, secret, active, \
                 confirmed, confirmation_attempts, pending_events, failures, created_at, updated_at) \
             VALUES ('{subscriber}', '{ACCOUNT}', '{name}', 'https://{name}.example.com/hook', NULL, \
                 TRUE, TRUE, 0, {pending}, 0, '{now}', '{now}')"
        ));
    }
    for seq in 1..=2 {
        statements.push(format!(
            "INSERT INTO webhook_events (id, account_id, subscriber_id, seq, event_type, payload, \
                 delivery_id, created_at) \
             VALUES ('0192a000-0000-7000-8000-00000000001{seq}', '{ACCOUNT}', '{busy}', {seq}, \
                 'USER_REGISTERED', '{{}}', NULL, '{now}')"
        ));
    }
    for statement in statements {
        db.execute_unprepared(&statement).await.expect(&statement);
    }
    Migrator::up(&db, None).await.expect("the flag migration");
    assert_full_schema(&db).await;
    let flags = strings(
        &db,
        "SELECT name, CASE WHEN has_events THEN 'flagged' ELSE 'not flagged' END, \
                CAST((SELECT COUNT(*) FROM webhook_events e WHERE e.subscriber_id = s.id) AS TEXT) \
         FROM webhook_subscribers s ORDER BY name",
    )
    .await;
    assert_eq!(
        flags,
        [
            vec!["crm".to_owned(), "flagged".to_owned(), "2".to_owned()],
            vec!["erp".to_owned(), "not flagged".to_owned(), "0".to_owned()],
        ]
    );
    db.close().await.expect("close");
}

#[tokio::test]
async fn sqlite_subscribers_with_events_gain_the_flag() {
    subscribers_with_events_gain_the_flag(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_subscribers_with_events_gain_the_flag() {
    subscribers_with_events_gain_the_flag(Backend::Postgres).await;
}

/// Migration 29 on a database with a delivery in flight: the delivery learns the numbers of
/// the events it carries, the events keep their subscriber, number and payload without `id`
/// and `delivery_id`, and going back gives every event an id and the delivery its events
/// again.
async fn deliveries_in_flight_keep_their_events(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    up_to_before(&db, "m20261129_000029_webhook_events_by_seq").await;
    insert_user(&db, USER, "account_owner").await.expect("user");
    let now = "2026-11-29 21:00:00+00:00";
    let (subscriber, delivery) = (
        "0192a000-0000-7000-8000-000000000004",
        "0192a000-0000-7000-8000-000000000005",
    );
    let mut statements = vec![
        format!(
            "INSERT INTO webhook_subscribers (id, account_id, name, callback_url, secret, active, \
                 confirmed, confirmation_attempts, failures, created_at, updated_at, has_events) \
             VALUES ('{subscriber}', '{ACCOUNT}', 'crm', 'https://crm.example.com/hook', NULL, \
                 TRUE, TRUE, 0, 0, '{now}', '{now}', TRUE)"
        ),
        format!(
            "INSERT INTO webhook_deliveries (id, subscriber_id, event_type, body, attempts, events, \
                 created_at) \
             VALUES ('{delivery}', '{subscriber}', 'USER_REGISTERED', '{{}}', 2, 3, '{now}')"
        ),
    ];
    for seq in 1..=5 {
        let carrier = if seq <= 3 {
            format!("'{delivery}'")
        } else {
            "NULL".to_owned()
        };
        statements.push(format!(
            "INSERT INTO webhook_events (id, account_id, subscriber_id, seq, event_type, payload, \
                 delivery_id, created_at) \
             VALUES ('0192a000-0000-7000-8000-00000000001{seq}', '{ACCOUNT}', '{subscriber}', \
                 {seq}, 'USER_REGISTERED', '{{\"n\":{seq}}}', {carrier}, '{now}')"
        ));
    }
    for statement in statements {
        db.execute_unprepared(&statement).await.expect(&statement);
    }
    Migrator::up(&db, None).await.expect("migration 29");
    assert_full_schema(&db).await;
    let ranges = strings(
        &db,
        "SELECT CAST(first_seq AS TEXT), CAST(last_seq AS TEXT), CAST(events AS TEXT) \
         FROM webhook_deliveries",
    )
    .await;
    assert_eq!(ranges, [vec!["1", "3", "3"]]);
    let events = strings(
        &db,
        "SELECT CAST(seq AS TEXT), payload FROM webhook_events ORDER BY subscriber_id, seq",
    )
    .await;
    let expected: Vec<Vec<String>> = (1..=5)
        .map(|seq| vec![seq.to_string(), format!("{{\"n\":{seq}}}")])
        .collect();
    assert_eq!(events, expected);

    step_down_through(&db, "m20261129_000029_webhook_events_by_seq").await;
    let carried = strings(
        &db,
        "SELECT CAST(seq AS TEXT), COALESCE(CAST(delivery_id AS TEXT), 'none') \
         FROM webhook_events ORDER BY seq",
    )
    .await;
    let carriers: Vec<&str> = carried.iter().map(|row| row[1].as_str()).collect();
    assert_eq!(carriers, [delivery, delivery, delivery, "none", "none"]);
    let ids = strings(
        &db,
        "SELECT CAST(COUNT(DISTINCT id) AS TEXT) FROM webhook_events WHERE id IS NOT NULL",
    )
    .await;
    assert_eq!(ids, [vec!["5"]], "every event has an id of its own");
    Migrator::up(&db, None).await.expect("migration 29 again");
    assert_full_schema(&db).await;
    db.close().await.expect("close");
}

#[tokio::test]
async fn sqlite_deliveries_in_flight_keep_their_events() {
    deliveries_in_flight_keep_their_events(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_deliveries_in_flight_keep_their_events() {
    deliveries_in_flight_keep_their_events(Backend::Postgres).await;
}

/// Results written before migration 28 go with their enrollment after it, on both backends
/// (by the key's cascade on SQLite, by the statement trigger on PostgreSQL): a delete of
/// several enrollments takes every result of them and no other, and an enrollment's id
/// cannot change under its result.
async fn results_go_with_their_enrollments(backend: Backend) {
    let Some(database) = TestDatabase::create_empty(backend).await else {
        return;
    };
    let db = database.connect().await;
    up_to_before(&db, "m20261129_000028_results_cascade_by_statement").await;
    insert_user(&db, USER, "learner").await.expect("user");
    const ENROLLMENTS: [&str; 3] = [
        "0192a000-0000-7000-8000-0000000000c1",
        "0192a000-0000-7000-8000-0000000000c2",
        "0192a000-0000-7000-8000-0000000000c3",
    ];
    let now = "2026-11-29 17:00:00+00:00";
    insert_item(&db, now).await;
    let mut statements = Vec::new();
    for enrollment in ENROLLMENTS {
        statements.push(format!(
            "INSERT INTO enrollments (id, account_id, learner_id, content_item_id, created_at) \
             VALUES ('{enrollment}', '{ACCOUNT}', '{USER}', '{ITEM}', '{now}')"
        ));
        statements.push(format!(
            "INSERT INTO learner_results (enrollment_id, account_id) \
             VALUES ('{enrollment}', '{ACCOUNT}')"
        ));
    }
    for statement in statements {
        db.execute_unprepared(&statement).await.expect(&statement);
    }
    Migrator::up(&db, None)
        .await
        .expect("the cascade migration");
    assert_full_schema(&db).await;

    db.execute_unprepared(&format!(
        "DELETE FROM enrollments WHERE id IN ('{}', '{}')",
        ENROLLMENTS[0], ENROLLMENTS[2]
    ))
    .await
    .expect("a delete of two enrollments");
    let results = strings(
        &db,
        "SELECT CAST(enrollment_id AS TEXT) FROM learner_results ORDER BY 1",
    )
    .await;
    assert_eq!(results, [vec![ENROLLMENTS[1].to_owned()]]);

    let moved = db
        .execute_unprepared(&format!(
            "UPDATE enrollments SET id = '0192a000-0000-7000-8000-0000000000c9' WHERE id = '{}'",
            ENROLLMENTS[1]
        ))
        .await;
    assert!(
        moved.is_err(),
        "an enrollment with a result keeps its id: {moved:?}"
    );
    // A change that keeps the id passes the trigger.
    db.execute_unprepared(&format!(
        "UPDATE enrollments SET id = id, lock_after_due = TRUE WHERE id = '{}'",
        ENROLLMENTS[1]
    ))
    .await
    .expect("an update that keeps the id");

    step_down_through(&db, "m20261129_000028_results_cascade_by_statement").await;
    let (table, column, target) = KEPT_BY_TRIGGERS;
    assert!(
        foreign_keys(&db).await.contains(&(
            table.to_owned(),
            column.to_owned(),
            target.to_owned(),
            "CASCADE".to_owned()
        )),
        "down puts the key back"
    );
    db.execute_unprepared(&format!(
        "DELETE FROM enrollments WHERE id = '{}'",
        ENROLLMENTS[1]
    ))
    .await
    .expect("a delete under the key");
    assert_eq!(
        strings(
            &db,
            "SELECT CAST(enrollment_id AS TEXT) FROM learner_results"
        )
        .await,
        Vec::<Vec<String>>::new()
    );
    db.close().await.expect("close");
}

#[tokio::test]
async fn sqlite_results_go_with_their_enrollments() {
    results_go_with_their_enrollments(Backend::Sqlite).await;
}

#[tokio::test]
async fn postgres_results_go_with_their_enrollments() {
    results_go_with_their_enrollments(Backend::Postgres).await;
}

/// On SQLite, sea-orm-migration runs a migration statement by statement on whichever pooled
/// connection is free unless the migration asks for a transaction, and a connection whose
/// cached schema predates a `DROP INDEX` made on another refuses to create that index again
/// ("already exists", at prepare time). Migration 26 drops and makes its indexes again under
/// the same names; a pool whose every connection has read the schema must still apply it.
#[tokio::test]
async fn sqlite_a_pool_of_warm_connections_applies_the_index_rebuild() {
    upgrade_through_a_warm_pool("m20261129_000026_partial_date_indexes").await;
}

/// The same for every migration: an upgrade from any earlier version of the schema, as a
/// process start applies it ([`lms_migrations::migrate`]) through its pool, each
/// connection of which has read the schema as it was.
#[tokio::test]
async fn sqlite_a_pool_of_warm_connections_applies_every_upgrade() {
    for migration in Migrator::migrations().iter().skip(1) {
        upgrade_through_a_warm_pool(migration.name()).await;
    }
}

async fn upgrade_through_a_warm_pool(first_pending: &str) {
    let database = TestDatabase::create_empty(Backend::Sqlite)
        .await
        .expect("SQLite is always there");
    // The service's pool size (`lms_core::db`).
    let mut options = ConnectOptions::new(format!("{}?mode=rwc", database.url()));
    options.sqlx_logging(false).max_connections(4);
    let db = Database::connect(options).await.expect("the pool opens");
    up_to_before(&db, first_pending).await;
    // Four transactions at once hold four connections; each reads the schema, then all go
    // back to the pool, which hands them out in turn.
    let mut open = Vec::new();
    for _ in 0..4 {
        open.push(db.begin().await.expect("begin"));
    }
    for txn in &open {
        txn.query_one_raw(Statement::from_string(
            DbBackend::Sqlite,
            "SELECT count(*) FROM accounts",
        ))
        .await
        .expect("a read");
    }
    for txn in open {
        txn.commit().await.expect("commit");
    }
    lms_migrations::migrate(&db)
        .await
        .unwrap_or_else(|err| panic!("the upgrade from {first_pending} on: {err}"));
    assert_full_schema(&db).await;
    db.close().await.expect("close");
}
