//! Events written in the transaction of the change that causes them (section 9 of
//! `docs/spec/webhooks.md`): a service says what happened with [`Write::emit`]; the write
//! helper hands the events to [`record`] just before it commits, which writes one row per
//! matching subscription, numbered from the account's counter row. A refused write records
//! nothing; a committed one has its events stored.
//!
//! [`Write::emit`]: crate::service::Write::emit

use std::{collections::BTreeSet, sync::LazyLock};

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set,
    ColumnTrait as _, ConnectionTrait, EntityTrait as _, QueryFilter as _, QueryOrder as _,
    prelude::{Expr, Uuid},
    sea_query::ExprTrait as _,
};
use serde::Serialize;
use tokio::sync::Notify;

use crate::{
    domain::webhook::EventType,
    entities::{webhook_event, webhook_event_counter, webhook_subscriber, webhook_subscription},
    error::ServiceResult,
};

/// Most learners in one `LEARNERS_ENROLLED_IN_COURSE` event; more make several.
pub const MAX_LEARNERS_PER_EVENT: usize = 1_000;

/// Woken after a commit that recorded events, so this process's dispatcher starts at once
/// (other processes find them by polling).
static COMMITTED: LazyLock<Notify> = LazyLock::new(Notify::new);

/// What the dispatcher waits on between polls.
pub fn committed() -> &'static Notify {
    &COMMITTED
}

/// Something that happened, as a service tells it. Payload keys are in the order of the
/// specification's table (section 7).
#[derive(Debug, Clone)]
pub enum Event {
    UserRegistered {
        user_id: Uuid,
        department_id: Uuid,
        login: String,
        email: Option<String>,
    },
    /// Learners newly enrolled in one content item, ascending; split into events of at
    /// most [`MAX_LEARNERS_PER_EVENT`] when recorded.
    LearnersEnrolled {
        course_id: Uuid,
        learner_ids: Vec<Uuid>,
    },
    /// `status` and `previous_status` are effective completion statuses; `change_date` is
    /// Unix seconds × 10^9.
    CourseStatusChanged {
        course_id: Uuid,
        learner_id: Uuid,
        enrollment_ids: Vec<Uuid>,
        status: String,
        previous_status: String,
        change_date: i64,
    },
    CourseCompletedSuccessfully {
        course_id: Uuid,
        learner_id: Uuid,
        enrollment_ids: Vec<Uuid>,
        completion_date: i64,
    },
}

impl Event {
    pub fn event_type(&self) -> EventType {
        match self {
            Self::UserRegistered { .. } => EventType::UserRegistered,
            Self::LearnersEnrolled { .. } => EventType::LearnersEnrolledInCourse,
            Self::CourseStatusChanged { .. } => EventType::CourseStatusChanged,
            Self::CourseCompletedSuccessfully { .. } => EventType::CourseCompletedSuccessfully,
        }
    }

    fn course_id(&self) -> Option<Uuid> {
        match self {
            Self::UserRegistered { .. } => None,
            Self::LearnersEnrolled { course_id, .. }
            | Self::CourseStatusChanged { course_id, .. }
            | Self::CourseCompletedSuccessfully { course_id, .. } => Some(*course_id),
        }
    }

