//! Authentication on the hot path, measured through the real gateway and core.
//!
//! Run: `cargo bench -p lms-tests --bench auth` (see `docs/benchmarks.md`).
//!
//! Phases, in one run, each lasting `LMS_BENCH_SECONDS` (default 5):
//! 1. `GET /group/{id}` with a warm verified-credentials cache;
//! 2. the same on a core whose cache is disabled (every request verifies argon2id);
//! 3. the warm clients again while attackers send wrong passwords as fast as they can,
//!    spread over fresh unknown logins and known logins (each one costs a full
//!    verification until the login is throttled);
//! 4. the same with all wrong passwords aimed at one login (throttled to cheap 429s).
//!
//! Passwords are stored at the real default policy (argon2id m=19 MiB, t=2, p=1). The
//! services run on their own 2-worker runtime (as `lms up` runs them), the load
//! generators on another; everything talks over loopback only, and the run stops by
//! itself. Set `LMS_BENCH_REPORT=PATH` to also write the results as Markdown to PATH.

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use lms_core::{
    auth::{
        AuthSettings, Credentials, DEFAULT_CACHE_CAPACITY, DEFAULT_THROTTLED_REPLY_DELAY,
        PasswordHasher, PasswordPolicy,
    },
    entities::user,
};
use lms_tests::{
    Backend, TestStack,
    stack::StackOptions,
    world::{self, Login, acme},
};
use sea_orm::{EntityTrait as _, sea_query::Expr};

/// The allocator `lms`, `lms-core` and `lms-gateway` run with (see their `main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Logins the correct clients use: an integration sends the same credentials every call.
const CORRECT_LOGINS: [Login; 3] = [world::OWNER, world::ADMIN, world::COORDINATOR];
/// Known logins the attackers try wrong passwords on (not the ones measured: a login that
/// is attacked is locked out by design, contract section 2).
const ATTACKED_LOGINS: [&str; 5] = [
    "learner@acme.example.com",
    "author@acme.example.com",
    "publisher@acme.example.com",
    "engineer@acme.example.com",
    "supporter@acme.example.com",
];

struct Config {
    seconds: f64,
    clients: usize,
    attackers: usize,
    rounds: usize,
    backend: Backend,
}

impl Config {
    fn from_env() -> Self {
        let number = |name: &str, default: f64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(default)
        };
        let backend = match std::env::var("LMS_BENCH_BACKEND").as_deref() {
            Ok("postgres") => Backend::Postgres,
            _ => Backend::Sqlite,
        };
        Self {
            seconds: number("LMS_BENCH_SECONDS", 6.0).max(0.5),
            rounds: number("LMS_BENCH_ROUNDS", 3.0).max(1.0) as usize,
            clients: number("LMS_BENCH_CLIENTS", 8.0).max(1.0) as usize,
            attackers: number("LMS_BENCH_ATTACKERS", 64.0).max(1.0) as usize,
            backend,
        }
    }
}

/// What one group of clients got in one phase.
#[derive(Debug, Default)]
struct Tally {
    statuses: BTreeMap<u16, u64>,
    transport_errors: u64,
    elapsed: Duration,
}

impl Tally {
    fn ok_per_second(&self) -> f64 {
        self.count(200) as f64 / self.elapsed.as_secs_f64()
    }

    fn count(&self, status: u16) -> u64 {
        self.statuses.get(&status).copied().unwrap_or(0)
    }

    fn total(&self) -> u64 {
        self.statuses.values().sum::<u64>() + self.transport_errors
    }

