//! The SQLite file itself: made only when asked, and watched while the service runs.
//!
//! A missing file used to be created silently, so a database deleted or moved by mistake came
//! back as a new empty one on the next start and every login answered 401. Now a missing file
//! is created only on a first start (its folder does not exist either) or when asked
//! ([`CreateDatabase::Yes`]: `--create-database`, `lms up --demo`, or `mode=rwc` in the
//! URL); otherwise the start is
//! refused with a message that says what is missing. While the service runs, [`FileWatch`]
//! notices the file being deleted or replaced (SQLite would go on writing to the unlinked
//! file, and everything written would be lost at the next start), and every write checks
//! after its commit that it went into the file at the path ([`confirm_committed`]): a write
//! into a deleted file is answered 503, never acknowledged.

use std::{
    collections::HashMap,
    os::unix::fs::MetadataExt as _,
    path::{Path, PathBuf},
    sync::{Mutex, PoisonError},
};

use anyhow::Context as _;
use sea_orm::{DatabaseConnection, DbBackend};

/// Whether a missing SQLite file may be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CreateDatabase {
    /// Only on a first start: the file's folder does not exist either.
    #[default]
    OnFirstStart,
    /// Asked for: create it whenever it is missing.
    Yes,
}

impl CreateDatabase {
    /// `Yes` when `asked`, else the first-start rule.
    pub fn when(asked: bool) -> Self {
        if asked { Self::Yes } else { Self::OnFirstStart }
    }
}

/// The file a `sqlite:` URL names; `None` for an in-memory database.
pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    let path = url.strip_prefix("sqlite:")?.trim_start_matches("//");
    let path = path.split('?').next().unwrap_or_default();
    if path.is_empty() || path.starts_with(":memory:") {
        return None;
    }
    Some(PathBuf::from(path))
}

/// Checks the file of a `sqlite:` URL before connecting, and makes its folder on a first
/// start. Returns whether SQLite may create the file; refuses a missing file that may not
/// be created.
pub fn prepare(url: &str, create: CreateDatabase) -> anyhow::Result<bool> {
    let Some(path) = sqlite_path(url) else {
        return Ok(true);
    };
    if path.exists() {
        check_companions_writable(&path)?;
        return Ok(false);
    }
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let first_start = !folder.exists();
    // SQLite's own way of asking, in the URL itself.
    let create = if url.contains("mode=rwc") {
        CreateDatabase::Yes
    } else {
        create
    };
    match (create, first_start) {
        (CreateDatabase::Yes, _) => {
            tracing::warn!(path = %path.display(), "creating a new, empty database as asked");
        }
        (CreateDatabase::OnFirstStart, true) => {
            tracing::info!(path = %path.display(), "first start: creating a new, empty database");
        }
        (CreateDatabase::OnFirstStart, false) => {
            let message = format!(
                "the database file {} does not exist, but its folder {} does: it may have been \
                 deleted or moved. Restore it, or start with --create-database to begin with a \
                 new, empty database",
                path.display(),
                folder.display()
            );
            tracing::error!("{message}");
            anyhow::bail!(message);
        }
    }
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create the database folder {}", folder.display()))?;
    Ok(true)
}

/// Refuses to open a database whose `-wal` or `-shm` file is there but cannot be written by
/// this process (a read-only mode for another user, `chattr +i`, a read-only mount, a folder in
/// its place). SQLite would open them read-only: the service would read, refuse every write
/// with SQLITE_READONLY, and go on refusing after the file was fixed, because every connection
/// of the process shares the read-only WAL index until the last one closes. Refusing the start
/// says what is wrong at once, and the next start (a restart policy's) succeeds once it is
/// fixed. Checked with `access(2)`, never by opening: closing a descriptor of a file drops
/// every POSIX lock this process holds on it, SQLite's included.
fn check_companions_writable(database: &Path) -> anyhow::Result<()> {
    for (suffix, what) in [("-wal", "write-ahead log"), ("-shm", "WAL index")] {
        let mut name = database.as_os_str().to_owned();
        name.push(suffix);
        let file = PathBuf::from(name);
        let Ok(metadata) = std::fs::symlink_metadata(&file) else {
            // Missing: SQLite makes it.
            continue;
        };
        let problem = if metadata.is_file() {
            nix::unistd::access(
                &file,
                nix::unistd::AccessFlags::R_OK | nix::unistd::AccessFlags::W_OK,
            )
            .err()
            .map(|errno| errno.desc().to_owned())
        } else {
            Some("it is not a regular file".to_owned())
        };
        if let Some(problem) = problem {
            let message = format!(
                "the SQLite {what} {} cannot be written by this process ({problem}): SQLite \
                 would serve reads and refuse every write. Make it writable (or, while no \
                 process has the database open, remove it: SQLite makes it anew) and start \
                 again",
                file.display()
            );
            tracing::error!("{message}");
            anyhow::bail!(message);
        }
    }
    Ok(())
}

