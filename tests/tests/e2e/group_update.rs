//! `POST /group/{group_id}` (interface 4.3, rename a group) through the real gateway and core:
//! an empty 200, the new name read back through `GET /group`, the audit row, validation, the
//! permission table and XML text decoding.

use lms_core::entities::group;
use lms_tests::{
    Reply, TestStack, on_both_backends,
    rows::audit_rows,
    uuid,
    world::{self, Login, acme, globex},
    xml::{PROLOGUE, request, text_of, texts_of},
};
use sea_orm::EntityTrait as _;
use serde_json::json;

const UNKNOWN_GROUP: &str = "0191a000-0000-7000-8000-0000000003ff";

on_both_backends!(
    owner_renames_a_group_and_reads_the_new_name_back,
    an_update_without_a_name_is_a_no_op_200_without_an_audit_row,
    blank_and_overlong_names_are_refused_naming_name,
    a_name_of_255_characters_is_accepted,
    unknown_malformed_and_foreign_groups_are_404,
    every_role_of_the_permission_table_gets_its_answer,
    entities_character_references_and_cdata_are_decoded,
    a_smart_group_is_renamed_and_stays_smart,
    update_accepts_xml_content_types_and_no_content_type_but_refuses_json,
    update_without_valid_credentials_is_401,
    update_refuses_bodies_the_xml_rules_forbid,
    checks_run_in_the_documented_order,
);

fn name_body(name: &str) -> String {
    request(&format!("<name>{name}</name>"))
}

fn group_path(id: &str) -> String {
    format!("/group/{id}")
}

/// Asserts the documented success: 200 and no body at all.
#[track_caller]
fn assert_empty_ok(reply: &Reply) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply.body.is_empty(),
        "a 200 from update has an empty body: {:?}",
        reply.body
    );
    assert!(
        reply
            .header("content-length")
            .is_none_or(|length| length == "0"),
        "{:?}",
        reply.headers
    );
}

async fn stored_name(stack: &TestStack, id: &str) -> String {
    group::Entity::find_by_id(uuid(id))
        .one(stack.db())
        .await
        .expect("read the group")
        .expect("the group is stored")
        .name
}

/// The name `GET /group` answers, read as the owner.
async fn name_read_back(stack: &TestStack, id: &str) -> String {
    let reply = stack.get(&group_path(id), world::OWNER).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    text_of(&reply.body, "name").expect("a name")
}

/// Asserts the one `group.update` audit row written under `request_id`.
async fn assert_rename_audited(
    stack: &TestStack,
    request_id: &str,
    actor: Login,
    group_id: &str,
    before: &str,
    after: &str,
) {
    let rows = audit_rows(stack, request_id).await;
    assert_eq!(rows.len(), 1, "one audit row for {request_id}: {rows:#?}");
    let row = &rows[0];
    assert_eq!(row.action, "group.update");
    assert_eq!(row.entity_type, "group");
    assert_eq!(row.entity_id, uuid(group_id));
    assert_eq!(row.actor_user_id, Some(uuid(actor.id)));
    let parse = |text: &Option<String>| {
        text.as_deref()
            .map(|t| serde_json::from_str::<serde_json::Value>(t).expect("JSON"))
    };
    assert_eq!(parse(&row.before), Some(json!({ "name": before })));
    assert_eq!(parse(&row.after), Some(json!({ "name": after })));
}

async fn owner_renames_a_group_and_reads_the_new_name_back(stack: &TestStack) {
    let reply = stack
        .post_with_id(
            &group_path(acme::INTERNS),
            world::OWNER,
            "rename-1",
            &name_body("Interns 2025"),
        )
        .await;
    assert_empty_ok(&reply);
    assert_eq!(reply.header("x-request-id"), Some("rename-1"));
    assert_eq!(name_read_back(stack, acme::INTERNS).await, "Interns 2025");
    assert_eq!(stored_name(stack, acme::INTERNS).await, "Interns 2025");
    assert_rename_audited(
        stack,
        "rename-1",
        world::OWNER,
        acme::INTERNS,
        "Interns & <Juniors>",
        "Interns 2025",
    )
    .await;

    // Members are untouched; the id is accepted in any case.
    let reply = stack.get(&group_path(acme::INTERNS), world::OWNER).await;
    assert_eq!(texts_of(&reply.body, "id"), [acme::LEARNER, acme::ENGINEER]);
    let reply = stack
        .post_with_id(
            &group_path(&acme::INTERNS.to_uppercase()),
            world::OWNER,
            "rename-2",
            &name_body("  Interns  "),
        )
        .await;
    assert_empty_ok(&reply);
    // Surrounding whitespace is trimmed.
    assert_eq!(name_read_back(stack, acme::INTERNS).await, "Interns");
    assert_rename_audited(
        stack,
        "rename-2",
        world::OWNER,
        acme::INTERNS,
        "Interns 2025",
        "Interns",
    )
    .await;
}

