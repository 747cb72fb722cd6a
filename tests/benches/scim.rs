//! Provisioning: the bulk lifecycle call and SCIM 2.0 at a large customer's size
//! (provisioning.md section 15).
//!
//! Run: `cargo bench -p lms-tests --bench scim` (see `docs/benchmarks.md`, "Provisioning").
//!
//! One stack per backend (core and gateway in this process, on their own 2-worker runtime as
//! `lms up` runs them; the clients on another), three accounts imported through the real
//! import from `lms_tests::large_world` (no enrollments: none of this reads them): a small one,
//! a large one, and one holding only its role logins for the creates. Every request goes over
//! loopback HTTP through the gateway.
//!
//! - **Bulk deactivation:** `POST /users/deactivate` (JSON) naming 10,000 learners of the large
//!   account in one call, then `POST /users/activate` bringing them back, a few times over;
//!   the median, lowest and highest of each.
//! - **Filter at two sizes:** `GET /scim/v2/Users?filter=userName eq "…"` for a different
//!   learner each time, alternating between the small and the large account (one client), so
//!   both see the same machine; the median latency of each and small ÷ large.
//! - **Creates:** SCIM `POST /Users` without a password from four callers at once into the
//!   third account; every answer's status counted, the rate reported.
//!
//! Knobs (environment): `LMS_BENCH_BACKENDS` (as for the scale benchmark), `LMS_BENCH_IDS`
//! (`scattered` by default, `random`, `sequential`), `LMS_BENCH_SMALL` / `LMS_BENCH_LARGE`
//! (users of the two accounts, default 100 / 100,000), `LMS_BENCH_BULK` (ids per bulk call,
//! default 10,000), `LMS_BENCH_BULK_ROUNDS` (default 3), `LMS_BENCH_SAMPLES` (filters per
//! account, default 400), `LMS_BENCH_CREATES` (default 100,000), `LMS_BENCH_REPORT=PATH`.

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Instant,
};

