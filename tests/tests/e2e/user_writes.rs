//! `POST /user`, `POST /user/{id}/password` and `POST /user/{id}/status` (neighbours.md
//! sections 4.6, 4.9, 4.10) through the real gateway and core: both formats and both JSON
//! shapes of `fields`, the 409 whose last word is the existing user's id, changes that apply
//! on the next request, scopes, tenant isolation and refusals that change nothing.

use lms_core::entities::{audit_log, custom_role_permission};
use lms_tests::{
    Reply, TestStack, on_both_backends, post_json,
    world::{self, acme},
    xml::text_of,
};
use sea_orm::{ActiveModelTrait as _, ColumnTrait as _, EntityTrait as _, QueryFilter as _, Set};
use serde_json::Value;

on_both_backends!(
    the_owner_adds_users_in_xml_and_json_and_they_sign_in,
    a_taken_login_is_409_whose_last_word_is_the_existing_id,
    a_password_or_status_change_applies_on_the_next_request,
    scoped_callers_add_and_change_only_users_of_their_subtrees,
    bad_input_and_other_accounts_are_refused_and_nothing_changes,
    an_update_changes_only_the_fields_given,
    a_delete_removes_the_user_and_what_only_it_owns,
    a_custom_role_deletes_with_user_delete_within_its_scope_only,
);

const PASSWORD: &str = "a brand new password";

/// `method path` signed in as `email` with `password`.
async fn as_user(stack: &TestStack, email: &str, password: &str, path: &str) -> Reply {
    Reply::send(
        stack
            .http
            .get(format!("{}{path}", stack.base_url))
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", email)
            .header("X-Auth-Password", password),
    )
    .await
}

/// Whether `email` with `password` gets past authentication (a learner is then refused 403).
async fn signs_in(stack: &TestStack, email: &str, password: &str) -> bool {
    let reply = as_user(stack, email, password, "/user").await;
    assert!(matches!(reply.status, 403 | 401), "{}", reply.body);
    reply.status == 403
}

fn new_user_xml(email: &str, department: &str, extra: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><request><departmentId>{department}</departmentId>\
         <password>{PASSWORD}</password><fields><login>{email}</login><email>{email}</email>\
         <first_name>New</first_name><last_name>Hire</last_name></fields>{extra}</request>"
    )
}

