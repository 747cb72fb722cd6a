//! A fresh database per test, on the backend the test asks for.

use sea_orm::{ConnectOptions, Database, DatabaseConnection};

use crate::{
    postgres::{self, PostgresDatabase},
    sqlite,
};

/// The database engines the service runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

/// A database of its own for one test: a SQLite file in a temporary folder, or a new
/// database on the PostgreSQL server of [`crate::POSTGRES_URL_VAR`]. Both go away when this
/// is dropped (the PostgreSQL one with `DROP DATABASE ... WITH (FORCE)`, so connections
/// still open do not keep it). Not `Debug`: the URL may hold the server's password.
pub struct TestDatabase {
    /// What a service is given to connect (no options: the service adds its own).
    pub url: String,
    backend: Backend,
    _folder: Option<tempfile::TempDir>,
    _postgres: Option<PostgresDatabase>,
}

impl TestDatabase {
    /// A fresh database with every migration applied, or `None` (after saying so once)
    /// when the backend is PostgreSQL and no server is configured.
    pub async fn create(backend: Backend) -> Option<Self> {
        match backend {
            // Both are copies of a template the migrations built once: migrating each
            // database would cost more than the rest of a typical test.
            Backend::Sqlite => {
                let database = Self::sqlite();
                let path = database.url.trim_start_matches("sqlite://");
                std::fs::copy(sqlite::template().await, path)
                    .expect("the SQLite template is copied");
                Some(database)
            }
            Backend::Postgres => Some(Self::postgres(postgres::create_migrated().await?)),
        }
    }

    /// A fresh database without any table, for tests of the migrations themselves.
    pub async fn create_empty(backend: Backend) -> Option<Self> {
        match backend {
            Backend::Sqlite => Some(Self::sqlite()),
            Backend::Postgres => Some(Self::postgres(postgres::create_empty().await?)),
        }
    }

    fn sqlite() -> Self {
        let folder = tempfile::tempdir().expect("a temporary folder");
        Self {
            url: format!("sqlite://{}", folder.path().join("lms.sqlite3").display()),
            backend: Backend::Sqlite,
            _folder: Some(folder),
            _postgres: None,
        }
    }

    fn postgres(database: PostgresDatabase) -> Self {
        Self {
            url: database.url.clone(),
            backend: Backend::Postgres,
            _folder: None,
            _postgres: Some(database),
        }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The database's URL (a SQLite one names the file without `?mode=rwc`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A connection pool of its own to this database (the SQLite file is created when
    /// missing).
    pub async fn connect(&self) -> DatabaseConnection {
        let url = match self.backend {
            Backend::Sqlite => format!("{}?mode=rwc", self.url),
            Backend::Postgres => self.url.clone(),
        };
        let mut options = ConnectOptions::new(url);
        options.sqlx_logging(false);
        Database::connect(options)
            .await
            .unwrap_or_else(|err| panic!("the {} test database opens: {err}", self.backend.name()))
    }
}

/// A fresh migrated database with a connection pool open on it: what tests of the data
/// layer run against.
pub struct TestConnection {
    pub db: DatabaseConnection,
    /// Declared after the pool so that the pool closes before the database goes.
    pub database: TestDatabase,
}

impl TestConnection {
    /// See [`TestDatabase::create`].
    pub async fn create(backend: Backend) -> Option<Self> {
        let database = TestDatabase::create(backend).await?;
        let db = database.connect().await;
        Some(Self { db, database })
    }
}

impl std::ops::Deref for TestConnection {
    type Target = DatabaseConnection;

    fn deref(&self) -> &DatabaseConnection {
        &self.db
    }
}
