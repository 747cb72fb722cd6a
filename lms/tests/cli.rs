//! What `lms` tells a user when it cannot do what was asked, run as the real binary: a
//! PostgreSQL port that refuses connections is named as such at once, a missing import
//! document leaves no database behind, each cause is said once, and the help is for users.

use std::net::TcpListener;
use std::process::{Command, Output};

fn lms(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lms"))
        .args(args)
        // The report under test is the one a user sees, without a developer's backtrace.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .env_remove("DATABASE_URL")
        .env_remove("LMS_CREATE_DATABASE")
        .output()
        .expect("lms runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A loopback port nothing listens on: bound, then released.
fn refused_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// The lines under `Caused by:`, which must all differ.
fn assert_causes_said_once(stderr: &str) {
    let causes: Vec<&str> = stderr
        .split_once("Caused by:")
        .map(|(_, causes)| {
            causes
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect()
        })
        .unwrap_or_default();
    for (i, cause) in causes.iter().enumerate() {
        for earlier in &causes[..i] {
            assert!(
                !earlier.contains(cause),
                "cause {cause:?} repeats {earlier:?}:\n{stderr}"
            );
        }
    }
}

#[test]
fn a_refused_postgres_port_is_reported_as_refused_naming_the_address() {
    let port = refused_port();
    let url = format!("postgres://lms:secret@127.0.0.1:{port}/lms");
    let output = lms(&["migrate", "--database-url", &url]);
    let stderr = stderr(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains(&format!("connection refused by 127.0.0.1:{port}")),
        "{stderr}"
    );
    assert!(!stderr.contains("pool timed out"), "{stderr}");
    assert!(!stderr.contains("secret"), "the password leaked: {stderr}");
    assert_causes_said_once(&stderr);
}

#[test]
fn a_missing_import_document_creates_and_migrates_nothing() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let database = dir.path().join("data").join("lms.sqlite3");
    let document = dir.path().join("missing.json");
    let url = format!("sqlite://{}", database.display());
    let output = lms(&[
        "import",
        "--database-url",
        &url,
        "--create-database",
        document.to_str().expect("a UTF-8 path"),
    ]);
    let stderr = stderr(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains(&format!("cannot read {}", document.display())),
        "{stderr}"
    );
    assert!(
        !dir.path().join("data").exists(),
        "a database was created for a document that does not exist"
    );
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
    assert_causes_said_once(&stderr);
}

#[test]
fn a_folder_given_as_the_import_document_creates_and_migrates_nothing() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let url = format!("sqlite://{}", dir.path().join("data/lms.sqlite3").display());
    let folder = dir.path().to_str().expect("a UTF-8 path");
    let output = lms(&[
        "import",
        "--database-url",
        &url,
        "--create-database",
        folder,
    ]);
    let stderr = stderr(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains("is a folder, not an import document"),
        "{stderr}"
    );
    assert!(!dir.path().join("data").exists(), "a database was created");
}

#[test]
fn the_help_is_written_for_users() {
    for args in [&["--help"][..], &["up", "--help"], &["import", "--help"]] {
        let output = lms(args);
        assert!(output.status.success(), "{args:?}");
        let help = String::from_utf8_lossy(&output.stdout);
        for internal in ["clap", "struct", "`Args`", "flattened", "Settings of"] {
            assert!(
                !help.contains(internal),
                "{args:?} shows {internal:?}:\n{help}"
            );
        }
    }
    let help = String::from_utf8_lossy(&lms(&["--help"]).stdout).into_owned();
    assert!(help.contains("lms up --demo"), "{help}");
    let import = String::from_utf8_lossy(&lms(&["import", "--help"]).stdout).into_owned();
    assert!(import.contains("The import document"), "{import}");
}
