//! The operations, as functions over a database connection that take an authenticated
//! [`Caller`](crate::access::Caller) and return [`ServiceError`](crate::error::ServiceError).
//! They know SeaORM and permissions, nothing of gRPC or XML.
//!
//! - [`departments`], [`groups`], [`enrollments`], [`content`], [`points`]: the seven
//!   operations of the administration interface.
//! - [`directory`]: the writes internal services use (users, groups, projects, content,
//!   enrollments, points).
//! - [`scope`]: department-subtree questions, answered through `department_closure`.
//! - [`tree`]: keeping `department_closure` right when departments are added or moved.
//! - [`audit`]: the audit record every change writes in its own transaction.

pub mod audit;
pub mod content;
pub mod departments;
pub mod directory;
pub mod enrollments;
pub mod groups;
pub mod points;
pub mod scope;
pub mod tree;

/// SQLite allows 32,766 bound parameters per statement; PostgreSQL 65,535. Lists of
/// ids go to the database in chunks well below both.
pub(crate) const ID_CHUNK: usize = 5_000;
