//! The operations, as functions over a database connection that take an authenticated
//! [`Caller`](crate::access::Caller) and return [`ServiceError`](crate::error::ServiceError).
//! They know SeaORM and permissions, nothing of gRPC or XML. One module per resource, and
//! one function per operation whichever door calls it (`lms.v1.AdminService` for the HTTP
//! interface, `lms.v1.DirectoryService` for internal services); a resource's submodules are
//! named for what they do:
//!
//! - [`users`]: `read` (one profile, lists whole, streamed or by pages), `edit` (add,
//!   change password, role, departments, status, delete), `fields` (profile fields),
//!   `lifecycle` (the bulk calls of provisioning: statuses, which ids exist, moves, leaving
//!   groups; the one status write every door uses).
//! - [`departments`]: create, update, delete; `read` (one, lists); `tree` (keeping
//!   `department_closure` right when departments are added or moved).
//! - [`groups`]: read one with its members; `list`; `edit` (create, rename, delete);
//!   `members` (add or replace a plain group's members).
//! - [`enrollments`]: delete; `enroll` (learners in courses); `list`.
//! - [`content`]: create projects and content items, read one; `list`.
//! - [`points`]: read as a stream; `change` (award, withdraw, add).
//! - [`results`]: learner results: the lists, an administrator's status, resets, the
//!   tracked results, tasks.
//! - [`api_clients`]: create, list and revoke the clients of the token endpoint, and SCIM
//!   tokens.
//! - [`scim`]: SCIM 2.0 Users and Groups, as SCIM JSON, through the services above.
//! - [`webhooks`]: subscribers and subscriptions (`subscribers`), the events a write
//!   records for them (`outbox`), and what subscriber info shows.
//! - [`keyset`]: keyset paging and streaming shared by every listing.
//! - [`lookups`]: what several services ask: rows of the caller's account, referenced
//!   ids checked, department-subtree questions.
//! - [`write`](mod@write): the one way a change is written, and [`audit`]: the audit record.
//!
//! Every write goes through [`write()`], which takes the account's
//! lock, writes the audit rows the body records, and after the commit tells the
//! authenticator when who a caller is changed: no service or adapter does that by hand.
//!
//! Every operation checks the caller's permission first, then its input, then what the
//! addressed resource and referenced ids name: 403 before 400 before 404. Adapters
//! convert requests into parsed inputs ([`Parsed`]) up front; a service looks at the
//! outcome only once the permission is granted, so an unpermitted caller learns nothing
//! about the input rules.

pub mod api_clients;
pub mod audit;
pub mod content;
pub mod departments;
pub mod enrollments;
pub mod groups;
pub mod keyset;
pub mod lookups;
pub mod points;
pub mod results;
pub mod scim;
pub mod users;
pub mod webhooks;
pub mod write;

pub use self::write::{Write, write};

/// A request's values parsed by the adapter, or the first that broke its rule.
pub type Parsed<T> = Result<T, crate::domain::Invalid>;
