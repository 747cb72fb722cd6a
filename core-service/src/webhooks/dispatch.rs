//! The dispatcher every core process runs (section 9 of `docs/spec/webhooks.md`).
//!
//! It wakes on this process's commits that recorded events and every poll interval, and
//! claims subscribers that have work due: a CONFIRMATION to send, or (enabled and confirmed)
//! events whose retry time has come. A claim is an owner and an expiry on the subscriber's
//! row, looked for on the indexes of due work and taken with `FOR UPDATE SKIP LOCKED` on
//! PostgreSQL (SQLite has one writer), renewed before each attempt; a dead process's claim expires and another takes over. While it
//! holds the claim, one task per subscriber makes one attempt at a time: the oldest
//! delivery, formed from at most `batch_max` consecutive events of one type when it is
//! first attempted, and the next one only after its acknowledgement has committed. No
//! transaction is open while a receiver is waited on, and nothing is read beyond one
//! batch, so memory does not grow with the backlog.

use std::{sync::Arc, time::Duration};

use tracing::Instrument as _;

use chrono::{DateTime, Utc};
use rand::Rng as _;
use sea_orm::{
    ColumnTrait as _, ConnectionTrait as _, DatabaseConnection, DatabaseTransaction,
    EntityTrait as _, IntoActiveModel as _, QueryFilter as _, QueryOrder as _, QuerySelect as _,
    TransactionTrait as _,
    prelude::{Expr, Uuid},
    sea_query::{Asterisk, Condition, ExprTrait as _, LockBehavior, LockType, Order, Query},
};
use tokio::{
    sync::{Semaphore, watch},
    task::JoinSet,
};

use super::{
    WebhookSettings,
    client::{Attempt, DeliveryClient, Outcome},
};
use crate::{
    entities::{
        webhook_delivery, webhook_event, webhook_event_counter,
        webhook_subscriber::{self, Column as S},
    },
    service::{
        audit::{self, Actor, AuditAction, Change},
        webhooks::outbox,
    },
    telemetry::untraced,
};

/// The delivery machinery of one process.
#[derive(Clone)]
pub struct Dispatcher {
    inner: Arc<Inner>,
}

struct Inner {
    db: DatabaseConnection,
    settings: WebhookSettings,
    client: DeliveryClient,
    /// This process's name in claims.
    owner: Uuid,
}

impl Dispatcher {
    pub fn new(db: DatabaseConnection, settings: WebhookSettings) -> anyhow::Result<Self> {
        let client = DeliveryClient::new(
            settings.allow_private_networks,
            settings.timeout(),
            settings.hosts.clone(),
        )?;
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                settings,
                client,
                owner: Uuid::now_v7(),
            }),
        })
    }

    /// Dispatches until `stop` turns true; then stops its attempts and gives its claims
    /// back, so that another process (or this one restarted) goes on at once.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        let inner = self.inner;
        let slots = Arc::new(Semaphore::new(inner.settings.concurrency as usize));
        let mut tasks = JoinSet::new();
        let poll = Duration::from_millis(inner.settings.poll_ms);
        let mut last_housekeeping: Option<tokio::time::Instant> = None;
        let mut last_sample: Option<tokio::time::Instant> = None;
        loop {
            if *stop.borrow() {
                break;
            }
            while tasks.try_join_next().is_some() {}
            let free = slots.available_permits();
            if free > 0 {
                match untraced(inner.claim(free)).await {
                    Ok(ids) => {
                        for id in ids {
                            let Ok(permit) = slots.clone().try_acquire_owned() else {
                                untraced(inner.release(id)).await;
                                continue;
                            };
                            let inner = inner.clone();
                            // One trace per subscriber's turn of deliveries.
                            let span = tracing::info_span!(parent: None, "webhook.deliver", webhook.subscriber_id = %id);
                            tasks.spawn(
                                async move {
                                    inner.work(id).await;
                                    drop(permit);
                                }
                                .instrument(span),
                            );
                        }
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "webhook dispatch could not claim subscribers")
                    }
                }
            }
            if last_housekeeping.is_none_or(|at| at.elapsed() >= Duration::from_secs(60)) {
                last_housekeeping = Some(tokio::time::Instant::now());
                if let Err(err) = untraced(inner.expire()).await {
                    tracing::warn!(error = %err, "webhook retention could not run");
                }
            }
            if lms_runtime::metrics::installed()
                && last_sample.is_none_or(|at| at.elapsed() >= BACKLOG_SAMPLE)
            {
                last_sample = Some(tokio::time::Instant::now());
                if let Err(err) = untraced(inner.sample_backlog()).await {
                    tracing::debug!(error = %err, "webhook backlog could not be sampled");
                }
            }
            tokio::select! {
                _ = outbox::committed().notified() => {
                    // The commits of one burst are claimed together, not one claim each.
                    tokio::select! {
                        _ = tokio::time::sleep(inner.settings.gather()) => {}
                        _ = stop.changed() => {}
                    }
                }
                _ = tokio::time::sleep(poll) => {}
                _ = stop.changed() => {}
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        }
        tasks.shutdown().await;
        untraced(inner.release_all()).await;
    }
}

