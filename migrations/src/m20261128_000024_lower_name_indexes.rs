//! Indexes for the lookups of SCIM by name: a department named by a SCIM user (by `code`, else
//! by `lower(name)`) and a group's `displayName eq` filter and its 409 name check. Without
//! them each of these reads every department or group of the account. The expression is the
//! one the statements use, `lower("name")`, and the id ends each index so that the lowest id
//! of a tie comes first without a sort. Both backends take the same text.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// (name, table, columns)
const INDEXES: [(&str, &str, &str); 3] = [
    (
        "idx_departments_account_id_code_id",
        "departments",
        r#""account_id", "code", "id""#,
    ),
    (
        "idx_departments_account_id_lower_name_id",
        "departments",
        r#""account_id", lower("name"), "id""#,
    ),
    (
        "idx_groups_account_id_lower_name_id",
        "groups",
        r#""account_id", lower("name"), "id""#,
    ),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for (name, table, columns) in INDEXES {
            db.execute_unprepared(&format!(
                r#"CREATE INDEX "{name}" ON "{table}" ({columns})"#
            ))
            .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for (name, _, _) in INDEXES.iter().rev() {
            db.execute_unprepared(&format!(r#"DROP INDEX "{name}""#))
                .await?;
        }
        Ok(())
    }
}
