//! The core serves its in-process pipe and TCP at once: `lms up`'s gateway calls it through
//! the pipe while internal callers use the gRPC port, and a stopped core refuses new pipes.

use std::time::Duration;

use lms_core::{app::App, settings::CoreSettings};
use lms_testkit::{Backend, TestDatabase};
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

async fn serving(channel: Channel) -> Result<ServingStatus, tonic::Status> {
    let answer = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: "lms.v1.AdminService".into(),
        })
        .await?;
    Ok(answer.into_inner().status())
}

#[tokio::test]
async fn the_pipe_and_tcp_are_served_together_and_the_pipe_closes_with_the_core() {
    let database = TestDatabase::create(Backend::Sqlite)
        .await
        .expect("SQLite is always available");
    let mut settings = CoreSettings::for_database(database.url.clone());
    settings.grpc_addr = ([127, 0, 0, 1], 0).into();
    let core = App::build(&settings).await.expect("core builds");
    let pipe = core.in_memory();
    let tcp = Endpoint::from_shared(format!("http://{}", core.grpc_addr())).expect("endpoint");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(core.run_until(async {
        let _ = stopped.await;
    }));

    let through_pipe = pipe.channel();
    let (piped, over_tcp) = tokio::join!(
        serving(through_pipe.clone()),
        serving(tcp.connect().await.expect("TCP is served"))
    );
    assert_eq!(
        piped.expect("answered through the pipe"),
        ServingStatus::Serving
    );
    assert_eq!(over_tcp.expect("answered over TCP"), ServingStatus::Serving);
    // Many calls share one pipe connection, as the gateway's requests do.
    let calls = (0..32).map(|_| serving(through_pipe.clone()));
    for answer in futures::future::join_all(calls).await {
        assert_eq!(answer.expect("answered"), ServingStatus::Serving);
    }

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the core stops")
        .expect("core task")
        .expect("the core stops cleanly");
    let after = serving(pipe.channel()).await;
    assert!(after.is_err(), "a stopped core answered: {after:?}");
}
