//! Requests that need the database are refused at once while it is known to be away.
//!
//! Waiting for a database that does not answer cost each request the pool's acquire timeout
//! (5 s) or, with its packets going nowhere, the gateway's whole deadline (a 504), while
//! health already said NOT_SERVING. [`DatabaseAvailability`] holds what the probe
//! (`health`) and the SQLite file watch last saw, and [`Gate`], around each `lms.v1`
//! service, answers UNAVAILABLE (503 with `Retry-After` at the gateway) without touching
//! the pool while the database is down, and releases the calls already waiting on it the
//! moment the probe turns. A call still unanswered after [`SLOW_CALL`] asks for a probe, so
//! a database that went silent is found out within a second plus the probe's timeout, not
//! at the next periodic probe. Health and reflection are not gated: they do not need the
//! database.

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use tokio::sync::watch;
use tonic::{Status, body::Body, metadata::MetadataValue, server::NamedService};

/// How long a call waits on the database before a probe is asked for.
pub const SLOW_CALL: Duration = Duration::from_secs(1);

/// Whether this core's database can be used.
#[derive(Debug)]
pub struct DatabaseAvailability {
    /// The SQLite file was deleted or replaced: refused for good (`db::sqlite_file`).
    lost: AtomicBool,
    /// The probe fails (or the file is lost); watched by the calls in flight.
    down: watch::Sender<bool>,
}

impl Default for DatabaseAvailability {
    fn default() -> Self {
        Self {
            lost: AtomicBool::new(false),
            down: watch::Sender::new(false),
        }
    }
}

impl DatabaseAvailability {
    /// The probe's verdict: `false` refuses every gated call, those in flight included.
    pub fn set_reachable(&self, reachable: bool) {
        self.down.send_if_modified(|down| {
            let changed = *down == reachable;
            *down = !reachable;
            changed
        });
    }

    /// The SQLite file is gone: every gated call is refused from now on.
    pub fn mark_lost(&self) {
        self.lost.store(true, Ordering::Relaxed);
        self.set_reachable(false);
    }

    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }

    /// The answer to a call while the database is away; `None` while it is there.
    fn refusal(&self) -> Option<Status> {
        if self.is_lost() {
            return Some(unavailable(
                "The database file is gone; the service needs an operator. Retry later.",
                60,
            ));
        }
        (*self.down.borrow()).then(refused_while_down)
    }
}

fn refused_while_down() -> Status {
    unavailable("The database is unavailable; retry in a moment.", 1)
}

fn unavailable(message: &str, retry_after_seconds: u64) -> Status {
    crate::metrics::shed_database();
    let mut status = Status::unavailable(message);
    status.metadata_mut().insert(
        lms_proto::metadata::RETRY_AFTER,
        MetadataValue::from(retry_after_seconds),
    );
    status
}

/// A gRPC service answered only while its database is available (see the module).
#[derive(Debug, Clone)]
pub struct Gate<S> {
    inner: S,
    availability: Arc<DatabaseAvailability>,
}

impl<S> Gate<S> {
    pub fn new(inner: S, availability: Arc<DatabaseAvailability>) -> Self {
        Self {
            inner,
            availability,
        }
    }
}

impl<S: NamedService> NamedService for Gate<S> {
    const NAME: &'static str = S::NAME;
}

type GateFuture = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

impl<S> tower::Service<http::Request<Body>> for Gate<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = GateFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        if let Some(status) = self.availability.refusal() {
            return Box::pin(std::future::ready(Ok(status.into_http())));
        }
        let availability = self.availability.clone();
        let mut down = availability.down.subscribe();
        let call = self.inner.call(request);
        Box::pin(async move {
            tokio::pin!(call);
            let slow = tokio::time::sleep(SLOW_CALL);
            tokio::pin!(slow);
            let mut probe_asked = false;
            loop {
                tokio::select! {
                    answer = &mut call => return answer,
                    () = &mut slow, if !probe_asked => {
                        probe_asked = true;
                        crate::health::probe_soon();
                    }
                    Ok(_) = down.wait_for(|down| *down) => {
                        // Dropping the call cancels its wait; a write it was committing
                        // may or may not have landed, and is not acknowledged.
                        let status = availability.refusal().unwrap_or_else(refused_while_down);
                        return Ok(status.into_http());
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probes_verdict_and_a_lost_file_decide_the_refusal() {
        let availability = DatabaseAvailability::default();
        assert!(availability.refusal().is_none());
        availability.set_reachable(false);
        let refused = availability.refusal().expect("refused while down");
        assert_eq!(refused.code(), tonic::Code::Unavailable);
        assert_eq!(
            refused
                .metadata()
                .get(lms_proto::metadata::RETRY_AFTER)
                .unwrap(),
            "1"
        );
        availability.set_reachable(true);
        assert!(availability.refusal().is_none());
        availability.mark_lost();
        availability.set_reachable(true);
        let refused = availability.refusal().expect("refused for good");
        assert!(refused.message().contains("file is gone"));
    }
}
