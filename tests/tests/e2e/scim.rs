//! SCIM 2.0 (provisioning.md sections 7 to 10) through the real gateway and core: SCIM tokens
//! made, listed and revoked over `/scim_tokens`; `/scim/v2` Users and Groups as Entra ID and
//! Okta call them (create, read, filter, replace, both PATCH forms, delete and bring back);
//! SCIM error bodies; a token blind to other accounts and refused everywhere else; a
//! SCIM-made user read over REST; the audit rows.

use lms_core::entities::audit_log;
use lms_tests::{
    Backend, Reply, TestStack, get_json, json_of, on_both_backends, post_json,
    testkit::Fixture,
    world::{self, Login, acme},
};
use reqwest::Method;
use sea_orm::{ColumnTrait as _, EntityTrait as _, QueryFilter as _};
use serde_json::{Value, json};

on_both_backends!(
    scim_tokens_are_made_listed_and_revoked_by_owners_and_administrators_only,
    a_scim_token_works_on_scim_only_and_scim_takes_nothing_else,
    users_are_created_read_filtered_replaced_deleted_and_brought_back,
    patches_in_entras_and_oktas_forms_change_a_user_alike,
    bad_requests_get_scim_error_bodies_naming_what_is_wrong,
    a_token_of_one_account_is_blind_to_another,
    groups_and_their_members_follow_scim_writes,
    searches_by_post_answer_as_the_lists_do,
);

lms_tests::testkit::on_both_backends!(ImportedScim => the_import_makes_scim_clients_and_external_ids);

const USER: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const PATCH_OP: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ERROR: &str = "urn:ietf:params:scim:api:messages:2.0:Error";
const SEARCH: &str = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

/// A new SCIM token of `login`'s account, made by `login` over `POST /scim_tokens`.
async fn token_of(stack: &TestStack, login: Login) -> String {
    let reply = Reply::send(
        stack
            .request(Method::POST, "/scim_tokens", login)
            .header("Accept", "application/json"),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let made: Value = serde_json::from_str(&reply.body).expect("JSON");
    made["token"].as_str().expect("a token").to_owned()
}

/// A SCIM call: status, JSON body (`Null` when empty) and the reply.
async fn scim(
    stack: &TestStack,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value, Reply) {
    let mut request = stack
        .http
        .request(method, format!("{}/scim/v2{path}", stack.base_url))
        .header("Authorization", format!("Bearer {token}"));
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/scim+json")
            .body(body.to_string());
    }
    let reply = Reply::send(request).await;
    let body = if reply.body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&reply.body).unwrap_or_else(|e| panic!("{e}: {}", reply.body))
    };
    if !reply.body.is_empty() {
        assert_eq!(
            reply.header("content-type"),
            Some("application/scim+json; charset=utf-8"),
            "{path}"
        );
    }
    (reply.status, body, reply)
}

/// Asserts an RFC 7644 error body with `status` and `scim_type`, whose detail holds `needle`.
#[track_caller]
fn assert_scim_error(
    status: u16,
    body: &Value,
    expected: u16,
    scim_type: Option<&str>,
    needle: &str,
) {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["schemas"], json!([ERROR]), "{body}");
    assert_eq!(body["status"], json!(expected.to_string()), "{body}");
    assert_eq!(body["scimType"].as_str(), scim_type, "{body}");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(needle), "{needle:?} not in {detail:?}");
}

async fn audit_count(stack: &TestStack, action: &str, id: &str) -> usize {
    audit_log::Entity::find()
        .filter(audit_log::Column::Action.eq(action))
        .filter(audit_log::Column::EntityId.eq(world::uuid(id)))
        .all(stack.db())
        .await
        .expect("audit rows")
        .len()
}

fn new_user(user_name: &str, external_id: &str) -> Value {
    json!({
        "schemas": [USER, ENTERPRISE],
        "userName": user_name,
        "externalId": external_id,
        "name": {"givenName": "Ann", "familyName": "Lee", "formatted": "Ann Lee"},
        "displayName": "Ann L.",
        "emails": [{"value": "ann.home@example.org", "type": "home"}, {"value": user_name, "type": "work", "primary": true}],
        "active": true,
        "roles": [],
        ENTERPRISE: {"department": "s", "manager": {"value": "x"}},
    })
}

