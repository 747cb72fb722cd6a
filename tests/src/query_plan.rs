//! Query-plan checks: record every SQL statement the core runs while a scenario plays, then ask
//! the database how it would run each one, and report those that read a large table whole or
//! sort it.
//!
//! Statements are recorded from SeaORM's `tracing` spans (`db.statement`), so the check sees
//! exactly what the service sends, however the service builds it. Plans are asked with
//! `EXPLAIN QUERY PLAN` on SQLite and `EXPLAIN` of a prepared statement forced to its generic
//! plan on PostgreSQL (the plan every parameter value gets), both over analysed tables.

use std::{
    collections::BTreeSet,
    sync::{
        Mutex, OnceLock,
        atomic::{AtomicBool, Ordering},
    },
};

use sea_orm::{
    ConnectionTrait as _, DatabaseConnection, DbBackend, Statement, TransactionTrait as _,
};
use tracing::{
    Subscriber,
    field::{Field, Visit},
    span,
};
use tracing_subscriber::{Layer, layer::Context, prelude::*, registry::LookupSpan};

/// Tables that grow with the account: reading one whole, or sorting it, is a defect.
pub const LARGE_TABLES: [&str; 9] = [
    "departments",
    "users",
    "enrollments",
    "learner_results",
    "group_members",
    "department_closure",
    "user_points",
    "user_fields",
    "user_sign_ins",
];

static RECORDING: AtomicBool = AtomicBool::new(false);
static STATEMENTS: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Installs the recorder as this process's subscriber (once; later calls do nothing).
pub fn install_recorder() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let _ = tracing_subscriber::registry()
            .with(StatementRecorder)
            .try_init();
    });
}

/// Records the statements run while `scenario` runs (by anyone in this process).
pub async fn record<F: Future<Output = ()>>(scenario: F) -> BTreeSet<String> {
    STATEMENTS.lock().expect("recorder").clear();
    RECORDING.store(true, Ordering::SeqCst);
    scenario.await;
    RECORDING.store(false, Ordering::SeqCst);
    std::mem::take(&mut *STATEMENTS.lock().expect("recorder"))
}

struct StatementRecorder;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for StatementRecorder {
    fn on_new_span(&self, attrs: &span::Attributes<'_>, _: &span::Id, _: Context<'_, S>) {
        if RECORDING.load(Ordering::Relaxed) {
            attrs.record(&mut StatementVisitor);
        }
    }

    fn on_record(&self, _: &span::Id, values: &span::Record<'_>, _: Context<'_, S>) {
        if RECORDING.load(Ordering::Relaxed) {
            values.record(&mut StatementVisitor);
        }
    }
}

struct StatementVisitor;

impl Visit for StatementVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "db.statement" {
            STATEMENTS
                .lock()
                .expect("recorder")
                .insert(value.to_owned());
        }
    }

    /// SeaORM records the statement as a `&str` (`record_str`); other fields are not ours.
    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

/// A statement whose plan reads or sorts a large table, with that plan.
#[derive(Debug)]
pub struct BadPlan {
    pub statement: String,
    pub plan: String,
    pub reason: String,
}

/// The bad plans as an assertion's message: each statement with why and its plan.
pub fn describe(bad: &[BadPlan]) -> String {
    let mut text = format!("{} statements are not served by an index:\n", bad.len());
    for plan in bad {
        text.push_str(&format!(
            "\n--- {}\n{}\nplan:\n{}\n",
            plan.reason, plan.statement, plan.plan
        ));
    }
    text
}

/// Explains every statement of `statements` that reads a large table and returns the bad ones.
pub async fn check(db: &DatabaseConnection, statements: &BTreeSet<String>) -> Vec<BadPlan> {
    check_tables(db, statements, &LARGE_TABLES).await
}

/// Explains every statement of `statements` that reads one of `tables` and returns the bad
/// ones (a scenario whose own tables are large only in it).
pub async fn check_tables(
    db: &DatabaseConnection,
    statements: &BTreeSet<String>,
    tables: &[&str],
) -> Vec<BadPlan> {
    let backend = db.get_database_backend();
    let partial = partial_indexes(db).await;
    let mut bad = Vec::new();
    for statement in statements.iter().flat_map(|s| parts(backend, s)) {
        if !words(statement).any(|word| tables.contains(&word.as_str()))
            || !is_explainable(statement)
        {
            continue;
        }
        let plan = explain(db, statement).await;
        if let Some(reason) = problem_among(backend, statement, &plan, tables, &partial) {
            bad.push(BadPlan {
                statement: statement.to_owned(),
                plan,
                reason,
            });
        }
    }
    bad
}