    /// The payload this subscription receives, or `None` when its filters leave nothing.
    fn payload_for(&self, filters: &Filters) -> Option<String> {
        if let (Some(courses), Some(course)) = (&filters.course_ids, self.course_id())
            && courses.binary_search(&course).is_err()
        {
            return None;
        }
        let in_users = |id: &Uuid| {
            filters
                .user_ids
                .as_ref()
                .is_none_or(|users| users.binary_search(id).is_ok())
        };
        let json = match self {
            Self::UserRegistered {
                user_id,
                department_id,
                login,
                email,
            } => serde_json::to_string(&UserRegistered {
                user_id: *user_id,
                department_id: *department_id,
                login,
                email: email.as_deref(),
            }),
            Self::LearnersEnrolled {
                course_id,
                learner_ids,
            } => {
                let learner_ids: Vec<Uuid> = learner_ids.iter().copied().filter(in_users).collect();
                if learner_ids.is_empty() {
                    return None;
                }
                serde_json::to_string(&LearnersEnrolled {
                    course_id: *course_id,
                    learner_ids,
                })
            }
            Self::CourseStatusChanged {
                course_id,
                learner_id,
                enrollment_ids,
                status,
                previous_status,
                change_date,
            } => {
                if !in_users(learner_id) {
                    return None;
                }
                serde_json::to_string(&CourseStatusChanged {
                    course_id: *course_id,
                    learner_id: *learner_id,
                    enrollment_ids,
                    status,
                    previous_status,
                    change_date: *change_date,
                })
            }
            Self::CourseCompletedSuccessfully {
                course_id,
                learner_id,
                enrollment_ids,
                completion_date,
            } => {
                if !in_users(learner_id) {
                    return None;
                }
                serde_json::to_string(&CourseCompleted {
                    course_id: *course_id,
                    learner_id: *learner_id,
                    enrollment_ids,
                    completion_date: *completion_date,
                })
            }
        };
        // Serializing these plain structs cannot fail.
        json.ok()
    }

