//! What the benchmark harnesses share: their knobs from the environment, the runtimes they run
//! on, and the figures they report.

use std::str::FromStr;

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
