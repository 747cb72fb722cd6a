//! Database errors that are the database's bad moment, not the request's mistake or a bug.
//!
//! - [`is_unavailable`]: the database could not be reached or failed below SQL (a refused or
//!   reset connection, a terminated PostgreSQL backend, an exhausted pool, a SQLite I/O
//!   error, a stale WAL snapshot). The request may succeed when retried: the caller gets
//!   UNAVAILABLE (503), not INTERNAL.
//! - [`observe`]: such an error also marks every pooled connection opened before it as
//!   suspect. A SQLite connection that saw its `-wal`/`-shm` files fail kept answering
//!   SQLITE_BUSY_SNAPSHOT (517) until a restart, and a PostgreSQL connection whose backend
//!   was terminated fails its next statement: `db::connect`'s pool hooks close them instead of
//!   handing them out again ([`opened_before_last_fault`]).
//! - [`root_cause`]: the line operators need: SQLite's extended result code or PostgreSQL's
//!   SQLSTATE, and the driver's message.
//!
//! The fault mark is one per process: a service has one database, and when tests run several
//! in one process a fault in one only costs the others a reconnect.

use std::{
    sync::{
        OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use lms_runtime::Outage;
use sea_orm::{DbErr, RuntimeErr, sqlx};

/// Whether the database is out of reach (answered 503), seen from this process's requests.
/// Its end is seen by the core's periodic read of the auth revision, which may succeed while
/// writes still fail: the outage ends only after two seconds without a failed request.
pub static DATABASE_OUTAGE: Outage = Outage::new("the database", Duration::from_secs(2));

// SQLite primary result codes (the low byte of an extended code).
const SQLITE_BUSY: i64 = 5;
const SQLITE_LOCKED: i64 = 6;
const SQLITE_NOMEM: i64 = 7;
const SQLITE_READONLY: i64 = 8;
const SQLITE_IOERR: i64 = 10;
const SQLITE_FULL: i64 = 13;
const SQLITE_CANTOPEN: i64 = 14;
const SQLITE_PROTOCOL: i64 = 15;
/// SQLITE_BUSY_SNAPSHOT: a read transaction's snapshot is older than the WAL.
const SQLITE_BUSY_SNAPSHOT: i64 = 517;

/// What a driver error says about the connection it happened on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The request's own failure (a constraint, bad SQL, a type mismatch): not transient.
    Statement,
    /// Waiting for a lock ran out; the connection itself is sound.
    Contention,
    /// The connection or the files under it failed; it should not be used again.
    Broken,
}

fn kind(err: &DbErr) -> Kind {
    match err {
        DbErr::ConnectionAcquire(_) => Kind::Contention,
        DbErr::Conn(RuntimeErr::SqlxError(e))
        | DbErr::Exec(RuntimeErr::SqlxError(e))
        | DbErr::Query(RuntimeErr::SqlxError(e)) => sqlx_kind(e),
        // SeaORM's own connection errors carry only text.
        DbErr::Conn(RuntimeErr::Internal(_)) => Kind::Broken,
        _ => Kind::Statement,
    }
}

/// Whether a database error came from PostgreSQL: told by the driver, not by the code's
/// look, since SQLSTATEs such as 57014 are all digits like SQLite's codes.
fn from_postgres(db: &dyn sqlx::error::DatabaseError) -> bool {
    db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
        .is_some()
}

fn sqlx_kind(err: &sqlx::Error) -> Kind {
    match err {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::BeginFailed => Kind::Broken,
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => Kind::Contention,
        sqlx::Error::Database(db) => {
            let Some(code) = db.code() else {
                return Kind::Statement;
            };
            if from_postgres(db.as_ref()) {
                postgres_kind(&code)
            } else if let Ok(extended) = code.parse::<i64>() {
                sqlite_kind(extended)
            } else {
                Kind::Statement
            }
        }
        _ => Kind::Statement,
    }
}

fn sqlite_kind(extended: i64) -> Kind {
    if extended == SQLITE_BUSY_SNAPSHOT {
        return Kind::Broken;
    }
    match extended & 0xff {
        SQLITE_BUSY | SQLITE_LOCKED => Kind::Contention,
        SQLITE_NOMEM | SQLITE_READONLY | SQLITE_IOERR | SQLITE_FULL | SQLITE_CANTOPEN
        | SQLITE_PROTOCOL => Kind::Broken,
        _ => Kind::Statement,
    }
}

fn postgres_kind(sqlstate: &str) -> Kind {
    match sqlstate {
        // connection_exception (08…), admin/crash shutdown and cannot_connect_now (57P01-03),
        // too_many_connections (53300).
        s if s.starts_with("08") => Kind::Broken,
        "57P01" | "57P02" | "57P03" => Kind::Broken,
        "53300" => Kind::Contention,
        // query_canceled: the serving pool's `statement_timeout` ran out (or an operator
        // cancelled the statement); the connection is sound and a retry may succeed.
        "57014" => Kind::Contention,
        _ => Kind::Statement,
    }
}

/// Whether `err` means the database is out of reach for the moment (a retry may succeed).
pub fn is_unavailable(err: &DbErr) -> bool {
    kind(err) != Kind::Statement
}

/// Whether `err` is a wait for a pooled connection that ran out.
fn is_pool_timeout(err: &DbErr) -> bool {
    match err {
        DbErr::ConnectionAcquire(_) => true,
        DbErr::Conn(RuntimeErr::SqlxError(e))
        | DbErr::Exec(RuntimeErr::SqlxError(e))
        | DbErr::Query(RuntimeErr::SqlxError(e)) => matches!(**e, sqlx::Error::PoolTimedOut),
        _ => false,
    }
}

/// Records `err`: a broken connection marks every connection opened until now for closing.
/// Returns whether the error is one of unavailability.
pub fn observe(err: &DbErr) -> bool {
    if is_pool_timeout(err) {
        crate::metrics::pool_timeout();
    }
    match kind(err) {
        Kind::Statement => false,
        Kind::Contention => true,
        Kind::Broken => {
            mark_connections_suspect();
            true
        }
    }
}

/// Marks every connection opened until now for closing: the database stopped answering
/// (the probe timed out), so a connection that was waiting on it may never answer again.
pub fn mark_connections_suspect() {
    LAST_FAULT_MICROS.fetch_max(micros_since_start(Instant::now()), Ordering::AcqRel);
}

/// Whether a pooled connection of this `age` was opened before the last broken-connection
/// error, and so must be closed rather than used (the pool hooks of `db::connect`).
pub fn opened_before_last_fault(age: Duration) -> bool {
    let last = LAST_FAULT_MICROS.load(Ordering::Acquire);
    if last == 0 {
        return false;
    }
    let now = micros_since_start(Instant::now());
    let opened = now.saturating_sub(u64::try_from(age.as_micros()).unwrap_or(u64::MAX));
    opened <= last
}

/// The error's root cause in one line: the driver's code and message, no backtrace.
pub fn root_cause(err: &DbErr) -> String {
    let sqlx_error = match err {
        DbErr::Conn(RuntimeErr::SqlxError(e))
        | DbErr::Exec(RuntimeErr::SqlxError(e))
        | DbErr::Query(RuntimeErr::SqlxError(e)) => e,
        other => return other.to_string(),
    };
    match &**sqlx_error {
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            match code.parse::<i64>() {
                Ok(extended) if !from_postgres(db.as_ref()) => format!(
                    "SQLite error {extended} ({}): {}",
                    sqlite_code_name(extended),
                    db.message()
                ),
                _ => format!("PostgreSQL error {code}: {}", db.message()),
            }
        }
        sqlx::Error::Io(io) => format!("I/O error ({:?}): {io}", io.kind()),
        other => other.to_string(),
    }
}