    fn describe(&self) -> String {
        let mut text = self
            .statuses
            .iter()
            .map(|(status, n)| format!("{status}: {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        if self.transport_errors > 0 {
            let _ = write!(text, ", transport errors: {}", self.transport_errors);
        }
        text
    }
}

/// Runs `clients` loops of `request` until `seconds` have passed; the clock stops when the
/// last loop has its last answer.
async fn drive<F>(clients: usize, seconds: f64, request: F) -> Tally
where
    F: Fn(usize, u64) -> reqwest::RequestBuilder + Send + Sync + 'static,
{
    let request = Arc::new(request);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let sequence = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let (request, sequence) = (request.clone(), sequence.clone());
            tokio::spawn(async move {
                let mut tally = Tally::default();
                while Instant::now() < deadline {
                    let n = sequence.fetch_add(1, Ordering::Relaxed);
                    match request(client, n).send().await {
                        Ok(response) => {
                            let status = response.status().as_u16();
                            let _ = response.bytes().await;
                            *tally.statuses.entry(status).or_default() += 1;
                        }
                        Err(_) => tally.transport_errors += 1,
                    }
                }
                tally
            })
        })
        .collect();
    let mut total = Tally::default();
    for task in tasks {
        let tally = task.await.expect("client task");
        for (status, n) in tally.statuses {
            *total.statuses.entry(status).or_default() += n;
        }
        total.transport_errors += tally.transport_errors;
    }
    total.elapsed = start.elapsed();
    total
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("HTTP client")
}

/// `Authenticator::authenticate` alone, in-process (no HTTP, no gRPC, no operation), from
/// `tasks` concurrent loops for `seconds`: authentications per second.
async fn authenticate_alone(stack: &TestStack, tasks: usize, seconds: f64) -> Tally {
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let runs: Vec<_> = (0..tasks)
        .map(|task| {
            let core = stack.core.clone();
            let login = CORRECT_LOGINS[task % CORRECT_LOGINS.len()];
            tokio::spawn(async move {
                let credentials = Credentials {
                    account_url: login.account_url.to_owned(),
                    email: login.email.to_owned(),
                    password: world::PASSWORD.to_owned().into(),
                };
                let mut tally = Tally::default();
                while Instant::now() < deadline {
                    let status = match core.auth.authenticate(&credentials, None).await {
                        Ok(_) => 200,
                        Err(_) => 500,
                    };
                    *tally.statuses.entry(status).or_default() += 1;
                }
                tally
            })
        })
        .collect();
    let mut total = Tally::default();
    for run in runs {
        add(&mut total, run.await.expect("authentication task"));
    }
    total.elapsed = start.elapsed();
    total
}

/// Correct clients: each sends its own login's credentials, the same every call.
fn correct_requests(
    base_url: String,
) -> impl Fn(usize, u64) -> reqwest::RequestBuilder + Send + Sync + 'static {
    let http = http_client();
    let url = format!("{base_url}/group/{}", acme::INTERNS);
    move |client, _| {
        let login = CORRECT_LOGINS[client % CORRECT_LOGINS.len()];
        http.get(&url)
            .header("X-Auth-Account-Url", login.account_url)
            .header("X-Auth-Email", login.email)
            .header("X-Auth-Password", world::PASSWORD)
    }
}

/// Wrong passwords: three of four for a fresh unknown login (a full dummy verification
/// each, never throttled), one of four for a known login in turn (until throttled).
fn spread_flood(
    base_url: String,
) -> impl Fn(usize, u64) -> reqwest::RequestBuilder + Send + Sync + 'static {
    let http = http_client();
    let url = format!("{base_url}/group/{}", acme::INTERNS);
    move |_, n| {
        let email = if n % 4 == 3 {
            ATTACKED_LOGINS[(n / 4) as usize % ATTACKED_LOGINS.len()].to_owned()
        } else {
            format!("intruder-{n}@acme.example.com")
        };
        http.get(&url)
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", email)
            .header("X-Auth-Password", format!("guess {n}"))
    }
}

/// Wrong passwords, all for one known login.
fn one_login_flood(
    base_url: String,
) -> impl Fn(usize, u64) -> reqwest::RequestBuilder + Send + Sync + 'static {
    let http = http_client();
    let url = format!("{base_url}/group/{}", acme::INTERNS);
    move |_, n| {
        http.get(&url)
            .header("X-Auth-Account-Url", world::ACME_URL)
            .header("X-Auth-Email", world::VIEWER.email)
            .header("X-Auth-Password", format!("guess {n}"))
    }
}

