//! Test support shared by every crate of the workspace: a fresh database per test, on
//! SQLite or PostgreSQL, built by the real migrations, and a way to run one scenario on
//! both backends.
//!
//! Layout:
//! - [`database`]: [`Backend`] and [`TestDatabase`], a fresh database (a SQLite file in a
//!   temporary folder, or a new PostgreSQL database dropped on drop), migrated or empty.
//! - `postgres`: the PostgreSQL server side: the variable that names the server, the
//!   migrated template new databases are copied from, creating and dropping.
//! - `sqlite`: the migrated SQLite file new SQLite databases are copied from.
//! - [`fixture`]: [`Fixture`], what a scenario runs against, and [`on_both_backends!`],
//!   which declares each scenario once per backend.
//!
//! PostgreSQL runs happen only when [`POSTGRES_URL_VAR`] names a server; otherwise each of
//! them prints [`SKIPPED_WITHOUT_POSTGRES`] and passes.

pub mod database;
pub mod fixture;
mod postgres;
mod sqlite;

pub use database::{Backend, TestConnection, TestDatabase};
pub use fixture::Fixture;
pub use postgres::{POSTGRES_URL_VAR, SKIPPED_WITHOUT_POSTGRES};
