//! The whole service on loopback ports: a real core (gRPC) and a real gateway (HTTP) over
//! a fresh database holding the [`world`](crate::world), started by [`lms::Stack`] as
//! `lms up` starts them, plus a small HTTP client that speaks the XML interface.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use lms::{Stack, StackSettings};
use lms_core::{
    auth::{DEFAULT_CACHE_CAPACITY, ManualClock, PasswordHasher, PasswordPolicy},
    grpc::SharedState,
    rate_limit::RateLimitSettings,
};
use lms_proto::v1::{self as pb, directory_service_client::DirectoryServiceClient};
use sea_orm::DatabaseConnection;
use tokio::{sync::watch, task::JoinHandle};

use crate::{
    database::{Backend, TestDatabase},
    world::{self, Login},
};

/// Cheap argon2 parameters: tests exercise the logic, not the cost.
pub const TEST_POLICY: PasswordPolicy = PasswordPolicy {
    memory_kib: 64,
    iterations: 1,
    parallelism: 1,
};

/// How long a throttled login's answer is held in tests: long enough to be a real hold,
/// short enough that tests about throttling do not wait a second for each reply.
pub const TEST_THROTTLED_REPLY_DELAY: Duration = Duration::from_millis(50);

/// How to start a stack.
#[derive(Debug, Clone)]
pub struct StackOptions {
    pub backend: Backend,
    /// Entries of the verified-credentials cache (0 disables it).
    pub auth_cache_capacity: u64,
    /// Import the world before starting.
    pub with_world: bool,
    /// Argon2id cost of the core's new hashes (the world is always imported at [`TEST_POLICY`]).
    pub password_policy: PasswordPolicy,
    /// Password verifications running at once; `None` keeps the core's default.
    pub max_concurrent_verifications: Option<usize>,
    /// How long a verification may wait for a slot before 503; `None` keeps the default.
    pub verification_queue_timeout_ms: Option<u64>,
    /// How often the core polls the `auth_revisions` row; `None` keeps the default.
    pub auth_revision_poll_ms: Option<u64>,
    /// How long an attempt on a throttled login is held before its 429.
    pub throttled_reply_delay: Duration,
    /// The rate limits, on the stack's manual clock: off unless a test sets them, since
    /// scenarios and benchmarks send one login's requests as fast as they are answered.
    pub rate_limits: RateLimitSettings,
    /// Webhook delivery settings of the core.
    pub webhooks: lms_core::webhooks::WebhookSettings,
    /// How often the core's scheduler looks for due status changes, and the days added to
    /// its "today" (a date stored for later falls due at once with a large enough offset).
    pub scheduler: lms_core::scheduler::SchedulerSettings,
}

impl StackOptions {
    pub fn new(backend: Backend) -> Self {
        Self {
            backend,
            auth_cache_capacity: DEFAULT_CACHE_CAPACITY,
            with_world: true,
            password_policy: TEST_POLICY,
            max_concurrent_verifications: None,
            verification_queue_timeout_ms: None,
            auth_revision_poll_ms: None,
            throttled_reply_delay: TEST_THROTTLED_REPLY_DELAY,
            rate_limits: RateLimitSettings::off(),
            webhooks: lms_core::webhooks::WebhookSettings::default(),
            scheduler: lms_core::scheduler::SchedulerSettings::default(),
        }
    }
}

pub struct TestStack {
    pub base_url: String,
    pub grpc_addr: SocketAddr,
    pub http: reqwest::Client,
    pub clock: ManualClock,
    pub core: SharedState,
    shutdown: watch::Sender<bool>,
    task: JoinHandle<anyhow::Result<()>>,
    database_url: String,
    /// The database this stack made (and drops); `None` for a replica.
    _database: Option<TestDatabase>,
}

impl TestStack {
    /// The world on `backend`; `None` when that backend is not available here.
    pub async fn start(backend: Backend) -> Option<Self> {
        Self::start_with(StackOptions::new(backend)).await
    }

    pub async fn start_with(options: StackOptions) -> Option<Self> {
        let database = TestDatabase::create(options.backend).await?;
        let url = database.url.clone();
        Some(Self::start_on(options, url, Some(database)).await)
    }

    /// Another core and gateway on this stack's database, as a second replica of the
    /// service would run (`options.with_world` is ignored: the world is there already).
    pub async fn replica(&self, options: StackOptions) -> Self {
        let options = StackOptions {
            with_world: false,
            ..options
        };
        Self::start_on(options, self.database_url.clone(), None).await
    }

