//! Where a call's budget is written on its answer. [`RateLimitFields`], around each `lms.v1`
//! service, gives every call a [`BudgetSlot`] in its extensions; authentication fills it
//! (`grpc::request`), and the answer leaves with `ratelimit-limit`, `ratelimit-remaining` and
//! `ratelimit-reset` in its headers, whether it is a success, a refusal or a stream, since
//! each of them is known before the first byte of the answer.

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::{Arc, OnceLock},
    task::{Context, Poll},
};

use http::HeaderValue;
use lms_proto::metadata::{RATELIMIT_LIMIT, RATELIMIT_REMAINING, RATELIMIT_RESET};
use tonic::{body::Body, server::NamedService};

use super::Budget;

/// The budget of one call, once its caller is known.
#[derive(Debug, Clone, Default)]
pub struct BudgetSlot(Arc<OnceLock<Budget>>);

impl BudgetSlot {
    /// Records the budget; a second one is ignored (one call, one authentication).
    pub fn record(&self, budget: Budget) {
        let _ = self.0.set(budget);
    }

    pub fn get(&self) -> Option<Budget> {
        self.0.get().copied()
    }
}

/// Writes `budget` as the three metadata entries (header names are case-insensitive, and
/// gRPC metadata keys lower-case).
///
/// The remaining count changes with every call, so it is sent as a never-indexed field: put
/// in HPACK's dynamic table, it would evict the connection's stable entries (content type,
/// `grpc-status`, the limit itself) on every answer, on both ends of the connection.
pub fn write_budget(headers: &mut http::HeaderMap, budget: Budget) {
    let mut remaining = HeaderValue::from(budget.remaining);
    remaining.set_sensitive(true);
    headers.insert(RATELIMIT_LIMIT, HeaderValue::from(budget.limit));
    headers.insert(RATELIMIT_REMAINING, remaining);
    headers.insert(RATELIMIT_RESET, HeaderValue::from(budget.reset_seconds));
}

/// A gRPC service whose answers carry their call's budget (see the module).
#[derive(Debug, Clone)]
pub struct RateLimitFields<S> {
    inner: S,
}

impl<S> RateLimitFields<S> {
    pub fn new(inner: S) -> Self {
        Self { inner }
    }
}

impl<S: NamedService> NamedService for RateLimitFields<S> {
    const NAME: &'static str = S::NAME;
}

type FieldsFuture = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

impl<S> tower::Service<http::Request<Body>> for RateLimitFields<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = FieldsFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<Body>) -> Self::Future {
        let slot = BudgetSlot::default();
        request.extensions_mut().insert(slot.clone());
        let answer = self.inner.call(request);
        Box::pin(async move {
            let mut response = answer.await?;
            if let Some(budget) = slot.get() {
                write_budget(response.headers_mut(), budget);
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use tower::ServiceExt as _;

    use super::*;

    #[tokio::test]
    async fn an_answer_carries_the_budget_its_call_recorded_and_only_then() {
        let service = tower::service_fn(|request: http::Request<Body>| async move {
            let slot = request.extensions().get::<BudgetSlot>().unwrap().clone();
            if request.uri().path() == "/authenticated" {
                slot.record(Budget {
                    limit: 4_000,
                    remaining: 3_999,
                    reset_seconds: 1,
                });
            }
            Ok::<_, Infallible>(tonic::Status::resource_exhausted("any").into_http())
        });
        let answer = RateLimitFields::new(service)
            .oneshot(
                http::Request::builder()
                    .uri("/authenticated")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        let headers = answer.headers();
        assert_eq!(headers["ratelimit-limit"], "4000");
        assert_eq!(headers["ratelimit-remaining"], "3999");
        assert_eq!(headers["ratelimit-reset"], "1");
        let answer = RateLimitFields::new(service)
            .oneshot(
                http::Request::builder()
                    .uri("/anonymous")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert!(answer.headers().get("ratelimit-limit").is_none());
    }
}
