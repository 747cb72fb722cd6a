//! The import document (contract section 9) and the built-in demo account.
//!
//! An import loads whole accounts (departments, custom roles, users, groups, projects,
//! content items, enrollments, points) from a JSON or YAML file in one transaction:
//! either all of it lands, or nothing does and the error names the offending entry.
//!
//! Layout:
//! - [`document`]: the serde types of the document, read by file extension.
//! - `validate`: every rule checked in memory, giving a plan of rows (the department
//!   tree ordered parents first, its closure rows computed by `tree`).
//! - `load`: [`import_document`] / [`import_file`]: the database checks, password
//!   hashing off the async runtime, and the one transaction.
//! - [`demo`]: the demo account of `lms up --demo`.

pub mod demo;
pub mod document;
mod error;
mod load;
mod tree;
mod validate;

pub use self::{
    demo::{DEMO_ACCOUNT_URL, DEMO_PASSWORD, DemoAccount, demo_account, demo_document},
    document::ImportDocument,
    error::ImportError,
    load::{ImportSummary, import_document, import_file},
};
