//! What a benchmark report says of the machine it ran on, and the CPU time it measures.

use std::time::Duration;

/// `2 cores (CPU model), 24 GiB memory, load average 1.0 0.8 0.5`, read from `/proc`.
pub fn describe() -> String {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    let memory = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:").map(|v| v.trim().to_owned()))
        .unwrap_or_else(|| "unknown".into());
    let load = read("/proc/loadavg");
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{cores} cores ({cpu}), {memory} memory, load average {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// CPU time (user and system) in a `/proc/PID/stat` or `/proc/PID/task/TID/stat` line.
pub fn cpu_of_stat(stat: &str) -> Duration {
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let field = |n: usize| {
        fields
            .get(n)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // The kernel counts in USER_HZ, 100 on Linux.
    Duration::from_millis((field(11) + field(12)) * 10)
}

/// CPU time of process `pid` and of its descendants still running (a supervisor and the
/// process it started); zero for a process that is gone.
pub fn process_tree_cpu(pid: u32) -> Duration {
    let read = |path: String| std::fs::read_to_string(path).unwrap_or_default();
    let mut total = cpu_of_stat(&read(format!("/proc/{pid}/stat")));
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return total;
    };
    for task in tasks.flatten() {
        let children = read(task.path().join("children").display().to_string());
        for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            total += process_tree_cpu(child);
        }
    }
    total
}

/// The machine's CPU time so far, and how much of it the hypervisor stole (from /proc/stat):
/// on a shared virtual machine the time the benchmark wanted a core and got none, which shows
/// in every latency, the ceiling's included.
#[derive(Clone, Copy)]
pub struct Steal {
    stolen: u64,
    total: u64,
}

impl Steal {
    pub fn now() -> Self {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let ticks: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .filter_map(|v| v.parse().ok())
            .collect();
        Self {
            stolen: ticks.get(7).copied().unwrap_or(0),
            total: ticks.iter().sum(),
        }
    }

    /// Percent of the CPU time since `self` that was stolen.
    pub fn percent_since(self) -> f64 {
        let now = Self::now();
        let total = now.total.saturating_sub(self.total).max(1);
        100.0 * now.stolen.saturating_sub(self.stolen) as f64 / total as f64
    }
}

/// The load averages over 1, 5 and 15 minutes, `1.05, 1.42, 1.58`, from `/proc/loadavg`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|| "unknown".to_owned())
}
