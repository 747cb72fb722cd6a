//! The one error type of the import.

use std::path::PathBuf;

use sea_orm::DbErr;

use crate::db::{fault, unique_violation};

/// The cause of a failure that came from a library, kept for the error chain.
pub(crate) type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why an import was refused. Whatever the variant, nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The document breaks a rule; `entry` names the offending entry, e.g.
    /// `accounts[0].users[3] (email "bob@acme.example.com")`.
    #[error("{entry}: {problem}")]
    Invalid { entry: String, problem: String },
    /// The file could not be read.
    #[error("cannot read {}: {source}", file.display())]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON/YAML of the document's shape; `message` says where and why.
    #[error("cannot parse {}: {message}", file.display())]
    Parse {
        file: PathBuf,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
        #[source]
        source: Cause,
    },
    /// The file's extension names no supported format.
    #[error(
        "cannot import {}: an import document must be a .json, .yaml or .yml file",
        file.display()
    )]
    UnsupportedFormat { file: PathBuf },
    /// Hashing a plain-text password failed.
    #[error("password hashing failed")]
    Hashing(#[source] Cause),
    /// A row of the document collides with one written meanwhile (a unique-key
    /// violation, see `db::conflict`).
    #[error("the database refused the import: {0}")]
    Conflict(&'static str),
    #[error("the database failed during the import")]
    Database(#[source] DbErr),
}

impl ImportError {
    pub(crate) fn invalid(entry: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Invalid {
            entry: entry.into(),
            problem: problem.into(),
        }
    }
}

/// A unique-key violation is a conflict with a row written meanwhile, worded as the services
/// word it (`db::conflict`); any other database error fails the import as it is.
impl From<DbErr> for ImportError {
    fn from(err: DbErr) -> Self {
        match unique_violation(&err) {
            Some(key) => Self::Conflict(key.message()),
            None => {
                fault::observe(&err);
                Self::Database(err)
            }
        }
    }
}