async fn profile(stack: &TestStack, id: &str) -> Value {
    let reply = Reply::send(
        stack
            .request(reqwest::Method::GET, &format!("/user/{id}"), world::OWNER)
            .header("Accept", "application/json"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    serde_json::from_str(&reply.body).expect("JSON")
}

// ---------------------------------------------------------------------------------------------

async fn the_owner_adds_users_in_xml_and_json_and_they_sign_in(stack: &TestStack) {
    let xml = stack
        .post_xml(
            "/api/v2/user",
            world::OWNER,
            &new_user_xml(
                "new.hire@acme.example.com",
                acme::SALES_EAST,
                "<role>learner</role>",
            ),
        )
        .await;
    assert_eq!(xml.status, 201, "{}", xml.body);
    assert!(!xml.body.contains('\n'), "one line: {}", xml.body);
    let id = text_of(&xml.body, "response").expect("the new id");
    let made = profile(stack, &id).await;
    assert_eq!(made["role"], "learner");
    assert_eq!(
        made["fields"][0],
        serde_json::json!({"name": "FIRST_NAME", "value": "New"})
    );
    assert_eq!(
        made["fields"][1],
        serde_json::json!({"name": "LAST_NAME", "value": "Hire"})
    );
    assert_eq!(made["departmentId"], acme::SALES_EAST);
    assert_eq!(made["status"], 1);
    assert!(signs_in(stack, "NEW.HIRE@acme.example.com", PASSWORD).await);
    let audited = audit_log::Entity::find()
        .filter(audit_log::Column::EntityId.eq(uuid::Uuid::parse_str(&id).unwrap()))
        .all(stack.db())
        .await
        .expect("read");
    assert_eq!(audited.len(), 1, "the creation is audited");

    // The OpenAPI's object map, and the PHP client's list with a top-level login.
    for (n, body) in [
        format!(
            r#"{{"departmentId":"{}","password":"{PASSWORD}","fields":{{"login":"map@acme.example.com","first_name":"M"}},"role":"department_administrator","manageableDepartmentIds":["{}"]}}"#,
            acme::SALES,
            acme::SALES
        ),
        format!(
            r#"{{"departmentId":"{}","login":"list@acme.example.com","email":null,"fields":[{{"name":"FIRST_NAME","value":"L"}}],"role":"custom","roleId":"{}","sendLoginEmail":false}}"#,
            acme::SUPPORT,
            acme::VIEWER_ROLE
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let reply = post_json(stack, "/user", world::OWNER, &body).await;
        assert_eq!(reply.status, 201, "{n}: {}", reply.body);
        let id: String = serde_json::from_str(&reply.body).expect("a JSON string");
        let made = profile(stack, &id).await;
        if n == 0 {
            assert_eq!(made["role"], "department_administrator");
            assert_eq!(made["manageableDepartmentIds"], serde_json::json!([acme::SALES]));
        } else {
            assert_eq!(made["roleId"], acme::VIEWER_ROLE);
            // No password given: nobody can sign in until one is set.
            assert!(!signs_in(stack, "list@acme.example.com", PASSWORD).await);
        }
    }
}

async fn a_taken_login_is_409_whose_last_word_is_the_existing_id(stack: &TestStack) {
    let before = stack.snapshot().await;
    let xml = stack
        .post_xml(
            "/user",
            world::OWNER,
            &new_user_xml("Learner@Acme.example.com", acme::SALES, ""),
        )
        .await;
    xml.assert_error(409, "already exists");
    let message = xml.error_message();
    assert_eq!(
        message.split_whitespace().last(),
        Some(acme::LEARNER),
        "{message}"
    );
    let json = post_json(
        stack,
        "/user",
        world::OWNER,
        &format!(
            r#"{{"departmentId":"{}","fields":{{"email":"learner@acme.example.com"}}}}"#,
            acme::SALES
        ),
    )
    .await;
    assert_eq!(json.status, 409, "{}", json.body);
    let body: Value = serde_json::from_str(&json.body).expect("JSON");
    let message = body["message"].as_str().expect("a message");
    assert_eq!(
        message.split_whitespace().last(),
        Some(acme::LEARNER),
        "{message}"
    );
    assert_eq!(stack.snapshot().await, before);
}

async fn a_password_or_status_change_applies_on_the_next_request(stack: &TestStack) {
    let learner = world::LEARNER.email;
    assert!(signs_in(stack, learner, world::PASSWORD).await);
    let path = format!("/user/{}/password", acme::LEARNER);
    let changed = stack
        .post_xml(
            &path,
            world::OWNER,
            &format!("<request><password>{PASSWORD}</password></request>"),
        )
        .await;
    assert_eq!((changed.status, changed.body.as_str()), (200, ""));
    assert!(!signs_in(stack, learner, world::PASSWORD).await);
    assert!(signs_in(stack, learner, PASSWORD).await);

    let status = format!("/user/{}/status", acme::LEARNER);
    for (code, signs) in [("3", false), ("1", true), ("5", false), ("1", true)] {
        let reply = post_json(
            stack,
            &status,
            world::OWNER,
            &format!(r#"{{"status":{code}}}"#),
        )
        .await;
        assert_eq!(
            (reply.status, reply.body.as_str()),
            (200, ""),
            "status {code}"
        );
        assert_eq!(
            signs_in(stack, learner, PASSWORD).await,
            signs,
            "status {code}"
        );
        // 5 is kept apart from 3, in v1 as in v2.
        let shown = profile(stack, acme::LEARNER).await;
        assert_eq!(shown["status"].to_string(), code, "status {code}");
    }
    let xml = stack
        .post_xml(
            &status,
            world::OWNER,
            "<request><status>3</status></request>",
        )
        .await;
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert!(!signs_in(stack, learner, PASSWORD).await);
}

async fn scoped_callers_add_and_change_only_users_of_their_subtrees(stack: &TestStack) {
    let made = stack
        .post_xml(
            "/user",
            world::DEPT_ADMIN,
            &new_user_xml("east@acme.example.com", acme::SALES_EAST, ""),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let before = stack.snapshot().await;
    stack
        .post_xml(
            "/user",
            world::DEPT_ADMIN,
            &new_user_xml("eng@acme.example.com", acme::ENGINEERING, ""),
        )
        .await
        .assert_error(403, "outside the departments you manage");
    stack
        .post_xml(
            "/user",
            world::DEPT_ADMIN,
            &new_user_xml(
                "boss@acme.example.com",
                acme::SALES,
                "<role>administrator</role>",
            ),
        )
        .await
        .assert_error(403, "administrators");
    let password = format!("<request><password>{PASSWORD}</password></request>");
    stack
        .post_xml(
            &format!("/user/{}/password", acme::ENGINEER),
            world::DEPT_ADMIN,
            &password,
        )
        .await
        .assert_error(403, "departments you manage");
    for login in [
        world::LEARNER,
        world::PUBLISHER,
        world::AUTHOR,
        world::VIEWER,
    ] {
        stack
            .post_xml(
                "/user",
                login,
                &new_user_xml("x@acme.example.com", acme::SALES_EAST, ""),
            )
            .await
            .assert_error(403, "add users");
        stack
            .post_xml(
                &format!("/user/{}/status", acme::LEARNER),
                login,
                "<request><status>3</status></request>",
            )
            .await
            .assert_error(403, "change users");
    }
    assert_eq!(stack.snapshot().await, before, "refusals change nothing");
    let changed = stack
        .post_xml(
            &format!("/user/{}/password", acme::LEARNER),
            world::DEPT_ADMIN,
            &password,
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.body);
}

async fn bad_input_and_other_accounts_are_refused_and_nothing_changes(stack: &TestStack) {
    let before = stack.snapshot().await;
    let status = format!("/user/{}/status", acme::LEARNER);
    for (body, needle) in [
        ("<request><status>7</status></request>", "status '7'"),
        ("<request><status>on</status></request>", "status 'on'"),
        ("<request/>", "status"),
    ] {
        stack
            .post_xml(&status, world::OWNER, body)
            .await
            .assert_error(400, needle);
    }
    stack
        .post_xml(
            &format!("/user/{}/password", acme::LEARNER),
            world::OWNER,
            "<request><password>short</password></request>",
        )
        .await
        .assert_error(400, "password");
    stack
        .post_xml(
            "/user",
            world::OWNER,
            &new_user_xml("not-an-address", acme::SALES, ""),
        )
        .await
        .assert_error(400, "email");
    stack
        .post_xml(
            "/user",
            world::OWNER,
            &new_user_xml("a@acme.example.com", "nope", ""),
        )
        .await
        .assert_error(400, "departmentId");
    stack
        .post_xml(
            "/user",
            world::OWNER,
            &new_user_xml("a@acme.example.com", acme::SALES, "<role>boss</role>"),
        )
        .await
        .assert_error(400, "role");
    // Another account's user is not found; its department is unknown here.
    stack
        .post_xml(
            &status,
            world::GLOBEX_OWNER,
            "<request><status>3</status></request>",
        )
        .await
        .assert_error(404, "User");
    stack
        .post_xml(
            "/user",
            world::GLOBEX_OWNER,
            &new_user_xml("a@globex.example.com", acme::SALES, ""),
        )
        .await
        .assert_error(400, "departmentId");
    assert_eq!(stack.snapshot().await, before);
}

async fn an_update_changes_only_the_fields_given(stack: &TestStack) {
    let path = format!("/user/{}", acme::LEARNER);
    let reply = stack
        .post_xml(
            &path,
            world::OWNER,
            &format!(
                "<request><departmentId>{}</departmentId><role></role><fields>\
                 <login>renamed@acme.example.com</login><first_name>Lea</first_name></fields></request>",
                acme::SUPPORT
            ),
        )
        .await;
    assert_eq!((reply.status, reply.body.as_str()), (200, ""));
    let changed = profile(stack, acme::LEARNER).await;
    assert_eq!(changed["departmentId"], acme::SUPPORT);
    assert_eq!(changed["role"], "learner");
    assert_eq!(changed["fields"][0]["value"], "Lea");
    assert_eq!(changed["fields"][3]["value"], "renamed@acme.example.com");
    // The login is what the user signs in with, from the next request on.
    assert!(!signs_in(stack, world::LEARNER.email, world::PASSWORD).await);
    assert!(signs_in(stack, "renamed@acme.example.com", world::PASSWORD).await);
    // JSON, the PHP client's shape; a role and managed departments.
    let reply = post_json(
        stack,
        &path,
        world::OWNER,
        &format!(
            r#"{{"role":"department_administrator","manageableDepartmentIds":["{}"],"fields":[{{"name":"LAST_NAME","value":"Lee"}}]}}"#,
            acme::SUPPORT
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let changed = profile(stack, acme::LEARNER).await;
    assert_eq!(changed["role"], "department_administrator");
    assert_eq!(
        changed["manageableDepartmentIds"],
        serde_json::json!([acme::SUPPORT])
    );
    assert_eq!(changed["fields"][1]["value"], "Lee");
    assert_eq!(
        changed["fields"][0]["value"], "Lea",
        "not given, not changed"
    );
    // Another user's login is taken: 400 naming it and that user.
    let before = stack.snapshot().await;
    stack
        .post_xml(
            &path,
            world::OWNER,
            "<request><fields><email>engineer@acme.example.com</email></fields></request>",
        )
        .await
        .assert_error(400, acme::ENGINEER);
    // A department administrator may not move a user out of its subtrees.
    stack
        .post_xml(
            &format!("/user/{}", acme::COORDINATOR),
            world::DEPT_ADMIN,
            &format!(
                "<request><departmentId>{}</departmentId></request>",
                acme::ENGINEERING
            ),
        )
        .await
        .assert_error(403, "outside the departments you manage");
    stack
        .post_xml(&path, world::GLOBEX_OWNER, "<request/>")
        .await
        .assert_error(404, "User");
    assert_eq!(stack.snapshot().await, before);
}

async fn a_delete_removes_the_user_and_what_only_it_owns(stack: &TestStack) {
    let path = format!("/api/v2/user/{}", acme::LEARNER);
    let before = stack.snapshot().await;
    for login in [world::LEARNER, world::PUBLISHER, world::AUTHOR] {
        let reply = Reply::send(stack.request(reqwest::Method::DELETE, &path, login)).await;
        reply.assert_error(403, "delete users");
    }
    let foreign =
        Reply::send(stack.request(reqwest::Method::DELETE, &path, world::GLOBEX_OWNER)).await;
    foreign.assert_error(404, "User");
    // The author of content items stays (the items name it): refused, nothing changes.
    let owner = Reply::send(stack.request(
        reqwest::Method::DELETE,
        &format!("/user/{}", acme::AUTHOR),
        world::OWNER,
    ))
    .await;
    owner.assert_error(400, "content items");
    assert_eq!(stack.snapshot().await, before);

    // The learner has enrollments, points and a group: all go with it.
    let deleted =
        Reply::send(stack.request(reqwest::Method::DELETE, &path, world::DEPT_ADMIN)).await;
    assert_eq!((deleted.status, deleted.body.as_str()), (204, ""));
    stack
        .get(&format!("/user/{}", acme::LEARNER), world::OWNER)
        .await
        .assert_error(404, "User");
    assert!(!signs_in(stack, world::LEARNER.email, world::PASSWORD).await);
    let group = stack
        .get(&format!("/group/{}", acme::INTERNS), world::OWNER)
        .await;
    assert!(!group.body.contains(acme::LEARNER), "{}", group.body);
    let again = Reply::send(stack.request(reqwest::Method::DELETE, &path, world::OWNER)).await;
    again.assert_error(404, "User");
}

async fn a_custom_role_deletes_with_user_delete_within_its_scope_only(stack: &TestStack) {
    let made = stack
        .post_xml(
            "/user",
            world::OWNER,
            &new_user_xml("leaver@acme.example.com", acme::SALES_EAST, ""),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let id = text_of(&made.body, "response").expect("the new id");
    // Without the permission (another custom role): 403. With it, within its subtrees only.
    Reply::send(stack.request(
        reqwest::Method::DELETE,
        &format!("/user/{id}"),
        world::VIEWER,
    ))
    .await
    .assert_error(403, "delete users");
    // Granted before the coordinator's first request, as an administrator would.
    custom_role_permission::ActiveModel {
        custom_role_id: Set(uuid::Uuid::parse_str(acme::COORDINATOR_ROLE).unwrap()),
        permission: Set("user.delete".to_owned()),
    }
    .insert(stack.db())
    .await
    .expect("a permission added");
    let delete = |path: String| async move {
        Reply::send(stack.request(reqwest::Method::DELETE, &path, world::COORDINATOR)).await
    };
    delete(format!("/user/{}", acme::ENGINEER))
        .await
        .assert_error(403, "departments you manage");
    let deleted = delete(format!("/user/{id}")).await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
}
