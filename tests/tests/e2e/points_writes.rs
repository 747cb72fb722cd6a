//! `POST /gamification/points/award` and `/withdraw` (neighbours.md 8.1, 8.2; open question
//! 20) through the real gateway and core: the documented roots and `request`, JSON, every
//! prefix, amount rules, no total below 0, the permission table with scopes, tenant isolation,
//! audit rows with the reason, and a token alone.

use lms_core::entities::{audit_log, custom_role_permission};
use lms_tests::{
    Reply, TestStack, on_both_backends, post_json,
    world::{self, Login, acme, globex},
    xml::text_of,
};
use sea_orm::{
    ActiveModelTrait as _, ColumnTrait as _, EntityTrait as _, QueryFilter as _, QueryOrder as _,
    Set, prelude::Uuid,
};
use serde_json::{Value, json};

on_both_backends!(
    the_owner_awards_and_withdraws_in_xml_and_json_under_every_prefix,
    bad_amounts_and_users_are_400_naming_the_field_and_nothing_changes,
    a_withdrawal_never_takes_a_total_below_zero,
    scoped_callers_move_points_of_their_users_only_and_others_are_refused,
    another_accounts_users_are_unknown_and_keep_their_points,
    a_token_alone_awards_and_withdraws,
);

const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];

/// The points of `user` as the owner reads them.
async fn points_of(stack: &TestStack, login: Login, user: &str) -> i64 {
    let reply = stack
        .get(&format!("/gamification/points?userIds={user}"), login)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    text_of(&reply.body, "points")
        .expect("points")
        .parse()
        .expect("a number")
}

fn award(user: &str, amount: &str) -> String {
    format!(
        "<awardGamificationPoints><userId>{user}</userId><amount>{amount}</amount>\
         <reason>Quiz passed</reason></awardGamificationPoints>"
    )
}

fn withdraw(user: &str, amount: &str) -> String {
    format!(
        "<withdrawGamificationPoints><userId>{user}</userId><amount>{amount}</amount>\
         <reason>Shop</reason></withdrawGamificationPoints>"
    )
}

const AWARD: &str = "/gamification/points/award";
const WITHDRAW: &str = "/gamification/points/withdraw";

