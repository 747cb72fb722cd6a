//! `GET /department`, `GET /department/{id}`, `GET /departments` (paged) and
//! `DELETE /department/{id}` (neighbours.md section 3) through the real gateway and core: both
//! formats, every prefix, headers or a token, the permission table with its scopes, tenant
//! isolation, paging a client can trust, refusals that leave the data untouched, and a sync
//! run the way the Bitrix module runs it.

use std::collections::BTreeMap;

use lms_core::entities::{audit_log, department, department_closure};
use lms_proto::v1::{self as pb, directory_service_client::DirectoryServiceClient};
use lms_tests::{
    Reply, TestStack, get_json, json_ids, json_of, on_both_backends, post_json,
    rows::grant,
    uuid, walk_json_pages, walk_xml_pages,
    world::{self, Login, acme, globex},
    xml::text_of,
    xml_ids,
};
use sea_orm::{ColumnTrait as _, EntityTrait as _, QueryFilter as _};
use serde_json::{Value, json};

on_both_backends!(
    the_owner_lists_and_reads_departments_in_xml_and_json_under_every_prefix,
    scoped_callers_see_only_their_subtrees_and_other_roles_are_refused,
    another_accounts_departments_are_not_found_and_stay_untouched,
    pages_hold_exactly_page_size_and_only_a_page_with_more_after_it_has_a_token,
    bad_page_sizes_tokens_and_parameters_are_400_naming_them,
    the_owner_deletes_an_empty_department_audited_and_a_second_delete_is_404,
    a_department_still_in_use_is_not_deleted_and_nothing_changes,
    deletes_are_scoped_like_reads,
    a_token_alone_lists_reads_and_deletes,
    a_sync_run_twice_as_the_bitrix_module_runs_it_creates_no_duplicates,
);

const PREFIXES: [&str; 3] = ["", "/api/v2", "/index.php/api/v2"];
const NOWHERE: &str = "0191c000-0000-7000-8000-00000000dead";
const ID: &str = "departmentId";

/// The world's Acme departments, ascending by id (which is how every list is ordered).
const ACME: [&str; 5] = [
    acme::ROOT,
    acme::SALES,
    acme::SALES_EAST,
    acme::ENGINEERING,
    acme::SUPPORT,
];

async fn delete(stack: &TestStack, path: &str, login: Login) -> Reply {
    stack.send(reqwest::Method::DELETE, path, login).await
}

/// Creates a department as the owner; its id.
async fn create(stack: &TestStack, name: &str, parent: &str) -> String {
    let reply = stack
        .post_xml(
            "/department",
            world::OWNER,
            &format!("<request><name>{name}</name><parentDepartmentId>{parent}</parentDepartmentId></request>"),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    text_of(&reply.body, "response").expect("the new id")
}

async fn exists(stack: &TestStack, id: &str) -> bool {
    department::Entity::find_by_id(uuid(id))
        .one(stack.db())
        .await
        .expect("read")
        .is_some()
}

// ---------------------------------------------------------------------------------------------

async fn the_owner_lists_and_reads_departments_in_xml_and_json_under_every_prefix(
    stack: &TestStack,
) {
    for prefix in PREFIXES {
        for slash in ["", "/"] {
            let list = stack
                .get(&format!("{prefix}/department{slash}"), world::OWNER)
                .await;
            assert_eq!(xml_ids(&list, ID), ACME, "{prefix}{slash}");
            assert!(
                list.body.starts_with(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><department>\
                     <departmentId>0191a000-0000-7000-8000-000000000001</departmentId>\
                     <name>Acme</name><code>ACME</code>\
                     <subordination><subordinationType>no_supervisor</subordinationType></subordination>"
                ),
                "the root has no parent: {}",
                list.body
            );
            let one = stack
                .get(
                    &format!("{prefix}/department/{}{slash}", acme::SALES_EAST),
                    world::OWNER,
                )
                .await;
            assert_eq!(one.status, 200, "{}", one.body);
            assert_eq!(
                one.body,
                format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><department>\
                     <departmentId>{}</departmentId><name>Sales East</name>\
                     <parentDepartmentId>{}</parentDepartmentId><code>SE</code>\
                     <subordination><subordinationType>inherit</subordinationType></subordination>\
                     <coSubordination><subordinationType>inherit</subordinationType></coSubordination>\
                     </department></response>",
                    acme::SALES_EAST,
                    acme::SALES
                )
            );
        }
    }
    let list = json_of(&get_json(stack, "/api/v2/department", world::OWNER).await);
    assert_eq!(json_ids(&list, ID), ACME, "a top-level array");
    assert_eq!(
        list[3],
        json!({"departmentId": acme::ENGINEERING, "name": "Engineering",
               "parentDepartmentId": acme::ROOT,
               "subordination": {"subordinationType": "inherit"},
               "coSubordination": {"subordinationType": "inherit"}}),
        "no code, no code key"
    );
    let one = json_of(&get_json(stack, &format!("/department/{}", acme::ROOT), world::OWNER).await);
    assert_eq!(
        one,
        json!({"departmentId": acme::ROOT, "name": "Acme", "code": "ACME",
               "subordination": {"subordinationType": "no_supervisor"},
               "coSubordination": {"subordinationType": "no_supervisor"}}),
        "the bare object"
    );
    // Administrators read like the owner.
    let list = stack.get("/department", world::ADMIN).await;
    assert_eq!(xml_ids(&list, ID), ACME);
}

