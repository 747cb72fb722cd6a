//! Settings shared by the core's fuzz targets (see docs/fuzzing.md).

use proptest::test_runner::Config;

/// `default_cases` generated inputs per target, unless `LMS_FUZZ_CASES` asks for more or
/// fewer; no regression files written into the tree.
pub(crate) fn config(default_cases: u32) -> Config {
    let cases = std::env::var("LMS_FUZZ_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}
