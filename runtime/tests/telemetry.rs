//! Telemetry set-up: once per process works, a second attempt is an error and not a panic.

use lms_runtime::{LogFormat, Telemetry, TracedService};

#[tokio::test]
async fn telemetry_installs_once_and_refuses_a_second_install_without_panicking() {
    let services = [TracedService::whole("lms-telemetry-test")];
    let guard = Telemetry::init(LogFormat::Text, &services).expect("first install");
    tracing::info!("telemetry is up");
    assert!(Telemetry::init(LogFormat::Json, &services).is_err());
    drop(guard);
}
