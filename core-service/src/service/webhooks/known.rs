//! Each account's webhook subscriptions as a recording transaction needs them, kept in
//! memory behind the revision on the account's counter row (migration 25).
//!
//! Every change of an account's subscriptions gives the row a new random revision in the
//! changing transaction ([`changed`]). A recording transaction that finds events for a kept
//! copy checks its revision in the counter update it makes anyway (under the row lock, so
//! the revision it sees is the last committed one, whichever core wrote it); one that finds
//! none reads the revision alone. Either way it reads the subscriptions themselves only after
//! they changed, which on a write with a subscriber is one statement fewer.
//!
//! An account with subscriptions always has a counter row: [`changed`] makes it, and the
//! migration made it for accounts that had subscriptions before. No row means no
//! subscriptions, so an account without webhooks still costs one read by primary key.

use std::{
    collections::HashMap,
    sync::{Arc, LazyLock, Mutex},
};

use sea_orm::{
    ActiveValue::Set, ColumnTrait as _, ConnectionTrait, EntityTrait as _, QueryFilter as _,
    QuerySelect as _, prelude::Uuid, sea_query::OnConflict,
};

use crate::{
    entities::{webhook_event_counter, webhook_subscription},
    error::ServiceResult,
};

/// Accounts whose subscriptions one process keeps; past it the copies start over (a
/// reload costs one read of an account's subscriptions).
const MOST_ACCOUNTS: usize = 10_000;

/// One subscription with its filters parsed and sorted for binary search.
pub(super) struct Subscription {
    pub subscriber_id: Uuid,
    pub event_type: String,
    pub filters: Filters,
}

/// A subscription's filters as stored; `None` is no filter.
pub(super) struct Filters {
    pub user_ids: Option<Vec<Uuid>>,
    pub course_ids: Option<Vec<Uuid>>,
}

/// An account's subscriptions at one revision, by subscriber.
#[derive(Clone)]
pub(super) struct Known {
    pub revision: i64,
    pub subscriptions: Arc<[Subscription]>,
}

static KNOWN: LazyLock<Mutex<HashMap<Uuid, Known>>> = LazyLock::new(Default::default);

fn known() -> std::sync::MutexGuard<'static, HashMap<Uuid, Known>> {
    // A panic while holding the map leaves nothing half-written worth refusing.
    KNOWN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The kept copy of the account's subscriptions, whose revision is still to be checked.
pub(super) fn cached(account_id: Uuid) -> Option<Known> {
    known().get(&account_id).cloned()
}

/// The account's revision, without locking its row; `None` when it has no counter row,
/// and so no subscriptions.
pub(super) async fn stored_revision(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
) -> ServiceResult<Option<i64>> {
    Ok(webhook_event_counter::Entity::find_by_id(account_id)
        .select_only()
        .column(webhook_event_counter::Column::SubscriptionsRevision)
        .into_tuple::<i64>()
        .one(txn)
        .await?)
}

/// Reads the account's subscriptions, read after `revision` was (so at it or later), and
/// keeps them under it unless it is 0 (not known).
pub(super) async fn load(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    revision: i64,
) -> ServiceResult<Known> {
    // Ordered here, not by the database: the index is `(account_id, event_type)`, and an
    // account's subscriptions are few.
    let mut rows = webhook_subscription::Entity::find()
        .filter(webhook_subscription::Column::AccountId.eq(account_id))
        .all(txn)
        .await?;
    rows.sort_unstable_by(|a, b| {
        (a.subscriber_id, &a.event_type).cmp(&(b.subscriber_id, &b.event_type))
    });
    let subscriptions = rows
        .into_iter()
        .map(|s| Subscription {
            subscriber_id: s.subscriber_id,
            filters: Filters {
                user_ids: stored_ids(&s.user_ids),
                course_ids: stored_ids(&s.course_ids),
            },
            event_type: s.event_type,
        })
        .collect();
    let loaded = Known {
        revision,
        subscriptions,
    };
    if revision != 0 {
        let mut known = known();
        if known.len() >= MOST_ACCOUNTS {
            known.clear();
        }
        known.insert(account_id, loaded.clone());
    }
    Ok(loaded)
}

fn stored_ids(json: &str) -> Option<Vec<Uuid>> {
    let mut ids: Vec<Uuid> = serde_json::from_str(json).unwrap_or_default();
    ids.sort_unstable();
    (!ids.is_empty()).then_some(ids)
}

/// Says, in the transaction changing the account's subscriptions, that they changed: a new
/// revision on the counter row (made if the account has none), so every core's copy is
/// stale once this commits.
pub async fn changed(txn: &impl ConnectionTrait, account_id: Uuid) -> ServiceResult<()> {
    // Odd, so never the 0 that means "not known".
    let revision = (rand::random::<u64>() | 1) as i64;
    webhook_event_counter::Entity::insert(webhook_event_counter::ActiveModel {
        account_id: Set(account_id),
        last_seq: Set(0),
        subscriptions_revision: Set(revision),
        flags_lowered: Set(0),
    })
    .on_conflict(
        OnConflict::column(webhook_event_counter::Column::AccountId)
            .update_column(webhook_event_counter::Column::SubscriptionsRevision)
            .to_owned(),
    )
    .exec_without_returning(txn)
    .await?;
    known().remove(&account_id);
    Ok(())
}