/// The identity of the SQLite file the service opened, to tell when it is gone.
#[derive(Debug, Clone)]
pub struct FileWatch {
    path: PathBuf,
    identity: (u64, u64),
}

impl FileWatch {
    /// The file of `url` as it is now; `None` for PostgreSQL, in-memory or unreadable files.
    pub fn of(url: &str) -> Option<Self> {
        let path = sqlite_path(url)?;
        let identity = identity(&path)?;
        Some(Self { path, identity })
    }

    /// `None` while the file is the one opened; otherwise what happened to it.
    pub fn lost(&self) -> Option<String> {
        match identity(&self.path) {
            Some(now) if now == self.identity => None,
            Some(_) => Some(format!(
                "the database file {} was replaced under the running service",
                self.path.display()
            )),
            None => Some(format!(
                "the database file {} was deleted or moved under the running service",
                self.path.display()
            )),
        }
    }
}

/// The identity of each SQLite file this process connected to, by path.
static OPENED: Mutex<Option<HashMap<PathBuf, (u64, u64)>>> = Mutex::new(None);

/// Remembers the file `db` writes to as it is now (`db::connect`).
pub(super) fn remember_connected(db: &DatabaseConnection) {
    let Some(path) = file_of(db) else {
        return;
    };
    let Some(identity) = identity(&path) else {
        return;
    };
    OPENED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(path, identity);
}

/// After a commit on `db`: `Err` with what happened when the SQLite file at the pool's path
/// is no longer the one connected to. SQLite in WAL mode goes on committing into a deleted
/// file; checking after the commit (one `stat`) leaves no moment in which a write into the
/// deleted file can be acknowledged. Always `Ok` on PostgreSQL.
pub fn confirm_committed(db: &DatabaseConnection) -> Result<(), String> {
    let Some(path) = file_of(db) else {
        return Ok(());
    };
    let connected = OPENED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .and_then(|opened| opened.get(&path).copied());
    match (connected, identity(&path)) {
        (None, _) => Ok(()),
        (Some(connected), Some(now)) if now == connected => Ok(()),
        (Some(_), now) => Err(format!(
            "the database file {} was {} under the running service",
            path.display(),
            if now.is_some() {
                "replaced"
            } else {
                "deleted or moved"
            }
        )),
    }
}

/// The file of a SQLite pool, as its driver opens it; `None` on PostgreSQL.
fn file_of(db: &DatabaseConnection) -> Option<PathBuf> {
    (db.get_database_backend() == DbBackend::Sqlite).then(|| {
        db.get_sqlite_connection_pool()
            .connect_options()
            .get_filename()
            .to_path_buf()
    })
}

/// Device and inode: a file deleted and made anew at the same path is not the same file.
fn identity(path: &Path) -> Option<(u64, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.dev(), metadata.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_in_an_existing_folder_is_refused_unless_asked() {
        let folder = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", folder.path().join("lms.sqlite3").display());
        let refusal = prepare(&url, CreateDatabase::OnFirstStart).unwrap_err();
        assert!(
            refusal.to_string().contains("--create-database"),
            "{refusal}"
        );
        assert!(prepare(&url, CreateDatabase::Yes).unwrap());
        assert!(prepare(&format!("{url}?mode=rwc"), CreateDatabase::OnFirstStart).unwrap());
    }

    #[test]
    fn a_wal_index_that_is_not_a_file_refuses_the_start() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("lms.sqlite3");
        std::fs::write(&path, b"").unwrap();
        let url = format!("sqlite://{}", path.display());
        assert!(!prepare(&url, CreateDatabase::OnFirstStart).unwrap());
        std::fs::create_dir(folder.path().join("lms.sqlite3-shm")).unwrap();
        let refusal = prepare(&url, CreateDatabase::OnFirstStart).unwrap_err();
        let said = refusal.to_string();
        assert!(
            said.contains("lms.sqlite3-shm") && said.contains("WAL index"),
            "{said}"
        );
    }

    #[test]
    fn a_first_start_makes_the_folder() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("data/lms.sqlite3");
        let url = format!("sqlite://{}", path.display());
        assert!(prepare(&url, CreateDatabase::OnFirstStart).unwrap());
        assert!(path.parent().unwrap().is_dir());
    }

    #[test]
    fn a_deleted_or_replaced_file_is_noticed() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("lms.sqlite3");
        std::fs::write(&path, b"x").unwrap();
        let url = format!("sqlite://{}", path.display());
        let watch = FileWatch::of(&url).unwrap();
        assert_eq!(watch.lost(), None);
        // Held open, as the service holds it, so its inode cannot be given to the new file.
        let _still_open = std::fs::File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(watch.lost().unwrap().contains("deleted"));
        std::fs::write(&path, b"y").unwrap();
        assert!(watch.lost().is_some());
    }
}
