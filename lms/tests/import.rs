//! What `lms import` tells the person running it, run as the real binary on a real database
//! of each backend: the migrations in one line, each stage of the import once with how long
//! it took, and a last line with the whole command's time and rate.

use std::process::{Command, Output};

use lms_testkit::{Backend, TestDatabase};

fn import(database_url: &str, file: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lms"))
        .args([
            "import",
            "--create-database",
            "--database-url",
            database_url,
        ])
        .arg(file)
        // What a person sees by default, whatever the test run's own settings.
        .env_remove("RUST_LOG")
        .env_remove("LMS_LOG_FORMAT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .output()
        .expect("lms runs")
}

/// The number in `text` right after `before`, thousands separators allowed.
fn number_after(text: &str, before: &str) -> Option<u64> {
    let rest = &text[text.find(before)? + before.len()..];
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[tokio::test]
async fn an_import_says_each_stage_once_and_ends_with_its_time_and_rate() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(database) = TestDatabase::create_empty(backend).await else {
            continue;
        };
        let folder = tempfile::tempdir().expect("a temporary folder");
        let file = folder.path().join("demo.json");
        let document = serde_json::to_vec(&lms::demo::demo_document()).expect("JSON");
        std::fs::write(&file, document).expect("the document is written");

        let output = import(&database.url, &file);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let name = backend.name();
        assert!(output.status.success(), "{name}: {stdout}\n{stderr}");

        // The empty database gets every migration, said in one line.
        let migration_lines: Vec<&str> = stderr
            .lines()
            .filter(|line| line.to_lowercase().contains("migration"))
            .collect();
        assert_eq!(migration_lines.len(), 1, "{name}: {stderr}");
        assert!(
            migration_lines[0].contains("database: applied ")
                && migration_lines[0].contains("schema up to date"),
            "{name}: {stderr}"
        );

        let lines: Vec<&str> = stdout.lines().collect();
        let first = |prefix: &str| {
            lines
                .iter()
                .position(|line| line.starts_with(prefix))
                .unwrap_or_else(|| panic!("{name}: a line {prefix:?} in\n{stdout}"))
        };
        let only = |needle: &str| {
            let found: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].contains(needle))
                .collect();
            assert_eq!(found.len(), 1, "{name}: one line {needle:?} in\n{stdout}");
            found[0]
        };
        // Each stage begins with a line and ends with one saying how long it took, in the
        // order they run.
        let stages = [
            first("import: checking the document ("),
            only("import: document checked in "),
            first("import: hashing passwords "),
            only(" passwords hashed in "),
            first("import: writing "),
            only(" rows written in "),
            only("import: refreshing the planner's statistics (ANALYZE)"),
            only("import: planner's statistics refreshed in "),
        ];
        assert!(
            stages.windows(2).all(|pair| pair[0] < pair[1]),
            "{name}: stages out of order in\n{stdout}"
        );
        let written = stages[5];

        // The last line: what was imported, the whole command's time and the rate.
        let last = lines.last().expect("a last line");
        assert!(
            last.starts_with(&format!("Imported {} in ", file.display())),
            "{name}: {last}"
        );
        let rows = number_after(lines[written], "import: ").expect("rows written");
        assert!(rows > 0, "{name}: {stdout}");
        assert_eq!(
            number_after(last, " s ("),
            Some(rows),
            "{name}: the rows of the summary are those written: {stdout}"
        );
        let rate = number_after(last, " rows, ").expect("a rate");
        assert!(rate > 0, "{name}: {last}");
        assert!(last.contains(" rows/s): 1 account, "), "{name}: {last}");
    }
}
