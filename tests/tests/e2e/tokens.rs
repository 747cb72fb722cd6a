//! API clients and access tokens (contract section 12), as the token-using integrations of
//! `docs/spec/clients.md` use them: `POST /api/v3/token` with a form body, then the token as
//! `Authorization: Bearer <token>` or as the raw `Authorization: <token>`.

use lms_core::{
    auth::{PasswordHasher, tokens::MAX_LIVE_TOKENS_PER_CLIENT},
    entities::{api_client, api_token, custom_role_permission},
    import::import_document,
};
use lms_proto::v1::{self as pb, directory_service_client::DirectoryServiceClient};
use lms_tests::{
    Reply, TestStack, on_both_backends,
    stack::{StackOptions, TEST_POLICY},
    world::{self, acme},
};
use sea_orm::{
    ColumnTrait as _, EntityTrait as _, QueryFilter as _, prelude::Uuid, sea_query::Expr,
};
use serde_json::{Value, json};
use tonic::Code;

on_both_backends!(
    a_token_works_as_bearer_and_raw_on_every_operation_under_every_prefix,
    failed_grants_get_rfc_6749_errors,
    revocation_and_deactivation_apply_on_the_next_request,
    a_role_change_ends_the_token_on_every_core,
    a_scope_change_ends_the_token,
    changes_that_keep_the_rights_keep_the_token,
    the_token_endpoint_answers_json_whatever_accept_says,
    a_client_of_the_import_document_gets_a_token,
    wrong_secrets_are_throttled_per_client,
    only_owners_and_administrators_manage_api_clients,
    secrets_and_tokens_are_stored_only_as_hashes,
    an_expired_token_is_401_and_a_new_one_is_issued,
    a_client_keeps_only_its_newest_tokens_live,
);

type Directory = DirectoryServiceClient<tonic::transport::Channel>;

async fn directory(stack: &TestStack) -> Directory {
    DirectoryServiceClient::new(stack.grpc_channel().await)
}

/// A new API client acting as `user`, made by the owner.
async fn new_client(stack: &TestStack, user: &str) -> (String, String) {
    let made = directory(stack)
        .await
        .create_api_client(world::OWNER.grpc_request(pb::CreateApiClientRequest {
            user_id: user.to_owned(),
            scim: false,
        }))
        .await
        .expect("the owner makes an API client")
        .into_inner();
    (made.client_id, made.client_secret)
}

