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
//! - [`audit`]: the audit record as [`db::write_transaction`](crate::db::write_transaction)
//!   bodies write it themselves.

pub mod audit;
pub mod content;
pub mod departments;
pub mod directory;
pub mod enrollments;
pub mod groups;
pub mod points;
pub mod scope;
pub mod tree;

/// Ids per `IN (…)` list of the directory writes that have not moved onto
/// [`db::bulk`](crate::db::bulk) yet.
pub(crate) const ID_CHUNK: usize = 5_000;
