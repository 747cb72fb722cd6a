//! Telemetry set-up: once per process works, a second attempt is an error and not a panic.

use lms_runtime::Telemetry;

#[tokio::test]
async fn telemetry_installs_once_and_refuses_a_second_install_without_panicking() {
    let guard = Telemetry::init("lms-telemetry-test").expect("first install");
    tracing::info!("telemetry is up");
    assert!(Telemetry::init("lms-telemetry-test").is_err());
    drop(guard);
}
