//! The core's metrics (the README lists them with example queries). Recorded through
//! handles kept per label set, so a call costs a map lookup and atomic adds, no allocation;
//! without a metrics address nothing is recorded at all.

use std::{
    collections::HashMap,
    sync::{OnceLock, RwLock},
    time::Duration,
};

use metrics::{Counter, Histogram};

pub const RPC_REQUESTS: &str = "rpc_server_requests_total";
pub const RPC_DURATION: &str = "rpc_server_duration_seconds";
pub const CREDENTIAL_CACHE: &str = "lms_credential_cache_total";
pub const VERIFICATIONS_WAITING: &str = "lms_password_verifications_waiting";
pub const VERIFICATIONS_RUNNING: &str = "lms_password_verifications_running";
pub const VERIFICATION_WAIT: &str = "lms_password_verification_wait_seconds";
pub const SHED: &str = "lms_requests_shed_total";
pub const THROTTLED: &str = "lms_logins_throttled_total";
pub const RATE_LIMITED: &str = "lms_requests_rate_limited_total";
pub const LOGIN_FAILURES: &str = "lms_login_failures_total";
pub const DB_POOL_CONNECTIONS: &str = "lms_db_pool_connections";
pub const DB_POOL_MAX: &str = "lms_db_pool_max_connections";
pub const DB_POOL_TIMEOUTS: &str = "lms_db_pool_timeouts_total";
pub const DB_UNAVAILABLE: &str = "lms_db_unavailable_total";
pub const DB_UP: &str = "lms_db_up";
pub const POINTS_ROWS: &str = "lms_points_rows_streamed_total";
pub const LIST_ROWS: &str = "lms_list_rows_streamed_total";
pub const DB_READ_BATCH: &str = "lms_db_read_batch_items";
pub const WEBHOOK_EVENTS_RECORDED: &str = "lms_webhook_events_recorded_total";
pub const WEBHOOK_DELIVERIES: &str = "lms_webhook_deliveries_total";
pub const WEBHOOK_DELIVERY_DURATION: &str = "lms_webhook_delivery_duration_seconds";
pub const WEBHOOK_BACKLOG_EVENTS: &str = "lms_webhook_backlog_events";
pub const WEBHOOK_BACKLOG_OLDEST: &str = "lms_webhook_backlog_oldest_seconds";
pub const WEBHOOK_GIVE_UPS: &str = "lms_webhook_give_ups_total";
pub const WEBHOOK_EVENTS_EXPIRED: &str = "lms_webhook_events_expired_total";

/// Whether anything is recorded: a recorder is installed once a metrics address is served.
fn on() -> bool {
    lms_runtime::metrics::installed()
}

/// Describes the metrics (`# HELP` lines); called when the metrics endpoint starts.
pub fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        RPC_REQUESTS,
        "gRPC calls served, by service, method and status code"
    );
    describe_histogram!(
        RPC_DURATION,
        Unit::Seconds,
        "gRPC call duration, to the last frame"
    );
    describe_counter!(
        CREDENTIAL_CACHE,
        "Password logins answered from the verified-credentials cache (hit) or verified (miss)"
    );
    describe_gauge!(
        VERIFICATIONS_WAITING,
        "Password verifications waiting for a slot"
    );
    describe_gauge!(
        VERIFICATIONS_RUNNING,
        "Password verifications running (argon2id)"
    );
    describe_histogram!(
        VERIFICATION_WAIT,
        Unit::Seconds,
        "How long a password verification waited for a slot"
    );
    describe_counter!(SHED, "Requests refused with UNAVAILABLE (503), by reason");
    describe_counter!(THROTTLED, "Logins refused as throttled (429)");
    describe_counter!(
        RATE_LIMITED,
        "Requests refused for their rate (429), by reason: the caller's own limit or its account's"
    );
    describe_counter!(
        LOGIN_FAILURES,
        "Failed password logins (wrong or unknown credentials)"
    );
    describe_gauge!(
        DB_POOL_CONNECTIONS,
        "Database pool connections, by state (in_use, idle)"
    );
    describe_gauge!(DB_POOL_MAX, "Database pool size limit");
    describe_counter!(
        DB_POOL_TIMEOUTS,
        "Requests that waited too long for a database connection"
    );
    describe_counter!(
        DB_UNAVAILABLE,
        "Database errors meaning the database is out of reach"
    );
    describe_gauge!(
        DB_UP,
        "Whether the database answered the last health probe (1) or not (0)"
    );
    describe_counter!(POINTS_ROWS, "Points rows streamed to callers");
    describe_counter!(
        WEBHOOK_EVENTS_RECORDED,
        "Webhook events written, one per matching subscription, by type"
    );
    describe_counter!(
        WEBHOOK_DELIVERIES,
        "Webhook delivery attempts by outcome, CONFIRMATION included"
    );
    describe_histogram!(
        WEBHOOK_DELIVERY_DURATION,
        Unit::Seconds,
        "One webhook delivery attempt, to its outcome"
    );
    describe_gauge!(
        WEBHOOK_BACKLOG_EVENTS,
        "Webhook events not yet acknowledged, all subscribers (sampled at scrape)"
    );
    describe_gauge!(
        WEBHOOK_BACKLOG_OLDEST,
        Unit::Seconds,
        "Age of the oldest unacknowledged webhook event (0 when none)"
    );
    describe_counter!(
        WEBHOOK_GIVE_UPS,
        "Subscribers made unconfirmed by the give-up rule"
    );
    describe_counter!(
        WEBHOOK_EVENTS_EXPIRED,
        "Webhook events discarded by retention"
    );
    describe_counter!(
        LIST_ROWS,
        "Rows of whole lists streamed to callers, by list"
    );
    describe_histogram!(
        DB_READ_BATCH,
        "Hot reads answered by one PostgreSQL statement"
    );
}

