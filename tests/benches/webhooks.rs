//! Webhooks: what recording events costs a write, how soon a burst of events reaches a
//! receiver, and whether the core's memory grows with the events it has not delivered yet.
//!
//! Run: `cargo bench -p lms-tests --bench webhooks` (see `docs/benchmarks.md`, "Webhooks").
//!
//! One stack per backend (core and gateway in this process, on their own 2-worker runtime as
//! `lms up` runs them), the demo world's two accounts, and a receiver on 127.0.0.1 in this
//! process that counts what it is sent and keeps no bodies. Acme's owner subscribes to
//! `USER_REGISTERED` as a client does; Globex has no subscriber.
//!
//! - **Cost of recording:** `POST /user` (JSON) one after another, in rounds of three blocks
//!   whose order turns each round: Acme with its subscriber subscribed (an event recorded in
//!   the write's transaction, then delivered), Acme with it unsubscribed (nothing recorded),
//!   and Globex (never subscribed). The headline is the same account's two medians, so that
//!   the accounts' own difference (measured first, before anyone subscribes) is not counted
//!   as the cost of an event.
//! - **A burst:** 10,000 users created by 8 clients at once in Acme; the time from the last
//!   acknowledged write until the receiver has acknowledged all 10,000 events, and from the
//!   first write.
//! - **Backlog memory:** the receiver answers 500 while a first and then a ten times larger
//!   backlog builds up; the growth of this process's resident high-water mark over a few
//!   seconds of retries with each backlog, then over the delivery of the whole backlog once
//!   the receiver answers 200 again.
//!
//! Knobs (environment): `LMS_BENCH_BACKENDS` (as for the scale benchmark), `LMS_BENCH_ROUNDS`
//! (default 6), `LMS_BENCH_WRITES` (per round and account, default 100), `LMS_BENCH_EVENTS`
//! (the burst, default 10,000), `LMS_BENCH_BACKLOG` (the smaller backlog, default 2,000; the
//! larger is ten times it), `LMS_BENCH_PAUSED=1` (the subscriber disabled during the cost
//! rounds: events recorded, none delivered until they end, which tells the cost of recording
//! from that of delivering), `LMS_BENCH_REPORT=PATH`.

