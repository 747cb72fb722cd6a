//! Scale: the seven operations in a small and a large account of one database, side by side
//! in one run, plus the points read and the import (the large account into the empty database,
//! the others beside it; the huge one at twice the large size shows growth),
//! every paged listing at its first and hundredth page (`scale/paging.rs`), and the learner
//! results of the large account: the walk, page 1,000 against page 1, the writes of 10,000
//! (`scale/results.rs`).
//!
//! Run: `cargo bench -p lms-tests --bench scale` (see `docs/benchmarks.md`).
//!
//! Settings (environment):
//! - `LMS_BENCH_BACKENDS`: `sqlite`, `postgres` or `sqlite,postgres` (default: SQLite, and
//!   PostgreSQL too when `LMS_TEST_POSTGRES_URL` is set);
//! - `LMS_BENCH_SMALL` / `LMS_BENCH_LARGE` / `LMS_BENCH_HUGE`: users of the three accounts
//!   (default 1,000 / 100,000 / 200,000; a huge size of 0 skips that account);
//! - `LMS_BENCH_SECONDS`: how long each rate is measured (default 3);
//! - `LMS_BENCH_IDS`: how the accounts' ids are made, `scattered` (default: UUID v1 as
//!   iSpring issues them), `random` (v4) or `sequential` (the best case); a list
//!   (`sequential,scattered`) runs everything once per shape, each on a fresh database, and
//!   ends with the headline figures of the shapes side by side;
//! - `LMS_BENCH_REPORT=PATH`: also write the results as Markdown to PATH.
//!
//! The accounts come from `lms_tests::large_world` through the real import; the services run
//! in this process on their own 2-worker runtime, as `lms up` runs them, the clients and the
//! import on another; every request goes
//! over loopback HTTP through the gateway. Peak memory is the process's own high-water mark,
//! reset before each measured step (`/proc/self/clear_refs`): services, clients and import
//! share the process, so it counts whatever a step leaves resident (SQLite's page caches,
//! the mapped file), which is why the points read reports its first reads apart.