async fn an_update_without_a_name_is_a_no_op_200_without_an_audit_row(stack: &TestStack) {
    let before = stack.snapshot_without_revision().await;
    for body in [
        request(""),
        format!("{PROLOGUE}<request/>"),
        "<request/>".to_owned(),
        request("<title>ignored</title>"),
    ] {
        let reply = stack
            .post_with_id(&group_path(acme::INTERNS), world::OWNER, "no-op", &body)
            .await;
        assert_empty_ok(&reply);
        assert_eq!(
            stack.snapshot_without_revision().await,
            before,
            "{body} changed nothing"
        );
    }
    assert!(
        audit_rows(stack, "no-op").await.is_empty(),
        "a no-op is not audited"
    );
    assert_eq!(
        name_read_back(stack, acme::INTERNS).await,
        "Interns & <Juniors>"
    );
    // A no-op still needs an existing group and the permission.
    stack
        .post_with_id(
            &group_path(UNKNOWN_GROUP),
            world::OWNER,
            "no-op",
            &request(""),
        )
        .await
        .assert_error(404, "not found");
    stack
        .post_with_id(
            &group_path(acme::INTERNS),
            world::VIEWER,
            "no-op",
            &request(""),
        )
        .await
        .assert_error(403, "permission");
}

async fn blank_and_overlong_names_are_refused_naming_name(stack: &TestStack) {
    let before = stack.snapshot().await;
    let cases = [
        ("empty", request("<name/>"), "name"),
        ("empty pair", request("<name></name>"), "name"),
        ("blank", name_body(" \t\n "), "name"),
        ("256 characters", name_body(&"g".repeat(256)), "name"),
        (
            "256 two-byte characters",
            name_body(&"é".repeat(256)),
            "255",
        ),
    ];
    for (what, body, needle) in cases {
        let reply = stack
            .post_with_id(&group_path(acme::INTERNS), world::OWNER, "invalid", &body)
            .await;
        assert_eq!(reply.status, 400, "{what}: {}", reply.body);
        reply.assert_error(400, needle);
        assert_eq!(stack.snapshot().await, before, "{what} changed nothing");
    }
}

async fn a_name_of_255_characters_is_accepted(stack: &TestStack) {
    let name = "é".repeat(255);
    let reply = stack
        .post_with_id(
            &group_path(acme::EMPTY_GROUP),
            world::ADMIN,
            "long",
            &name_body(&name),
        )
        .await;
    assert_empty_ok(&reply);
    assert_eq!(name_read_back(stack, acme::EMPTY_GROUP).await, name);
    assert_rename_audited(
        stack,
        "long",
        world::ADMIN,
        acme::EMPTY_GROUP,
        "Nobody yet",
        &name,
    )
    .await;
}

async fn unknown_malformed_and_foreign_groups_are_404(stack: &TestStack) {
    let before = stack.snapshot().await;
    let body = name_body("Taken over");
    let unknown = stack
        .post_with_id(&group_path(UNKNOWN_GROUP), world::OWNER, "404", &body)
        .await;
    unknown.assert_error(404, "not found");
    let malformed = stack
        .post_with_id(&group_path("interns"), world::OWNER, "404", &body)
        .await;
    malformed.assert_error(404, "not found");
    let foreign = stack
        .post_with_id(&group_path(globex::CREW), world::OWNER, "404", &body)
        .await;
    foreign.assert_error(404, "not found");
    assert_eq!(
        foreign.error_message().replace(globex::CREW, "ID"),
        unknown.error_message().replace(UNKNOWN_GROUP, "ID")
    );
    // With a bad body too, a foreign group is answered like an unknown one.
    let blank_foreign = stack
        .post_with_id(
            &group_path(globex::CREW),
            world::OWNER,
            "404",
            &name_body(" "),
        )
        .await;
    let blank_unknown = stack
        .post_with_id(
            &group_path(UNKNOWN_GROUP),
            world::OWNER,
            "404",
            &name_body(" "),
        )
        .await;
    assert_eq!(
        blank_foreign.status, blank_unknown.status,
        "{}",
        blank_foreign.body
    );
    assert_eq!(
        blank_foreign.error_message().replace(globex::CREW, "ID"),
        blank_unknown.error_message().replace(UNKNOWN_GROUP, "ID")
    );
    assert_eq!(stack.snapshot().await, before);
    // The other account renames its own group.
    let own = stack
        .post_with_id(&group_path(globex::CREW), world::GLOBEX_OWNER, "own", &body)
        .await;
    assert_empty_ok(&own);
    assert_eq!(stored_name(stack, globex::CREW).await, "Taken over");
}

