//! Webhooks (`docs/spec/webhooks.md`) end to end: the real gateway and core, a receiver on
//! 127.0.0.1 started by the test, SQLite and PostgreSQL. The subscriber API and its
//! confirmation flow, signed deliveries, events recorded only by committed writes, order
//! and completeness, retries, the give-up and the backlog after re-confirmation, retention, tenant
//! isolation, the address rules and redirects.

use std::time::Duration;

use hmac::{Hmac, Mac as _};
use lms_core::entities::{
    webhook_delivery, webhook_event, webhook_event_counter, webhook_subscriber,
    webhook_subscription,
};
use lms_proto::v1::{
    RecordResultsRequest, ResultRecord, directory_service_client::DirectoryServiceClient,
};
use lms_tests::{
    get_json, json_of, post_json,
    testkit::on_both_backends,
    webhooks::{
        LoopbackStack, MAPPED_HOST, Receiver, StrictStack, assert_ok, call, confirm,
        crm_told_of_new_users, info, subscribe, switch,
    },
    world::{self, acme, globex},
};
use sea_orm::{
    ActiveModelTrait as _, ActiveValue::Set, ColumnTrait as _, EntityTrait as _,
    PaginatorTrait as _, QueryFilter as _, prelude::Expr,
};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

on_both_backends!(LoopbackStack =>
    the_confirmation_flow_then_a_new_user_arrives_signed,
    a_refused_write_records_and_sends_nothing,
    a_hundred_users_arrive_complete_and_in_order,
    a_receiver_down_for_a_while_then_gets_every_event_once_in_order,
    after_the_give_up_the_backlog_follows_the_new_confirmation,
    two_accounts_never_see_each_others_events,
    redirects_are_not_followed,
    only_owners_and_administrators_manage_subscribers_and_bad_input_is_named,
    disabled_subscribers_keep_their_events_until_enabled,
    enrollments_are_announced_to_matching_filters_only,
    a_recorded_completion_is_announced_after_its_status_change,
    subscriptions_changed_by_another_core_apply_to_the_next_write,
    events_past_the_retention_are_discarded_with_their_delivery,
);

on_both_backends!(StrictStack =>
    private_and_loopback_callbacks_are_refused_without_the_setting,
);

const SECRET: &str = "s3cret";

async fn new_user(stack: &lms_tests::TestStack, login: &str) -> String {
    let body = json!({
        "departmentId": acme::SALES,
        "password": "a brand new password",
        "fields": {"login": login, "first_name": "New"},
    });
    let reply = post_json(stack, "/user", world::OWNER, body).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    serde_json::from_str(&reply.body).expect("the new id")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks both signatures over the body as received, as a receiver should.
fn assert_signed(received: &lms_tests::webhooks::Received, secret: &str) {
    let mut digest = Sha256::new();
    digest.update(&received.body);
    digest.update(secret.as_bytes());
    assert_eq!(
        received.signature.as_deref(),
        Some(hex(&digest.finalize()).as_str()),
        "X-Hub-Signature"
    );
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(&received.body);
    let expected = mac.finalize().into_bytes();
    let given = received
        .signature_256
        .as_deref()
        .and_then(|s| s.strip_prefix("sha256="))
        .expect("X-Hub-Signature-256 with its prefix");
    assert_eq!(given, hex(&expected), "X-Hub-Signature-256");
}

/// A JSON error answer (the calls here ask for JSON) with `status`, whose message mentions
/// `needle`.
#[track_caller]
fn assert_refused(reply: &lms_tests::Reply, status: u16, needle: &str) {
    assert_eq!(reply.status, status, "{}", reply.body);
    let body: Value = serde_json::from_str(&reply.body).expect("a JSON error");
    assert_eq!(body["code"], status);
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(needle),
        "{message:?} should mention {needle:?}"
    );
}

