//! `POST /department` (interface 4.2, create) and `POST /department/{departmentId}` (4.1, update)
//! through the real gateway and core: bodies, statuses, stored effects, the closure table, the
//! audit row of every change, and the permission table of contract section 3.

use std::collections::{BTreeSet, HashMap};

use lms_core::entities::{audit_log, department};
use lms_tests::{
    Reply, TestStack, on_both_backends,
    rows::audit_rows,
    rows::closure,
    uuid,
    world::{self, Login, acme, globex},
    xml::{PROLOGUE, request, text_of, texts_of},
};
use sea_orm::{ColumnTrait as _, EntityTrait as _, QueryFilter as _, prelude::Uuid};
use serde_json::{Value, json};

const UNKNOWN_DEPARTMENT: &str = "0191a000-0000-7000-8000-0000000000ff";

on_both_backends!(
    owner_creates_a_department_and_gets_its_new_lower_case_v7_id,
    a_new_department_takes_children_and_lies_inside_its_ancestors_scope,
    create_accepts_xml_content_types_and_no_content_type_but_refuses_json,
    create_refuses_invalid_fields_naming_them_and_stores_nothing,
    create_accepts_names_and_codes_at_their_length_limits,
    a_foreign_parent_is_refused_exactly_like_an_unknown_one,
    create_is_allowed_by_the_permission_table_and_refused_otherwise,
    create_without_valid_credentials_is_401,
    create_refuses_bodies_the_xml_rules_forbid,
    text_values_are_trimmed_and_entities_and_cdata_decoded,
    update_changes_each_field_alone_and_audits_it,
    an_empty_update_is_a_no_op_without_an_audit_row,
    a_present_empty_code_clears_the_code,
    update_refuses_blank_and_overlong_values,
    moving_engineering_under_sales_puts_its_users_into_the_sales_scope,
    a_department_cannot_move_under_itself_or_a_descendant,
    the_root_department_cannot_be_given_a_parent,
    update_refuses_unknown_malformed_and_foreign_parents,
    unknown_malformed_and_foreign_department_ids_in_the_path_are_404,
    a_department_administrator_updates_only_inside_its_scope,
    a_coordinator_with_department_update_updates_only_inside_its_scope,
    roles_without_department_update_are_refused,
    update_accepts_xml_content_types_and_no_content_type_but_refuses_json,
    update_without_valid_credentials_is_401,
    update_refuses_bodies_the_xml_rules_forbid,
    a_scoped_caller_may_resend_the_current_parent_of_a_managed_department,
    create_checks_run_in_the_documented_order,
    update_checks_run_in_the_documented_order,
);

// ---------------------------------------------------------------------------------------------
// Helpers

fn create_body(name: &str, parent: &str, code: Option<&str>) -> String {
    let code = code
        .map(|c| format!("<code>{c}</code>"))
        .unwrap_or_default();
    request(&format!(
        "<name>{name}</name><parentDepartmentId>{parent}</parentDepartmentId>{code}"
    ))
}

fn update_path(id: &str) -> String {
    format!("/department/{id}")
}

