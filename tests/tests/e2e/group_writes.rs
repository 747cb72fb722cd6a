//! `POST /group`, `DELETE /group/{id}` and `POST /group/{id}/members` (neighbours.md 7.3 to
//! 7.5) through the real gateway and core: both formats, every prefix, the permission table
//! with department administrators' scopes (members outside a scope stay), tenant isolation,
//! refusals that change nothing, audit rows, and a token alone.

use lms_core::entities::{audit_log, user};
use lms_tests::{
    Reply, TestStack, on_both_backends,
    rows::grant,
    world::{self, Login, acme, globex},
    xml::{text_of, texts_of},
};
use sea_orm::{ColumnTrait as _, EntityTrait as _, QueryFilter as _, prelude::Uuid};
use serde_json::{Value, json};

on_both_backends!(
    the_owner_creates_groups_in_xml_and_json_under_every_prefix,
    bad_new_groups_are_400_naming_the_field_and_nothing_is_made,
    who_creates_groups_and_department_administrators_only_with_their_users,
    the_owner_replaces_members_and_an_empty_list_removes_them_all,
    a_department_administrator_replaces_only_members_in_its_scope,
    bad_member_lists_and_smart_groups_are_refused_and_nothing_changes,
    deletes_are_204_then_404_and_scoped_to_groups_whose_members_are_in_scope,
    another_accounts_groups_are_not_found_and_stay_untouched,
    a_token_alone_creates_replaces_and_deletes,
);

const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];

async fn send_json(
    stack: &TestStack,
    method: reqwest::Method,
    path: &str,
    login: Login,
    body: &Value,
) -> Reply {
    Reply::send(
        stack
            .request(method, path, login)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(body.to_string()),
    )
    .await
}

async fn delete(stack: &TestStack, path: &str, login: Login) -> Reply {
    Reply::send(stack.request(reqwest::Method::DELETE, path, login)).await
}

/// The member ids of a group as the owner reads them.
async fn members(stack: &TestStack, group: &str) -> Vec<String> {
    let reply = stack.get(&format!("/group/{group}"), world::OWNER).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    texts_of(&reply.body, "id")
}

fn ids_xml(ids: &[&str]) -> String {
    ids.iter().map(|id| format!("<id>{id}</id>")).collect()
}

async fn audit_actions(stack: &TestStack, entity: &str) -> Vec<String> {
    audit_log::Entity::find()
        .filter(audit_log::Column::EntityId.eq(Uuid::parse_str(entity).unwrap()))
        .all(stack.db())
        .await
        .expect("audit rows")
        .into_iter()
        .map(|row| row.action)
        .collect()
}

