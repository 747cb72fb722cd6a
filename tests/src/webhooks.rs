//! Webhook scenarios' parts: a receiver on loopback that records every POST and answers
//! what the test says, stacks whose core delivers to it, and the register → code → confirm
//! → subscribe flow as a client performs it.

use std::{
    collections::{HashMap, HashSet},
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU16, Ordering},
    },
    time::Duration,
};

use axum::{
    Router,
    body::Bytes,
    extract::{Path, State},
    http::{HeaderMap, StatusCode, header},
    response::IntoResponse,
    routing::post,
};
use lms_core::webhooks::WebhookSettings;
use serde_json::{Value, json};

use crate::{
    database::Backend,
    stack::{Reply, StackOptions, TestStack, json_of, post_json},
    world::Login,
};

/// One POST the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub delivery_id: String,
    pub event_type: String,
    pub attempt: u32,
    pub signature: Option<String>,
    pub signature_256: Option<String>,
    /// Empty for an event delivery to a [`Receiver::start_counting`] receiver.
    pub body: Bytes,
    /// The payloads of an event delivery (its body's `payloads`).
    pub payload_count: usize,
    /// The status the receiver answered.
    pub answered: u16,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// The payloads of an event delivery.
    pub fn payloads(&self) -> Vec<Value> {
        self.json()["payloads"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The code of a CONFIRMATION delivery, read as a client does: `JSON.parse(payloads[0])`.
    pub fn code(&self) -> String {
        let payload = self.json()["payloads"][0]
            .as_str()
            .expect("a CONFIRMATION payload is a string")
            .to_owned();
        let inner: Value = serde_json::from_str(&payload).expect("a JSON object in a string");
        inner["code"].as_str().expect("code").to_owned()
    }
}

#[derive(Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    /// Status answered to every POST, unless a path has its own.
    status: AtomicU16,
    /// Whether event deliveries' bodies are dropped once their payloads are counted.
    counting: bool,
}

/// An HTTP receiver on 127.0.0.1, in the test's runtime. `POST /redirect/…` answers 302
/// to `/hook`; any other path answers the current status (200 at first).
#[derive(Clone)]
pub struct Receiver {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

async fn receive(
    State(shared): State<Arc<Shared>>,
    Path(path): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let event_type = text("x-lms-event-type").unwrap_or_default();
    let payload_count = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|json| json["payloads"].as_array().map(Vec::len))
        .unwrap_or_default();
    let body = if shared.counting && event_type != "CONFIRMATION" {
        Bytes::new()
    } else {
        body
    };
    let redirect = path.starts_with("redirect");
    let status = if redirect {
        302
    } else {
        shared.status.load(Ordering::SeqCst)
    };
    shared.received.lock().unwrap().push(Received {
        path: path.clone(),
        delivery_id: text("x-lms-delivery-id").unwrap_or_default(),
        event_type,
        attempt: text("x-lms-attempt")
            .and_then(|a| a.parse().ok())
            .unwrap_or_default(),
        signature: text("x-hub-signature"),
        signature_256: text("x-hub-signature-256"),
        body,
        payload_count,
        answered: status,
    });
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    if redirect {
        (status, [(header::LOCATION, "/hook")], String::new())
    } else if status.is_success() {
        (status, [(header::CONTENT_TYPE, "text/plain")], "ok".into())
    } else {
        (
            status,
            [(header::CONTENT_TYPE, "text/plain")],
            "receiver down\nfor maintenance".into(),
        )
    }
}

impl Receiver {
    pub async fn start() -> Self {
        Self::listen(Shared::default()).await
    }

    /// A receiver that keeps only the count of each event delivery's payloads, not its body,
    /// so that what it holds stays small beside the core it measures (benchmarks).
    pub async fn start_counting() -> Self {
        Self::listen(Shared {
            counting: true,
            ..Shared::default()
        })
        .await
    }

