//! The PostgreSQL server the tests create their databases on.
//!
//! New migrated databases are copies of a template database that the migrations built
//! once (`CREATE DATABASE ... TEMPLATE`): copying is cheaper than migrating. The
//! template's name carries a fingerprint of the migrations' source, so a changed migration
//! gets a template of its own and an old one is never used; it is kept between runs like a
//! cache, and may be dropped at any time no test is running.

use lms_migrations::{Migrator, MigratorTrait as _};
use sea_orm::{
    ConnectOptions, ConnectionTrait as _, Database, DatabaseConnection, DbBackend, Statement,
};

/// The environment variable naming the PostgreSQL server (any database on it the user may
/// connect to, and a user who may `CREATE DATABASE`).
pub const POSTGRES_URL_VAR: &str = "LMS_TEST_POSTGRES_URL";

/// What a PostgreSQL run prints when it is skipped.
pub const SKIPPED_WITHOUT_POSTGRES: &str =
    "LMS_TEST_POSTGRES_URL is not set: the PostgreSQL run of this test is skipped";

const TEMPLATE: &str = concat!("lms_template_", env!("LMS_MIGRATIONS_FINGERPRINT"));

/// Serialises building the template across every process using this server.
const TEMPLATE_LOCK: i64 = 0x6c6d_735f_7465_7374;

/// A database of one test, dropped when this is.
pub(crate) struct PostgresDatabase {
    pub(crate) url: String,
    server: String,
    name: String,
}

/// The server's URL, or `None` after saying that the PostgreSQL run is skipped.
fn server() -> Option<String> {
    match std::env::var(POSTGRES_URL_VAR) {
        Ok(url) => Some(url),
        Err(_) => {
            eprintln!("{SKIPPED_WITHOUT_POSTGRES}");
            None
        }
    }
}

pub(crate) async fn create_empty() -> Option<PostgresDatabase> {
    let server = server()?;
    let admin = connect_one(&server).await;
    let database = create(&admin, &server, "").await;
    admin.close().await.ok();
    Some(database)
}

pub(crate) async fn create_migrated() -> Option<PostgresDatabase> {
    let server = server()?;
    let admin = connect_one(&server).await;
    ensure_template(&admin, &server).await;
    let database = create(&admin, &server, &format!(" TEMPLATE \"{TEMPLATE}\"")).await;
    admin.close().await.ok();
    Some(database)
}

async fn create(admin: &DatabaseConnection, server: &str, template: &str) -> PostgresDatabase {
    let name = format!("lms_test_{}", uuid::Uuid::new_v4().simple());
    execute(admin, &format!("CREATE DATABASE \"{name}\"{template}")).await;
    PostgresDatabase {
        url: with_database(server, &name),
        server: server.to_owned(),
        name,
    }
}

/// Builds the template unless it exists. It is built under another name and renamed when
/// complete, so a process that died while migrating never leaves a half-built template.
async fn ensure_template(admin: &DatabaseConnection, server: &str) {
    if database_exists(admin, TEMPLATE).await {
        return;
    }
    execute(admin, &format!("SELECT pg_advisory_lock({TEMPLATE_LOCK})")).await;
    if !database_exists(admin, TEMPLATE).await {
        let building = format!("{TEMPLATE}_building");
        execute(
            admin,
            &format!("DROP DATABASE IF EXISTS \"{building}\" WITH (FORCE)"),
        )
        .await;
        execute(admin, &format!("CREATE DATABASE \"{building}\"")).await;
        let db = connect_one(&with_database(server, &building)).await;
        Migrator::up(&db, None)
            .await
            .expect("the migrations apply to a fresh PostgreSQL database");
        db.close().await.ok();
        // A closed session's server process may still be exiting, and a database with a
        // session cannot be renamed or copied: wait (bounded) for it to be gone.
        execute(
            admin,
            &format!(
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity \
                 WHERE datname = '{building}'"
            ),
        )
        .await;
        execute(
            admin,
            &format!("ALTER DATABASE \"{building}\" RENAME TO \"{TEMPLATE}\""),
        )
        .await;
    }
    execute(
        admin,
        &format!("SELECT pg_advisory_unlock({TEMPLATE_LOCK})"),
    )
    .await;
}

async fn database_exists(admin: &DatabaseConnection, name: &str) -> bool {
    admin
        .query_one_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT 1 FROM pg_database WHERE datname = $1",
            [name.into()],
        ))
        .await
        .expect("pg_database reads")
        .is_some()
}

/// A single connection: an advisory lock belongs to the session that took it.
async fn connect_one(url: &str) -> DatabaseConnection {
    let mut options = ConnectOptions::new(url.to_owned());
    options
        .max_connections(1)
        .min_connections(1)
        .sqlx_logging(false);
    Database::connect(options)
        .await
        .unwrap_or_else(|err| panic!("PostgreSQL at {POSTGRES_URL_VAR} is not reachable: {err}"))
}

async fn execute(db: &DatabaseConnection, sql: &str) {
    db.execute_unprepared(sql)
        .await
        .unwrap_or_else(|err| panic!("{sql}: {err}"));
}

impl Drop for PostgresDatabase {
    fn drop(&mut self) {
        let (server, name) = (self.server.clone(), self.name.clone());
        // The test's runtime may be gone or shutting down: drop from a runtime of our own,
        // and wait, so that no database outlives its test.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let admin = Database::connect(&server).await.ok()?;
                admin
                    .execute_unprepared(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .await
                    .ok();
                admin.close().await.ok()
            })
        })
        .join();
    }
}

/// The same server URL with another database name.
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let server = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn database_names_are_replaced_in_urls() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgres://h:5432", "x"),
            "postgres://h:5432/x"
        );
        assert_eq!(
            with_database("postgres://h/db?sslmode=disable", "x"),
            "postgres://h/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://u:p@h/db?sslmode=disable", "x"),
            "postgres://u:p@h/x?sslmode=disable"
        );
    }
}
