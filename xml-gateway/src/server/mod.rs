//! The HTTP/1.1 server under the router: hyper's connection driver with the limits that keep
//! slow or many clients from holding the gateway.
//!
//! - A request head must arrive within the header-read timeout (hyper's timer; it also runs
//!   while a kept-alive connection waits for its next request, so it closes idle ones). Every
//!   answer on a connection that stays open says `Keep-Alive: timeout=N`, N whole seconds
//!   below that close, so a client that honours it never sends on a connection the server is
//!   closing at that moment ([`keep_alive`]).
//! - A connection with no byte in or out for the idle timeout is closed, whatever it was doing.
//! - Each request carries a [`BodyDeadline`]; the body extractor answers 408 past it.
//! - At most `max_connections` are served at once: the accept loop takes a slot before it
//!   accepts, so further clients wait in the listen backlog instead of using descriptors.
//! - The answers hyper writes itself (400, 414, 431 for a request it cannot parse) are
//!   rewritten into the contract's XML error with a request id ([`hyper_errors`]).

mod activity;
mod hyper_errors;
mod open_files;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http::HeaderValue;
use http::header::{CONNECTION, HeaderName};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;
use tower::Service as _;

pub(crate) use open_files::connection_limit;

use crate::body::BodyDeadline;
use crate::settings::HttpServerSettings;

use self::activity::{Activity, Tracked};
use self::hyper_errors::XmlParseErrors;

/// How long the accept loop rests after running out of descriptors, so open connections can
/// finish and free some instead of the loop spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// A failing accept is logged at most this often: a shortage lasts many retries.
const ACCEPT_WARNING_EVERY: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` until `shutdown` completes, then stops accepting, lets open
/// requests finish (idle connections close at once) and returns when every connection is closed.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    settings: &HttpServerSettings,
    max_connections: usize,
    shutdown: impl Future<Output = ()> + Send,
) {
    let slots = u32::try_from(max_connections.max(1)).unwrap_or(u32::MAX);
    let limit = Arc::new(Semaphore::new(slots as usize));
    let (stop, stopped) = watch::channel(false);
    let connection = ConnectionSettings::from(settings);
    let mut shutdown = std::pin::pin!(shutdown);
    let mut last_warning: Option<Instant> = None;
    loop {
        let permit = tokio::select! {
            permit = limit.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_closed) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    // Small answers must not wait for the client's delayed ACK (Nagle).
                    if let Err(error) = stream.set_nodelay(true) {
                        tracing::debug!(%error, "could not set TCP_NODELAY on an accepted connection");
                    }
                    (stream, peer)
                }
                Err(error) => {
                    accept_failed(&error, &mut last_warning).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        tokio::spawn(serve_connection(
            stream,
            peer,
            router.clone(),
            connection.clone(),
            stopped.clone(),
            permit,
        ));
    }
    drop(listener);
    let _ = stop.send(true);
    // Every connection holds a slot until it is closed: all slots back means all closed.
    let _ = limit.acquire_many(slots).await;
}

/// Failed accepts are the client's problem (reset before accepted) or a shortage of
/// descriptors; neither stops the server.
async fn accept_failed(error: &std::io::Error, last_warning: &mut Option<Instant>) {
    use std::io::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted
    ) {
        return;
    }
    if last_warning.is_none_or(|warned| warned.elapsed() >= ACCEPT_WARNING_EVERY) {
        *last_warning = Some(Instant::now());
        tracing::warn!(%error, "accepting connections fails; retrying every {ACCEPT_BACKOFF:?}");
    }
    tokio::time::sleep(ACCEPT_BACKOFF).await;
}

#[derive(Debug, Clone)]
struct ConnectionSettings {
    header_read_timeout: Duration,
    idle_timeout: Duration,
    body_timeout: Duration,
    /// `timeout=N`, when N is at least a second.
    keep_alive: Option<HeaderValue>,
}

impl From<&HttpServerSettings> for ConnectionSettings {
    fn from(settings: &HttpServerSettings) -> Self {
        let header_read_timeout = settings.header_read_timeout();
        let idle_timeout = settings.idle_timeout();
        Self {
            header_read_timeout,
            idle_timeout,
            body_timeout: settings.body_timeout(),
            keep_alive: keep_alive(header_read_timeout.min(idle_timeout))
                .and_then(|seconds| HeaderValue::try_from(format!("timeout={seconds}")).ok()),
        }
    }
}

/// The `Keep-Alive: timeout` to advertise for connections the server closes after `close`
/// without a request: a whole second below it, since the client's count starts when the
/// answer reaches it, a little after the server's starts. `None` when that leaves less than a
/// second (nothing worth advertising).
fn keep_alive(close: Duration) -> Option<u64> {
    close
        .as_secs()
        .checked_sub(1)
        .filter(|&seconds| seconds >= 1)
}

/// Not among `http`'s constants (HTTP/1.1 made keep-alive the default); clients that pool
/// connections read its `timeout` to retire one before the server closes it (Node's undici,
/// for one).
const KEEP_ALIVE: HeaderName = HeaderName::from_static("keep-alive");

/// Says how long the connection stays open for the next request, unless it is closing.
fn advertise_keep_alive(response: &mut http::Response<Body>, keep_alive: &HeaderValue) {
    let closing = response
        .headers()
        .get(CONNECTION)
        .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"close"));
    if !closing {
        response
            .headers_mut()
            .insert(KEEP_ALIVE, keep_alive.clone());
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    router: Router,
    settings: ConnectionSettings,
    mut stopped: watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let activity = Activity::default();
    let io = TokioIo::new(XmlParseErrors::new(Tracked::new(stream, activity.clone())));
    let body_timeout = settings.body_timeout;
    let keep_alive = settings.keep_alive.clone();
    let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
        let mut request = request.map(Body::new);
        request
            .extensions_mut()
            .insert(BodyDeadline(Instant::now() + body_timeout));
        // The client's address, for the request's log line and span.
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(peer));
        // An HTTP/1.0 connection closes after each answer unless the client asks otherwise.
        let keep_alive = keep_alive
            .clone()
            .filter(|_| request.version() != http::Version::HTTP_10);
        let mut router = router.clone();
        async move {
            let mut response = router.call(request).await.unwrap_or_else(|n| match n {});
            if let Some(keep_alive) = &keep_alive {
                advertise_keep_alive(&mut response, keep_alive);
            }
            Ok::<_, Infallible>(response)
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(settings.header_read_timeout);
    let connection = builder.serve_connection(io, service);
    let mut connection = std::pin::pin!(connection);
    let mut stopping = false;
    loop {
        let idle_until = activity.last() + settings.idle_timeout;
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            _ = stopped.wait_for(|stop| *stop), if !stopping => {
                stopping = true;
                connection.as_mut().graceful_shutdown();
            }
            () = tokio::time::sleep_until(idle_until) => {
                if activity.last() + settings.idle_timeout <= Instant::now() {
                    tracing::debug!("closing a connection idle for {:?}", settings.idle_timeout);
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advertised_keep_alive_is_a_whole_second_below_the_close() {
        assert_eq!(keep_alive(Duration::from_secs(10)), Some(9));
        assert_eq!(keep_alive(Duration::from_millis(2_999)), Some(1));
        assert_eq!(keep_alive(Duration::from_millis(1_999)), None);
        assert_eq!(keep_alive(Duration::ZERO), None);
    }
}
