//! The `has_events` flag by which dispatchers find subscribers with events (decisions,
//! "Writes raise a flag; nobody counts"), on both backends, with the real gateway and core:
//! a write whose event waits for a dispatcher lowering the flag still leaves it raised, and
//! the event is delivered; a dispatcher that finds no events lowers it; `pendingEvents`
//! counts the stored events.

use std::time::Duration;

use lms_core::{
    entities::{webhook_event, webhook_subscriber},
    webhooks::dispatch::lower_flag,
};
use lms_tests::{
    Backend, TestStack, post_json,
    testkit::on_both_backends,
    webhooks::{LoopbackStack, Receiver, crm_told_of_new_users, info, switch},
    world::{self, acme},
};
use sea_orm::{
    ColumnTrait as _, ConnectionTrait as _, EntityTrait as _, PaginatorTrait as _,
    QueryFilter as _, TransactionTrait as _,
};
use serde_json::json;

on_both_backends!(LoopbackStack =>
    a_write_waiting_for_a_lowering_raises_the_flag_again,
    a_drained_subscriber_has_its_flag_lowered,
);

async fn new_user(stack: &TestStack, login: &str) {
    let body = json!({"departmentId": acme::SALES, "fields": {"login": login}});
    let reply = post_json(stack, "/user", world::OWNER, body).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
}

/// A receiver and `crm`, confirmed, subscribed to `USER_REGISTERED` at its `/hook`.
async fn subscribed_crm(stack: &TestStack) -> Receiver {
    let receiver = Receiver::start().await;
    crm_told_of_new_users(stack, &receiver, None).await;
    receiver
}

async fn subscriber(stack: &TestStack, name: &str) -> webhook_subscriber::Model {
    webhook_subscriber::Entity::find()
        .filter(webhook_subscriber::Column::Name.eq(name))
        .one(stack.db())
        .await
        .expect("read")
        .expect("the subscriber")
}

async fn stored_events(stack: &TestStack, subscriber_id: uuid::Uuid) -> u64 {
    webhook_event::Entity::find()
        .filter(webhook_event::Column::SubscriberId.eq(subscriber_id))
        .count(stack.db())
        .await
        .expect("count")
}

/// A dispatcher lowers the flag of a subscriber whose events are gone while a write records
/// a new event for it: the write's recording waits for the lowering's commit, and on
/// PostgreSQL its statement began with the flag still raised in its snapshot. The flag must
/// end raised, or the event would wait unseen by every poll.
async fn a_write_waiting_for_a_lowering_raises_the_flag_again(stack: &LoopbackStack) {
    let receiver = subscribed_crm(stack).await;
    // Disabled, so this core's dispatcher leaves the subscriber to the test; a first write
    // raises the flag and leaves the account's subscriptions kept in memory, so the next
    // write takes the one-statement way.
    switch(stack, "disable", "crm").await;
    new_user(stack, "first@acme.example.com").await;
    let crm = subscriber(stack, "crm").await;
    assert!(crm.has_events);
    // Its events delivered meanwhile, as far as the lowering can tell.
    webhook_event::Entity::delete_many()
        .filter(webhook_event::Column::SubscriberId.eq(crm.id))
        .exec(stack.db())
        .await
        .expect("delete");

    let lowering = stack.db().begin().await.expect("begin");
    assert!(
        lower_flag(&lowering, crm.account_id, crm.id)
            .await
            .expect("lower")
    );
    let release = async {
        wait_for_the_writer(stack).await;
        lowering.commit().await.expect("commit");
    };
    tokio::join!(new_user(stack, "second@acme.example.com"), release);

    let crm = subscriber(stack, "crm").await;
    assert_eq!(stored_events(stack, crm.id).await, 1);
    assert!(crm.has_events, "the event waits with its flag lowered");
    assert_eq!(info(stack, world::OWNER, "crm").await["pendingEvents"], 1);
    switch(stack, "enable", "crm").await;
    receiver
        .wait_until(Duration::from_secs(5), "the waiting write's event", |_| {
            !receiver.delivered_payloads("hook").is_empty()
        })
        .await;
    assert_eq!(
        receiver.delivered_payloads("hook")[0]["login"],
        "second@acme.example.com"
    );
}

/// Until the write is blocked behind the lowering: on PostgreSQL a session waits for a lock
/// (the counter row); SQLite's writer waits in its busy handler, which shows nowhere, so a
/// moment is given.
async fn wait_for_the_writer(stack: &TestStack) {
    if stack.backend() != Backend::Postgres {
        tokio::time::sleep(Duration::from_millis(500)).await;
        return;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let waiting = stack
            .db()
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DbBackend::Postgres,
                "SELECT COUNT(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
            ))
            .await
            .expect("read")
            .and_then(|row| row.try_get_by_index::<i64>(0).ok())
            .unwrap_or(0);
        if waiting > 0 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the write never waited for the lowering"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Delivered, the subscriber's events are gone and its dispatcher lowers the flag; a later
/// event raises it and is delivered.
async fn a_drained_subscriber_has_its_flag_lowered(stack: &LoopbackStack) {
    let receiver = subscribed_crm(stack).await;
    for (n, login) in ["one@acme.example.com", "two@acme.example.com"]
        .into_iter()
        .enumerate()
    {
        new_user(stack, login).await;
        receiver
            .wait_until(Duration::from_secs(5), login, |_| {
                receiver.delivered_payloads("hook").len() > n
            })
            .await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while subscriber(stack, "crm").await.has_events {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the flag stayed raised after {login} was delivered"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(info(stack, world::OWNER, "crm").await["pendingEvents"], 0);
    }
}