async fn scim_tokens_are_made_listed_and_revoked_by_owners_and_administrators_only(
    stack: &TestStack,
) {
    let reply = post_json(stack, "/scim_tokens", world::OWNER, "{}").await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let made: Value = serde_json::from_str(&reply.body).expect("JSON");
    let token = made["token"].as_str().expect("token");
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(made["userId"], acme::OWNER);
    let owners_client = made["clientId"].as_str().expect("clientId").to_owned();

    // XML, by an administrator, acting as the owner.
    let reply = stack
        .post_xml(
            "/scim_tokens",
            world::ADMIN,
            &format!("<request><userId>{}</userId></request>", acme::OWNER),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert!(
        reply.body.contains("<scimToken><clientId>"),
        "{}",
        reply.body
    );
    assert!(
        reply
            .body
            .contains(&format!("<userId>{}</userId><token>", acme::OWNER))
    );

    for login in [world::LEARNER, world::DEPT_ADMIN, world::PUBLISHER] {
        assert_eq!(
            post_json(stack, "/scim_tokens", login, "{}").await.status,
            403
        );
        assert_eq!(stack.get("/scim_tokens", login).await.status, 403);
    }
    let learner = json!({ "userId": acme::LEARNER });
    let refused = post_json(stack, "/scim_tokens", world::OWNER, learner).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("userId"), "{}", refused.body);

    let listed = json_of(&get_json(stack, "/scim_tokens", world::OWNER).await);
    let listed = listed.as_array().expect("an array");
    assert_eq!(listed.len(), 2);
    assert!(listed[0]["clientId"].as_str() < listed[1]["clientId"].as_str());
    assert_eq!(listed[0]["clientId"], owners_client.as_str());
    assert_eq!(listed[0]["revoked"], 0);
    assert!(listed[0].get("token").is_none());

    let (status, _, _) = scim(stack, Method::GET, "/Users?count=1", token, None).await;
    assert_eq!(status, 200);
    let path = format!("/scim_tokens/{owners_client}");
    assert_eq!(
        stack
            .send(Method::DELETE, &path, world::LEARNER)
            .await
            .status,
        403
    );
    assert_eq!(
        stack.send(Method::DELETE, &path, world::OWNER).await.status,
        204
    );
    assert_eq!(
        stack.send(Method::DELETE, &path, world::OWNER).await.status,
        204
    );
    let unknown = format!("/scim_tokens/{}", acme::LEARNER);
    assert_eq!(
        stack
            .send(Method::DELETE, &unknown, world::OWNER)
            .await
            .status,
        404
    );
    let (status, body, reply) = scim(stack, Method::GET, "/Users", token, None).await;
    assert_scim_error(status, &body, 401, None, "");
    assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
    let listed = json_of(&get_json(stack, "/scim_tokens", world::OWNER).await);
    assert_eq!(listed[0]["revoked"], 1);
    assert_eq!(
        audit_count(stack, "api_client.create", &owners_client).await,
        1
    );
    assert_eq!(
        audit_count(stack, "api_client.revoke", &owners_client).await,
        1
    );
}