async fn scoped_callers_see_only_their_subtrees_and_other_roles_are_refused(stack: &TestStack) {
    grant(stack, acme::VIEWER_ROLE, "department.read").await;
    grant(stack, acme::REPORTER_ROLE, "department.read").await;
    for (login, seen) in [
        (world::DEPT_ADMIN, vec![acme::SALES, acme::SALES_EAST]),
        (world::PUBLISHER, vec![acme::ENGINEERING]),
        // Reporter: department.read, managing Engineering.
        (world::REPORTER, vec![acme::ENGINEERING]),
        // Viewer: department.read, managing nothing.
        (world::VIEWER, vec![]),
    ] {
        let list = stack.get("/department", login).await;
        assert_eq!(xml_ids(&list, ID), seen, "{}", login.email);
        let page = json_of(&get_json(stack, "/departments?pageSize=1", login).await);
        assert_eq!(
            json_ids(&page["departments"], ID),
            seen.iter().take(1).copied().collect::<Vec<_>>(),
            "{}",
            login.email
        );
        assert_eq!(page.get("nextPageToken").is_some(), seen.len() > 1);
        for id in ACME {
            let one = stack.get(&format!("/department/{id}"), login).await;
            if seen.contains(&id) {
                assert_eq!(one.status, 200, "{}: {}", login.email, one.body);
            } else {
                one.assert_error(403, "only departments you manage");
            }
        }
    }
    // Coordinator has department.create and .update but not .read; author and learner nothing.
    for login in [world::COORDINATOR, world::AUTHOR, world::LEARNER] {
        for path in [
            "/department".to_owned(),
            "/departments".to_owned(),
            format!("/department/{}", acme::SALES),
        ] {
            stack
                .get(&path, login)
                .await
                .assert_error(403, "permission to read departments");
        }
    }
}

async fn another_accounts_departments_are_not_found_and_stay_untouched(stack: &TestStack) {
    let before = stack.snapshot().await;
    let list = stack.get("/department", world::GLOBEX_OWNER).await;
    assert_eq!(xml_ids(&list, ID), [globex::ROOT, globex::PLANT]);
    let page = json_of(&get_json(stack, "/departments", world::GLOBEX_OWNER).await);
    assert_eq!(
        json_ids(&page["departments"], ID),
        [globex::ROOT, globex::PLANT]
    );
    for id in [acme::SALES_EAST, NOWHERE, "not-an-id"] {
        stack
            .get(&format!("/department/{id}"), world::GLOBEX_OWNER)
            .await
            .assert_error(404, "Department");
        delete(stack, &format!("/department/{id}"), world::GLOBEX_OWNER)
            .await
            .assert_error(404, "Department");
    }
    delete(
        stack,
        &format!("/department/{}", globex::PLANT),
        world::OWNER,
    )
    .await
    .assert_error(404, "Department");
    assert_eq!(stack.snapshot().await, before, "nothing changed");
}