use std::{
    fmt::Write as _,
    io::BufWriter,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use futures::StreamExt as _;
use lms_core::{
    auth::{PasswordHasher, PasswordPolicy},
    import::import_file,
};
use lms_tests::{
    Backend, TestStack,
    bench::{env_number, median, two_worker_runtime},
    large_world::{Call, IdShape, Ids, RoleLogin, WORLD_PASSWORD, WorldShape, write_world},
    machine::load_average,
    memory::PeakMemory,
    stack::{StackOptions, TEST_POLICY},
};

#[path = "scale/paging.rs"]
mod paging;
#[path = "scale/results.rs"]
mod results;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Clients sending at once while a rate is measured.
const CLIENTS: usize = 4;

/// Deletes measured per size and account.
const DELETE_SAMPLES: usize = 7;

struct Config {
    backends: Vec<Backend>,
    small: usize,
    large: usize,
    huge: usize,
    seconds: f64,
    id_shapes: Vec<IdShape>,
    report: Option<String>,
}

impl Config {
    fn from_env() -> Self {
        Self {
            backends: lms_tests::database::bench_backends(),
            small: env_number("LMS_BENCH_SMALL", 1_000),
            large: env_number("LMS_BENCH_LARGE", 100_000),
            huge: env_number("LMS_BENCH_HUGE", 200_000),
            seconds: env_number("LMS_BENCH_SECONDS", 3.0),
            id_shapes: std::env::var("LMS_BENCH_IDS")
                .map(|list| list.split(',').filter_map(IdShape::named).collect())
                .unwrap_or_else(|_| vec![IdShape::Scattered]),
            report: std::env::var("LMS_BENCH_REPORT").ok(),
        }
    }
}

/// One generated account in the database under test.
#[derive(Clone)]
struct Account {
    shape: WorldShape,
    ids: Ids,
    import: Measured,
}

/// A time and the peak memory growth while it ran.
#[derive(Debug, Clone, Copy)]
struct Measured {
    seconds: f64,
    peak_mib: f64,
}

/// The figures of one run that the targets of the scale issue name, for the side-by-side
/// table of id shapes.
#[derive(Debug, Clone, Copy)]
struct Headline {
    import_rows_per_second: f64,
    import_peak_mib: f64,
    /// Median milliseconds of the 10,000-id deletes in the large account.
    delete_ms: Option<f64>,
    /// WAL bytes those deletes wrote per deleted row (SQLite).
    wal_bytes_per_row: Option<f64>,
    points_seconds: f64,
    points_peak_mib: f64,
}

/// Requests per second and the median latency of a steady load.
#[derive(Debug, Clone, Copy)]
struct Rate {
    per_second: f64,
    p50_ms: f64,
}

fn main() -> anyhow::Result<()> {
    let config = Config::from_env();
    let services = two_worker_runtime()?;
    let clients = two_worker_runtime()?;
    let mut report = String::from("## Scale\n");
    for &backend in &config.backends {
        let mut headlines = Vec::new();
        for &id_shape in &config.id_shapes {
            let Some(stack) = services.block_on(TestStack::start_with(StackOptions {
                with_world: false,
                ..StackOptions::new(backend)
            })) else {
                println!("{backend:?}: skipped (no database configured)");
                break;
            };
            let stack = Arc::new(stack);
            let (section, headline) =
                clients.block_on(run_backend(&config, backend, id_shape, &stack))?;
            println!("{section}");
            report.push_str(&section);
            headlines.push((id_shape, headline));
            if let Ok(stack) = Arc::try_unwrap(stack) {
                services.block_on(stack.stop());
            }
        }
        if headlines.len() > 1 {
            let table = side_by_side(backend, &headlines)?;
            println!("{table}");
            report.push_str(&table);
        }
    }
    if let Some(path) = &config.report {
        std::fs::write(path, &report)?;
        println!("Report written to {path}");
    }
    Ok(())
}

async fn run_backend(
    config: &Config,
    backend: Backend,
    id_shape: IdShape,
    stack: &Arc<TestStack>,
) -> anyhow::Result<(String, Headline)> {
    let load_before = load_average();
    let hasher = PasswordHasher::new(TEST_POLICY)?;
    // Users carry a ready hash at the policy the stack verifies fast; the import's own
    // hashing is measured separately.
    let hash = hasher.hash(WORLD_PASSWORD)?;
    // The large account is loaded first, into the empty database, as a customer moving to
    // us loads theirs (`lms import`, then `lms up`); the small and huge ones then go in beside
    // a served account, the import's other case.
    let mut accounts = Vec::new();
    for (world, users) in [(2, config.large), (1, config.small), (3, config.huge)] {
        if users == 0 {
            continue;
        }
        let mut shape = WorldShape::with_users(users);
        shape.world = world;
        shape.id_shape = id_shape;
        shape.results = true;
        shape.account_url = format!("https://world-{world}.example.com");
        accounts.push(import(stack, &hasher, shape, &hash).await?);
    }
    let first_load = accounts[0].shape.world;
    accounts.sort_by_key(|account| account.shape.world);
    let hashing = import_hashing(stack).await?;

    let mut out = String::new();
    writeln!(
        out,
        "\n### {backend:?}, {id_shape} ids\n\nLoad average (1, 5, 15 min) at the start: {load_before}.\n"
    )?;
    writeln!(
        out,
        "| account | into | import rows | import s | rows/s | import peak MiB |\n|---|---|---|---|---|---|"
    )?;
    for account in &accounts {
        let rows = account.shape.rows();
        let into = if account.shape.world == first_load {
            "the empty database"
        } else {
            "beside a served account"
        };
        writeln!(
            out,
            "| {} users | {into} | {rows} | {:.1} | {:.0} | {:.0} |",
            account.shape.users,
            account.import.seconds,
            rows as f64 / account.import.seconds,
            account.import.peak_mib
        )?;
    }
    writeln!(
        out,
        "\nPlain passwords hashed by the import: {} users in {:.2} s at the default policy.\n",
        hashing.0, hashing.1
    )?;
    if let Some(seconds) = vacuum_after_loads(stack).await? {
        writeln!(
            out,
            "PostgreSQL: `VACUUM` after the loads, as autovacuum does after a bulk load: {seconds:.1} s.\n"
        )?;
    }

    let (small, large) = (&accounts[0], &accounts[1]);
    writeln!(
        out,
        "| operation | {} users | {} users | large / small |\n|---|---|---|---|",
        small.shape.users, large.shape.users
    )?;
    type Case = (&'static str, fn(&Account, u64) -> Call);
    let cases: [Case; 6] = [
        ("GET /group (plain, 100 members)", |a, _| {
            Call::get(format!("/group/{}", a.ids.plain_group()))
        }),
        ("GET /content/{id}", |a, n| {
            Call::get(format!("/content/{}", a.ids.content_item(n as usize % 100)))
        }),
        ("POST /department (create)", |a, n| {
            Call::post(
                "/department",
                format!(
                    "<request><name>New {n}</name><parentDepartmentId>{}</parentDepartmentId></request>",
                    a.ids.department(2)
                ),
            )
        }),
        ("POST /department/{id} (rename)", |a, n| {
            Call::post(
                format!("/department/{}", a.ids.department(3)),
                format!("<request><name>Renamed {n}</name></request>"),
            )
        }),
        ("POST /group/{id} (rename)", |a, n| {
            Call::post(
                format!("/group/{}", a.ids.plain_group()),
                format!("<request><name>Hundred {n}</name></request>"),
            )
        }),
        ("GET /group (smart)", |a, _| {
            Call::get(format!("/group/{}", a.ids.smart_group()))
        }),
    ];
    for (name, call) in cases {
        let small_rate = rate(stack, small, call, config.seconds).await?;
        let large_rate = rate(stack, large, call, config.seconds).await?;
        writeln!(
            out,
            "| {name} | {:.0} req/s, p50 {:.1} ms | {:.0} req/s, p50 {:.1} ms | {:.2} |",
            small_rate.per_second,
            small_rate.p50_ms,
            large_rate.per_second,
            large_rate.p50_ms,
            large_rate.per_second / small_rate.per_second
        )?;
    }

    // Before the deletes: the walk counts every enrollment's result. The steps say when they
    // start, so a profiler can be attached to one of them.
    eprintln!("scale: results ({})", chrono::Utc::now().format("%H:%M:%S"));
    out.push_str(&results::table(stack, large, config.seconds).await?);
    eprintln!("scale: deletes ({})", chrono::Utc::now().format("%H:%M:%S"));

    // Every delete removes the enrollments of learners no earlier one touched; one delete
    // is one sample, and a busy machine spreads single samples widely: the median of
    // DELETE_SAMPLES is reported, with the lowest and highest.
    let mut next_learner = [RoleLogin::ALL.len(); 2];
    let (mut delete_ms, mut wal_bytes_per_row) = (None, None);
    for ids_per_call in [1_000, 10_000] {
        let mut cells = Vec::new();
        for (slot, account) in [small, large].into_iter().enumerate() {
            let learners = ids_per_call / account.shape.enrollments_per_user;
            if next_learner[slot] + DELETE_SAMPLES * learners > account.shape.users {
                cells.push("account too small".to_owned());
                continue;
            }
            let (mut times, mut wal) = (Vec::new(), Vec::new());
            for _ in 0..DELETE_SAMPLES {
                let first = next_learner[slot];
                next_learner[slot] += learners;
                let wal_before = wal_frames(stack, "TRUNCATE").await?;
                times.push(delete_enrollments(stack, account, first..first + learners).await?);
                if let (Some(_), Some(frames)) = (wal_before, wal_frames(stack, "PASSIVE").await?) {
                    wal.push(frames * wal_frame_bytes(stack).await? / ids_per_call as f64);
                }
            }
            let middle = median(&mut times);
            let wal_cell = if wal.is_empty() {
                String::new()
            } else {
                let per_row = median(&mut wal);
                if slot == 1 && ids_per_call == 10_000 {
                    wal_bytes_per_row = Some(per_row);
                }
                format!(", WAL {:.1} KiB per row", per_row / 1024.0)
            };
            if slot == 1 && ids_per_call == 10_000 {
                delete_ms = Some(middle);
            }
            cells.push(format!(
                "median {middle:.0} ms ({:.0} to {:.0}, {DELETE_SAMPLES} deletes){wal_cell}",
                times[0],
                times[times.len() - 1]
            ));
        }
        writeln!(
            out,
            "| POST /enrollment/delete, {ids_per_call} ids | {} | {} | |",
            cells[0], cells[1]
        )?;
    }

    out.push_str(&paging::table(stack, small, large, config.seconds).await?);

    writeln!(
        out,
        "\n| points read (`GET /gamification/points`, every user) | users | time | peak MiB | first {CLIENTS} reads' peak MiB |\n|---|---|---|---|---|"
    )?;
    let mut large_points = None;
    for (index, account) in accounts.iter().enumerate() {
        for login in [RoleLogin::Owner, RoleLogin::DepartmentAdministrator] {
            let (measured, first_peak_mib) = points(stack, account, login).await?;
            if index == 1 && login == RoleLogin::Owner {
                large_points = Some(measured);
            }
            writeln!(
                out,
                "| {login:?} | {} | {:.2} s | {:.1} | {first_peak_mib:.1} |",
                account.shape.users, measured.seconds, measured.peak_mib
            )?;
        }
    }
    writeln!(
        out,
        "\nLoad average (1, 5, 15 min) at the end: {}.",
        load_average()
    )?;
    let large_points = large_points.expect("the large account's points were read");
    let headline = Headline {
        import_rows_per_second: large.shape.rows() as f64 / large.import.seconds,
        import_peak_mib: large.import.peak_mib,
        delete_ms,
        wal_bytes_per_row,
        points_seconds: large_points.seconds,
        points_peak_mib: large_points.peak_mib,
    };
    Ok((out, headline))
}

/// The headline figures of every id shape measured on `backend`, side by side, each with
/// its ratio to the first shape's.
fn side_by_side(backend: Backend, headlines: &[(IdShape, Headline)]) -> anyhow::Result<String> {
    let mut out = String::new();
    let (first_shape, first) = headlines[0];
    write!(
        out,
        "\n### {backend:?}: id shapes side by side\n\n| figure (large account) |"
    )?;
    for (shape, _) in headlines {
        write!(out, " {shape} ids |")?;
    }
    for (shape, _) in &headlines[1..] {
        write!(out, " {shape} / {first_shape} |")?;
    }
    writeln!(out, "\n|---|{}", "---|".repeat(2 * headlines.len() - 1))?;
    type Figure = (&'static str, fn(&Headline) -> Option<f64>, usize);
    let figures: [Figure; 6] = [
        ("import, rows/s", |h| Some(h.import_rows_per_second), 0),
        ("import, peak MiB", |h| Some(h.import_peak_mib), 0),
        ("delete 10,000 enrollments, median ms", |h| h.delete_ms, 0),
        (
            "delete, WAL bytes per deleted row",
            |h| h.wal_bytes_per_row,
            0,
        ),
        (
            "points of every user (owner), s",
            |h| Some(h.points_seconds),
            2,
        ),
        ("points, peak MiB per read", |h| Some(h.points_peak_mib), 1),
    ];
    for (name, figure, decimals) in figures {
        write!(out, "| {name} |")?;
        for (_, headline) in headlines {
            match figure(headline) {
                Some(value) => write!(out, " {value:.decimals$} |")?,
                None => write!(out, " – |")?,
            }
        }
        for (_, headline) in &headlines[1..] {
            match (figure(headline), figure(&first)) {
                (Some(value), Some(base)) if base > 0.0 => write!(out, " {:.2} |", value / base)?,
                _ => write!(out, " – |")?,
            }
        }
        writeln!(out)?;
    }
    Ok(out)
}

/// On SQLite, the frames in the write-ahead log after a checkpoint in `mode`; `None` on
/// PostgreSQL. A `TRUNCATE` before a write (nothing else writing) empties the log, so a
/// `PASSIVE` one after it counts the frames that write added.
async fn wal_frames(stack: &TestStack, mode: &str) -> anyhow::Result<Option<f64>> {
    use sea_orm::ConnectionTrait as _;
    if stack.backend() != Backend::Sqlite {
        return Ok(None);
    }
    let db = stack.db();
    // The service's own checkpointing task may hold the checkpoint for a moment (copying the
    // last write): a `TRUNCATE` that found it busy emptied nothing, and is tried again.
    for _ in 0..200 {
        let checkpoint = sea_orm::Statement::from_string(
            sea_orm::DbBackend::Sqlite,
            format!("PRAGMA wal_checkpoint({mode})"),
        );
        let row = db
            .query_one_raw(checkpoint)
            .await?
            .ok_or_else(|| anyhow::anyhow!("wal_checkpoint answers a row"))?;
        let busy: i64 = row.try_get_by_index(0)?;
        let frames: i64 = row.try_get_by_index(1)?;
        if busy == 0 || mode != "TRUNCATE" {
            return Ok(Some(frames.max(0) as f64));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("the write-ahead log stayed busy for 10 s")
}

/// Bytes of one WAL frame: a page and its 24-byte header.
async fn wal_frame_bytes(stack: &TestStack) -> anyhow::Result<f64> {
    use sea_orm::ConnectionTrait as _;
    let row = stack
        .db()
        .query_one_raw(sea_orm::Statement::from_string(
            sea_orm::DbBackend::Sqlite,
            "PRAGMA page_size",
        ))
        .await?
        .ok_or_else(|| anyhow::anyhow!("page_size answers a row"))?;
    let page: i64 = row.try_get_by_index(0)?;
    Ok(page as f64 + 24.0)
}

async fn import(
    stack: &TestStack,
    hasher: &PasswordHasher,
    shape: WorldShape,
    hash: &str,
) -> anyhow::Result<Account> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("world.json");
    {
        let mut file = BufWriter::new(std::fs::File::create(&path)?);
        write_world(&shape, hash, &mut file)?;
    }
    let peak = PeakMemory::start();
    let began = Instant::now();
    import_file(stack.db(), &path, hasher).await?;
    let import = Measured {
        seconds: began.elapsed().as_secs_f64(),
        peak_mib: peak.growth_mib(),
    };
    let ids = shape.ids();
    Ok(Account { shape, ids, import })
}

/// On PostgreSQL, `VACUUM` of the whole database once the accounts are in, timed: what
/// autovacuum does soon after a bulk load on a server that runs it (this machine's runs with it
/// off, see `db::autovacuum`). Until then no page of the loaded tables is marked all-visible,
/// and an index-only read (the learners' attributes of the results lists) still visits every
/// table row. Nothing on SQLite, which has no such mark.
async fn vacuum_after_loads(stack: &TestStack) -> anyhow::Result<Option<f64>> {
    use sea_orm::ConnectionTrait as _;
    if stack.db().get_database_backend() != sea_orm::DbBackend::Postgres {
        return Ok(None);
    }
    let began = Instant::now();
    stack.db().execute_unprepared("VACUUM").await?;
    Ok(Some(began.elapsed().as_secs_f64()))
}

/// A small account whose 200 users all carry a plain password, hashed by the import at
/// the default (production) policy.
async fn import_hashing(stack: &TestStack) -> anyhow::Result<(usize, f64)> {
    let hasher = PasswordHasher::new(PasswordPolicy::default())?;
    let mut shape = WorldShape::with_users(200);
    shape.world = 9;
    shape.account_url = "https://world-hashing.example.com".into();
    shape.plain_passwords = shape.users;
    shape.enrollments_per_user = 0;
    let account = import(stack, &hasher, shape, "").await?;
    Ok((account.shape.users, account.import.seconds))
}

/// Deletes every enrollment of `learners` in one request; milliseconds taken.
async fn delete_enrollments(
    stack: &TestStack,
    account: &Account,
    learners: std::ops::Range<usize>,
) -> anyhow::Result<f64> {
    let ids: String = learners
        .flat_map(|user| {
            (0..account.shape.enrollments_per_user).map(move |k| account.ids.enrollment(user, k))
        })
        .map(|id| format!("<id>{id}</id>"))
        .collect();
    let body =
        format!("<DeleteEnrollments><enrollmentIds>{ids}</enrollmentIds></DeleteEnrollments>");
    let began = Instant::now();
    let status = send(stack, account, &Call::post("/enrollment/delete", body)).await?;
    anyhow::ensure!(status < 300, "enrollment delete: status {status}");
    Ok(began.elapsed().as_secs_f64() * 1e3)
}

/// `call` as the account's owner.
async fn send(stack: &TestStack, account: &Account, call: &Call) -> anyhow::Result<u16> {
    Ok(call.send(stack, &account.shape, RoleLogin::Owner).await?)
}

/// `CLIENTS` clients sending `call` back to back for `seconds`.
async fn rate<F>(
    stack: &Arc<TestStack>,
    account: &Account,
    call: F,
    seconds: f64,
) -> anyhow::Result<Rate>
where
    F: Fn(&Account, u64) -> Call + Clone + Send + Sync + 'static,
{
    // Warm the credentials cache and the statement caches.
    send(stack, account, &call(account, u64::MAX)).await?;
    let sequence = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let account = Arc::new(account.clone());
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (stack, account, sequence) = (stack.clone(), account.clone(), sequence.clone());
            let call = call.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while Instant::now() < deadline {
                    let n = sequence.fetch_add(1, Ordering::Relaxed);
                    let began = Instant::now();
                    let status = send(&stack, &account, &call(&account, n)).await?;
                    anyhow::ensure!(status < 300, "{}: status {status}", call(&account, n).path);
                    latencies.push(began.elapsed().as_secs_f64() * 1e3);
                }
                Ok(latencies)
            })
        })
        .collect();
    let began = Instant::now();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    let elapsed = began.elapsed().as_secs_f64();
    Ok(Rate {
        per_second: latencies.len() as f64 / elapsed,
        p50_ms: median(&mut latencies),
    })
}

