//! The import document (contract section 9).
//!
//! An import loads whole accounts (departments, custom roles, users, groups, projects,
//! content items, enrollments, points) from a JSON or YAML file in one transaction:
//! either all of it lands, or nothing does and the error names the offending entry.
//!
//! Layout:
//! - [`document`]: the serde types of the document, read by file extension.
//! - `stream`: a JSON file checked entry by entry as it is read, never held whole.
//! - `validate`: every rule checked in memory, giving a plan of rows (the department
//!   tree ordered parents first, its closure rows computed by `tree`).
//! - `load`: [`import_document`] / [`import_file`]: the database checks, password
//!   hashing off the async runtime, and the one transaction (`transaction`: SeaORM's on
//!   SQLite, a sqlx one that `COPY`s on PostgreSQL); `tables` builds each table's rows as
//!   plain values for `db::rows` and `db::copy`, `bulk_keys` (with `replica`) checks the long
//!   tables' foreign keys once per large import on PostgreSQL, `bulk_indexes` builds their
//!   indexes once after a large import on SQLite, `progress` tells the caller
//!   how far it has got.

mod bulk_indexes;
mod bulk_keys;
pub mod document;
mod error;
#[cfg(test)]
mod fuzz;
mod load;
mod progress;
mod replica;
mod stream;
mod tables;
mod transaction;
mod tree;
mod validate;

pub use self::{
    document::ImportDocument,
    error::ImportError,
    load::{
        ImportSummary, import_document, import_document_with_progress, import_file,
        import_file_with_progress,
    },
    progress::{ImportProgress, ImportStage, ProgressFn},
};
