//! What the benchmark harnesses share: their knobs from the environment, the runtimes they run
//! on, and the figures they report.

use std::{str::FromStr, sync::Arc};

use crate::{Backend, TestStack, stack::StackOptions};

/// The environment variable `name` read as a number, `default` when unset or not one.
pub fn env_number<T: FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// A 2-worker runtime: the services' own, as `lms up` runs them, or the clients' beside it.
pub fn two_worker_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Runs `run` once per backend on a stack of `options` (services on their own 2-worker runtime,
/// clients on another, as `lms up` and its callers run), prints each section, and writes
/// `report` followed by the sections to `LMS_BENCH_REPORT` when it is set. A backend without a
/// database is reported as skipped.
pub fn each_backend(
    backends: &[Backend],
    mut report: String,
    options: impl Fn(Backend) -> StackOptions,
    run: impl AsyncFn(Backend, &Arc<TestStack>) -> anyhow::Result<String>,
) -> anyhow::Result<()> {
    let services = two_worker_runtime()?;
    let clients = two_worker_runtime()?;
    for &backend in backends {
        let Some(stack) = services.block_on(TestStack::start_with(options(backend))) else {
            println!("{backend:?}: skipped (no database configured)");
            continue;
        };
        let stack = Arc::new(stack);
        let section = clients.block_on(run(backend, &stack))?;
        println!("{section}");
        report.push_str(&section);
        if let Ok(stack) = Arc::try_unwrap(stack) {
            services.block_on(stack.stop());
        }
    }
    if let Ok(path) = std::env::var("LMS_BENCH_REPORT") {
        std::fs::write(&path, &report)?;
        println!("Report written to {path}");
    }
    Ok(())
}

/// The median of `values`, which it sorts; NaN when there are none.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The `q` quantile of `sorted`; NaN when there are none.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let at = ((sorted.len() as f64 * q) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(at).copied().unwrap_or(f64::NAN)
}
