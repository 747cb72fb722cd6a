//! `uq_accounts_url_key`: one account per URL whatever its scheme (contract section 2:
//! `http://` names an `https://` account). URLs are stored normalized (scheme and host in
//! lower case, no default port, no trailing `/`), so what is left to tell two spellings of
//! one account apart is the scheme: the index is on the URL from its `//` on.
//!
//! An index on that expression rather than a column: every writer (the import, SQL typed by
//! hand) is held to it without having to fill anything in, and rows already there are covered
//! as the index is built. The import refuses such a URL before writing, naming the entry; the
//! index settles two imports racing each other, and the loser gets the conflict any taken URL
//! gives.
//!
//! A database holding two accounts that differ only by scheme (possible before this rule)
//! cannot take the index: the migration stops naming them, for one to be renamed first.

use sea_orm_migration::{
    prelude::*,
    sea_orm::{DatabaseBackend, Statement},
};

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const INDEX: &str = "uq_accounts_url_key";

/// The URL from its `//` on, in each backend's spelling.
fn url_key(backend: DatabaseBackend, column: &str) -> Result<String, DbErr> {
    match backend {
        DatabaseBackend::Sqlite => Ok(format!("substr({column}, instr({column}, '//'))")),
        DatabaseBackend::Postgres => Ok(format!("substr({column}, strpos({column}, '//'))")),
        other => Err(DbErr::Migration(format!(
            "{INDEX}: unsupported database {other:?}"
        ))),
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = manager.get_database_backend();
        let (a, b) = (url_key(backend, "a.url")?, url_key(backend, "b.url")?);
        let twins = db
            .query_all_raw(Statement::from_string(
                backend,
                format!(
                    "SELECT a.url AS first, b.url AS second FROM accounts a \
                     JOIN accounts b ON {a} = {b} AND a.url < b.url ORDER BY a.url LIMIT 5"
                ),
            ))
            .await?;
        if !twins.is_empty() {
            let mut pairs = Vec::new();
            for row in twins {
                let first: String = row.try_get("", "first")?;
                let second: String = row.try_get("", "second")?;
                pairs.push(format!("{first} and {second}"));
            }
            return Err(DbErr::Migration(format!(
                "accounts whose URLs differ only by scheme name one account for authentication; \
                 change the URL of one of each pair ({}) and migrate again",
                pairs.join("; ")
            )));
        }
        db.execute_unprepared(&format!(
            "CREATE UNIQUE INDEX {INDEX} ON accounts ({})",
            url_key(backend, "url")?
        ))
        .await
        .map(drop)
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(&format!("DROP INDEX {INDEX}"))
            .await
            .map(drop)
    }
}
