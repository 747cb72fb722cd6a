//! `users.role` holds only the role names of contract section 3.
//!
//! The column stays `varchar(64)` (rows written before keep reading the same); what is
//! new is that the database refuses any other value, whoever writes: on PostgreSQL a
//! CHECK constraint, on SQLite (which cannot add one to an existing table) triggers
//! before INSERT and UPDATE that abort the statement.
//!
//! The names are written out here rather than taken from the core's `Role`: a migration
//! must keep meaning what it meant when it was applied.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// The role names as stored.
pub const ROLE_VALUES: [&str; 7] = [
    "account_owner",
    "account_administrator",
    "department_administrator",
    "publisher",
    "author",
    "learner",
    "custom",
];

const CONSTRAINT: &str = "ck_users_role";
const SQLITE_TRIGGERS: [(&str, &str); 2] = [
    ("users_role_values_on_insert", "INSERT"),
    ("users_role_values_on_update", "UPDATE OF role"),
];

/// `'account_owner', 'account_administrator', …`.
fn value_list() -> String {
    ROLE_VALUES
        .iter()
        .map(|value| format!("'{value}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn up_statements(backend: DatabaseBackend) -> Result<Vec<String>, DbErr> {
    let values = value_list();
    match backend {
        DatabaseBackend::Postgres => Ok(vec![format!(
            "ALTER TABLE users ADD CONSTRAINT {CONSTRAINT} CHECK (role IN ({values}))"
        )]),
        DatabaseBackend::Sqlite => Ok(SQLITE_TRIGGERS
            .iter()
            .map(|(name, event)| {
                format!(
                    "CREATE TRIGGER {name} BEFORE {event} ON users \
                     WHEN NEW.role NOT IN ({values}) \
                     BEGIN SELECT RAISE(ABORT, '{CONSTRAINT}: users.role must be one of {names}'); END",
                    names = ROLE_VALUES.join(", ")
                )
            })
            .collect()),
        other => Err(DbErr::Migration(format!(
            "users.role values: unsupported database {other:?}"
        ))),
    }
}

fn down_statements(backend: DatabaseBackend) -> Vec<String> {
    match backend {
        DatabaseBackend::Postgres => {
            vec![format!("ALTER TABLE users DROP CONSTRAINT {CONSTRAINT}")]
        }
        _ => SQLITE_TRIGGERS
            .iter()
            .map(|(name, _)| format!("DROP TRIGGER {name}"))
            .collect(),
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for statement in up_statements(manager.get_database_backend())? {
            db.execute_unprepared(&statement).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for statement in down_statements(manager.get_database_backend()) {
            db.execute_unprepared(&statement).await?;
        }
        Ok(())
    }
}
