//! A dispatcher's poll finds the subscribers with work due on indexes: with 20,000 subscribers
//! in the database, a handful of them with events or a confirmation due, the reads a poll runs
//! (`lms_core::webhooks::dispatch::poll_reads`) read neither `webhook_subscribers` whole nor
//! sort it, on either backend, and a real dispatcher still finds and works off every due
//! one. A write recording an event for one of them reaches the subscriptions, the counter
//! row and the subscriber by key too, and the list's count of stored events, a
//! dispatcher's lowering of a flag and a delivery's reading and deleting of its events use
//! the events' key, among 50,000 stored events.

use std::collections::BTreeSet;

use chrono::{TimeDelta, Utc};
use lms_core::entities::{user, webhook_event, webhook_subscriber, webhook_subscription};
use lms_tests::{Backend, TestStack, query_plan, world::acme};
use sea_orm::{
    ColumnTrait as _, ConnectionTrait as _, EntityTrait as _, QueryFilter as _,
    TransactionTrait as _,
};
use uuid::Uuid;

const SUBSCRIBERS: usize = 20_000;

/// Subscribers 2 to 51 each hold this many stored events (not flagged, so no dispatcher
/// takes them up): enough that PostgreSQL reads `webhook_events` by its indexes.
const STORED_EVENTS: usize = 1_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_a_poll_reads_only_the_subscribers_with_work_due() {
    a_poll_reads_only_the_subscribers_with_work_due(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_poll_reads_only_the_subscribers_with_work_due() {
    a_poll_reads_only_the_subscribers_with_work_due(Backend::Postgres).await;
}

/// The recorder hears every statement of this process, so the two backends' scenarios run one
/// after the other, not at once.
static ONE_STACK_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The `count` distinct `statements` read `table` on an index, never whole.
async fn assert_indexed(stack: &TestStack, statements: Vec<String>, count: usize, table: &str) {
    let statements: BTreeSet<String> = statements.into_iter().collect();
    assert_eq!(statements.len(), count, "{statements:#?}");
    let bad = query_plan::check_tables(stack.db(), &statements, &[table]).await;
    assert!(bad.is_empty(), "{}", query_plan::describe(&bad));
}

async fn a_poll_reads_only_the_subscribers_with_work_due(backend: Backend) {
    let _alone = ONE_STACK_AT_A_TIME.lock().await;
    let Some(stack) = TestStack::start(backend).await else {
        return;
    };
    let account_id = user::Entity::find_by_id(Uuid::parse_str(acme::OWNER).expect("uuid"))
        .one(stack.db())
        .await
        .expect("read")
        .expect("the owner")
        .account_id;
    let now = Utc::now();
    let ids: Vec<Uuid> = (0..SUBSCRIBERS).map(|_| Uuid::new_v4()).collect();
    // Idle subscribers, except every 4,000th, which has events due, and every 5,000th (from
    // the 2,500th), which has a confirmation due.
    let subscriber = |n: usize| webhook_subscriber::ActiveModel {
        id: sea_orm::Set(ids[n]),
        account_id: sea_orm::Set(account_id),
        name: sea_orm::Set(format!("subscriber {n}")),
        callback_url: sea_orm::Set("https://hooks.example.com/lms".into()),
        secret: sea_orm::Set(None),
        // Subscriber 2 is paused: its flag, raised below, stays out of every poll.
        active: sea_orm::Set(n != 2),
        confirmed: sea_orm::Set(n % 5_000 != 2_500),
        code: sea_orm::Set(None),
        code_expires_at: sea_orm::Set(None),
        confirmation_delivery_id: sea_orm::Set(None),
        confirmation_attempts: sea_orm::Set(0),
        confirmation_retry_at: sea_orm::Set(
            (n % 5_000 == 2_500).then(|| now - TimeDelta::hours(1)),
        ),
        has_events: sea_orm::Set(n.is_multiple_of(4_000)),
        events_retry_at: sea_orm::Set(None),
        failures: sea_orm::Set(0),
        failing_since: sea_orm::Set(None),
        claim_owner: sea_orm::Set(None),
        claim_expires_at: sea_orm::Set(None),
        last_attempt_at: sea_orm::Set(None),
        last_attempt_result: sea_orm::Set(None),
        last_error: sea_orm::Set(None),
        created_at: sea_orm::Set(now),
        updated_at: sea_orm::Set(now),
    };
    for chunk in (0..SUBSCRIBERS).collect::<Vec<_>>().chunks(500) {
        webhook_subscriber::Entity::insert_many(chunk.iter().map(|n| subscriber(*n)))
            .exec(stack.db())
            .await
            .expect("subscribers");
    }
    let stored = (2..52).flat_map(|n| (1..=STORED_EVENTS).map(move |seq| (n, seq)));
    let event = |(n, seq): (usize, usize)| webhook_event::ActiveModel {
        account_id: sea_orm::Set(account_id),
        subscriber_id: sea_orm::Set(ids[n]),
        seq: sea_orm::Set(seq as i64),
        event_type: sea_orm::Set("USER_REGISTERED".into()),
        payload: sea_orm::Set("{}".into()),
        created_at: sea_orm::Set(now),
    };
    for chunk in stored.collect::<Vec<_>>().chunks(500) {
        webhook_event::Entity::insert_many(chunk.iter().copied().map(event))
            .exec(stack.db())
            .await
            .expect("events");
    }
    stack
        .db()
        .execute_unprepared("ANALYZE")
        .await
        .expect("analysed");

    let db_backend = stack.db().get_database_backend();
    let polls = lms_core::webhooks::dispatch::poll_reads(db_backend);
    assert_indexed(&stack, polls, 3, "webhook_subscribers").await;
    // A delivery's turn reads its subscriber's oldest events and deletes them once
    // acknowledged by their key, among the 50,000 stored.
    let delivering = lms_core::webhooks::dispatch::delivery_statements(db_backend);
    assert_indexed(&stack, delivering, 2, "webhook_events").await;

    // The world's core polls too, through the same reads: it claims every due subscriber
    // and works it off (the flags name no stored events, so they are lowered; the
    // confirmations hold no code, so they are dropped).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let waiting = webhook_subscriber::Entity::find()
            .filter(
                sea_orm::Condition::any()
                    .add(webhook_subscriber::Column::HasEvents.eq(true))
                    .add(webhook_subscriber::Column::ConfirmationRetryAt.is_not_null()),
            )
            .all(stack.db())
            .await
            .expect("read");
        if waiting.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} subscribers with work due were not claimed within a minute",
            waiting.len()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }

    // A write recording an event for one of the 20,000: the subscriptions read when not kept,
    // the counter row, the event row and the subscriber's flag, each reached by key.
    let first = webhook_subscriber::Entity::find()
        .filter(webhook_subscriber::Column::Name.eq("subscriber 1"))
        .one(stack.db())
        .await
        .expect("read")
        .expect("subscriber 1");
    webhook_subscription::Entity::insert(webhook_subscription::ActiveModel {
        id: sea_orm::Set(Uuid::new_v4()),
        subscriber_id: sea_orm::Set(first.id),
        account_id: sea_orm::Set(account_id),
        event_type: sea_orm::Set("USER_REGISTERED".into()),
        user_ids: sea_orm::Set("[]".into()),
        course_ids: sea_orm::Set("[]".into()),
        course_item_ids: sea_orm::Set("[]".into()),
        created_at: sea_orm::Set(now),
    })
    .exec(stack.db())
    .await
    .expect("subscription");
    lms_core::service::webhooks::known::changed(stack.db(), account_id)
        .await
        .expect("revision");
    query_plan::install_recorder();
    let recorded = query_plan::record(async {
        // The first loads the subscriptions; the second finds them kept.
        for login in ["first@acme.example.com", "second@acme.example.com"] {
            let body = serde_json::json!({"departmentId": acme::SALES, "fields": {"login": login}});
            let reply = lms_tests::post_json(&stack, "/user", lms_tests::world::OWNER, body).await;
            assert_eq!(reply.status, 201, "{}", reply.body);
        }
        // The list counts each subscriber's stored events.
        let reply =
            lms_tests::get_json(&stack, "/webhook/subscribers", lms_tests::world::OWNER).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        // A dispatcher lowering the flag of a subscriber whose events are stored: it locks
        // the counter row and looks for an event, and leaves the flag raised.
        webhook_subscriber::Entity::update_many()
            .col_expr(
                webhook_subscriber::Column::HasEvents,
                sea_orm::sea_query::Expr::value(true),
            )
            .filter(webhook_subscriber::Column::Id.eq(ids[2]))
            .exec(stack.db())
            .await
            .expect("flag raised");
        let txn = stack.db().begin().await.expect("begin");
        let lowered = lms_core::webhooks::dispatch::lower_flag(&txn, account_id, ids[2])
            .await
            .expect("lowering");
        txn.commit().await.expect("commit");
        assert!(!lowered, "subscriber 2 has stored events");
        let second = webhook_subscriber::Entity::find_by_id(ids[2])
            .one(stack.db())
            .await
            .expect("read")
            .expect("subscriber 2");
        assert!(second.has_events, "the flag of stored events stays raised");
    })
    .await;
    let recording: BTreeSet<String> = recorded
        .into_iter()
        .filter(|s| {
            s.contains("webhook_event_counters")
                || s.contains("webhook_subscriptions")
                || (s.starts_with(r#"UPDATE "webhook_subscribers""#)
                    && s.contains(r#""has_events""#))
                || (s.contains(r#"FROM "webhook_events""#) && s.contains("COUNT(*)"))
        })
        .collect();
    let mut expected = vec![
        r#"CASE WHEN "subscriptions_revision""#,
        "COUNT(*)",
        "NOT EXISTS",
    ];
    if backend == Backend::Postgres {
        expected.push("FOR UPDATE");
    }
    for expected in expected {
        assert!(
            recording.iter().any(|s| s.contains(expected)),
            "{expected}: {recording:#?}"
        );
    }
    // `webhook_event_counters` and `webhook_subscriptions` hold a row or two here, which
    // PostgreSQL's cost model rightly reads whole; SQLite's plans do not weigh table sizes,
    // so there the subscriptions are checked too.
    let tables: &[&str] = match backend {
        Backend::Sqlite => &[
            "webhook_subscribers",
            "webhook_subscriptions",
            "webhook_events",
        ],
        Backend::Postgres => &["webhook_subscribers", "webhook_events"],
    };
    let bad = query_plan::check_tables(stack.db(), &recording, tables).await;
    assert!(bad.is_empty(), "{}", query_plan::describe(&bad));
    stack.stop().await;
}