/// Subscriber info once `done` holds for it (checked every 50 ms, at most 10 s).
async fn info_once(
    stack: &lms_tests::TestStack,
    name: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let now = info(stack, world::OWNER, name).await;
        if done(&now) {
            return now;
        }
        assert!(tokio::time::Instant::now() < deadline, "{now}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn logins(payloads: &[Value]) -> Vec<String> {
    payloads
        .iter()
        .map(|p| p["login"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn the_confirmation_flow_then_a_new_user_arrives_signed(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    // Registered: ACTIVE, UNCONFIRMED, nothing sent.
    assert_ok(
        &call(
            stack,
            world::OWNER,
            "register",
            json!({"request": {"subscriberName": "crm", "callbackUrl": receiver.url("hook"), "Secret": SECRET}}),
        )
        .await,
    );
    let registered = info(stack, world::OWNER, "crm").await;
    assert_eq!(registered["subscriberStatus"], "ACTIVE");
    assert_eq!(registered["confirmationStatus"], "UNCONFIRMED");
    assert_eq!(registered["notificationProcessStatus"], "INACTIVE");
    assert_eq!(registered["hasSecret"], 1);
    assert_eq!(registered["pendingEvents"], 0);
    assert!(registered.get("lastAttemptDate").is_none());
    assert!(!registered.to_string().contains(SECRET), "never the secret");

    // The XML register of iSpring, subscribe before the confirmation: events recorded
    // before it follow it.
    assert_ok(
        &stack
            .post_xml(
                "/webhook/subscribe",
                world::OWNER,
                "<request><subscriberName>crm</subscriberName><subscription>\
                 <subscriptionType>USER_REGISTERED</subscriptionType></subscription></request>",
            )
            .await,
    );
    let early = new_user(stack, "early@acme.example.com").await;
    assert!(
        receiver.received().is_empty(),
        "nothing before confirmation"
    );

    confirm(stack, world::OWNER, &receiver, "crm", "hook").await;
    let confirmation = receiver.received_at("hook")[0].clone();
    assert_eq!(confirmation.event_type, "CONFIRMATION");
    assert_signed(&confirmation, SECRET);
    let body = String::from_utf8(confirmation.body.to_vec()).unwrap();
    assert!(
        body.starts_with(r#"{"type":"CONFIRMATION","payloads":["{\"code\":\""#),
        "{body}"
    );

    let started = std::time::Instant::now();
    let id = new_user(stack, "jdoe@acme.example.com").await;
    let received = receiver
        .wait_until(Duration::from_secs(5), "the new user within 5 s", |all| {
            all.iter()
                .filter(|r| r.event_type == "USER_REGISTERED")
                .flat_map(|r| r.payloads())
                .any(|p| p["userId"] == id.as_str())
        })
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let events: Vec<_> = received
        .iter()
        .filter(|r| r.event_type == "USER_REGISTERED")
        .collect();
    for event in &events {
        assert_signed(event, SECRET);
        assert_eq!(event.attempt, 1);
        assert_eq!(event.json()["type"], "USER_REGISTERED");
    }
    let payloads = receiver.delivered_payloads("hook");
    assert_eq!(
        logins(&payloads),
        ["early@acme.example.com", "jdoe@acme.example.com"]
    );
    assert_eq!(payloads[0]["userId"], early.as_str());
    // Exactly the keys of the specification, in its order.
    let raw = String::from_utf8(events.last().unwrap().body.to_vec()).unwrap();
    assert!(
        raw.contains(&format!(
            r#"{{"userId":"{id}","departmentId":"{}","login":"jdoe@acme.example.com","email":"jdoe@acme.example.com"}}"#,
            acme::SALES
        )),
        "{raw}"
    );

    // The answers of section 5, JSON and XML.
    let list = json_of(
        &get_json(
            stack,
            "/webhook/subscription/list?subscriberName=crm",
            world::OWNER,
        )
        .await,
    );
    assert_eq!(
        list,
        json!([{"subscriptionType": "USER_REGISTERED", "params": []}])
    );
    let xml = stack
        .get(
            "/api/v2/webhook/subscriber/info/?subscriberName=crm",
            world::OWNER,
        )
        .await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert!(
        xml.body.contains("<response><subscriberStatus>ACTIVE</subscriberStatus><confirmationStatus>CONFIRMED</confirmationStatus><notificationProcessStatus>ACTIVE</notificationProcessStatus><subscriberName>crm</subscriberName>"),
        "{}",
        xml.body
    );
    assert!(
        xml.body
            .contains("<lastAttemptResult>200</lastAttemptResult>")
    );
    assert!(!xml.body.contains("lastError"));
    // The acknowledgement commits just after the receiver has answered.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let all = loop {
        let all = json_of(&get_json(stack, "/webhook/subscribers", world::ADMIN).await);
        if all[0]["pendingEvents"] == 0 || std::time::Instant::now() > deadline {
            break all;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(all.as_array().unwrap().len(), 1);
    assert_eq!(all[0]["subscriberName"], "crm");
    assert_eq!(all[0]["pendingEvents"], 0);
}

async fn a_refused_write_records_and_sends_nothing(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    crm_told_of_new_users(stack, &receiver, None).await;
    // A login that is taken: 409, and no event.
    let body = json!({"departmentId": acme::SALES, "fields": {"login": "owner@acme.example.com"}});
    let reply = post_json(stack, "/user", world::OWNER, body).await;
    assert_eq!(reply.status, 409, "{}", reply.body);
    // A department of another account: refused too.
    let body = json!({"departmentId": globex::ROOT, "fields": {"login": "x@acme.example.com"}});
    assert_ne!(
        post_json(stack, "/user", world::OWNER, body).await.status,
        201
    );
    assert_eq!(
        webhook_event::Entity::find()
            .count(stack.db())
            .await
            .unwrap(),
        0,
        "no event row"
    );
    // A later accepted write is the first and only event.
    new_user(stack, "after@acme.example.com").await;
    receiver
        .wait_until(Duration::from_secs(5), "the accepted write", |all| {
            all.iter().any(|r| r.event_type == "USER_REGISTERED")
        })
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        logins(&receiver.delivered_payloads("hook")),
        ["after@acme.example.com"]
    );
    let unsigned = &receiver.received_at("hook")[0];
    assert!(unsigned.signature.is_none() && unsigned.signature_256.is_none());
}

async fn a_hundred_users_arrive_complete_and_in_order(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    crm_told_of_new_users(stack, &receiver, Some(SECRET)).await;
    let expected: Vec<String> = (0..100)
        .map(|n| format!("user{n:03}@acme.example.com"))
        .collect();
    for login in &expected {
        new_user(stack, login).await;
    }
    receiver
        .wait_until(Duration::from_secs(20), "100 users", |_| {
            receiver.delivered_payloads("hook").len() >= 100
        })
        .await;
    assert_eq!(logins(&receiver.delivered_payloads("hook")), expected);
    let deliveries = receiver.received_at("hook");
    for received in &deliveries {
        assert_signed(received, SECRET);
        assert!(received.payloads().len() <= 100);
    }
    // Each delivery gathers the events of its first 200 ms: writes one after another share
    // deliveries (one per event without the gathering).
    assert!(
        deliveries.len() <= 50,
        "100 events came in {} deliveries",
        deliveries.len()
    );
}

async fn a_receiver_down_for_a_while_then_gets_every_event_once_in_order(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    crm_told_of_new_users(stack, &receiver, Some(SECRET)).await;
    // Recorded while paused, so that the outage starts at once for all of them.
    switch(stack, "disable", "crm").await;
    let expected: Vec<String> = (0..10)
        .map(|n| format!("down{n}@acme.example.com"))
        .collect();
    for login in &expected {
        new_user(stack, login).await;
    }
    receiver.answer(500);
    switch(stack, "enable", "crm").await;
    let failed = receiver
        .wait_until(Duration::from_secs(10), "three failed attempts", |all| {
            all.iter().filter(|r| r.answered == 500).count() >= 3
        })
        .await;
    let failed: Vec<_> = failed.into_iter().filter(|r| r.answered == 500).collect();
    // Every retry sends the same delivery: same id, same bytes, the next attempt number.
    assert!(
        failed
            .iter()
            .all(|r| r.delivery_id == failed[0].delivery_id)
    );
    assert!(failed.iter().all(|r| r.body == failed[0].body));
    assert_eq!(failed[1].attempt, failed[0].attempt + 1);
    let suspended = info(stack, world::OWNER, "crm").await;
    assert_eq!(suspended["notificationProcessStatus"], "SUSPENDED");
    assert_eq!(suspended["lastAttemptResult"], "500");
    assert_eq!(suspended["lastError"], "receiver down for maintenance");
    assert_eq!(suspended["pendingEvents"], 10);

    receiver.answer(200);
    receiver
        .wait_until(Duration::from_secs(10), "the backlog", |_| {
            receiver.delivered_payloads("hook").len() >= 10
        })
        .await;
    assert_eq!(logins(&receiver.delivered_payloads("hook")), expected);
    // The receiver has the last delivery before its acknowledgement is recorded.
    let recovered = info_once(stack, "crm", |now| now["pendingEvents"] == 0).await;
    assert_eq!(recovered["notificationProcessStatus"], "ACTIVE");
    assert_eq!(recovered["pendingEvents"], 0);
    assert_eq!(recovered["confirmationStatus"], "CONFIRMED");
}

async fn after_the_give_up_the_backlog_follows_the_new_confirmation(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    crm_told_of_new_users(stack, &receiver, Some(SECRET)).await;
    receiver.answer(503);
    new_user(stack, "first@acme.example.com").await;
    // Failing for longer than the give-up (5 s here) makes the subscriber unconfirmed.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let now = info(stack, world::OWNER, "crm").await;
        if now["confirmationStatus"] == "UNCONFIRMED" {
            assert_eq!(now["notificationProcessStatus"], "INACTIVE");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no give-up: {now}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let failing_id = receiver
        .received_at("hook")
        .last()
        .unwrap()
        .delivery_id
        .clone();
    // Events keep being recorded; nothing goes out.
    new_user(stack, "second@acme.example.com").await;
    let quiet = receiver.received().len();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(receiver.received().len(), quiet, "attempts stopped");
    assert_eq!(info(stack, world::OWNER, "crm").await["pendingEvents"], 2);

    receiver.answer(200);
    confirm(stack, world::OWNER, &receiver, "crm", "hook").await;
    receiver
        .wait_until(Duration::from_secs(10), "the whole backlog", |_| {
            receiver.delivered_payloads("hook").len() >= 2
        })
        .await;
    assert_eq!(
        logins(&receiver.delivered_payloads("hook")),
        ["first@acme.example.com", "second@acme.example.com"]
    );
    let resumed = receiver
        .received_at("hook")
        .into_iter()
        .find(|r| r.answered == 200 && r.event_type == "USER_REGISTERED")
        .unwrap();
    assert_eq!(resumed.delivery_id, failing_id, "the same oldest delivery");
}

async fn two_accounts_never_see_each_others_events(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    subscribe(
        stack,
        world::OWNER,
        &receiver,
        "crm",
        "acme",
        None,
        &["USER_REGISTERED"],
    )
    .await;
    subscribe(
        stack,
        world::GLOBEX_OWNER,
        &receiver,
        "crm",
        "globex",
        None,
        &["USER_REGISTERED"],
    )
    .await;
    new_user(stack, "a@acme.example.com").await;
    let body = json!({"departmentId": globex::PLANT, "fields": {"login": "g@globex.example.com"}});
    assert_eq!(
        post_json(stack, "/user", world::GLOBEX_OWNER, body)
            .await
            .status,
        201
    );
    receiver
        .wait_until(Duration::from_secs(5), "both accounts' events", |_| {
            !receiver.delivered_payloads("acme").is_empty()
                && !receiver.delivered_payloads("globex").is_empty()
        })
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        logins(&receiver.delivered_payloads("acme")),
        ["a@acme.example.com"]
    );
    assert_eq!(
        logins(&receiver.delivered_payloads("globex")),
        ["g@globex.example.com"]
    );
    // Another account's subscriber is an unknown name; its filter ids are unknown ids.
    let reply = call(
        stack,
        world::GLOBEX_OWNER,
        "disable",
        json!({"subscriberName": "nobody"}),
    )
    .await;
    assert_eq!(reply.status, 404);
    assert!(
        reply.body.contains("Subscriber not found"),
        "{}",
        reply.body
    );
    let reply = call(
        stack,
        world::GLOBEX_OWNER,
        "subscribe",
        json!({"subscriberName": "crm", "subscription": {"subscriptionType": "LEARNERS_ENROLLED_IN_COURSE",
            "params": [{"name": "courseIds", "value": format!("[\"{}\"]", acme::WELCOME_COURSE)}]}}),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(reply.body.contains(acme::WELCOME_COURSE), "{}", reply.body);
    let globex_list = json_of(&get_json(stack, "/webhook/subscribers", world::GLOBEX_OWNER).await);
    assert_eq!(globex_list.as_array().unwrap().len(), 1);
    assert!(
        globex_list[0]["callbackUrl"]
            .as_str()
            .unwrap()
            .ends_with("/globex")
    );
}

async fn redirects_are_not_followed(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    assert_ok(
        &call(
            stack,
            world::OWNER,
            "register",
            json!({"subscriberName": "moved", "callbackUrl": receiver.url("redirect")}),
        )
        .await,
    );
    assert_ok(
        &call(
            stack,
            world::OWNER,
            "code/send",
            json!({"subscriberName": "moved"}),
        )
        .await,
    );
    receiver
        .wait_until(Duration::from_secs(5), "the 302", |all| {
            all.iter().any(|r| r.path == "redirect")
        })
        .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let now = info(stack, world::OWNER, "moved").await;
        if now["lastAttemptResult"] == "302" {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{now}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        receiver.received_at("hook").is_empty(),
        "the Location is never requested"
    );
}

async fn only_owners_and_administrators_manage_subscribers_and_bad_input_is_named(
    stack: &LoopbackStack,
) {
    let receiver = Receiver::start().await;
    let register = json!({"subscriberName": "crm", "callbackUrl": receiver.url("hook")});
    for login in [
        world::DEPT_ADMIN,
        world::LEARNER,
        world::AUTHOR,
        world::COORDINATOR,
    ] {
        let reply = call(stack, login, "register", register.clone()).await;
        assert_refused(&reply, 403, "webhooks");
        let reply = stack.get("/webhook/subscribers", login).await;
        reply.assert_error(403, "webhooks");
    }
    let before = stack.snapshot_without_revision().await;
    for (body, needle) in [
        (
            json!({"callbackUrl": receiver.url("hook")}),
            "subscriberName",
        ),
        (json!({"subscriberName": "crm"}), "callbackUrl"),
        (
            json!({"subscriberName": "crm", "callbackUrl": "ftp://example.com/"}),
            "callbackUrl",
        ),
        (
            json!({"subscriberName": "crm", "callbackUrl": "http://0.0.0.0/"}),
            "reserved address",
        ),
        (
            json!({"subscriberName": "crm", "callbackUrl": receiver.url("hook"), "secret": "a", "Secret": "b"}),
            "secret",
        ),
        (
            json!({"subscriberName": "crm", "callbackUrl": "http://u:p@example.com/"}),
            "callbackUrl",
        ),
    ] {
        let reply = call(stack, world::OWNER, "register", body.clone()).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        assert!(reply.body.contains(needle), "{body}: {}", reply.body);
    }
    assert_eq!(
        stack.snapshot_without_revision().await,
        before,
        "nothing changed"
    );

    assert_ok(&call(stack, world::ADMIN, "register", register.clone()).await);
    let reply = call(stack, world::OWNER, "register", register.clone()).await;
    assert_eq!(reply.status, 400);
    assert!(reply.body.contains("already registered"), "{}", reply.body);
    let reply = stack
        .get("/webhook/subscriber/info?subscriberName=nope", world::OWNER)
        .await;
    reply.assert_error(404, "Subscriber not found");
    let reply = stack
        .get(
            "/webhook/subscriber/info?subscriberName=crm&x=1",
            world::OWNER,
        )
        .await;
    reply.assert_error(400, "\"x\"");
    let reply = stack.get("/webhook/subscriber/info", world::OWNER).await;
    reply.assert_error(400, "subscriberName");
    let reply = call(
        stack,
        world::OWNER,
        "confirm",
        json!({"subscriberName": "crm", "code": "5b0c3f7e-6a86-4d8a-9b1e-2f4c7d9a1e03"}),
    )
    .await;
    assert_refused(&reply, 400, "code");
    let reply = call(
        stack,
        world::OWNER,
        "subscribe",
        json!({"subscriberName": "crm", "subscription": {"subscriptionType": "NOT_A_TYPE"}}),
    )
    .await;
    assert_refused(&reply, 400, "NOT_A_TYPE");
    let reply = call(
        stack,
        world::OWNER,
        "subscribe",
        json!({"subscriberName": "crm", "subscription": {"subscriptionType": "USER_REGISTERED",
            "params": [{"name": "userIds", "value": "[]"}]}}),
    )
    .await;
    assert_refused(&reply, 400, "userIds");
    let reply = call(
        stack,
        world::OWNER,
        "unsubscribe",
        json!({"subscriberName": "crm", "subscriptionType": "USER_REGISTERED"}),
    )
    .await;
    assert_refused(&reply, 404, "Subscription not found");
    let reply = stack
        .send(reqwest::Method::DELETE, "/webhook/register", world::OWNER)
        .await;
    assert_eq!(reply.status, 405);
    assert!(
        reply
            .header("allow")
            .is_some_and(|allow| allow.contains("POST"))
    );
    // Removed: the name is free again.
    assert_ok(
        &call(
            stack,
            world::OWNER,
            "remove",
            json!({"subscriberName": "crm"}),
        )
        .await,
    );
    assert_ok(&call(stack, world::OWNER, "register", register).await);
}

async fn disabled_subscribers_keep_their_events_until_enabled(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    crm_told_of_new_users(stack, &receiver, None).await;
    switch(stack, "disable", "crm").await;
    switch(stack, "disable", "crm").await;
    new_user(stack, "paused1@acme.example.com").await;
    new_user(stack, "paused2@acme.example.com").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(receiver.delivered_payloads("hook").is_empty());
    let paused = info(stack, world::OWNER, "crm").await;
    assert_eq!(paused["subscriberStatus"], "INACTIVE");
    assert_eq!(paused["pendingEvents"], 2);
    switch(stack, "enable", "crm").await;
    receiver
        .wait_until(Duration::from_secs(5), "the paused events", |_| {
            receiver.delivered_payloads("hook").len() >= 2
        })
        .await;
    assert_eq!(
        logins(&receiver.delivered_payloads("hook")),
        ["paused1@acme.example.com", "paused2@acme.example.com"]
    );
}

async fn enrollments_are_announced_to_matching_filters_only(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    subscribe(stack, world::OWNER, &receiver, "all", "all", None, &[]).await;
    subscribe(stack, world::OWNER, &receiver, "one", "one", None, &[]).await;
    assert_ok(
        &call(
            stack,
            world::OWNER,
            "subscribe",
            json!({"subscriberName": "all", "subscription": {"subscriptionType": "LEARNERS_ENROLLED_IN_COURSE"}}),
        )
        .await,
    );
    // The filter given as a JSON array in a JSON body; listed as iSpring's string.
    assert_ok(
        &call(
            stack,
            world::OWNER,
            "subscribe",
            json!({"subscriberName": "one", "subscription": {"subscriptionType": "LEARNERS_ENROLLED_IN_COURSE",
                "params": [{"name": "userIds", "value": [acme::ADMIN.to_uppercase()]}]}}),
        )
        .await,
    );
    let listed = json_of(
        &get_json(
            stack,
            "/webhook/subscription/list?subscriberName=one",
            world::OWNER,
        )
        .await,
    );
    assert_eq!(
        listed[0]["params"],
        json!([{"name": "userIds", "value": format!("[\"{}\"]", acme::ADMIN)}])
    );
    let body = json!({"courseIds": [acme::WELCOME_COURSE], "learnerIds": [acme::ADMIN, acme::VIEWER, acme::LEARNER]});
    let reply = post_json(stack, "/enrollment", world::OWNER, body).await;
    assert!(reply.status < 300, "{}", reply.body);
    receiver
        .wait_until(Duration::from_secs(5), "both enrollments", |_| {
            !receiver.delivered_payloads("all").is_empty()
                && !receiver.delivered_payloads("one").is_empty()
        })
        .await;
    let all = receiver.delivered_payloads("all");
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["courseId"], acme::WELCOME_COURSE);
    // The learner was enrolled already: left out.
    let mut expected = vec![acme::ADMIN, acme::VIEWER];
    expected.sort();
    assert_eq!(all[0]["learnerIds"], json!(expected));
    let one = receiver.delivered_payloads("one");
    assert_eq!(
        one,
        [json!({"courseId": acme::WELCOME_COURSE, "learnerIds": [acme::ADMIN]})]
    );
}

/// Records `result` through the core's `RecordResults`, as a player would.
async fn record(stack: &lms_tests::TestStack, result: ResultRecord) {
    DirectoryServiceClient::new(stack.grpc_channel().await)
        .record_results(world::OWNER.grpc_request(RecordResultsRequest {
            results: vec![result],
        }))
        .await
        .expect("the result is recorded");
}

fn tracked(status: &str, progress: u32, completed: Option<&str>) -> ResultRecord {
    ResultRecord {
        enrollment_id: acme::LEARNER_WELCOME.to_owned(),
        completion_status: status.into(),
        progress,
        awarded_score: 90.0,
        passing_score: 80.0,
        time_spent: 600,
        views_count: 2,
        completion_date: completed.map(str::to_owned),
        last_view_date: None,
    }
}

/// The course events of results (section 7): a tracked result started and then passed
/// arrives as two status changes and one completion, in commit order; a recording that
/// changes only a score records nothing; an administrator's status that moves the
/// effective status out of the successful ones is a status change only, and a learner
/// outside a subscription's `userIds` is never announced to it.
async fn a_recorded_completion_is_announced_after_its_status_change(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    let types = ["COURSE_STATUS_CHANGED", "COURSE_COMPLETED_SUCCESSFULLY"];
    subscribe(stack, world::OWNER, &receiver, "crm", "all", None, &types).await;
    subscribe(stack, world::OWNER, &receiver, "other", "other", None, &[]).await;
    assert_ok(
        &call(
            stack,
            world::OWNER,
            "subscribe",
            json!({"subscriberName": "other", "subscription": {"subscriptionType": "COURSE_STATUS_CHANGED",
                "params": [{"name": "userIds", "value": format!("[\"{}\"]", acme::ENGINEER)}]}}),
        )
        .await,
    );

    record(stack, tracked("in_progress", 40, None)).await;
    record(
        stack,
        tracked("passed", 100, Some("2025-12-31T10:00:00+00:00")),
    )
    .await;
    // The same status with another score: no event.
    let mut rescored = tracked("passed", 100, Some("2025-12-31T10:00:00+00:00"));
    rescored.awarded_score = 95.0;
    record(stack, rescored).await;
    // An administrator fails the passed result: a status change, no completion.
    let reply = post_json(
        stack,
        "/statistics/course",
        world::OWNER,
        json!({"courseId": acme::WELCOME_COURSE, "enrollmentIds": [acme::LEARNER_WELCOME],
            "status": "failed", "date": "2026-01-02"}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);

    let received = receiver
        .wait_until(Duration::from_secs(10), "the course events", |_| {
            receiver.delivered_payloads("all").len() >= 4
        })
        .await;
    // Each payload's type, in the order delivered (a delivery carries one type).
    let mut delivered = std::collections::HashSet::new();
    let types_received: Vec<&str> = received
        .iter()
        .filter(|r| r.path == "all" && r.event_type != "CONFIRMATION")
        .filter(|r| delivered.insert(r.delivery_id.clone()))
        .flat_map(|r| vec![r.event_type.as_str(); r.payloads().len()])
        .collect();
    assert_eq!(
        types_received,
        [
            "COURSE_STATUS_CHANGED",
            "COURSE_STATUS_CHANGED",
            "COURSE_COMPLETED_SUCCESSFULLY",
            "COURSE_STATUS_CHANGED"
        ],
        "the status change before the completion, in commit order"
    );
    let payloads = receiver.delivered_payloads("all");
    let change = |status: &str, previous: &str| {
        json!({"courseId": acme::WELCOME_COURSE, "learnerId": acme::LEARNER,
            "enrollmentIds": [acme::LEARNER_WELCOME], "status": status, "previousStatus": previous})
    };
    let without_date = |payload: &Value| {
        let mut payload = payload.clone();
        let date = payload
            .as_object_mut()
            .and_then(|object| object.remove("changeDate"))
            .and_then(|date| date.as_i64())
            .expect("changeDate is an integer");
        assert_eq!(date % 1_000_000_000, 0, "whole seconds × 10^9");
        payload
    };
    assert_eq!(payloads.len(), 4, "{payloads:?}");
    assert_eq!(
        without_date(&payloads[0]),
        change("in_progress", "not_started")
    );
    assert_eq!(without_date(&payloads[1]), change("passed", "in_progress"));
    assert_eq!(
        payloads[2],
        json!({"courseId": acme::WELCOME_COURSE, "learnerId": acme::LEARNER,
            "enrollmentIds": [acme::LEARNER_WELCOME], "completionDate": 1_767_175_200_000_000_000_i64})
    );
    assert_eq!(without_date(&payloads[3]), change("failed", "passed"));
    let first = received
        .iter()
        .find(|r| r.path == "all" && r.event_type == "COURSE_STATUS_CHANGED")
        .expect("a status change");
    let body = std::str::from_utf8(&first.body).expect("UTF-8");
    let at: Vec<usize> = [
        "courseId",
        "learnerId",
        "enrollmentIds",
        "status",
        "previousStatus",
        "changeDate",
    ]
    .iter()
    .map(|key| body.find(&format!("\"{key}\"")).expect(key))
    .collect();
    assert!(
        at.is_sorted(),
        "the keys in the specification's order: {body}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        receiver.delivered_payloads("other").is_empty(),
        "another learner's results reach no subscription filtered on the engineer"
    );
}

/// A core keeps an account's subscriptions in memory and checks their revision on the
/// account's counter row as it records. Another core's change (played here straight in the
/// database, which this process's copy does not hear of) takes effect at the next write.
async fn subscriptions_changed_by_another_core_apply_to_the_next_write(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    subscribe(
        stack,
        world::OWNER,
        &receiver,
        "crm",
        "crm",
        None,
        &["USER_REGISTERED"],
    )
    .await;
    subscribe(stack, world::OWNER, &receiver, "erp", "erp", None, &[]).await;
    // Recording this one keeps the subscriptions: crm's alone.
    new_user(stack, "first@acme.example.com").await;
    let erp = webhook_subscriber::Entity::find()
        .filter(webhook_subscriber::Column::Name.eq("erp"))
        .one(stack.db())
        .await
        .unwrap()
        .expect("erp is registered");
    let crm = webhook_subscriber::Entity::find()
        .filter(webhook_subscriber::Column::Name.eq("crm"))
        .one(stack.db())
        .await
        .unwrap()
        .expect("crm is registered");
    let set_revision = async |revision: i64| {
        webhook_event_counter::Entity::update_many()
            .col_expr(
                webhook_event_counter::Column::SubscriptionsRevision,
                Expr::value(revision),
            )
            .filter(webhook_event_counter::Column::AccountId.eq(erp.account_id))
            .exec(stack.db())
            .await
            .unwrap();
    };
    // The other core subscribes erp.
    webhook_subscription::ActiveModel {
        id: Set(sea_orm::prelude::Uuid::now_v7()),
        subscriber_id: Set(erp.id),
        account_id: Set(erp.account_id),
        event_type: Set("USER_REGISTERED".into()),
        user_ids: Set("[]".into()),
        course_ids: Set("[]".into()),
        course_item_ids: Set("[]".into()),
        created_at: Set(chrono::Utc::now()),
    }
    .insert(stack.db())
    .await
    .unwrap();
    set_revision(0x5eed_0001).await;
    new_user(stack, "second@acme.example.com").await;
    // Then it unsubscribes crm.
    webhook_subscription::Entity::delete_many()
        .filter(webhook_subscription::Column::SubscriberId.eq(crm.id))
        .exec(stack.db())
        .await
        .unwrap();
    set_revision(0x5eed_0003).await;
    new_user(stack, "third@acme.example.com").await;
    receiver
        .wait_until(Duration::from_secs(10), "both subscribers' events", |_| {
            receiver.delivered_payloads("crm").len() >= 2
                && receiver.delivered_payloads("erp").len() >= 2
        })
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        logins(&receiver.delivered_payloads("crm")),
        ["first@acme.example.com", "second@acme.example.com"]
    );
    assert_eq!(
        logins(&receiver.delivered_payloads("erp")),
        ["second@acme.example.com", "third@acme.example.com"]
    );
}

/// Section 8's retention: events undelivered past `--webhook-retention-hours` are discarded
/// with the delivery that holds them, and the subscriber's count follows; younger events stay
/// and are delivered. A core discards at its start and then every minute, so a second core
/// started on the database with a retention of an hour does it here, for events whose
/// recording time the test moves two hours back.
async fn events_past_the_retention_are_discarded_with_their_delivery(stack: &LoopbackStack) {
    let receiver = Receiver::start().await;
    crm_told_of_new_users(stack, &receiver, None).await;
    receiver.answer(500);
    for n in 0..3 {
        new_user(stack, &format!("old{n}@acme.example.com")).await;
    }
    receiver
        .wait_until(Duration::from_secs(10), "a failed attempt", |all| {
            all.iter()
                .any(|r| r.answered == 500 && r.body.starts_with(b"{\"type\":\"USER_REGISTERED\""))
        })
        .await;
    // Disabled, the subscriber keeps its delivery in progress and is attempted no more.
    switch(stack, "disable", "crm").await;
    let old: Vec<webhook_event::Model> =
        webhook_event::Entity::find().all(stack.db()).await.unwrap();
    assert_eq!(old.len(), 3);
    let deliveries: Vec<_> = webhook_delivery::Entity::find()
        .all(stack.db())
        .await
        .unwrap()
        .into_iter()
        .filter(|d| old.iter().any(|e| d.seqs().contains(&e.seq)))
        .map(|d| d.id)
        .collect();
    assert!(
        !deliveries.is_empty(),
        "the failed attempt's delivery holds events"
    );
    // One subscriber: its numbers name its events.
    let old_seqs: Vec<_> = old.iter().map(|e| e.seq).collect();
    new_user(stack, "young@acme.example.com").await;
    webhook_event::Entity::update_many()
        .col_expr(
            webhook_event::Column::CreatedAt,
            Expr::value(chrono::Utc::now() - chrono::Duration::hours(2)),
        )
        .filter(webhook_event::Column::Seq.is_in(old_seqs.clone()))
        .exec(stack.db())
        .await
        .unwrap();
    assert_eq!(info(stack, world::OWNER, "crm").await["pendingEvents"], 4);

    let second = stack
        .replica(lms_tests::stack::StackOptions {
            webhooks: lms_core::webhooks::WebhookSettings {
                retention_hours: 1,
                ..lms_tests::webhooks::quick_settings(true)
            },
            ..lms_tests::stack::StackOptions::new(stack.backend())
        })
        .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let left = webhook_event::Entity::find()
            .filter(webhook_event::Column::Seq.is_in(old_seqs.clone()))
            .count(stack.db())
            .await
            .unwrap();
        if left == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{left} events past the retention are still kept"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        webhook_delivery::Entity::find()
            .filter(webhook_delivery::Column::Id.is_in(deliveries))
            .count(stack.db())
            .await
            .unwrap(),
        0,
        "the delivery goes with its events"
    );
    assert_eq!(info(stack, world::OWNER, "crm").await["pendingEvents"], 1);

    receiver.answer(200);
    switch(stack, "enable", "crm").await;
    receiver
        .wait_until(Duration::from_secs(10), "the young event", |_| {
            !receiver.delivered_payloads("hook").is_empty()
        })
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        logins(&receiver.delivered_payloads("hook")),
        ["young@acme.example.com"]
    );
    second.stop().await;
}

async fn private_and_loopback_callbacks_are_refused_without_the_setting(stack: &StrictStack) {
    let receiver = Receiver::start().await;
    let port = receiver.addr.port();
    for (url, needle) in [
        (receiver.url("hook"), "127.0.0.1 is a loopback address"),
        (
            format!("http://localhost:{port}/hook"),
            "localhost is a loopback address",
        ),
        (
            format!("http://2130706433:{port}/"),
            "127.0.0.1 is a loopback address",
        ),
        (
            "http://10.1.2.3/".to_owned(),
            "10.1.2.3 is a private address",
        ),
        ("http://169.254.169.254/".to_owned(), "link-local address"),
        ("http://[::1]/".to_owned(), "loopback address"),
    ] {
        let reply = call(
            stack,
            world::OWNER,
            "register",
            json!({"subscriberName": "crm", "callbackUrl": url}),
        )
        .await;
        assert_refused(&reply, 400, needle);
        assert_refused(&reply, 400, "callbackUrl");
    }
    // A name is not resolved at registration; every attempt resolves and checks it.
    assert_ok(
        &call(
            stack,
            world::OWNER,
            "register",
            json!({"subscriberName": "crm", "callbackUrl": format!("http://{MAPPED_HOST}:{port}/hook")}),
        )
        .await,
    );
    assert_ok(
        &call(
            stack,
            world::OWNER,
            "code/send",
            json!({"subscriberName": "crm"}),
        )
        .await,
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let refused = loop {
        let now = info(stack, world::OWNER, "crm").await;
        if now["lastAttemptResult"] == "refused" {
            break now;
        }
        assert!(tokio::time::Instant::now() < deadline, "{now}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let error = refused["lastError"].as_str().unwrap();
    assert!(
        error.contains("127.0.0.1") && error.contains("loopback"),
        "{error}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.received().is_empty(), "never connected");
}

/// Two cores on one PostgreSQL, both dispatching (SQLite has one core): 10 subscribers of
/// 1,000 users created through both, 10,000 events, each delivered exactly once, and each
/// subscriber receives the users in the same order, the order their creations committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_cores_on_one_postgres_deliver_ten_thousand_events_each_once() {
    // A refused request's cause is in the core's log.
    let _ = tracing_subscriber::fmt()
        .with_env_filter("warn")
        .with_test_writer()
        .try_init();
    let options = lms_tests::stack::StackOptions {
        webhooks: lms_tests::webhooks::quick_settings(true),
        ..lms_tests::stack::StackOptions::new(lms_tests::Backend::Postgres)
    };
    let Some(first) = lms_tests::TestStack::start_with(options.clone()).await else {
        return;
    };
    let second = first.replica(options).await;
    let receiver = Receiver::start().await;
    let paths: Vec<String> = (0..10).map(|n| format!("s{n}")).collect();
    for path in &paths {
        subscribe(
            &first,
            world::OWNER,
            &receiver,
            path,
            path,
            None,
            &["USER_REGISTERED"],
        )
        .await;
    }
    let cores = [&first, &second];
    futures::future::join_all((0..8).map(|worker| {
        let stack = cores[worker % 2];
        async move {
            for n in 0..125 {
                new_user(stack, &format!("w{worker}n{n}@acme.example.com")).await;
            }
        }
    }))
    .await;
    receiver
        .wait_until(Duration::from_secs(120), "10,000 events", |_| {
            paths
                .iter()
                .all(|path| receiver.delivered_payloads(path).len() >= 1_000)
        })
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let received = receiver.received();
    let mut ids = std::collections::HashMap::<&str, usize>::new();
    for r in received
        .iter()
        .filter(|r| r.event_type == "USER_REGISTERED")
    {
        assert_eq!(r.answered, 200);
        *ids.entry(r.delivery_id.as_str()).or_default() += 1;
    }
    assert!(
        ids.values().all(|&n| n == 1),
        "a delivery arrived twice: {:?}",
        ids.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>()
    );
    let sequences: Vec<Vec<String>> = paths
        .iter()
        .map(|path| {
            receiver
                .delivered_payloads(path)
                .iter()
                .map(|p| p["userId"].as_str().unwrap().to_owned())
                .collect()
        })
        .collect();
    let events: usize = sequences.iter().map(Vec::len).sum();
    assert_eq!(events, 10_000);
    let distinct: std::collections::HashSet<&String> = sequences[0].iter().collect();
    assert_eq!(distinct.len(), 1_000);
    for sequence in &sequences[1..] {
        assert_eq!(
            sequence, &sequences[0],
            "every subscriber sees commit order"
        );
    }
    second.stop().await;
    first.stop().await;
}

/// `POST base/webhook/{call}` (or any path) as the owner with a JSON body.
async fn post_as_owner(base: &str, path: &str, body: Value) -> lms_tests::Reply {
    let request = world::OWNER.headers().into_iter().fold(
        reqwest::Client::new()
            .post(format!("{base}{path}"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(body.to_string()),
        |request, (name, value)| request.header(name, value),
    );
    lms_tests::Reply::send(request).await
}

/// The core killed at once (its runtime dropped, every task and socket gone, as with
/// SIGKILL) right after it acknowledged a write, before any delivery of it could be
/// acknowledged: the restarted core delivers the event.
async fn an_acknowledged_write_is_delivered_after_the_core_is_killed(backend: lms_tests::Backend) {
    let Some(mut split) = lms_tests::fault::SplitStack::start_configured(
        backend,
        |url| url.to_owned(),
        |core| {
            core.webhooks = lms_core::webhooks::WebhookSettings {
                timeout_ms: 1_000,
                ..lms_tests::webhooks::quick_settings(true)
            };
        },
    )
    .await
    else {
        return;
    };
    let base = split.base_url.clone();
    let receiver = Receiver::start().await;
    let register = json!({"subscriberName": "crm", "callbackUrl": receiver.url("hook")});
    assert_eq!(
        post_as_owner(&base, "/webhook/register", register)
            .await
            .status,
        200
    );
    let name = json!({"subscriberName": "crm"});
    assert_eq!(
        post_as_owner(&base, "/webhook/code/send", name)
            .await
            .status,
        200
    );
    let received = receiver
        .wait_until(Duration::from_secs(10), "the CONFIRMATION", |all| {
            !all.is_empty()
        })
        .await;
    let confirm = json!({"subscriberName": "crm", "code": received[0].code()});
    assert_eq!(
        post_as_owner(&base, "/webhook/confirm", confirm)
            .await
            .status,
        200
    );
    let subscribe =
        json!({"subscriberName": "crm", "subscription": {"subscriptionType": "USER_REGISTERED"}});
    assert_eq!(
        post_as_owner(&base, "/webhook/subscribe", subscribe)
            .await
            .status,
        200
    );

    // No delivery can be acknowledged before the kill.
    receiver.answer(503);
    let user = json!({"departmentId": acme::SALES, "fields": {"login": "last@acme.example.com"}});
    let reply = post_as_owner(&base, "/user", user).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    split.kill_core();
    receiver.answer(200);
    split.restart_core().await;
    // The dead core's claim, if it took one, expires (2 × 1 s + 5 s) before the new one works.
    receiver
        .wait_until(
            Duration::from_secs(20),
            "the event after the restart",
            |_| logins(&receiver.delivered_payloads("hook")) == ["last@acme.example.com"],
        )
        .await;
    split.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledged_write_is_delivered_after_the_core_is_killed_on_sqlite() {
    an_acknowledged_write_is_delivered_after_the_core_is_killed(lms_tests::Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledged_write_is_delivered_after_the_core_is_killed_on_postgres() {
    an_acknowledged_write_is_delivered_after_the_core_is_killed(lms_tests::Backend::Postgres).await;
}