/// A stack whose users' passwords are stored at the real default policy.
fn start_stack(
    server: &tokio::runtime::Runtime,
    config: &Config,
    cache_capacity: u64,
) -> TestStack {
    server.block_on(async {
        let mut options = StackOptions::new(config.backend);
        options.password_policy = PasswordPolicy::default();
        options.auth_cache_capacity = cache_capacity;
        // Measured as deployed: throttled replies are held as long as in production.
        options.throttled_reply_delay = DEFAULT_THROTTLED_REPLY_DELAY;
        let stack = TestStack::start_with(options).await.expect(
            "the benchmark backend is available (LMS_TEST_POSTGRES_URL for LMS_BENCH_BACKEND=postgres)",
        );
        let hasher = PasswordHasher::new(PasswordPolicy::default()).expect("policy");
        let hash = hasher.hash(world::PASSWORD).expect("hash");
        user::Entity::update_many()
            .col_expr(user::Column::PasswordHash, Expr::value(hash))
            .exec(stack.db())
            .await
            .expect("store full-cost hashes");
        stack
    })
}

/// Adds one slice's tally to a phase's.
fn add(total: &mut Tally, slice: Tally) {
    for (status, n) in slice.statuses {
        *total.statuses.entry(status).or_default() += n;
    }
    total.transport_errors += slice.transport_errors;
    total.elapsed += slice.elapsed;
}

type RequestFn = Box<dyn Fn(usize, u64) -> reqwest::RequestBuilder + Send + Sync>;

