//! The operations, as functions over a database connection that take an authenticated
//! [`Caller`](crate::access::Caller) and return [`ServiceError`](crate::error::ServiceError).
//! They know SeaORM and permissions, nothing of gRPC or XML. One module per resource:
//!
//! - [`users`]: create users, set their password, role, managed departments, active flag.
//! - [`user_reads`]: read one user's profile, list users whole (filtered) or by keyset pages.
//! - [`user_writes`]: add users, change their password and status, scoped (over HTTP).
//! - [`departments`]: create, update and delete departments (moves keep the closure right).
//! - [`department_reads`]: read one department, list them whole or by keyset pages.
//! - [`groups`]: read, rename and create groups, add members.
//! - [`group_reads`]: list groups whole or by keyset pages.
//! - [`group_writes`]: create, delete groups and replace members over HTTP (scoped).
//! - [`enrollments`]: enroll users, delete enrollments.
//! - [`enrollment_reads`]: list enrollments whole or by keyset pages.
//! - [`enrollment_writes`]: enroll learners in courses (`POST /enrollment`).
//! - [`content`]: create projects and content items, read a content item.
//! - [`content_reads`]: list content items whole or by keyset pages.
//! - [`points`]: add to a user's points, read points as a stream.
//! - [`points_writes`]: award and withdraw points over HTTP (scoped).
//! - [`keyset`]: keyset paging shared by every listing.
//! - [`lookups`]: what several services ask: rows of the caller's account, referenced
//!   ids checked, department-subtree questions.
//! - [`tree`]: keeping `department_closure` right when departments are added or moved.
//!
//! Every write goes through [`db::write`](crate::db::write()), which takes the account's
//! lock, writes the audit rows the body records, and after the commit tells the
//! authenticator when who a caller is changed: no service or adapter does that by hand.
//!
//! Every operation checks the caller's permission first, then its input, then what the
//! addressed resource and referenced ids name: 403 before 400 before 404. Adapters
//! convert requests into parsed inputs ([`Parsed`]) up front; a service looks at the
//! outcome only once the permission is granted, so an unpermitted caller learns nothing
//! about the input rules.

pub mod api_clients;
pub mod content;
pub mod departments;
pub mod enrollments;
pub mod groups;
pub mod keyset;
pub mod lookups;
pub mod points;
pub mod users;

/// A request's values parsed by the adapter, or the first that broke its rule.
pub type Parsed<T> = Result<T, crate::domain::Invalid>;
