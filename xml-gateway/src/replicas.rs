//! Several core replicas behind one gateway (`--core-url` given more than once): calls go
//! round robin to the replicas believed reachable, a call refused at connection is sent on to
//! the next replica, and each replica's gRPC health is checked in the background, so a
//! stopped replica or one whose database is out of reach stops getting calls and gets them
//! again once it is back.
//!
//! Why not tonic's `Channel::balance_list`: it keeps sending a share of calls to a replica
//! whose connection is refused (each such call fails), and with every replica gone it waits
//! rather than failing, which would turn a 503 into a 504.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use lms_proto::v1::admin_service_client::AdminServiceClient;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

use crate::rate_limit::{Capture, CaptureLayer};
use crate::telemetry::{CoreCall, CoreCallLayer};
use crate::transport::CoreTransport;

/// The transport to a replica, each call in its CLIENT span, the RateLimit fields of its
/// answer kept for the response.
pub(crate) type CoreChannel = Capture<CoreCall<CoreTransport>>;

/// How often each replica's health is checked; a stopped replica stops getting calls within
/// about this long (calls refused at connection go to another replica meanwhile).
pub(crate) const HEALTH_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// The service whose health decides whether a replica gets calls.
const CHECKED_SERVICE: &str = "lms.v1.AdminService";

/// One core replica.
#[derive(Debug)]
struct Replica {
    url: String,
    channel: CoreTransport,
    reachable: AtomicBool,
}

/// The replicas and where the round robin stands.
#[derive(Debug)]
pub(crate) struct Replicas {
    members: Vec<Replica>,
    next: AtomicUsize,
}

impl Replicas {
    /// Replicas over `channels` (URL and lazily connecting channel each), all first believed
    /// reachable.
    pub(crate) fn new(channels: Vec<(String, CoreTransport)>) -> Arc<Self> {
        Arc::new(Self {
            members: channels
                .into_iter()
                .map(|(url, channel)| Replica {
                    url,
                    channel,
                    reachable: AtomicBool::new(true),
                })
                .collect(),
            next: AtomicUsize::new(0),
        })
    }

    /// Checks the replicas' health in the background, each check bounded by `timeout`, until
    /// the last handle to them is dropped.
    pub(crate) fn watch_health(self: &Arc<Self>, timeout: Duration) {
        tokio::spawn(check_health(Arc::downgrade(self), timeout));
    }

    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    /// The replica for the next call: the next reachable one in turn, or, when none is
    /// believed reachable, simply the next one (its call fails fast, and is answered 503).
    pub(crate) fn pick(&self) -> usize {
        let count = self.members.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        (0..count)
            .map(|offset| (start + offset) % count)
            .find(|&i| self.members[i].reachable.load(Ordering::Relaxed))
            .unwrap_or(start % count)
    }

    /// The replica after `tried`, for a call refused at connection: the next reachable one
    /// not yet tried.
    pub(crate) fn next_after(&self, tried: &[usize]) -> Option<usize> {
        let last = *tried.last()?;
        let count = self.members.len();
        (1..count)
            .map(|offset| (last + offset) % count)
            .find(|i| !tried.contains(i) && self.members[*i].reachable.load(Ordering::Relaxed))
    }

    /// The channel to `replica` as calls use it: each call in its CLIENT span, its answer's
    /// rate-limit fields captured.
    fn call_channel(&self, replica: usize) -> CoreChannel {
        let channel = self.members[replica].channel.clone();
        let traced = tower::Layer::layer(&CoreCallLayer, channel);
        tower::Layer::layer(&CaptureLayer, traced)
    }

    /// A client for calls to `replica`.
    pub(crate) fn admin(&self, replica: usize) -> AdminServiceClient<CoreChannel> {
        AdminServiceClient::new(self.call_channel(replica))
    }

    /// A client of `lms.v1.WebhookService` on `replica`.
    pub(crate) fn webhooks(
        &self,
        replica: usize,
    ) -> lms_proto::v1::webhook_service_client::WebhookServiceClient<CoreChannel> {
        lms_proto::v1::webhook_service_client::WebhookServiceClient::new(self.call_channel(replica))
    }

    /// A client of `lms.v1.ScimService` on `replica`.
    pub(crate) fn scim(
        &self,
        replica: usize,
    ) -> lms_proto::v1::scim_service_client::ScimServiceClient<CoreChannel> {
        lms_proto::v1::scim_service_client::ScimServiceClient::new(self.call_channel(replica))
    }

    /// A client for health checks, which are background work and make no spans.
    pub(crate) fn health(&self, replica: usize) -> HealthClient<CoreTransport> {
        HealthClient::new(self.members[replica].channel.clone())
    }

    /// A call to `replica` was refused at connection: out of rotation until its health
    /// check finds it serving. A lone core has no rotation (and no health check to bring it
    /// back): its outage is the client's to log.
    pub(crate) fn refused(&self, replica: usize) {
        if self.members.len() > 1 {
            self.set_reachable(replica, false);
        }
    }

