//! The operations, as functions over a database connection that take an authenticated
//! [`Caller`](crate::access::Caller) and return [`ServiceError`](crate::error::ServiceError).
//! They know SeaORM and permissions, nothing of gRPC or XML. One module per resource:
//!
//! - [`users`]: create users, set their password, role, managed departments, active flag.
//! - [`departments`]: create and update departments (moves keep the closure right).
//! - [`groups`]: read, rename and create groups, add members.
//! - [`enrollments`]: enroll users, delete enrollments.
//! - [`content`]: create projects and content items, read a content item.
//! - [`points`]: add to a user's points, read points as a stream.
//! - [`lookups`]: what several services ask: rows of the caller's account, referenced
//!   ids checked, department-subtree questions.
//! - [`tree`]: keeping `department_closure` right when departments are added or moved.
//! - [`audit`]: the audit record every change writes in its own transaction.
//!
//! Every operation checks the caller's permission first, then its input, then what the
//! addressed resource and referenced ids name: 403 before 400 before 404. Adapters
//! convert requests into parsed inputs ([`Parsed`]) up front; a service looks at the
//! outcome only once the permission is granted, so an unpermitted caller learns nothing
//! about the input rules.

pub mod audit;
pub mod content;
pub mod departments;
pub mod enrollments;
pub mod groups;
pub mod lookups;
pub mod points;
pub mod tree;
pub mod users;

/// A request's values parsed by the adapter, or the first that broke its rule.
pub type Parsed<T> = Result<T, crate::domain::Invalid>;

/// SQLite allows 32,766 bound parameters per statement; PostgreSQL 65,535. Lists of
/// ids go to the database in chunks well below both.
pub(crate) const ID_CHUNK: usize = 5_000;
