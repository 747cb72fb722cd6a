//! API clients and access tokens (contract section 12), as the token-using integrations of
//! `docs/spec/clients.md` use them: `POST /api/v3/token` with a form body, then the token as
//! `Authorization: Bearer <token>` or as the raw `Authorization: <token>`.

use lms_core::entities::{api_client, api_token};
use lms_proto::{
    metadata::{ACCOUNT_URL, EMAIL, PASSWORD},
    v1::{self as pb, directory_service_client::DirectoryServiceClient},
};
use lms_tests::{
    Reply, TestStack, on_both_backends,
    world::{self, Login, acme},
};
use sea_orm::{EntityTrait as _, sea_query::Expr};
use serde_json::{Value, json};
use tonic::Code;

on_both_backends!(
    a_token_works_as_bearer_and_raw_on_every_operation_under_every_prefix,
    failed_grants_get_rfc_6749_errors,
    revocation_deactivation_and_a_role_change_apply_on_the_next_request,
    wrong_secrets_are_throttled_per_client,
    only_owners_and_administrators_manage_api_clients,
    secrets_and_tokens_are_stored_only_as_hashes,
    an_expired_token_is_401_and_a_new_one_is_issued,
);

fn as_user<T>(login: Login, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    let metadata = request.metadata_mut();
    metadata.insert(ACCOUNT_URL, login.account_url.parse().unwrap());
    metadata.insert(EMAIL, login.email.parse().unwrap());
    metadata.insert(PASSWORD, world::PASSWORD.parse().unwrap());
    request
}

async fn directory(stack: &TestStack) -> DirectoryServiceClient<tonic::transport::Channel> {
    DirectoryServiceClient::new(stack.grpc_channel().await)
}

/// A new API client acting as `user`, made by the owner.
async fn new_client(stack: &TestStack, user: &str) -> (String, String) {
    let made = directory(stack)
        .await
        .create_api_client(as_user(
            world::OWNER,
            pb::CreateApiClientRequest {
                user_id: user.to_owned(),
            },
        ))
        .await
        .expect("the owner makes an API client")
        .into_inner();
    (made.client_id, made.client_secret)
}