/// `POST {path}` with a form body, as PHP's `http_build_query` and Guzzle's `form_params` send it.
async fn post_form(stack: &TestStack, path: &str, form: &str) -> Reply {
    Reply::send(
        stack
            .http
            .post(format!("{}{path}", stack.base_url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form.to_owned()),
    )
    .await
}

fn grant(client_id: &str, secret: &str) -> String {
    form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", client_id)
        .append_pair("client_secret", secret)
        .append_pair("grant_type", "client_credentials")
        .finish()
}

fn json_of(reply: &Reply) -> Value {
    serde_json::from_str(&reply.body).unwrap_or_else(|error| panic!("{error}: {}", reply.body))
}

async fn token_for(stack: &TestStack, client_id: &str, secret: &str) -> String {
    let reply = post_form(stack, "/api/v3/token", &grant(client_id, secret)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let body = json_of(&reply);
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["expires_in"], 1800);
    body["access_token"].as_str().expect("a token").to_owned()
}

/// `method path`, authenticated by `authorization` alone.
fn with_token(
    stack: &TestStack,
    method: reqwest::Method,
    path: &str,
    authorization: &str,
) -> reqwest::RequestBuilder {
    stack
        .http
        .request(method, format!("{}{path}", stack.base_url))
        .header("Authorization", authorization)
}

async fn send(builder: reqwest::RequestBuilder) -> Reply {
    Reply::from(builder.send().await.expect("request")).await
}

/// `GET path` with a token, answered in JSON.
async fn get_json(stack: &TestStack, path: &str, authorization: &str) -> Reply {
    send(
        with_token(stack, reqwest::Method::GET, path, authorization)
            .header("Accept", "application/json"),
    )
    .await
}

/// `POST path` with a token and a body of `content_type`.
async fn post_with_token(
    stack: &TestStack,
    path: &str,
    authorization: &str,
    content_type: &str,
    body: String,
) -> Reply {
    send(
        with_token(stack, reqwest::Method::POST, path, authorization)
            .header("Content-Type", content_type)
            .body(body),
    )
    .await
}

/// The status of reading the Interns group with `authorization`.
async fn group_status(stack: &TestStack, authorization: &str) -> u16 {
    send(with_token(
        stack,
        reqwest::Method::GET,
        &format!("/group/{}", acme::INTERNS),
        authorization,
    ))
    .await
    .status
}

/// A new client acting as `user`, and a `Bearer` token of it.
async fn bearer_for(stack: &TestStack, user: &str) -> (String, String, String) {
    let (client_id, secret) = new_client(stack, user).await;
    let bearer = format!("Bearer {}", token_for(stack, &client_id, &secret).await);
    (client_id, secret, bearer)
}

async fn a_token_works_as_bearer_and_raw_on_every_operation_under_every_prefix(stack: &TestStack) {
    let (client_id, secret) = new_client(stack, acme::ADMIN).await;
    // A JSON body and the PHP front controller's path work too.
    let reply = Reply::send(
        stack
            .http
            .post(format!("{}/index.php/api/v3/token", stack.base_url))
            .header("Content-Type", "application/json")
            .body(
                json!({"client_id": client_id, "client_secret": secret,
                          "grant_type": "client_credentials"})
                .to_string(),
            ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let token = token_for(stack, &client_id, &secret).await;
    let bearer = format!("Bearer {token}");
    for (prefix, authorization) in [
        ("", bearer.as_str()),
        ("/api/v2", token.as_str()),
        ("/index.php/api/v2", bearer.as_str()),
    ] {
        let group = send(with_token(
            stack,
            reqwest::Method::GET,
            &format!("{prefix}/group/{}", acme::INTERNS),
            authorization,
        ))
        .await;
        assert_eq!(group.status, 200, "{prefix}: {}", group.body);
        let content = get_json(
            stack,
            &format!("{prefix}/content/{}", acme::WELCOME_COURSE),
            authorization,
        )
        .await;
        assert_eq!(json_of(&content)["title"], "Welcome to Acme");
        let points = get_json(
            stack,
            &format!("{prefix}/gamification/points?userIds[0]={}", acme::LEARNER),
            authorization,
        )
        .await;
        assert_eq!(
            json_of(&points),
            json!([{"userId": acme::LEARNER, "points": 421}])
        );
        let renamed = post_with_token(
            stack,
            &format!("{prefix}/group/{}", acme::EMPTY_GROUP),
            authorization,
            "application/xml",
            "<request><name>Nobody yet</name></request>".to_owned(),
        )
        .await;
        assert_eq!(renamed.status, 200, "{}", renamed.body);
        for (path, body, status) in [
            (
                format!("{prefix}/department/{}", acme::SUPPORT),
                json!({"code": "SUP"}),
                204,
            ),
            (
                format!("{prefix}/department"),
                json!({"name": "Field", "parentDepartmentId": acme::SALES}),
                201,
            ),
            (
                format!("{prefix}/enrollment/delete"),
                json!({"enrollmentIds": [acme::SUPPORTER_WELCOME]}),
                204,
            ),
        ] {
            let reply = post_with_token(
                stack,
                &path,
                authorization,
                "application/json",
                body.to_string(),
            )
            .await;
            assert_eq!(reply.status, status, "{path}: {}", reply.body);
        }
    }
    // The token alone authenticates: wrong X-Auth-* headers beside it change nothing.
    let reply = send(
        with_token(
            stack,
            reqwest::Method::GET,
            &format!("/group/{}", acme::INTERNS),
            &bearer,
        )
        .header("X-Auth-Account-Url", world::ACME_URL)
        .header("X-Auth-Email", world::OWNER.email)
        .header("X-Auth-Password", "wrong"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    // A token of nothing, or a tampered one, is the usual 401.
    for authorization in ["Bearer nothing", &format!("{token}x"), "Bearer"] {
        let reply = send(with_token(
            stack,
            reqwest::Method::GET,
            &format!("/group/{}", acme::INTERNS),
            authorization,
        ))
        .await;
        reply.assert_error(401, "authentication failed");
    }
}

async fn failed_grants_get_rfc_6749_errors(stack: &TestStack) {
    let (client_id, secret) = new_client(stack, acme::ADMIN).await;
    let unknown = "0191a000-0000-7000-8000-0000000fffff";
    for (form, status, error) in [
        (grant(&client_id, "wrong"), 401, "invalid_client"),
        (grant(unknown, &secret), 401, "invalid_client"),
        (grant("not-a-uuid", &secret), 401, "invalid_client"),
        (
            format!("client_id={client_id}&client_secret={secret}&grant_type=password"),
            400,
            "unsupported_grant_type",
        ),
        (
            format!("client_id={client_id}&client_secret={secret}"),
            400,
            "invalid_request",
        ),
        (
            "grant_type=client_credentials".to_owned(),
            400,
            "invalid_request",
        ),
    ] {
        let reply = post_form(stack, "/api/v3/token", &form).await;
        assert_eq!(reply.status, status, "{form}: {}", reply.body);
        assert_eq!(json_of(&reply), json!({"error": error}), "{form}");
    }
}

async fn set_role(
    directory: &mut Directory,
    user: &str,
    role: pb::Role,
    custom_role: Option<&str>,
) {
    directory
        .set_user_role(world::OWNER.grpc_request(pb::SetUserRoleRequest {
            user_id: user.to_owned(),
            role: Some(pb::RoleAssignment {
                role: role.into(),
                custom_role_id: custom_role.map(str::to_owned),
            }),
        }))
        .await
        .expect("the owner changes the role");
}

async fn set_managed(directory: &mut Directory, user: &str, departments: &[&str]) {
    directory
        .set_user_managed_departments(world::OWNER.grpc_request(
            pb::SetUserManagedDepartmentsRequest {
                user_id: user.to_owned(),
                managed_department_ids: departments.iter().map(|id| (*id).to_owned()).collect(),
            },
        ))
        .await
        .expect("the owner changes the managed departments");
}

async fn revocation_and_deactivation_apply_on_the_next_request(stack: &TestStack) {
    let (client_id, secret, token) = bearer_for(stack, acme::ADMIN).await;
    assert_eq!(group_status(stack, &token).await, 200);
    let mut directory = directory(stack).await;
    directory
        .revoke_api_client(world::OWNER.grpc_request(pb::RevokeApiClientRequest {
            client_id: client_id.clone(),
        }))
        .await
        .expect("the owner revokes the client");
    let group = format!("/group/{}", acme::INTERNS);
    send(with_token(stack, reqwest::Method::GET, &group, &token))
        .await
        .assert_error(401, "authentication failed");
    let reply = post_form(stack, "/api/v3/token", &grant(&client_id, &secret)).await;
    assert_eq!(
        (reply.status, json_of(&reply)),
        (401, json!({"error": "invalid_client"}))
    );

    let (client_id, secret, token) = bearer_for(stack, acme::DEPT_ADMIN).await;
    assert_eq!(group_status(stack, &token).await, 200);
    directory
        .set_user_active(world::OWNER.grpc_request(pb::SetUserActiveRequest {
            user_id: acme::DEPT_ADMIN.to_owned(),
            active: false,
        }))
        .await
        .expect("the owner deactivates the user");
    send(with_token(stack, reqwest::Method::GET, &group, &token))
        .await
        .assert_error(401, "authentication failed");
    let reply = post_form(stack, "/api/v3/token", &grant(&client_id, &secret)).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
}

/// A token is issued for its user's rights as they are: a changed role ends it on its next
/// request, on every core sharing the database, and changing the role back does not revive it.
/// A new token acts with the new role.
async fn a_role_change_ends_the_token_on_every_core(stack: &TestStack) {
    let (client_id, secret, token) = bearer_for(stack, acme::ADMIN).await;
    assert_eq!(group_status(stack, &token).await, 200);
    let replica = stack.replica(StackOptions::new(stack.backend())).await;
    assert_eq!(group_status(&replica, &token).await, 200);

    // Changed through the replica; the first core refuses the token on its next request.
    let mut directory = DirectoryServiceClient::new(replica.grpc_channel().await);
    set_role(&mut directory, acme::ADMIN, pb::Role::Learner, None).await;
    assert_eq!(group_status(stack, &token).await, 401);
    set_role(
        &mut directory,
        acme::ADMIN,
        pb::Role::AccountAdministrator,
        None,
    )
    .await;
    assert_eq!(group_status(stack, &token).await, 401);
    assert_eq!(group_status(&replica, &token).await, 401);

    set_role(&mut directory, acme::ADMIN, pb::Role::Learner, None).await;
    let fresh = format!("Bearer {}", token_for(stack, &client_id, &secret).await);
    send(with_token(
        stack,
        reqwest::Method::GET,
        &format!("/group/{}", acme::INTERNS),
        &fresh,
    ))
    .await
    .assert_error(403, "permission to read groups");
    replica.stop().await;
}

/// The scope is the rights too: managed departments, the custom role and its permissions,
/// whoever changes them (an RPC or SQL typed by hand).
async fn a_scope_change_ends_the_token(stack: &TestStack) {
    let mut directory = directory(stack).await;
    let (_, _, department_admin) = bearer_for(stack, acme::DEPT_ADMIN).await;
    assert_eq!(group_status(stack, &department_admin).await, 200);
    set_managed(
        &mut directory,
        acme::DEPT_ADMIN,
        &[acme::SALES, acme::ENGINEERING],
    )
    .await;
    assert_eq!(group_status(stack, &department_admin).await, 401);

    let (_, _, viewer) = bearer_for(stack, acme::VIEWER).await;
    assert_eq!(group_status(stack, &viewer).await, 200);
    set_role(
        &mut directory,
        acme::VIEWER,
        pb::Role::Custom,
        Some(acme::COORDINATOR_ROLE),
    )
    .await;
    assert_eq!(group_status(stack, &viewer).await, 401);

    let (_, _, coordinator) = bearer_for(stack, acme::COORDINATOR).await;
    assert_eq!(group_status(stack, &coordinator).await, 200);
    custom_role_permission::Entity::delete_many()
        .filter(
            custom_role_permission::Column::CustomRoleId
                .eq(acme::COORDINATOR_ROLE.parse::<Uuid>().unwrap()),
        )
        .filter(custom_role_permission::Column::Permission.eq("points.read"))
        .exec(stack.db())
        .await
        .expect("a permission taken from the role by hand");
    assert_eq!(group_status(stack, &coordinator).await, 401);
}

/// Changes that leave a user's rights as they were keep the user's tokens: a new password,
/// the same managed departments set again, another user's new role.
async fn changes_that_keep_the_rights_keep_the_token(stack: &TestStack) {
    let mut directory = directory(stack).await;
    let (_, _, token) = bearer_for(stack, acme::DEPT_ADMIN).await;
    directory
        .set_user_password(world::OWNER.grpc_request(pb::SetUserPasswordRequest {
            user_id: acme::DEPT_ADMIN.to_owned(),
            password: "an entirely new passphrase".to_owned(),
        }))
        .await
        .expect("the owner sets a password");
    set_managed(&mut directory, acme::DEPT_ADMIN, &[acme::SALES]).await;
    set_role(&mut directory, acme::PUBLISHER, pb::Role::Learner, None).await;
    set_managed(&mut directory, acme::COORDINATOR, &[acme::ENGINEERING]).await;
    assert_eq!(group_status(stack, &token).await, 200);
    assert_eq!(group_status(stack, &token).await, 200);
}

/// RFC 6749 answers are JSON: the token endpoint ignores `Accept`, for its answer and for its
/// errors alike, where every other route would answer 406.
async fn the_token_endpoint_answers_json_whatever_accept_says(stack: &TestStack) {
    let (client_id, secret) = new_client(stack, acme::ADMIN).await;
    // What every other route answers to that `Accept` (without credentials).
    for (accept, negotiated) in [
        ("text/html", 406),
        ("application/xml", 401),
        ("image/png;q=0.5", 406),
    ] {
        for (form, status) in [
            (grant(&client_id, &secret), 200),
            (grant(&client_id, "wrong"), 401),
        ] {
            let reply = Reply::send(
                stack
                    .http
                    .post(format!("{}/api/v3/token", stack.base_url))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .header("Accept", accept)
                    .body(form),
            )
            .await;
            assert_eq!(reply.status, status, "{accept}: {}", reply.body);
            assert_eq!(
                reply.header("content-type"),
                Some("application/json"),
                "{accept}"
            );
            json_of(&reply);
        }
        // A failure the grant does not describe is the gateway's JSON error.
        let reply = send(
            stack
                .http
                .get(format!("{}/api/v3/token", stack.base_url))
                .header("Accept", accept),
        )
        .await;
        assert_eq!(reply.status, 405, "{}", reply.body);
        assert_eq!(json_of(&reply)["code"], 405);
        // Every other route still negotiates.
        let reply = send(
            stack
                .http
                .get(format!("{}/group/{}", stack.base_url, acme::INTERNS))
                .header("Accept", accept),
        )
        .await;
        assert_eq!(reply.status, negotiated, "{accept}: {}", reply.body);
    }
}

/// An API client given by the import document (contract section 12) exchanges the secret the
/// document gave for a token, and acts as its user; the secret is stored only as a hash.
async fn a_client_of_the_import_document_gets_a_token(stack: &TestStack) {
    const ROOT: &str = "0191c000-0000-7000-8000-000000000001";
    const OWNER: &str = "0191c000-0000-7000-8000-000000000201";
    const LEARNER: &str = "0191c000-0000-7000-8000-000000000202";
    const CLIENT: &str = "0191c000-0000-7000-8000-000000000701";
    const SECRET: &str = "c0ffee5e7a1b2c3d4e5f60718293a4b5";
    let document = json!({"accounts": [{
        "url": "https://initech.example.com",
        "rootDepartment": {"id": ROOT, "name": "Initech"},
        "users": [
            {"id": OWNER, "email": "owner@initech.example.com", "password": world::PASSWORD,
             "role": "account_owner", "departmentId": ROOT},
            {"id": LEARNER, "email": "peter@initech.example.com", "password": world::PASSWORD,
             "role": "learner", "departmentId": ROOT}
        ],
        "points": [{"userId": LEARNER, "points": 7}],
        "apiClients": [{"clientId": CLIENT, "clientSecret": SECRET, "userId": OWNER}]
    }]});
    let document = serde_json::from_value(document).expect("a document");
    let hasher = PasswordHasher::new(TEST_POLICY).expect("policy");
    import_document(stack.db(), document, &hasher)
        .await
        .expect("the document imports");

    let reply = post_form(
        stack,
        "/index.php/api/v3/token",
        &grant(CLIENT, "c0ffee-but-not-the-secret"),
    )
    .await;
    assert_eq!(
        (reply.status, json_of(&reply)),
        (401, json!({"error": "invalid_client"}))
    );
    let token = token_for(stack, CLIENT, SECRET).await;
    let points = get_json(stack, "/gamification/points", &format!("Bearer {token}")).await;
    assert_eq!(points.status, 200, "{}", points.body);
    assert_eq!(
        json_of(&points),
        json!([{"userId": OWNER, "points": 0}, {"userId": LEARNER, "points": 7}])
    );
    let stored = stack.snapshot().await;
    assert!(
        !stored.contains(SECRET),
        "the secret is stored in plain text"
    );
}

async fn wrong_secrets_are_throttled_per_client(stack: &TestStack) {
    let (client_id, secret) = new_client(stack, acme::ADMIN).await;
    let (other_id, other_secret) = new_client(stack, acme::ADMIN).await;
    for _ in 0..10 {
        let reply = post_form(stack, "/api/v3/token", &grant(&client_id, "wrong")).await;
        assert_eq!(reply.status, 401, "{}", reply.body);
    }
    for attempt in [grant(&client_id, "wrong"), grant(&client_id, &secret)] {
        let reply = post_form(stack, "/api/v3/token", &attempt).await;
        assert_eq!(reply.status, 429, "{}", reply.body);
        assert!(reply.header("retry-after").is_some());
    }
    // Another client is not held back.
    token_for(stack, &other_id, &other_secret).await;
}

async fn only_owners_and_administrators_manage_api_clients(stack: &TestStack) {
    let mut directory = directory(stack).await;
    for login in [world::DEPT_ADMIN, world::LEARNER, world::COORDINATOR] {
        let refused = directory
            .create_api_client(login.grpc_request(pb::CreateApiClientRequest {
                user_id: login.id.to_owned(),
                scim: false,
            }))
            .await
            .expect_err("only owners and administrators make API clients");
        assert_eq!(refused.code(), Code::PermissionDenied, "{}", login.email);
    }
    let made = directory
        .create_api_client(world::ADMIN.grpc_request(pb::CreateApiClientRequest {
            user_id: acme::LEARNER.to_owned(),
            scim: false,
        }))
        .await
        .expect("an administrator makes one")
        .into_inner();
    let listed = directory
        .list_api_clients(world::OWNER.grpc_request(pb::ListApiClientsRequest {}))
        .await
        .expect("the owner lists them")
        .into_inner();
    assert_eq!(
        listed.api_clients,
        [pb::ApiClient {
            client_id: made.client_id.clone(),
            user_id: acme::LEARNER.to_owned(),
            revoked: false,
            scim: false,
        }]
    );
    // Another account's clients are invisible: nothing listed, and revoking is a 404.
    let globex = directory
        .list_api_clients(world::GLOBEX_OWNER.grpc_request(pb::ListApiClientsRequest {}))
        .await
        .expect("listed")
        .into_inner();
    assert!(globex.api_clients.is_empty());
    let refused = directory
        .revoke_api_client(
            world::GLOBEX_OWNER.grpc_request(pb::RevokeApiClientRequest {
                client_id: made.client_id.clone(),
            }),
        )
        .await
        .expect_err("a client of another account names nothing");
    assert_eq!(refused.code(), Code::NotFound);
    // A user of another account is not a field value this account can name.
    let refused = directory
        .create_api_client(world::OWNER.grpc_request(pb::CreateApiClientRequest {
            user_id: lms_tests::world::globex::WORKER.to_owned(),
            scim: false,
        }))
        .await
        .expect_err("a user of another account");
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert!(
        refused.message().contains("userId"),
        "{}",
        refused.message()
    );
}

async fn secrets_and_tokens_are_stored_only_as_hashes(stack: &TestStack) {
    let (client_id, secret) = new_client(stack, acme::ADMIN).await;
    assert!(secret.len() >= 32, "at least 128 random bits: {secret}");
    let token = token_for(stack, &client_id, &secret).await;
    let clients = api_client::Entity::find()
        .all(stack.db())
        .await
        .expect("rows");
    let tokens = api_token::Entity::find()
        .all(stack.db())
        .await
        .expect("rows");
    assert_eq!((clients.len(), tokens.len()), (1, 1));
    let stored = format!("{clients:?} {tokens:?} {}", stack.snapshot().await);
    assert!(
        !stored.contains(&secret),
        "the secret is stored in plain text"
    );
    assert!(
        !stored.contains(&token),
        "the token is stored in plain text"
    );
}

async fn an_expired_token_is_401_and_a_new_one_is_issued(stack: &TestStack) {
    let (client_id, secret) = new_client(stack, acme::ADMIN).await;
    let token = format!("Bearer {}", token_for(stack, &client_id, &secret).await);
    let group = format!("/group/{}", acme::INTERNS);
    assert_eq!(
        send(with_token(stack, reqwest::Method::GET, &group, &token))
            .await
            .status,
        200
    );
    // Half an hour later (expiry is wall-clock time shared by every core: the rows say when).
    api_token::Entity::update_many()
        .col_expr(api_token::Column::ExpiresAt, Expr::value(0_i64))
        .exec(stack.db())
        .await
        .expect("update");
    send(with_token(stack, reqwest::Method::GET, &group, &token))
        .await
        .assert_error(401, "authentication failed");
    // What clients do on a 401: fetch a new token. The expired row goes as it comes.
    let fresh = format!("Bearer {}", token_for(stack, &client_id, &secret).await);
    assert_eq!(
        send(with_token(stack, reqwest::Method::GET, &group, &fresh))
            .await
            .status,
        200
    );
    assert_eq!(
        api_token::Entity::find()
            .all(stack.db())
            .await
            .expect("rows")
            .len(),
        1
    );
}

async fn a_client_keeps_only_its_newest_tokens_live(stack: &TestStack) {
    let (client_id, secret) = new_client(stack, acme::ADMIN).await;
    let (other_id, other_secret) = new_client(stack, acme::ADMIN).await;
    let other = format!(
        "Bearer {}",
        token_for(stack, &other_id, &other_secret).await
    );
    let mut issued = Vec::new();
    for _ in 0..MAX_LIVE_TOKENS_PER_CLIENT + 5 {
        issued.push(format!(
            "Bearer {}",
            token_for(stack, &client_id, &secret).await
        ));
    }
    let client = Uuid::parse_str(&client_id).expect("a client id");
    let live = api_token::Entity::find()
        .filter(api_token::Column::ClientId.eq(client))
        .all(stack.db())
        .await
        .expect("rows");
    assert_eq!(live.len(), MAX_LIVE_TOKENS_PER_CLIENT);
    // Grants within one second tie on expiry: which older ones went is not fixed, but the
    // newest always stays, and every other client's tokens are untouched.
    assert_eq!(
        group_status(stack, issued.last().expect("a token")).await,
        200
    );
    assert_eq!(group_status(stack, &other).await, 200);
    let mut working = 0;
    for token in &issued {
        match group_status(stack, token).await {
            200 => working += 1,
            status => assert_eq!(status, 401, "a revoked token is refused"),
        }
    }
    assert_eq!(working, MAX_LIVE_TOKENS_PER_CLIENT);
}
