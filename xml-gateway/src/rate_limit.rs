//! The RateLimit fields (draft-ietf-httpapi-ratelimit-headers-06: `RateLimit-Limit`,
//! `RateLimit-Remaining`, `RateLimit-Reset`) on every answer to an authenticated caller.
//!
//! The core keeps the buckets and writes the caller's budget on its answer as `ratelimit-*`
//! metadata, since only it knows who the caller is. [`fields`], around the interface's routes,
//! gives each request a [`RateLimitSlot`]; the `Caller` extractor passes it on to the core
//! calls it makes; [`Capture`], on the way to the core, copies the metadata of the core's
//! answer (a success, a refusal or the head of a stream) into it; and [`fields`] writes them
//! on the response. A refusal's `Retry-After` and 429 come through the one error mapping.

use std::{
    future::Future,
    pin::Pin,
    sync::{Arc, OnceLock},
    task::{Context, Poll},
};

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use lms_proto::metadata::{RATELIMIT_LIMIT, RATELIMIT_REMAINING, RATELIMIT_RESET};

/// The three fields, by their HTTP names (which are the core's metadata keys).
const FIELDS: [HeaderName; 3] = [
    HeaderName::from_static(RATELIMIT_LIMIT),
    HeaderName::from_static(RATELIMIT_REMAINING),
    HeaderName::from_static(RATELIMIT_RESET),
];

/// The fields of the core's answer for one request, once it has come.
#[derive(Debug, Clone, Default)]
pub(crate) struct RateLimitSlot(Arc<OnceLock<[HeaderValue; 3]>>);

impl RateLimitSlot {
    /// Keeps the fields of `headers` when all three are there and are whole numbers; the first
    /// answer wins (a request makes one authenticated core call).
    fn capture(&self, headers: &HeaderMap) {
        let field = |name: &HeaderName| {
            headers
                .get(name)
                .filter(|value| {
                    !value.is_empty() && value.as_bytes().iter().all(u8::is_ascii_digit)
                })
                .cloned()
        };
        if let (Some(limit), Some(remaining), Some(reset)) =
            (field(&FIELDS[0]), field(&FIELDS[1]), field(&FIELDS[2]))
        {
            let _ = self.0.set([limit, remaining, reset]);
        }
    }

    fn write(&self, headers: &mut HeaderMap) {
        if let Some(values) = self.0.get() {
            for (name, value) in FIELDS.iter().zip(values) {
                headers.insert(name.clone(), value.clone());
            }
        }
    }
}

/// Middleware: the RateLimit fields of the core's answer on the response.
pub(crate) async fn fields(mut request: Request, next: Next) -> Response {
    let slot = RateLimitSlot::default();
    request.extensions_mut().insert(slot.clone());
    let mut response = next.run(request).await;
    slot.write(response.headers_mut());
    response
}

/// Copies the `ratelimit-*` metadata of the core's answers into the calling request's slot.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CaptureLayer;

impl<S> tower::Layer<S> for CaptureLayer {
    type Service = Capture<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Capture { inner }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Capture<S> {
    inner: S,
}

impl<S, B, R> tower::Service<http::Request<B>> for Capture<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: Send + 'static,
{
    type Response = http::Response<R>;
    type Error = S::Error;
    type Future =
        Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send + 'static>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let slot = request.extensions().get::<RateLimitSlot>().cloned();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            if let Some(slot) = slot {
                slot.capture(response.headers());
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core_answer(fields: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("grpc-status", HeaderValue::from_static("8"));
        headers.insert("retry-after", HeaderValue::from_static("3"));
        for (name, value) in fields {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    fn written(slot: &RateLimitSlot) -> HeaderMap {
        let mut response = HeaderMap::new();
        slot.write(&mut response);
        response
    }

    #[test]
    fn the_cores_three_fields_become_the_ratelimit_headers_and_nothing_else_does() {
        let slot = RateLimitSlot::default();
        slot.capture(&core_answer(&[
            ("ratelimit-limit", "4000"),
            ("ratelimit-remaining", "0"),
            ("ratelimit-reset", "3"),
        ]));
        let headers = written(&slot);
        assert_eq!(headers.len(), 3, "{headers:?}");
        assert_eq!(headers["RateLimit-Limit"], "4000");
        assert_eq!(headers["RateLimit-Remaining"], "0");
        assert_eq!(headers["RateLimit-Reset"], "3");
    }

    #[test]
    fn an_answer_without_all_three_whole_numbers_leaves_the_response_without_fields() {
        for fields in [
            &[][..],
            &[("ratelimit-limit", "4000"), ("ratelimit-remaining", "1")][..],
            &[
                ("ratelimit-limit", "4000"),
                ("ratelimit-remaining", "-1"),
                ("ratelimit-reset", "3"),
            ][..],
            &[
                ("ratelimit-limit", "4000"),
                ("ratelimit-remaining", "1"),
                ("ratelimit-reset", ""),
            ][..],
        ] {
            let slot = RateLimitSlot::default();
            slot.capture(&core_answer(fields));
            assert!(written(&slot).is_empty(), "{fields:?}");
        }
    }

    #[test]
    fn the_first_answer_wins() {
        let slot = RateLimitSlot::default();
        let answer = |remaining: &'static str| {
            core_answer(&[
                ("ratelimit-limit", "10"),
                ("ratelimit-remaining", remaining),
                ("ratelimit-reset", "1"),
            ])
        };
        slot.capture(&answer("9"));
        slot.capture(&answer("8"));
        assert_eq!(written(&slot)["ratelimit-remaining"], "9");
    }
}
