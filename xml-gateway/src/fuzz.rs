//! Settings of the property-based fuzz targets, which run with `cargo test` in a few seconds
//! each. `LMS_FUZZ_CASES` runs each target longer (see docs/fuzzing.md).

use proptest::test_runner::Config;

/// `default_cases` generated inputs per target, unless `LMS_FUZZ_CASES` asks for more or fewer.
pub(crate) fn config(default_cases: u32) -> Config {
    let cases = std::env::var("LMS_FUZZ_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        // Failures are reported with their minimal input; no files are written into the tree.
        failure_persistence: None,
        ..Config::default()
    }
}
