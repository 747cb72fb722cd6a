//! Events written in the transaction of the change that causes them (section 9 of
//! `docs/spec/webhooks.md`): a service says what happened with [`Write::emit`]; the write
//! helper hands the events to [`record`] just before it commits, which writes one row per
//! matching subscription ([`known`]), numbered from the account's counter row. A refused write records
//! nothing; a committed one has its events stored.
//!
//! [`Write::emit`]: crate::service::Write::emit

use std::{collections::BTreeSet, sync::LazyLock};

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set,
    ColumnTrait as _, ConnectionTrait, DatabaseBackend, EntityTrait as _, QueryFilter as _,
    Statement, Value,
    prelude::{Expr, Uuid},
    sea_query::ExprTrait as _,
};
use serde::Serialize;
use tokio::sync::Notify;

use super::known::{self, Filters, Subscription};
use crate::{
    db::pg_array::ArrayText,
    domain::webhook::EventType,
    entities::{webhook_event, webhook_event_counter, webhook_subscriber},
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

/// One event row to write: what a subscription receives of an event.
struct Row {
    subscriber_id: Uuid,
    event_type: &'static str,
    payload: String,
}

/// The rows `events` make for `subscriptions`, in event order, then subscriber order.
fn rows_of(events: &[Event], subscriptions: &[Subscription]) -> Vec<Row> {
    let mut rows = Vec::new();
    for event in events {
        let event_type = event.event_type().as_str();
        for subscription in subscriptions {
            if subscription.event_type != event_type {
                continue;
            }
            if let Some(payload) = event.payload_for(&subscription.filters) {
                rows.push(Row {
                    subscriber_id: subscription.subscriber_id,
                    event_type,
                    payload,
                });
            }
        }
    }
    rows
}

/// Writes `events` for every subscription of the account that exists and matches now, in
/// the caller's transaction (which holds the account's write lock); how many rows it wrote.
///
/// With the account's subscriptions kept in memory ([`known`]) at the revision the counter
/// row still holds, a write with events for a subscriber is the counter update, the event
/// rows and the raising of their subscribers' `has_events` flags (one statement on
/// PostgreSQL, one string of statements on SQLite), and one without is one read of the
/// revision. A flag already raised is not written again: a subscriber's row is written by
/// the first event of a backlog only, never counted per event.
pub async fn record(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    events: Vec<Event>,
) -> ServiceResult<usize> {
    if events.is_empty() {
        return Ok(0);
    }
    let events: Vec<Event> = events.into_iter().flat_map(Event::split).collect();
    let revision = match known::cached(account_id) {
        Some(kept) => {
            let rows = rows_of(&events, &kept.subscriptions);
            if rows.is_empty() {
                let stored = known::stored_revision(txn, account_id).await?;
                if stored == Some(kept.revision) {
                    return Ok(0);
                }
                stored
            } else {
                match write_if_current(txn, account_id, kept.revision, rows).await? {
                    Current::Written(count) => return Ok(count),
                    Current::Stale(stored) => stored,
                }
            }
        }
        None => known::stored_revision(txn, account_id).await?,
    };
    // No counter row: the account has never had a subscription.
    let Some(revision) = revision else {
        return Ok(0);
    };
    let subscriptions = known::load(txn, account_id, revision).await?.subscriptions;
    let rows = rows_of(&events, &subscriptions);
    if rows.is_empty() {
        return Ok(0);
    }
    let Some(first) = take_numbers(txn, account_id, rows.len()).await? else {
        return Ok(0);
    };
    write_rows(txn, account_id, first, rows).await
}

/// What a write with a kept copy found.
enum Current {
    Written(usize),
    /// The copy is stale: the revision stored (`None`: no counter row); nothing was written.
    Stale(Option<i64>),
}

/// Writes `rows` if the account's subscriptions are still at `revision`, taking their
/// numbers from the counter row in the same statement that checks it.
async fn write_if_current(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    revision: i64,
    rows: Vec<Row>,
) -> ServiceResult<Current> {
    let count = rows.len() as i64;
    if txn.get_database_backend() == DatabaseBackend::Postgres {
        return write_if_current_postgres(txn, account_id, revision, rows).await;
    }
    if rows.len() <= SQLITE_ONE_TRIP_ROWS {
        return write_if_current_sqlite(txn, account_id, revision, rows).await;
    }
    // The counter moves only when the revision matches; the row is locked either way
    // (SQLite's writer already holds the database).
    let counted = txn
        .query_one_raw(Statement::from_sql_and_values(
            DatabaseBackend::Sqlite,
            r#"UPDATE "webhook_event_counters"
               SET "last_seq" = "last_seq" + CASE WHEN "subscriptions_revision" = ? THEN ? ELSE 0 END
               WHERE "account_id" = ?
               RETURNING "last_seq", "subscriptions_revision""#,
            [revision.into(), count.into(), account_id.into()],
        ))
        .await?;
    let Some(counted) = counted else {
        return Ok(Current::Stale(None));
    };
    let last_seq: i64 = counted.try_get("", "last_seq")?;
    let stored: i64 = counted.try_get("", "subscriptions_revision")?;
    if stored != revision {
        return Ok(Current::Stale(Some(stored)));
    }
    Ok(Current::Written(
        write_rows(txn, account_id, last_seq - count + 1, rows).await?,
    ))
}

/// Most rows [`write_if_current_sqlite`] writes (3 parameters each, far below SQLite's
/// limit); a write with more events takes the statement-by-statement way below.
const SQLITE_ONE_TRIP_ROWS: usize = 100;

/// The same on SQLite as one string of statements, which sqlx runs in one trip to the
/// connection's thread (three trips before): the counter update, the event rows numbered from
/// it and the subscribers' flags, each but the first guarded by the revision, then the
/// counter read back. SQLite's one writer holds the database from the write's first
/// statement, so a flag it reads raised stays raised until it commits. Parameters are
/// numbered (`?1` the account, `?2` the revision, `?3` the count, `?4` the time), so every
/// statement can name the shared ones.
async fn write_if_current_sqlite(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    revision: i64,
    rows: Vec<Row>,
) -> ServiceResult<Current> {
    use std::fmt::Write as _;
    const CURRENT: &str = r#"EXISTS (SELECT 1 FROM "webhook_event_counters" WHERE "account_id" = ?1 AND "subscriptions_revision" = ?2)"#;
    let count = rows.len();
    let subscribers = subscribers_of(&rows);
    let mut values =
        recording_parameters(account_id, revision, count, 3 * count + subscribers.len());
    let mut sql = String::from(
        r#"UPDATE "webhook_event_counters"
           SET "last_seq" = "last_seq" + CASE WHEN "subscriptions_revision" = ?2 THEN ?3 ELSE 0 END
           WHERE "account_id" = ?1;
           INSERT INTO "webhook_events"
               ("subscriber_id", "seq", "account_id", "event_type", "payload", "created_at")
           SELECT "v"."column1", "c"."last_seq" - ?3 + "v"."column4", ?1,
                  "v"."column2", "v"."column3", ?4
           FROM "webhook_event_counters" AS "c", (VALUES "#,
    );
    for (n, row) in rows.iter().enumerate() {
        let at = values.len();
        let comma = if n == 0 { "" } else { ", " };
        // Writing to a String cannot fail.
        let _ = write!(
            sql,
            "{comma}(?{}, ?{}, ?{}, {})",
            at + 1,
            at + 2,
            at + 3,
            n + 1
        );
        values.extend([
            row.subscriber_id.into(),
            row.event_type.into(),
            row.payload.as_str().into(),
        ]);
    }
    sql.push_str(r#") AS "v" WHERE "c"."account_id" = ?1 AND "c"."subscriptions_revision" = ?2;"#);
    sql.push_str(r#"UPDATE "webhook_subscribers" SET "has_events" = TRUE WHERE "id" IN ("#);
    for (i, subscriber_id) in subscribers.into_iter().enumerate() {
        let comma = if i == 0 { "" } else { ", " };
        let _ = write!(sql, "{comma}?{}", values.len() + 1);
        values.push(subscriber_id.into());
    }
    let _ = write!(sql, r#") AND NOT "has_events" AND {CURRENT};"#);
    sql.push_str(
        r#"SELECT "last_seq", "subscriptions_revision" FROM "webhook_event_counters" WHERE "account_id" = ?1"#,
    );
    let statement = Statement::from_sql_and_values(DatabaseBackend::Sqlite, sql, values);
    written_if_current(txn, statement, revision, &rows).await
}

/// The same on PostgreSQL as one statement: the counter update, the event rows numbered
/// from it (none when the revision moved) and the subscribers' flags.
///
/// Every statement of PostgreSQL reads the snapshot it started with, and the counter update
/// may first wait for a dispatcher that lowers a flag of the account (it holds the counter
/// row while it looks for events and lowers, `webhooks::dispatch`); a flag this statement
/// sees raised may then be lowered by the time it commits its event. The dispatcher counts
/// its lowerings on the counter row, so a count that moved between this statement's snapshot
/// (`o`) and the row it updated (`c`) makes it raise its flags whatever it saw; the update
/// then reads the row as that dispatcher left it.
async fn write_if_current_postgres(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    revision: i64,
    rows: Vec<Row>,
) -> ServiceResult<Current> {
    const SQL: &str = r#"
        WITH "o" AS (
            SELECT "flags_lowered" FROM "webhook_event_counters" WHERE "account_id" = $1
        ), "c" AS (
            UPDATE "webhook_event_counters"
            SET "last_seq" = "last_seq" + CASE WHEN "subscriptions_revision" = $2 THEN $3 ELSE 0 END
            WHERE "account_id" = $1
            RETURNING "last_seq", "subscriptions_revision", "flags_lowered"
        ), "e" AS (
            INSERT INTO "webhook_events"
                ("subscriber_id", "seq", "account_id", "event_type", "payload", "created_at")
            SELECT "v"."subscriber_id", "c"."last_seq" - $3 + "v"."n", $1,
                   "v"."event_type", "v"."payload", $4
            FROM "c", UNNEST($5::text::uuid[], $6::text::text[], $7::text::text[])
                 WITH ORDINALITY AS "v"("subscriber_id", "event_type", "payload", "n")
            WHERE "c"."subscriptions_revision" = $2
            RETURNING "subscriber_id"
        ), "p" AS (
            UPDATE "webhook_subscribers" AS "s"
            SET "has_events" = TRUE
            FROM "c", "o"
            WHERE "s"."id" IN (SELECT "subscriber_id" FROM "e")
              AND (NOT "s"."has_events" OR "c"."flags_lowered" <> "o"."flags_lowered")
        )
        SELECT "last_seq", "subscriptions_revision" FROM "c""#;
    let count = rows.len();
    let mut arrays: [ArrayText; 3] =
        std::array::from_fn(|column| ArrayText::with_capacity(count, [36, 32, 128][column]));
    for row in &rows {
        arrays[0].push(&row.subscriber_id.into())?;
        arrays[1].push(&row.event_type.into())?;
        arrays[2].push(&row.payload.as_str().into())?;
    }
    let mut values = recording_parameters(account_id, revision, count, 3);
    values.extend(arrays.map(|array| Value::from(array.finish())));
    let statement = Statement::from_sql_and_values(DatabaseBackend::Postgres, SQL, values);
    written_if_current(txn, statement, revision, &rows).await
}

/// The first four parameters of both recording statements, in the order they number them
/// (the account, the kept revision, the number of rows, the recording time), with room for
/// `more`.
fn recording_parameters(account_id: Uuid, revision: i64, count: usize, more: usize) -> Vec<Value> {
    let mut values = Vec::with_capacity(4 + more);
    values.extend([
        account_id.into(),
        revision.into(),
        (count as i64).into(),
        Utc::now().into(),
    ]);
    values
}

/// Runs a recording `statement` that writes `rows` only while the account's subscriptions
/// are at `revision` and answers with the counter row: whether it wrote them.
async fn written_if_current(
    txn: &impl ConnectionTrait,
    statement: Statement,
    revision: i64,
    rows: &[Row],
) -> ServiceResult<Current> {
    let Some(counted) = txn.query_one_raw(statement).await? else {
        return Ok(Current::Stale(None));
    };
    let stored: i64 = counted.try_get("", "subscriptions_revision")?;
    if stored != revision {
        return Ok(Current::Stale(Some(stored)));
    }
    for row in rows {
        crate::metrics::webhook_event_recorded(row.event_type);
    }
    Ok(Current::Written(rows.len()))
}

/// Inserts `rows` numbered from `first` and raises their subscribers' flags. The counter row
/// is this transaction's from before, so no dispatcher lowers a flag of the account until it
/// commits, and this statement's snapshot (PostgreSQL's too) holds every lowering before.
async fn write_rows(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    first: i64,
    rows: Vec<Row>,
) -> ServiceResult<usize> {
    let now = Utc::now();
    let subscribers = subscribers_of(&rows);
    let count = rows.len();
    let mut models = Vec::with_capacity(rows.len().min(500));
    for (offset, row) in rows.into_iter().enumerate() {
        crate::metrics::webhook_event_recorded(row.event_type);
        models.push(webhook_event::ActiveModel {
            subscriber_id: Set(row.subscriber_id),
            seq: Set(first + offset as i64),
            account_id: Set(account_id),
            event_type: Set(row.event_type.to_owned()),
            payload: Set(row.payload),
            created_at: Set(now),
        });
        if models.len() == 500 {
            insert_events(txn, std::mem::take(&mut models)).await?;
        }
    }
    insert_events(txn, models).await?;
    webhook_subscriber::Entity::update_many()
        .col_expr(webhook_subscriber::Column::HasEvents, Expr::value(true))
        .filter(webhook_subscriber::Column::Id.is_in(subscribers))
        .filter(webhook_subscriber::Column::HasEvents.eq(false))
        .exec(txn)
        .await?;
    Ok(count)
}

/// The subscribers `rows` are for, each once.
fn subscribers_of(rows: &[Row]) -> BTreeSet<Uuid> {
    rows.iter().map(|row| row.subscriber_id).collect()
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

/// Takes `count` numbers from the account's counter row: the first of them, or `None` when
/// the row is gone (its account with it). The row's lock, held to the commit, orders the
/// account's recording transactions by commit.
async fn take_numbers(
    txn: &impl ConnectionTrait,
    account_id: Uuid,
    count: usize,
) -> ServiceResult<Option<i64>> {
    let count = count as i64;
    let updated = webhook_event_counter::Entity::update_many()
        .col_expr(
            webhook_event_counter::Column::LastSeq,
            Expr::col(webhook_event_counter::Column::LastSeq).add(count),
        )
        .filter(webhook_event_counter::Column::AccountId.eq(account_id))
        .exec_with_returning(txn)
        .await?;
    Ok(updated
        .into_iter()
        .next()
        .map(|counter| counter.last_seq - count + 1))
}

/// When a payload's date was: Unix seconds × 10^9 (section 7).
pub fn event_date(at: DateTime<Utc>) -> i64 {
    at.timestamp().saturating_mul(1_000_000_000)
}