/// What a subscriber's events make of its next delivery.
enum Oldest {
    Delivery(webhook_delivery::Model),
    /// Events wait for more of their burst: look again after this.
    Gathering(Duration),
    /// No event is pending.
    Nothing,
}

/// Not claimed by a live process.
fn unclaimed(now: DateTime<Utc>) -> Condition {
    Condition::any()
        .add(S::ClaimExpiresAt.is_null())
        .add(S::ClaimExpiresAt.lt(now))
}

/// Events to deliver: enabled, confirmed, events stored, their retry time come. Read on the
/// partial index of the flagged subscribers (few have a backlog at any time); the flag is
/// named bare, as the index's condition is, so both backends match the two.
fn events_due(now: DateTime<Utc>) -> Condition {
    Condition::all()
        .add(Expr::col((webhook_subscriber::Entity, S::HasEvents)))
        .add(S::Active.eq(true))
        .add(S::Confirmed.eq(true))
        .add(
            Condition::any()
                .add(S::EventsRetryAt.is_null())
                .add(S::EventsRetryAt.lte(now)),
        )
}

/// A CONFIRMATION to send, its time come. Read on `(confirmation_retry_at)`; `IS NOT NULL`
/// tells PostgreSQL's generic plan how few rows that is (a comparison with an unknown time
/// it guesses to match a third of them).
fn confirmation_due(now: DateTime<Utc>) -> Condition {
    Condition::all()
        .add(S::ConfirmationRetryAt.is_not_null())
        .add(S::ConfirmationRetryAt.lte(now))
}

/// The subscribers with work due now, not claimed by a live process.
fn due(now: DateTime<Utc>) -> Condition {
    Condition::all().add(unclaimed(now)).add(
        Condition::any()
            .add(events_due(now))
            .add(confirmation_due(now)),
    )
}

/// The statements of a delivery's turn on `webhook_events`: the oldest events read to form
/// it, and their deletion once it is acknowledged; for the query-plan checks.
pub fn delivery_statements(backend: sea_orm::DbBackend) -> Vec<String> {
    vec![
        sea_orm::QueryTrait::build(&oldest_events(Uuid::nil(), 100), backend).sql,
        sea_orm::QueryTrait::build(
            &webhook_event::Entity::delete_many().filter(events_in(Uuid::nil(), 1..=100)),
            backend,
        )
        .sql,
    ]
}

/// The subscriber's oldest `limit` events.
fn oldest_events(subscriber_id: Uuid, limit: u32) -> sea_orm::Select<webhook_event::Entity> {
    webhook_event::Entity::find()
        .filter(webhook_event::Column::SubscriberId.eq(subscriber_id))
        .order_by_asc(webhook_event::Column::Seq)
        .limit(u64::from(limit))
}

