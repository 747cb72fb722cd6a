//! Hot reads of a SQLite file on the calling thread.
//!
//! sqlx runs every SQLite connection on a thread of its own: a statement goes there through
//! a channel and its rows come back through another, two thread wake-ups and two context
//! switches for a read that itself takes microseconds. On a machine of two cores (and more
//! so in a virtual machine, where waking another core is a trip through the hypervisor) that
//! hand-over costs more than the read. Here the same SQLite library reads the file through
//! connections of this module, on the runtime's thread that asks, without a hand-over.
//!
//! That thread serves other requests too, so nothing here may hold it for long:
//! - a statement still running after [`TIME_BUDGET`] is interrupted and answered `None`, and
//!   the caller reads it through the driver instead (a group of 100,000 members, say);
//! - the connections never wait for a lock (`busy_timeout` 0): in WAL mode a reader waits for
//!   nothing but a rare recovery, and then it too is answered `None`;
//! - any other error, an unsupported parameter type, an in-memory database, or a database
//!   marked down ([`Outage`]) are answered `None` as well: faults are met and reported by the
//!   driver's path alone, which classifies them ([`crate::db::fault`]).
//!
//! A connection is closed after an error, and connections opened before the last fault are
//! closed as the pool's are ([`crate::db::fault::opened_before_last_fault`]).