async fn pages_hold_exactly_page_size_and_only_a_page_with_more_after_it_has_a_token(
    stack: &TestStack,
) {
    for n in 0..7 {
        create(stack, &format!("Team {n}"), acme::SUPPORT).await;
    }
    let all = xml_ids(&stack.get("/department", world::OWNER).await, ID);
    assert_eq!(all.len(), 12);
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted, "ascending by id");
    for (size, pages) in [
        (5, vec![5, 5, 2]),
        (4, vec![4, 4, 4]),
        (12, vec![12]),
        (1000, vec![12]),
    ] {
        // XML and JSON walks see the same pages.
        let path = format!("/departments?pageSize={size}");
        let xml = walk_xml_pages(stack, &path, &world::OWNER.headers(), ID).await;
        for page in &xml.pages {
            assert!(
                page.body.contains("<response><departments><department>"),
                "{}",
                page.body
            );
        }
        assert_eq!(xml.sizes, pages, "pageSize={size}");
        assert_eq!(xml.ids, all, "pageSize={size}");
        let json = walk_json_pages(
            stack,
            &format!("/api/v2{path}"),
            &world::OWNER.headers(),
            "departments",
            ID,
        )
        .await;
        assert_eq!(json.sizes, pages, "JSON, pageSize={size}");
        assert_eq!(json.ids, all, "JSON, pageSize={size}");
    }
    // Without pageSize a page holds up to 1,000: all twelve, and no token.
    let page = stack.get("/departments?pageToken=", world::OWNER).await;
    assert_eq!(xml_ids(&page, ID), all);
    assert!(!page.body.contains("nextPageToken"));
    // A token keeps its place when departments are added before and after it.
    let first = stack.get("/departments?pageSize=6", world::OWNER).await;
    let token = text_of(&first.body, "nextPageToken").expect("a token");
    let added = create(stack, "Late team", acme::SUPPORT).await;
    let rest = xml_ids(
        &stack
            .get(
                &format!("/departments?pageSize=100&pageToken={token}"),
                world::OWNER,
            )
            .await,
        ID,
    );
    let mut expected: Vec<String> = all[6..].to_vec();
    expected.push(added);
    expected.sort();
    assert_eq!(rest, expected);
}

async fn bad_page_sizes_tokens_and_parameters_are_400_naming_them(stack: &TestStack) {
    let before = stack.snapshot().await;
    for size in ["0", "10001", "-1", "ten", "1e3"] {
        stack
            .get(&format!("/departments?pageSize={size}"), world::OWNER)
            .await
            .assert_error(400, "pageSize must be a whole number");
    }
    for size in ["1", "10000"] {
        let reply = stack
            .get(&format!("/departments?pageSize={size}"), world::OWNER)
            .await;
        assert_eq!(reply.status, 200, "{size}: {}", reply.body);
    }
    let page = stack.get("/departments?pageSize=2", world::OWNER).await;
    let good = text_of(&page.body, "nextPageToken").expect("a token");
    use base64::Engine as _;
    let encode = |text: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text);
    for token in [
        // A token of another listing, a bare id as iSpring's samples look, edits of a good one.
        encode(&format!("v1:users:{}", acme::SALES)),
        encode(acme::SALES),
        format!("{good}x"),
        good[..good.len() - 3].to_owned(),
        good.to_uppercase(),
        "%%%".to_owned(),
    ] {
        stack
            .get(&format!("/departments?pageToken={token}"), world::OWNER)
            .await
            .assert_error(
                400,
                "pageToken is not a page token of this listing (departments)",
            );
    }
    // The same refusals in JSON.
    let reply = get_json(stack, "/departments?pageSize=0", world::OWNER).await;
    assert_eq!(reply.status, 400);
    let body: Value = serde_json::from_str(&reply.body).expect("JSON");
    assert!(
        body["message"].as_str().unwrap().contains("pageSize"),
        "{body}"
    );
    for (path, name) in [
        ("/departments?page_size=5", "page_size"),
        ("/departments?pageSize=5&pageSize=6", "pageSize"),
        ("/department?pageSize=5", "pageSize"),
        ("/department?code=S", "code"),
        (&format!("/department/{}?x=1", acme::SALES), "x"),
    ] {
        stack
            .get(path, world::OWNER)
            .await
            .assert_error(400, &format!("\"{name}\""));
    }
    // Permission comes before input: a refused role learns nothing about the rules.
    stack
        .get("/departments?pageSize=0", world::LEARNER)
        .await
        .assert_error(403, "permission to read departments");
    assert_eq!(stack.snapshot().await, before, "reads change nothing");
}