    async fn start_on(
        options: StackOptions,
        database_url: String,
        database: Option<TestDatabase>,
    ) -> Self {
        let mut settings = StackSettings::for_database(database_url.clone()).on_free_ports();
        let core = &mut settings.core;
        core.argon2_memory_kib = options.password_policy.memory_kib;
        core.argon2_iterations = options.password_policy.iterations;
        core.argon2_parallelism = options.password_policy.parallelism;
        core.auth_cache_capacity = options.auth_cache_capacity;
        if let Some(slots) = options.max_concurrent_verifications {
            core.max_concurrent_verifications = slots;
        }
        // A loaded CI machine must not shed test requests: wait long unless a test asks.
        core.verification_queue_timeout_ms =
            options.verification_queue_timeout_ms.unwrap_or(30_000);
        if let Some(poll_ms) = options.auth_revision_poll_ms {
            core.auth_revision_poll_ms = poll_ms;
        }
        core.throttled_reply_delay_ms = u64::try_from(options.throttled_reply_delay.as_millis())
            .expect("a throttled reply delay in milliseconds fits in u64");
        core.rate_limits = options.rate_limits.clone();
        core.webhooks = options.webhooks.clone();
        core.scheduler = options.scheduler.clone();
        let clock = ManualClock::default();
        let stack = Stack::build_with_clock(&settings, Arc::new(clock.clone()))
            .await
            .expect("core and gateway start");
        let state = stack.state();
        if options.with_world {
            import_world(&state.db).await;
        }
        let grpc_addr = stack.grpc_addr();
        let base_url = format!("http://{}", stack.http_addr());
        let (shutdown, signal) = watch::channel(false);
        let task = tokio::spawn(stack.run_until(wait_for(signal)));
        Self {
            base_url,
            grpc_addr,
            http: http_client(),
            clock,
            core: state,
            shutdown,
            task,
            database_url,
            _database: database,
        }
    }

    /// The backend of this stack's database.
    pub fn backend(&self) -> Backend {
        if self.database_url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            Backend::Postgres
        }
    }

    pub fn db(&self) -> &DatabaseConnection {
        &self.core.db
    }

    /// Every stored row, as text (see [`crate::snapshot`]).
    pub async fn snapshot(&self) -> String {
        crate::snapshot::snapshot(self.db()).await
    }

    /// [`Self::snapshot`] without `accounts.revision`, which every write transaction bumps,
    /// a no-op one too (see `docs/data-model.md`, "Write serialization").
    pub async fn snapshot_without_revision(&self) -> String {
        crate::snapshot::without_revision(&self.snapshot().await)
    }

    /// A request to `path` as `login` with the world's password.
    pub fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        login: Login,
    ) -> reqwest::RequestBuilder {
        login.headers().into_iter().fold(
            self.http
                .request(method, format!("{}{path}", self.base_url)),
            |request, (name, value)| request.header(name, value),
        )
    }

    /// `method path` as `login`, without a body.
    pub async fn send(&self, method: reqwest::Method, path: &str, login: Login) -> Reply {
        Reply::send(self.request(method, path, login)).await
    }

    pub async fn get(&self, path: &str, login: Login) -> Reply {
        Reply::from(
            self.request(reqwest::Method::GET, path, login)
                .send()
                .await
                .expect("request"),
        )
        .await
    }

    /// POST with an XML body and `Content-Type: application/xml`.
    pub async fn post_xml(&self, path: &str, login: Login, body: &str) -> Reply {
        Reply::from(
            self.request(reqwest::Method::POST, path, login)
                .header("Content-Type", "application/xml")
                .body(body.to_owned())
                .send()
                .await
                .expect("request"),
        )
        .await
    }

    /// POST `body` as `login` with `X-Request-Id` and the given `Content-Type` (none when `None`).
    pub async fn post_typed(
        &self,
        path: &str,
        login: Login,
        request_id: &str,
        content_type: Option<&str>,
        body: String,
    ) -> Reply {
        let mut builder = self
            .request(reqwest::Method::POST, path, login)
            .header("X-Request-Id", request_id);
        if let Some(content_type) = content_type {
            builder = builder.header("Content-Type", content_type);
        }
        Reply::from(builder.body(body).send().await.expect("request")).await
    }

    /// POST an XML body (`Content-Type: application/xml`) with `X-Request-Id`.
    pub async fn post_with_id(
        &self,
        path: &str,
        login: Login,
        request_id: &str,
        body: &str,
    ) -> Reply {
        self.post_typed(
            path,
            login,
            request_id,
            Some("application/xml"),
            body.to_owned(),
        )
        .await
    }

    /// A gRPC channel to the core, for tests that bypass the gateway.
    pub async fn grpc_channel(&self) -> tonic::transport::Channel {
        tonic::transport::Endpoint::from_shared(format!("http://{}", self.grpc_addr))
            .expect("endpoint")
            .connect()
            .await
            .expect("core reachable")
    }

    /// `Bearer <token>` of a new API client, made by the owner, acting as `user_id`.
    pub async fn bearer_for(&self, user_id: &str) -> String {
        let mut directory = DirectoryServiceClient::new(self.grpc_channel().await);
        let client = directory
            .create_api_client(world::OWNER.grpc_request(pb::CreateApiClientRequest {
                user_id: user_id.to_owned(),
                scim: false,
            }))
            .await
            .expect("a client")
            .into_inner();
        let reply = Reply::send(
            self.http
                .post(format!("{}/api/v3/token", self.base_url))
                .form(&[
                    ("client_id", client.client_id.as_str()),
                    ("client_secret", client.client_secret.as_str()),
                    ("grant_type", "client_credentials"),
                ]),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let token: serde_json::Value = serde_json::from_str(&reply.body).expect("JSON");
        format!(
            "Bearer {}",
            token["access_token"].as_str().expect("a token")
        )
    }

    /// Lets the core forget the callers it remembers. A permission written straight into the
    /// database reaches them only once they expire: past the authentication cache's lifetime
    /// (60 s), they are read again.
    pub fn forget_remembered_callers(&self) {
        self.clock.advance(Duration::from_secs(61));
    }

    /// Stops both services and waits for them.
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        self.task
            .await
            .expect("service task")
            .expect("service stops cleanly");
    }
}