/// SQLite's partial indexes (those made with a `WHERE`), by name; none on PostgreSQL, whose
/// plans say which rows they read.
async fn partial_indexes(db: &DatabaseConnection) -> BTreeSet<String> {
    if db.get_database_backend() != DbBackend::Sqlite {
        return BTreeSet::new();
    }
    db.query_all_raw(Statement::from_string(
        DbBackend::Sqlite,
        "SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'",
    ))
    .await
    .expect("the indexes")
    .iter()
    .filter_map(|row| row.try_get_by_index::<String>(0).ok())
    .collect()
}

/// The statements of one string the service sent. SQLite runs a `;`-separated string as
/// its statements one after another, and `EXPLAIN QUERY PLAN` of such a string would
/// explain the first and run the others, so each is explained alone. Our statements carry
/// every value as a parameter, so a `;` inside quotes is the only one to step over.
fn parts(backend: DbBackend, statement: &str) -> Vec<&str> {
    if backend != DbBackend::Sqlite {
        return vec![statement];
    }
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, None);
    for (at, c) in statement.char_indices() {
        match (quoted, c) {
            (None, '\'' | '"') => quoted = Some(c),
            (Some(q), c) if q == c => quoted = None,
            (None, ';') => {
                parts.push(&statement[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&statement[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect()
}

fn is_explainable(statement: &str) -> bool {
    let first = statement
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    matches!(first.as_str(), "SELECT" | "UPDATE" | "DELETE" | "WITH")
}

/// Identifiers of a statement, unquoted and lower-cased.
fn words(statement: &str) -> impl Iterator<Item = String> + '_ {
    statement
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
}

/// The names a large table goes by in `statement`: its own name and its aliases.
fn large_table_names(statement: &str, tables: &[&str]) -> BTreeSet<String> {
    let words: Vec<String> = words(statement).collect();
    let mut names = BTreeSet::new();
    for (n, word) in words.iter().enumerate() {
        if !tables.contains(&word.as_str()) {
            continue;
        }
        names.insert(word.clone());
        let mut next = words.get(n + 1);
        if next.is_some_and(|w| w == "as") {
            next = words.get(n + 2);
        }
        if let Some(alias) = next.filter(|w| !is_keyword(w)) {
            names.insert(alias.clone());
        }
    }
    names
}

fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "where"
            | "on"
            | "join"
            | "inner"
            | "left"
            | "cross"
            | "order"
            | "group"
            | "limit"
            | "set"
            | "using"
            | "union"
            | "and"
            | "or"
            | "returning"
            | "values"
            | "select"
    )
}

/// The plan the database would use for a recorded `statement`, one line per step.
pub async fn explain(db: &DatabaseConnection, statement: &str) -> String {
    match db.get_database_backend() {
        DbBackend::Sqlite => {
            let values = vec![sea_orm::Value::Int(None); sqlite_parameters(statement)];
            let rows = db
                .query_all_raw(Statement::from_sql_and_values(
                    DbBackend::Sqlite,
                    format!("EXPLAIN QUERY PLAN {statement}"),
                    values,
                ))
                .await
                .unwrap_or_else(|error| panic!("cannot explain {statement}: {error}"));
            rows.iter()
                .map(|row| row.try_get_by_index::<String>(3).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => {
            // One connection for the whole exchange: prepared statements live on it.
            let txn = db.begin().await.expect("a connection");
            txn.execute_unprepared("SET LOCAL plan_cache_mode = force_generic_plan")
                .await
                .expect("generic plans");
            txn.execute_unprepared(&format!("PREPARE lms_plan_check AS {statement}"))
                .await
                .unwrap_or_else(|error| panic!("cannot prepare {statement}: {error}"));
            let nulls = vec!["NULL"; postgres_parameters(statement)].join(", ");
            let execute = if nulls.is_empty() {
                "EXPLAIN EXECUTE lms_plan_check".to_owned()
            } else {
                format!("EXPLAIN EXECUTE lms_plan_check({nulls})")
            };
            let rows = txn
                .query_all_raw(Statement::from_string(DbBackend::Postgres, execute))
                .await
                .unwrap_or_else(|error| panic!("cannot explain {statement}: {error}"));
            txn.execute_unprepared("DEALLOCATE lms_plan_check")
                .await
                .expect("deallocate");
            txn.rollback().await.expect("rollback");
            rows.iter()
                .map(|row| row.try_get_by_index::<String>(0).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        }
    }
}

/// `?` placeholders, or the highest `?N`.
fn sqlite_parameters(statement: &str) -> usize {
    let mut plain = 0;
    let mut highest = 0;
    let mut chars = statement.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '?' {
            continue;
        }
        let mut digits = String::new();
        while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            digits.push(*d);
            chars.next();
        }
        match digits.parse::<usize>() {
            Ok(n) => highest = highest.max(n),
            Err(_) => plain += 1,
        }
    }
    plain.max(highest)
}

/// The highest `$N`.
fn postgres_parameters(statement: &str) -> usize {
    statement
        .split('$')
        .skip(1)
        .filter_map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .max()
        .unwrap_or(0)
}

/// Why `plan` is bad for `statement`, if it is.
#[cfg(test)]
fn problem(backend: DbBackend, statement: &str, plan: &str) -> Option<String> {
    problem_among(backend, statement, plan, &LARGE_TABLES, &BTreeSet::new())
}

/// Why `plan` is bad for `statement`, if it is, `tables` being the large ones.
fn problem_among(
    backend: DbBackend,
    statement: &str,
    plan: &str,
    tables: &[&str],
    partial_indexes: &BTreeSet<String>,
) -> Option<String> {
    let names = large_table_names(statement, tables);
    // The primary-key scan being read and whether its condition is a range of ids.
    let mut key_range_scan = false;
    for line in plan.lines() {
        let line = line.trim_start_matches(['|', '`', '-', ' ']);
        match backend {
            DbBackend::Sqlite => {
                if let Some(rest) = line.strip_prefix("SCAN ") {
                    let table = rest
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_ascii_lowercase();
                    // A partial index holds only the rows of its condition, which the
                    // statement's own implies (or SQLite would not read it): its scan reads
                    // those rows, not the table.
                    let index = rest
                        .split_once("USING ")
                        .map(|(_, using)| using.trim_start_matches("COVERING "))
                        .and_then(|using| using.strip_prefix("INDEX "))
                        .and_then(|index| index.split_whitespace().next());
                    if names.contains(&table)
                        && !index.is_some_and(|index| partial_indexes.contains(index))
                    {
                        return Some(format!("reads `{table}` whole"));
                    }
                }
                if line.starts_with("USE TEMP B-TREE") {
                    return Some(format!("sorts in a temporary b-tree ({line})"));
                }
            }
            _ => {
                let line = line.trim_start_matches(['-', '>', ' ']);
                if let Some(rest) = line.strip_prefix("Seq Scan on ") {
                    let table = rest
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_ascii_lowercase();
                    if tables.contains(&table.as_str()) {
                        return Some(format!("reads `{table}` whole"));
                    }
                }
                if (line.starts_with("Sort ") || line.starts_with("Incremental Sort"))
                    && !sorts_one_learner(plan)
                {
                    return Some(format!("sorts ({line})"));
                }
                if line.starts_with("Filter:") && line.contains("ANY (($") {
                    // A bound array text cast in a filter is parsed again for every row.
                    return Some(format!("casts an array parameter for every row ({line})"));
                }
                if line.starts_with("Index Scan") || line.starts_with("Index Only Scan") {
                    key_range_scan = line.contains("_pkey on ");
                } else if key_range_scan && line.starts_with("Index Cond:") {
                    key_range_scan = line.contains(" > ") || line.contains(" < ");
                } else if key_range_scan
                    && line.starts_with("Filter:")
                    && line.contains("account_id =")
                {
                    // A range of ids filtered by account steps over every other tenant's
                    // rows in that range: it costs in proportion to the database.
                    return Some(format!(
                        "walks the primary key filtered by account ({line})"
                    ));
                }
            }
        }
    }
    None
}

/// Whether the only rows the plan reads, and so sorts, are those of one learner: an index
/// condition of equality on `learner_id` first. PostgreSQL may fetch a person's few
/// enrollments by bitmap and sort them rather than walk `(learner_id, id)` in order; either
/// costs what one person's enrollments cost, the same in any account. Courses are not
/// exempt: one course can hold every learner of the account.
fn sorts_one_learner(plan: &str) -> bool {
    plan.lines()
        .map(|line| line.trim_start_matches(['|', '`', '-', '>', ' ']))
        .filter(|line| line.starts_with("Index Cond:") || line.starts_with("Recheck Cond:"))
        .all(|line| {
            let condition = line
                .split_once(':')
                .map_or("", |(_, rest)| rest)
                .trim_start();
            condition
                .trim_start_matches('(')
                .starts_with("learner_id = $")
        })
        && plan.contains("learner_id = $")
}

/// The recorder hears the whole process: one scenario at a time, or each would check the
/// other's statements (written for the other backend).
pub static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A stack (no test world) whose database holds a generated account of `users` users and
/// `departments` departments (world 1) and `neighbours` accounts of 200 users beside it, as a
/// shared database holds many, analysed so that plans are those of a populated database; with
/// that account's shape. `None` when the backend is not configured.
pub async fn populated_stack(
    backend: crate::Backend,
    users: usize,
    departments: usize,
    neighbours: u16,
) -> Option<(crate::TestStack, crate::large_world::WorldShape)> {
    use crate::large_world::{WORLD_PASSWORD, WorldShape};
    use lms_core::auth::PasswordHasher;
    use sea_orm::ConnectionTrait as _;

    let stack = crate::TestStack::start_with(crate::stack::StackOptions {
        with_world: false,
        ..crate::stack::StackOptions::new(backend)
    })
    .await?;
    let hasher = PasswordHasher::new(crate::stack::TEST_POLICY).expect("policy");
    let hash = hasher.hash(WORLD_PASSWORD).expect("hash");
    let mut shape = WorldShape::with_users(users);
    shape.world = 1;
    shape.departments = departments;
    crate::large_world::import_account(&stack, &shape, &hasher, &hash).await;
    for world in 2..2 + neighbours {
        let mut neighbour = WorldShape::with_users(200);
        neighbour.world = world;
        neighbour.account_url = format!("https://neighbour-{world}.example.com");
        crate::large_world::import_account(&stack, &neighbour, &hasher, &hash).await;
    }
    // The import writes no profile fields and no sign-ins: give every user one of each, so
    // that their tables are as large as `users` when the plans are asked for.
    let now = match backend {
        crate::Backend::Sqlite => "strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now')",
        crate::Backend::Postgres => "now()",
    };
    for fill in [
        "INSERT INTO user_fields (user_id, name, value) SELECT id, 'JOB_TITLE', 'Engineer' FROM users"
            .to_owned(),
        format!("INSERT INTO user_sign_ins (user_id, last_at) SELECT id, {now} FROM users"),
        "ANALYZE".to_owned(),
    ] {
        stack
            .db()
            .execute_unprepared(&fill)
            .await
            .unwrap_or_else(|error| panic!("{fill}: {error}"));
    }
    Some((stack, shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sqlite_string_of_statements_is_explained_statement_by_statement() {
        let sent = r#"UPDATE "c" SET "n" = ?1 WHERE "a" = ';';
            INSERT INTO "e" SELECT 1 FROM "c" WHERE "a" = ?2;
            SELECT "n" FROM "c";"#;
        assert_eq!(
            parts(DbBackend::Sqlite, sent),
            [
                r#"UPDATE "c" SET "n" = ?1 WHERE "a" = ';'"#,
                r#"INSERT INTO "e" SELECT 1 FROM "c" WHERE "a" = ?2"#,
                r#"SELECT "n" FROM "c""#,
            ]
        );
        assert_eq!(parts(DbBackend::Postgres, sent), [sent]);
    }

    #[test]
    fn aliases_of_large_tables_are_known() {
        let names = large_table_names(
            "SELECT u.id FROM groups g CROSS JOIN group_members gm JOIN \"users\" AS u ON u.id = gm.user_id",
            &LARGE_TABLES,
        );
        assert!(names.contains("gm") && names.contains("u") && names.contains("users"));
        assert!(!names.contains("g"));
    }

    #[test]
    fn parameters_are_counted_in_both_styles() {
        assert_eq!(sqlite_parameters("a = ? AND b IN (?, ?)"), 3);
        assert_eq!(sqlite_parameters("a = ?1 AND b = ?2 OR c = ?1"), 2);
        assert_eq!(postgres_parameters("a = $1 AND b IN ($2, $10)"), 10);
    }

    #[test]
    fn a_primary_key_range_filtered_by_account_is_a_problem() {
        let statement = "SELECT id FROM users WHERE account_id = $1 AND id > $2 ORDER BY id";
        let walk = "Limit\n  ->  Index Scan using users_pkey on users\n        Index Cond: (id > $2)\n        Filter: (account_id = $1)";
        assert!(problem(DbBackend::Postgres, statement, walk).is_some());
        let lookup = "Index Scan using users_pkey on users\n  Index Cond: (id = $1)\n  Filter: (account_id = $2)";
        assert!(problem(DbBackend::Postgres, statement, lookup).is_none());
    }

    #[test]
    fn a_sqlite_scan_of_a_partial_index_reads_only_its_rows() {
        let statement = r#"SELECT "id" FROM "users" WHERE "users"."email_address" IS NOT NULL"#;
        let plan = "SCAN users USING COVERING INDEX uq_users_account_email_address";
        let partial = BTreeSet::from(["uq_users_account_email_address".to_owned()]);
        assert!(
            problem_among(DbBackend::Sqlite, statement, plan, &LARGE_TABLES, &partial).is_none()
        );
        assert!(problem(DbBackend::Sqlite, statement, plan).is_some());
        let whole = "SCAN users";
        assert!(
            problem_among(DbBackend::Sqlite, statement, whole, &LARGE_TABLES, &partial).is_some()
        );
    }

    #[test]
    fn a_sort_of_one_learners_rows_is_not_a_problem_and_of_a_courses_is() {
        let statement = "SELECT id FROM enrollments WHERE learner_id = $1 AND account_id = $2 AND id > $3 ORDER BY id LIMIT $4";
        let learner = "Limit\n  ->  Sort\n        Sort Key: id\n        ->  Bitmap Heap Scan on enrollments\n              Recheck Cond: ((learner_id = $1) AND (id > $3))\n              Filter: (account_id = $2)\n              ->  Bitmap Index Scan on idx_enrollments_learner_id_id\n                    Index Cond: ((learner_id = $1) AND (id > $3))";
        assert!(problem(DbBackend::Postgres, statement, learner).is_none());
        let course = learner.replace("learner_id", "content_item_id");
        assert!(problem(DbBackend::Postgres, statement, &course).is_some());
        let account = "Sort\n  Sort Key: id\n  ->  Bitmap Heap Scan on enrollments\n        Recheck Cond: (account_id = $2)\n        Filter: (learner_id = $1)";
        assert!(problem(DbBackend::Postgres, statement, account).is_some());
    }

    #[test]
    fn an_array_text_cast_in_a_filter_is_a_problem() {
        let statement =
            "DELETE FROM enrollments WHERE account_id = $1 AND id = ANY($2::text::uuid[])";
        let per_row = "Delete on enrollments\n  ->  Bitmap Heap Scan on enrollments\n        Recheck Cond: (account_id = $1)\n        Filter: (id = ANY (($2)::uuid[]))";
        assert!(problem(DbBackend::Postgres, statement, per_row).is_some());
        let once = "Delete on enrollments\n  InitPlan 1 (returns $0)\n  ->  Bitmap Heap Scan on enrollments\n        Recheck Cond: (account_id = $1)\n        Filter: (id = ANY ($0))";
        assert!(problem(DbBackend::Postgres, statement, once).is_none());
    }

    #[test]
    fn scans_and_sorts_of_large_tables_are_problems() {
        let statement = "SELECT id FROM users WHERE account_id = ? ORDER BY id";
        assert!(problem(DbBackend::Sqlite, statement, "SCAN users").is_some());
        assert!(
            problem(
                DbBackend::Sqlite,
                statement,
                "SEARCH users USING INDEX x (account_id=?)\nUSE TEMP B-TREE FOR ORDER BY"
            )
            .is_some()
        );
        assert!(
            problem(
                DbBackend::Sqlite,
                statement,
                "SEARCH users USING COVERING INDEX x (account_id=? AND id>?)"
            )
            .is_none()
        );
        assert!(
            problem(
                DbBackend::Postgres,
                statement,
                "Limit\n  ->  Seq Scan on users  (cost=0.00..1.00 rows=1 width=16)"
            )
            .is_some()
        );
        assert!(
            problem(
                DbBackend::Postgres,
                statement,
                "Index Only Scan using idx on users"
            )
            .is_none()
        );
    }
}