/// The reads of a poll that look for work (`Inner::candidates`), each a walk of one index;
/// for the query-plan checks.
pub fn poll_reads(backend: sea_orm::DbBackend) -> Vec<String> {
    let now = Utc::now();
    [events_due(now), confirmation_due(now)]
        .into_iter()
        .map(|work| backend.build(&candidates_query(work, now, 1)).sql)
        .chain([sea_orm::QueryTrait::build(&backlog_query(), backend).sql])
        .collect()
}

/// Up to `limit` unclaimed subscribers with the work `work`.
fn candidates_query(
    work: Condition,
    now: DateTime<Utc>,
    limit: u64,
) -> sea_orm::sea_query::SelectStatement {
    Query::select()
        .column(S::Id)
        .from(webhook_subscriber::Entity)
        .cond_where(Condition::all().add(work).add(unclaimed(now)))
        .limit(limit)
        .to_owned()
}

/// The events of `subscriber_id` numbered `seqs`: a delivery's, with its [`seqs`].
///
/// [`seqs`]: webhook_delivery::Model::seqs
fn events_in(subscriber_id: Uuid, seqs: std::ops::RangeInclusive<i64>) -> Condition {
    Condition::all()
        .add(webhook_event::Column::SubscriberId.eq(subscriber_id))
        .add(webhook_event::Column::Seq.between(*seqs.start(), *seqs.end()))
}

/// The events waiting for every subscriber: a count of the stored events (their smallest
/// index), taken at most every [`BACKLOG_SAMPLE`].
fn backlog_query() -> sea_orm::Select<webhook_event::Entity> {
    webhook_event::Entity::find()
        .select_only()
        .column_as(Expr::col(Asterisk).count(), "pending")
}

/// How often the backlog metric counts the stored events.
const BACKLOG_SAMPLE: Duration = Duration::from_secs(10);

/// `update` also recording the subscriber's latest attempt (section 5's `lastAttempt*`).
fn attempted(
    update: sea_orm::UpdateMany<webhook_subscriber::Entity>,
    outcome: &Outcome,
    at: DateTime<Utc>,
) -> sea_orm::UpdateMany<webhook_subscriber::Entity> {
    update
        .col_expr(S::LastAttemptAt, Expr::value(Some(at)))
        .col_expr(S::LastAttemptResult, Expr::value(Some(outcome.result())))
        .col_expr(S::LastError, Expr::value(outcome.error()))
}

/// The wait before a retry: the backoff less up to 10 % random jitter.
fn with_jitter(wait: Duration) -> chrono::Duration {
    let jitter = rand::rng().random_range(0.0..=0.1);
    let wait = wait.mul_f64(1.0 - jitter);
    chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::MAX)
}

fn lease(settings: &WebhookSettings) -> chrono::Duration {
    chrono::Duration::from_std(settings.claim_lease()).unwrap_or(chrono::Duration::MAX)
}

