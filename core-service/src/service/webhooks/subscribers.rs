//! The `/webhook` calls (sections 2 to 5 of `docs/spec/webhooks.md`): one function per call,
//! each checking the grant, then the parsed input, then the subscriber's name (404), then
//! its own rules. Writes go through [`write()`], so each is audited in its transaction.

use std::collections::HashMap;

use chrono::{Duration as TimeDelta, Utc};
use sea_orm::{
    AccessMode, ActiveModelTrait as _,
    ActiveValue::Set,
    ColumnTrait as _, ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend,
    EntityTrait as _, IntoActiveModel as _, IsolationLevel, PaginatorTrait as _, QueryFilter as _,
    QueryOrder as _, QuerySelect as _, TransactionTrait as _,
    prelude::{Expr, Uuid},
    sea_query::{Asterisk, ExprTrait as _},
};
use serde_json::json;

use super::{known, outbox, view::SubscriberView};
use crate::{
    access::{Caller, Operation},
    domain::webhook::{EventType, Filter},
    entities::{
        content_item, webhook_delivery, webhook_event,
        webhook_subscriber::{self, Hidden},
        webhook_subscription,
    },
    error::{ServiceError, ServiceResult},
    service::{
        Parsed, Write,
        audit::{AuditAction, Change},
        lookups, write,
    },
};

/// Most subscribers of one account.
pub const MAX_SUBSCRIBERS: u64 = 50;
/// How long a confirmation code is valid.
pub const CODE_VALIDITY: TimeDelta = TimeDelta::hours(24);

/// `register`: a new subscriber.
#[derive(Debug)]
pub struct Registration {
    pub name: String,
    pub callback_url: url::Url,
    /// Absent or empty: deliveries are unsigned. Never shown (`Hidden`).
    pub secret: Option<Hidden>,
}

/// `settings/change`.
#[derive(Debug)]
pub struct NewSettings {
    pub name: String,
    pub callback_url: url::Url,
    /// `None` keeps the secret, `Some(None)` removes it, `Some(Some(_))` replaces it.
    pub secret: Option<Option<Hidden>>,
}

/// `confirm`.
#[derive(Debug)]
pub struct Confirmation {
    pub name: String,
    pub code: Hidden,
}

/// `subscribe`: filters as given (names unchecked, ids parsed).
#[derive(Debug)]
pub struct Subscription {
    pub name: String,
    pub event_type: EventType,
    pub params: Vec<(String, Vec<Uuid>)>,
}

/// `unsubscribe`.
#[derive(Debug)]
pub struct Unsubscription {
    pub name: String,
    pub event_type: EventType,
}

/// A subscription as listed: its type and its filters that are not empty, in the order
/// `userIds`, `courseIds`, `courseItemIds`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionView {
    pub event_type: String,
    pub params: Vec<(&'static str, Vec<Uuid>)>,
}

fn not_found() -> ServiceError {
    ServiceError::not_found("Subscriber not found")
}

/// The caller's account's subscriber named `name`, or 404.
async fn find(
    conn: &impl ConnectionTrait,
    caller: &Caller,
    name: &str,
) -> ServiceResult<webhook_subscriber::Model> {
    webhook_subscriber::Entity::find()
        .filter(webhook_subscriber::Column::AccountId.eq(caller.account_id))
        .filter(webhook_subscriber::Column::Name.eq(name))
        .one(conn)
        .await?
        .ok_or_else(not_found)
}

fn status(model: &webhook_subscriber::Model) -> serde_json::Value {
    json!({
        "subscriberStatus": if model.active { "ACTIVE" } else { "INACTIVE" },
        "confirmationStatus": if model.confirmed { "CONFIRMED" } else { "UNCONFIRMED" },
        "callbackUrl": model.callback_url,
    })
}

/// One audit row of a subscriber (`id`), in the write's transaction.
fn audit(
    w: &Write,
    action: AuditAction,
    id: Uuid,
    before: Option<serde_json::Value>,
    after: Option<serde_json::Value>,
) {
    w.record(Change {
        action,
        entity_id: id,
        before,
        after,
    });
}

/// One audited write on the caller's subscriber `name`: 404 when the account has none by that
/// name, else `body` with the subscriber as it is inside the transaction.
async fn with_subscriber<T>(
    db: &DatabaseConnection,
    caller: &Caller,
    name: &str,
    body: impl AsyncFnOnce(&Write, webhook_subscriber::Model) -> ServiceResult<T>,
) -> ServiceResult<T> {
    write(db, caller, async |w| {
        let current = find(w.txn(), caller, name).await?;
        body(w, current).await
    })
    .await
}

