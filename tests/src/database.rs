//! A fresh database per test: a SQLite file in a temporary folder, or a new database on
//! the PostgreSQL server named by `LMS_TEST_POSTGRES_URL`, dropped afterwards.

use sea_orm::{ConnectionTrait as _, Database};

/// The environment variable that selects the PostgreSQL runs.
pub const POSTGRES_URL_VAR: &str = "LMS_TEST_POSTGRES_URL";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub struct TestDatabase {
    pub url: String,
    _folder: Option<tempfile::TempDir>,
    drop_from: Option<(String, String)>,
}

impl TestDatabase {
    /// A fresh empty database, or `None` (with a line saying why) when the backend is
    /// PostgreSQL and no server was given.
    pub async fn create(backend: Backend) -> Option<Self> {
        match backend {
            Backend::Sqlite => {
                let folder = tempfile::tempdir().expect("temporary folder");
                let url = format!("sqlite://{}", folder.path().join("lms.sqlite3").display());
                Some(Self {
                    url,
                    _folder: Some(folder),
                    drop_from: None,
                })
            }
            Backend::Postgres => {
                let Ok(admin_url) = std::env::var(POSTGRES_URL_VAR) else {
                    eprintln!(
                        "{POSTGRES_URL_VAR} not set: skipping the PostgreSQL run of this test"
                    );
                    return None;
                };
                let name = format!("lms_test_{}", uuid::Uuid::new_v4().simple());
                let admin = Database::connect(&admin_url).await.unwrap_or_else(|e| {
                    panic!("PostgreSQL at {POSTGRES_URL_VAR} is not reachable: {e}")
                });
                admin
                    .execute_unprepared(&format!("CREATE DATABASE {name}"))
                    .await
                    .expect("create the test database");
                admin.close().await.ok();
                let url = replace_database(&admin_url, &name);
                Some(Self {
                    url,
                    _folder: None,
                    drop_from: Some((admin_url, name)),
                })
            }
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let Some((admin_url, name)) = self.drop_from.take() else {
            return;
        };
        // Drop runs outside any runtime guarantee: use a small one of our own.
        let _ = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async {
                if let Ok(admin) = Database::connect(&admin_url).await {
                    let _ = admin
                        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .await;
                    admin.close().await.ok();
                }
            });
        })
        .join();
    }
}

/// The same server URL with another database name.
fn replace_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let server = match base[scheme_end..].find('/') {
        Some(slash) => &base[..scheme_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

#[cfg(test)]
mod tests {
    use super::replace_database;

    #[test]
    fn the_database_name_is_replaced() {
        assert_eq!(
            replace_database("postgres://postgres@127.0.0.1:5432/postgres", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            replace_database("postgres://h:5432", "x"),
            "postgres://h:5432/x"
        );
        assert_eq!(
            replace_database("postgres://h/db?sslmode=disable", "x"),
            "postgres://h/x?sslmode=disable"
        );
    }
}