use std::{
    fmt::Write as _,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use lms_core::webhooks::WebhookSettings;
use lms_tests::{
    Backend, TestStack,
    bench::{each_backend, env_number, median, quantile},
    machine::load_average,
    memory::PeakMemory,
    post_json,
    stack::StackOptions,
    webhooks::{Receiver, assert_ok, call, quick_settings, subscribe, subscribe_to, switch},
    world::{self, Login, acme, globex},
};
use sea_orm::ConnectionTrait as _;
use serde_json::json;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The receiver's path for Acme's subscriber.
const HOOK: &str = "hook";

/// Acme's subscriber.
const SUBSCRIBER: &str = "bench";

/// Whose writes a block of the cost rounds times; the index of its figures.
#[derive(Clone, Copy, PartialEq)]
enum Block {
    Subscribed,
    Unsubscribed,
    Globex,
}

/// Clients writing at once in the burst and the backlogs.
const WRITERS: usize = 8;

struct Config {
    backends: Vec<Backend>,
    rounds: usize,
    writes: usize,
    events: usize,
    backlog: usize,
    paused: bool,
}

impl Config {
    fn from_env() -> Self {
        Self {
            backends: lms_tests::database::bench_backends(),
            rounds: env_number("LMS_BENCH_ROUNDS", 6),
            writes: env_number("LMS_BENCH_WRITES", 100),
            events: env_number("LMS_BENCH_EVENTS", 10_000),
            backlog: env_number("LMS_BENCH_BACKLOG", 2_000),
            paused: env_number("LMS_BENCH_PAUSED", 0) == 1,
        }
    }
}

/// Deliveries retried quickly, as in the tests, but never given up on during a run.
fn settings() -> WebhookSettings {
    WebhookSettings {
        give_up_ms: 3_600_000,
        ..quick_settings(true)
    }
}

fn main() -> anyhow::Result<()> {
    let config = Config::from_env();
    each_backend(
        &config.backends,
        String::from("## Webhooks\n"),
        |backend| StackOptions {
            webhooks: settings(),
            ..StackOptions::new(backend)
        },
        async |backend, stack| run(&config, backend, stack).await,
    )
}

async fn run(config: &Config, backend: Backend, stack: &Arc<TestStack>) -> anyhow::Result<String> {
    let mut out = String::new();
    writeln!(
        out,
        "\n### {backend:?}\n\nLoad average (1, 5, 15 min) at the start: {}.\n",
        load_average()
    )?;
    let receiver = Receiver::start_counting().await;
    let users = Arc::new(AtomicUsize::new(0));

    // Warm-up, not counted: the first writes of a fresh process fill its caches.
    for login in [world::OWNER, world::GLOBEX_OWNER] {
        for _ in 0..config.writes {
            new_user(stack, login, &users).await?;
        }
    }

    // The accounts' own difference, before anyone subscribes: Acme's write goes to a
    // department of a larger account than Globex's.
    let mut alone = [Vec::new(), Vec::new()];
    for round in 0..config.rounds {
        analyze(stack).await?;
        for acme in if round % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        } {
            let login = if acme {
                world::OWNER
            } else {
                world::GLOBEX_OWNER
            };
            let times = &mut alone[usize::from(!acme)];
            for _ in 0..config.writes {
                times.push(timed_new_user(stack, login, &users).await?);
            }
        }
    }

    subscribe(
        stack,
        world::OWNER,
        &receiver,
        SUBSCRIBER,
        HOOK,
        Some("bench secret"),
        &["USER_REGISTERED"],
    )
    .await;
    let mut expected = 0;

    // The cost of recording: the same write in the same account with its subscriber
    // subscribed and unsubscribed, and Globex's (never subscribed) beside them, in blocks
    // whose order turns each round.
    let mut timed = [Vec::new(), Vec::new(), Vec::new()];
    let mut subscribed = true;
    if config.paused {
        switch(stack, "disable", SUBSCRIBER).await;
    }
    for round in 0..config.rounds {
        analyze(stack).await?;
        let mut blocks = [Block::Subscribed, Block::Unsubscribed, Block::Globex];
        blocks.rotate_left(round % 3);
        for block in blocks {
            let login = match block {
                Block::Subscribed | Block::Unsubscribed => world::OWNER,
                Block::Globex => world::GLOBEX_OWNER,
            };
            if block != Block::Globex && subscribed != (block == Block::Subscribed) {
                subscribed = !subscribed;
                toggle_subscription(stack, subscribed).await;
            }
            for _ in 0..config.writes {
                timed[block as usize].push(timed_new_user(stack, login, &users).await?);
                if block == Block::Subscribed {
                    expected += 1;
                }
            }
        }
    }
    if !subscribed {
        toggle_subscription(stack, true).await;
    }
    if config.paused {
        switch(stack, "enable", SUBSCRIBER).await;
    }
    delivered(&receiver, expected, Duration::from_secs(120)).await?;
    let [p50_with, p50_without, p50_globex] = timed.each_mut().map(|times| median(times));
    let [acme_alone, globex_alone] = alone.each_mut().map(|times| median(times));
    let [with, without, globex] = &timed;
    let row = |name: &str, times: &[f64], p50: f64| {
        format!(
            "| {name} | {} | {p50:.2} ms | {:.2} ms |\n",
            times.len(),
            quantile(times, 0.9)
        )
    };
    writeln!(
        out,
        "| `POST /user` (JSON, one client) | writes | p50 | p90 |\n|---|---|---|---|\n\
         {}{}{}\
         | **subscribed ÷ unsubscribed** (same account) | | **{:.3}** | |\n\
         | subscribed ÷ Globex | | {:.3} | |\n\
         | Acme ÷ Globex before any subscriber ({acme_alone:.2} ÷ {globex_alone:.2} ms) | | {:.3} | |",
        row(
            if config.paused {
                "Acme: its subscriber subscribed to `USER_REGISTERED`, disabled (recorded, not delivered)"
            } else {
                "Acme: its subscriber subscribed to `USER_REGISTERED`"
            },
            with,
            p50_with
        ),
        row(
            "Acme: the same subscriber unsubscribed",
            without,
            p50_without
        ),
        row("Globex: no subscriber", globex, p50_globex),
        p50_with / p50_without,
        p50_with / p50_globex,
        acme_alone / globex_alone,
    )?;

    // A burst, delivered.
    analyze(stack).await?;
    let began = Instant::now();
    write_many(stack, config.events, &users).await?;
    let written = began.elapsed();
    expected += config.events;
    let arrived = delivered(&receiver, expected, Duration::from_secs(300)).await?;
    let (payloads, deliveries) = receiver.delivered_count(HOOK);
    writeln!(
        out,
        "\n| burst of `USER_REGISTERED` ({WRITERS} clients) | figure |\n|---|---|\n\
         | events written | {} in {:.2} s ({:.0}/s) |\n\
         | last event delivered after the last write | {:.2} s |\n\
         | all delivered after the first write | {:.2} s |\n\
         | deliveries so far (payloads per delivery) | {deliveries} ({:.1}) |",
        config.events,
        written.as_secs_f64(),
        config.events as f64 / written.as_secs_f64(),
        arrived.as_secs_f64(),
        (written + arrived).as_secs_f64(),
        payloads as f64 / deliveries.max(1) as f64
    )?;

    // Backlogs: the receiver down, the events kept; then delivered.
    writeln!(
        out,
        "\n| backlog (receiver answering 500) | undelivered events | peak MiB over 5 s of retries |\n|---|---|---|"
    )?;
    receiver.answer(500);
    let mut backlog = 0;
    for size in [config.backlog, config.backlog * 10] {
        write_many(stack, size - backlog, &users).await?;
        backlog = size;
        // Retries of the oldest batch go on; what they hold must not depend on the backlog.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let peak = PeakMemory::start();
        tokio::time::sleep(Duration::from_secs(5)).await;
        writeln!(out, "| retrying | {size} | {:.1} |", peak.growth_mib())?;
    }
    expected += backlog;
    let peak = PeakMemory::start();
    let began = Instant::now();
    receiver.answer(200);
    delivered(&receiver, expected, Duration::from_secs(600)).await?;
    writeln!(
        out,
        "| delivered once the receiver answers 200 again | {backlog} in {:.2} s | {:.1} |",
        began.elapsed().as_secs_f64(),
        peak.growth_mib()
    )?;
    writeln!(
        out,
        "\nLoad average (1, 5, 15 min) at the end: {}.",
        load_average()
    )?;
    Ok(out)
}