/// What names the subscriber a call is on.
trait Named {
    fn name(&self) -> &str;
}

impl Named for String {
    fn name(&self) -> &str {
        self
    }
}

macro_rules! named_by_field {
    ($($input:ty),*) => {$(
        impl Named for $input {
            fn name(&self) -> &str {
                &self.name
            }
        }
    )*};
}
named_by_field!(Confirmation, NewSettings, Unsubscription);

/// A call on one named subscriber: the webhooks grant (403), the parsed input (400), then
/// [`with_subscriber`] with the name the input gives.
async fn on_subscriber<I: Named, T>(
    db: &DatabaseConnection,
    caller: &Caller,
    input: Parsed<I>,
    body: impl AsyncFnOnce(&Write, &I, webhook_subscriber::Model) -> ServiceResult<T>,
) -> ServiceResult<T> {
    caller.grant(Operation::ManageWebhooks)?;
    let input = input?;
    with_subscriber(db, caller, input.name(), async |w, current| {
        body(w, &input, current).await
    })
    .await
}

/// Stores `edit` of `current` with a new `updated_at`, audited as `action` with the status
/// before and after (`secret`: how the secret changed, when it did).
async fn update_audited(
    w: &Write,
    current: webhook_subscriber::Model,
    action: AuditAction,
    secret: Option<&'static str>,
    edit: impl FnOnce(&mut webhook_subscriber::ActiveModel),
) -> ServiceResult<()> {
    let before = status(&current);
    let id = current.id;
    let mut model = current.into_active_model();
    edit(&mut model);
    model.updated_at = Set(Utc::now());
    let updated = model.update(w.txn()).await?;
    let mut after = status(&updated);
    if let Some(secret) = secret {
        after["secret"] = json!(secret);
    }
    audit(w, action, id, Some(before), Some(after));
    Ok(())
}