async fn every_role_of_the_permission_table_gets_its_answer(stack: &TestStack) {
    let allowed = [
        world::OWNER,
        world::ADMIN,
        world::DEPT_ADMIN,
        world::COORDINATOR,
    ];
    let mut previous = "Interns & <Juniors>".to_owned();
    for (n, login) in allowed.into_iter().enumerate() {
        let name = format!("Renamed by {}", login.email);
        let request_id = format!("allowed-{n}");
        let reply = stack
            .post_with_id(
                &group_path(acme::INTERNS),
                login,
                &request_id,
                &name_body(&name),
            )
            .await;
        assert_empty_ok(&reply);
        assert_eq!(
            name_read_back(stack, acme::INTERNS).await,
            name,
            "{}",
            login.email
        );
        assert_rename_audited(stack, &request_id, login, acme::INTERNS, &previous, &name).await;
        previous = name;
    }
    // Group rights are not scoped: the Sales administrator renames a group of anyone.
    let reply = stack
        .post_with_id(
            &group_path(acme::EMPTY_GROUP),
            world::DEPT_ADMIN,
            "any",
            &name_body("Anyone"),
        )
        .await;
    assert_empty_ok(&reply);

    let before = stack.snapshot().await;
    let denied: [Login; 5] = [
        world::VIEWER,
        world::PUBLISHER,
        world::AUTHOR,
        world::LEARNER,
        world::REPORTER,
    ];
    for login in denied {
        let reply = stack
            .post_with_id(
                &group_path(acme::INTERNS),
                login,
                "denied",
                &name_body("Nope"),
            )
            .await;
        assert_eq!(reply.status, 403, "{}: {}", login.email, reply.body);
        reply.assert_error(403, "permission");
        assert_eq!(
            stack.snapshot().await,
            before,
            "{} changed nothing",
            login.email
        );
    }
}

async fn entities_character_references_and_cdata_are_decoded(stack: &TestStack) {
    let cases = [
        ("<![CDATA[R&D <team>]]>", "R&D <team>"),
        ("Sales &amp; Marketing", "Sales & Marketing"),
        ("&lt;b&gt; &quot;bold&quot; &apos;s", "<b> \"bold\" 's"),
        ("Caf&#233; &#x2603;", "Café ☃"),
        ("  <![CDATA[ mixed ]]> &amp; text  ", "mixed  & text"),
    ];
    for (n, (written, stored)) in cases.into_iter().enumerate() {
        let request_id = format!("decoded-{n}");
        let reply = stack
            .post_with_id(
                &group_path(acme::EMPTY_GROUP),
                world::OWNER,
                &request_id,
                &name_body(written),
            )
            .await;
        assert_empty_ok(&reply);
        assert_eq!(
            stored_name(stack, acme::EMPTY_GROUP).await,
            stored,
            "{written}"
        );
        assert_eq!(
            name_read_back(stack, acme::EMPTY_GROUP).await,
            stored,
            "{written}"
        );
    }
    // And GET writes it escaped again.
    let reply = stack
        .get(&group_path(acme::EMPTY_GROUP), world::OWNER)
        .await;
    assert!(
        reply.body.contains("<name>mixed  &amp; text</name>"),
        "{}",
        reply.body
    );
}

async fn a_smart_group_is_renamed_and_stays_smart(stack: &TestStack) {
    let reply = stack
        .post_with_id(
            &group_path(acme::ALL_OF_SALES),
            world::COORDINATOR,
            "smart",
            &name_body("Everyone in Sales"),
        )
        .await;
    assert_empty_ok(&reply);
    let read = stack
        .get(&group_path(acme::ALL_OF_SALES), world::OWNER)
        .await;
    assert_eq!(
        text_of(&read.body, "name").as_deref(),
        Some("Everyone in Sales")
    );
    assert_eq!(text_of(&read.body, "isSmart").as_deref(), Some("1"));
    assert_eq!(text_of(&read.body, "usersCount").as_deref(), Some("3"));
    assert_rename_audited(
        stack,
        "smart",
        world::COORDINATOR,
        acme::ALL_OF_SALES,
        "All of Sales",
        "Everyone in Sales",
    )
    .await;
}

async fn update_accepts_xml_content_types_and_no_content_type_but_refuses_json(stack: &TestStack) {
    for (n, content_type) in [
        Some("application/xml"),
        Some("application/xml; charset=utf-8"),
        Some("text/xml; charset=utf-8"),
        None,
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("Interns {n}");
        let request_id = format!("type-{n}");
        let reply = stack
            .post_typed(
                &group_path(acme::INTERNS),
                world::OWNER,
                &request_id,
                content_type,
                name_body(&name),
            )
            .await;
        assert_empty_ok(&reply);
        assert_eq!(
            name_read_back(stack, acme::INTERNS).await,
            name,
            "{content_type:?}"
        );
        assert_eq!(audit_rows(stack, &request_id).await.len(), 1);
    }
    let before = stack.snapshot().await;
    let reply = stack
        .post_typed(
            &group_path(acme::INTERNS),
            world::OWNER,
            "json",
            Some("text/plain"),
            r#"{"name": "Json"}"#.to_owned(),
        )
        .await;
    reply.assert_error(415, "content-type");
    assert_eq!(stack.snapshot().await, before);
}

