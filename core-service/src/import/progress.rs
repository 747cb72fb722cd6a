//! How far an import has got, told to whoever started it.
//!
//! The core only counts; drawing a bar or printing lines is the caller's business, so
//! the service stays free of terminal code.

use std::{
    fmt,
    io::Read,
    sync::atomic::{AtomicU64, Ordering},
};

/// What an import is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportStage {
    /// Reading and checking the document (`done` and `total` count bytes read, over the two
    /// passes a JSON document is read in; both 0 for YAML, which is read whole).
    Validating,
    /// Hashing plain passwords (`done` and `total` count passwords).
    Hashing,
    /// Writing rows inside the transaction (`done` and `total` count rows).
    Writing,
    /// Rows written; building the indexes a large SQLite import left out while it wrote
    /// (`done` and `total` count indexes; not reported when there are none).
    Indexing,
    /// Indexes built; refreshing the planner's statistics (and, after a large PostgreSQL
    /// import, checking the long tables' foreign keys, and on a first load building their indexes)
    /// before the commit.
    Analyzing,
}

impl fmt::Display for ImportStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ImportStage::Validating => "validating",
            ImportStage::Hashing => "hashing passwords",
            ImportStage::Writing => "writing",
            ImportStage::Indexing => "indexing",
            ImportStage::Analyzing => "analyzing",
        })
    }
}

/// One report: `done` of `total` units of `stage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportProgress {
    pub stage: ImportStage,
    pub done: u64,
    pub total: u64,
}

/// Called with each report, from whichever task does the work: keep it cheap.
pub type ProgressFn<'a> = &'a (dyn Fn(ImportProgress) + Send + Sync);

/// The optional callback of one import.
#[derive(Clone, Copy)]
pub(crate) struct Reporter<'a>(pub(crate) Option<ProgressFn<'a>>);

impl Reporter<'_> {
    pub(crate) fn report(&self, stage: ImportStage, done: u64, total: u64) {
        if let Some(callback) = self.0 {
            callback(ImportProgress { stage, done, total });
        }
    }
}

/// A reader adding every byte it reads to a counter another thread looks at.
pub(crate) struct Counted<'a, R> {
    inner: R,
    read: &'a AtomicU64,
}

impl<'a, R> Counted<'a, R> {
    pub(crate) fn new(inner: R, read: &'a AtomicU64) -> Self {
        Self { inner, read }
    }
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