/// `POST {path}` with a form body, as PHP's `http_build_query` and Guzzle's `form_params` send it.
async fn post_form(stack: &TestStack, path: &str, form: &str) -> Reply {
    Reply::from(
        stack
            .http
            .post(format!("{}{path}", stack.base_url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form.to_owned())
            .send()
            .await
            .expect("request"),
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

/// A request authenticated by `authorization` alone.
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

async fn a_token_works_as_bearer_and_raw_on_every_operation_under_every_prefix(stack: &TestStack) {
    let (client_id, secret) = new_client(stack, acme::ADMIN).await;
    // A JSON body and the PHP front controller's path work too.
    let reply = Reply::from(
        stack
            .http
            .post(format!("{}/index.php/api/v3/token", stack.base_url))
            .header("Content-Type", "application/json")
            .body(
                json!({"client_id": client_id, "client_secret": secret,
                          "grant_type": "client_credentials"})
                .to_string(),
            )
            .send()
            .await
            .expect("request"),
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
        let content = send(
            with_token(
                stack,
                reqwest::Method::GET,
                &format!("{prefix}/content/{}", acme::WELCOME_COURSE),
                authorization,
            )
            .header("Accept", "application/json"),
        )
        .await;
        assert_eq!(json_of(&content)["title"], "Welcome to Acme");
        let points = send(
            with_token(
                stack,
                reqwest::Method::GET,
                &format!("{prefix}/gamification/points?userIds[0]={}", acme::LEARNER),
                authorization,
            )
            .header("Accept", "application/json"),
        )
        .await;
        assert_eq!(
            json_of(&points),
            json!([{"userId": acme::LEARNER, "points": 421}])
        );
        let renamed = send(
            with_token(
                stack,
                reqwest::Method::POST,
                &format!("{prefix}/group/{}", acme::EMPTY_GROUP),
                authorization,
            )
            .header("Content-Type", "application/xml")
            .body("<request><name>Nobody yet</name></request>"),
        )
        .await;
        assert_eq!(renamed.status, 200, "{}", renamed.body);
        let updated = send(
            with_token(
                stack,
                reqwest::Method::POST,
                &format!("{prefix}/department/{}", acme::SUPPORT),
                authorization,
            )
            .header("Content-Type", "application/json")
            .body(json!({"code": "SUP"}).to_string()),
        )
        .await;
        assert_eq!(updated.status, 204, "{}", updated.body);
        let created = send(
            with_token(
                stack,
                reqwest::Method::POST,
                &format!("{prefix}/department"),
                authorization,
            )
            .header("Content-Type", "application/json")
            .body(json!({"name": "Field", "parentDepartmentId": acme::SALES}).to_string()),
        )
        .await;
        assert_eq!(created.status, 201, "{}", created.body);
        let deleted = send(
            with_token(
                stack,
                reqwest::Method::POST,
                &format!("{prefix}/enrollment/delete"),
                authorization,
            )
            .header("Content-Type", "application/json")
            .body(json!({"enrollmentIds": [acme::SUPPORTER_WELCOME]}).to_string()),
        )
        .await;
        assert_eq!(deleted.status, 204, "{}", deleted.body);
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

async fn revocation_deactivation_and_a_role_change_apply_on_the_next_request(stack: &TestStack) {
    let group = format!("/group/{}", acme::INTERNS);
    let (client_id, secret) = new_client(stack, acme::ADMIN).await;
    let token = format!("Bearer {}", token_for(stack, &client_id, &secret).await);
    assert_eq!(
        send(with_token(stack, reqwest::Method::GET, &group, &token))
            .await
            .status,
        200
    );

    let mut directory = directory(stack).await;
    directory
        .set_user_role(as_user(
            world::OWNER,
            pb::SetUserRoleRequest {
                user_id: acme::ADMIN.to_owned(),
                role: Some(pb::RoleAssignment {
                    role: pb::Role::Learner.into(),
                    custom_role_id: None,
                }),
            },
        ))
        .await
        .expect("the owner changes the role");
    send(with_token(stack, reqwest::Method::GET, &group, &token))
        .await
        .assert_error(403, "");

    directory
        .revoke_api_client(as_user(
            world::OWNER,
            pb::RevokeApiClientRequest {
                client_id: client_id.clone(),
            },
        ))
        .await
        .expect("the owner revokes the client");
    send(with_token(stack, reqwest::Method::GET, &group, &token))
        .await
        .assert_error(401, "authentication failed");
    let reply = post_form(stack, "/api/v3/token", &grant(&client_id, &secret)).await;
    assert_eq!(
        (reply.status, json_of(&reply)),
        (401, json!({"error": "invalid_client"}))
    );

    let (client_id, secret) = new_client(stack, acme::DEPT_ADMIN).await;
    let token = format!("Bearer {}", token_for(stack, &client_id, &secret).await);
    assert_eq!(
        send(with_token(stack, reqwest::Method::GET, &group, &token))
            .await
            .status,
        200
    );
    directory
        .set_user_active(as_user(
            world::OWNER,
            pb::SetUserActiveRequest {
                user_id: acme::DEPT_ADMIN.to_owned(),
                active: false,
            },
        ))
        .await
        .expect("the owner deactivates the user");
    send(with_token(stack, reqwest::Method::GET, &group, &token))
        .await
        .assert_error(401, "authentication failed");
    let reply = post_form(stack, "/api/v3/token", &grant(&client_id, &secret)).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
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
            .create_api_client(as_user(
                login,
                pb::CreateApiClientRequest {
                    user_id: login.id.to_owned(),
                },
            ))
            .await
            .expect_err("only owners and administrators make API clients");
        assert_eq!(refused.code(), Code::PermissionDenied, "{}", login.email);
    }
    let made = directory
        .create_api_client(as_user(
            world::ADMIN,
            pb::CreateApiClientRequest {
                user_id: acme::LEARNER.to_owned(),
            },
        ))
        .await
        .expect("an administrator makes one")
        .into_inner();
    let listed = directory
        .list_api_clients(as_user(world::OWNER, pb::ListApiClientsRequest {}))
        .await
        .expect("the owner lists them")
        .into_inner();
    assert_eq!(
        listed.api_clients,
        [pb::ApiClient {
            client_id: made.client_id.clone(),
            user_id: acme::LEARNER.to_owned(),
            revoked: false,
        }]
    );
    // Another account's clients are invisible: nothing listed, and revoking is a 404.
    let globex = directory
        .list_api_clients(as_user(world::GLOBEX_OWNER, pb::ListApiClientsRequest {}))
        .await
        .expect("listed")
        .into_inner();
    assert!(globex.api_clients.is_empty());
    let refused = directory
        .revoke_api_client(as_user(
            world::GLOBEX_OWNER,
            pb::RevokeApiClientRequest {
                client_id: made.client_id.clone(),
            },
        ))
        .await
        .expect_err("a client of another account names nothing");
    assert_eq!(refused.code(), Code::NotFound);
    // A user of another account is not a field value this account can name.
    let refused = directory
        .create_api_client(as_user(
            world::OWNER,
            pb::CreateApiClientRequest {
                user_id: lms_tests::world::globex::WORKER.to_owned(),
            },
        ))
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
