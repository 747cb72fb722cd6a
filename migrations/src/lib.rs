//! The database schema of the learning management service, as sea-orm-migration
//! migrations (see `docs/data-model.md`).
//!
//! Every migration is backend-neutral: the same statements run on SQLite and PostgreSQL.
//! On SQLite sea-orm-migration runs a migration statement by statement on whichever pooled
//! connection is free, and a connection whose cached schema is older than a change made on
//! another can refuse the next statement (an index "already exists"): a migration that drops
//! a name and makes it again runs in a transaction (`use_transaction`, as migration 26 does).
//! The migrations test upgrades from every earlier version through such a pool.
//! Foreign keys are declared inside `CREATE TABLE` (SQLite cannot add them later);
//! link tables cascade on delete, every other reference restricts.
//!
//! [`Migrator`] lists the migrations in order; `lms migrate` and every process start
//! apply the pending ones with [`migrate`], which says what it did in one line
//! ([`Migrated`]) rather than the two lines per migration of [`MigratorTrait::up`].

pub use m20261122_000005_auth_revision::NOTIFY_CHANNEL as AUTH_REVISION_CHANNEL;
pub use m20261123_000006_user_role_values::ROLE_VALUES as USER_ROLE_VALUES;
pub use sea_orm_migration::MigratorTrait;
use std::fmt;

use sea_orm_migration::{
    MigrationTrait, async_trait,
    sea_orm::{DatabaseConnection, DbErr},
};

mod m20261122_000001_accounts_and_departments;
mod m20261122_000002_users_and_roles;
mod m20261122_000003_groups_projects_content;
mod m20261122_000004_enrollments_points_audit;
mod m20261122_000005_auth_revision;
mod m20261123_000006_user_role_values;
mod m20261123_000007_user_keyset_indexes;
mod m20261123_000008_api_clients;
mod m20261123_000009_api_token_rights;
mod m20261123_000010_account_url_keys;
mod m20261123_000011_audit_log_history;
mod m20261123_000012_department_keyset_index;
mod m20261123_000013_user_profiles;
mod m20261123_000014_enrollment_dates;
mod m20261123_000015_group_listing;
mod m20261126_000016_users_department_covering_index;
mod m20261126_000017_user_directory_profile;
mod m20261126_000018_user_email_unique;
mod m20261127_000019_learner_results;
mod m20261127_000020_webhooks;
mod m20261128_000021_scheduled_status;
mod m20261128_000022_scim;
mod m20261128_000023_webhook_due_indexes;
mod m20261128_000024_lower_name_indexes;
mod m20261129_000025_webhook_subscriptions_revision;
mod m20261129_000026_partial_date_indexes;
mod m20261129_000027_webhook_events_flag;
mod m20261129_000028_results_cascade_by_statement;
mod m20261129_000029_webhook_events_by_seq;
mod m20261207_000030_users_result_attributes_index;
mod schema;

/// What [`migrate`] did: the migrations it applied, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    pub applied: Vec<String>,
    /// Migrations the schema has in all.
    pub known: usize,
}

/// `schema up to date (18 migrations)`, or with what was applied before it:
/// `applied 2 migrations (m…_000017_… to m…_000018_…), schema up to date (18 migrations)`.
impl fmt::Display for Migrated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.applied.as_slice() {
            [] => {}
            [only] => write!(f, "applied 1 migration ({only}), ")?,
            [first, .., last] => write!(
                f,
                "applied {} migrations ({first} to {last}), ",
                self.applied.len()
            )?,
        }
        write!(f, "schema up to date ({} migrations)", self.known)
    }
}

/// Applies every pending migration; what was applied. The per-migration lines of
/// [`MigratorTrait::up`] are for whoever debugs a migration (`RUST_LOG=sea_orm_migration=info`);
/// a person starting a process wants the one line of [`Migrated`].
pub async fn migrate(db: &DatabaseConnection) -> Result<Migrated, DbErr> {
    let applied = Migrator::get_pending_migrations_read_only(db)
        .await?
        .iter()
        .map(|migration| migration.name().to_owned())
        .collect();
    Migrator::up(db, None).await?;
    Ok(Migrated {
        applied,
        known: Migrator::migrations().len(),
    })
}

/// All migrations of the schema, oldest first.
#[derive(Debug, Clone, Copy, Default)]
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261122_000001_accounts_and_departments::Migration),
            Box::new(m20261122_000002_users_and_roles::Migration),
            Box::new(m20261122_000003_groups_projects_content::Migration),
            Box::new(m20261122_000004_enrollments_points_audit::Migration),
            Box::new(m20261122_000005_auth_revision::Migration),
            Box::new(m20261123_000006_user_role_values::Migration),
            Box::new(m20261123_000007_user_keyset_indexes::Migration),
            Box::new(m20261123_000008_api_clients::Migration),
            Box::new(m20261123_000009_api_token_rights::Migration),
            Box::new(m20261123_000010_account_url_keys::Migration),
            Box::new(m20261123_000011_audit_log_history::Migration),
            Box::new(m20261123_000012_department_keyset_index::Migration),
            Box::new(m20261123_000013_user_profiles::Migration),
            Box::new(m20261123_000014_enrollment_dates::Migration),
            Box::new(m20261123_000015_group_listing::Migration),
            Box::new(m20261126_000016_users_department_covering_index::Migration),
            Box::new(m20261126_000017_user_directory_profile::Migration),
            Box::new(m20261126_000018_user_email_unique::Migration),
            Box::new(m20261127_000019_learner_results::Migration),
            Box::new(m20261127_000020_webhooks::Migration),
            Box::new(m20261128_000021_scheduled_status::Migration),
            Box::new(m20261128_000022_scim::Migration),
            Box::new(m20261128_000023_webhook_due_indexes::Migration),
            Box::new(m20261128_000024_lower_name_indexes::Migration),
            Box::new(m20261129_000025_webhook_subscriptions_revision::Migration),
            Box::new(m20261129_000026_partial_date_indexes::Migration),
            Box::new(m20261129_000027_webhook_events_flag::Migration),
            Box::new(m20261129_000028_results_cascade_by_statement::Migration),
            Box::new(m20261129_000029_webhook_events_by_seq::Migration),
            Box::new(m20261207_000030_users_result_attributes_index::Migration),
        ]
    }
}