use lms_core::auth::PasswordHasher;
use lms_tests::{
    Backend, TestStack,
    bench::{each_backend, env_number, median, quantile},
    large_world::{IdShape, RoleLogin, WORLD_PASSWORD, WorldShape, import_account, user_email},
    machine::{self, load_average},
    stack::{StackOptions, TEST_POLICY},
};
use serde_json::{Value, json};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Callers creating users at once (the issue's four).
const CALLERS: usize = 4;

struct Config {
    backends: Vec<Backend>,
    id_shape: IdShape,
    small: usize,
    large: usize,
    bulk: usize,
    bulk_rounds: usize,
    samples: usize,
    creates: usize,
}

impl Config {
    fn from_env() -> Self {
        Self {
            backends: lms_tests::database::bench_backends(),
            id_shape: std::env::var("LMS_BENCH_IDS")
                .ok()
                .and_then(|name| IdShape::named(&name))
                .unwrap_or_default(),
            small: env_number("LMS_BENCH_SMALL", 100),
            large: env_number("LMS_BENCH_LARGE", 100_000),
            bulk: env_number("LMS_BENCH_BULK", 10_000),
            bulk_rounds: env_number("LMS_BENCH_BULK_ROUNDS", 3),
            samples: env_number("LMS_BENCH_SAMPLES", 400),
            creates: env_number("LMS_BENCH_CREATES", 100_000),
        }
    }
}

/// One imported account and a SCIM token of its owner.
struct Account {
    shape: WorldShape,
    token: String,
}

fn main() -> anyhow::Result<()> {
    let config = Config::from_env();
    each_backend(
        &config.backends,
        format!("## Provisioning\n\nMachine: {}.\n", machine::describe()),
        |backend| StackOptions {
            with_world: false,
            ..StackOptions::new(backend)
        },
        async |backend, stack| run(&config, backend, stack).await,
    )
}

async fn run(config: &Config, backend: Backend, stack: &Arc<TestStack>) -> anyhow::Result<String> {
    let mut out = String::new();
    writeln!(
        out,
        "\n### {backend:?}, {} ids\n\nLoad average (1, 5, 15 min) at the start: {}.\n",
        config.id_shape,
        load_average()
    )?;
    let hasher = PasswordHasher::new(TEST_POLICY)?;
    let hash = hasher.hash(WORLD_PASSWORD)?;
    let mut accounts = Vec::new();
    for (world, users) in [
        (1, config.small),
        (2, config.large),
        (3, RoleLogin::ALL.len()),
    ] {
        let mut shape = WorldShape::with_users(users);
        shape.world = world;
        shape.id_shape = config.id_shape;
        shape.enrollments_per_user = 0;
        shape.account_url = format!("https://world-{world}.example.com");
        let began = Instant::now();
        import_account(stack, &shape, &hasher, &hash).await;
        println!(
            "{backend:?}: {} users imported in {:.1} s",
            shape.users,
            began.elapsed().as_secs_f64()
        );
        let token = scim_token(stack, &shape).await?;
        accounts.push(Account { shape, token });
    }
    let (small, large, empty) = (&accounts[0], &accounts[1], &accounts[2]);

    out.push_str(&bulk_status(config, stack, large).await?);
    out.push_str(&filters(config, stack, small, large).await?);
    out.push_str(&creates(config, stack, empty).await?);
    writeln!(
        out,
        "\nLoad average (1, 5, 15 min) at the end: {}.",
        load_average()
    )?;
    Ok(out)
}

/// A SCIM token made by the owner of `shape`'s account over `POST /scim_tokens`.
async fn scim_token(stack: &TestStack, shape: &WorldShape) -> anyhow::Result<String> {
    let reply = stack
        .http
        .post(format!("{}/scim_tokens", stack.base_url))
        .header("X-Auth-Account-Url", &shape.account_url)
        .header("X-Auth-Email", RoleLogin::Owner.email())
        .header("X-Auth-Password", WORLD_PASSWORD)
        .header("Accept", "application/json")
        .send()
        .await?;
    anyhow::ensure!(reply.status().as_u16() == 201, "POST /scim_tokens");
    let made: Value = serde_json::from_str(&reply.text().await?)?;
    made["token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("no token in {made}"))
}

/// `POST /users/{call}` naming `ids` as the owner of `shape`'s account; the milliseconds.
async fn bulk_call(
    stack: &TestStack,
    shape: &WorldShape,
    call: &str,
    ids: &[String],
) -> anyhow::Result<f64> {
    let body = json!({ "userIds": ids }).to_string();
    let began = Instant::now();
    let reply = stack
        .http
        .post(format!("{}/users/{call}", stack.base_url))
        .header("X-Auth-Account-Url", &shape.account_url)
        .header("X-Auth-Email", RoleLogin::Owner.email())
        .header("X-Auth-Password", WORLD_PASSWORD)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(body)
        .send()
        .await?;
    let status = reply.status().as_u16();
    let text = reply.text().await?;
    let ms = began.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(status == 200, "POST /users/{call}: {status} {text}");
    Ok(ms)
}

/// Deactivating and activating the same learners of the large account, a few rounds.
async fn bulk_status(
    config: &Config,
    stack: &TestStack,
    large: &Account,
) -> anyhow::Result<String> {
    let ids = large.shape.ids();
    let first = RoleLogin::ALL.len();
    let last = (first + config.bulk).min(large.shape.users);
    let named: Vec<String> = (first..last).map(|n| ids.user(n).to_string()).collect();
    let (mut deactivate, mut activate) = (Vec::new(), Vec::new());
    for _ in 0..config.bulk_rounds {
        deactivate.push(bulk_call(stack, &large.shape, "deactivate", &named).await?);
        activate.push(bulk_call(stack, &large.shape, "activate", &named).await?);
    }
    let mut out = String::new();
    writeln!(
        out,
        "| one bulk call, {} ids of {} users | median | lowest | highest |\n|---|---|---|---|",
        named.len(),
        large.shape.users
    )?;
    for (name, times) in [
        ("`POST /users/deactivate` (1 → 3)", &mut deactivate),
        ("`POST /users/activate` (3 → 1)", &mut activate),
    ] {
        let middle = median(times);
        writeln!(
            out,
            "| {name} | {middle:.0} ms | {:.0} ms | {:.0} ms |",
            times[0],
            times[times.len() - 1]
        )?;
    }
    Ok(out)
}

/// A SCIM `GET` of `path` with `token`; the milliseconds and the JSON answer.
async fn scim_get(stack: &TestStack, token: &str, path: &str) -> anyhow::Result<(f64, Value)> {
    let began = Instant::now();
    let reply = stack
        .http
        .get(format!("{}/scim/v2{path}", stack.base_url))
        .header("Authorization", format!("Bearer {token}"))
        .send()
        .await?;
    let status = reply.status().as_u16();
    let body: Value = serde_json::from_str(&reply.text().await?)?;
    let ms = began.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(status == 200, "GET {path}: {status} {body}");
    Ok((ms, body))
}

/// `userName eq` in the small and the large account, alternating, a different learner each
/// time (found, one result).
async fn filters(
    config: &Config,
    stack: &TestStack,
    small: &Account,
    large: &Account,
) -> anyhow::Result<String> {
    let mut times = [Vec::new(), Vec::new()];
    for sample in 0..config.samples {
        for (slot, account) in [small, large].into_iter().enumerate() {
            let users = account.shape.users;
            let learner = RoleLogin::ALL.len() + (sample * 7_919) % (users - RoleLogin::ALL.len());
            let filter = format!(r#"userName eq "{}""#, user_email(learner));
            let path = format!(
                "/Users?filter={}",
                form_urlencoded::byte_serialize(filter.as_bytes()).collect::<String>()
            );
            let (ms, body) = scim_get(stack, &account.token, &path).await?;
            anyhow::ensure!(body["totalResults"] == 1, "{filter}: {body}");
            times[slot].push(ms);
        }
    }
    let [mut small_times, mut large_times] = times;
    let (small_p50, large_p50) = (median(&mut small_times), median(&mut large_times));
    let mut out = String::new();
    writeln!(
        out,
        "\n| `GET /Users?filter=userName eq \"…\"` (one client, alternating) | users | samples | p50 | p90 |\n|---|---|---|---|---|\n\
         | small account | {} | {} | {small_p50:.2} ms | {:.2} ms |\n\
         | large account | {} | {} | {large_p50:.2} ms | {:.2} ms |\n\
         | small ÷ large (p50; 1.0 costs the same) | | | {:.2} | |",
        small.shape.users,
        small_times.len(),
        quantile(&small_times, 0.9),
        large.shape.users,
        large_times.len(),
        quantile(&large_times, 0.9),
        small_p50 / large_p50
    )?;
    Ok(out)
}

/// `config.creates` SCIM `POST /Users` by [`CALLERS`] callers at once; every status counted.
async fn creates(
    config: &Config,
    stack: &Arc<TestStack>,
    account: &Account,
) -> anyhow::Result<String> {
    let next = Arc::new(AtomicUsize::new(0));
    let statuses = Arc::new(Mutex::new(BTreeMap::<u16, usize>::new()));
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(config.creates)));
    let began = Instant::now();
    let callers: Vec<_> = (0..CALLERS)
        .map(|_| {
            let (stack, next, statuses, latencies) = (
                stack.clone(),
                next.clone(),
                statuses.clone(),
                latencies.clone(),
            );
            let (token, total) = (account.token.clone(), config.creates);
            tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= total {
                        return anyhow::Ok(());
                    }
                    let body = json!({
                        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
                        "userName": format!("scim-{n:07}@world-3.example.com"),
                        "externalId": format!("00u{n:07}"),
                        "name": {"givenName": "Scim", "familyName": format!("User {n}")},
                        "active": true,
                    });
                    let sent = Instant::now();
                    let status = match stack
                        .http
                        .post(format!("{}/scim/v2/Users", stack.base_url))
                        .header("Authorization", format!("Bearer {token}"))
                        .header("Content-Type", "application/scim+json")
                        .body(body.to_string())
                        .send()
                        .await
                    {
                        Ok(reply) => {
                            let status = reply.status().as_u16();
                            reply.bytes().await?;
                            status
                        }
                        // No answer at all counts with the 5xx.
                        Err(_) => 599,
                    };
                    let ms = sent.elapsed().as_secs_f64() * 1e3;
                    latencies.lock().expect("latencies").push(ms);
                    *statuses
                        .lock()
                        .expect("statuses")
                        .entry(status)
                        .or_default() += 1;
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await??;
    }
    let seconds = began.elapsed().as_secs_f64();
    let statuses = statuses.lock().expect("statuses").clone();
    let mut latencies = latencies.lock().expect("latencies").clone();
    let p50 = median(&mut latencies);
    let server_errors: usize = statuses
        .iter()
        .filter(|(status, _)| **status >= 500)
        .map(|(_, n)| n)
        .sum();
    let answers = statuses
        .iter()
        .map(|(status, n)| format!("{status}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = String::new();
    writeln!(
        out,
        "\n| SCIM `POST /Users`, {CALLERS} callers at once | figure |\n|---|---|\n\
         | users created | {} in {seconds:.1} s ({:.0}/s) |\n\
         | answers | {answers} |\n\
         | 5xx | {server_errors} |\n\
         | latency p50 / p90 / p99 | {p50:.1} / {:.1} / {:.1} ms |",
        config.creates,
        config.creates as f64 / seconds,
        quantile(&latencies, 0.9),
        quantile(&latencies, 0.99),
    )?;
    Ok(out)
}
