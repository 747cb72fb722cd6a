//! Authentication end to end (contract section 2): the verified-credentials cache never
//! outlives a change of password, role, managed departments or active flag; unknown
//! logins cost a verification like wrong passwords; failures are throttled per account
//! and login; verification is bounded and sheds load with 503; old hashes are re-hashed.
//!
//! "Warm" below means proven warm: the request before the change was answered from memory,
//! without a password verification or a database query (the core's counters say so).

use std::time::Duration;

use lms_core::{
    auth::{PasswordHasher, PasswordPolicy},
    entities::{custom_role_permission, user},
};
use lms_proto::v1::{self as pb, directory_service_client::DirectoryServiceClient};
use lms_tests::{
    Backend, Reply, TestStack, on_both_backends,
    stack::{StackOptions, TEST_POLICY},
    world::{self, Login, acme},
    xml::texts_of,
};
use sea_orm::{
    ColumnTrait as _, EntityTrait as _, QueryFilter as _, prelude::Uuid, sea_query::Expr,
};
use tonic::transport::Channel;

on_both_backends!(
    a_password_change_refuses_the_old_password_on_the_next_request_with_the_cache_warm,
    a_deactivation_refuses_the_user_on_the_next_request_with_the_cache_warm,
    a_demotion_is_forbidden_on_the_next_request_with_the_cache_warm,
    a_change_of_managed_departments_applies_on_the_next_request_with_the_cache_warm,
    a_change_written_to_the_database_by_another_process_applies_on_the_next_request,
    a_permission_taken_from_a_custom_role_in_the_database_applies_on_the_next_request,
    the_cache_answers_repeated_logins_without_verifying_for_at_most_sixty_seconds,
    unknown_accounts_and_logins_cost_a_verification_like_a_wrong_password,
    the_eleventh_failure_within_the_window_is_429_until_the_window_passes,
    failures_count_per_login_whatever_its_case,
    concurrent_guesses_get_no_more_verifications_than_the_throttle_allows,
    a_burst_of_logins_with_the_same_credentials_verifies_once,
    a_success_clears_earlier_failures,
    a_hash_of_lower_cost_is_rehashed_at_the_current_policy_after_a_successful_login,
);

const NEW_PASSWORD: &str = "a brand new passphrase";

// ---- helpers ----

/// `GET path` with the given credentials.
async fn get_with(
    stack: &TestStack,
    path: &str,
    account_url: &str,
    email: &str,
    password: &str,
) -> Reply {
    let response = stack
        .http
        .get(format!("{}{path}", stack.base_url))
        .header("X-Auth-Account-Url", account_url)
        .header("X-Auth-Email", email)
        .header("X-Auth-Password", password)
        .send()
        .await
        .expect("request");
    Reply::from(response).await
}

/// `GET /group/{INTERNS}` as `login` with `password`.
async fn read_group(stack: &TestStack, login: Login, password: &str) -> Reply {
    get_with(
        stack,
        &format!("/group/{}", acme::INTERNS),
        login.account_url,
        login.email,
        password,
    )
    .await
}

fn verifications(stack: &TestStack) -> u64 {
    stack.core.auth.verifier().verifications()
}

fn from_memory(stack: &TestStack) -> u64 {
    stack.core.auth.answered_from_memory()
}

/// Reads the group as `login` until it is answered from memory (no verification, no
/// query), and proves it was. Remembered callers are trusted once the core has read the
/// `auth_revisions` row after the world was imported: within a poll interval.
async fn warm_up(stack: &TestStack, login: Login) {
    let first = read_group(stack, login, world::PASSWORD).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (verified, remembered) = (verifications(stack), from_memory(stack));
        let again = read_group(stack, login, world::PASSWORD).await;
        assert_eq!(again.status, 200, "{}", again.body);
        assert_eq!(verifications(stack), verified, "answered from the cache");
        if from_memory(stack) > remembered {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} was never answered from memory",
            login.email
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!stack.core.auth.cache().is_empty());
}