/// The whole points list as `login`, read to the end: first as many reads at once as the
/// clients (each on its own pooled connection), whose peak is given apart, then three reads
/// one after another: their median time and highest peak. The first reads also hold what
/// stays warm for the later ones (SQLite's page cache of each pooled connection, bounded by
/// `cache_size`, and the pages of the file it maps); the later reads' peak is what one read
/// costs the serving process.
async fn points(
    stack: &Arc<TestStack>,
    account: &Account,
    login: RoleLogin,
) -> anyhow::Result<(Measured, f64)> {
    let cold = PeakMemory::start();
    let warming: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (stack, account) = (stack.clone(), account.clone());
            tokio::spawn(async move { read_points(&stack, &account, login).await })
        })
        .collect();
    for read in warming {
        read.await??;
    }
    let cold_peak_mib = cold.growth_mib();
    let mut times = Vec::new();
    let mut peak_mib: f64 = 0.0;
    for _ in 0..3 {
        let peak = PeakMemory::start();
        let began = Instant::now();
        read_points(stack, account, login).await?;
        times.push(began.elapsed().as_secs_f64());
        peak_mib = peak_mib.max(peak.growth_mib());
    }
    let warm = Measured {
        seconds: median(&mut times),
        peak_mib,
    };
    Ok((warm, cold_peak_mib))
}