async fn a_scim_token_works_on_scim_only_and_scim_takes_nothing_else(stack: &TestStack) {
    let token = token_of(stack, world::OWNER).await;
    let client = json_of(&get_json(stack, "/scim_tokens", world::OWNER).await)[0]["clientId"]
        .as_str()
        .expect("a client")
        .to_owned();
    // Not exchanged for an access token, and no route but SCIM takes it.
    let reply = Reply::send(
        stack
            .http
            .post(format!("{}/api/v3/token", stack.base_url))
            .form(&[
                ("client_id", client.as_str()),
                ("client_secret", token.as_str()),
                ("grant_type", "client_credentials"),
            ]),
    )
    .await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    assert!(reply.body.contains("invalid_client"), "{}", reply.body);
    let reply = Reply::send(
        stack
            .http
            .get(format!("{}/group/{}", stack.base_url, acme::INTERNS))
            .header("Authorization", format!("Bearer {token}")),
    )
    .await;
    assert_eq!(reply.status, 401);

    // SCIM takes neither an access token nor X-Auth headers nor nothing.
    let bearer = stack.bearer_for(acme::OWNER).await;
    let access = bearer.trim_start_matches("Bearer ");
    let (status, body, _) = scim(stack, Method::GET, "/Users", access, None).await;
    assert_scim_error(status, &body, 401, None, "");
    let reply = Reply::send(stack.request(Method::GET, "/scim/v2/Users", world::OWNER)).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
    // The raw token, and the scheme in any case, and the segments in any case.
    let reply = Reply::send(
        stack
            .http
            .get(format!("{}/scim/v2/users/", stack.base_url))
            .header("Authorization", token.as_str()),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply = Reply::send(
        stack
            .http
            .get(format!("{}/scim/v2/USERS?aadOptscim062020", stack.base_url))
            .header("Authorization", format!("bearer {token}")),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);

    // Discovery needs no token.
    let reply = Reply::send(
        stack
            .http
            .get(format!("{}/scim/v2/ServiceProviderConfig", stack.base_url)),
    )
    .await;
    assert_eq!(reply.status, 200);
    let config: Value = serde_json::from_str(&reply.body).expect("JSON");
    assert_eq!(config["patch"]["supported"], true);
    assert_eq!(config["filter"]["maxResults"], 1000);
    let reply = Reply::send(
        stack
            .http
            .get(format!("{}/scim/v2/ResourceTypes", stack.base_url)),
    )
    .await;
    let types: Value = serde_json::from_str(&reply.body).expect("JSON");
    assert_eq!(types["totalResults"], 2);
    let reply = Reply::send(
        stack
            .http
            .get(format!("{}/scim/v2/Schemas/{USER}", stack.base_url)),
    )
    .await;
    assert_eq!(reply.status, 200);

    // Wrong method, unknown route, another media type.
    let (status, body, reply) = scim(stack, Method::DELETE, "/Users", &token, None).await;
    assert_scim_error(status, &body, 405, None, "DELETE");
    assert_eq!(reply.header("allow"), Some("GET, POST"));
    let (status, body, _) = scim(stack, Method::GET, "/Nothing", &token, None).await;
    assert_scim_error(status, &body, 404, None, "");
    let reply = Reply::send(
        stack
            .http
            .post(format!("{}/scim/v2/Users", stack.base_url))
            .header("Authorization", format!("Bearer {token}"))
            .header("Content-Type", "application/xml")
            .body("<user/>"),
    )
    .await;
    assert_eq!(reply.status, 415);
}

async fn users_are_created_read_filtered_replaced_deleted_and_brought_back(stack: &TestStack) {
    let token = token_of(stack, world::OWNER).await;
    let (status, created, reply) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(new_user("Ann.Lee@acme.example.com", "00u-ann")),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("an id").to_owned();
    let location = created["meta"]["location"].as_str().expect("a location");
    assert_eq!(reply.header("location"), Some(location));
    assert!(
        location.ends_with(&format!("/scim/v2/Users/{id}")),
        "{location}"
    );
    assert!(location.starts_with("http://"), "{location}");
    assert_eq!(created["userName"], "Ann.Lee@acme.example.com");
    assert_eq!(created["externalId"], "00u-ann");
    assert_eq!(
        created["name"],
        json!({"givenName": "Ann", "familyName": "Lee"})
    );
    assert_eq!(created["displayName"], "Ann L.");
    assert_eq!(
        created["emails"],
        json!([{"value": "Ann.Lee@acme.example.com", "type": "work", "primary": true}])
    );
    assert_eq!(created["active"], true);
    assert_eq!(created["groups"], json!([]));
    // The department by code, in any case? No: codes are case-sensitive; "s" names none, so
    // the name is tried in any case, and then the root.
    assert_eq!(created[ENTERPRISE]["department"], "Acme");
    assert_eq!(created["meta"]["resourceType"], "User");
    assert!(created.get("password").is_none());
    assert_eq!(audit_count(stack, "user.create", &id).await, 1);

    // An ordinary user: REST reads it.
    let profile = json_of(&get_json(stack, &format!("/user/{id}"), world::OWNER).await);
    assert_eq!(profile["userId"], id.as_str());
    assert_eq!(profile["status"], 1);

    let (status, read, _) = scim(stack, Method::GET, &format!("/Users/{id}"), &token, None).await;
    assert_eq!((status, &read), (200, &created));

    for filter in [
        r#"userName eq "ann.lee@ACME.example.com""#,
        r#"externalId eq "00u-ann""#,
        r#"emails[type eq "work"].value eq "ANN.LEE@acme.example.com""#,
        r#"urn:ietf:params:scim:schemas:core:2.0:User:userName EQ "Ann.Lee@acme.example.com" and EXTERNALID eq "00u-ann""#,
    ] {
        let path = format!("/Users?filter={}", urlencode(filter));
        let (status, list, _) = scim(stack, Method::GET, &path, &token, None).await;
        assert_eq!(status, 200, "{filter}: {list}");
        assert_eq!(list["totalResults"], 1, "{filter}: {list}");
        assert_eq!(list["Resources"][0]["id"], id.as_str(), "{filter}");
    }
    let path = format!("/Users?filter={}", urlencode(r#"externalId eq "00U-ANN""#));
    let (_, list, _) = scim(stack, Method::GET, &path, &token, None).await;
    assert_eq!(list["totalResults"], 0, "externalId is case-sensitive");
    let (_, page, _) = scim(
        stack,
        Method::GET,
        "/Users?startIndex=2&count=3",
        &token,
        None,
    )
    .await;
    assert_eq!(page["startIndex"], 2);
    assert_eq!(page["itemsPerPage"], 3);
    assert_eq!(page["totalResults"], 13);
    let (_, none, _) = scim(stack, Method::GET, "/Users?count=0", &token, None).await;
    assert_eq!(none["Resources"], json!([]));
    let (_, slim, _) = scim(
        stack,
        Method::GET,
        &format!("/Users/{id}?attributes=userName"),
        &token,
        None,
    )
    .await;
    let keys: Vec<&String> = slim.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["id", "meta", "schemas", "userName"]);

    // PUT: what is left out is cleared; the department changes only when given.
    let put = json!({"userName": "ann@acme.example.com", "externalId": "00u-ann2", "active": false, "password": "a new password 1"});
    let (status, replaced, _) = scim(
        stack,
        Method::PUT,
        &format!("/Users/{id}"),
        &token,
        Some(put),
    )
    .await;
    assert_eq!(status, 200, "{replaced}");
    assert_eq!(replaced["userName"], "ann@acme.example.com");
    assert!(replaced.get("name").is_none() && replaced.get("displayName").is_none());
    assert_eq!(replaced["emails"][0]["value"], "ann@acme.example.com");
    assert_eq!(replaced["active"], false);
    assert_eq!(replaced[ENTERPRISE]["department"], "Acme");
    assert_eq!(audit_count(stack, "user.update", &id).await, 1);
    assert_eq!(audit_count(stack, "user.set_active", &id).await, 1);
    assert_eq!(audit_count(stack, "user.set_password", &id).await, 1);
    let (status, body, _) = scim(
        stack,
        Method::PUT,
        &format!("/Users/{id}"),
        &token,
        Some(json!({"active": true})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidValue"), "userName");

    // DELETE: hidden from SCIM, read by REST with status 3, brought back by a POST.
    let (status, _, reply) =
        scim(stack, Method::DELETE, &format!("/Users/{id}"), &token, None).await;
    assert_eq!((status, reply.body.as_str()), (204, ""));
    let (status, body, _) = scim(stack, Method::GET, &format!("/Users/{id}"), &token, None).await;
    assert_scim_error(status, &body, 404, None, &id);
    let path = format!(
        "/Users?filter={}",
        urlencode(r#"userName eq "ann@acme.example.com""#)
    );
    let (_, list, _) = scim(stack, Method::GET, &path, &token, None).await;
    assert_eq!(list["totalResults"], 0);
    let profile = json_of(&get_json(stack, &format!("/user/{id}"), world::OWNER).await);
    assert_eq!(profile["status"], 3);
    assert_eq!(audit_count(stack, "user.deprovision", &id).await, 1);
    let (status, back, _) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(json!({"userName": "ANN@acme.example.com", "externalId": "00u-ann3"})),
    )
    .await;
    assert_eq!(status, 201, "{back}");
    assert_eq!(back["id"], id.as_str());
    assert_eq!(back["active"], true);
    assert_eq!(back["externalId"], "00u-ann3");
    assert_eq!(audit_count(stack, "user.reprovision", &id).await, 1);
}

async fn patches_in_entras_and_oktas_forms_change_a_user_alike(stack: &TestStack) {
    let token = token_of(stack, world::OWNER).await;
    let path = format!("/Users/{}", acme::ENGINEER);
    let entra = json!({"schemas": [PATCH_OP], "Operations": [{"op": "Replace", "path": "active", "value": "False"}]});
    let (status, patched, _) = scim(stack, Method::PATCH, &path, &token, Some(entra)).await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["active"], false);
    let profile =
        json_of(&get_json(stack, &format!("/user/{}", acme::ENGINEER), world::OWNER).await);
    assert_eq!(profile["status"], 3);
    let okta = json!({"schemas": [PATCH_OP], "Operations": [{"op": "replace", "value": {"active": true}}]});
    let (_, patched, _) = scim(stack, Method::PATCH, &path, &token, Some(okta)).await;
    assert_eq!(patched["active"], true);
    let okta = json!({"schemas": [PATCH_OP], "Operations": [{"op": "replace", "value": {"active": false}}]});
    let (_, patched, _) = scim(stack, Method::PATCH, &path, &token, Some(okta)).await;
    assert_eq!(patched["active"], false);
    let entra = json!({"schemas": [PATCH_OP], "Operations": [{"op": "Replace", "path": "active", "value": "True"}]});
    let (_, patched, _) = scim(stack, Method::PATCH, &path, &token, Some(entra)).await;
    assert_eq!(patched["active"], true);
    assert_eq!(
        audit_count(stack, "user.set_active", acme::ENGINEER).await,
        4
    );

    let names = json!({"Operations": [
        {"op": "Add", "path": "name.givenName", "value": "Grace"},
        {"op": "replace", "path": "emails[type eq \"work\"].value", "value": "grace@acme.example.com"},
        {"op": "add", "value": {"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department": "Support", "displayName": "Grace H."}},
        {"op": "replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager", "value": {"value": "x"}},
        {"op": "add", "path": "nickName", "value": "G"}
    ]});
    let (status, patched, _) = scim(stack, Method::PATCH, &path, &token, Some(names)).await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["name"]["givenName"], "Grace");
    assert_eq!(patched["emails"][0]["value"], "grace@acme.example.com");
    assert_eq!(patched["displayName"], "Grace H.");
    assert_eq!(patched[ENTERPRISE]["department"], "Support");
    assert_eq!(patched["userName"], "engineer@acme.example.com");

    // All or nothing: a refused operation leaves the earlier ones undone.
    let refused = json!({"Operations": [
        {"op": "replace", "path": "displayName", "value": "Never"},
        {"op": "remove", "path": "userName"}
    ]});
    let (status, body, _) = scim(stack, Method::PATCH, &path, &token, Some(refused)).await;
    assert_scim_error(status, &body, 400, Some("mutability"), "userName");
    let (_, read, _) = scim(stack, Method::GET, &path, &token, None).await;
    assert_eq!(read["displayName"], "Grace H.");
    let (status, body, _) = scim(
        stack,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"Operations": [{"op": "remove", "path": "groups"}]})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("mutability"), "groups");
    let (status, body, _) = scim(
        stack,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"Operations": [{"op": "move", "path": "active", "value": true}]})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidSyntax"), "op");
    let (status, body, _) = scim(
        stack,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"schemas": [PATCH_OP]})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidSyntax"), "Operations");
    let (status, body, _) = scim(
        stack,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"Operations": [{"op": "add", "path": "emails[type eq", "value": "x"}]})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidPath"), "emails");
}