async fn the_owner_deletes_an_empty_department_audited_and_a_second_delete_is_404(
    stack: &TestStack,
) {
    let id = create(stack, "Short-lived", acme::SALES_EAST).await;
    let reply = stack
        .request(
            reqwest::Method::DELETE,
            &format!("/api/v2/department/{id}/"),
            world::OWNER,
        )
        .header("X-Request-Id", "delete-1")
        .send()
        .await
        .expect("request");
    let reply = Reply::from(reply).await;
    assert_eq!(reply.status, 204, "{}", reply.body);
    assert!(reply.body.is_empty());
    assert!(!exists(stack, &id).await);
    let closure = department_closure::Entity::find()
        .filter(
            sea_orm::Condition::any()
                .add(department_closure::Column::DescendantId.eq(uuid(&id)))
                .add(department_closure::Column::AncestorId.eq(uuid(&id))),
        )
        .all(stack.db())
        .await
        .expect("read");
    assert!(closure.is_empty(), "no closure rows left: {closure:?}");
    let audit = audit_log::Entity::find()
        .filter(audit_log::Column::EntityId.eq(uuid(&id)))
        .all(stack.db())
        .await
        .expect("read");
    let deleted: Vec<_> = audit
        .iter()
        .filter(|row| row.action == "department.delete")
        .collect();
    assert_eq!(deleted.len(), 1, "{audit:?}");
    assert_eq!(deleted[0].request_id.as_deref(), Some("delete-1"));
    assert_eq!(deleted[0].actor_user_id, Some(uuid(acme::OWNER)));
    let before: Value =
        serde_json::from_str(deleted[0].before.as_deref().expect("a before")).expect("JSON");
    assert_eq!(
        before,
        json!({"name": "Short-lived", "parentDepartmentId": acme::SALES_EAST, "code": null})
    );
    assert_eq!(deleted[0].after, None);
    delete(stack, &format!("/department/{id}"), world::OWNER)
        .await
        .assert_error(404, "Department");
    let list = xml_ids(&stack.get("/department", world::OWNER).await, ID);
    assert_eq!(list, ACME);
}

async fn a_department_still_in_use_is_not_deleted_and_nothing_changes(stack: &TestStack) {
    // Kept by a department administrator's scope, and by a smart group.
    let managed = create(stack, "Managed", acme::SUPPORT).await;
    let followed = create(stack, "Followed", acme::SUPPORT).await;
    let mut directory = DirectoryServiceClient::new(stack.grpc_channel().await);
    directory
        .set_user_managed_departments(world::OWNER.grpc_request(
            pb::SetUserManagedDepartmentsRequest {
                user_id: acme::DEPT_ADMIN.to_owned(),
                managed_department_ids: vec![acme::SALES.to_owned(), managed.clone()],
            },
        ))
        .await
        .expect("scope set");
    directory
        .create_group(world::OWNER.grpc_request(pb::CreateGroupRequest {
            name: "Followers".into(),
            smart_department_id: Some(followed.clone()),
        }))
        .await
        .expect("smart group");
    let before = stack.snapshot().await;
    for (id, why) in [
        (acme::ROOT.to_owned(), "it is the root department"),
        (acme::SALES.to_owned(), "it still has sub-departments"),
        (acme::SUPPORT.to_owned(), "it still has sub-departments"),
        (acme::SALES_EAST.to_owned(), "it still has users"),
        (acme::ENGINEERING.to_owned(), "it still has users"),
        (managed.clone(), "users still manage it"),
        (followed.clone(), "a smart group follows it"),
    ] {
        let reply = delete(stack, &format!("/department/{id}"), world::OWNER).await;
        reply.assert_error(400, why);
        assert!(reply.error_message().contains(&id), "{}", reply.body);
        let json = Reply::send(
            stack
                .request(
                    reqwest::Method::DELETE,
                    &format!("/department/{id}"),
                    world::OWNER,
                )
                .header("Accept", "application/json"),
        )
        .await;
        assert_eq!(json.status, 400);
        let body: Value = serde_json::from_str(&json.body).expect("JSON");
        assert!(body["message"].as_str().unwrap().contains(why), "{body}");
    }
    assert_eq!(
        stack.snapshot().await,
        before,
        "nothing changed, no audit row"
    );
}

async fn deletes_are_scoped_like_reads(stack: &TestStack) {
    // Granted before the users' first calls: who a user is is read once and then remembered.
    grant(stack, acme::COORDINATOR_ROLE, "department.delete").await;
    grant(stack, acme::REPORTER_ROLE, "department.delete").await;
    let west = create(stack, "Sales West", acme::SALES).await;
    let lab = create(stack, "Engineering Lab", acme::ENGINEERING).await;
    let lab_annex = create(stack, "Lab annex", acme::ENGINEERING).await;
    delete(stack, &format!("/department/{lab}"), world::DEPT_ADMIN)
        .await
        .assert_error(403, "only departments inside the departments you manage");
    let reply = delete(stack, &format!("/department/{west}"), world::DEPT_ADMIN).await;
    assert_eq!(reply.status, 204, "{}", reply.body);
    assert!(!exists(stack, &west).await);
    // Publishers read departments but do not delete them; custom roles need department.delete.
    for login in [
        world::PUBLISHER,
        world::VIEWER,
        world::AUTHOR,
        world::LEARNER,
    ] {
        delete(stack, &format!("/department/{lab}"), login)
            .await
            .assert_error(403, "permission to delete departments");
    }
    assert!(exists(stack, &lab).await);
    // The coordinator (scope: Sales) is refused outside its scope even with the permission;
    // the reporter (scope: Engineering) may delete there.
    delete(stack, &format!("/department/{lab}"), world::COORDINATOR)
        .await
        .assert_error(403, "only departments inside");
    let reply = delete(stack, &format!("/department/{lab}"), world::REPORTER).await;
    assert_eq!(reply.status, 204, "{}", reply.body);
    assert!(!exists(stack, &lab).await && exists(stack, &lab_annex).await);
}