async fn wait_for(mut signal: watch::Receiver<bool>) {
    let _ = signal.wait_for(|stop| *stop).await;
}

/// Imports the world through the real import path.
pub async fn import_world(db: &DatabaseConnection) {
    let document =
        serde_json::from_value(world::document()).expect("the world is a valid document");
    let hasher = PasswordHasher::new(TEST_POLICY).expect("policy");
    lms_core::import::import_document(db, document, &hasher)
        .await
        .expect("the world imports");
}

/// `GET path` as `login` with `Accept: application/json`.
pub async fn get_json(stack: &TestStack, path: &str, login: Login) -> Reply {
    Reply::from(
        stack
            .request(reqwest::Method::GET, path, login)
            .header("Accept", "application/json")
            .send()
            .await
            .expect("request"),
    )
    .await
}

/// An HTTP client that retires a pooled connection well before the gateway closes it (the
/// header-read timeout, which `Keep-Alive: timeout` advertises and reqwest does not read): a
/// request sent on a connection at the moment the server closes it is answered by a reset,
/// not retried.
pub fn http_client() -> reqwest::Client {
    http_client_builder().build().expect("an HTTP client")
}

/// [`http_client`]'s settings, for a client that adds its own.
pub fn http_client_builder() -> reqwest::ClientBuilder {
    let server_closes = Duration::from_millis(lms_gateway::DEFAULT_HEADER_READ_TIMEOUT_MS);
    reqwest::Client::builder().pool_idle_timeout(server_closes / 2)
}

/// `POST path` as `login` with a JSON body, `Accept: application/json`.
pub async fn post_json(
    stack: &TestStack,
    path: &str,
    login: Login,
    body: impl std::fmt::Display,
) -> Reply {
    Reply::send(
        stack
            .request(reqwest::Method::POST, path, login)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(body.to_string()),
    )
    .await
}

/// The JSON body of a 200 answer served as `application/json`.
#[track_caller]
pub fn json_of(reply: &Reply) -> serde_json::Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    serde_json::from_str(&reply.body).unwrap_or_else(|error| panic!("{error}: {}", reply.body))
}

/// A response, read whole.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Reply {
    pub async fn from(response: reqwest::Response) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.text().await.expect("body");
        Self {
            status,
            headers,
            body,
        }
    }

    /// Sends `request` and reads the answer whole.
    pub async fn send(request: reqwest::RequestBuilder) -> Self {
        Self::from(request.send().await.expect("request")).await
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The text of `<message>` of an XML error body.
    pub fn error_message(&self) -> String {
        crate::xml::text_of(&self.body, "message").unwrap_or_default()
    }

    /// Asserts an XML error response with `status`, whose message contains `needle`.
    #[track_caller]
    pub fn assert_error(&self, status: u16, needle: &str) {
        // Every message contains "": the expectation must name what the message says.
        assert!(
            !needle.trim().is_empty(),
            "assert_error needs text the message must contain"
        );
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert!(
            self.body
                .starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
            "error bodies are XML: {}",
            self.body
        );
        assert_eq!(
            crate::xml::text_of(&self.body, "code").as_deref(),
            Some(status.to_string().as_str())
        );
        let message = self.error_message();
        assert!(
            message.to_lowercase().contains(&needle.to_lowercase()),
            "message {message:?} should mention {needle:?}"
        );
    }
}
