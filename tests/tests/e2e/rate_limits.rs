//! Rate limits per caller and per account (`docs/decisions.md`, "Rate limits"), through the
//! real gateway and core: an API client or a login past its budget gets 429 with `Retry-After`
//! and the RateLimit fields in the negotiated format, while the other callers of its account
//! and the callers of other accounts go on being served; after `Retry-After` it is served
//! again. The stack runs small limits on its manual clock, which only the scenarios move.

use std::{ops::Deref, time::Duration};

use futures::future::join_all;
use lms_core::rate_limit::RateLimitSettings;
use lms_proto::v1::{
    self as pb, admin_service_client::AdminServiceClient,
    directory_service_client::DirectoryServiceClient,
};
use lms_tests::{
    Backend, Reply, TestStack,
    stack::StackOptions,
    world::{self, acme, globex},
};
use serde_json::Value;
use tonic::Code;

/// Requests one caller may make at once; one more flows back each second.
const CALLER_BURST: u32 = 5;
/// Requests all callers of one account may make at once; one more each second.
const ACCOUNT_BURST: u32 = 10;

/// A stack whose limits are [`CALLER_BURST`] and [`ACCOUNT_BURST`], both refilling at one
/// request a second.
struct Limited(TestStack);

impl Deref for Limited {
    type Target = TestStack;

    fn deref(&self) -> &TestStack {
        &self.0
    }
}

impl lms_tests::testkit::Fixture for Limited {
    async fn start(backend: Backend) -> Option<Self> {
        let options = StackOptions {
            rate_limits: RateLimitSettings {
                caller_rps: 1,
                caller_burst: CALLER_BURST,
                account_rps: 1,
                account_burst: ACCOUNT_BURST,
            },
            ..StackOptions::new(backend)
        };
        TestStack::start_with(options).await.map(Limited)
    }

    async fn stop(self) {
        self.0.stop().await;
    }
}

lms_tests::testkit::on_both_backends!(Limited =>
    an_api_client_past_its_budget_is_refused_while_its_neighbours_and_other_accounts_are_served,
    each_login_of_the_headers_has_a_budget_of_its_own,
    only_answers_to_authenticated_callers_carry_the_fields,
    grpc_callers_are_limited_alike,
);

// ---- helpers ----

/// `GET path` with `Authorization: <bearer>`.
async fn get(stack: &TestStack, bearer: &str, path: &str) -> Reply {
    Reply::send(
        stack
            .http
            .get(format!("{}{path}", stack.base_url))
            .header("Authorization", bearer),
    )
    .await
}

/// The three RateLimit fields of a reply, as numbers; `None` when it has none of them.
fn fields(reply: &Reply) -> Option<(u32, u32, u64)> {
    let number = |name: &str| -> Option<u64> {
        let value = reply.header(name)?;
        Some(
            value
                .parse()
                .unwrap_or_else(|_| panic!("{name}: {value:?} is not a number")),
        )
    };
    let limit = number("ratelimit-limit");
    let remaining = number("ratelimit-remaining");
    let reset = number("ratelimit-reset");
    match (limit, remaining, reset) {
        (None, None, None) => None,
        (Some(limit), Some(remaining), Some(reset)) => {
            Some((limit as u32, remaining as u32, reset))
        }
        partial => panic!("some RateLimit fields and not others: {partial:?}"),
    }
}

/// Asserts a 429 of the caller's rate, in XML, with `Retry-After: 1` and an empty bucket of
/// `limit` that is full again in `reset` seconds.
#[track_caller]
fn assert_refused(reply: &Reply, whose: &str, limit: u32, reset: u64) {
    reply.assert_error(429, whose);
    assert!(
        reply.error_message().contains("retry after 1 second"),
        "{}",
        reply.error_message()
    );
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert_eq!(fields(reply), Some((limit, 0, reset)));
}

