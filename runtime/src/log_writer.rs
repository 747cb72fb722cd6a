//! The log's writer: lines gathered in memory by the threads that log, written out in batches
//! by a thread of its own.
//!
//! A write to stderr can wait for whatever reads it (a file system committing its journal
//! held one for 75 ms), and a request that logs must not wait with it. Handing each line to
//! a writer thread through a channel kept the wait away, but cost each line an allocation,
//! and each line that found the writer asleep a wake-up of another thread: on two cores,
//! with two lines per request, that hand-over was most of what logging cost. Here a line is
//! appended to a shared buffer, and only the line that finds the buffer empty wakes the
//! writer, which then waits [`GATHER_FOR`] for more before it writes them all with one
//! call. Nothing is lost: with [`MOST_PENDING`] bytes waiting (the sink is stuck), a thread
//! that logs waits for the writer, as it would have for the sink.

use std::{
    io::{self, Write},
    sync::{Arc, Condvar, Mutex, MutexGuard},
    thread::JoinHandle,
    time::Duration,
};

use tracing_subscriber::fmt::MakeWriter;

/// How long the writer gathers lines after the first one wakes it.
const GATHER_FOR: Duration = Duration::from_millis(5);
/// Bytes waiting beyond which a thread that logs waits for the writer.
const MOST_PENDING: usize = 32 << 20;
/// How long a closing guard waits for the last lines to be written.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// Where the threads that log put their lines ([`MakeWriter`]); cheap to clone.
#[derive(Clone)]
pub(crate) struct BatchedLog {
    shared: Arc<Shared>,
}

/// Writes what is pending and stops the writer when dropped (waiting at most [`CLOSE_WAIT`]).
pub(crate) struct BatchedLogGuard {
    shared: Arc<Shared>,
    writer: Option<JoinHandle<()>>,
}

struct Shared {
    pending: Mutex<Pending>,
    /// The writer waits here for a first line (or the close).
    line_arrived: Condvar,
    /// Threads that log wait here while [`MOST_PENDING`] bytes are waiting; a closing guard
    /// waits here for the writer to finish.
    written: Condvar,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    closing: bool,
    finished: bool,
}

impl BatchedLog {
    /// A log written to `sink` by a thread named `thread_name`.
    pub(crate) fn to(
        sink: impl Write + Send + 'static,
        thread_name: &str,
    ) -> io::Result<(Self, BatchedLogGuard)> {
        let shared = Arc::new(Shared {
            pending: Mutex::default(),
            line_arrived: Condvar::new(),
            written: Condvar::new(),
        });
        let writer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(thread_name.to_owned())
                .spawn(move || shared.write_until_closed(sink))?
        };
        Ok((
            Self {
                shared: shared.clone(),
            },
            BatchedLogGuard {
                shared,
                writer: Some(writer),
            },
        ))
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn append(&self, line: &[u8]) {
        let mut pending = self.lock();
        while pending.bytes.len() >= MOST_PENDING && !pending.finished {
            pending = self
                .written
                .wait(pending)
                .unwrap_or_else(|e| e.into_inner());
        }
        if pending.finished {
            // After the close, nothing would write it: say it where the writer would have.
            drop(pending);
            let _ = io::stderr().write_all(line);
            return;
        }
        let was_empty = pending.bytes.is_empty();
        pending.bytes.extend_from_slice(line);
        drop(pending);
        if was_empty {
            self.line_arrived.notify_one();
        }
    }

    fn write_until_closed(&self, mut sink: impl Write) {
        let mut batch = Vec::new();
        loop {
            let mut pending = self.lock();
            while pending.bytes.is_empty() && !pending.closing {
                pending = self
                    .line_arrived
                    .wait(pending)
                    .unwrap_or_else(|e| e.into_inner());
            }
            let closing = pending.closing;
            if !closing {
                drop(pending);
                std::thread::sleep(GATHER_FOR);
                pending = self.lock();
            }
            std::mem::swap(&mut batch, &mut pending.bytes);
            drop(pending);
            self.written.notify_all();
            // A sink that fails loses this batch; there is nowhere else to report it.
            let _ = sink.write_all(&batch).and_then(|()| sink.flush());
            batch.clear();
            if closing && self.lock().bytes.is_empty() {
                break;
            }
        }
        self.lock().finished = true;
        self.written.notify_all();
    }
}

impl Drop for BatchedLogGuard {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.line_arrived.notify_one();
        let pending = self.shared.lock();
        let (pending, _) = self
            .shared
            .written
            .wait_timeout_while(pending, CLOSE_WAIT, |pending| !pending.finished)
            .unwrap_or_else(|e| e.into_inner());
        let finished = pending.finished;
        drop(pending);
        // A writer stuck on its sink is left behind rather than waited for.
        if let Some(writer) = self.writer.take().filter(|_| finished) {
            let _ = writer.join();
        }
    }
}

/// One event's writer: the formatter writes each line with one call.
pub(crate) struct LineWriter<'a> {
    shared: &'a Shared,
}

impl Write for LineWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.shared.append(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for BatchedLog {
    type Writer = LineWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        LineWriter {
            shared: &self.shared,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// A sink the test can read while the writer holds it.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn every_line_of_every_thread_is_written_whole_and_in_each_threads_order() {
        let sink = Sink::default();
        let (log, guard) = BatchedLog::to(sink.clone(), "test-log-writer").unwrap();
        std::thread::scope(|threads| {
            for thread in 0..4 {
                let log = &log;
                threads.spawn(move || {
                    for line in 0..2_000 {
                        log.make_writer()
                            .write_all(format!("thread {thread} line {line}\n").as_bytes())
                            .unwrap();
                    }
                });
            }
        });
        drop(guard);
        let text = sink.text();
        for thread in 0..4 {
            let lines: Vec<usize> = text
                .lines()
                .filter_map(|line| line.strip_prefix(&format!("thread {thread} line ")))
                .map(|n| n.parse().expect("a whole line"))
                .collect();
            assert_eq!(lines, (0..2_000).collect::<Vec<_>>(), "thread {thread}");
        }
        assert_eq!(text.lines().count(), 8_000);
    }

    #[test]
    fn a_lone_line_is_written_soon_without_a_close() {
        let sink = Sink::default();
        let (log, _guard) = BatchedLog::to(sink.clone(), "test-log-writer").unwrap();
        log.make_writer().write_all(b"alone\n").unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while sink.text() != "alone\n" {
            assert!(Instant::now() < deadline, "the line was never written");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// A sink that never returns does not hold the process at its end.
    #[test]
    fn closing_does_not_wait_for_a_stuck_sink() {
        struct Stuck(std::sync::mpsc::Receiver<()>);
        impl Write for Stuck {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                let _ = self.0.recv();
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let (_release, stuck) = std::sync::mpsc::channel();
        let (log, guard) = BatchedLog::to(Stuck(stuck), "test-log-writer").unwrap();
        log.make_writer().write_all(b"never written\n").unwrap();
        let closing = Instant::now();
        drop(guard);
        assert!(closing.elapsed() < CLOSE_WAIT + Duration::from_secs(2));
    }
}