/// One read of the whole points list as `login`, every expected entry counted.
async fn read_points(stack: &TestStack, account: &Account, login: RoleLogin) -> anyhow::Result<()> {
    let response = stack
        .http
        .get(format!("{}/gamification/points", stack.base_url))
        .header("X-Auth-Account-Url", &account.shape.account_url)
        .header("X-Auth-Email", login.email())
        .header("X-Auth-Password", WORLD_PASSWORD)
        .send()
        .await?;
    anyhow::ensure!(
        response.status().is_success(),
        "points: {}",
        response.status()
    );
    // Counted as it arrives, not kept: the peak is the serving side's, not this client's.
    let mut body = response.bytes_stream();
    let (mut entries, mut tail) = (0, Vec::new());
    while let Some(chunk) = body.next().await {
        tail.extend_from_slice(&chunk?);
        // What is kept is shorter than a tag, so no tag is counted twice; a tag cut
        // by the chunk boundary is counted once the next chunk completes it.
        entries += count_tags(&tail);
        tail.drain(..tail.len().saturating_sub(ENTRY_TAG.len() - 1));
    }
    let expected = match login {
        RoleLogin::Owner | RoleLogin::Administrator => account.shape.users,
        _ => account.shape.smart_group_members(),
    };
    anyhow::ensure!(
        entries == expected,
        "points: {entries} entries as {login:?} in an account of {} users",
        account.shape.users
    );
    Ok(())
}

const ENTRY_TAG: &[u8] = b"<userPointsInfo>";

fn count_tags(bytes: &[u8]) -> usize {
    bytes
        .windows(ENTRY_TAG.len())
        .filter(|w| *w == ENTRY_TAG)
        .count()
}
