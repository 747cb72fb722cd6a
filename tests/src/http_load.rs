//! A minimal HTTP/1.1 keep-alive load generator for the benchmarks: one request at a time per
//! connection, answers framed by `Content-Length`, every answer required to be 200.
//!
//! - [`closed_loop`]: connections sending requests one after another, for throughput.
//! - [`open_loop`]: requests due at a constant rate, each measured from when it was due, so
//!   queueing is not hidden.
//! - [`one_connection`]: one connection, every latency kept, stalls printed with their time.
//! - [`Latencies`]: the sorted latencies of a run and their quantiles.
//!
//! Kept small on purpose: it runs on the same machine as the service it measures, and
//! whatever it costs is taken from the service.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpStream,
    runtime::Runtime,
};

/// What counts as a stall.
pub const STALL: Duration = Duration::from_millis(10);

/// The request bytes of an authenticated `GET path`, keep-alive.
pub fn get_request(path: &str, account_url: &str, email: &str, password: &str) -> Arc<[u8]> {
    format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Auth-Account-Url: {account_url}\r\n\
         X-Auth-Email: {email}\r\nX-Auth-Password: {password}\r\n\r\n"
    )
    .into_bytes()
    .into()
}

pub struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
    /// When its last answer arrived: a connection idle for long may have been closed by the
    /// gateway (its header-read timeout) and is not reused.
    pub last_used: Instant,
}

/// How long an idle connection is reused, well inside the gateway's header-read timeout.
pub const REUSE_IDLE_FOR: Duration = Duration::from_secs(2);

impl Connection {
    pub async fn open(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buffer: Vec::with_capacity(16 * 1024),
            last_used: Instant::now(),
        })
    }

    /// Sends `request` and reads the whole answer; its status.
    pub async fn exchange(&mut self, request: &[u8]) -> std::io::Result<u16> {
        self.stream.write_all(request).await?;
        self.buffer.clear();
        loop {
            let mut chunk = [0u8; 16 * 1024];
            let n = self.stream.read(&mut chunk).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buffer.extend_from_slice(&chunk[..n]);
            if let Some(status) = complete_response(&self.buffer)? {
                self.last_used = Instant::now();
                return Ok(status);
            }
        }
    }
}

/// The status of `bytes` when they hold one whole response (Content-Length framed).
fn complete_response(bytes: &[u8]) -> std::io::Result<Option<u16>> {
    let Some(head_end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = std::str::from_utf8(&bytes[..head_end]).map_err(std::io::Error::other)?;
    let status = head
        .get(9..12)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| std::io::Error::other("no status line"))?;
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .ok_or_else(|| std::io::Error::other("no content-length"))?;
    Ok((bytes.len() >= head_end + 4 + length).then_some(status))
}

/// Closed loop: `connections` connections each sending requests one after another; the
/// requests answered.
pub async fn closed_loop(
    addr: SocketAddr,
    request: Arc<[u8]>,
    connections: usize,
    seconds: f64,
) -> u64 {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = (0..connections)
        .map(|_| {
            let request = request.clone();
            tokio::spawn(async move {
                let mut connection = Connection::open(addr).await.expect("connect");
                let mut ok = 0;
                while Instant::now() < deadline {
                    let status = connection.exchange(&request).await.expect("exchange");
                    assert_eq!(status, 200, "the benchmarked request must succeed");
                    ok += 1;
                }
                ok
            })
        })
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.expect("load task");
    }
    total
}

/// Latencies, sorted.
pub struct Latencies(Vec<Duration>);

impl Latencies {
    pub fn new(mut all: Vec<Duration>) -> Self {
        all.sort_unstable();
        Self(all)
    }

    /// The latencies, sorted.
    pub fn into_inner(self) -> Vec<Duration> {
        self.0
    }

    pub fn quantile(&self, q: f64) -> Duration {
        let index = ((self.0.len() as f64 * q).ceil() as usize).clamp(1, self.0.len()) - 1;
        self.0[index]
    }

    pub fn over(&self, bound: Duration) -> usize {
        self.0.iter().filter(|&&l| l > bound).count()
    }

    pub fn describe(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        format!(
            "{} | {:.3} | {:.3} | {:.3} | {:.3} | {}",
            self.0.len(),
            ms(self.quantile(0.5)),
            ms(self.quantile(0.99)),
            ms(self.quantile(0.999)),
            ms(*self.0.last().unwrap_or(&Duration::ZERO)),
            self.over(STALL),
        )
    }
}

/// Open loop: request `n` is due at `start + n / rate`; each is sent on an idle connection
/// (a new one when none is idle) and measured from when it was due. The schedule is kept by
/// this thread with the system's sleep, finer than the runtime's millisecond timer, so the
/// generator's own lateness is not counted as the service's.
pub fn open_loop(
    load: &Runtime,
    addr: SocketAddr,
    request: Arc<[u8]>,
    rate: u64,
    seconds: f64,
) -> Latencies {
    let idle: Arc<Mutex<Vec<Connection>>> = Arc::default();
    let latencies: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let period = Duration::from_secs_f64(1.0 / rate as f64);
    let total = (seconds * rate as f64) as u32;
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(total as usize);
    for n in 0..total {
        let due = start + period * n;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let (idle, latencies, request) = (idle.clone(), latencies.clone(), request.clone());
        tasks.push(load.spawn(async move {
            let taken = idle
                .lock()
                .expect("idle connections")
                .pop()
                .filter(|c| c.last_used.elapsed() < REUSE_IDLE_FOR);
            let mut connection = match taken {
                Some(connection) => connection,
                None => Connection::open(addr).await.expect("connect"),
            };
            let status = connection.exchange(&request).await.expect("exchange");
            let latency = due.elapsed();
            assert_eq!(status, 200);
            if latency > STALL {
                let at = due.duration_since(start).as_secs_f64();
                println!("stall: {latency:.1?}, due {at:.3} s into the run");
            }
            latencies.lock().expect("latencies").push(latency);
            idle.lock().expect("idle connections").push(connection);
        }));
    }
    load.block_on(async {
        for task in tasks {
            task.await.expect("request task");
        }
    });
    let all = std::mem::take(&mut *latencies.lock().expect("latencies"));
    Latencies::new(all)
}

/// One connection, one request after another, every latency kept; each stall printed with
/// its time when the run is `named` (not during a warm-up).
pub async fn one_connection(
    addr: SocketAddr,
    request: Arc<[u8]>,
    seconds: f64,
    named: Option<&str>,
) -> Latencies {
    let mut connection = Connection::open(addr).await.expect("connect");
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let mut all = Vec::new();
    while Instant::now() < deadline {
        let sent = Instant::now();
        assert_eq!(connection.exchange(&request).await.expect("exchange"), 200);
        let latency = sent.elapsed();
        if let Some(name) = named.filter(|_| latency > STALL) {
            let at = sent.duration_since(start).as_secs_f64();
            println!("stall: {latency:.1?}, sent {at:.3} s into the run of {name}");
        }
        all.push(latency);
    }
    Latencies::new(all)
}