async fn a_token_alone_lists_reads_and_deletes(stack: &TestStack) {
    let bearer = stack.bearer_for(acme::ADMIN).await;
    let id = create(stack, "Token-made", acme::SUPPORT).await;
    let with_token = |method: reqwest::Method, path: &str| {
        stack
            .http
            .request(method, format!("{}{path}", stack.base_url))
            .header("Authorization", bearer.as_str())
            .header("Accept", "application/json")
    };
    let list = Reply::send(with_token(reqwest::Method::GET, "/api/v2/department")).await;
    assert_eq!(json_of(&list).as_array().map(Vec::len), Some(6));
    let page = Reply::send(with_token(reqwest::Method::GET, "/departments?pageSize=2")).await;
    assert_eq!(json_ids(&json_of(&page)["departments"], ID).len(), 2);
    let one = Reply::send(with_token(
        reqwest::Method::GET,
        &format!("/department/{id}"),
    ))
    .await;
    assert_eq!(json_of(&one)["name"], "Token-made");
    let gone = Reply::send(with_token(
        reqwest::Method::DELETE,
        &format!("/department/{id}"),
    ))
    .await;
    assert_eq!(gone.status, 204, "{}", gone.body);
    assert!(!exists(stack, &id).await);
    let anonymous = Reply::send(stack.http.get(format!("{}/department", stack.base_url))).await;
    assert_eq!(anonymous.status, 401);
}

/// The Bitrix module's department sync: read every department (JSON), then for each department
/// of the source, keyed by code, update the one found or create it under its parent.
async fn sync_as_bitrix(stack: &TestStack, source: &[(&str, &str, Option<&str>)]) {
    let list = json_of(&get_json(stack, "/api/v2/department", world::OWNER).await);
    let mut by_code: BTreeMap<String, String> = list
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|d| {
            Some((
                d.get("code")?.as_str()?.to_owned(),
                d["departmentId"].as_str()?.to_owned(),
            ))
        })
        .collect();
    for (code, name, parent_code) in source {
        let parent = match parent_code {
            Some(parent) => by_code[*parent].clone(),
            None => acme::ROOT.to_owned(),
        };
        let body = json!({"name": name, "parentDepartmentId": parent, "code": code,
                          "subordination": null, "coSubordination": null})
        .to_string();
        match by_code.get(*code) {
            Some(id) => {
                let reply = stack
                    .post_typed(
                        &format!("/api/v2/department/{id}"),
                        world::OWNER,
                        "sync",
                        Some("application/json"),
                        body,
                    )
                    .await;
                assert!(reply.status < 300, "update {code}: {}", reply.body);
            }
            None => {
                let reply = post_json(stack, "/api/v2/department", world::OWNER, body).await;
                assert_eq!(reply.status, 201, "create {code}: {}", reply.body);
                let id: String = serde_json::from_str(&reply.body).expect("a JSON string");
                by_code.insert((*code).to_owned(), id);
            }
        }
    }
}

async fn a_sync_run_twice_as_the_bitrix_module_runs_it_creates_no_duplicates(stack: &TestStack) {
    let source = [
        ("S", "Sales (synced)", None),
        ("B1", "Branch One", Some("S")),
        ("B2", "Branch Two", Some("S")),
        ("B21", "Branch Two North", Some("B2")),
    ];
    sync_as_bitrix(stack, &source).await;
    let first = json_of(&get_json(stack, "/department", world::OWNER).await);
    assert_eq!(
        first.as_array().map(Vec::len),
        Some(8),
        "three new, Sales updated"
    );
    sync_as_bitrix(stack, &source).await;
    let second = json_of(&get_json(stack, "/department", world::OWNER).await);
    assert_eq!(
        second, first,
        "the second run changes nothing and adds nothing"
    );
    let named = |name: &str| {
        second
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["name"] == name)
            .count()
    };
    for (_, name, _) in source {
        assert_eq!(named(name), 1, "{name}");
    }
    let sales =
        json_of(&get_json(stack, &format!("/department/{}", acme::SALES), world::OWNER).await);
    assert_eq!(sales["name"], "Sales (synced)");
}