    /// The event as recorded: enrollments of more than 1,000 learners become several.
    fn split(self) -> Vec<Event> {
        match self {
            Self::LearnersEnrolled {
                course_id,
                learner_ids,
            } if learner_ids.len() > MAX_LEARNERS_PER_EVENT => learner_ids
                .chunks(MAX_LEARNERS_PER_EVENT)
                .map(|chunk| Self::LearnersEnrolled {
                    course_id,
                    learner_ids: chunk.to_vec(),
                })
                .collect(),
            other => vec![other],
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UserRegistered<'a> {
    user_id: Uuid,
    department_id: Uuid,
    login: &'a str,
    email: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LearnersEnrolled {
    course_id: Uuid,
    learner_ids: Vec<Uuid>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CourseStatusChanged<'a> {
    course_id: Uuid,
    learner_id: Uuid,
    enrollment_ids: &'a [Uuid],
    status: &'a str,
    previous_status: &'a str,
    change_date: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CourseCompleted<'a> {
    course_id: Uuid,
    learner_id: Uuid,
    enrollment_ids: &'a [Uuid],
    completion_date: i64,
}

/// A subscription's filters as stored; `None` is no filter.
struct Filters {
    user_ids: Option<Vec<Uuid>>,
    course_ids: Option<Vec<Uuid>>,
}

fn stored_ids(json: &str) -> Option<Vec<Uuid>> {
    let mut ids: Vec<Uuid> = serde_json::from_str(json).unwrap_or_default();
    ids.sort_unstable();
    (!ids.is_empty()).then_some(ids)
}

/// Writes `events` for every subscription of the account that exists and matches now, in
/// the caller's transaction (which holds the account's write lock); how many rows it wrote.
/// Nothing is read beyond the account's subscriptions of the events' types when no
/// subscriber wants them.
pub async fn record(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    events: Vec<Event>,
) -> ServiceResult<usize> {
    if events.is_empty() {
        return Ok(0);
    }
    let types: BTreeSet<&'static str> = events.iter().map(|e| e.event_type().as_str()).collect();
    let subscriptions = webhook_subscription::Entity::find()
        .filter(webhook_subscription::Column::AccountId.eq(account_id))
        .filter(webhook_subscription::Column::EventType.is_in(types))
        .order_by_asc(webhook_subscription::Column::SubscriberId)
        .all(txn)
        .await?;
    if subscriptions.is_empty() {
        return Ok(0);
    }
    let subscriptions: Vec<(webhook_subscription::Model, Filters)> = subscriptions
        .into_iter()
        .map(|s| {
            let filters = Filters {
                user_ids: stored_ids(&s.user_ids),
                course_ids: stored_ids(&s.course_ids),
            };
            (s, filters)
        })
        .collect();
    let now = Utc::now();
    let mut rows: Vec<(Uuid, &'static str, String)> = Vec::new();
    for event in events.into_iter().flat_map(Event::split) {
        let event_type = event.event_type().as_str();
        for (subscription, filters) in &subscriptions {
            if subscription.event_type != event_type {
                continue;
            }
            if let Some(payload) = event.payload_for(filters) {
                rows.push((subscription.subscriber_id, event_type, payload));
            }
        }
    }
    if rows.is_empty() {
        return Ok(0);
    }
    let first = take_numbers(txn, account_id, rows.len()).await?;
    let mut per_subscriber: std::collections::BTreeMap<Uuid, i64> = Default::default();
    let count = rows.len();
    let mut models = Vec::with_capacity(rows.len().min(500));
    for (offset, (subscriber_id, event_type, payload)) in rows.into_iter().enumerate() {
        *per_subscriber.entry(subscriber_id).or_default() += 1;
        crate::metrics::webhook_event_recorded(event_type);
        models.push(webhook_event::ActiveModel {
            id: Set(Uuid::now_v7()),
            account_id: Set(account_id),
            subscriber_id: Set(subscriber_id),
            seq: Set(first + offset as i64),
            event_type: Set(event_type.to_owned()),
            payload: Set(payload),
            delivery_id: Set(None),
            created_at: Set(now),
        });
        if models.len() == 500 {
            insert_events(txn, std::mem::take(&mut models)).await?;
        }
    }
    insert_events(txn, models).await?;
    // One statement per distinct count (a write's subscribers usually all get the same
    // number of events), not one per subscriber: these rows are the dispatchers' too, and
    // the account's writers wait for this transaction.
    let mut by_count: std::collections::BTreeMap<i64, Vec<Uuid>> = Default::default();
    for (subscriber_id, added) in per_subscriber {
        by_count.entry(added).or_default().push(subscriber_id);
    }
    for (added, subscriber_ids) in by_count {
        webhook_subscriber::Entity::update_many()
            .col_expr(
                webhook_subscriber::Column::PendingEvents,
                Expr::col(webhook_subscriber::Column::PendingEvents).add(added),
            )
            .filter(webhook_subscriber::Column::Id.is_in(subscriber_ids))
            .exec(txn)
            .await?;
    }
    Ok(count)
}

async fn insert_events(
    txn: &impl ConnectionTrait,
    models: Vec<webhook_event::ActiveModel>,
) -> ServiceResult<()> {
    if !models.is_empty() {
        webhook_event::Entity::insert_many(models)
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

/// Takes `count` numbers from the account's counter row: the first of them. The row's
/// lock, held to the commit, orders the account's recording transactions by commit.
async fn take_numbers(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    count: usize,
) -> ServiceResult<i64> {
    let count = count as i64;
    let updated = webhook_event_counter::Entity::update_many()
        .col_expr(
            webhook_event_counter::Column::LastSeq,
            Expr::col(webhook_event_counter::Column::LastSeq).add(count),
        )
        .filter(webhook_event_counter::Column::AccountId.eq(account_id))
        .exec_with_returning(txn)
        .await?;
    let Some(counter) = updated.into_iter().next() else {
        webhook_event_counter::Entity::insert(webhook_event_counter::ActiveModel {
            account_id: Set(account_id),
            last_seq: Set(count),
        })
        .exec_without_returning(txn)
        .await?;
        return Ok(1);
    };
    Ok(counter.last_seq - count + 1)
}

/// When a payload's date was: Unix seconds × 10^9 (section 7).
pub fn event_date(at: DateTime<Utc>) -> i64 {
    at.timestamp().saturating_mul(1_000_000_000)
}