/// Reads the group as `login` until `done` holds for the reply, for at most 10 s: a change
/// made by another process reaches the core within a poll of the `auth_revisions` row.
async fn until(
    stack: &TestStack,
    login: Login,
    password: &str,
    what: &str,
    done: impl Fn(&Reply) -> bool,
) -> Reply {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let reply = read_group(stack, login, password).await;
        if done(&reply) {
            return reply;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what} never applied; last reply {}: {}",
            reply.status,
            reply.body
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn directory(stack: &TestStack) -> DirectoryServiceClient<Channel> {
    DirectoryServiceClient::new(stack.grpc_channel().await)
}

/// The owner makes the account administrator a learner, through `stack`'s core.
async fn demote_admin_to_learner(stack: &TestStack) {
    directory(stack)
        .await
        .set_user_role(world::OWNER.grpc_request(pb::SetUserRoleRequest {
            user_id: acme::ADMIN.into(),
            role: Some(pb::RoleAssignment {
                role: pb::Role::Learner.into(),
                custom_role_id: None,
            }),
        }))
        .await
        .expect("the owner demotes the admin");
}

async fn stored_hash(stack: &TestStack, user_id: &str) -> String {
    user::Entity::find_by_id(Uuid::parse_str(user_id).expect("uuid"))
        .one(stack.db())
        .await
        .expect("read user")
        .expect("user exists")
        .password_hash
}

// ---- changes take effect on the next request ----

async fn a_password_change_refuses_the_old_password_on_the_next_request_with_the_cache_warm(
    stack: &TestStack,
) {
    warm_up(stack, world::ADMIN).await;
    directory(stack)
        .await
        .set_user_password(world::OWNER.grpc_request(pb::SetUserPasswordRequest {
            user_id: acme::ADMIN.into(),
            password: NEW_PASSWORD.into(),
        }))
        .await
        .expect("the owner sets the password");

    read_group(stack, world::ADMIN, world::PASSWORD)
        .await
        .assert_error(401, "authentication failed");
    let with_new = read_group(stack, world::ADMIN, NEW_PASSWORD).await;
    assert_eq!(with_new.status, 200, "{}", with_new.body);
    // The old password stays refused after the new one was cached.
    read_group(stack, world::ADMIN, world::PASSWORD)
        .await
        .assert_error(401, "authentication failed");
}

async fn a_deactivation_refuses_the_user_on_the_next_request_with_the_cache_warm(
    stack: &TestStack,
) {
    warm_up(stack, world::ADMIN).await;
    let mut directory = directory(stack).await;
    directory
        .set_user_active(world::OWNER.grpc_request(pb::SetUserActiveRequest {
            user_id: acme::ADMIN.into(),
            active: false,
        }))
        .await
        .expect("the owner deactivates the admin");
    let refused = read_group(stack, world::ADMIN, world::PASSWORD).await;
    refused.assert_error(401, "authentication failed");
    // The same body as for any other failure: a deactivated login is not revealed.
    let unknown = get_with(
        stack,
        &format!("/group/{}", acme::INTERNS),
        world::ACME_URL,
        "nobody@acme.example.com",
        world::PASSWORD,
    )
    .await;
    assert_eq!(
        without_request_id(&refused.body),
        without_request_id(&unknown.body)
    );

    directory
        .set_user_active(world::OWNER.grpc_request(pb::SetUserActiveRequest {
            user_id: acme::ADMIN.into(),
            active: true,
        }))
        .await
        .expect("the owner reactivates the admin");
    let back = read_group(stack, world::ADMIN, world::PASSWORD).await;
    assert_eq!(back.status, 200, "{}", back.body);
}

async fn a_demotion_is_forbidden_on_the_next_request_with_the_cache_warm(stack: &TestStack) {
    warm_up(stack, world::ADMIN).await;
    demote_admin_to_learner(stack).await;
    let before = verifications(stack);
    read_group(stack, world::ADMIN, world::PASSWORD)
        .await
        .assert_error(403, "permission");
    // Still authenticated from the cache (the password did not change): only the role did.
    assert_eq!(verifications(stack), before);
}

async fn a_change_of_managed_departments_applies_on_the_next_request_with_the_cache_warm(
    stack: &TestStack,
) {
    // The department administrator manages Sales, where the learner is (Sales East).
    warm_up(stack, world::DEPT_ADMIN).await;
    let points_of = |user: &str| format!("/gamification/points?userIds={user}");
    let login = world::DEPT_ADMIN;
    let learner = stack.get(&points_of(acme::LEARNER), login).await;
    assert_eq!(learner.status, 200, "{}", learner.body);
    assert_eq!(texts_of(&learner.body, "userId"), [acme::LEARNER]);
    let engineer = stack.get(&points_of(acme::ENGINEER), login).await;
    engineer.assert_error(403, "outside the departments you manage");

    directory(stack)
        .await
        .set_user_managed_departments(world::OWNER.grpc_request(
            pb::SetUserManagedDepartmentsRequest {
                user_id: acme::DEPT_ADMIN.into(),
                managed_department_ids: vec![acme::ENGINEERING.into()],
            },
        ))
        .await
        .expect("the owner moves the department administrator to Engineering");

    let before = verifications(stack);
    let learner = stack.get(&points_of(acme::LEARNER), login).await;
    learner.assert_error(403, "outside the departments you manage");
    let engineer = stack.get(&points_of(acme::ENGINEER), login).await;
    assert_eq!(engineer.status, 200, "{}", engineer.body);
    assert_eq!(texts_of(&engineer.body, "userId"), [acme::ENGINEER]);
    assert_eq!(
        verifications(stack),
        before,
        "both answered with the cache warm"
    );
}

/// A maintenance tool or another core writes the database directly: no message reaches
/// this core, yet the change applies within a poll of the `auth_revisions` row, which
/// triggers move; the TTL (60 s on a clock that never moves here) plays no part.
async fn a_change_written_to_the_database_by_another_process_applies_on_the_next_request(
    stack: &TestStack,
) {
    warm_up(stack, world::ADMIN).await;
    let admin = Uuid::parse_str(acme::ADMIN).expect("uuid");
    let set = |column: user::Column, value: sea_orm::Value| async move {
        user::Entity::update_many()
            .col_expr(column, Expr::value(value))
            .filter(user::Column::Id.eq(admin))
            .exec(stack.db())
            .await
            .expect("update the user row");
    };

    set(user::Column::Role, "author".into()).await;
    let as_author = until(stack, world::ADMIN, world::PASSWORD, "the demotion", |r| {
        r.status == 200 && texts_of(&r.body, "id").is_empty()
    })
    .await;
    assert!(as_author.body.contains("<usersCount>2</usersCount>"));

    set(user::Column::Active, false.into()).await;
    until(
        stack,
        world::ADMIN,
        world::PASSWORD,
        "the deactivation",
        |r| r.status == 401,
    )
    .await
    .assert_error(401, "authentication failed");

    set(user::Column::Active, true.into()).await;
    set(user::Column::Role, "account_administrator".into()).await;
    let hash = PasswordHasher::new(TEST_POLICY)
        .expect("policy")
        .hash(NEW_PASSWORD)
        .expect("hash");
    set(user::Column::PasswordHash, hash.into()).await;
    until(
        stack,
        world::ADMIN,
        world::PASSWORD,
        "the new password",
        |r| r.status == 401,
    )
    .await;
    let with_new = read_group(stack, world::ADMIN, NEW_PASSWORD).await;
    assert_eq!(with_new.status, 200, "{}", with_new.body);
    assert_eq!(texts_of(&with_new.body, "id").len(), 2);
}

/// The same for a custom role's permissions, changed in the database directly.
async fn a_permission_taken_from_a_custom_role_in_the_database_applies_on_the_next_request(
    stack: &TestStack,
) {
    warm_up(stack, world::COORDINATOR).await;
    custom_role_permission::Entity::delete_many()
        .filter(custom_role_permission::Column::Permission.eq("group.read"))
        .exec(stack.db())
        .await
        .expect("take group.read from every custom role");
    until(
        stack,
        world::COORDINATOR,
        world::PASSWORD,
        "the lost permission",
        |r| r.status == 403,
    )
    .await
    .assert_error(403, "permission");
}

/// Two replicas of the service on one database: a change made through one core reaches
/// the other, whose callers are warm. `poll_ms` is the second core's poll interval.
async fn a_change_through_one_core_reaches_a_replica(backend: Backend, poll_ms: u64) {
    let Some(first) = TestStack::start(backend).await else {
        return;
    };
    let mut options = StackOptions::new(backend);
    options.auth_revision_poll_ms = Some(poll_ms);
    let second = first.replica(options).await;
    warm_up(&second, world::ADMIN).await;

    demote_admin_to_learner(&first).await;
    until(
        &second,
        world::ADMIN,
        world::PASSWORD,
        "the demotion",
        |r| r.status == 403,
    )
    .await
    .assert_error(403, "permission");
    second.stop().await;
    first.stop().await;
}

/// SQLite has no notifications: the replica learns through its poll (here the default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_on_the_same_sqlite_file_learns_of_a_change_through_its_poll() {
    a_change_through_one_core_reaches_a_replica(Backend::Sqlite, 100).await;
}