async fn bad_requests_get_scim_error_bodies_naming_what_is_wrong(stack: &TestStack) {
    let token = token_of(stack, world::OWNER).await;
    // Taken: a REST user's login, then an externalId.
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(json!({"userName": "LEARNER@acme.example.com"})),
    )
    .await;
    assert_scim_error(status, &body, 409, Some("uniqueness"), "userName");
    let (status, _, _) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(json!({"userName": "x1@acme.example.com", "externalId": "dup"})),
    )
    .await;
    assert_eq!(status, 201);
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(json!({"userName": "x2@acme.example.com", "externalId": "dup"})),
    )
    .await;
    assert_scim_error(status, &body, 409, Some("uniqueness"), "externalId");
    // Not found: unknown, malformed, another account's.
    for id in [acme::INTERNS, "not-an-id", world::globex::OWNER] {
        let (status, body, _) =
            scim(stack, Method::GET, &format!("/Users/{id}"), &token, None).await;
        assert_scim_error(status, &body, 404, None, id);
    }
    let (status, body, _) = scim(stack, Method::GET, "/Users", "wrong", None).await;
    assert_scim_error(status, &body, 401, None, "");
    // Values, filters, syntax.
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(json!({"userName": "has space"})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidValue"), "userName");
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(json!({"userName": "p@acme.example.com", "password": "short"})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidValue"), "password");
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(json!({"userName": "a@acme.example.com", "active": "maybe"})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidValue"), "active");
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(json!(["not an object"])),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidSyntax"), "object");
    let path = format!("/Users?filter={}", urlencode(r#"userName sw "a""#));
    let (status, body, _) = scim(stack, Method::GET, &path, &token, None).await;
    assert_scim_error(status, &body, 400, Some("invalidFilter"), "sw");
    let path = format!("/Users?filter={}", urlencode(r#"title eq "a""#));
    let (status, body, _) = scim(stack, Method::GET, &path, &token, None).await;
    assert_scim_error(status, &body, 400, Some("invalidFilter"), "title");
    let (status, body, _) = scim(stack, Method::GET, "/Users?count=ten", &token, None).await;
    assert_scim_error(status, &body, 400, Some("invalidValue"), "count");
}

async fn a_token_of_one_account_is_blind_to_another(stack: &TestStack) {
    let globex = token_of(stack, world::GLOBEX_OWNER).await;
    let (status, body, _) = scim(
        stack,
        Method::GET,
        &format!("/Users/{}", acme::LEARNER),
        &globex,
        None,
    )
    .await;
    assert_scim_error(status, &body, 404, None, acme::LEARNER);
    let (status, body, _) = scim(
        stack,
        Method::GET,
        &format!("/Groups/{}", acme::INTERNS),
        &globex,
        None,
    )
    .await;
    assert_scim_error(status, &body, 404, None, acme::INTERNS);
    let path = format!(
        "/Users?filter={}",
        urlencode(r#"userName eq "learner@acme.example.com""#)
    );
    let (_, list, _) = scim(stack, Method::GET, &path, &globex, None).await;
    assert_eq!(list["totalResults"], 0);
    let (_, all, _) = scim(stack, Method::GET, "/Users", &globex, None).await;
    assert_eq!(all["totalResults"], 2, "{all}");
    let patch = json!({"Operations": [{"op": "replace", "path": "active", "value": false}]});
    let (status, _, _) = scim(
        stack,
        Method::PATCH,
        &format!("/Users/{}", acme::LEARNER),
        &globex,
        Some(patch),
    )
    .await;
    assert_eq!(status, 404);
    let profile =
        json_of(&get_json(stack, &format!("/user/{}", acme::LEARNER), world::OWNER).await);
    assert_eq!(profile["status"], 1);
}

async fn groups_and_their_members_follow_scim_writes(stack: &TestStack) {
    let token = token_of(stack, world::OWNER).await;
    let new = json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"],
        "displayName": "Pilots",
        "externalId": "g-1",
        "members": [{"value": acme::LEARNER, "display": "x"}, {"value": "0191a000-0000-7000-8000-00000000ffff"}],
    });
    let (status, created, reply) = scim(stack, Method::POST, "/Groups", &token, Some(new)).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("an id").to_owned();
    assert_eq!(
        reply.header("location"),
        created["meta"]["location"].as_str()
    );
    assert_eq!(
        created["members"],
        json!([{"value": acme::LEARNER, "display": "learner@acme.example.com"}])
    );
    assert_eq!(created["externalId"], "g-1");
    assert_eq!(audit_count(stack, "group.create", &id).await, 1);
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Groups",
        &token,
        Some(json!({"displayName": "PILOTS"})),
    )
    .await;
    assert_scim_error(status, &body, 409, Some("uniqueness"), "displayName");

    // The user shows its groups.
    let (_, learner, _) = scim(
        stack,
        Method::GET,
        &format!("/Users/{}", acme::LEARNER),
        &token,
        None,
    )
    .await;
    let groups: Vec<&str> = learner["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["value"].as_str())
        .collect();
    assert!(
        groups.contains(&id.as_str()) && groups.contains(&acme::INTERNS),
        "{learner}"
    );
    assert!(
        !groups.contains(&acme::ALL_OF_SALES),
        "smart groups are not SCIM's"
    );

    let path = format!("/Groups/{id}");
    let add = json!({"schemas": [PATCH_OP], "Operations": [{"op": "Add", "path": "members", "value": [{"value": acme::ENGINEER}]}]});
    let (status, patched, _) = scim(stack, Method::PATCH, &path, &token, Some(add)).await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["members"].as_array().map(Vec::len), Some(2));
    assert_eq!(audit_count(stack, "group.add_members", &id).await, 1);
    let remove = json!({"Operations": [{"op": "remove", "path": format!("members[value eq \"{}\"]", acme::LEARNER)}]});
    let (_, patched, _) = scim(stack, Method::PATCH, &path, &token, Some(remove)).await;
    assert_eq!(
        patched["members"],
        json!([{"value": acme::ENGINEER, "display": "engineer@acme.example.com"}])
    );
    assert_eq!(audit_count(stack, "group.remove_members", &id).await, 1);
    let rename =
        json!({"Operations": [{"op": "replace", "value": {"id": id, "displayName": "Pilots 2"}}]});
    let (_, patched, _) = scim(stack, Method::PATCH, &path, &token, Some(rename)).await;
    assert_eq!(patched["displayName"], "Pilots 2");
    let (_, slim, _) = scim(
        stack,
        Method::GET,
        &format!("{path}?excludedAttributes=members"),
        &token,
        None,
    )
    .await;
    assert!(
        slim.get("members").is_none() && slim["displayName"] == "Pilots 2",
        "{slim}"
    );
    let filter = format!(
        "/Groups?filter={}",
        urlencode(r#"displayName eq "pilots 2""#)
    );
    let (_, list, _) = scim(stack, Method::GET, &filter, &token, None).await;
    assert_eq!(list["totalResults"], 1, "{list}");

    let put = json!({"displayName": "Pilots", "members": [{"value": acme::LEARNER}]});
    let (status, replaced, _) = scim(stack, Method::PUT, &path, &token, Some(put)).await;
    assert_eq!(status, 200, "{replaced}");
    assert!(replaced.get("externalId").is_none(), "{replaced}");
    assert_eq!(replaced["members"][0]["value"], acme::LEARNER);
    assert_eq!(audit_count(stack, "group.replace_members", &id).await, 1);

    let (status, body, _) = scim(
        stack,
        Method::GET,
        &format!("/Groups/{}", acme::ALL_OF_SALES),
        &token,
        None,
    )
    .await;
    assert_scim_error(status, &body, 404, None, acme::ALL_OF_SALES);
    let (status, _, _) = scim(stack, Method::DELETE, &path, &token, None).await;
    assert_eq!(status, 204);
    let (status, _, _) = scim(stack, Method::GET, &path, &token, None).await;
    assert_eq!(status, 404);
    let profile =
        json_of(&get_json(stack, &format!("/user/{}", acme::LEARNER), world::OWNER).await);
    assert_eq!(profile["status"], 1, "the users stay");
}

async fn searches_by_post_answer_as_the_lists_do(stack: &TestStack) {
    let token = token_of(stack, world::OWNER).await;
    let (status, ann, _) = scim(
        stack,
        Method::POST,
        "/Users",
        &token,
        Some(new_user("ann.search@acme.example.com", "00u-search")),
    )
    .await;
    assert_eq!(status, 201, "{ann}");
    let (status, group, _) = scim(
        stack,
        Method::POST,
        "/Groups",
        &token,
        Some(json!({"displayName": "Searchers", "externalId": "00g-search"})),
    )
    .await;
    assert_eq!(status, 201, "{group}");

    // The same filter, paging and projection as GET, from the body; keys in any case.
    let search = json!({
        "schemas": [SEARCH],
        "filter": r#"userName eq "ANN.SEARCH@acme.example.com""#,
        "attributes": ["userName"],
        "StartIndex": 1,
        "count": 10,
    });
    let (status, found, _) =
        scim(stack, Method::POST, "/Users/.search", &token, Some(search)).await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(
        found["schemas"],
        json!(["urn:ietf:params:scim:api:messages:2.0:ListResponse"])
    );
    assert_eq!(found["totalResults"], 1, "{found}");
    let resource = &found["Resources"][0];
    assert_eq!(resource["id"], ann["id"]);
    assert_eq!(resource["userName"], "ann.search@acme.example.com");
    assert!(resource.get("emails").is_none(), "{resource}");
    let (_, listed, _) = scim(stack, Method::GET, "/Users?count=1000", &token, None).await;
    let (_, searched, _) = scim(
        stack,
        Method::POST,
        "/users/.search",
        &token,
        Some(json!({"count": 1000})),
    )
    .await;
    assert_eq!(searched, listed);
    let search =
        json!({"excludedAttributes": "members", "filter": r#"displayName eq "searchers""#});
    let (status, groups, _) =
        scim(stack, Method::POST, "/Groups/.search", &token, Some(search)).await;
    assert_eq!(status, 200, "{groups}");
    assert_eq!(groups["totalResults"], 1, "{groups}");
    assert_eq!(groups["Resources"][0]["id"], group["id"]);
    assert!(groups["Resources"][0].get("members").is_none());

    // At the root: the users, then the groups, paged as one list.
    let users = listed["totalResults"].as_u64().expect("a total");
    let (_, all_groups, _) = scim(stack, Method::GET, "/Groups", &token, None).await;
    let groups_total = all_groups["totalResults"].as_u64().expect("a total");
    let (status, root, _) = scim(
        stack,
        Method::POST,
        "/.search",
        &token,
        Some(json!({"startIndex": users, "count": 2})),
    )
    .await;
    assert_eq!(status, 200, "{root}");
    assert_eq!(root["totalResults"], users + groups_total, "{root}");
    assert_eq!(root["startIndex"], users);
    assert_eq!(root["itemsPerPage"], 2);
    assert_eq!(root["Resources"][0]["meta"]["resourceType"], "User");
    assert_eq!(root["Resources"][1]["meta"]["resourceType"], "Group");
    assert_eq!(root["Resources"][1], all_groups["Resources"][0]);
    // A filter one type lacks matches none of that type; one neither knows is refused.
    let (status, root, _) = scim(
        stack,
        Method::POST,
        "/.search",
        &token,
        Some(json!({"filter": r#"externalId eq "00g-search""#})),
    )
    .await;
    assert_eq!(status, 200, "{root}");
    assert_eq!(root["totalResults"], 1, "{root}");
    assert_eq!(root["Resources"][0]["id"], group["id"]);
    let (status, root, _) = scim(
        stack,
        Method::POST,
        "/.search",
        &token,
        Some(json!({"filter": r#"userName eq "ann.search@acme.example.com""#})),
    )
    .await;
    assert_eq!(status, 200, "{root}");
    assert_eq!(root["totalResults"], 1, "{root}");
    assert_eq!(root["Resources"][0]["id"], ann["id"]);
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/.search",
        &token,
        Some(json!({"filter": r#"userName co "ann""#})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidFilter"), "co");

    // Refusals: the body, its values, the method and the token.
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Users/.search",
        &token,
        Some(json!([])),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidSyntax"), "SearchRequest");
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Users/.search",
        &token,
        Some(json!({"count": "many"})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidValue"), "count");
    let (status, body, _) = scim(
        stack,
        Method::POST,
        "/Users/.search",
        &token,
        Some(json!({"filter": 7})),
    )
    .await;
    assert_scim_error(status, &body, 400, Some("invalidValue"), "filter");
    let (status, body, reply) = scim(stack, Method::GET, "/.search", &token, None).await;
    assert_scim_error(status, &body, 405, None, "GET");
    assert_eq!(reply.header("allow"), Some("POST"));
    let (status, body, reply) = scim(
        stack,
        Method::POST,
        "/Users/.search",
        "not a token",
        Some(json!({})),
    )
    .await;
    assert_scim_error(status, &body, 401, None, "");
    assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
}

fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The world, imported with a SCIM client acting as Acme's administrator and a user carrying an
/// `externalId` (provisioning.md section 13).
struct ImportedScim {
    stack: TestStack,
}

const IMPORTED_CLIENT: &str = "0191a000-0000-7000-8000-000000000901";
const IMPORTED_TOKEN: &str = "4f1c2b3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5";
const IMPORTED_USER: &str = "0191a000-0000-7000-8000-000000000902";

impl Fixture for ImportedScim {
    async fn start(backend: Backend) -> Option<Self> {
        let mut document = world::document();
        world::add_rows(
            &mut document,
            0,
            "users",
            vec![json!({
                "id": IMPORTED_USER, "email": "imported@acme.example.com",
                "password": world::PASSWORD, "role": "learner", "departmentId": acme::ROOT,
                "externalId": "00u-imported",
            })],
        );
        document["accounts"][0]["apiClients"] = json!([{
            "clientId": IMPORTED_CLIENT, "clientSecret": IMPORTED_TOKEN,
            "userId": acme::ADMIN, "scim": true,
        }]);
        let stack = world::stack_holding(backend, document).await?;
        Some(Self { stack })
    }

    async fn stop(self) {
        self.stack.stop().await;
    }
}

async fn the_import_makes_scim_clients_and_external_ids(fixture: &ImportedScim) {
    let stack = &fixture.stack;
    let path = format!(
        "/Users?filter={}",
        urlencode(r#"externalId eq "00u-imported""#)
    );
    let (status, list, _) = scim(stack, Method::GET, &path, IMPORTED_TOKEN, None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["Resources"][0]["id"], IMPORTED_USER);
    let listed = json_of(&get_json(stack, "/scim_tokens", world::OWNER).await);
    assert_eq!(listed[0]["clientId"], IMPORTED_CLIENT);
    assert_eq!(listed[0]["userId"], acme::ADMIN);

    // Imported groups carry the import time, not the epoch.
    let (status, groups, _) = scim(stack, Method::GET, "/Groups", IMPORTED_TOKEN, None).await;
    assert_eq!(status, 200, "{groups}");
    let groups = groups["Resources"].as_array().expect("Resources");
    assert!(!groups.is_empty(), "the world holds plain groups");
    let a_day_ago = chrono::Utc::now() - chrono::Duration::days(1);
    for group in groups {
        for stamp in ["created", "lastModified"] {
            let at = group["meta"][stamp].as_str().expect("a timestamp");
            let at = chrono::DateTime::parse_from_rfc3339(at).expect("RFC 3339");
            assert!(at > a_day_ago, "{stamp} of {group}");
        }
    }
}