/// Creates one user in the account of `login`'s, in its root department.
async fn new_user(stack: &TestStack, login: Login, users: &AtomicUsize) -> anyhow::Result<()> {
    let n = users.fetch_add(1, Ordering::Relaxed);
    let (department, domain) = if login.account_url == world::GLOBEX_URL {
        (globex::ROOT, "globex.example.com")
    } else {
        (acme::SALES, "acme.example.com")
    };
    let body = json!({
        "departmentId": department,
        "password": "a brand new password",
        "fields": {"login": format!("bench{n}@{domain}"), "first_name": "Bench"},
    });
    let reply = post_json(stack, "/user", login, body).await;
    anyhow::ensure!(reply.status == 201, "POST /user: {}", reply.body);
    Ok(())
}

/// On PostgreSQL, what autovacuum's analyze does between rounds on a server that runs it
/// (this machine's does not: docs/benchmarks.md, "Webhooks"). Without it, statements keep
/// the plans chosen while `users` had a few rows: reads of the whole table on every write,
/// whose cost grows with the writes the run has made.
async fn analyze(stack: &TestStack) -> anyhow::Result<()> {
    if stack.backend() == Backend::Postgres {
        stack.db().execute_unprepared("ANALYZE").await?;
    }
    Ok(())
}

/// [`new_user`], timed: milliseconds.
async fn timed_new_user(
    stack: &TestStack,
    login: Login,
    users: &AtomicUsize,
) -> anyhow::Result<f64> {
    let began = Instant::now();
    new_user(stack, login, users).await?;
    Ok(began.elapsed().as_secs_f64() * 1e3)
}

/// Subscribes Acme's subscriber to `USER_REGISTERED` again, or unsubscribes it (events
/// recorded before are still delivered).
async fn toggle_subscription(stack: &TestStack, subscribe: bool) {
    if subscribe {
        subscribe_to(stack, world::OWNER, SUBSCRIBER, "USER_REGISTERED").await;
    } else {
        let unsubscription =
            json!({"subscriberName": SUBSCRIBER, "subscriptionType": "USER_REGISTERED"});
        assert_ok(&call(stack, world::OWNER, "unsubscribe", unsubscription).await);
    }
}

/// `count` users created in Acme by [`WRITERS`] clients at once.
async fn write_many(
    stack: &Arc<TestStack>,
    count: usize,
    users: &Arc<AtomicUsize>,
) -> anyhow::Result<()> {
    let left = Arc::new(AtomicUsize::new(count));
    let writers: Vec<_> = (0..WRITERS)
        .map(|_| {
            let (stack, users, left) = (stack.clone(), users.clone(), left.clone());
            tokio::spawn(async move {
                while left
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                    .is_ok()
                {
                    new_user(&stack, world::OWNER, &users).await?;
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for writer in writers {
        writer.await??;
    }
    Ok(())
}

/// Waits until the receiver has acknowledged `expected` events in all; the time it took.
async fn delivered(
    receiver: &Receiver,
    expected: usize,
    within: Duration,
) -> anyhow::Result<Duration> {
    let began = Instant::now();
    loop {
        let (payloads, _) = receiver.delivered_count(HOOK);
        if payloads >= expected {
            anyhow::ensure!(
                payloads == expected,
                "{payloads} events delivered, {expected} written"
            );
            return Ok(began.elapsed());
        }
        anyhow::ensure!(
            began.elapsed() < within,
            "{payloads} of {expected} events delivered within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