async fn update_without_valid_credentials_is_401(stack: &TestStack) {
    let before = stack.snapshot().await;
    let reply = stack
        .http
        .post(format!("{}{}", stack.base_url, group_path(acme::INTERNS)))
        .header("Content-Type", "application/xml")
        .body(name_body("Anonymous"))
        .send()
        .await
        .expect("request");
    Reply::from(reply)
        .await
        .assert_error(401, "Authentication failed");
    let former = stack
        .post_with_id(
            &group_path(acme::INTERNS),
            world::FORMER_ADMIN,
            "former",
            &name_body("X"),
        )
        .await;
    former.assert_error(401, "Authentication failed");
    // Another account's owner is unknown in Acme.
    let globex_in_acme = Login {
        account_url: world::ACME_URL,
        ..world::GLOBEX_OWNER
    };
    stack
        .post_with_id(
            &group_path(acme::INTERNS),
            globex_in_acme,
            "cross",
            &name_body("X"),
        )
        .await
        .assert_error(401, "Authentication failed");
    assert_eq!(stack.snapshot().await, before);
}

async fn update_refuses_bodies_the_xml_rules_forbid(stack: &TestStack) {
    let huge = format!(
        "{PROLOGUE}<request><name>Big</name><padding>{}</padding></request>",
        "x".repeat(lms_gateway::BODY_LIMIT_BYTES)
    );
    let cases = [
        ("a body over 1 MiB", huge, 413, "larger than 1 MiB"),
        (
            "a DOCTYPE",
            format!(
                "{PROLOGUE}<!DOCTYPE request [<!ENTITY n \"Evil\">]><request><name>&n;</name></request>"
            ),
            400,
            "DOCTYPE",
        ),
        ("an unknown entity", name_body("&eacute;"), 400, "eacute"),
        (
            "a wrong root element",
            format!("{PROLOGUE}<group><name>X</name></group>"),
            400,
            "root",
        ),
        (
            "a name given twice",
            request("<name>A</name><name>B</name>"),
            400,
            "name",
        ),
        (
            "a name holding elements",
            request("<name><first>A</first></name>"),
            400,
            "name",
        ),
        ("an empty body", String::new(), 400, "empty"),
        (
            "a body that is not well-formed",
            request("<name>A</nom>"),
            400,
            "not well-formed XML",
        ),
    ];
    let before = stack.snapshot().await;
    for (what, body, status, needle) in cases {
        let reply = stack
            .post_typed(
                &group_path(acme::INTERNS),
                world::OWNER,
                "bad-xml",
                Some("application/xml"),
                body,
            )
            .await;
        assert_eq!(reply.status, status, "{what}: {}", reply.body);
        reply.assert_error(status, needle);
        assert_eq!(stack.snapshot().await, before, "{what} changed nothing");
    }
}

/// `docs/decisions.md`: role (403) → request fields (400) → the addressed group (404).
async fn checks_run_in_the_documented_order(stack: &TestStack) {
    let before = stack.snapshot().await;
    let cases: [(&str, Login, &str, String, u16, &str); 6] = [
        (
            "role first",
            world::LEARNER,
            "not-a-group",
            name_body(" "),
            403,
            "permission",
        ),
        (
            "role first, known group",
            world::VIEWER,
            acme::INTERNS,
            name_body(" "),
            403,
            "permission",
        ),
        // A malformed id names nothing, exactly like an unknown one: the name is judged first.
        (
            "name before a malformed id",
            world::OWNER,
            "not-a-group",
            name_body(" "),
            400,
            "name",
        ),
        (
            "name before an unknown id",
            world::OWNER,
            UNKNOWN_GROUP,
            name_body(" "),
            400,
            "name",
        ),
        (
            "name before a foreign id",
            world::OWNER,
            globex::CREW,
            name_body(" "),
            400,
            "name",
        ),
        (
            "then the group",
            world::OWNER,
            "not-a-group",
            name_body("Fine"),
            404,
            "not found",
        ),
    ];
    for (what, login, id, body, status, needle) in cases {
        let reply = stack
            .post_with_id(&group_path(id), login, "order", &body)
            .await;
        assert_eq!(reply.status, status, "{what}: {}", reply.body);
        reply.assert_error(status, needle);
    }
    assert_eq!(stack.snapshot().await, before);
}
