//! A service binary (`lms up`, `lms-core`) watches the process that serves, and outlives it.
//!
//! SQLite maps its WAL index, the `-shm` file beside the database, into memory. When that file
//! is truncated, or the file system under it fails, while a process has it mapped, the next
//! read of the mapping raises SIGBUS: the process dies at once, mid-request, and nothing in it
//! can say why (handling that signal needs `unsafe`, which this code base forbids, and could
//! not make the mapping usable again). So the binary does not serve itself: it starts this same
//! executable again as its serving process ([`SERVING_PROCESS`] set in its environment) and
//! waits for it. This module knows processes and signals, not databases: the caller names the
//! database file, if any, that a bus error points to.
//!
//! - SIGTERM, SIGINT, SIGHUP and SIGQUIT are passed on; the serving process's exit is then
//!   the supervisor's.
//! - A serving process that exits by itself (a refused start, a fatal error) ends the
//!   supervisor with its status: it has logged its reason, and starting it again would only
//!   repeat it.
//! - A serving process killed by a signal that did not come through the supervisor is logged at
//!   ERROR with what that signal means here (SIGBUS: the `-shm` and database files, by name)
//!   and started again after [`RESTART_DELAY`]: SQLite rebuilds a truncated WAL index from the
//!   `-wal` file when the database is opened, so nothing committed is lost. A crash more than
//!   [`MAX_CRASHES`] times within [`CRASH_WINDOW`] ends the supervisor with 128 + the signal,
//!   as a shell reports it, for the restart policy (compose, systemd, Kubernetes) to take
//!   over with its back-off.
//! - The serving process asks the kernel for SIGTERM when its supervisor dies, even by
//!   SIGKILL, so it never keeps the ports of a supervisor that is gone.

use std::{
    collections::VecDeque,
    ffi::OsString,
    os::unix::process::ExitStatusExt as _,
    path::{Path, PathBuf},
    process::ExitStatus,
    time::{Duration, Instant},
};

use anyhow::Context as _;
use nix::{sys::signal::Signal, unistd::Pid};
use tokio::signal::unix::{SignalKind, signal};

use crate::telemetry::{LogFormat, Telemetry, TelemetryOptions, TracedService};

/// Set in the environment of the serving process to the supervisor's process id.
pub const SERVING_PROCESS: &str = "LMS_SERVING_PROCESS";

/// How many crashes in [`CRASH_WINDOW`] the supervisor restarts before it gives up.
pub const MAX_CRASHES: usize = 3;

/// The window [`MAX_CRASHES`] is counted in.
pub const CRASH_WINDOW: Duration = Duration::from_secs(60);

/// The pause before a crashed serving process is started again: a fault that is still there
/// (a file system that stays full) is not hammered.
pub const RESTART_DELAY: Duration = Duration::from_secs(1);

/// Whether this process is the serving process of a supervisor. If so, it will get
/// SIGTERM when its supervisor dies; it fails when the supervisor is already gone.
pub fn is_serving_process() -> anyhow::Result<bool> {
    let Some(supervisor) = std::env::var_os(SERVING_PROCESS) else {
        return Ok(false);
    };
    let supervisor: u32 = supervisor
        .to_str()
        .and_then(|pid| pid.parse().ok())
        .with_context(|| format!("{SERVING_PROCESS} must be the supervisor's process id"))?;
    nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)
        .context("cannot ask to be stopped with the supervisor")?;
    // Asked too late when the supervisor died before: this process has another parent now.
    anyhow::ensure!(
        std::os::unix::process::parent_id() == supervisor,
        "the supervisor that started this serving process (pid {supervisor}) is gone"
    );
    Ok(true)
}

/// The signals passed on to the serving process.
struct StopSignals {
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn listen() -> anyhow::Result<Self> {
        let listen = |kind| signal(kind).context("cannot listen for signals");
        Ok(Self {
            terminate: listen(SignalKind::terminate())?,
            interrupt: listen(SignalKind::interrupt())?,
            hangup: listen(SignalKind::hangup())?,
            quit: listen(SignalKind::quit())?,
        })
    }

    async fn next(&mut self) -> Signal {
        tokio::select! {
            _ = self.terminate.recv() => Signal::SIGTERM,
            _ = self.interrupt.recv() => Signal::SIGINT,
            _ = self.hangup.recv() => Signal::SIGHUP,
            _ = self.quit.recv() => Signal::SIGQUIT,
        }
    }
}

