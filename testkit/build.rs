//! Fingerprints the migrations' source, so that a template database built by one version of
//! the migrations is never used for another (see `src/postgres.rs` and `src/sqlite.rs`).

use std::{
    fs,
    hash::{DefaultHasher, Hash as _, Hasher as _},
    path::Path,
};

fn main() {
    // Read at run time, not compiled in: a build script binary reused from another checkout
    // of the workspace must look at this checkout's migrations.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let migrations = Path::new(&manifest_dir).join("../migrations/src");
    println!("cargo::rerun-if-changed={}", migrations.display());
    let mut files: Vec<_> = fs::read_dir(&migrations)
        .expect("the migrations crate sits next to the testkit")
        .map(|entry| entry.expect("a readable directory entry").path())
        .collect();
    files.sort();
    let mut hasher = DefaultHasher::new();
    for file in files {
        file.file_name().hash(&mut hasher);
        fs::read(&file)
            .expect("a readable migration file")
            .hash(&mut hasher);
    }
    println!(
        "cargo::rustc-env=LMS_MIGRATIONS_FINGERPRINT={:016x}",
        hasher.finish()
    );
}