use std::{
    path::PathBuf,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use lms_runtime::Outage;
use rusqlite::{
    OpenFlags,
    types::{ToSqlOutput, Value},
};
use sea_orm::{
    Statement,
    sea_query::{self, Values},
    sqlx::sqlite::SqliteConnectOptions,
};

use crate::db::fault;

/// How long a statement may hold the calling thread before it is handed to the driver.
pub(super) const TIME_BUDGET: Duration = Duration::from_millis(1);
/// SQLite calls the progress handler after this many virtual-machine steps.
const STEPS_PER_CHECK: i32 = 1_000;
/// After a failed open, reads go to the driver this long before the next try: a file that
/// cannot be opened (gone, unreadable) must not cost every read a failed `open`.
const REOPEN_AFTER: Duration = Duration::from_secs(1);

/// The rows of one read: column names, and each row's values in that order.
pub(super) struct InlineRows {
    pub(super) columns: Arc<[String]>,
    pub(super) rows: Vec<Vec<Value>>,
}

pub(super) struct InlineSqlite {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// Idle connections kept: one per thread that may read at once is enough.
    keep: usize,
    outage: &'static Outage,
    /// When the last open failed, until one succeeds.
    failed_open: Mutex<Option<Instant>>,
    opens_tried: AtomicU64,
}

struct Connection {
    connection: rusqlite::Connection,
    opened: Instant,
    /// Nanoseconds after `opened` at which the running statement is interrupted.
    deadline: Arc<AtomicU64>,
}

impl InlineSqlite {
    /// A reader of the file the pool's `options` open; `None` for an in-memory database,
    /// which another connection would not see.
    pub(super) fn of(
        options: &SqliteConnectOptions,
        keep: usize,
        outage: &'static Outage,
    ) -> Option<Self> {
        let path = options.get_filename();
        let name = path.to_string_lossy();
        if name.is_empty() || name == ":memory:" || name.starts_with("file:") {
            return None;
        }
        Some(Self {
            path: path.to_path_buf(),
            idle: Mutex::new(Vec::with_capacity(keep)),
            keep,
            outage,
            failed_open: Mutex::new(None),
            opens_tried: AtomicU64::new(0),
        })
    }

    /// Every row of the read-only `statement`, read on this thread; `None` when the driver
    /// must read it instead (see the module's documentation).
    pub(super) fn read(&self, statement: &Statement) -> Option<InlineRows> {
        if self.outage.is_down() {
            return None;
        }
        let params = parameters(statement.values.as_ref())?;
        let connection = self.take()?;
        let deadline = connection.opened.elapsed() + TIME_BUDGET;
        connection
            .deadline
            .store(nanos(deadline), Ordering::Relaxed);
        match query(&connection.connection, &statement.sql, &params) {
            Ok(rows) => {
                self.give_back(connection);
                Some(rows)
            }
            // Over the time budget: the connection is sound, the statement is the driver's.
            Err(rusqlite::Error::SqliteFailure(err, _))
                if err.code == rusqlite::ErrorCode::OperationInterrupted =>
            {
                self.give_back(connection);
                None
            }
            Err(_) => None,
        }
    }

    fn take(&self) -> Option<Connection> {
        let idle = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.retain(|held| !fault::opened_before_last_fault(held.opened.elapsed()));
            idle.pop()
        };
        idle.or_else(|| self.open_unless_failing())
    }

    /// A new connection, unless an open failed less than [`REOPEN_AFTER`] ago; the first
    /// failure is logged, since inline reads are off while it lasts.
    fn open_unless_failing(&self) -> Option<Connection> {
        let failed_at = *self.failed_open.lock().unwrap_or_else(|e| e.into_inner());
        if failed_at.is_some_and(|at| at.elapsed() < REOPEN_AFTER) {
            return None;
        }
        self.opens_tried.fetch_add(1, Ordering::Relaxed);
        let opened = self.open();
        let mut failed = self.failed_open.lock().unwrap_or_else(|e| e.into_inner());
        match opened {
            Ok(connection) => {
                *failed = None;
                Some(connection)
            }
            Err(error) => {
                if failed.replace(Instant::now()).is_none() {
                    tracing::warn!(
                        %error,
                        path = %self.path.display(),
                        "hot reads cannot open the database file: the driver reads them until it opens"
                    );
                }
                None
            }
        }
    }

    fn give_back(&self, connection: Connection) {
        // During an outage a connection serves one read only, as the driver's (see
        // `super::held`): one opened while the files were unwritable would outlive it.
        if self.outage.is_down() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < self.keep {
            idle.push(connection);
        }
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        // Read-write without create, as the pool opens it (a read-only connection could not
        // take part in the WAL's shared memory), and `query_only` so it never writes.
        let connection = rusqlite::Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        connection.busy_timeout(Duration::ZERO)?;
        // The pool's page cache and memory map (`db::connect`).
        connection.execute_batch(
            "PRAGMA query_only = 1; PRAGMA cache_size = -32768; PRAGMA mmap_size = 67108864;",
        )?;
        let opened = Instant::now();
        let deadline = Arc::new(AtomicU64::new(u64::MAX));
        let watched = deadline.clone();
        connection.progress_handler(
            STEPS_PER_CHECK,
            Some(move || nanos(opened.elapsed()) > watched.load(Ordering::Relaxed)),
        )?;
        Ok(Connection {
            connection,
            opened,
            deadline,
        })
    }

    /// Opens tried so far.
    #[cfg(test)]
    pub(super) fn opens_tried(&self) -> u64 {
        self.opens_tried.load(Ordering::Relaxed)
    }

    /// Idle connections held now.
    #[cfg(test)]
    pub(super) fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

fn query(
    connection: &rusqlite::Connection,
    sql: &str,
    params: &[ToSqlOutput<'_>],
) -> rusqlite::Result<InlineRows> {
    let mut statement = connection.prepare_cached(sql)?;
    let columns: Arc<[String]> = statement
        .column_names()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let width = columns.len();
    let mut rows = Vec::new();
    let mut cursor = statement.query(rusqlite::params_from_iter(params))?;
    while let Some(row) = cursor.next()? {
        rows.push(
            (0..width)
                .map(|i| row.get::<_, Value>(i))
                .collect::<rusqlite::Result<_>>()?,
        );
    }
    Ok(InlineRows { columns, rows })
}

/// The statement's parameters bound as sqlx binds them on SQLite (a UUID as its 16 bytes);
/// `None` for a type the hot reads do not use, which the driver binds instead.
fn parameters(values: Option<&Values>) -> Option<Vec<ToSqlOutput<'_>>> {
    use sea_query::Value as V;
    let Some(Values(values)) = values else {
        return Some(Vec::new());
    };
    values
        .iter()
        .map(|value| {
            Some(match value {
                V::Uuid(Some(id)) => ToSqlOutput::Borrowed(id.as_bytes().as_slice().into()),
                V::String(Some(text)) => ToSqlOutput::Borrowed(text.as_str().into()),
                V::BigInt(Some(n)) => ToSqlOutput::Owned(Value::Integer(*n)),
                V::Int(Some(n)) => ToSqlOutput::Owned(Value::Integer(i64::from(*n))),
                V::Bool(Some(b)) => ToSqlOutput::Owned(Value::Integer(i64::from(*b))),
                V::Uuid(None)
                | V::String(None)
                | V::BigInt(None)
                | V::Int(None)
                | V::Bool(None) => ToSqlOutput::Owned(Value::Null),
                _ => return None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use sea_orm::DbBackend;

    use super::*;

    /// A file that cannot be opened costs one failed open a second, not one a read; once it
    /// opens, reads are inline again.
    #[test]
    fn a_file_that_cannot_be_opened_is_tried_again_only_after_a_pause() {
        static OUTAGE: Outage = Outage::new("the test database", Duration::from_secs(2));
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("later.sqlite3");
        let options = SqliteConnectOptions::new().filename(&path);
        let inline = InlineSqlite::of(&options, 1, &OUTAGE).expect("a file database");
        let select = Statement::from_string(DbBackend::Sqlite, "SELECT 1 AS n");

        for _ in 0..100 {
            assert!(inline.read(&select).is_none(), "no file: the driver reads");
        }
        assert_eq!(inline.opens_tried(), 1, "one open tried, not one per read");

        rusqlite::Connection::open(&path).unwrap();
        assert!(inline.read(&select).is_none(), "still pausing");
        std::thread::sleep(REOPEN_AFTER + Duration::from_millis(100));
        let rows = inline
            .read(&select)
            .expect("read inline once the file opens");
        assert_eq!(rows.rows, vec![vec![Value::Integer(1)]]);
        assert_eq!(inline.opens_tried(), 2);
    }
}