/// Runs this executable with this process's arguments as the serving process, restarting it
/// after a crash, until it exits or is stopped; returns the exit status for `program` (the
/// name an operator knows it by, for the log) to end with. `database_file` is the SQLite file
/// the serving process maps, if any, which a bus error is then said to point to.
pub async fn supervise(program: &str, database_file: Option<PathBuf>) -> anyhow::Result<i32> {
    let executable = std::env::current_exe().context("cannot find this executable")?;
    let arguments: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut signals = StopSignals::listen()?;
    let mut crashes: VecDeque<Instant> = VecDeque::new();
    loop {
        let serving = std::process::Command::new(&executable)
            .args(&arguments)
            .env(SERVING_PROCESS, std::process::id().to_string())
            .spawn()
            .context("cannot start the serving process")?;
        let pid = i32::try_from(serving.id())
            .map(Pid::from_raw)
            .context("the serving process's id")?;
        let mut exited = tokio::task::spawn_blocking(move || {
            let mut serving = serving;
            serving.wait()
        });
        let mut stopping = false;
        let status = loop {
            tokio::select! {
                status = &mut exited => {
                    break status
                        .context("the wait for the serving process failed")?
                        .context("cannot wait for the serving process")?;
                }
                passed = signals.next() => {
                    stopping = true;
                    // Gone already: its exit is about to be seen.
                    let _ = nix::sys::signal::kill(pid, passed);
                }
            }
        };
        let Some(number) = status.signal().filter(|_| !stopping) else {
            return Ok(exit_code(status));
        };
        let now = Instant::now();
        crashes.retain(|at| now.duration_since(*at) < CRASH_WINDOW);
        crashes.push_back(now);
        tracing::error!(
            pid = pid.as_raw(),
            signal = signal_name(number),
            core_dumped = status.core_dumped(),
            "the serving process was killed by {}: {}",
            signal_name(number),
            meaning(number, database_file.as_deref())
        );
        if crashes.len() > MAX_CRASHES {
            tracing::error!(
                "the serving process crashed {} times within {} s; {program} stops and leaves \
                 the next start to the restart policy",
                crashes.len(),
                CRASH_WINDOW.as_secs()
            );
            return Ok(128 + number);
        }
        tracing::warn!(
            "starting the serving process again in {} s",
            RESTART_DELAY.as_secs()
        );
        tokio::select! {
            () = tokio::time::sleep(RESTART_DELAY) => {}
            _ = signals.next() => return Ok(128 + number),
        }
    }
}

/// [`supervise`] with the supervisor's own log set up first (as `service`, in `log_format`):
/// it logs what becomes of the serving process, and has nothing to trace.
pub async fn supervise_logged(
    program: &str,
    service: &'static str,
    log_format: LogFormat,
    database_file: Option<PathBuf>,
) -> anyhow::Result<i32> {
    let _logs = Telemetry::build(&TelemetryOptions {
        log_format,
        services: vec![TracedService::whole(service)],
        otlp_endpoint: None,
        service_name: None,
    })?
    .install()?;
    supervise(program, database_file).await
}

/// The status a shell would report for `status`.
fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|number| 128 + number))
        .unwrap_or(1)
}

fn signal_name(number: i32) -> &'static str {
    Signal::try_from(number).map_or("an unknown signal", Signal::as_str)
}

/// What a serving process killed by signal `number` most likely met.
fn meaning(number: i32, database_file: Option<&Path>) -> String {
    match (Signal::try_from(number), database_file) {
        (Ok(Signal::SIGBUS), Some(path)) => {
            let beside = |suffix: &str| {
                let mut name = path.as_os_str().to_owned();
                name.push(suffix);
                PathBuf::from(name).display().to_string()
            };
            format!(
                "a file it had mapped into memory became unreadable: SQLite's WAL index {} \
                 (truncated, replaced, or on a file system that is full or failing), or the \
                 database file {} itself. SQLite rebuilds the WAL index from {} when the \
                 database is opened again",
                beside("-shm"),
                path.display(),
                beside("-wal")
            )
        }
        (Ok(Signal::SIGBUS), None) => {
            "a file it had mapped into memory became unreadable (its file system is full or \
             failing)"
                .to_owned()
        }
        (Ok(Signal::SIGKILL), _) => {
            "stopped without notice, by the kernel's out-of-memory killer or by an operator"
                .to_owned()
        }
        _ => "a defect or an outside kill; its last log lines are above".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bus_error_on_sqlite_names_the_wal_index_and_the_database() {
        let file = Path::new("/var/lib/lms/lms.sqlite3");
        let said = meaning(Signal::SIGBUS as i32, Some(file));
        assert!(said.contains("/var/lib/lms/lms.sqlite3-shm"), "{said}");
        assert!(said.contains("/var/lib/lms/lms.sqlite3-wal"), "{said}");
        let said = meaning(Signal::SIGBUS as i32, None);
        assert!(!said.contains("-shm"), "{said}");
    }

    #[test]
    fn a_status_reads_as_a_shell_reports_it() {
        assert_eq!(exit_code(ExitStatus::from_raw(0)), 0);
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        // Killed by SIGBUS (7), no core.
        assert_eq!(exit_code(ExitStatus::from_raw(7)), 135);
        assert_eq!(signal_name(7), "SIGBUS");
    }
}
