//! E-mail addresses unique in an account, whichever column holds them: `contact_email_key`
//! when the address is apart from the login, else the login's `email_key` (migration 17).
//!
//! The writes check this before they insert, with a friendly message; the index is what
//! holds when two writers check at the same moment. Users without an address (an empty
//! `contact_email_key`) are left out. Every user before migration 17 has its login as its
//! address, already unique per account, so building the index cannot fail on them.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

pub(crate) const NAME: &str = "uq_users_account_email_address";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // An index on an expression, with a condition: the same SQL on both backends.
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "CREATE UNIQUE INDEX {NAME} ON users \
                 (account_id, COALESCE(contact_email_key, email_key)) \
                 WHERE COALESCE(contact_email_key, email_key) <> ''"
            ))
            .await
            .map(drop)
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(&format!("DROP INDEX {NAME}"))
            .await
            .map(drop)
    }
}
