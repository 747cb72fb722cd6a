//! The `lms` executable run as an operator runs it: `lms up` on a database and fixed ports,
//! its log, its exit.
//!
//! The executable is the workspace's own, built by cargo into this target folder the first
//! time a test asks for it ([`lms_executable`]), so a test never runs a stale one.

use std::{
    io::{BufRead as _, BufReader},
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    sync::OnceLock,
    time::{Duration, Instant},
};

use tempfile::TempDir;

/// Names the `lms` executable to run instead of building it (a test run again as another
/// user, who cannot run cargo here, is given its parent's).
pub const EXECUTABLE_VAR: &str = "LMS_TEST_LMS_EXECUTABLE";

/// The `lms` executable of this workspace, built (or found up to date) by cargo once per test
/// process.
pub fn lms_executable() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        if let Some(given) = std::env::var_os(EXECUTABLE_VAR) {
            return PathBuf::from(given);
        }
        // target/PROFILE/deps/TEST-HASH: the executable goes to target/PROFILE.
        let test = std::env::current_exe().expect("this test's path");
        let profile_dir = test
            .parent()
            .and_then(Path::parent)
            .expect("the test runs from target/PROFILE/deps");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "--quiet", "-p", "lms", "--bin", "lms"]);
        if profile_dir
            .file_name()
            .is_some_and(|name| name == "release")
        {
            build.arg("--release");
        }
        let target_dir = profile_dir.parent().expect("target folder");
        let status = build
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p lms failed");
        profile_dir.join("lms")
    })
}

/// A port free on loopback now, for a process that must keep its ports across restarts.
pub fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// `lms up` running on its own process (group), logging to a file.
pub struct LmsUp {
    process: Child,
    pub base_url: String,
    pub grpc_addr: SocketAddr,
    log: PathBuf,
    _folder: TempDir,
}

impl LmsUp {
    /// Starts `lms up` on `database_url` with `arguments` added, on two free ports; returns
    /// once it says it is up.
    pub fn start(database_url: &str, arguments: &[&str]) -> Self {
        let folder = tempfile::tempdir().expect("a folder for the log");
        let log = folder.path().join("lms-up.log");
        let http_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let grpc_addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let mut process = Command::new(lms_executable())
            .arg("up")
            .args(["--http-addr", &http_addr.to_string()])
            .args(["--grpc-addr", &grpc_addr.to_string()])
            .args(arguments)
            .env("DATABASE_URL", database_url)
            .env("RUST_LOG", "info")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("the log file"))
            .spawn()
            .expect("lms up starts");
        let mut lines = BufReader::new(process.stdout.take().expect("stdout")).lines();
        let started = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|line| line.starts_with("Press Ctrl-C"));
        let up = Self {
            process,
            base_url: format!("http://{http_addr}"),
            grpc_addr,
            log,
            _folder: folder,
        };
        assert!(started, "lms up did not start:\n{}", up.log());
        // What it prints later (a restart's addresses, its farewell) must not fill the pipe.
        std::thread::spawn(move || lines.for_each(drop));
        up
    }

    /// Runs `lms up` on `database_url` expecting it to refuse to start; its exit status and
    /// log.
    pub fn refused(database_url: &str) -> (ExitStatus, String) {
        let folder = tempfile::tempdir().expect("a folder for the log");
        let log = folder.path().join("lms-up.log");
        let status = Command::new(lms_executable())
            .arg("up")
            .args(["--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"])
            .env("DATABASE_URL", database_url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("the log file"))
            .status()
            .expect("lms up runs");
        (status, std::fs::read_to_string(&log).unwrap_or_default())
    }

    /// Its log so far (stderr: the supervisor's lines and the serving process's).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The process id of `lms up` itself.
    pub fn id(&self) -> u32 {
        self.process.id()
    }

    /// Its exit status once it has exited, waiting at most `within`.
    pub fn exit_within(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.process.try_wait().expect("the status of lms up") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, as a container runtime stops it; its exit status.
    pub fn terminate(mut self) -> ExitStatus {
        let sent = Command::new("kill")
            .arg(self.process.id().to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIGTERM is sent to lms up");
        let status = self.exit_within(Duration::from_secs(30));
        status.unwrap_or_else(|| {
            let _ = self.process.kill();
            panic!("lms up did not stop on SIGTERM:\n{}", self.log())
        })
    }
}

impl Drop for LmsUp {
    fn drop(&mut self) {
        // A test that failed midway leaves no service behind (its serving process gets
        // SIGTERM from the kernel when the supervisor is gone).
        if matches!(self.process.try_wait(), Ok(None)) {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}