/// PostgreSQL notifies: the replica learns of the change although its next poll is a minute
/// away (and its callers are trusted for three polls), so only the notification can tell it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_on_the_same_postgresql_learns_of_a_change_at_once_through_notify() {
    a_change_through_one_core_reaches_a_replica(Backend::Postgres, 60_000).await;
}

// ---- the cache ----

async fn the_cache_answers_repeated_logins_without_verifying_for_at_most_sixty_seconds(
    stack: &TestStack,
) {
    let start = verifications(stack);
    let read = async || {
        let reply = read_group(stack, world::OWNER, world::PASSWORD).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    };
    read().await;
    assert_eq!(
        verifications(stack),
        start + 1,
        "the first login is verified"
    );
    stack.clock.advance(Duration::from_secs(44));
    read().await;
    assert_eq!(
        verifications(stack),
        start + 1,
        "within 60 s the cache answers"
    );

    // In the last quarter of the TTL a request is answered from the cache and the password
    // is verified again behind it: a login in use never waits for argon2id at the TTL's end.
    // With every verification slot taken, the request is still served at once (a
    // verification in its path would wait for a slot and be shed with 503), and the renewal
    // runs anyway: it needs no slot (it runs apart, at idle priority).
    stack.clock.advance(Duration::from_secs(1));
    let slots = stack.core.auth.verifier().occupy_all_slots().await;
    let renewals = stack.core.auth.renewals_ended();
    read().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    // Until the renewal's outcome is in the cache, not only until its verification started:
    // the clock moves on next, and an entry not yet renewed would then have expired.
    while stack.core.auth.renewals_ended() == renewals {
        assert!(
            std::time::Instant::now() < deadline,
            "the renewal never ran"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(verifications(stack), start + 2, "the renewal verified once");
    drop(slots);
    // Renewed at 45 s, the login is answered past the first verification's 60 s without
    // another verification.
    stack.clock.advance(Duration::from_secs(30));
    read().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        verifications(stack),
        start + 2,
        "one renewal, not one per request"
    );

    // A login left unused for a whole TTL is verified again in its request.
    stack.clock.advance(Duration::from_secs(60));
    read().await;
    assert_eq!(
        verifications(stack),
        start + 3,
        "after 60 s unused the password is verified again"
    );

    // A wrong password for a cached login is verified, never taken from the cache.
    read_group(stack, world::OWNER, "not the password")
        .await
        .assert_error(401, "Authentication failed");
    assert_eq!(verifications(stack), start + 4);
}

async fn unknown_accounts_and_logins_cost_a_verification_like_a_wrong_password(stack: &TestStack) {
    let path = format!("/group/{}", acme::INTERNS);
    let attempts = [
        (
            "wrong password",
            world::ACME_URL,
            world::OWNER.email,
            "not the password",
        ),
        (
            "unknown login",
            world::ACME_URL,
            "ghost@acme.example.com",
            world::PASSWORD,
        ),
        (
            "unknown account",
            "https://nobody.example.com",
            world::OWNER.email,
            world::PASSWORD,
        ),
        (
            "not an account URL",
            "not a url at all",
            world::OWNER.email,
            world::PASSWORD,
        ),
        (
            "another account's login",
            world::ACME_URL,
            world::GLOBEX_OWNER.email,
            world::PASSWORD,
        ),
        (
            "deactivated user",
            world::ACME_URL,
            world::FORMER_ADMIN.email,
            world::PASSWORD,
        ),
    ];
    // Twice: a refusal is never remembered, so the second attempt costs the same.
    for round in 0..2 {
        for (what, account_url, email, password) in attempts {
            let before = verifications(stack);
            get_with(stack, &path, account_url, email, password)
                .await
                .assert_error(401, "Authentication failed");
            assert_eq!(
                verifications(stack),
                before + 1,
                "{what} costs one verification (round {round})"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_never_holds_more_than_its_bound() {
    let mut options = StackOptions::new(Backend::Sqlite);
    options.auth_cache_capacity = 3;
    let stack = TestStack::start_with(options).await.expect("SQLite");
    let logins = [
        world::OWNER,
        world::ADMIN,
        world::DEPT_ADMIN,
        world::PUBLISHER,
        world::AUTHOR,
        world::LEARNER,
        world::COORDINATOR,
        world::VIEWER,
        world::REPORTER,
        world::GLOBEX_OWNER,
    ];
    for round in 0..3 {
        for login in logins {
            let reply = read_group(&stack, login, world::PASSWORD).await;
            assert_ne!(
                reply.status, 401,
                "{} authenticates (round {round})",
                login.email
            );
            let held = stack.core.auth.cache().len();
            assert!(
                held <= 3,
                "the cache holds {held} entries, more than its bound of 3"
            );
        }
    }
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_cache_verifies_every_request() {
    let mut options = StackOptions::new(Backend::Sqlite);
    options.auth_cache_capacity = 0;
    let stack = TestStack::start_with(options).await.expect("SQLite");
    let before = verifications(&stack);
    for _ in 0..3 {
        assert_eq!(
            read_group(&stack, world::OWNER, world::PASSWORD)
                .await
                .status,
            200
        );
    }
    assert_eq!(verifications(&stack), before + 3);
    assert!(stack.core.auth.cache().is_empty());
    stack.stop().await;
}

// ---- throttling ----

async fn the_eleventh_failure_within_the_window_is_429_until_the_window_passes(stack: &TestStack) {
    for attempt in 1..=10 {
        let reply = read_group(stack, world::ADMIN, &format!("guess {attempt}")).await;
        reply.assert_error(401, "authentication failed");
    }
    // The 11th attempt is refused even with the right password, without a verification.
    let before = verifications(stack);
    let throttled = read_group(stack, world::ADMIN, world::PASSWORD).await;
    throttled.assert_error(429, "retry after");
    assert_eq!(
        verifications(stack),
        before,
        "a throttled attempt costs no verification"
    );
    let retry_after: u64 = throttled
        .header("retry-after")
        .expect("Retry-After on a 429")
        .parse()
        .expect("Retry-After in seconds");
    assert!(
        (1..=300).contains(&retry_after),
        "Retry-After {retry_after}"
    );

    // Another login of the same account is not affected, nor the same login elsewhere.
    assert_eq!(
        read_group(stack, world::OWNER, world::PASSWORD)
            .await
            .status,
        200
    );
    let globex = stack
        .get(
            &format!("/group/{}", world::globex::CREW),
            world::GLOBEX_OWNER,
        )
        .await;
    assert_eq!(globex.status, 200, "{}", globex.body);

    // Still refused just before the window passes, with a shorter Retry-After.
    stack.clock.advance(Duration::from_secs(240));
    let later = read_group(stack, world::ADMIN, world::PASSWORD).await;
    later.assert_error(429, "retry after");
    let later_retry: u64 = later
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&later_retry), "Retry-After {later_retry}");

    stack.clock.advance(Duration::from_secs(60));
    let after = read_group(stack, world::ADMIN, world::PASSWORD).await;
    assert_eq!(
        after.status, 200,
        "after the window the right password works: {}",
        after.body
    );
}

async fn failures_count_per_login_whatever_its_case(stack: &TestStack) {
    for attempt in 0..10 {
        let email = if attempt % 2 == 0 {
            "ADMIN@acme.example.com"
        } else {
            "admin@ACME.example.com"
        };
        let url = if attempt % 3 == 0 {
            "HTTPS://ACME.EXAMPLE.COM:443/"
        } else {
            world::ACME_URL
        };
        let reply = get_with(
            stack,
            &format!("/group/{}", acme::INTERNS),
            url,
            email,
            "wrong",
        )
        .await;
        reply.assert_error(401, "Authentication failed");
    }
    read_group(stack, world::ADMIN, world::PASSWORD)
        .await
        .assert_error(429, "retry after");
}

async fn concurrent_guesses_get_no_more_verifications_than_the_throttle_allows(stack: &TestStack) {
    let before = verifications(stack);
    let passwords: Vec<String> = (0..30).map(|n| format!("guess {n}")).collect();
    let guesses = passwords
        .iter()
        .map(|password| read_group(stack, world::ADMIN, password));
    let replies = futures::future::join_all(guesses).await;
    let count = |status: u16| {
        replies
            .iter()
            .filter(|reply| reply.status == status)
            .count()
    };
    assert_eq!(
        (count(401), count(429)),
        (10, 20),
        "statuses: {:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert_eq!(
        verifications(stack),
        before + 10,
        "only ten guesses were verified"
    );
}

async fn a_burst_of_logins_with_the_same_credentials_verifies_once(stack: &TestStack) {
    let before = verifications(stack);
    let burst = (0..20).map(|_| read_group(stack, world::ADMIN, world::PASSWORD));
    for reply in futures::future::join_all(burst).await {
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    assert_eq!(
        verifications(stack),
        before + 1,
        "the first verified, the others found the cache warm"
    );
}

async fn a_success_clears_earlier_failures(stack: &TestStack) {
    // Nine failures, a success, and nine more: the success forgot the first nine.
    for _ in 0..2 {
        for _ in 0..9 {
            read_group(stack, world::ADMIN, "wrong")
                .await
                .assert_error(401, "Authentication failed");
        }
        assert_eq!(
            read_group(stack, world::ADMIN, world::PASSWORD)
                .await
                .status,
            200
        );
    }
}

// ---- bounded verification ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_verification_slot_taken_cached_logins_are_served_and_the_rest_shed_with_503() {
    let mut options = StackOptions::new(Backend::Sqlite);
    options.max_concurrent_verifications = Some(1);
    options.verification_queue_timeout_ms = Some(50);
    let stack = TestStack::start_with(options).await.expect("SQLite");
    warm_up(&stack, world::OWNER).await;

    // A flood holds every slot.
    let held = stack.core.auth.verifier().occupy_all_slots().await;
    let cached = read_group(&stack, world::OWNER, world::PASSWORD).await;
    assert_eq!(
        cached.status, 200,
        "a warm login needs no slot: {}",
        cached.body
    );
    let uncached = read_group(&stack, world::ADMIN, world::PASSWORD).await;
    uncached.assert_error(503, "unavailable");
    assert_eq!(
        uncached.header("retry-after"),
        Some("1"),
        "a shed request says when to retry"
    );
    let wrong = read_group(&stack, world::DEPT_ADMIN, "wrong").await;
    wrong.assert_error(503, "unavailable");
    let unknown = get_with(
        &stack,
        &format!("/group/{}", acme::INTERNS),
        world::ACME_URL,
        "ghost@acme.example.com",
        "wrong",
    )
    .await;
    unknown.assert_error(503, "unavailable");
    // Known or unknown, a shed attempt looks the same.
    assert_eq!(
        without_request_id(&wrong.body),
        without_request_id(&unknown.body)
    );
    // A shed attempt verified nothing, so it is no failure: the login is not throttled.
    for _ in 0..12 {
        read_group(&stack, world::ADMIN, "wrong")
            .await
            .assert_error(503, "temporarily unavailable");
    }
    drop(held);

    let served = read_group(&stack, world::ADMIN, world::PASSWORD).await;
    assert_eq!(served.status, 200, "slots free again: {}", served.body);
    stack.stop().await;
}

// ---- re-hashing ----

async fn a_hash_of_lower_cost_is_rehashed_at_the_current_policy_after_a_successful_login(
    stack: &TestStack,
) {
    // The stack runs at TEST_POLICY; store a hash made at a lower cost, as an older
    // configuration would have.
    let cheaper = PasswordPolicy {
        memory_kib: 32,
        ..TEST_POLICY
    };
    let old = PasswordHasher::new(cheaper)
        .expect("policy")
        .hash(world::PASSWORD)
        .expect("hash");
    assert!(old.contains("m=32,"), "{old}");
    user::Entity::update_many()
        .col_expr(user::Column::PasswordHash, Expr::value(old.clone()))
        .filter(
            user::Column::Id
                .is_in([acme::OWNER, acme::ADMIN].map(|id| Uuid::parse_str(id).expect("uuid"))),
        )
        .exec(stack.db())
        .await
        .expect("store the old hashes");

    // A wrong password re-hashes nothing.
    read_group(stack, world::OWNER, "wrong")
        .await
        .assert_error(401, "Authentication failed");
    // The old hash still verifies...
    assert_eq!(
        read_group(stack, world::OWNER, world::PASSWORD)
            .await
            .status,
        200
    );
    // ...and is replaced in the background by one at the current policy.
    let current = format!(
        "m={},t={},p={}$",
        TEST_POLICY.memory_kib, TEST_POLICY.iterations, TEST_POLICY.parallelism
    );
    // The re-hash is written by a background task after the reply: look for it every 10 ms,
    // for at most 2 s (far more than one cheap hash and one update take).
    let mut rehashed = String::new();
    for _ in 0..200 {
        rehashed = stored_hash(stack, acme::OWNER).await;
        if rehashed != old {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        rehashed.starts_with("$argon2id$v=19$") && rehashed.contains(&current),
        "rehashed: {rehashed}"
    );
    assert_eq!(
        stored_hash(stack, acme::ADMIN).await,
        old,
        "only the user who logged in is rehashed"
    );

    // The new hash holds the same password; the cache carried over to it.
    let before = verifications(stack);
    assert_eq!(
        read_group(stack, world::OWNER, world::PASSWORD)
            .await
            .status,
        200
    );
    assert_eq!(
        verifications(stack),
        before,
        "the re-hash kept the login cached"
    );
    read_group(stack, world::OWNER, "wrong")
        .await
        .assert_error(401, "Authentication failed");
    stack.clock.advance(Duration::from_secs(61));
    assert_eq!(
        read_group(stack, world::OWNER, world::PASSWORD)
            .await
            .status,
        200
    );
    assert_eq!(
        stored_hash(stack, acme::OWNER).await,
        rehashed,
        "a current hash is not rehashed again"
    );
}

/// Error bodies carry the request id, which differs per request.
fn without_request_id(body: &str) -> String {
    match (body.find("<requestId>"), body.find("</requestId>")) {
        (Some(start), Some(end)) => format!("{}{}", &body[..start], &body[end..]),
        _ => body.to_owned(),
    }
}
