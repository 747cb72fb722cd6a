//! `lms up --demo` as a newcomer runs it: the real binary, its printed curl answered with
//! the group's XML, SIGINT stopping it cleanly, and a second start reusing the same data; and
//! `lms up` refusing to start on a database file that went missing.

use std::{
    io::{BufRead as _, BufReader},
    process::{Child, ChildStdout, Command, Stdio},
    sync::mpsc,
    time::Duration,
};

const STARTUP: Duration = Duration::from_secs(60);

struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    printed: Vec<String>,
}

fn start(database_url: &str) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lms"))
        .args([
            "up",
            "--demo",
            "--http-addr",
            "127.0.0.1:0",
            "--grpc-addr",
            "127.0.0.1:0",
        ])
        .args(["--database-url", database_url])
        // Cheap hashes: this checks the launcher, not argon2's cost.
        .args(["--argon2-memory-kib", "64", "--argon2-iterations", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("lms starts");
    let stdout: ChildStdout = child.stdout.take().expect("stdout");
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let mut running = Running {
        child,
        lines,
        printed: Vec::new(),
    };
    running.read_until("Press Ctrl-C to stop.");
    running
}

impl Running {
    fn read_until(&mut self, marker: &str) {
        loop {
            let line = self
                .lines
                .recv_timeout(STARTUP)
                .unwrap_or_else(|_| panic!("no {marker:?} in {:#?}", self.printed));
            let done = line.contains(marker);
            self.printed.push(line);
            if done {
                return;
            }
        }
    }

    fn printed(&self, prefix: &str) -> String {
        self.printed
            .iter()
            .find_map(|line| {
                line.trim()
                    .strip_prefix(prefix)
                    .map(|rest| rest.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no {prefix:?} in {:#?}", self.printed))
    }

    /// The printed curl command, as a request: URL and headers.
    fn printed_curl(&self) -> (String, Vec<(String, String)>) {
        let start = self
            .printed
            .iter()
            .position(|l| l.trim().starts_with("curl"))
            .expect("a curl");
        let command: String = self.printed[start..start + 4].join(" ").replace('\\', " ");
        let url = command
            .split_whitespace()
            .find(|word| word.starts_with("http://"))
            .expect("curl URL")
            .to_owned();
        let headers = command
            .split('\'')
            .skip(1)
            .step_by(2)
            .filter_map(|header| header.split_once(": "))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        (url, headers)
    }

    /// SIGINT, as Ctrl-C sends, then the exit status and what it printed.
    fn interrupt(mut self) -> bool {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        self.read_until("lms stopped.");
        self.child.wait().expect("lms exits").success()
    }
}

async fn send_printed_curl(running: &Running) -> (u16, String) {
    let (url, headers) = running.printed_curl();
    let mut request = reqwest::Client::new().get(url);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let response = request
        .send()
        .await
        .expect("the printed curl reaches the service");
    (
        response.status().as_u16(),
        response.text().await.expect("body"),
    )
}

#[tokio::test]
async fn lms_up_demo_serves_its_printed_curl_stops_on_ctrl_c_and_restarts_on_the_same_data() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let database_url = format!(
        "sqlite://{}",
        folder.path().join("data/lms.sqlite3").display()
    );

    let first = start(&database_url);
    assert!(
        first
            .printed
            .iter()
            .any(|l| l.contains("Imported the demo account."))
    );
    assert!(
        first
            .printed("XML interface:")
            .starts_with("http://127.0.0.1:")
    );
    assert!(first.printed("Demo account:").starts_with("https://"));
    let (status, body) = send_printed_curl(&first).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?><response><group>"),
        "{body}"
    );
    assert!(first.interrupt(), "lms exits 0 after Ctrl-C");

    let second = start(&database_url);
    assert!(
        !second
            .printed
            .iter()
            .any(|l| l.contains("Imported the demo account.")),
        "the second start reuses the data: {:#?}",
        second.printed
    );
    let (status, again) = send_printed_curl(&second).await;
    assert_eq!(status, 200);
    assert_eq!(again, body, "the same group from the same data");
    assert!(second.interrupt());
}

#[test]
fn lms_up_refuses_to_start_when_its_database_file_is_gone_from_an_existing_folder() {
    let folder = tempfile::tempdir().expect("temporary folder");
    let file = folder.path().join("lms.sqlite3");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lms"))
        .args([
            "up",
            "--http-addr",
            "127.0.0.1:0",
            "--grpc-addr",
            "127.0.0.1:0",
        ])
        .args(["--database-url", &format!("sqlite://{}", file.display())])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lms starts");
    let deadline = std::time::Instant::now() + STARTUP;
    let status = loop {
        if let Some(status) = child.try_wait().expect("lms runs") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("lms up started on a new, empty database instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr is text");
    assert!(!status.success(), "lms up fails: {stderr}");
    assert!(
        stderr.contains("does not exist") && stderr.contains("--create-database"),
        "the refusal says what is missing and how to start anew: {stderr}"
    );
    assert!(!file.exists(), "no empty database was made");
}