/// Asserts a 201 with `<response>ID</response>` and returns the id.
#[track_caller]
fn created_id(reply: &Reply) -> String {
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(
        reply.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    let id = text_of(&reply.body, "response").unwrap_or_else(|| panic!("no id in {}", reply.body));
    assert_eq!(reply.body, format!("{PROLOGUE}<response>{id}</response>"));
    let parsed = Uuid::parse_str(&id).expect("the new id is a UUID");
    assert_eq!(parsed.get_version_num(), 7, "UUID v7: {id}");
    assert_eq!(
        id,
        parsed.hyphenated().to_string(),
        "lower-case and hyphenated"
    );
    id
}

/// Asserts a 204 with no body.
#[track_caller]
fn assert_no_content(reply: &Reply) {
    assert_eq!(reply.status, 204, "{}", reply.body);
    assert!(reply.body.is_empty(), "a 204 has no body: {:?}", reply.body);
}

/// Creates a department as the owner and returns its id.
async fn create_as_owner(stack: &TestStack, name: &str, parent: &str) -> String {
    let reply = stack
        .post_with_id(
            "/department",
            world::OWNER,
            "setup",
            &create_body(name, parent, None),
        )
        .await;
    created_id(&reply)
}

async fn stored(stack: &TestStack, id: &str) -> department::Model {
    department::Entity::find_by_id(uuid(id))
        .one(stack.db())
        .await
        .expect("read the department")
        .unwrap_or_else(|| panic!("department {id} is stored"))
}

/// The one audit row written under `request_id`.
async fn the_audit_row(stack: &TestStack, request_id: &str) -> audit_log::Model {
    let mut rows = audit_rows(stack, request_id).await;
    assert_eq!(rows.len(), 1, "one audit row for {request_id}: {rows:#?}");
    rows.remove(0)
}

fn parsed(json_text: &Option<String>) -> Option<Value> {
    json_text
        .as_deref()
        .map(|text| serde_json::from_str(text).expect("audit values are JSON"))
}

/// Asserts a `department.update` audit row of `actor` on `id` with these values.
async fn assert_update_audited(
    stack: &TestStack,
    request_id: &str,
    actor: Login,
    id: &str,
    before: Value,
    after: Value,
) {
    let row = the_audit_row(stack, request_id).await;
    assert_eq!(row.action, "department.update");
    assert_eq!(row.entity_type, "department");
    assert_eq!(row.entity_id, uuid(id));
    assert_eq!(row.actor_user_id, Some(uuid(actor.id)));
    assert_eq!(parsed(&row.before), Some(before));
    assert_eq!(parsed(&row.after), Some(after));
}

/// Asserts that `department_closure` of the Acme account is exactly the transitive closure of
/// `departments.parent_id`, depths included.
async fn assert_closure_matches_parents(stack: &TestStack) {
    let account = stored(stack, acme::ROOT).await.account_id;
    let departments = department::Entity::find()
        .filter(department::Column::AccountId.eq(account))
        .all(stack.db())
        .await
        .expect("read departments");
    let parents: HashMap<Uuid, Option<Uuid>> =
        departments.iter().map(|d| (d.id, d.parent_id)).collect();
    let mut expected = BTreeSet::new();
    for department in &departments {
        let (mut current, mut depth) = (Some(department.id), 0);
        while let Some(id) = current {
            expected.insert((id, department.id, depth));
            assert!(depth <= parents.len() as i32, "a cycle through {id}");
            current = parents[&id];
            depth += 1;
        }
    }
    let actual: BTreeSet<(Uuid, Uuid, i32)> = closure(stack, account).await;
    assert_eq!(
        actual, expected,
        "department_closure is the closure of parent_id"
    );
}

// ---------------------------------------------------------------------------------------------
// 4.2 Create

async fn owner_creates_a_department_and_gets_its_new_lower_case_v7_id(stack: &TestStack) {
    let body = create_body("Sales West", acme::SALES, Some("SW"));
    let reply = stack
        .post_with_id("/department", world::OWNER, "create-1", &body)
        .await;
    let id = created_id(&reply);
    assert_eq!(reply.header("x-request-id"), Some("create-1"));

    let row = stored(stack, &id).await;
    assert_eq!(row.name, "Sales West");
    assert_eq!(row.code.as_deref(), Some("SW"));
    assert_eq!(row.parent_id, Some(uuid(acme::SALES)));
    assert_eq!(row.account_id, stored(stack, acme::ROOT).await.account_id);
    assert_closure_matches_parents(stack).await;

    let audit = the_audit_row(stack, "create-1").await;
    assert_eq!(audit.action, "department.create");
    assert_eq!(audit.entity_type, "department");
    assert_eq!(audit.entity_id, uuid(&id));
    assert_eq!(audit.actor_user_id, Some(uuid(acme::OWNER)));
    assert_eq!(audit.before, None);
    assert_eq!(
        parsed(&audit.after),
        Some(json!({"name": "Sales West", "parentDepartmentId": acme::SALES, "code": "SW"}))
    );

    // Without a code, the code is empty; ids of the parent are accepted in any case.
    let body = create_body("Sales North", &acme::SALES.to_uppercase(), None);
    let id = created_id(
        &stack
            .post_with_id("/department", world::OWNER, "create-2", &body)
            .await,
    );
    let row = stored(stack, &id).await;
    assert_eq!((row.name.as_str(), row.code), ("Sales North", None));
    assert_eq!(row.parent_id, Some(uuid(acme::SALES)));
    let audit = the_audit_row(stack, "create-2").await;
    assert_eq!(
        parsed(&audit.after),
        Some(json!({"name": "Sales North", "parentDepartmentId": acme::SALES, "code": null}))
    );
}

async fn a_new_department_takes_children_and_lies_inside_its_ancestors_scope(stack: &TestStack) {
    let west = create_as_owner(stack, "Sales West", acme::SALES).await;
    // Usable as a parent at once.
    let retail = create_as_owner(stack, "Sales West Retail", &west).await;
    assert_eq!(stored(stack, &retail).await.parent_id, Some(uuid(&west)));
    assert_closure_matches_parents(stack).await;

    // The department administrator of Sales manages the new grandchild.
    let reply = stack
        .post_with_id(
            &update_path(&retail),
            world::DEPT_ADMIN,
            "scope-1",
            &request("<name>Retail</name>"),
        )
        .await;
    assert_no_content(&reply);
    assert_eq!(stored(stack, &retail).await.name, "Retail");
    // The coordinator of Sales creates under it.
    let reply = stack
        .post_with_id(
            "/department",
            world::COORDINATOR,
            "scope-2",
            &create_body("Retail Online", &retail, None),
        )
        .await;
    let online = created_id(&reply);
    assert_eq!(stored(stack, &online).await.parent_id, Some(uuid(&retail)));
    let audit = the_audit_row(stack, "scope-2").await;
    assert_eq!(audit.actor_user_id, Some(uuid(acme::COORDINATOR)));
    assert_closure_matches_parents(stack).await;

    // A new department under Engineering is out of their scope.
    let lab = create_as_owner(stack, "Lab", acme::ENGINEERING).await;
    let before = stack.snapshot().await;
    stack
        .post_with_id(
            &update_path(&lab),
            world::DEPT_ADMIN,
            "scope-3",
            &request("<name>Mine</name>"),
        )
        .await
        .assert_error(403, "department");
    assert_eq!(stack.snapshot().await, before);
}

async fn create_accepts_xml_content_types_and_no_content_type_but_refuses_json(stack: &TestStack) {
    for (n, content_type) in [
        Some("application/xml"),
        Some("text/xml; charset=utf-8"),
        Some("text/xml"),
        None,
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("Team {n}");
        let request_id = format!("type-{n}");
        let body = create_body(&name, acme::SUPPORT, None);
        let reply = stack
            .post_typed("/department", world::OWNER, &request_id, content_type, body)
            .await;
        let id = created_id(&reply);
        assert_eq!(stored(stack, &id).await.name, name, "{content_type:?}");
        assert_eq!(
            the_audit_row(stack, &request_id).await.action,
            "department.create"
        );
    }
    let before = stack.snapshot().await;
    let body = create_body("Json", acme::SUPPORT, None);
    let reply = stack
        .post_typed(
            "/department",
            world::OWNER,
            "json",
            Some("text/plain"),
            body,
        )
        .await;
    reply.assert_error(415, "content-type");
    assert_eq!(stack.snapshot().await, before);
}

async fn create_refuses_invalid_fields_naming_them_and_stores_nothing(stack: &TestStack) {
    let parent = format!("<parentDepartmentId>{}</parentDepartmentId>", acme::SALES);
    let long_name = "n".repeat(256);
    let long_code = "c".repeat(65);
    let cases: Vec<(&str, String, &str)> = vec![
        ("no name", request(&parent), "name"),
        ("empty name", request(&format!("<name/>{parent}")), "name"),
        (
            "blank name",
            request(&format!("<name> \t </name>{parent}")),
            "name",
        ),
        (
            "256-character name",
            request(&format!("<name>{long_name}</name>{parent}")),
            "255",
        ),
        (
            "65-character code",
            request(&format!("<name>X</name>{parent}<code>{long_code}</code>")),
            "code",
        ),
        ("no parent", request("<name>X</name>"), "parentDepartmentId"),
        (
            "empty parent",
            request("<name>X</name><parentDepartmentId/>"),
            "parentDepartmentId",
        ),
        (
            "malformed parent",
            request("<name>X</name><parentDepartmentId>sales</parentDepartmentId>"),
            "parentDepartmentId",
        ),
        (
            "unhyphenated parent",
            request(&format!(
                "<name>X</name><parentDepartmentId>{}</parentDepartmentId>",
                acme::SALES.replace('-', "")
            )),
            "parentDepartmentId",
        ),
        (
            "unknown parent",
            request(&format!(
                "<name>X</name><parentDepartmentId>{UNKNOWN_DEPARTMENT}</parentDepartmentId>"
            )),
            "parentDepartmentId",
        ),
    ];
    let before = stack.snapshot().await;
    for (what, body, needle) in cases {
        let reply = stack
            .post_with_id("/department", world::OWNER, "invalid", &body)
            .await;
        assert_eq!(reply.status, 400, "{what}: {}", reply.body);
        reply.assert_error(400, needle);
        assert_eq!(stack.snapshot().await, before, "{what} changed nothing");
    }
    assert!(audit_rows(stack, "invalid").await.is_empty());
}

async fn create_accepts_names_and_codes_at_their_length_limits(stack: &TestStack) {
    // Characters, not bytes: 255 two-byte characters and a 64-character code.
    let name = "é".repeat(255);
    let code = "ü".repeat(64);
    let reply = stack
        .post_with_id(
            "/department",
            world::OWNER,
            "limits",
            &create_body(&name, acme::ROOT, Some(&code)),
        )
        .await;
    let id = created_id(&reply);
    let row = stored(stack, &id).await;
    assert_eq!(row.name, name);
    assert_eq!(row.code.as_deref(), Some(code.as_str()));
    assert_eq!(row.parent_id, Some(uuid(acme::ROOT)));
}

async fn a_foreign_parent_is_refused_exactly_like_an_unknown_one(stack: &TestStack) {
    let before = stack.snapshot().await;
    let foreign = stack
        .post_with_id(
            "/department",
            world::OWNER,
            "foreign",
            &create_body("X", globex::ROOT, None),
        )
        .await;
    foreign.assert_error(400, "parentDepartmentId");
    let unknown = stack
        .post_with_id(
            "/department",
            world::OWNER,
            "unknown",
            &create_body("X", UNKNOWN_DEPARTMENT, None),
        )
        .await;
    unknown.assert_error(400, "parentDepartmentId");
    assert_eq!(
        foreign.error_message().replace(globex::ROOT, "ID"),
        unknown.error_message().replace(UNKNOWN_DEPARTMENT, "ID")
    );
    // Also for a caller whose role is scoped.
    let scoped = stack
        .post_with_id(
            "/department",
            world::COORDINATOR,
            "foreign",
            &create_body("X", globex::PLANT, None),
        )
        .await;
    scoped.assert_error(400, "parentDepartmentId");
    assert_eq!(stack.snapshot().await, before);
    // And the other account creates under its own root.
    let own = stack
        .post_with_id(
            "/department",
            world::GLOBEX_OWNER,
            "own",
            &create_body("Office", globex::ROOT, None),
        )
        .await;
    assert_eq!(
        stored(stack, &created_id(&own)).await.parent_id,
        Some(uuid(globex::ROOT))
    );
}

async fn create_is_allowed_by_the_permission_table_and_refused_otherwise(stack: &TestStack) {
    let allowed = [
        (world::OWNER, acme::ROOT),
        (world::ADMIN, acme::ENGINEERING),
        (world::COORDINATOR, acme::SALES),
        (world::COORDINATOR, acme::SALES_EAST),
    ];
    for (n, (login, parent)) in allowed.into_iter().enumerate() {
        let request_id = format!("allowed-{n}");
        let name = format!("By {}", login.email);
        let reply = stack
            .post_with_id(
                "/department",
                login,
                &request_id,
                &create_body(&name, parent, None),
            )
            .await;
        let id = created_id(&reply);
        assert_eq!(
            stored(stack, &id).await.parent_id,
            Some(uuid(parent)),
            "{}",
            login.email
        );
        let audit = the_audit_row(stack, &request_id).await;
        assert_eq!(audit.actor_user_id, Some(uuid(login.id)));
    }
    assert_closure_matches_parents(stack).await;

    let denied: [(Login, &str); 9] = [
        // Department administrators are not listed for create, not even under their own department.
        (world::DEPT_ADMIN, acme::SALES),
        (world::DEPT_ADMIN, acme::SALES_EAST),
        // A custom role with department.create, outside its scope.
        (world::COORDINATOR, acme::ENGINEERING),
        (world::COORDINATOR, acme::ROOT),
        (world::PUBLISHER, acme::ENGINEERING),
        (world::AUTHOR, acme::ENGINEERING),
        (world::LEARNER, acme::SALES_EAST),
        // Custom roles without department.create.
        (world::VIEWER, acme::SUPPORT),
        (world::REPORTER, acme::ENGINEERING),
    ];
    let before = stack.snapshot().await;
    for (login, parent) in denied {
        let reply = stack
            .post_with_id(
                "/department",
                login,
                "denied",
                &create_body("Nope", parent, None),
            )
            .await;
        assert_eq!(
            reply.status, 403,
            "{} under {parent}: {}",
            login.email, reply.body
        );
        reply.assert_error(403, "department");
        assert_eq!(
            stack.snapshot().await,
            before,
            "{} changed nothing",
            login.email
        );
    }
}

async fn create_without_valid_credentials_is_401(stack: &TestStack) {
    let before = stack.snapshot().await;
    let url = format!("{}/department", stack.base_url);
    let body = create_body("Anonymous", acme::SALES, None);
    let anonymous = stack
        .http
        .post(&url)
        .header("Content-Type", "application/xml")
        .body(body.clone())
        .send()
        .await
        .expect("request");
    Reply::from(anonymous)
        .await
        .assert_error(401, "Authentication failed");
    let wrong_password = stack
        .http
        .post(&url)
        .header("Content-Type", "application/xml")
        .header("X-Auth-Account-Url", world::ACME_URL)
        .header("X-Auth-Email", world::OWNER.email)
        .header("X-Auth-Password", "not the password")
        .body(body)
        .send()
        .await
        .expect("request");
    Reply::from(wrong_password)
        .await
        .assert_error(401, "Authentication failed");
    assert_eq!(stack.snapshot().await, before);
}

/// Bodies contract section 5 refuses, each with its status, on either department route.
fn forbidden_bodies(fields: &str) -> Vec<(&'static str, String, u16, &'static str)> {
    let huge = format!(
        "{PROLOGUE}<request>{fields}<padding>{}</padding></request>",
        "x".repeat(lms_gateway::BODY_LIMIT_BYTES)
    );
    vec![
        ("a body over 1 MiB", huge, 413, "larger than 1 MiB"),
        (
            "a DOCTYPE",
            format!(
                "{PROLOGUE}<!DOCTYPE request [<!ENTITY x \"Sales\">]><request>{fields}</request>"
            ),
            400,
            "DOCTYPE declarations are not allowed",
        ),
        (
            "an unknown entity",
            request(&format!("{fields}<code>&nbsp;</code>")),
            400,
            "Entity reference &nbsp; is not allowed",
        ),
        (
            "a wrong root element",
            format!("{PROLOGUE}<department>{fields}</department>"),
            400,
            "Root element must be <request>",
        ),
        (
            "a field given twice",
            request(&format!("{fields}<code>A</code><code>B</code>")),
            400,
            "Element <code> is given twice",
        ),
        (
            "an empty body",
            String::new(),
            400,
            "The request body is empty",
        ),
        (
            "a body that is not well-formed",
            format!("{PROLOGUE}<request>{fields}<code>A</request>"),
            400,
            "not well-formed XML",
        ),
        (
            "another encoding",
            format!("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><request>{fields}</request>"),
            400,
            "only UTF-8 is accepted",
        ),
    ]
}

async fn create_refuses_bodies_the_xml_rules_forbid(stack: &TestStack) {
    let fields = format!(
        "<name>X</name><parentDepartmentId>{}</parentDepartmentId>",
        acme::SALES
    );
    let before = stack.snapshot().await;
    for (what, body, status, needle) in forbidden_bodies(&fields) {
        let reply = stack
            .post_typed(
                "/department",
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
    let twice = stack
        .post_with_id(
            "/department",
            world::OWNER,
            "twice",
            &request(&format!("{fields}<name>Y</name>")),
        )
        .await;
    twice.assert_error(400, "name");
    let doctype = stack
        .post_with_id(
            "/department",
            world::OWNER,
            "doctype",
            &format!("<!DOCTYPE request><request>{fields}</request>"),
        )
        .await;
    doctype.assert_error(400, "DOCTYPE");
    // A chunked body declares no length: it is cut off at the limit all the same.
    let chunk = vec![b' '; 64 * 1024];
    let chunks = std::iter::once(format!("{PROLOGUE}<request>{fields}").into_bytes())
        .chain(std::iter::repeat_n(chunk, 17))
        .map(Ok::<_, std::io::Error>);
    let chunked = stack
        .request(reqwest::Method::POST, "/department", world::OWNER)
        .header("Content-Type", "application/xml")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .expect("request");
    Reply::from(chunked).await.assert_error(413, "1 MiB");
    assert_eq!(stack.snapshot().await, before);
}

async fn text_values_are_trimmed_and_entities_and_cdata_decoded(stack: &TestStack) {
    let body = request(&format!(
        "<name>\n  <![CDATA[R&D <lab>]]> &amp; Caf&#233; </name>\
         <parentDepartmentId> {} </parentDepartmentId><code> R&amp;D </code><colour>ignored</colour>",
        acme::ENGINEERING
    ));
    let id = created_id(
        &stack
            .post_with_id("/department", world::OWNER, "decoded", &body)
            .await,
    );
    let row = stored(stack, &id).await;
    assert_eq!(row.name, "R&D <lab> & Café");
    assert_eq!(row.code.as_deref(), Some("R&D"));
    assert_eq!(row.parent_id, Some(uuid(acme::ENGINEERING)));

    // A UTF-8 byte order mark is allowed.
    let body = format!("\u{FEFF}{}", create_body("Bom", acme::ENGINEERING, None));
    let id = created_id(
        &stack
            .post_with_id("/department", world::OWNER, "bom", &body)
            .await,
    );
    assert_eq!(stored(stack, &id).await.name, "Bom");
}

// ---------------------------------------------------------------------------------------------
// 4.1 Update

async fn update_changes_each_field_alone_and_audits_it(stack: &TestStack) {
    let path = update_path(acme::SUPPORT);
    let original = stored(stack, acme::SUPPORT).await;
    assert_eq!(
        (original.name.as_str(), original.code.as_deref()),
        ("Support", None)
    );

    let reply = stack
        .post_with_id(
            &path,
            world::OWNER,
            "name-only",
            &request("<name>Customer Care</name>"),
        )
        .await;
    assert_no_content(&reply);
    assert_eq!(reply.header("x-request-id"), Some("name-only"));
    let row = stored(stack, acme::SUPPORT).await;
    assert_eq!(
        (row.name.as_str(), row.code.as_deref(), row.parent_id),
        ("Customer Care", None, Some(uuid(acme::ROOT)))
    );
    assert_update_audited(
        stack,
        "name-only",
        world::OWNER,
        acme::SUPPORT,
        json!({"name": "Support", "parentDepartmentId": acme::ROOT, "code": null}),
        json!({"name": "Customer Care", "parentDepartmentId": acme::ROOT, "code": null}),
    )
    .await;

    let reply = stack
        .post_with_id(
            &path,
            world::ADMIN,
            "code-only",
            &request("<code>CC</code>"),
        )
        .await;
    assert_no_content(&reply);
    let row = stored(stack, acme::SUPPORT).await;
    assert_eq!(
        (row.name.as_str(), row.code.as_deref(), row.parent_id),
        ("Customer Care", Some("CC"), Some(uuid(acme::ROOT)))
    );
    assert_update_audited(
        stack,
        "code-only",
        world::ADMIN,
        acme::SUPPORT,
        json!({"name": "Customer Care", "parentDepartmentId": acme::ROOT, "code": null}),
        json!({"name": "Customer Care", "parentDepartmentId": acme::ROOT, "code": "CC"}),
    )
    .await;

    let body = request(&format!(
        "<parentDepartmentId>{}</parentDepartmentId>",
        acme::ENGINEERING
    ));
    let reply = stack
        .post_with_id(&path, world::OWNER, "parent-only", &body)
        .await;
    assert_no_content(&reply);
    let row = stored(stack, acme::SUPPORT).await;
    assert_eq!(
        (row.name.as_str(), row.code.as_deref(), row.parent_id),
        ("Customer Care", Some("CC"), Some(uuid(acme::ENGINEERING)))
    );
    assert_update_audited(
        stack,
        "parent-only",
        world::OWNER,
        acme::SUPPORT,
        json!({"name": "Customer Care", "parentDepartmentId": acme::ROOT, "code": "CC"}),
        json!({"name": "Customer Care", "parentDepartmentId": acme::ENGINEERING, "code": "CC"}),
    )
    .await;
    assert_closure_matches_parents(stack).await;

    // All three at once, the parent id in upper case.
    let body = request(&format!(
        "<code>C2</code><parentDepartmentId>{}</parentDepartmentId><name>Care</name>",
        acme::ROOT.to_uppercase()
    ));
    assert_no_content(
        &stack
            .post_with_id(&path, world::OWNER, "all-three", &body)
            .await,
    );
    let row = stored(stack, acme::SUPPORT).await;
    assert_eq!(
        (row.name.as_str(), row.code.as_deref(), row.parent_id),
        ("Care", Some("C2"), Some(uuid(acme::ROOT)))
    );
    assert_closure_matches_parents(stack).await;
    // Nothing else was touched.
    assert_eq!(stored(stack, acme::SALES).await.name, "Sales");
}

async fn an_empty_update_is_a_no_op_without_an_audit_row(stack: &TestStack) {
    let before = stack.snapshot_without_revision().await;
    let bodies = [
        request(""),
        format!("{PROLOGUE}<request/>"),
        "<request/>".to_owned(),
        request("<colour>blue</colour>"),
    ];
    for body in bodies {
        let reply = stack
            .post_with_id(&update_path(acme::SALES), world::OWNER, "no-op", &body)
            .await;
        assert_no_content(&reply);
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
    // A no-op still needs an existing department and the permission.
    stack
        .post_with_id(
            &update_path(UNKNOWN_DEPARTMENT),
            world::OWNER,
            "no-op",
            &request(""),
        )
        .await
        .assert_error(404, "not found");
    stack
        .post_with_id(
            &update_path(acme::SALES),
            world::LEARNER,
            "no-op",
            &request(""),
        )
        .await
        .assert_error(403, "permission");
    stack
        .post_with_id(
            &update_path(acme::ENGINEERING),
            world::DEPT_ADMIN,
            "no-op",
            &request(""),
        )
        .await
        .assert_error(403, "department");
}

async fn a_present_empty_code_clears_the_code(stack: &TestStack) {
    assert_eq!(stored(stack, acme::SALES).await.code.as_deref(), Some("S"));
    assert_no_content(
        &stack
            .post_with_id(
                &update_path(acme::SALES),
                world::OWNER,
                "clear",
                &request("<code/>"),
            )
            .await,
    );
    let row = stored(stack, acme::SALES).await;
    assert_eq!((row.name.as_str(), row.code), ("Sales", None));
    assert_update_audited(
        stack,
        "clear",
        world::OWNER,
        acme::SALES,
        json!({"name": "Sales", "parentDepartmentId": acme::ROOT, "code": "S"}),
        json!({"name": "Sales", "parentDepartmentId": acme::ROOT, "code": null}),
    )
    .await;

    // Whitespace only is empty too.
    assert_eq!(
        stored(stack, acme::SALES_EAST).await.code.as_deref(),
        Some("SE")
    );
    let reply = stack
        .post_with_id(
            &update_path(acme::SALES_EAST),
            world::OWNER,
            "clear-2",
            &request("<code>  </code>"),
        )
        .await;
    assert_no_content(&reply);
    assert_eq!(stored(stack, acme::SALES_EAST).await.code, None);
}

async fn update_refuses_blank_and_overlong_values(stack: &TestStack) {
    let long_name = "n".repeat(256);
    let long_code = "c".repeat(65);
    let cases = [
        ("blank name", request("<name>   </name>"), "name"),
        ("empty name", request("<name/>"), "name"),
        (
            "256-character name",
            request(&format!("<name>{long_name}</name>")),
            "255",
        ),
        (
            "65-character code",
            request(&format!("<code>{long_code}</code>")),
            "code",
        ),
        // One bad field refuses the whole update.
        (
            "good name, bad code",
            request(&format!("<name>Fine</name><code>{long_code}</code>")),
            "code",
        ),
    ];
    let before = stack.snapshot().await;
    for (what, body, needle) in cases {
        let reply = stack
            .post_with_id(&update_path(acme::SALES), world::OWNER, "invalid", &body)
            .await;
        assert_eq!(reply.status, 400, "{what}: {}", reply.body);
        reply.assert_error(400, needle);
        assert_eq!(stack.snapshot().await, before, "{what} changed nothing");
    }
}

async fn moving_engineering_under_sales_puts_its_users_into_the_sales_scope(stack: &TestStack) {
    let smart_group = format!("/group/{}", acme::ALL_OF_SALES);
    let reply = stack.get(&smart_group, world::OWNER).await;
    assert_eq!(
        text_of(&reply.body, "usersCount").as_deref(),
        Some("3"),
        "{}",
        reply.body
    );
    // Before the move Engineering is outside the Sales administrator's scope.
    let before = stack.snapshot().await;
    stack
        .post_with_id(
            &update_path(acme::ENGINEERING),
            world::DEPT_ADMIN,
            "outside",
            &request("<code>E</code>"),
        )
        .await
        .assert_error(403, "department");
    assert_eq!(stack.snapshot().await, before);

    let body = request(&format!(
        "<parentDepartmentId>{}</parentDepartmentId>",
        acme::SALES
    ));
    assert_no_content(
        &stack
            .post_with_id(&update_path(acme::ENGINEERING), world::ADMIN, "move", &body)
            .await,
    );
    assert_eq!(
        stored(stack, acme::ENGINEERING).await.parent_id,
        Some(uuid(acme::SALES))
    );
    assert_update_audited(
        stack,
        "move",
        world::ADMIN,
        acme::ENGINEERING,
        json!({"name": "Engineering", "parentDepartmentId": acme::ROOT, "code": null}),
        json!({"name": "Engineering", "parentDepartmentId": acme::SALES, "code": null}),
    )
    .await;
    assert_closure_matches_parents(stack).await;

    // The smart group of Sales now holds the users of Engineering too.
    let reply = stack.get(&smart_group, world::OWNER).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let mut expected = vec![
        acme::DEPT_ADMIN,
        acme::LEARNER,
        acme::COORDINATOR,
        acme::PUBLISHER,
        acme::AUTHOR,
        acme::REPORTER,
        acme::ENGINEER,
    ];
    expected.sort();
    assert_eq!(texts_of(&reply.body, "id"), expected);
    assert_eq!(text_of(&reply.body, "usersCount").as_deref(), Some("7"));

    // And the Sales administrator now manages Engineering.
    let reply = stack
        .post_with_id(
            &update_path(acme::ENGINEERING),
            world::DEPT_ADMIN,
            "inside",
            &request("<code>E</code>"),
        )
        .await;
    assert_no_content(&reply);
    assert_eq!(
        stored(stack, acme::ENGINEERING).await.code.as_deref(),
        Some("E")
    );
    assert_eq!(
        the_audit_row(stack, "inside").await.actor_user_id,
        Some(uuid(acme::DEPT_ADMIN))
    );

    // Moving it back restores the old scope.
    let body = request(&format!(
        "<parentDepartmentId>{}</parentDepartmentId>",
        acme::ROOT
    ));
    assert_no_content(
        &stack
            .post_with_id(&update_path(acme::ENGINEERING), world::OWNER, "back", &body)
            .await,
    );
    assert_closure_matches_parents(stack).await;
    let reply = stack.get(&smart_group, world::OWNER).await;
    assert_eq!(
        text_of(&reply.body, "usersCount").as_deref(),
        Some("3"),
        "{}",
        reply.body
    );
}

async fn a_department_cannot_move_under_itself_or_a_descendant(stack: &TestStack) {
    // A deeper subtree: Sales > Sales East > Retail > Online.
    let retail = create_as_owner(stack, "Retail", acme::SALES_EAST).await;
    let online = create_as_owner(stack, "Online", &retail).await;
    let before = stack.snapshot().await;
    let cases = [
        (acme::SALES, acme::SALES),
        (acme::SALES, acme::SALES_EAST),
        (acme::SALES, retail.as_str()),
        (acme::SALES, online.as_str()),
        (acme::SALES_EAST, online.as_str()),
        (retail.as_str(), retail.as_str()),
    ];
    for (moved, new_parent) in cases {
        let body = request(&format!(
            "<name>Renamed</name><parentDepartmentId>{new_parent}</parentDepartmentId>"
        ));
        let reply = stack
            .post_with_id(&update_path(moved), world::OWNER, "cycle", &body)
            .await;
        assert_eq!(
            reply.status, 400,
            "{moved} under {new_parent}: {}",
            reply.body
        );
        reply.assert_error(400, "parentDepartmentId");
        assert_eq!(
            stack.snapshot().await,
            before,
            "{moved} under {new_parent} changed nothing"
        );
    }
    // The same for a scoped caller whose scope holds both.
    let body = request(&format!(
        "<parentDepartmentId>{online}</parentDepartmentId>"
    ));
    stack
        .post_with_id(
            &update_path(acme::SALES_EAST),
            world::DEPT_ADMIN,
            "cycle",
            &body,
        )
        .await
        .assert_error(400, "parentDepartmentId");
    assert_eq!(stack.snapshot().await, before);
    assert!(audit_rows(stack, "cycle").await.is_empty());
}

async fn the_root_department_cannot_be_given_a_parent(stack: &TestStack) {
    let before = stack.snapshot().await;
    for parent in [acme::SALES, acme::ROOT, acme::SUPPORT] {
        let body = request(&format!(
            "<parentDepartmentId>{parent}</parentDepartmentId>"
        ));
        let reply = stack
            .post_with_id(&update_path(acme::ROOT), world::OWNER, "root", &body)
            .await;
        assert_eq!(reply.status, 400, "root under {parent}: {}", reply.body);
        reply.assert_error(400, "parentDepartmentId");
        assert_eq!(stack.snapshot().await, before);
    }
    // Its name and code may change.
    let reply = stack
        .post_with_id(
            &update_path(acme::ROOT),
            world::OWNER,
            "root-name",
            &request("<name>Acme Corp</name>"),
        )
        .await;
    assert_no_content(&reply);
    let row = stored(stack, acme::ROOT).await;
    assert_eq!((row.name.as_str(), row.parent_id), ("Acme Corp", None));
}

async fn update_refuses_unknown_malformed_and_foreign_parents(stack: &TestStack) {
    let before = stack.snapshot().await;
    let parent = |id: &str| request(&format!("<parentDepartmentId>{id}</parentDepartmentId>"));
    let cases = [
        ("unknown", parent(UNKNOWN_DEPARTMENT)),
        ("foreign", parent(globex::PLANT)),
        ("malformed", parent("sales-east")),
        ("empty", request("<parentDepartmentId/>")),
    ];
    let mut messages = HashMap::new();
    for (what, body) in cases {
        let reply = stack
            .post_with_id(
                &update_path(acme::SALES_EAST),
                world::OWNER,
                "parent",
                &body,
            )
            .await;
        assert_eq!(reply.status, 400, "{what}: {}", reply.body);
        reply.assert_error(400, "parentDepartmentId");
        assert_eq!(stack.snapshot().await, before, "{what} changed nothing");
        messages.insert(what, reply.error_message());
    }
    assert_eq!(
        messages["foreign"].replace(globex::PLANT, "ID"),
        messages["unknown"].replace(UNKNOWN_DEPARTMENT, "ID"),
        "a foreign parent is refused exactly like an unknown one"
    );
}

async fn unknown_malformed_and_foreign_department_ids_in_the_path_are_404(stack: &TestStack) {
    let before = stack.snapshot().await;
    let body = request("<name>Renamed</name>");
    let unknown = stack
        .post_with_id(
            &update_path(UNKNOWN_DEPARTMENT),
            world::OWNER,
            "path",
            &body,
        )
        .await;
    unknown.assert_error(404, "not found");
    let malformed = stack
        .post_with_id(
            &update_path("not-a-department"),
            world::OWNER,
            "path",
            &body,
        )
        .await;
    malformed.assert_error(404, "not found");
    let foreign = stack
        .post_with_id(&update_path(globex::PLANT), world::OWNER, "path", &body)
        .await;
    foreign.assert_error(404, "not found");
    assert_eq!(
        foreign.error_message().replace(globex::PLANT, "ID"),
        unknown.error_message().replace(UNKNOWN_DEPARTMENT, "ID")
    );
    // Also for a scoped caller: not found comes before out of scope.
    let scoped = stack
        .post_with_id(
            &update_path(globex::PLANT),
            world::DEPT_ADMIN,
            "path",
            &body,
        )
        .await;
    scoped.assert_error(404, "not found");
    assert_eq!(stack.snapshot().await, before);
    // The other account updates its own department; ids are accepted in any case.
    let own = stack
        .post_with_id(
            &update_path(&globex::PLANT.to_uppercase()),
            world::GLOBEX_OWNER,
            "own",
            &body,
        )
        .await;
    assert_no_content(&own);
    assert_eq!(stored(stack, globex::PLANT).await.name, "Renamed");
}

/// The scope rules of update for a caller managing Sales (department administrator or custom).
async fn assert_updates_only_inside_the_sales_scope(stack: &TestStack, login: Login) {
    // Sales itself and a sub-department.
    let reply = stack
        .post_with_id(
            &update_path(acme::SALES),
            login,
            "own",
            &request("<name>Sales &amp; Marketing</name>"),
        )
        .await;
    assert_no_content(&reply);
    assert_eq!(stored(stack, acme::SALES).await.name, "Sales & Marketing");
    assert_update_audited(
        stack,
        "own",
        login,
        acme::SALES,
        json!({"name": "Sales", "parentDepartmentId": acme::ROOT, "code": "S"}),
        json!({"name": "Sales & Marketing", "parentDepartmentId": acme::ROOT, "code": "S"}),
    )
    .await;
    let reply = stack
        .post_with_id(
            &update_path(acme::SALES_EAST),
            login,
            "sub",
            &request("<code>EAST</code>"),
        )
        .await;
    assert_no_content(&reply);
    assert_eq!(
        stored(stack, acme::SALES_EAST).await.code.as_deref(),
        Some("EAST")
    );

    // A move inside the scope.
    let retail = create_as_owner(stack, "Retail", acme::SALES_EAST).await;
    let body = request(&format!(
        "<parentDepartmentId>{}</parentDepartmentId>",
        acme::SALES
    ));
    assert_no_content(
        &stack
            .post_with_id(&update_path(&retail), login, "inner-move", &body)
            .await,
    );
    assert_eq!(
        stored(stack, &retail).await.parent_id,
        Some(uuid(acme::SALES))
    );
    assert_eq!(
        the_audit_row(stack, "inner-move").await.actor_user_id,
        Some(uuid(login.id))
    );
    assert_closure_matches_parents(stack).await;

    let before = stack.snapshot().await;
    let refusals = [
        (
            "a department outside the scope",
            acme::ENGINEERING.to_owned(),
            request("<name>Mine</name>"),
        ),
        (
            "the root",
            acme::ROOT.to_owned(),
            request("<name>Mine</name>"),
        ),
        (
            "a move under a department outside the scope",
            acme::SALES_EAST.to_owned(),
            request(&format!(
                "<parentDepartmentId>{}</parentDepartmentId>",
                acme::ENGINEERING
            )),
        ),
        (
            "a move of the managed department outside the scope",
            acme::SALES.to_owned(),
            request(&format!(
                "<parentDepartmentId>{}</parentDepartmentId>",
                acme::SUPPORT
            )),
        ),
        (
            "a move of an outside department into the scope",
            acme::SUPPORT.to_owned(),
            request(&format!(
                "<parentDepartmentId>{}</parentDepartmentId>",
                acme::SALES
            )),
        ),
    ];
    for (what, id, body) in refusals {
        let reply = stack
            .post_with_id(&update_path(&id), login, "refused", &body)
            .await;
        assert_eq!(reply.status, 403, "{what}: {}", reply.body);
        reply.assert_error(403, "department");
        assert_eq!(stack.snapshot().await, before, "{what} changed nothing");
    }
}

async fn a_department_administrator_updates_only_inside_its_scope(stack: &TestStack) {
    assert_updates_only_inside_the_sales_scope(stack, world::DEPT_ADMIN).await;
}

async fn a_coordinator_with_department_update_updates_only_inside_its_scope(stack: &TestStack) {
    assert_updates_only_inside_the_sales_scope(stack, world::COORDINATOR).await;
}

async fn roles_without_department_update_are_refused(stack: &TestStack) {
    let before = stack.snapshot().await;
    let denied: [(Login, &str); 6] = [
        (world::VIEWER, acme::SUPPORT),
        (world::PUBLISHER, acme::ENGINEERING),
        (world::AUTHOR, acme::ENGINEERING),
        (world::LEARNER, acme::SALES_EAST),
        (world::REPORTER, acme::ENGINEERING),
        (world::VIEWER, acme::SALES),
    ];
    for (login, id) in denied {
        let reply = stack
            .post_with_id(
                &update_path(id),
                login,
                "denied",
                &request("<name>Nope</name>"),
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

async fn update_accepts_xml_content_types_and_no_content_type_but_refuses_json(stack: &TestStack) {
    for (n, content_type) in [
        Some("application/xml"),
        Some("text/xml; charset=utf-8"),
        Some("TEXT/XML"),
        None,
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("Support {n}");
        let request_id = format!("type-{n}");
        let body = request(&format!("<name>{name}</name>"));
        let reply = stack
            .post_typed(
                &update_path(acme::SUPPORT),
                world::OWNER,
                &request_id,
                content_type,
                body,
            )
            .await;
        assert_no_content(&reply);
        assert_eq!(
            stored(stack, acme::SUPPORT).await.name,
            name,
            "{content_type:?}"
        );
        assert_eq!(
            the_audit_row(stack, &request_id).await.action,
            "department.update"
        );
    }
    let before = stack.snapshot().await;
    let body = request("<name>Json</name>");
    let reply = stack
        .post_typed(
            &update_path(acme::SUPPORT),
            world::OWNER,
            "json",
            Some("text/plain"),
            body,
        )
        .await;
    reply.assert_error(415, "content-type");
    assert_eq!(stack.snapshot().await, before);
}

async fn update_without_valid_credentials_is_401(stack: &TestStack) {
    let before = stack.snapshot().await;
    let url = format!("{}{}", stack.base_url, update_path(acme::SALES));
    let reply = stack
        .http
        .post(&url)
        .header("Content-Type", "application/xml")
        .body(request("<name>Anonymous</name>"))
        .send()
        .await
        .expect("request");
    Reply::from(reply)
        .await
        .assert_error(401, "Authentication failed");
    let former = stack
        .post_with_id(
            &update_path(acme::SALES),
            world::FORMER_ADMIN,
            "former",
            &request("<name>X</name>"),
        )
        .await;
    former.assert_error(401, "Authentication failed");
    assert_eq!(stack.snapshot().await, before);
}

async fn update_refuses_bodies_the_xml_rules_forbid(stack: &TestStack) {
    let before = stack.snapshot().await;
    for (what, body, status, needle) in forbidden_bodies("<name>Changed</name>") {
        let reply = stack
            .post_typed(
                &update_path(acme::SALES),
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
    let twice = request(&format!(
        "<parentDepartmentId>{}</parentDepartmentId><parentDepartmentId>{}</parentDepartmentId>",
        acme::SUPPORT,
        acme::ENGINEERING
    ));
    stack
        .post_with_id(&update_path(acme::SALES), world::OWNER, "twice", &twice)
        .await
        .assert_error(400, "parentDepartmentId");
    assert_eq!(stack.snapshot().await, before);
}

async fn a_scoped_caller_may_resend_the_current_parent_of_a_managed_department(stack: &TestStack) {
    // A client that posts back every field it read: Sales stays under the root, which the
    // Sales administrator does not manage. Keeping the current parent is not a move.
    for (n, login) in [world::DEPT_ADMIN, world::COORDINATOR]
        .into_iter()
        .enumerate()
    {
        let request_id = format!("resend-{n}");
        let name = format!("Sales {n}");
        let body = request(&format!(
            "<name>{name}</name><parentDepartmentId>{}</parentDepartmentId><code>S</code>",
            acme::ROOT.to_uppercase()
        ));
        let reply = stack
            .post_with_id(&update_path(acme::SALES), login, &request_id, &body)
            .await;
        assert_no_content(&reply);
        let row = stored(stack, acme::SALES).await;
        assert_eq!(
            (row.name.as_str(), row.parent_id),
            (name.as_str(), Some(uuid(acme::ROOT)))
        );
        let previous = if n == 0 {
            "Sales".to_owned()
        } else {
            format!("Sales {}", n - 1)
        };
        assert_update_audited(
            stack,
            &request_id,
            login,
            acme::SALES,
            json!({"name": previous, "parentDepartmentId": acme::ROOT, "code": "S"}),
            json!({"name": name, "parentDepartmentId": acme::ROOT, "code": "S"}),
        )
        .await;
    }
    assert_closure_matches_parents(stack).await;
    // A different parent outside the scope is still refused.
    let before = stack.snapshot().await;
    let body = request(&format!(
        "<parentDepartmentId>{}</parentDepartmentId>",
        acme::SUPPORT
    ));
    stack
        .post_with_id(&update_path(acme::SALES), world::DEPT_ADMIN, "away", &body)
        .await
        .assert_error(403, "department");
    assert_eq!(stack.snapshot().await, before);
}

/// `docs/decisions.md`: role (403) → request fields (400) → referenced ids (400) → their scope (403).
async fn create_checks_run_in_the_documented_order(stack: &TestStack) {
    let before = stack.snapshot().await;
    let cases: [(Login, String, u16, &str); 6] = [
        // The role first, whatever the body says.
        (
            world::DEPT_ADMIN,
            request("<name> </name>"),
            403,
            "permission",
        ),
        (
            world::LEARNER,
            format!("{PROLOGUE}<request/>"),
            403,
            "permission",
        ),
        // Request fields before the parent's scope.
        (
            world::COORDINATOR,
            create_body(" ", acme::ENGINEERING, None),
            400,
            "name",
        ),
        (
            world::COORDINATOR,
            create_body("X", "engineering", None),
            400,
            "parentDepartmentId",
        ),
        // The parent's existence before its scope.
        (
            world::COORDINATOR,
            create_body("X", UNKNOWN_DEPARTMENT, None),
            400,
            "parentDepartmentId",
        ),
        (
            world::COORDINATOR,
            create_body("X", acme::ENGINEERING, None),
            403,
            "department",
        ),
    ];
    for (login, body, status, needle) in cases {
        let reply = stack
            .post_with_id("/department", login, "order", &body)
            .await;
        assert_eq!(
            reply.status, status,
            "{} {body}: {}",
            login.email, reply.body
        );
        reply.assert_error(status, needle);
    }
    assert_eq!(stack.snapshot().await, before);
}

/// `docs/decisions.md`: role (403) → request fields (400) → the addressed department (404) → its
/// scope (403) → the new parent (400) → its scope (403) → tree rules (400).
async fn update_checks_run_in_the_documented_order(stack: &TestStack) {
    let parent = |id: &str| format!("<parentDepartmentId>{id}</parentDepartmentId>");
    let before = stack.snapshot().await;
    let cases: Vec<(&str, Login, String, String, u16, &str)> = vec![
        (
            "role first",
            world::LEARNER,
            acme::ROOT.into(),
            request("<name/>"),
            403,
            "permission",
        ),
        (
            "role before the path",
            world::VIEWER,
            "not-a-department".into(),
            request("<name>X</name>"),
            403,
            "permission",
        ),
        // A malformed path id names nothing, exactly like an unknown one: fields come first.
        (
            "fields before a malformed path",
            world::OWNER,
            "not-a-department".into(),
            request("<name> </name>"),
            400,
            "name",
        ),
        (
            "fields before an unknown path",
            world::OWNER,
            UNKNOWN_DEPARTMENT.into(),
            request("<name> </name>"),
            400,
            "name",
        ),
        (
            "a malformed parent before the path",
            world::OWNER,
            UNKNOWN_DEPARTMENT.into(),
            request(&parent("nowhere")),
            400,
            "parentDepartmentId",
        ),
        (
            "the path before the parent",
            world::OWNER,
            UNKNOWN_DEPARTMENT.into(),
            request(&parent(UNKNOWN_DEPARTMENT)),
            404,
            "not found",
        ),
        (
            "the department's scope before the parent",
            world::DEPT_ADMIN,
            acme::ENGINEERING.into(),
            request(&parent(UNKNOWN_DEPARTMENT)),
            403,
            "department",
        ),
        (
            "the parent's existence before its scope",
            world::DEPT_ADMIN,
            acme::SALES_EAST.into(),
            request(&parent(UNKNOWN_DEPARTMENT)),
            400,
            "parentDepartmentId",
        ),
        (
            "the parent's scope before the tree rules",
            world::DEPT_ADMIN,
            acme::SALES_EAST.into(),
            request(&parent(acme::ENGINEERING)),
            403,
            "department",
        ),
        (
            "tree rules last",
            world::DEPT_ADMIN,
            acme::SALES.into(),
            request(&parent(acme::SALES_EAST)),
            400,
            "parentDepartmentId",
        ),
    ];
    for (what, login, id, body, status, needle) in cases {
        let reply = stack
            .post_with_id(&update_path(&id), login, "order", &body)
            .await;
        assert_eq!(reply.status, status, "{what}: {}", reply.body);
        reply.assert_error(status, needle);
    }
    assert_eq!(stack.snapshot().await, before);
    assert!(audit_rows(stack, "order").await.is_empty());
}