/// A URL as logs name it: without its query string.
fn loggable(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

/// Lowers the `has_events` flag of `subscriber_id` (of `account_id`) in `txn` if it has no
/// event stored; whether it did. A writer recording an event for it holds the account's
/// counter row until it commits, so the counter row is locked first: the look for events then
/// sees every event of a writer before, and a writer after finds the flag lowered, or
/// (PostgreSQL, its snapshot older than the lowering) `flags_lowered` moved, and raises it
/// again (`outbox`). SQLite's one writer makes the one statement enough there.
pub async fn lower_flag(
    txn: &DatabaseTransaction,
    account_id: Uuid,
    subscriber_id: Uuid,
) -> Result<bool, sea_orm::DbErr> {
    let postgres = txn.get_database_backend() == sea_orm::DbBackend::Postgres;
    if postgres {
        txn.execute_raw(sea_orm::Statement::from_sql_and_values(
            sea_orm::DbBackend::Postgres,
            r#"SELECT 1 FROM "webhook_event_counters" WHERE "account_id" = $1 FOR UPDATE"#,
            [account_id.into()],
        ))
        .await?;
    }
    // Ordered and limited so that PostgreSQL looks on `(subscriber_id, seq)`: for a bare
    // `EXISTS` it expects other subscribers' backlogs to make a match likely early in a
    // sequential scan, which reads the whole table when this subscriber has none (the
    // lowering's very case).
    let any_event = Query::select()
        .expr(Expr::val(1))
        .from(webhook_event::Entity)
        .and_where(webhook_event::Column::SubscriberId.eq(subscriber_id))
        .order_by(webhook_event::Column::Seq, Order::Asc)
        .limit(1)
        .to_owned();
    let lowered = webhook_subscriber::Entity::update_many()
        .col_expr(S::HasEvents, Expr::value(false))
        .filter(S::Id.eq(subscriber_id))
        .filter(S::HasEvents.eq(true))
        .filter(Expr::exists(any_event).not())
        .exec(txn)
        .await?
        .rows_affected
        > 0;
    if postgres && lowered {
        webhook_event_counter::Entity::update_many()
            .col_expr(
                webhook_event_counter::Column::FlagsLowered,
                Expr::col(webhook_event_counter::Column::FlagsLowered).add(1),
            )
            .filter(webhook_event_counter::Column::AccountId.eq(account_id))
            .exec(txn)
            .await?;
    }
    Ok(lowered)
}

/// The CONFIRMATION body of section 6: one payload, a string holding `{"code": …}`.
pub fn confirmation_body(code: &str) -> String {
    let payload = serde_json::json!({ "code": code }).to_string();
    format!(
        "{{\"type\":\"CONFIRMATION\",\"payloads\":[{}]}}",
        serde_json::Value::String(payload)
    )
}

impl Inner {
    /// Claims up to `limit` subscribers with work due; their ids.
    async fn claim(&self, limit: usize) -> Result<Vec<Uuid>, sea_orm::DbErr> {
        let now = Utc::now();
        // Looked for first, with reads: the claim is a write, and on SQLite every write
        // takes the database's one write lock, which a poll with nothing due must not
        // contend for with the requests' writes.
        let candidates = self.candidates(now, limit).await?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        // The condition again, in the write: another process may have claimed one since. On
        // PostgreSQL the rows another process is claiming are skipped, not waited for.
        let mut due_ids = Query::select();
        due_ids
            .column(S::Id)
            .from(webhook_subscriber::Entity)
            .cond_where(Condition::all().add(S::Id.is_in(candidates)).add(due(now)));
        if self.db.get_database_backend() == sea_orm::DbBackend::Postgres {
            due_ids.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked);
        }
        let claimed = webhook_subscriber::Entity::update_many()
            .col_expr(S::ClaimOwner, Expr::value(self.owner))
            .col_expr(S::ClaimExpiresAt, Expr::value(now + lease(&self.settings)))
            .filter(S::Id.in_subquery(due_ids))
            .exec_with_returning(&self.db)
            .await?;
        Ok(claimed.into_iter().map(|row| row.id).collect())
    }

    /// Up to `limit` unclaimed subscribers with work due, ascending: those with events, then
    /// those with a confirmation, each read on its own index.
    async fn candidates(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<Uuid>, sea_orm::DbErr> {
        let mut ids = Vec::new();
        for work in [events_due(now), confirmation_due(now)] {
            let query = candidates_query(work, now, limit as u64);
            for row in self.db.query_all(&query).await? {
                ids.push(row.try_get_by_index::<Uuid>(0)?);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        ids.truncate(limit);
        Ok(ids)
    }

    /// Extends this process's claim on `id`; the subscriber as it is now, or `None` when
    /// it is gone or claimed by another process.
    async fn renew(&self, id: Uuid) -> Result<Option<webhook_subscriber::Model>, sea_orm::DbErr> {
        let rows = webhook_subscriber::Entity::update_many()
            .col_expr(
                S::ClaimExpiresAt,
                Expr::value(Utc::now() + lease(&self.settings)),
            )
            .filter(S::Id.eq(id))
            .filter(S::ClaimOwner.eq(self.owner))
            .exec_with_returning(&self.db)
            .await?;
        Ok(rows.into_iter().next())
    }

    async fn release(&self, id: Uuid) {
        let released = webhook_subscriber::Entity::update_many()
            .col_expr(S::ClaimOwner, Expr::value(Option::<Uuid>::None))
            .col_expr(
                S::ClaimExpiresAt,
                Expr::value(Option::<DateTime<Utc>>::None),
            )
            .filter(S::Id.eq(id))
            .filter(S::ClaimOwner.eq(self.owner))
            .exec(&self.db)
            .await;
        if let Err(err) = released {
            tracing::warn!(error = %err, "a webhook claim could not be released; it expires");
        }
    }

    async fn release_all(&self) {
        let released = webhook_subscriber::Entity::update_many()
            .col_expr(S::ClaimOwner, Expr::value(Option::<Uuid>::None))
            .col_expr(
                S::ClaimExpiresAt,
                Expr::value(Option::<DateTime<Utc>>::None),
            )
            .filter(S::ClaimOwner.eq(self.owner))
            .exec(&self.db)
            .await;
        if let Err(err) = released {
            tracing::debug!(error = %err, "webhook claims not released at shutdown; they expire");
        }
    }

    /// Works on one claimed subscriber until it has nothing due, then gives the claim back.
    async fn work(&self, id: Uuid) {
        if let Err(err) = self.work_until_idle(id).await {
            tracing::warn!(error = %err, subscriber = %id, "webhook delivery stopped on a database error");
        }
        self.release(id).await;
        // Events committed while the claim was held are due now.
        outbox::committed().notify_one();
    }

    async fn work_until_idle(&self, id: Uuid) -> Result<(), sea_orm::DbErr> {
        loop {
            let Some(subscriber) = self.renew(id).await? else {
                return Ok(());
            };
            let now = Utc::now();
            if subscriber.confirmation_retry_at.is_some_and(|at| at <= now) {
                self.send_confirmation(&subscriber).await?;
                continue;
            }
            let events_due = subscriber.active
                && subscriber.confirmed
                && subscriber.has_events
                && subscriber.events_retry_at.is_none_or(|at| at <= now);
            if !events_due {
                return Ok(());
            }
            match self.oldest_delivery(&subscriber).await? {
                Oldest::Delivery(delivery) => self.send_events(&subscriber, &delivery).await?,
                Oldest::Gathering(wait) => tokio::time::sleep(wait).await,
                Oldest::Nothing => {
                    self.lower_flag(&subscriber).await?;
                    return Ok(());
                }
            }
        }
    }

    async fn lower_flag(
        &self,
        subscriber: &webhook_subscriber::Model,
    ) -> Result<(), sea_orm::DbErr> {
        let txn = self.db.begin().await?;
        lower_flag(&txn, subscriber.account_id, subscriber.id).await?;
        txn.commit().await
    }

    /// Sends the pending CONFIRMATION of `subscriber` once, or drops it if its code expired.
    async fn send_confirmation(
        &self,
        subscriber: &webhook_subscriber::Model,
    ) -> Result<(), sea_orm::DbErr> {
        let now = Utc::now();
        let (Some(code), Some(delivery_id)) =
            (&subscriber.code, subscriber.confirmation_delivery_id)
        else {
            return self.drop_confirmation(subscriber.id, None).await;
        };
        if subscriber.code_expires_at.is_none_or(|until| until <= now) {
            return self
                .drop_confirmation(subscriber.id, Some(delivery_id))
                .await;
        }
        let body = confirmation_body(&code.0);
        let attempt = subscriber.confirmation_attempts + 1;
        let outcome = self
            .attempt(subscriber, &body, delivery_id, "CONFIRMATION", attempt)
            .await;
        let now = Utc::now();
        let retry_at = (!outcome.delivered())
            .then(|| now + with_jitter(self.settings.backoff(u32::try_from(attempt).unwrap_or(1))));
        // Only if the code was not superseded or confirmed meanwhile.
        webhook_subscriber::Entity::update_many()
            .col_expr(S::ConfirmationAttempts, Expr::value(attempt))
            .col_expr(S::ConfirmationRetryAt, Expr::value(retry_at))
            .filter(S::Id.eq(subscriber.id))
            .filter(S::ConfirmationDeliveryId.eq(delivery_id))
            .exec(&self.db)
            .await?;
        self.note_attempt(subscriber.id, &outcome, now).await
    }

    async fn drop_confirmation(
        &self,
        id: Uuid,
        delivery_id: Option<Uuid>,
    ) -> Result<(), sea_orm::DbErr> {
        let mut update = webhook_subscriber::Entity::update_many()
            .col_expr(S::ConfirmationDeliveryId, Expr::value(Option::<Uuid>::None))
            .col_expr(
                S::ConfirmationRetryAt,
                Expr::value(Option::<DateTime<Utc>>::None),
            )
            .filter(S::Id.eq(id));
        if let Some(delivery_id) = delivery_id {
            update = update.filter(S::ConfirmationDeliveryId.eq(delivery_id));
        }
        update.exec(&self.db).await?;
        Ok(())
    }

    /// The subscriber's delivery in progress, or a new one formed from its oldest events:
    /// consecutive, of one type, at most `batch_max`, once the first of them has waited the
    /// gathering time (a batch that is full or closed by another type leaves at once).
    async fn oldest_delivery(
        &self,
        subscriber: &webhook_subscriber::Model,
    ) -> Result<Oldest, sea_orm::DbErr> {
        let existing = webhook_delivery::Entity::find()
            .filter(webhook_delivery::Column::SubscriberId.eq(subscriber.id))
            .order_by_asc(webhook_delivery::Column::CreatedAt)
            .one(&self.db)
            .await?;
        if let Some(existing) = existing {
            return Ok(Oldest::Delivery(existing));
        }
        // With no delivery of the subscriber left, every event it has stored is undelivered.
        let txn = self.db.begin().await?;
        let events = oldest_events(subscriber.id, self.settings.batch_max)
            .all(&txn)
            .await?;
        let Some(first) = events.first() else {
            txn.rollback().await?;
            return Ok(Oldest::Nothing);
        };
        let event_type = first.event_type.clone();
        let batch: Vec<&webhook_event::Model> = events
            .iter()
            .take_while(|e| e.event_type == event_type)
            .collect();
        let open = batch.len() == events.len() && batch.len() < self.settings.batch_max as usize;
        let waited = (Utc::now() - first.created_at).to_std().unwrap_or_default();
        if open && waited < self.settings.gather() {
            txn.rollback().await?;
            return Ok(Oldest::Gathering(self.settings.gather() - waited));
        }
        let mut body =
            String::with_capacity(64 + batch.iter().map(|e| e.payload.len() + 1).sum::<usize>());
        body.push_str("{\"type\":");
        body.push_str(&serde_json::Value::String(event_type.clone()).to_string());
        body.push_str(",\"payloads\":[");
        for (i, event) in batch.iter().enumerate() {
            if i > 0 {
                body.push(',');
            }
            body.push_str(&event.payload);
        }
        body.push_str("]}");
        let delivery = webhook_delivery::Model {
            id: Uuid::now_v7(),
            subscriber_id: subscriber.id,
            event_type,
            body,
            attempts: 0,
            events: i32::try_from(batch.len()).unwrap_or(i32::MAX),
            first_seq: first.seq,
            last_seq: batch.last().map_or(first.seq, |e| e.seq),
            created_at: Utc::now(),
        };
        webhook_delivery::Entity::insert(delivery.clone().into_active_model())
            .exec_without_returning(&txn)
            .await?;
        txn.commit().await?;
        Ok(Oldest::Delivery(delivery))
    }

    /// Attempts `delivery` once and records the outcome: an acknowledgement removes it and
    /// its events; a failure schedules the retry, or gives up.
    async fn send_events(
        &self,
        subscriber: &webhook_subscriber::Model,
        delivery: &webhook_delivery::Model,
    ) -> Result<(), sea_orm::DbErr> {
        let attempt = delivery.attempts + 1;
        let outcome = self
            .attempt(
                subscriber,
                &delivery.body,
                delivery.id,
                &delivery.event_type,
                attempt,
            )
            .await;
        let now = Utc::now();
        let txn = self.db.begin().await?;
        if outcome.delivered() {
            webhook_event::Entity::delete_many()
                .filter(events_in(delivery.subscriber_id, delivery.seqs()))
                .exec(&txn)
                .await?;
            webhook_delivery::Entity::delete_by_id(delivery.id)
                .exec(&txn)
                .await?;
            attempted(webhook_subscriber::Entity::update_many(), &outcome, now)
                .col_expr(S::EventsRetryAt, Expr::value(Option::<DateTime<Utc>>::None))
                .col_expr(S::Failures, Expr::value(0))
                .col_expr(S::FailingSince, Expr::value(Option::<DateTime<Utc>>::None))
                .filter(S::Id.eq(subscriber.id))
                .exec(&txn)
                .await?;
        } else {
            webhook_delivery::Entity::update_many()
                .col_expr(webhook_delivery::Column::Attempts, Expr::value(attempt))
                .filter(webhook_delivery::Column::Id.eq(delivery.id))
                .exec(&txn)
                .await?;
            let failures = subscriber.failures + 1;
            let failing_since = subscriber.failing_since.unwrap_or(now);
            let give_up = now - failing_since
                >= chrono::Duration::milliseconds(
                    i64::try_from(self.settings.give_up_ms).unwrap_or(i64::MAX),
                );
            let mut update = attempted(webhook_subscriber::Entity::update_many(), &outcome, now)
                .col_expr(S::Failures, Expr::value(failures))
                .col_expr(S::FailingSince, Expr::value(Some(failing_since)))
                .filter(S::Id.eq(subscriber.id));
            if give_up {
                update = update
                    .col_expr(S::Confirmed, Expr::value(false))
                    .col_expr(S::EventsRetryAt, Expr::value(Option::<DateTime<Utc>>::None));
            } else {
                let wait = self
                    .settings
                    .backoff(u32::try_from(failures).unwrap_or(u32::MAX));
                update =
                    update.col_expr(S::EventsRetryAt, Expr::value(Some(now + with_jitter(wait))));
            }
            update.exec(&txn).await?;
            if give_up {
                audit::insert(
                    &txn,
                    &Actor::system(subscriber.account_id),
                    [Change {
                        action: AuditAction::WebhookGaveUp,
                        entity_id: subscriber.id,
                        before: Some(serde_json::json!({ "confirmationStatus": "CONFIRMED" })),
                        after: Some(serde_json::json!({ "confirmationStatus": "UNCONFIRMED" })),
                    }],
                )
                .await?;
            }
            txn.commit().await?;
            if give_up {
                crate::metrics::webhook_give_up();
                tracing::warn!(
                    account = %subscriber.account_id,
                    subscriber = %subscriber.name,
                    since = %failing_since,
                    "webhook deliveries failed too long: the subscriber is unconfirmed until it confirms again"
                );
            }
            return Ok(());
        }
        txn.commit().await
    }

    /// One POST, measured, counted and (when it failed) logged.
    async fn attempt(
        &self,
        subscriber: &webhook_subscriber::Model,
        body: &str,
        delivery_id: Uuid,
        event_type: &str,
        attempt: i32,
    ) -> Outcome {
        let started = std::time::Instant::now();
        let outcome = self
            .client
            .attempt(Attempt {
                url: &subscriber.callback_url,
                body,
                delivery_id,
                event_type,
                attempt,
                secret: subscriber.secret.as_ref().map(|s| s.0.as_str()),
            })
            .await;
        crate::metrics::webhook_attempt(outcome.label(), started.elapsed());
        if !outcome.delivered() {
            tracing::info!(
                account = %subscriber.account_id,
                subscriber = %subscriber.name,
                callback = loggable(&subscriber.callback_url),
                delivery_id = %delivery_id,
                attempt,
                outcome = outcome.label(),
                result = %outcome.result(),
                "webhook delivery attempt failed"
            );
        }
        outcome
    }

    async fn note_attempt(
        &self,
        id: Uuid,
        outcome: &Outcome,
        at: DateTime<Utc>,
    ) -> Result<(), sea_orm::DbErr> {
        attempted(webhook_subscriber::Entity::update_many(), outcome, at)
            .filter(S::Id.eq(id))
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// Discards events older than the retention, with their deliveries, a bounded batch at
    /// a time.
    async fn expire(&self) -> Result<(), sea_orm::DbErr> {
        let hours = i64::try_from(self.settings.retention_hours).unwrap_or(i64::MAX / 3_600_000);
        let cutoff = Utc::now() - chrono::Duration::hours(hours);
        loop {
            let txn = self.db.begin().await?;
            let expired = webhook_event::Entity::find()
                .filter(webhook_event::Column::CreatedAt.lt(cutoff))
                .order_by_asc(webhook_event::Column::CreatedAt)
                .limit(1_000)
                .all(&txn)
                .await?;
            if expired.is_empty() {
                txn.rollback().await?;
                return Ok(());
            }
            // A delivery carrying an expired event goes, with all it carries.
            let mut subscribers: Vec<Uuid> = expired.iter().map(|e| e.subscriber_id).collect();
            subscribers.sort_unstable();
            subscribers.dedup();
            let carriers: Vec<webhook_delivery::Model> = webhook_delivery::Entity::find()
                .filter(webhook_delivery::Column::SubscriberId.is_in(subscribers.clone()))
                .all(&txn)
                .await?
                .into_iter()
                .filter(|d| {
                    expired
                        .iter()
                        .any(|e| e.subscriber_id == d.subscriber_id && d.seqs().contains(&e.seq))
                })
                .collect();
            if !carriers.is_empty() {
                webhook_delivery::Entity::delete_many()
                    .filter(webhook_delivery::Column::Id.is_in(carriers.iter().map(|d| d.id)))
                    .exec(&txn)
                    .await?;
            }
            // One statement per subscriber and per delivery: a condition naming every event
            // at once would be deeper than SQLite parses.
            let mut count = 0;
            for delivery in &carriers {
                count += webhook_event::Entity::delete_many()
                    .filter(events_in(delivery.subscriber_id, delivery.seqs()))
                    .exec(&txn)
                    .await?
                    .rows_affected;
            }
            // A subscriber left without events keeps its flag until its dispatcher finds none.
            for subscriber_id in subscribers {
                let seqs = expired
                    .iter()
                    .filter(|e| e.subscriber_id == subscriber_id)
                    .map(|e| e.seq);
                count += webhook_event::Entity::delete_many()
                    .filter(webhook_event::Column::SubscriberId.eq(subscriber_id))
                    .filter(webhook_event::Column::Seq.is_in(seqs))
                    .exec(&txn)
                    .await?
                    .rows_affected;
            }
            txn.commit().await?;
            crate::metrics::webhook_events_expired(count);
            tracing::warn!(
                events = count,
                "webhook events undelivered past the retention were discarded"
            );
        }
    }

    async fn sample_backlog(&self) -> Result<(), sea_orm::DbErr> {
        let pending: Option<Option<i64>> = backlog_query().into_tuple().one(&self.db).await?;
        let oldest: Option<DateTime<Utc>> = webhook_event::Entity::find()
            .select_only()
            .column(webhook_event::Column::CreatedAt)
            .order_by_asc(webhook_event::Column::CreatedAt)
            .limit(1)
            .into_tuple()
            .one(&self.db)
            .await?;
        let age = oldest
            .and_then(|at| (Utc::now() - at).to_std().ok())
            .unwrap_or_default();
        let pending = pending.flatten().unwrap_or(0);
        crate::metrics::webhook_backlog(u64::try_from(pending).unwrap_or(0), age);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_confirmation_body_is_the_specifications() {
        assert_eq!(
            confirmation_body("5b0c3f7e-6a86-4d8a-9b1e-2f4c7d9a1e03"),
            r#"{"type":"CONFIRMATION","payloads":["{\"code\":\"5b0c3f7e-6a86-4d8a-9b1e-2f4c7d9a1e03\"}"]}"#
        );
    }

    #[test]
    fn logs_name_a_callback_without_its_query() {
        assert_eq!(
            loggable("https://h.example.com/x?token=secret"),
            "https://h.example.com/x"
        );
    }
}
