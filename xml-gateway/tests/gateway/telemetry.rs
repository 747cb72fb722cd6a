//! Telemetry set-up: once per process works, a second attempt is an error and not a panic.

#[tokio::test]
async fn telemetry_installs_once_and_refuses_a_second_install_without_panicking() {
    let guard = lms_gateway::init_telemetry("lms-gateway-test").expect("first install");
    tracing::info!("telemetry is up");
    assert!(lms_gateway::init_telemetry("lms-gateway-test").is_err());
    drop(guard);
}
