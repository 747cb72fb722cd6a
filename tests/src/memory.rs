//! The memory a benchmark step costs this process, from `/proc/self`.

/// The growth of this process's peak resident memory since [`PeakMemory::start`].
pub struct PeakMemory {
    resident_kib: u64,
}

impl PeakMemory {
    pub fn start() -> Self {
        // Writing 5 resets the peak to the current resident size (Linux 4.0 and later).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        Self {
            resident_kib: status_kib("VmRSS:"),
        }
    }

    pub fn growth_mib(&self) -> f64 {
        status_kib("VmHWM:").saturating_sub(self.resident_kib) as f64 / 1024.0
    }
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with(field))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}