async fn the_owner_awards_and_withdraws_in_xml_and_json_under_every_prefix(stack: &TestStack) {
    let mut expected = 421;
    for prefix in PREFIXES {
        let reply = stack
            .post_xml(
                &format!("{prefix}{AWARD}"),
                world::OWNER,
                &award(acme::LEARNER, "10"),
            )
            .await;
        assert_eq!((reply.status, reply.body.as_str()), (200, ""));
        expected += 10;
        let reply = stack
            .post_xml(
                &format!("{prefix}{WITHDRAW}/"),
                world::OWNER,
                &withdraw(acme::LEARNER, "3"),
            )
            .await;
        assert_eq!((reply.status, reply.body.as_str()), (200, ""));
        expected -= 3;
        assert_eq!(
            points_of(stack, world::OWNER, acme::LEARNER).await,
            expected
        );
    }
    // The `request` root, and JSON with the amount as a number or a string.
    let reply = stack
        .post_xml(
            AWARD,
            world::OWNER,
            &format!(
                "<request><userId>{}</userId><amount>5</amount></request>",
                acme::ENGINEER
            ),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply = post_json(
        stack,
        AWARD,
        world::OWNER,
        &json!({"userId": acme::ENGINEER, "amount": 10, "reason": "Bonus"}),
    )
    .await;
    assert_eq!((reply.status, reply.body.as_str()), (200, ""));
    let reply = post_json(
        stack,
        WITHDRAW,
        world::OWNER,
        &json!({"request": {"userId": acme::ENGINEER, "amount": "2", "reason": null}}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        points_of(stack, world::OWNER, acme::ENGINEER).await,
        17 + 5 + 10 - 2
    );
    // A user with no points yet starts from 0.
    let reply = stack
        .post_xml(AWARD, world::OWNER, &award(acme::SUPPORTER, "7"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(points_of(stack, world::OWNER, acme::SUPPORTER).await, 7);

    let rows = audit_log::Entity::find()
        .filter(audit_log::Column::EntityId.eq(Uuid::parse_str(acme::ENGINEER).unwrap()))
        .order_by_asc(audit_log::Column::CreatedAt)
        .all(stack.db())
        .await
        .unwrap();
    let mut actions: Vec<&str> = rows.iter().map(|row| row.action.as_str()).collect();
    actions.sort_unstable();
    assert_eq!(actions, ["points.award", "points.award", "points.withdraw"]);
    let afters: Vec<Value> = rows
        .iter()
        .map(|row| serde_json::from_str(row.after.as_deref().unwrap()).unwrap())
        .collect();
    assert!(
        afters.contains(&json!({"points": 32, "amount": 10, "reason": "Bonus"})),
        "{afters:?}"
    );
}

async fn bad_amounts_and_users_are_400_naming_the_field_and_nothing_changes(stack: &TestStack) {
    let before = stack.snapshot().await;
    for amount in ["0", "-5", "1.5", "ten", "1000001", ""] {
        for (path, body) in [
            (AWARD, award(acme::LEARNER, amount)),
            (WITHDRAW, withdraw(acme::LEARNER, amount)),
        ] {
            stack
                .post_xml(path, world::OWNER, &body)
                .await
                .assert_error(400, "amount");
        }
    }
    for (body, needle) in [
        (award("", "5"), "userId"),
        (award("nope", "5"), "userId"),
        (award("0191a000-0000-7000-8000-00000000dead", "5"), "userId"),
        ("<request><amount>5</amount></request>".to_owned(), "userId"),
        (withdraw(acme::LEARNER, "5"), "awardGamificationPoints"),
        (
            format!(
                "<request><userId>{}</userId><amount>1</amount><amount>2</amount></request>",
                acme::LEARNER
            ),
            "amount",
        ),
    ] {
        stack
            .post_xml(AWARD, world::OWNER, &body)
            .await
            .assert_error(400, needle);
    }
    let reply = post_json(
        stack,
        AWARD,
        world::OWNER,
        &json!({"userId": acme::LEARNER, "amount": 2.5}),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(reply.body.contains("amount"), "{}", reply.body);
    // Permission before input.
    stack
        .post_xml(AWARD, world::LEARNER, &award("nope", "ten"))
        .await
        .assert_error(403, "permission to award or withdraw points");
    stack
        .request(reqwest::Method::GET, AWARD, world::OWNER)
        .send()
        .await
        .map(|response| assert_eq!(response.status(), 405))
        .unwrap();
    assert_eq!(
        stack.snapshot().await,
        before,
        "a refusal changed something"
    );
}

async fn a_withdrawal_never_takes_a_total_below_zero(stack: &TestStack) {
    let before = stack.snapshot().await;
    stack
        .post_xml(WITHDRAW, world::OWNER, &withdraw(acme::ENGINEER, "18"))
        .await
        .assert_error(400, "below 0");
    // A user with no points row has 0.
    stack
        .post_xml(WITHDRAW, world::OWNER, &withdraw(acme::SUPPORTER, "1"))
        .await
        .assert_error(400, "below 0");
    assert_eq!(stack.snapshot().await, before);
    let reply = stack
        .post_xml(WITHDRAW, world::OWNER, &withdraw(acme::ENGINEER, "17"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(points_of(stack, world::OWNER, acme::ENGINEER).await, 0);
}

async fn scoped_callers_move_points_of_their_users_only_and_others_are_refused(stack: &TestStack) {
    // Sales' administrator: Sales East's learner yes, Engineering's engineer no.
    let reply = stack
        .post_xml(AWARD, world::DEPT_ADMIN, &award(acme::LEARNER, "4"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply = stack
        .post_xml(WITHDRAW, world::DEPT_ADMIN, &withdraw(acme::LEARNER, "1"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(points_of(stack, world::OWNER, acme::LEARNER).await, 424);
    let before = stack.snapshot().await;
    stack
        .post_xml(AWARD, world::DEPT_ADMIN, &award(acme::ENGINEER, "4"))
        .await
        .assert_error(403, "outside the departments you manage");
    for login in [
        world::PUBLISHER,
        world::AUTHOR,
        world::LEARNER,
        world::VIEWER,
        world::REPORTER,
    ] {
        stack
            .post_xml(AWARD, login, &award(acme::LEARNER, "1"))
            .await
            .assert_error(403, "permission to award or withdraw points");
    }
    assert_eq!(stack.snapshot().await, before);
    // The Reporter (managing Engineering) given `points.award`.
    custom_role_permission::ActiveModel {
        custom_role_id: Set(Uuid::parse_str(acme::REPORTER_ROLE).unwrap()),
        permission: Set("points.award".to_owned()),
    }
    .insert(stack.db())
    .await
    .unwrap();
    stack.forget_remembered_callers();
    let reply = stack
        .post_xml(AWARD, world::REPORTER, &award(acme::ENGINEER, "3"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(points_of(stack, world::OWNER, acme::ENGINEER).await, 20);
    stack
        .post_xml(WITHDRAW, world::REPORTER, &withdraw(acme::SUPPORTER, "1"))
        .await
        .assert_error(403, "outside the departments you manage");
}

async fn another_accounts_users_are_unknown_and_keep_their_points(stack: &TestStack) {
    let before = stack.snapshot().await;
    for (path, body) in [
        (AWARD, award(globex::WORKER, "5")),
        (WITHDRAW, withdraw(globex::WORKER, "5")),
    ] {
        stack
            .post_xml(path, world::OWNER, &body)
            .await
            .assert_error(400, "does not name a user of this account");
    }
    stack
        .post_xml(AWARD, world::GLOBEX_OWNER, &award(acme::LEARNER, "5"))
        .await
        .assert_error(400, "userId");
    assert_eq!(stack.snapshot().await, before);
    assert_eq!(
        points_of(stack, world::GLOBEX_OWNER, globex::WORKER).await,
        99
    );
}

async fn a_token_alone_awards_and_withdraws(stack: &TestStack) {
    let bearer = stack.bearer_for(acme::ADMIN).await;
    for (path, body) in [
        (format!("/api/v2{AWARD}"), award(acme::LEARNER, "9")),
        (
            format!("/index.php/api/v2{WITHDRAW}"),
            withdraw(acme::LEARNER, "4"),
        ),
    ] {
        let reply = Reply::send(
            stack
                .http
                .post(format!("{}{path}", stack.base_url))
                .header("Authorization", bearer.trim_start_matches("Bearer "))
                .header("Content-Type", "application/xml")
                .body(body),
        )
        .await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
    }
    assert_eq!(points_of(stack, world::OWNER, acme::LEARNER).await, 426);
}