/// A call ended with the status named `code` (`NOT_FOUND`) after `latency`.
pub(crate) fn rpc_finished(
    service: &'static str,
    method: &'static str,
    code: &'static str,
    latency: Duration,
) {
    if !on() {
        return;
    }
    type Handles =
        RwLock<HashMap<(&'static str, &'static str, &'static str), (Counter, Histogram)>>;
    static HANDLES: OnceLock<Handles> = OnceLock::new();
    let handles = HANDLES.get_or_init(RwLock::default);
    let key = (service, method, code);
    let cached = handles.read().ok().and_then(|map| map.get(&key).cloned());
    let (count, duration) = cached.unwrap_or_else(|| {
        let made = (
            metrics::counter!(RPC_REQUESTS, "rpc_service" => service, "rpc_method" => method, "code" => code),
            metrics::histogram!(RPC_DURATION, "rpc_service" => service, "rpc_method" => method),
        );
        if let Ok(mut map) = handles.write() {
            map.insert(key, made.clone());
        }
        made
    });
    count.increment(1);
    duration.record(latency.as_secs_f64());
}

/// One handle per static label set, made on first use.
macro_rules! static_counter {
    ($name:expr $(, $label:literal => $value:literal)*) => {{
        static HANDLE: OnceLock<Counter> = OnceLock::new();
        HANDLE.get_or_init(|| metrics::counter!($name $(, $label => $value)*))
    }};
}

/// A password login was answered from the cache (`hit`) or needed a verification (`miss`).
pub(crate) fn credential_cache(hit: bool) {
    if !on() {
        return;
    }
    if hit {
        static_counter!(CREDENTIAL_CACHE, "result" => "hit").increment(1);
    } else {
        static_counter!(CREDENTIAL_CACHE, "result" => "miss").increment(1);
    }
}

/// A request was refused with UNAVAILABLE because verification slots stayed full.
pub(crate) fn shed_verification_queue() {
    if on() {
        static_counter!(SHED, "reason" => "verification_queue").increment(1);
    }
}

/// A request was refused with UNAVAILABLE because the database is out of reach.
pub(crate) fn shed_database() {
    if on() {
        static_counter!(SHED, "reason" => "database").increment(1);
        static_counter!(DB_UNAVAILABLE).increment(1);
    }
}

/// A request waited too long for a pooled database connection.
pub(crate) fn pool_timeout() {
    if on() {
        static_counter!(DB_POOL_TIMEOUTS).increment(1);
    }
}

pub(crate) fn throttled() {
    if on() {
        static_counter!(THROTTLED).increment(1);
    }
}

/// A request was refused for its rate; `reason` is `caller` or `account`.
pub(crate) fn rate_limited(reason: &'static str) {
    if on() {
        match reason {
            "account" => static_counter!(RATE_LIMITED, "reason" => "account").increment(1),
            _ => static_counter!(RATE_LIMITED, "reason" => "caller").increment(1),
        }
    }
}

pub(crate) fn login_failed() {
    if on() {
        static_counter!(LOGIN_FAILURES).increment(1);
    }
}

pub(crate) fn points_rows(rows: u64) {
    if on() {
        static_counter!(POINTS_ROWS).increment(rows);
    }
}

/// A chunk of `rows` rows of the whole list `list` was streamed; once per chunk of up to a
/// thousand rows, so the label is looked up each time.
pub(crate) fn list_rows(list: &'static str, rows: usize) {
    if on() {
        metrics::counter!(LIST_ROWS, "list" => list).increment(rows as u64);
    }
}

/// A webhook event row of `event_type` was written.
pub(crate) fn webhook_event_recorded(event_type: &'static str) {
    if on() {
        metrics::counter!(WEBHOOK_EVENTS_RECORDED, "type" => event_type).increment(1);
    }
}

/// One webhook delivery attempt ended with `outcome` after `elapsed`.
pub(crate) fn webhook_attempt(outcome: &'static str, elapsed: Duration) {
    if on() {
        metrics::counter!(WEBHOOK_DELIVERIES, "outcome" => outcome).increment(1);
        metrics::histogram!(WEBHOOK_DELIVERY_DURATION).record(elapsed.as_secs_f64());
    }
}

pub(crate) fn webhook_give_up() {
    if on() {
        metrics::counter!(WEBHOOK_GIVE_UPS).increment(1);
    }
}

pub(crate) fn webhook_events_expired(count: u64) {
    if on() {
        metrics::counter!(WEBHOOK_EVENTS_EXPIRED).increment(count);
    }
}

/// The backlog as last sampled: events not yet acknowledged, and the oldest one's age.
pub(crate) fn webhook_backlog(events: u64, oldest: Duration) {
    if on() {
        metrics::gauge!(WEBHOOK_BACKLOG_EVENTS).set(events as f64);
        metrics::gauge!(WEBHOOK_BACKLOG_OLDEST).set(oldest.as_secs_f64());
    }
}

/// One PostgreSQL statement answered `items` concurrent reads.
pub(crate) fn read_batch(items: usize) {
    if on() {
        static HANDLE: OnceLock<Histogram> = OnceLock::new();
        HANDLE
            .get_or_init(|| metrics::histogram!(DB_READ_BATCH))
            .record(items as f64);
    }
}

/// Verification queue: one more waiting (`+1`) or one fewer (`-1`); running likewise.
pub(crate) fn verifications_waiting(delta: f64) {
    if on() {
        static HANDLE: OnceLock<metrics::Gauge> = OnceLock::new();
        HANDLE
            .get_or_init(|| metrics::gauge!(VERIFICATIONS_WAITING))
            .increment(delta);
    }
}

pub(crate) fn verifications_running(delta: f64) {
    if on() {
        static HANDLE: OnceLock<metrics::Gauge> = OnceLock::new();
        HANDLE
            .get_or_init(|| metrics::gauge!(VERIFICATIONS_RUNNING))
            .increment(delta);
    }
}

pub(crate) fn verification_waited(wait: Duration) {
    if on() {
        static HANDLE: OnceLock<Histogram> = OnceLock::new();
        HANDLE
            .get_or_init(|| metrics::histogram!(VERIFICATION_WAIT))
            .record(wait.as_secs_f64());
    }
}

/// The health probe's last answer.
pub(crate) fn database_up(up: bool) {
    if on() {
        metrics::gauge!(DB_UP).set(if up { 1.0 } else { 0.0 });
    }
}

/// Samples the pool of `db(owner)` at each scrape, while `owner` (the core's state) lives.
pub(crate) fn sample_pool<S: Send + Sync + 'static>(
    owner: std::sync::Weak<S>,
    db: fn(&S) -> &sea_orm::DatabaseConnection,
) {
    if !on() {
        return;
    }
    lms_runtime::metrics::on_scrape(move || {
        let Some(owner) = owner.upgrade() else {
            return false;
        };
        let (size, idle, max) = pool_numbers(db(&owner));
        metrics::gauge!(DB_POOL_CONNECTIONS, "state" => "in_use")
            .set((size as usize).saturating_sub(idle) as f64);
        metrics::gauge!(DB_POOL_CONNECTIONS, "state" => "idle").set(idle as f64);
        metrics::gauge!(DB_POOL_MAX).set(max as f64);
        true
    });
}

/// Open connections, idle ones and the limit, of either backend's pool.
fn pool_numbers(db: &sea_orm::DatabaseConnection) -> (u32, usize, u32) {
    match db.get_database_backend() {
        sea_orm::DbBackend::Postgres => {
            let pool = db.get_postgres_connection_pool();
            (
                pool.size(),
                pool.num_idle(),
                pool.options().get_max_connections(),
            )
        }
        _ => {
            let pool = db.get_sqlite_connection_pool();
            (
                pool.size(),
                pool.num_idle(),
                pool.options().get_max_connections(),
            )
        }
    }
}
