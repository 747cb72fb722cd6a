//! Whole lists: what the serving process adds to its memory while it answers the whole lists
//! of a large account (`GET /user`, `/user/v2`, `/enrollment`, `/department`, `/group`,
//! `/content`, `/gamification/points`), one request at a time and six at once, and how long
//! they take (issue 28: the target is under 32 MiB per request).
//!
//! Run: `cargo bench -p lms-tests --bench whole_lists` (see `docs/benchmarks.md`).
//!
//! Settings (environment):
//! - `LMS_BENCH_BACKENDS`: `sqlite`, `postgres` or `sqlite,postgres` (default: SQLite, and
//!   PostgreSQL too when `LMS_TEST_POSTGRES_URL` is set);
//! - `LMS_BENCH_USERS`: users of the account (default 50,006: the 6 role logins and 50,000
//!   learners with 10 enrollments each, 500,000 enrollments);
//! - `LMS_BENCH_REPORT=PATH`: also write the results as Markdown to PATH.
//!
//! The account comes from `lms_tests::large_world` through the real import; the services run
//! in this process on their own 2-worker runtime, as `lms up` runs them, the clients on
//! another, over loopback HTTP through the gateway, each body counted as it arrives and never
//! kept. Memory is the growth of the process's peak resident size over a step
//! (`/proc/self/clear_refs`). The first reads of each list are given apart: they also warm what
//! stays warm (each pooled connection's SQLite page cache and the pages of the file it maps).
//! "Per request" is the larger of one read's peak and a sixth of six reads' peak.

use std::{fmt::Write as _, sync::Arc, time::Instant};

use lms_core::auth::PasswordHasher;
use lms_tests::{
    Backend, TestStack,
    large_world::{RoleLogin, WORLD_PASSWORD, WorldShape, import_account},
    memory::PeakMemory,
    stack::{StackOptions, TEST_POLICY},
    whole_lists::{Format, WHOLE_LISTS, WholeList, read},
};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Requests measured one after another, per list and format.
const SEQUENTIAL: usize = 3;
/// Requests measured at once.
const AT_ONCE: usize = 6;

fn main() -> anyhow::Result<()> {
    let backends = lms_tests::database::bench_backends();
    let shape = WorldShape::with_users(lms_tests::bench::env_number("LMS_BENCH_USERS", 50_006));
    lms_tests::bench::each_backend(
        &backends,
        format!(
            "## Whole lists\n\nMachine: {}\n",
            lms_tests::machine::describe()
        ),
        |backend| StackOptions {
            with_world: false,
            ..StackOptions::new(backend)
        },
        async |backend, stack| run_backend(backend, stack, &shape).await,
    )
}

async fn run_backend(
    backend: Backend,
    stack: &Arc<TestStack>,
    shape: &WorldShape,
) -> anyhow::Result<String> {
    let hasher = PasswordHasher::new(TEST_POLICY)?;
    let hash = hasher.hash(WORLD_PASSWORD)?;
    let began = Instant::now();
    import_account(stack, shape, &hasher, &hash).await;
    let mut out = String::new();
    writeln!(
        out,
        "\n### {backend:?}: {} users, {} enrollments (imported in {:.0} s)\n",
        shape.users,
        shape.enrollments(),
        began.elapsed().as_secs_f64()
    )?;
    writeln!(
        out,
        "| list | format | rows | body MiB | first {AT_ONCE} at once: peak MiB | one: median s | one: peak MiB | {AT_ONCE} at once: s | {AT_ONCE} at once: peak MiB | per request MiB |\n|---|---|---|---|---|---|---|---|---|---|"
    )?;
    for list in WHOLE_LISTS {
        for format in Format::BOTH {
            let line = measure(stack, shape, list, format).await?;
            println!("{line}");
            writeln!(out, "{line}")?;
        }
    }
    Ok(out)
}

/// One row of the table: [`AT_ONCE`] first reads at once, which also warm what stays warm
/// (each pooled connection's SQLite page cache, up to 32 MiB, and the pages of the file it maps,
/// up to 64 MiB), given apart; then [`SEQUENTIAL`] reads one after another (the median time
/// and the highest peak); then [`AT_ONCE`] reads at once again.
async fn measure(
    stack: &Arc<TestStack>,
    shape: &WorldShape,
    list: WholeList,
    format: Format,
) -> anyhow::Result<String> {
    let (_, first_peak, first) = at_once(stack, shape, list, format).await?;
    anyhow::ensure!(
        first.rows == list.rows_for_the_owner(shape),
        "{}: {} rows",
        list.path,
        first.rows
    );
    let (mut times, mut one_peak) = (Vec::new(), 0.0_f64);
    for _ in 0..SEQUENTIAL {
        let peak = PeakMemory::start();
        let began = Instant::now();
        read(stack, shape, RoleLogin::Owner, list, format).await?;
        times.push(began.elapsed().as_secs_f64());
        one_peak = one_peak.max(peak.growth_mib());
    }
    times.sort_by(f64::total_cmp);
    let (at_once_seconds, at_once_peak, _) = at_once(stack, shape, list, format).await?;
    Ok(format!(
        "| `{}` | {format:?} | {} | {:.1} | {:.1} | {:.2} | {:.1} | {:.2} | {:.1} | {:.1} |",
        list.path,
        first.rows,
        first.bytes as f64 / (1024.0 * 1024.0),
        first_peak,
        times[times.len() / 2],
        one_peak,
        at_once_seconds,
        at_once_peak,
        one_peak.max(at_once_peak / AT_ONCE as f64),
    ))
}

/// [`AT_ONCE`] reads at once: the time they took, the peak memory growth, one read's result.
async fn at_once(
    stack: &Arc<TestStack>,
    shape: &WorldShape,
    list: WholeList,
    format: Format,
) -> anyhow::Result<(f64, f64, lms_tests::whole_lists::Read)> {
    let peak = PeakMemory::start();
    let began = Instant::now();
    let reads: Vec<_> = (0..AT_ONCE)
        .map(|_| {
            let (stack, shape) = (stack.clone(), shape.clone());
            tokio::spawn(async move { read(&stack, &shape, RoleLogin::Owner, list, format).await })
        })
        .collect();
    let mut last = None;
    for reading in reads {
        last = Some(reading.await??);
    }
    let last = last.ok_or_else(|| anyhow::anyhow!("no read"))?;
    Ok((began.elapsed().as_secs_f64(), peak.growth_mib(), last))
}
