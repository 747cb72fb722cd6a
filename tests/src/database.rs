//! A fresh database per test, from the workspace's testkit: a SQLite file in a temporary
//! folder, or a new database on the PostgreSQL server named by `LMS_TEST_POSTGRES_URL`,
//! dropped afterwards.

pub use lms_testkit::{Backend, POSTGRES_URL_VAR, TestDatabase};

/// The backends a benchmark runs on: those `LMS_BENCH_BACKENDS` names (`sqlite`, `postgres`,
/// comma-separated), else SQLite, and PostgreSQL too when `LMS_TEST_POSTGRES_URL` is set.
pub fn bench_backends() -> Vec<Backend> {
    match std::env::var("LMS_BENCH_BACKENDS") {
        Ok(list) => list
            .split(',')
            .filter_map(|name| match name.trim() {
                "sqlite" => Some(Backend::Sqlite),
                "postgres" => Some(Backend::Postgres),
                _ => None,
            })
            .collect(),
        Err(_) if std::env::var(POSTGRES_URL_VAR).is_ok() => {
            vec![Backend::Sqlite, Backend::Postgres]
        }
        Err(_) => vec![Backend::Sqlite],
    }
}
