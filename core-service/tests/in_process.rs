//! The core serves its services in process and over TCP at once: `lms up`'s gateway calls
//! them in process while internal callers use the gRPC port, and a stopped core refuses the
//! in-process calls as a closed port would.

use std::time::Duration;

use lms_core::{app::App, settings::CoreSettings};
use lms_testkit::{Backend, TestDatabase};
use tonic::transport::Endpoint;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

async fn serving<T>(transport: T) -> Result<ServingStatus, tonic::Status>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: tonic::codegen::Body<Data = tonic::codegen::Bytes> + Send + 'static,
    <T::ResponseBody as tonic::codegen::Body>::Error: Into<tonic::codegen::StdError> + Send,
{
    let answer = HealthClient::new(transport)
        .check(HealthCheckRequest {
            service: "lms.v1.AdminService".into(),
        })
        .await?;
    Ok(answer.into_inner().status())
}

#[tokio::test]
async fn in_process_calls_and_tcp_are_served_together_and_refused_once_the_core_stops() {
    let database = TestDatabase::create(Backend::Sqlite)
        .await
        .expect("SQLite is always available");
    let mut settings = CoreSettings::for_database(database.url.clone());
    settings.grpc_addr = ([127, 0, 0, 1], 0).into();
    let core = App::build(&settings).await.expect("core builds");
    let in_process = core.in_process();
    let tcp = Endpoint::from_shared(format!("http://{}", core.grpc_addr())).expect("endpoint");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(core.run_until(async {
        let _ = stopped.await;
    }));

    let (direct, over_tcp) = tokio::join!(
        serving(in_process.clone()),
        serving(tcp.connect().await.expect("TCP is served"))
    );
    assert_eq!(direct.expect("answered in process"), ServingStatus::Serving);
    assert_eq!(over_tcp.expect("answered over TCP"), ServingStatus::Serving);
    let calls = (0..32).map(|_| serving(in_process.clone()));
    for answer in futures::future::join_all(calls).await {
        assert_eq!(answer.expect("answered"), ServingStatus::Serving);
    }

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the core stops")
        .expect("core task")
        .expect("the core stops cleanly");
    let refused = serving(in_process)
        .await
        .expect_err("a stopped core answered");
    let refused_at_connection =
        std::iter::successors(std::error::Error::source(&refused), |error| error.source()).any(
            |error| {
                error
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
            },
        );
    assert!(refused_at_connection, "{refused:?}");
}
