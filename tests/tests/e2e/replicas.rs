//! Two core replicas on one database behind one gateway given both `--core-url`s: calls
//! reach both, and the service goes on answering, reads and writes, when one replica stops.

use lms_gateway::{App, GatewaySettings, HttpServerSettings};
use lms_tests::{
    TestStack, on_both_backends,
    stack::StackOptions,
    world::{self, acme},
};

on_both_backends!(a_gateway_spreads_calls_over_two_cores_and_survives_one_stopping);

/// A gateway over `core_urls`, serving until `stop` is sent; its base URL.
async fn gateway(core_urls: Vec<String>) -> (String, tokio::sync::oneshot::Sender<()>) {
    let settings = GatewaySettings {
        http_addr: "127.0.0.1:0".parse().expect("an address"),
        core_urls,
        core_timeout_ms: 10_000,
        server: HttpServerSettings::default(),
        metrics_addr: None,
        public_url: None,
    };
    let app = App::build(settings).await.expect("the gateway starts");
    let base_url = format!("http://{}", app.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(app.run_until(async move {
        let _ = stopped.await;
    }));
    (base_url, stop)
}

async fn read_group(http: &reqwest::Client, base_url: &str) -> (u16, String) {
    read(http, base_url, &format!("/group/{}", acme::INTERNS)).await
}

async fn read(http: &reqwest::Client, base_url: &str, path: &str) -> (u16, String) {
    let response = http
        .get(format!("{base_url}{path}"))
        .header("X-Auth-Account-Url", world::OWNER.account_url)
        .header("X-Auth-Email", world::OWNER.email)
        .header("X-Auth-Password", world::PASSWORD)
        .send()
        .await
        .expect("the gateway answers");
    let status = response.status().as_u16();
    (status, response.text().await.expect("a body"))
}

async fn a_gateway_spreads_calls_over_two_cores_and_survives_one_stopping(first: &TestStack) {
    let second = first.replica(StackOptions::new(first.backend())).await;
    assert!(first.core.auth.cache().is_empty() && second.core.auth.cache().is_empty());
    let (base_url, stop_gateway) = gateway(vec![
        format!("http://{}", first.grpc_addr),
        format!("http://{}", second.grpc_addr),
    ])
    .await;
    let http = reqwest::Client::new();

    for _ in 0..8 {
        let (status, body) = read_group(&http, &base_url).await;
        assert_eq!(status, 200, "{body}");
    }
    // Each core verified the owner's password itself: both were called.
    assert!(
        !first.core.auth.cache().is_empty(),
        "the first core got no call"
    );
    assert!(
        !second.core.auth.cache().is_empty(),
        "the second core got no call"
    );

    second.stop().await;
    for i in 0..8 {
        let (status, body) = read_group(&http, &base_url).await;
        assert_eq!(status, 200, "read {i} after one core stopped: {body}");
        // The points stream opens on a replica the same way.
        let (status, body) = read(&http, &base_url, "/gamification/points").await;
        assert_eq!(status, 200, "points {i} after one core stopped: {body}");
    }
    let renamed = http
        .post(format!("{base_url}/group/{}", acme::INTERNS))
        .header("X-Auth-Account-Url", world::OWNER.account_url)
        .header("X-Auth-Email", world::OWNER.email)
        .header("X-Auth-Password", world::PASSWORD)
        .header("Content-Type", "application/xml")
        .body("<request><name>Interns of one core</name></request>")
        .send()
        .await
        .expect("the gateway answers");
    assert_eq!(
        renamed.status(),
        200,
        "{}",
        renamed.text().await.unwrap_or_default()
    );
    let (status, body) = read_group(&http, &base_url).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("<name>Interns of one core</name>"), "{body}");

    let _ = stop_gateway.send(());
}
