//! The XML-over-HTTP gateway of the learning management service.
//!
//! It speaks the documented XML interface and header authentication, and translates each
//! operation into one typed `lms.v1` RPC on lms-core. It knows XML and HTTP, never SQL or
//! permissions: the core authenticates, authorizes and validates.
//!
//! # Layout
//!
//! - [`settings`](GatewaySettings): flags and environment variables of the gateway.
//! - `app`: [`router`] (routes plus middleware), [`route_templates`] (every route it serves, from
//!   the same registrations) and [`App`] (bind, then serve until shutdown).
//! - `server`: the HTTP/1.1 connection driver with its limits (header-read, idle and body
//!   timeouts, connection limit, open-files limit) and hyper's own error answers in XML.
//! - `paths`: the client prefixes (`/api/v2/`, `/index.php/api/v2/`, and `/api/v1/` for the
//!   results lists) and trailing `/`, removed before routing.
//! - `clip`: the one bound on caller input quoted back in messages.
//! - `routes/`: one module per resource (`department`, `group`, `enrollment`, `content`,
//!   `points`, `results`, `scim_tokens`), each handler a thin translation to one RPC; `fallback`
//!   answers 404 and 405. `routes/scim/`: SCIM 2.0 under `/scim/v2` (its own routing in any
//!   letter case, token, media types and RFC 7644 error bodies; `discovery` serves the fixed
//!   documents), calling `lms.v1.ScimService`.
//! - `listing/`: every list once: the `Listing` trait each resource's list implements (with
//!   `Streamed`, `Whole` and `Paged` for its answers), the query (filters, date windows,
//!   paging) and body readers, the whole list streamed from the core as it arrives, the page.
//! - `auth`: the `X-Auth-*` header extractor (401 for anything missing or unreadable).
//! - `body`: the `Body<T>` extractor: `Content-Type` (XML, none, or JSON), size and deadline,
//!   then `xml` or `json` reads `T`; its refusals are a `BodyRejection` that `error` converts.
//! - `xml/`: `reader` (strict quick-xml reader into a small element tree), `writer` (response
//!   documents) and the `FromXml` trait. `json`: the `FromJson` trait and its reader.
//! - `representation`: the one place a response's format is chosen (`Accept`, 406) and every
//!   body written: routes return a typed `Answer`, errors an `ErrorReport`.
//! - `error`: the one error enum and its mapping to HTTP statuses and messages (no format:
//!   `error` and `xml` know nothing of each other).
//! - `transport`: how calls reach the core (the transport type over a tonic channel or the
//!   in-process core), the limits on what a call carries, and what a failed call means (never
//!   reached the core, refused at connection, a broken HTTP/2 connection); a leaf module.
//! - `core_client`: [`CoreClient`] (lazy tonic channels, per-call deadline) and the metadata
//!   every call carries; `replicas`: several cores behind one gateway (round robin over those
//!   whose health answers, a call refused at connection sent on to the next).
//! - `request_id`: `X-Request-Id` in, out, and on to the core.
//! - `rate_limit`: the RateLimit fields of the core's answer on every response to an
//!   authenticated caller (the core keeps the buckets).
//! - `telemetry`: each request's SERVER span (continuing the caller's W3C trace), log line and
//!   RED metrics, and each core call's CLIENT span (the subscriber itself, the shutdown signal
//!   and trace propagation come from `lms-runtime`).
//! - `health`: `GET /healthz` (the process answers) and `GET /readyz` (the core and its
//!   database answer).
//! - `openapi/`: the OpenAPI 3.1 document of the whole interface, one module per resource,
//!   served at `GET /openapi.json` (no credentials, also under the client prefixes).

mod app;
mod auth;
mod body;
mod clip;
mod core_client;
mod error;
#[cfg(test)]
mod fuzz;
mod health;
mod json;
mod listing;
mod openapi;
mod paths;
mod rate_limit;
mod replicas;
mod representation;
mod request_id;
mod routes;
mod server;
mod settings;
mod telemetry;
mod transport;
mod xml;

pub use app::{App, route_templates, router, router_with_public_url};
pub use core_client::CoreClient;
pub use openapi::openapi_json;
pub use settings::{
    BODY_LIMIT_BYTES, DEFAULT_BODY_TIMEOUT_MS, DEFAULT_CORE_TIMEOUT_MS, DEFAULT_CORE_URL,
    DEFAULT_HEADER_READ_TIMEOUT_MS, DEFAULT_HTTP_ADDR, DEFAULT_IDLE_TIMEOUT_MS,
    DEFAULT_MAX_CONNECTIONS, GatewaySettings, HttpServerSettings,
};