    async fn listen(shared: Shared) -> Self {
        let shared = Arc::new(shared);
        shared.status.store(200, Ordering::SeqCst);
        let app = Router::new()
            .route("/{*path}", post(receive))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("receiver binds");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, shared }
    }

    /// `http://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{path}", self.addr)
    }

    /// What it answers from now on.
    pub fn answer(&self, status: u16) {
        self.shared.status.store(status, Ordering::SeqCst);
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    /// POSTs to `path`.
    pub fn received_at(&self, path: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// Waits until `done` holds for what was received (checked every 20 ms), or panics
    /// after `within` saying `what`.
    pub async fn wait_until(
        &self,
        within: Duration,
        what: &str,
        done: impl Fn(&[Received]) -> bool,
    ) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let received = self.received();
            if done(&received) {
                return received;
            }
            if tokio::time::Instant::now() > deadline {
                panic!(
                    "{what}: not within {within:?}; received {} POSTs: {:?}",
                    received.len(),
                    received
                        .iter()
                        .map(|r| (r.path.as_str(), r.event_type.as_str(), r.answered))
                        .collect::<Vec<_>>()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// How many payloads were acknowledged at `path` (2xx), each delivery counted once (by
    /// delivery id), and the number of such deliveries.
    pub fn delivered_count(&self, path: &str) -> (usize, usize) {
        let mut seen = HashSet::new();
        let received = self.shared.received.lock().unwrap();
        let delivered = received
            .iter()
            .filter(|r| r.path == path && r.event_type != "CONFIRMATION")
            .filter(|r| (200..300).contains(&r.answered))
            .filter(|r| seen.insert(r.delivery_id.as_str()));
        delivered.fold((0, 0), |(payloads, deliveries), r| {
            (payloads + r.payload_count, deliveries + 1)
        })
    }

    /// The payloads acknowledged at `path` (2xx), each delivery once (by delivery id), in
    /// the order they arrived.
    pub fn delivered_payloads(&self, path: &str) -> Vec<Value> {
        let mut seen = HashSet::new();
        self.received_at(path)
            .into_iter()
            .filter(|r| r.event_type != "CONFIRMATION" && (200..300).contains(&r.answered))
            .filter(|r| seen.insert(r.delivery_id.clone()))
            .flat_map(|r| r.payloads())
            .collect()
    }
}

/// Short delivery settings: a day-long outage plays out in seconds (section 11): retries
/// after 100 ms to 500 ms, the give-up after 5 s.
pub fn quick_settings(allow_private_networks: bool) -> WebhookSettings {
    WebhookSettings {
        allow_private_networks,
        timeout_ms: 3_000,
        retry_base_ms: 100,
        retry_max_ms: 500,
        give_up_ms: 5_000,
        poll_ms: 200,
        ..WebhookSettings::default()
    }
}

/// A stack whose core may deliver to loopback receivers, with [`quick_settings`].
pub struct LoopbackStack(pub TestStack);

impl std::ops::Deref for LoopbackStack {
    type Target = TestStack;

    fn deref(&self) -> &TestStack {
        &self.0
    }
}

impl lms_testkit::Fixture for LoopbackStack {
    async fn start(backend: Backend) -> Option<Self> {
        TestStack::start_with(StackOptions {
            webhooks: quick_settings(true),
            ..StackOptions::new(backend)
        })
        .await
        .map(Self)
    }

    async fn stop(self) {
        self.0.stop().await;
    }
}

/// The name [`StrictStack`] maps to 127.0.0.1 without DNS, as a hosts file would.
pub const MAPPED_HOST: &str = "receiver.test";

/// A stack with the default address rules (private networks refused), where
/// [`MAPPED_HOST`] resolves to 127.0.0.1.
pub struct StrictStack(pub TestStack);

impl std::ops::Deref for StrictStack {
    type Target = TestStack;

    fn deref(&self) -> &TestStack {
        &self.0
    }
}

impl lms_testkit::Fixture for StrictStack {
    async fn start(backend: Backend) -> Option<Self> {
        let mut webhooks = quick_settings(false);
        webhooks.hosts = HashMap::from([(
            MAPPED_HOST.to_owned(),
            vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
        )]);
        TestStack::start_with(StackOptions {
            webhooks,
            ..StackOptions::new(backend)
        })
        .await
        .map(Self)
    }

    async fn stop(self) {
        self.0.stop().await;
    }
}

/// `POST /webhook/{call}` with a JSON body; the answer.
pub async fn call(stack: &TestStack, login: Login, call: &str, body: Value) -> Reply {
    post_json(stack, &format!("/webhook/{call}"), login, body).await
}

/// `call` must answer 200 with no body.
#[track_caller]
pub fn assert_ok(reply: &Reply) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.body.is_empty(), "no body: {}", reply.body);
}

/// `POST /webhook/enable` or `/webhook/disable` (`action`) of the owner's subscriber `name`,
/// which must answer 200.
pub async fn switch(stack: &TestStack, action: &str, name: &str) {
    assert_ok(
        &call(
            stack,
            crate::world::OWNER,
            action,
            serde_json::json!({"subscriberName": name}),
        )
        .await,
    );
}

/// `GET /webhook/subscriber/info?subscriberName=name` as JSON.
pub async fn info(stack: &TestStack, login: Login, name: &str) -> Value {
    let reply = crate::stack::get_json(
        stack,
        &format!("/webhook/subscriber/info?subscriberName={name}"),
        login,
    )
    .await;
    json_of(&reply)
}

/// Registers `name` at the receiver's `path`, has a code sent, confirms it as a client
/// does, and subscribes to each of `types`.
pub async fn subscribe(
    stack: &TestStack,
    login: Login,
    receiver: &Receiver,
    name: &str,
    path: &str,
    secret: Option<&str>,
    types: &[&str],
) {
    let mut body = json!({"subscriberName": name, "callbackUrl": receiver.url(path)});
    if let Some(secret) = secret {
        body["secret"] = json!(secret);
    }
    assert_ok(&call(stack, login, "register", body).await);
    confirm(stack, login, receiver, name, path).await;
    for event_type in types {
        subscribe_to(stack, login, name, event_type).await;
    }
}

/// `POST /webhook/subscribe` of subscriber `name` to `event_type`, without filters; it must
/// answer 200.
pub async fn subscribe_to(stack: &TestStack, login: Login, name: &str, event_type: &str) {
    let subscription =
        json!({"subscriberName": name, "subscription": {"subscriptionType": event_type}});
    assert_ok(&call(stack, login, "subscribe", subscription).await);
}

/// The subscriber most tests need: the owner's "crm" at the receiver's `/hook`, told of new
/// users.
pub async fn crm_told_of_new_users(stack: &TestStack, receiver: &Receiver, secret: Option<&str>) {
    subscribe(
        stack,
        crate::world::OWNER,
        receiver,
        "crm",
        "hook",
        secret,
        &["USER_REGISTERED"],
    )
    .await;
}

/// Has a code sent to `path` and confirms the latest one received there.
pub async fn confirm(stack: &TestStack, login: Login, receiver: &Receiver, name: &str, path: &str) {
    let before = receiver
        .received_at(path)
        .iter()
        .filter(|r| r.event_type == "CONFIRMATION")
        .count();
    assert_ok(&call(stack, login, "code/send", json!({"subscriberName": name})).await);
    let received = receiver
        .wait_until(Duration::from_secs(10), "the CONFIRMATION", |all| {
            all.iter()
                .filter(|r| r.path == path && r.event_type == "CONFIRMATION")
                .count()
                > before
        })
        .await;
    let code = received
        .iter()
        .rev()
        .find(|r| r.path == path && r.event_type == "CONFIRMATION")
        .expect("a CONFIRMATION")
        .code();
    assert_ok(
        &call(
            stack,
            login,
            "confirm",
            json!({"subscriberName": name, "code": code}),
        )
        .await,
    );
}
