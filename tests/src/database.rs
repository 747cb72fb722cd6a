//! A fresh database per test, from the workspace's testkit: a SQLite file in a temporary
//! folder, or a new database on the PostgreSQL server named by `LMS_TEST_POSTGRES_URL`,
//! dropped afterwards.

pub use lms_testkit::{Backend, POSTGRES_URL_VAR, TestDatabase};