/// `Bearer <token>` of a new API client of the Globex owner.
async fn globex_bearer(stack: &TestStack) -> String {
    let mut directory = DirectoryServiceClient::new(stack.grpc_channel().await);
    let client = directory
        .create_api_client(
            world::GLOBEX_OWNER.grpc_request(pb::CreateApiClientRequest {
                user_id: globex::OWNER.to_owned(),
                scim: false,
            }),
        )
        .await
        .expect("the Globex owner makes an API client")
        .into_inner();
    let reply = Reply::send(
        stack
            .http
            .post(format!("{}/api/v3/token", stack.base_url))
            .form(&[
                ("client_id", client.client_id.as_str()),
                ("client_secret", client.client_secret.as_str()),
                ("grant_type", "client_credentials"),
            ]),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(fields(&reply), None, "the token endpoint is not limited");
    let token: Value = serde_json::from_str(&reply.body).expect("JSON");
    format!(
        "Bearer {}",
        token["access_token"].as_str().expect("a token")
    )
}

/// Long enough for every bucket of these stacks to be full again.
const ALL_REFILLED: Duration = Duration::from_secs(60);

// ---- scenarios ----

async fn an_api_client_past_its_budget_is_refused_while_its_neighbours_and_other_accounts_are_served(
    stack: &TestStack,
) {
    // Two clients of the same user of Acme, and one of Globex. Making them took from the
    // owners' and the accounts' buckets: start from full ones.
    let flooder = stack.bearer_for(acme::ADMIN).await;
    let neighbour = stack.bearer_for(acme::ADMIN).await;
    let stranger = globex_bearer(stack).await;
    stack.clock.advance(ALL_REFILLED);
    let acme_group = format!("/group/{}", acme::INTERNS);
    let globex_group = format!("/group/{}", globex::CREW);

    // The client's bucket empties one request at a time; it is nearer to empty than Acme's
    // (10), so it is the one the fields report.
    for sent in 1..=CALLER_BURST {
        let reply = get(stack, &flooder, &acme_group).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(
            fields(&reply),
            Some((CALLER_BURST, CALLER_BURST - sent, u64::from(sent)))
        );
    }
    // Past it: refused until one request has flowed back (1 s); full again in 5 s.
    let refused = get(stack, &flooder, &acme_group).await;
    assert_refused(&refused, "this API client", CALLER_BURST, 5);
    // In JSON when JSON is asked for.
    let refused = Reply::send(
        stack
            .http
            .get(format!("{}{acme_group}", stack.base_url))
            .header("Authorization", &flooder)
            .header("Accept", "application/json"),
    )
    .await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_str(&refused.body).expect("a JSON error");
    assert_eq!(body["code"], 429);
    let message = body["message"].as_str().expect("a message");
    assert!(
        message.contains("this API client") && message.contains("retry after 1 second"),
        "{message}"
    );
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(fields(&refused), Some((CALLER_BURST, 0, 5)));

    // At the same time: the flooder keeps sending, the other client of Acme and the client
    // of Globex each send a full burst. Acme's bucket (10) holds the flooder's 5 and the
    // neighbour's 5 only because refused requests take nothing from it.
    let (flood, neighbours, strangers) = tokio::join!(
        join_all((0..20).map(|_| get(stack, &flooder, &acme_group))),
        join_all((0..CALLER_BURST).map(|_| get(stack, &neighbour, &acme_group))),
        join_all((0..CALLER_BURST).map(|_| get(stack, &stranger, &globex_group))),
    );
    for reply in &flood {
        assert_refused(reply, "this API client", CALLER_BURST, 5);
    }
    for reply in neighbours.iter().chain(&strangers) {
        assert_eq!(reply.status, 200, "{}", reply.body);
        let (limit, remaining, reset) = fields(reply).expect("the RateLimit fields");
        assert!(
            remaining < limit && reset >= 1,
            "{limit} {remaining} {reset}"
        );
    }
    // Acme's bucket is now empty: the neighbour's budget was the account's last.
    let remaining: Vec<u32> = neighbours.iter().map(|r| fields(r).unwrap().1).collect();
    assert!(remaining.contains(&0), "{remaining:?}");

    // After Retry-After the flooder is served again (Acme's bucket has refilled as much).
    stack.clock.advance(Duration::from_secs(1));
    let again = get(stack, &flooder, &acme_group).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(fields(&again).map(|(_, remaining, _)| remaining), Some(0));
}

async fn each_login_of_the_headers_has_a_budget_of_its_own(stack: &TestStack) {
    let path = format!("/group/{}", acme::INTERNS);
    for sent in 1..=CALLER_BURST {
        let reply = stack.get(&path, world::OWNER).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(
            fields(&reply),
            Some((CALLER_BURST, CALLER_BURST - sent, u64::from(sent)))
        );
    }
    let refused = stack.get(&path, world::OWNER).await;
    assert_refused(&refused, "this login", CALLER_BURST, 5);
    // The login is limited, not its user's other doors nor the other logins of its account.
    let admin = stack.get(&path, world::ADMIN).await;
    assert_eq!(admin.status, 200, "{}", admin.body);
    let globex = stack
        .get(&format!("/group/{}", globex::CREW), world::GLOBEX_OWNER)
        .await;
    assert_eq!(globex.status, 200, "{}", globex.body);
    // Under every prefix alike: the budget is the login's, whatever path names the route.
    let refused = stack.get(&format!("/api/v2{path}/"), world::OWNER).await;
    assert_refused(&refused, "this login", CALLER_BURST, 5);
    stack.clock.advance(Duration::from_secs(1));
    let again = stack.get(&path, world::OWNER).await;
    assert_eq!(again.status, 200, "{}", again.body);
}

async fn only_answers_to_authenticated_callers_carry_the_fields(stack: &TestStack) {
    // A refusal of the caller's own making is still an answer to an authenticated caller.
    let missing = stack.get("/group/not-a-group", world::OWNER).await;
    missing.assert_error(404, "not found");
    assert_eq!(fields(&missing), Some((CALLER_BURST, CALLER_BURST - 1, 1)));
    let forbidden = stack
        .get(&format!("/group/{}", acme::INTERNS), world::LEARNER)
        .await;
    assert_eq!(forbidden.status, 403, "{}", forbidden.body);
    assert!(fields(&forbidden).is_some());
    // Whole lists carry them in the head of the stream.
    let whole = stack.get("/department", world::OWNER).await;
    assert_eq!(whole.status, 200, "{}", whole.body);
    assert_eq!(fields(&whole), Some((CALLER_BURST, CALLER_BURST - 2, 2)));
    // No credentials, wrong ones, and the probes: nobody to count them against.
    let anonymous = Reply::send(stack.http.get(format!(
        "{}/group/{}",
        stack.base_url,
        acme::INTERNS
    )))
    .await;
    anonymous.assert_error(401, "authentication failed");
    assert_eq!(fields(&anonymous), None);
    let wrong = Reply::send(
        stack
            .http
            .get(format!("{}/group/{}", stack.base_url, acme::INTERNS))
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", world::OWNER.email)
            .header("X-Auth-Password", "not the password"),
    )
    .await;
    wrong.assert_error(401, "authentication failed");
    assert_eq!(fields(&wrong), None);
    let ready = Reply::send(stack.http.get(format!("{}/readyz", stack.base_url))).await;
    assert_eq!(ready.status, 200);
    assert_eq!(fields(&ready), None);
}

async fn grpc_callers_are_limited_alike(stack: &TestStack) {
    let mut admin = AdminServiceClient::new(stack.grpc_channel().await);
    let read = || {
        world::OWNER.grpc_request(pb::GetGroupRequest {
            group_id: acme::INTERNS.to_owned(),
        })
    };
    for sent in 1..=CALLER_BURST {
        let answer = admin.get_group(read()).await.expect("served");
        let metadata = answer.metadata();
        assert_eq!(metadata.get("ratelimit-limit").unwrap(), "5");
        assert_eq!(
            metadata.get("ratelimit-remaining").unwrap(),
            (CALLER_BURST - sent).to_string().as_str()
        );
        assert_eq!(
            metadata.get("ratelimit-reset").unwrap(),
            sent.to_string().as_str()
        );
    }
    let refused = admin.get_group(read()).await.expect_err("refused");
    assert_eq!(refused.code(), Code::ResourceExhausted);
    assert!(
        refused.message().contains("this login"),
        "{}",
        refused.message()
    );
    let metadata = refused.metadata();
    assert_eq!(metadata.get("retry-after").unwrap(), "1");
    assert_eq!(metadata.get("ratelimit-remaining").unwrap(), "0");
    assert_eq!(metadata.get("ratelimit-reset").unwrap(), "5");
}
