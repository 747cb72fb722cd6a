//! `lms-gateway --help` as a user reads it, from the real binary.

use std::process::Command;

#[test]
fn the_help_is_written_for_users() {
    for flag in ["--help", "-h"] {
        let output = Command::new(env!("CARGO_BIN_EXE_lms-gateway"))
            .arg(flag)
            .output()
            .expect("lms-gateway runs");
        assert!(output.status.success());
        let help = String::from_utf8_lossy(&output.stdout);
        assert!(help.starts_with("The LMS's XML"), "{flag}: {help}");
        for internal in ["clap", "struct", "flattened", "Settings of the XML gateway"] {
            assert!(
                !help.contains(internal),
                "{flag} shows {internal:?}:\n{help}"
            );
        }
        assert!(help.contains("--core-url"), "{help}");
    }
}
