//! PostgreSQL's autovacuum, asked about once at start.
//!
//! The requests' statements are prepared once per connection, and PostgreSQL keeps the plan
//! it chose for them until the statistics of their tables change, which on a server without
//! autovacuum happens only when someone runs `ANALYZE`. A table that was small when a
//! connection first ran a statement (a fresh `lms up` has a handful of users) then keeps a
//! plan that reads all of it, however large it grows: measured on a server configured so,
//! two reads of the whole `users` table per `POST /user` once it held 17,000 rows. The
//! service cannot fix the server's configuration, but it says so at start.

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, DbErr, Statement};

/// Whether the server analyzes and vacuums tables on its own: `None` on SQLite (nothing to
/// ask).
pub async fn enabled(db: &DatabaseConnection) -> Result<Option<bool>, DbErr> {
    if db.get_database_backend() != DbBackend::Postgres {
        return Ok(None);
    }
    let row = db
        .query_one_raw(Statement::from_string(
            DbBackend::Postgres,
            "SELECT current_setting('autovacuum') = 'on' AS enabled",
        ))
        .await?;
    row.map(|row| row.try_get::<bool>("", "enabled"))
        .transpose()
}

/// Logs a warning when the PostgreSQL server of `db` runs without autovacuum. Asking is a
/// courtesy: an error is logged at debug level and start-up goes on.
pub async fn warn_if_off(db: &DatabaseConnection) {
    match enabled(db).await {
        Ok(Some(false)) => tracing::warn!(
            "PostgreSQL runs with autovacuum off: statements keep the plans chosen while their \
             tables were small, and deleted rows stay until a VACUUM; turn autovacuum on, or \
             run ANALYZE and VACUUM regularly (docs/decisions.md, \"PostgreSQL without \
             autovacuum\")"
        ),
        Ok(_) => {}
        Err(err) => tracing::debug!(error = %err, "could not ask PostgreSQL about autovacuum"),
    }
}