fn main() {
    // `cargo bench` passes `--bench`; nothing here takes arguments.
    let config = Config::from_env();
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("server")
        .enable_all()
        .build()
        .expect("server runtime");
    let clients = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("clients")
        .enable_all()
        .build()
        .expect("client runtime");
    let slice = config.seconds / config.rounds as f64;
    eprintln!(
        "auth benchmark: {} s per phase in {} rounds, {} clients, {} attackers, {:?}",
        config.seconds, config.rounds, config.clients, config.attackers, config.backend
    );

    let cached = start_stack(&server, &config, DEFAULT_CACHE_CAPACITY);
    let uncached = start_stack(&server, &config, 0);
    let (cached_url, uncached_url) = (cached.base_url.clone(), uncached.base_url.clone());
    let verifications = |stack: &TestStack| stack.core.auth.verifier().verifications();

    let warm_up = clients.block_on(drive(
        config.clients,
        0.5,
        correct_requests(cached_url.clone()),
    ));
    assert_eq!(
        warm_up.count(200),
        warm_up.total(),
        "warm-up: {}",
        warm_up.describe()
    );

    let mut warm = Tally::default();
    let mut cold = Tally::default();
    let (mut auth_warm, mut auth_cold) = (Tally::default(), Tally::default());
    let (mut spread_correct, mut spread_attack) = (Tally::default(), Tally::default());
    let (mut one_correct, mut one_attack) = (Tally::default(), Tally::default());
    let (mut warm_verifications, mut cold_verifications) = (0, 0);
    let (mut spread_verifications, mut one_verifications) = (0, 0);
    // Phases alternate within each round, so a change of the machine's background load
    // affects them alike and the ratios stay fair.
    for round in 1..=config.rounds {
        let before = verifications(&cached);
        add(
            &mut warm,
            clients.block_on(drive(
                config.clients,
                slice,
                correct_requests(cached_url.clone()),
            )),
        );
        warm_verifications += verifications(&cached) - before;

        let before = verifications(&uncached);
        add(
            &mut cold,
            clients.block_on(drive(
                config.clients,
                slice,
                correct_requests(uncached_url.clone()),
            )),
        );
        cold_verifications += verifications(&uncached) - before;

        // The authentication step alone, on the services' runtime, for comparison.
        add(
            &mut auth_warm,
            server.block_on(authenticate_alone(&cached, config.clients, slice / 2.0)),
        );
        add(
            &mut auth_cold,
            server.block_on(authenticate_alone(&uncached, config.clients, slice / 2.0)),
        );

        let flood = |attack: RequestFn| {
            let before = verifications(&cached);
            let (correct, attacked) = clients.block_on(async {
                let attack = tokio::spawn(drive(config.attackers, slice, attack));
                let correct =
                    drive(config.clients, slice, correct_requests(cached_url.clone())).await;
                (correct, attack.await.expect("attack task"))
            });
            (correct, attacked, verifications(&cached) - before)
        };
        let (correct, attacked, n) = flood(Box::new(spread_flood(cached_url.clone())));
        add(&mut spread_correct, correct);
        add(&mut spread_attack, attacked);
        spread_verifications += n;
        let (correct, attacked, n) = flood(Box::new(one_login_flood(cached_url.clone())));
        add(&mut one_correct, correct);
        add(&mut one_attack, attacked);
        one_verifications += n;
        eprintln!(
            "round {round}: warm {:.1}/s, uncached {:.1}/s, auth alone {:.0}/s vs {:.1}/s, flood over many logins {:.1}/s, flood on one login {:.1}/s",
            warm.ok_per_second(),
            cold.ok_per_second(),
            auth_warm.ok_per_second(),
            auth_cold.ok_per_second(),
            spread_correct.ok_per_second(),
            one_correct.ok_per_second()
        );
    }
    server.block_on(async {
        cached.stop().await;
        uncached.stop().await;
    });

    let ratio = warm.ok_per_second() / cold.ok_per_second().max(f64::MIN_POSITIVE);
    let spread_share = spread_correct.ok_per_second() / warm.ok_per_second();
    let one_share = one_correct.ok_per_second() / warm.ok_per_second();
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    let defaults = AuthSettings::default();
    let mut report = String::new();
    let _ = writeln!(report, "Machine: {}", lms_tests::machine::describe());
    let _ = writeln!(
        report,
        "Settings: {} s per phase in {} interleaved rounds, {} correct clients (logins {}), \
         {} attackers, {:?}, argon2id {:?}, {} verification slot(s), {:?} queue timeout, \
         throttled replies held {:?}\n",
        config.seconds,
        config.rounds,
        config.clients,
        CORRECT_LOGINS.map(|l| l.email).join(", "),
        config.attackers,
        config.backend,
        defaults.password_policy,
        defaults.max_concurrent_verifications,
        defaults.verification_queue_timeout,
        defaults.throttled_reply_delay,
    );
    let _ = writeln!(
        report,
        "| phase | correct requests/s | correct answers | what the flood got | verifications |"
    );
    let _ = writeln!(report, "|---|---:|---|---|---:|");
    let mut row = |phase: &str, correct: &Tally, attack: Option<&Tally>, verifications: u64| {
        let _ = writeln!(
            report,
            "| {phase} | {:.1} | {} | {} | {verifications} |",
            correct.ok_per_second(),
            correct.describe(),
            attack.map_or_else(|| "–".to_owned(), Tally::describe),
        );
    };
    row(
        "`GET /group/{id}`, warm cache",
        &warm,
        None,
        warm_verifications,
    );
    row(
        "`GET /group/{id}`, cache disabled",
        &cold,
        None,
        cold_verifications,
    );
    row(
        "warm, flood over many logins",
        &spread_correct,
        Some(&spread_attack),
        spread_verifications,
    );
    row(
        "warm, flood on one login",
        &one_correct,
        Some(&one_attack),
        one_verifications,
    );
    let auth_ratio = auth_warm.ok_per_second() / auth_cold.ok_per_second().max(f64::MIN_POSITIVE);
    let _ = writeln!(
        report,
        "\nThe authentication step alone (`Authenticator::authenticate` in-process, {} tasks, no \
         HTTP, gRPC or operation): {:.0}/s with the cache warm, {:.1}/s with it disabled ({:.0} ×).",
        config.clients,
        auth_warm.ok_per_second(),
        auth_cold.ok_per_second(),
        auth_ratio
    );
    let _ = writeln!(report, "\n| target | measured | verdict |");
    let _ = writeln!(report, "|---|---:|---|");
    let _ = writeln!(
        report,
        "| warm ≥ 100 × uncached | {ratio:.0} × | {} |",
        verdict(ratio >= 100.0)
    );
    let _ = writeln!(
        report,
        "| flood over many logins: correct ≥ 0.5 × unflooded | {spread_share:.2} × | {} |",
        verdict(spread_share >= 0.5)
    );
    let _ = writeln!(
        report,
        "| flood on one login: correct ≥ 0.5 × unflooded | {one_share:.2} × | {} |",
        verdict(one_share >= 0.5)
    );
    println!("{report}");
    if let Ok(path) = std::env::var("LMS_BENCH_REPORT") {
        std::fs::write(&path, &report).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
        eprintln!("report written to {path}");
    }
}