/// The name of SQLite's result codes that a fault shows, for the log line.
fn sqlite_code_name(extended: i64) -> &'static str {
    match extended {
        SQLITE_BUSY_SNAPSHOT => "SQLITE_BUSY_SNAPSHOT",
        // SQLITE_READONLY_DBMOVED: the file was renamed or deleted under the connection.
        1032 => "SQLITE_READONLY_DBMOVED",
        _ => match extended & 0xff {
            SQLITE_BUSY => "SQLITE_BUSY",
            SQLITE_LOCKED => "SQLITE_LOCKED",
            SQLITE_NOMEM => "SQLITE_NOMEM",
            SQLITE_READONLY => "SQLITE_READONLY",
            SQLITE_IOERR => "SQLITE_IOERR",
            SQLITE_FULL => "SQLITE_FULL",
            SQLITE_CANTOPEN => "SQLITE_CANTOPEN",
            SQLITE_PROTOCOL => "SQLITE_PROTOCOL",
            _ => "SQLite result code",
        },
    }
}

static LAST_FAULT_MICROS: AtomicU64 = AtomicU64::new(0);

/// Microseconds since the first call, plus one so that 0 means "never".
fn micros_since_start(at: Instant) -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    u64::try_from(at.saturating_duration_since(start).as_micros())
        .unwrap_or(u64::MAX)
        .saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_faults_below_sql_break_the_connection_and_contention_does_not() {
        assert_eq!(sqlite_kind(SQLITE_BUSY_SNAPSHOT), Kind::Broken);
        assert_eq!(sqlite_kind(SQLITE_IOERR), Kind::Broken);
        assert_eq!(sqlite_kind(4874), Kind::Broken, "SQLITE_IOERR_SHMOPEN");
        assert_eq!(sqlite_kind(1032), Kind::Broken, "SQLITE_READONLY_DBMOVED");
        assert_eq!(sqlite_kind(SQLITE_BUSY), Kind::Contention);
        assert_eq!(
            sqlite_kind(2067),
            Kind::Statement,
            "SQLITE_CONSTRAINT_UNIQUE"
        );
    }

    #[test]
    fn terminated_postgres_backends_are_broken_connections() {
        assert_eq!(postgres_kind("57P01"), Kind::Broken);
        assert_eq!(postgres_kind("08006"), Kind::Broken);
        assert_eq!(postgres_kind("23505"), Kind::Statement);
    }

    #[test]
    fn a_statement_cut_by_its_timeout_is_a_passing_fault_on_a_sound_connection() {
        assert_eq!(postgres_kind("57014"), Kind::Contention);
    }

    fn io_error(kind: std::io::ErrorKind) -> DbErr {
        DbErr::Conn(RuntimeErr::SqlxError(std::sync::Arc::new(sqlx::Error::Io(
            std::io::Error::from(kind),
        ))))
    }

    #[test]
    fn a_pool_timeout_is_unavailability() {
        let pool_timeout = DbErr::ConnectionAcquire(sea_orm::error::ConnAcquireErr::Timeout);
        assert!(is_unavailable(&pool_timeout));
    }

    #[test]
    fn the_root_cause_names_the_drivers_code() {
        let cause = root_cause(&io_error(std::io::ErrorKind::ConnectionReset));
        assert!(cause.contains("ConnectionReset"), "{cause}");
    }

    #[test]
    fn connections_opened_before_a_fault_are_closed_and_later_ones_kept() {
        let err = io_error(std::io::ErrorKind::ConnectionReset);
        assert!(observe(&err));
        assert!(opened_before_last_fault(Duration::from_secs(1)));
        std::thread::sleep(Duration::from_millis(2));
        assert!(!opened_before_last_fault(Duration::from_micros(500)));
    }
}
