//! `auth_revisions`: one row whose `revision` moves whenever something that decides who
//! a caller is changes (a user's password hash, role, active flag, login or account; a
//! user's managed departments; a custom role's permissions; an account's URL).
//!
//! Triggers move it, whoever writes (the core, an import, SQL typed by hand), in the
//! writer's own transaction, so the new value is visible exactly when the change is. Every
//! core polls the row and reads remembered callers again when it moved
//! (`lms_core::auth::revision`); on PostgreSQL the triggers also `NOTIFY lms_auth_revision`,
//! delivered at commit, so cores listening learn of it within a round trip. Inserting users does not move it: a new user was never
//! remembered.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// Tables and the changes of theirs that move the revision.
const WATCHED: [(&str, &str); 4] = [
    ("users", "UPDATE OR DELETE"),
    ("user_managed_departments", "INSERT OR UPDATE OR DELETE"),
    ("custom_role_permissions", "INSERT OR UPDATE OR DELETE"),
    ("accounts", "UPDATE OF url OR DELETE"),
];

const CREATE_TABLE: &str = "CREATE TABLE auth_revisions (\
     id integer NOT NULL PRIMARY KEY CHECK (id = 1), \
     revision bigint NOT NULL)";
const FIRST_ROW: &str = "INSERT INTO auth_revisions (id, revision) VALUES (1, 0)";
const BUMP: &str = "UPDATE auth_revisions SET revision = revision + 1 WHERE id = 1";

fn trigger_name(table: &str) -> String {
    format!("{table}_move_auth_revision")
}

/// SQLite has only row-level triggers, and one event list per trigger.
fn sqlite_triggers() -> Vec<String> {
    WATCHED
        .iter()
        .flat_map(|(table, events)| {
            events.split(" OR ").enumerate().map(move |(n, event)| {
                format!(
                    "CREATE TRIGGER {name}_{n} AFTER {event} ON {table} BEGIN {BUMP}; END",
                    name = trigger_name(table)
                )
            })
        })
        .collect()
}

/// The PostgreSQL channel the triggers notify (notifications of one transaction fold
/// into one, delivered at commit).
pub const NOTIFY_CHANNEL: &str = "lms_auth_revision";

/// PostgreSQL: statement-level, so a bulk change moves the row once, not per row.
fn postgres_triggers() -> Vec<String> {
    let mut statements = vec![format!(
        "CREATE FUNCTION move_auth_revision() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN {BUMP}; PERFORM pg_notify('{NOTIFY_CHANNEL}', ''); RETURN NULL; END $$"
    )];
    statements.extend(WATCHED.iter().map(|(table, events)| {
        format!(
            "CREATE TRIGGER {name} AFTER {events} ON {table} \
             FOR EACH STATEMENT EXECUTE FUNCTION move_auth_revision()",
            name = trigger_name(table)
        )
    }));
    statements
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let triggers = match manager.get_database_backend() {
            DatabaseBackend::Sqlite => sqlite_triggers(),
            DatabaseBackend::Postgres => postgres_triggers(),
            other => {
                return Err(DbErr::Migration(format!(
                    "auth_revisions: unsupported database {other:?}"
                )));
            }
        };
        for statement in [CREATE_TABLE.to_owned(), FIRST_ROW.to_owned()]
            .into_iter()
            .chain(triggers)
        {
            db.execute_unprepared(&statement).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let mut statements: Vec<String> = match manager.get_database_backend() {
            DatabaseBackend::Postgres => WATCHED
                .iter()
                .map(|(table, _)| format!("DROP TRIGGER {} ON {table}", trigger_name(table)))
                .chain(["DROP FUNCTION move_auth_revision()".to_owned()])
                .collect(),
            _ => WATCHED
                .iter()
                .flat_map(|(table, events)| {
                    (0..events.split(" OR ").count())
                        .map(move |n| format!("DROP TRIGGER {}_{n}", trigger_name(table)))
                })
                .collect(),
        };
        statements.push("DROP TABLE auth_revisions".to_owned());
        for statement in statements {
            db.execute_unprepared(&statement).await?;
        }
        Ok(())
    }
}
