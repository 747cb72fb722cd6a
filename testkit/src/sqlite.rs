//! The migrated SQLite file new SQLite databases are copied from.
//!
//! Migrating a file costs a synchronous write per statement, more than the rest of a typical
//! test; copying one costs next to nothing. The template is built once per version of the
//! migrations (its name carries a fingerprint of their source) and kept in the system's
//! temporary folder for later runs, like the PostgreSQL template.

use std::path::{Path, PathBuf};

use lms_migrations::{Migrator, MigratorTrait as _};
use sea_orm::{ConnectOptions, Database};

/// The template's path, built first when missing.
pub(crate) async fn template() -> PathBuf {
    let folder = std::env::temp_dir();
    let template = folder.join(concat!(
        "lms_template_",
        env!("LMS_MIGRATIONS_FINGERPRINT"),
        ".sqlite3"
    ));
    if !template.exists() {
        build(&folder, &template).await;
    }
    template
}

/// Migrates a file of its own and renames it into place: a reader never sees a half-built
/// template, and processes racing to build it each put a complete one there.
async fn build(folder: &Path, template: &Path) {
    let building = tempfile::Builder::new()
        .prefix("lms_template_")
        .suffix(".building")
        .tempfile_in(folder)
        .expect("a file in the temporary folder");
    let mut options = ConnectOptions::new(format!("sqlite://{}", building.path().display()));
    options.sqlx_logging(false);
    let db = Database::connect(options)
        .await
        .expect("the SQLite template opens");
    Migrator::up(&db, None)
        .await
        .expect("the migrations apply to a fresh SQLite file");
    db.close().await.expect("SQLite closes");
    building
        .persist(template)
        .expect("the SQLite template is kept");
}