pub async fn register(
    db: &DatabaseConnection,
    caller: &Caller,
    input: Parsed<Registration>,
) -> ServiceResult<()> {
    caller.grant(Operation::ManageWebhooks)?;
    let input = input?;
    write(db, caller, async |w| {
        let existing = webhook_subscriber::Entity::find()
            .filter(webhook_subscriber::Column::AccountId.eq(caller.account_id))
            .count(w.txn())
            .await?;
        if existing >= MAX_SUBSCRIBERS {
            return Err(ServiceError::invalid(format!(
                "subscriberName: the account already has {MAX_SUBSCRIBERS} subscribers, the \
                 most it may have; remove one first."
            )));
        }
        if find(w.txn(), caller, &input.name).await.is_ok() {
            return Err(ServiceError::invalid(format!(
                "subscriberName: '{}' is already registered in this account.",
                crate::domain::ids::clip(&input.name)
            )));
        }
        let now = Utc::now();
        let model = webhook_subscriber::ActiveModel {
            id: Set(Uuid::now_v7()),
            account_id: Set(caller.account_id),
            name: Set(input.name.clone()),
            callback_url: Set(input.callback_url.to_string()),
            secret: Set(input.secret.clone()),
            active: Set(true),
            confirmed: Set(false),
            code: Set(None),
            code_expires_at: Set(None),
            confirmation_delivery_id: Set(None),
            confirmation_attempts: Set(0),
            confirmation_retry_at: Set(None),
            has_events: Set(false),
            events_retry_at: Set(None),
            failures: Set(0),
            failing_since: Set(None),
            claim_owner: Set(None),
            claim_expires_at: Set(None),
            last_attempt_at: Set(None),
            last_attempt_result: Set(None),
            last_error: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(w.txn())
        .await?;
        let mut after = status(&model);
        after["subscriberName"] = json!(model.name);
        after["secret"] = json!(if model.secret.is_some() {
            "set"
        } else {
            "none"
        });
        audit(
            w,
            AuditAction::WebhookSubscriberRegistered,
            model.id,
            None,
            Some(after),
        );
        Ok(())
    })
    .await
}

pub async fn send_code(
    db: &DatabaseConnection,
    caller: &Caller,
    name: Parsed<String>,
) -> ServiceResult<()> {
    on_subscriber(db, caller, name, async |w, _, current| {
        let now = Utc::now();
        let id = current.id;
        let mut model = current.into_active_model();
        model.code = Set(Some(Hidden(Uuid::new_v4().to_string())));
        model.code_expires_at = Set(Some(now + CODE_VALIDITY));
        model.confirmation_delivery_id = Set(Some(Uuid::now_v7()));
        model.confirmation_attempts = Set(0);
        model.confirmation_retry_at = Set(Some(now));
        model.updated_at = Set(now);
        model.update(w.txn()).await?;
        audit(w, AuditAction::WebhookCodeSent, id, None, None);
        Ok(())
    })
    .await?;
    outbox::committed().notify_one();
    Ok(())
}

pub async fn confirm(
    db: &DatabaseConnection,
    caller: &Caller,
    input: Parsed<Confirmation>,
) -> ServiceResult<()> {
    on_subscriber(db, caller, input, async |w, input, current| {
        let matches = current
            .code
            .as_ref()
            .is_some_and(|code| code.0.eq_ignore_ascii_case(input.code.0.trim()))
            && current
                .code_expires_at
                .is_some_and(|until| until > Utc::now());
        if !matches {
            return Err(ServiceError::invalid(
                "code: it is not the latest code sent to the subscriber, or it has expired; \
                 send a new one with /webhook/code/send.",
            ));
        }
        update_audited(
            w,
            current,
            AuditAction::WebhookSubscriberConfirmed,
            None,
            |model| {
                model.confirmed = Set(true);
                model.confirmation_delivery_id = Set(None);
                model.confirmation_retry_at = Set(None);
                // A new run: the give-up clock starts again, and the oldest delivery goes now.
                model.events_retry_at = Set(None);
                model.failures = Set(0);
                model.failing_since = Set(None);
            },
        )
        .await
    })
    .await?;
    outbox::committed().notify_one();
    Ok(())
}

/// `enable` (`active`) or `disable`, idempotently.
pub async fn set_active(
    db: &DatabaseConnection,
    caller: &Caller,
    name: Parsed<String>,
    active: bool,
) -> ServiceResult<()> {
    on_subscriber(db, caller, name, async |w, _, current| {
        if current.active == active {
            return Ok(());
        }
        let action = if active {
            AuditAction::WebhookSubscriberEnabled
        } else {
            AuditAction::WebhookSubscriberDisabled
        };
        update_audited(w, current, action, None, |model| model.active = Set(active)).await
    })
    .await?;
    if active {
        outbox::committed().notify_one();
    }
    Ok(())
}

pub async fn remove(
    db: &DatabaseConnection,
    caller: &Caller,
    name: Parsed<String>,
) -> ServiceResult<()> {
    on_subscriber(db, caller, name, async |w, _, current| {
        webhook_event::Entity::delete_many()
            .filter(webhook_event::Column::SubscriberId.eq(current.id))
            .exec(w.txn())
            .await?;
        webhook_delivery::Entity::delete_many()
            .filter(webhook_delivery::Column::SubscriberId.eq(current.id))
            .exec(w.txn())
            .await?;
        webhook_subscription::Entity::delete_many()
            .filter(webhook_subscription::Column::SubscriberId.eq(current.id))
            .exec(w.txn())
            .await?;
        known::changed(w.txn(), caller.account_id).await?;
        webhook_subscriber::Entity::delete_by_id(current.id)
            .exec(w.txn())
            .await?;
        let mut before = status(&current);
        before["subscriberName"] = json!(current.name);
        audit(
            w,
            AuditAction::WebhookSubscriberRemoved,
            current.id,
            Some(before),
            None,
        );
        Ok(())
    })
    .await
}

pub async fn change_settings(
    db: &DatabaseConnection,
    caller: &Caller,
    input: Parsed<NewSettings>,
) -> ServiceResult<()> {
    on_subscriber(db, caller, input, async |w, input, current| {
        let url = input.callback_url.to_string();
        let url_changed = url != current.callback_url;
        let secret_change = match &input.secret {
            None => None,
            Some(new) if *new == current.secret => None,
            Some(None) => Some("removed"),
            Some(Some(_)) if current.secret.is_none() => Some("set"),
            Some(Some(_)) => Some("changed"),
        };
        if !url_changed && secret_change.is_none() {
            return Ok(());
        }
        let action = AuditAction::WebhookSettingsChanged;
        update_audited(w, current, action, secret_change, |model| {
            if url_changed {
                model.callback_url = Set(url);
                model.confirmed = Set(false);
                model.code = Set(None);
                model.code_expires_at = Set(None);
                model.confirmation_delivery_id = Set(None);
                model.confirmation_retry_at = Set(None);
            }
            if let Some(secret) = input.secret.clone() {
                model.secret = Set(secret);
            }
        })
        .await
    })
    .await
}

/// Which table a filter's ids must name rows of.
fn filter_of(name: &str) -> Option<Filter> {
    Filter::ALL.into_iter().find(|f| f.as_str() == name)
}

fn ids_json(ids: &[Uuid]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".into())
}

pub async fn subscribe(
    db: &DatabaseConnection,
    caller: &Caller,
    input: Parsed<Subscription>,
) -> ServiceResult<()> {
    caller.grant(Operation::ManageWebhooks)?;
    let input = input?;
    let accepted = input.event_type.filters();
    let mut filters: [Vec<Uuid>; 3] = Default::default();
    let mut seen = Vec::new();
    for (name, ids) in &input.params {
        let filter = filter_of(name)
            .filter(|f| accepted.contains(f))
            .ok_or_else(|| {
                ServiceError::invalid(format!(
                    "params: '{}' is not a filter of {} (it accepts {}).",
                    crate::domain::ids::clip(name),
                    input.event_type.as_str(),
                    if accepted.is_empty() {
                        "none".to_owned()
                    } else {
                        accepted
                            .iter()
                            .map(|f| f.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ))
            })?;
        if seen.contains(&filter) {
            return Err(ServiceError::invalid(format!(
                "params: '{}' is given twice.",
                filter.as_str()
            )));
        }
        seen.push(filter);
        filters[filter as usize] = ids.clone();
    }
    with_subscriber(db, caller, &input.name, async |w, subscriber| {
        for filter in Filter::ALL {
            let ids = &filters[filter as usize];
            if ids.is_empty() {
                continue;
            }
            let found = match filter {
                Filter::UserIds => lookups::existing_users(w.txn(), caller.account_id, ids).await?,
                Filter::CourseIds | Filter::CourseItemIds => {
                    lookups::existing_in_account(
                        w.txn(),
                        content_item::Column::AccountId,
                        content_item::Column::Id,
                        caller.account_id,
                        ids,
                    )
                    .await?
                }
            };
            if let Some(unknown) = ids.iter().find(|id| !found.contains(id)) {
                return Err(ServiceError::invalid(format!(
                    "params: {} names {unknown}, which is not {} of this account.",
                    filter.as_str(),
                    if filter == Filter::UserIds {
                        "a user"
                    } else {
                        "a content item"
                    }
                )));
            }
        }
        let type_name = input.event_type.as_str();
        let existing = webhook_subscription::Entity::find()
            .filter(webhook_subscription::Column::SubscriberId.eq(subscriber.id))
            .filter(webhook_subscription::Column::EventType.eq(type_name))
            .one(w.txn())
            .await?;
        let before = existing.as_ref().map(subscription_json);
        if let Some(existing) = &existing {
            webhook_subscription::Entity::delete_by_id(existing.id)
                .exec(w.txn())
                .await?;
        }
        let model = webhook_subscription::ActiveModel {
            id: Set(Uuid::now_v7()),
            subscriber_id: Set(subscriber.id),
            account_id: Set(caller.account_id),
            event_type: Set(type_name.to_owned()),
            user_ids: Set(ids_json(&filters[Filter::UserIds as usize])),
            course_ids: Set(ids_json(&filters[Filter::CourseIds as usize])),
            course_item_ids: Set(ids_json(&filters[Filter::CourseItemIds as usize])),
            created_at: Set(Utc::now()),
        }
        .insert(w.txn())
        .await?;
        known::changed(w.txn(), caller.account_id).await?;
        audit(
            w,
            AuditAction::WebhookSubscribed,
            subscriber.id,
            before,
            Some(subscription_json(&model)),
        );
        Ok(())
    })
    .await
}

fn subscription_json(model: &webhook_subscription::Model) -> serde_json::Value {
    let view = view_of(model);
    json!({
        "subscriptionType": view.event_type,
        "params": view.params.iter().map(|(name, ids)| json!({"name": name, "value": ids_json(ids)})).collect::<Vec<_>>(),
    })
}

pub async fn unsubscribe(
    db: &DatabaseConnection,
    caller: &Caller,
    input: Parsed<Unsubscription>,
) -> ServiceResult<()> {
    on_subscriber(db, caller, input, async |w, input, subscriber| {
        let existing = webhook_subscription::Entity::find()
            .filter(webhook_subscription::Column::SubscriberId.eq(subscriber.id))
            .filter(webhook_subscription::Column::EventType.eq(input.event_type.as_str()))
            .one(w.txn())
            .await?
            .ok_or_else(|| ServiceError::not_found("Subscription not found"))?;
        webhook_subscription::Entity::delete_by_id(existing.id)
            .exec(w.txn())
            .await?;
        known::changed(w.txn(), caller.account_id).await?;
        audit(
            w,
            AuditAction::WebhookUnsubscribed,
            subscriber.id,
            Some(subscription_json(&existing)),
            None,
        );
        Ok(())
    })
    .await
}

fn view_of(model: &webhook_subscription::Model) -> SubscriptionView {
    let mut params = Vec::new();
    for (filter, stored) in [
        (Filter::UserIds, &model.user_ids),
        (Filter::CourseIds, &model.course_ids),
        (Filter::CourseItemIds, &model.course_item_ids),
    ] {
        let mut ids: Vec<Uuid> = serde_json::from_str(stored).unwrap_or_default();
        ids.sort_unstable();
        if !ids.is_empty() {
            params.push((filter.as_str(), ids));
        }
    }
    SubscriptionView {
        event_type: model.event_type.clone(),
        params,
    }
}

pub async fn list_subscriptions(
    db: &DatabaseConnection,
    caller: &Caller,
    name: Parsed<String>,
) -> ServiceResult<Vec<SubscriptionView>> {
    caller.grant(Operation::ManageWebhooks)?;
    let name = name?;
    let subscriber = find(db, caller, &name).await?;
    let rows = webhook_subscription::Entity::find()
        .filter(webhook_subscription::Column::SubscriberId.eq(subscriber.id))
        .order_by_asc(webhook_subscription::Column::EventType)
        .all(db)
        .await?;
    Ok(rows.iter().map(view_of).collect())
}

pub async fn info(
    db: &DatabaseConnection,
    caller: &Caller,
    name: Parsed<String>,
) -> ServiceResult<SubscriberView> {
    caller.grant(Operation::ManageWebhooks)?;
    let name = name?;
    let read = one_snapshot(db).await?;
    let subscriber = find(&read, caller, &name).await?;
    let pending = pending_events(&read, [subscriber.id]).await?;
    read.commit().await?;
    Ok(SubscriberView::of(
        &subscriber,
        pending.get(&subscriber.id).copied().unwrap_or(0),
    ))
}

pub async fn list_subscribers(
    db: &DatabaseConnection,
    caller: &Caller,
) -> ServiceResult<Vec<SubscriberView>> {
    caller.grant(Operation::ManageWebhooks)?;
    let read = one_snapshot(db).await?;
    let mut rows = webhook_subscriber::Entity::find()
        .filter(webhook_subscriber::Column::AccountId.eq(caller.account_id))
        .order_by_asc(webhook_subscriber::Column::Name)
        .all(&read)
        .await?;
    // Code-point order whatever the database's collation.
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    let pending = pending_events(&read, rows.iter().map(|s| s.id)).await?;
    read.commit().await?;
    Ok(rows
        .iter()
        .map(|s| SubscriberView::of(s, pending.get(&s.id).copied().unwrap_or(0)))
        .collect())
}

/// A read-only transaction whose reads all see one snapshot, so that a subscriber's row and
/// its count of events agree (an acknowledgement changes both in one transaction): repeatable
/// read on PostgreSQL; on SQLite every read transaction is one.
async fn one_snapshot(db: &DatabaseConnection) -> ServiceResult<DatabaseTransaction> {
    Ok(if db.get_database_backend() == DbBackend::Postgres {
        db.begin_with_config(
            Some(IsolationLevel::RepeatableRead),
            Some(AccessMode::ReadOnly),
        )
        .await?
    } else {
        db.begin().await?
    })
}

/// The events stored for each of `subscribers` that has any (recorded, not yet acknowledged),
/// counted on `(subscriber_id, seq)`, which holds all a `COUNT(*)` reads. Writes do not keep a
/// count (`outbox::record`), so this read's cost follows a subscriber's backlog: about 0.1 s a
/// million events on either backend.
async fn pending_events(
    db: &impl ConnectionTrait,
    subscribers: impl IntoIterator<Item = Uuid>,
) -> ServiceResult<HashMap<Uuid, u64>> {
    let counts: Vec<(Uuid, i64)> = webhook_event::Entity::find()
        .select_only()
        .column(webhook_event::Column::SubscriberId)
        .column_as(Expr::col(Asterisk).count(), "pending")
        .filter(webhook_event::Column::SubscriberId.is_in(subscribers))
        .group_by(webhook_event::Column::SubscriberId)
        .into_tuple()
        .all(db)
        .await?;
    Ok(counts
        .into_iter()
        .map(|(id, count)| (id, u64::try_from(count).unwrap_or(0)))
        .collect())
}