async fn the_owner_creates_groups_in_xml_and_json_under_every_prefix(stack: &TestStack) {
    for prefix in PREFIXES {
        let body = format!(
            "<request><name>New Hires</name><userIds>{}</userIds></request>",
            ids_xml(&[acme::SUPPORTER, acme::LEARNER])
        );
        let reply = stack
            .post_xml(&format!("{prefix}/group"), world::OWNER, &body)
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        // One line, as clients read it with `<response>(.*)</response>`.
        assert!(!reply.body.contains('\n'), "{}", reply.body);
        let id = text_of(&reply.body, "response").expect("the new id");
        let mut expected = vec![acme::LEARNER.to_owned(), acme::SUPPORTER.to_owned()];
        expected.sort();
        assert_eq!(members(stack, &id).await, expected);
        assert_eq!(audit_actions(stack, &id).await, ["group.create"]);
    }
    // C1 sends an empty `<userIds/>`; names need not be unique (Q18).
    for _ in 0..2 {
        let reply = stack
            .post_xml(
                "/group",
                world::OWNER,
                "<request><name>Interns &amp; &lt;Juniors&gt;</name><userIds/></request>",
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    let reply = send_json(
        stack,
        reqwest::Method::POST,
        "/group",
        world::OWNER,
        &json!({"name": "From JSON", "userIds": [acme::ENGINEER], "colour": null}),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let id: String = serde_json::from_str(&reply.body).expect("a JSON string");
    assert_eq!(members(stack, &id).await, [acme::ENGINEER]);
    let listed = stack.get("/group", world::OWNER).await;
    assert_eq!(texts_of(&listed.body, "groupId").len(), 3 + 3 + 2 + 1);
}

async fn bad_new_groups_are_400_naming_the_field_and_nothing_is_made(stack: &TestStack) {
    let before = stack.snapshot().await;
    let worker = globex::WORKER;
    for (body, needle) in [
        ("<request><userIds/></request>".to_owned(), "name"),
        ("<request><name>  </name></request>".to_owned(), "name"),
        (
            format!("<request><name>{}</name></request>", "x".repeat(256)),
            "name",
        ),
        (
            "<request><name>A</name><userIds><id>nope</id></userIds></request>".to_owned(),
            "userIds",
        ),
        (
            format!("<request><name>A</name><userIds><id>{worker}</id></userIds></request>"),
            "userIds",
        ),
        (
            "<request><name>A</name><name>B</name></request>".to_owned(),
            "name",
        ),
        ("<group><name>A</name></group>".to_owned(), "request"),
    ] {
        stack
            .post_xml("/group", world::OWNER, &body)
            .await
            .assert_error(400, needle);
    }
    let reply = send_json(
        stack,
        reqwest::Method::POST,
        "/group",
        world::OWNER,
        &json!({"name": "A", "userIds": "not a list"}),
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    // Permission before input.
    stack
        .post_xml("/group", world::LEARNER, "<request/>")
        .await
        .assert_error(403, "permission to add groups");
    assert_eq!(stack.snapshot().await, before, "a refusal made something");
}

async fn who_creates_groups_and_department_administrators_only_with_their_users(stack: &TestStack) {
    let body = |ids: &[&str]| {
        format!(
            "<request><name>Team</name><userIds>{}</userIds></request>",
            ids_xml(ids)
        )
    };
    for login in [
        world::PUBLISHER,
        world::AUTHOR,
        world::LEARNER,
        world::VIEWER,
        world::COORDINATOR,
    ] {
        stack
            .post_xml("/group", login, &body(&[]))
            .await
            .assert_error(403, "permission to add groups");
    }
    assert_eq!(
        stack
            .post_xml("/group", world::ADMIN, &body(&[acme::ENGINEER]))
            .await
            .status,
        201
    );
    // Sales' administrator adds Sales East's learner, but not Engineering's engineer.
    let made = stack
        .post_xml("/group", world::DEPT_ADMIN, &body(&[acme::LEARNER]))
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let before = stack.snapshot().await;
    stack
        .post_xml(
            "/group",
            world::DEPT_ADMIN,
            &body(&[acme::LEARNER, acme::ENGINEER]),
        )
        .await
        .assert_error(403, acme::ENGINEER);
    assert_eq!(stack.snapshot().await, before);
    // A custom role with `group.create`, scoped like the department administrator.
    grant(stack, acme::COORDINATOR_ROLE, "group.create").await;
    stack.forget_remembered_callers();
    assert_eq!(
        stack
            .post_xml("/group", world::COORDINATOR, &body(&[acme::LEARNER]))
            .await
            .status,
        201
    );
    stack
        .post_xml("/group", world::COORDINATOR, &body(&[acme::SUPPORTER]))
        .await
        .assert_error(403, "outside the departments you manage");
}

async fn the_owner_replaces_members_and_an_empty_list_removes_them_all(stack: &TestStack) {
    for prefix in PREFIXES {
        let reply = stack
            .post_xml(
                &format!("{prefix}/group/{}/members", acme::INTERNS),
                world::OWNER,
                &format!(
                    "<request><userIds>{}</userIds></request>",
                    ids_xml(&[acme::SUPPORTER, acme::LEARNER, acme::LEARNER])
                ),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body, "", "200 with an empty body");
        assert_eq!(
            members(stack, acme::INTERNS).await,
            [acme::LEARNER, acme::SUPPORTER]
        );
    }
    let reply = send_json(
        stack,
        reqwest::Method::POST,
        &format!("/group/{}/members", acme::INTERNS),
        world::OWNER,
        &json!({"request": {"userIds": [acme::ENGINEER]}}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(members(stack, acme::INTERNS).await, [acme::ENGINEER]);
    let reply = stack
        .post_xml(
            &format!("/group/{}/members", acme::INTERNS),
            world::OWNER,
            "<request><userIds/></request>",
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(members(stack, acme::INTERNS).await.is_empty());
    // The same list again changes nothing and records nothing more.
    let audited = audit_actions(stack, acme::INTERNS).await;
    assert_eq!(
        audited
            .iter()
            .filter(|a| *a == "group.replace_members")
            .count(),
        3,
        "{audited:?}"
    );
    let reply = stack
        .post_xml(
            &format!("/group/{}/members", acme::INTERNS),
            world::OWNER,
            "<request><userIds/></request>",
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(audit_actions(stack, acme::INTERNS).await, audited);
}

async fn a_department_administrator_replaces_only_members_in_its_scope(stack: &TestStack) {
    // Interns holds Engineering's engineer and Sales East's learner; Sales' administrator
    // empties the group: only its own learner goes.
    let path = format!("/group/{}/members", acme::INTERNS);
    let reply = stack
        .post_xml(&path, world::DEPT_ADMIN, "<request><userIds/></request>")
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(members(stack, acme::INTERNS).await, [acme::ENGINEER]);
    // Adding its own users keeps the engineer too.
    let reply = stack
        .post_xml(
            &path,
            world::DEPT_ADMIN,
            &format!(
                "<request><userIds>{}</userIds></request>",
                ids_xml(&[acme::LEARNER, acme::COORDINATOR])
            ),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let mut expected = vec![acme::ENGINEER, acme::LEARNER, acme::COORDINATOR];
    expected.sort_unstable();
    assert_eq!(members(stack, acme::INTERNS).await, expected);
    // Naming a user outside its scope is refused whole.
    let before = stack.snapshot().await;
    stack
        .post_xml(
            &path,
            world::DEPT_ADMIN,
            &format!(
                "<request><userIds>{}</userIds></request>",
                ids_xml(&[acme::SUPPORTER])
            ),
        )
        .await
        .assert_error(403, acme::SUPPORTER);
    assert_eq!(stack.snapshot().await, before);
    for login in [
        world::PUBLISHER,
        world::AUTHOR,
        world::LEARNER,
        world::VIEWER,
    ] {
        stack
            .post_xml(&path, login, "<request><userIds/></request>")
            .await
            .assert_error(403, "permission to change the members");
    }
}

async fn bad_member_lists_and_smart_groups_are_refused_and_nothing_changes(stack: &TestStack) {
    let before = stack.snapshot().await;
    let interns = format!("/group/{}/members", acme::INTERNS);
    for (path, body, status, needle) in [
        (interns.clone(), "<request/>".to_owned(), 400, "userIds"),
        (
            interns.clone(),
            "<request><userIds><id>nope</id></userIds></request>".to_owned(),
            400,
            "userIds",
        ),
        (
            interns.clone(),
            format!(
                "<request><userIds><id>{}</id></userIds></request>",
                globex::WORKER
            ),
            400,
            "userIds",
        ),
        (
            format!("/group/{}/members", acme::ALL_OF_SALES),
            "<request><userIds/></request>".to_owned(),
            400,
            "smart group",
        ),
        (
            "/group/0191a000-0000-7000-8000-00000000dead/members".to_owned(),
            "<request><userIds/></request>".to_owned(),
            404,
            "Group '0191a000-0000-7000-8000-00000000dead' was not found",
        ),
        (
            "/group/not-an-id/members".to_owned(),
            "<request><userIds/></request>".to_owned(),
            404,
            "Group 'not-an-id' was not found",
        ),
    ] {
        stack
            .post_xml(&path, world::OWNER, &body)
            .await
            .assert_error(status, needle);
    }
    let too_many: String = (0..10_001)
        .map(|n| format!("<id>0191a000-0000-7000-8000-{n:012}</id>"))
        .collect();
    stack
        .post_xml(
            &interns,
            world::OWNER,
            &format!("<request><userIds>{too_many}</userIds></request>"),
        )
        .await
        .assert_error(400, "10000");
    assert_eq!(
        stack.snapshot().await,
        before,
        "a refusal changed something"
    );
}

async fn deletes_are_204_then_404_and_scoped_to_groups_whose_members_are_in_scope(
    stack: &TestStack,
) {
    for login in [
        world::PUBLISHER,
        world::AUTHOR,
        world::LEARNER,
        world::VIEWER,
    ] {
        delete(stack, &format!("/group/{}", acme::EMPTY_GROUP), login)
            .await
            .assert_error(403, "permission to delete groups");
    }
    // Interns has Engineering's engineer: not Sales' administrator's to delete.
    delete(
        stack,
        &format!("/group/{}", acme::INTERNS),
        world::DEPT_ADMIN,
    )
    .await
    .assert_error(403, "outside the departments you manage");
    // The smart group follows Sales: its administrator may delete it.
    let reply = delete(
        stack,
        &format!("/api/v2/group/{}", acme::ALL_OF_SALES),
        world::DEPT_ADMIN,
    )
    .await;
    assert_eq!(reply.status, 204, "{}", reply.body);
    assert_eq!(reply.body, "");
    let reply = delete(stack, &format!("/group/{}", acme::INTERNS), world::OWNER).await;
    assert_eq!(reply.status, 204, "{}", reply.body);
    delete(stack, &format!("/group/{}", acme::INTERNS), world::OWNER)
        .await
        .assert_error(404, &format!("Group '{}' was not found", acme::INTERNS));
    stack
        .get(&format!("/group/{}", acme::INTERNS), world::OWNER)
        .await
        .assert_error(404, &format!("Group '{}' was not found", acme::INTERNS));
    assert_eq!(
        audit_actions(stack, acme::INTERNS).await,
        ["group.delete"],
        "the delete is audited"
    );
    let row = audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq("group.delete"))
        .filter(audit_log::Column::EntityId.eq(Uuid::parse_str(acme::INTERNS).unwrap()))
        .one(stack.db())
        .await
        .unwrap()
        .expect("a row");
    let before: Value = serde_json::from_str(&row.before.expect("before")).unwrap();
    assert_eq!(before["userIds"].as_array().map(Vec::len), Some(2));
    // The users stay.
    assert!(
        user::Entity::find_by_id(Uuid::parse_str(acme::ENGINEER).unwrap())
            .one(stack.db())
            .await
            .unwrap()
            .is_some()
    );
    delete(stack, "/group/nope", world::OWNER)
        .await
        .assert_error(404, "Group 'nope' was not found");
    let listed = stack.get("/group", world::OWNER).await;
    assert_eq!(texts_of(&listed.body, "groupId"), [acme::EMPTY_GROUP]);
}

async fn another_accounts_groups_are_not_found_and_stay_untouched(stack: &TestStack) {
    let before = stack.snapshot().await;
    let crew = format!("/group/{}", globex::CREW);
    delete(stack, &crew, world::OWNER)
        .await
        .assert_error(404, &format!("Group '{}' was not found", globex::CREW));
    stack
        .post_xml(
            &format!("{crew}/members"),
            world::OWNER,
            "<request><userIds/></request>",
        )
        .await
        .assert_error(404, &format!("Group '{}' was not found", globex::CREW));
    assert_eq!(stack.snapshot().await, before);
    // Globex's owner may not put Acme's users in its group either.
    stack
        .post_xml(
            &format!("{crew}/members"),
            world::GLOBEX_OWNER,
            &format!(
                "<request><userIds><id>{}</id></userIds></request>",
                acme::LEARNER
            ),
        )
        .await
        .assert_error(400, "userIds");
    assert_eq!(stack.snapshot().await, before);
}

async fn a_token_alone_creates_replaces_and_deletes(stack: &TestStack) {
    let bearer = stack.bearer_for(acme::ADMIN).await;
    let with_token = |method: reqwest::Method, path: &str| {
        stack
            .http
            .request(method, format!("{}{path}", stack.base_url))
            .header("Authorization", bearer.as_str())
    };
    let made = Reply::send(
        with_token(reqwest::Method::POST, "/index.php/api/v2/group")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(json!({"name": "Token team", "userIds": []}).to_string()),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let id: String = serde_json::from_str(&made.body).unwrap();
    let replaced = Reply::send(
        with_token(
            reqwest::Method::POST,
            &format!("/api/v2/group/{id}/members/"),
        )
        .header("Content-Type", "text/xml; charset=UTF-8")
        .body(format!(
            "<request><userIds><id>{}</id></userIds></request>",
            acme::LEARNER
        )),
    )
    .await;
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(members(stack, &id).await, [acme::LEARNER]);
    let deleted = Reply::send(with_token(reqwest::Method::DELETE, &format!("/group/{id}"))).await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
}