    fn set_reachable(&self, replica: usize, reachable: bool) {
        let member = &self.members[replica];
        if member.reachable.swap(reachable, Ordering::Relaxed) != reachable {
            if reachable {
                tracing::info!(core = %member.url, "core replica back in rotation");
            } else {
                tracing::warn!(core = %member.url, "core replica out of rotation");
            }
        }
    }
}

/// Checks every replica's health each interval, until the replicas are dropped.
async fn check_health(replicas: Weak<Replicas>, timeout: Duration) {
    // Every replica starts believed reachable; the first check is one interval in.
    let mut interval = tokio::time::interval_at(
        tokio::time::Instant::now() + HEALTH_CHECK_INTERVAL,
        HEALTH_CHECK_INTERVAL,
    );
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let Some(replicas) = replicas.upgrade() else {
            return;
        };
        let checks = replicas.members.iter().map(|member| {
            let mut health = HealthClient::new(member.channel.clone());
            async move {
                let check = health.check(HealthCheckRequest {
                    service: CHECKED_SERVICE.to_owned(),
                });
                matches!(
                    tokio::time::timeout(timeout, check).await,
                    Ok(Ok(answer)) if answer.get_ref().status() == ServingStatus::Serving
                )
            }
        });
        let serving = futures::future::join_all(checks).await;
        for (i, serving) in serving.into_iter().enumerate() {
            replicas.set_reachable(i, serving);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::transport::Endpoint;

    fn replicas(count: usize) -> Arc<Replicas> {
        let channels = (0..count)
            .map(|i| {
                let url = format!("http://127.0.0.1:{}", 9 + i);
                let channel = Endpoint::from_shared(url.clone()).unwrap().connect_lazy();
                (url, crate::transport::transport(channel))
            })
            .collect();
        // No health checks: the flags stay as the test sets them.
        Replicas::new(channels)
    }

    #[tokio::test]
    async fn calls_go_round_robin_over_the_reachable_replicas_only() {
        let replicas = replicas(3);
        let picks: Vec<usize> = (0..6).map(|_| replicas.pick()).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2]);
        replicas.refused(1);
        let picks: Vec<usize> = (0..4).map(|_| replicas.pick()).collect();
        assert!(!picks.contains(&1), "{picks:?}");
        assert!(picks.contains(&0) && picks.contains(&2), "{picks:?}");
        assert_eq!(replicas.next_after(&[0]), Some(2));
        assert_eq!(replicas.next_after(&[0, 2]), None);
    }

    #[tokio::test]
    async fn with_no_replica_reachable_calls_still_go_somewhere() {
        let replicas = replicas(2);
        replicas.refused(0);
        replicas.refused(1);
        let picks: Vec<usize> = (0..4).map(|_| replicas.pick()).collect();
        assert!(picks.contains(&0) && picks.contains(&1), "{picks:?}");
    }

    #[tokio::test]
    async fn a_lone_core_refusing_a_call_stays_the_one_called() {
        let replicas = replicas(1);
        replicas.refused(0);
        assert!(replicas.members[0].reachable.load(Ordering::Relaxed));
        assert_eq!(replicas.pick(), 0);
        assert_eq!(replicas.next_after(&[0]), None);
    }

    /// Waits (at most a few health checks) until `replica`'s flag is `reachable`.
    async fn until_reachable(replicas: &Replicas, replica: usize, reachable: bool) {
        let deadline = tokio::time::Instant::now() + 5 * HEALTH_CHECK_INTERVAL;
        while replicas.members[replica].reachable.load(Ordering::Relaxed) != reachable {
            assert!(
                tokio::time::Instant::now() < deadline,
                "replica {replica} never became reachable = {reachable}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    #[tokio::test]
    async fn a_replica_leaves_the_rotation_while_not_serving_and_rejoins_once_serving() {
        let (health, service) = tonic_health::server::health_reporter();
        health
            .set_service_status(CHECKED_SERVICE, tonic_health::ServingStatus::NotServing)
            .await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        let channel = Endpoint::from_shared(url.clone()).unwrap().connect_lazy();
        let other = Endpoint::from_static("http://127.0.0.1:9").connect_lazy();
        let over = crate::transport::transport;
        let replicas = Replicas::new(vec![
            (url, over(channel)),
            ("other".to_owned(), over(other)),
        ]);
        replicas.watch_health(Duration::from_secs(1));

        until_reachable(&replicas, 0, false).await;
        // Neither answers SERVING: calls still go somewhere, to fail fast.
        until_reachable(&replicas, 1, false).await;
        health
            .set_service_status(CHECKED_SERVICE, tonic_health::ServingStatus::Serving)
            .await;
        until_reachable(&replicas, 0, true).await;
        assert!((0..4).all(|_| replicas.pick() == 0));
    }
}
