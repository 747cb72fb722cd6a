//! Runs argon2id off the async runtime, a bounded number at a time.
//!
//! A verification waits for a slot at most `queue_timeout`, then the request is shed
//! (UNAVAILABLE, HTTP 503): a flood of wrong passwords can fill the slots, but cannot
//! grow an unbounded queue, and the CPU it burns is capped by the slot count, which
//! leaves room for requests served from the verified-credentials cache.
//!
//! Verifications no request waits for (a busy login's renewal before its cache entry
//! expires) run apart, one at a time, on a thread of the lowest scheduling priority
//! ([`Verifier::verify_in_background`]).

use std::{
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU64, Ordering},
        mpsc,
    },
    time::Duration,
};

use tokio::{
    sync::{OwnedSemaphorePermit, Semaphore},
    time::Instant,
};

use super::password::PasswordHasher;
use crate::error::{ServiceError, ServiceResult};

#[derive(Clone)]
pub struct Verifier {
    hasher: PasswordHasher,
    slots: Arc<Semaphore>,
    max_concurrent: usize,
    queue_timeout: Duration,
    /// Verifications run so far (not hashes): tests and benchmarks read it to tell a
    /// cached answer from a verified one.
    verifications: Arc<AtomicU64>,
    /// The background verifications' queue, its thread started on first use; `None` when
    /// no thread could be started.
    background: Arc<OnceLock<Option<mpsc::SyncSender<Job>>>>,
}

type Job = Box<dyn FnOnce() + Send>;

/// Background verifications waiting at most: beyond, one is refused (as shed).
const BACKGROUND_QUEUE: usize = 16;

impl Verifier {
    pub fn new(hasher: PasswordHasher, max_concurrent: usize, queue_timeout: Duration) -> Self {
        let max_concurrent = max_concurrent.max(1);
        Self {
            hasher,
            slots: Arc::new(Semaphore::new(max_concurrent)),
            max_concurrent,
            queue_timeout,
            verifications: Arc::default(),
            background: Arc::default(),
        }
    }

    pub fn hasher(&self) -> &PasswordHasher {
        &self.hasher
    }

    /// How long a verification may wait for a slot.
    pub fn queue_timeout(&self) -> Duration {
        self.queue_timeout
    }

    /// Whether `password` matches the PHC string `phc`.
    pub async fn verify(&self, password: &str, phc: &str) -> ServiceResult<bool> {
        self.verify_until(password, phc, Instant::now() + self.queue_timeout)
            .await
    }

    /// As [`Verifier::verify`], shed unless a slot is free by `deadline`.
    pub async fn verify_until(
        &self,
        password: &str,
        phc: &str,
        deadline: Instant,
    ) -> ServiceResult<bool> {
        let (password, phc) = (password.to_owned(), phc.to_owned());
        let hasher = self.hasher.clone();
        let verifications = self.verifications.clone();
        self.run(deadline, move || {
            verifications.fetch_add(1, Ordering::Relaxed);
            hasher.verify(&password, &phc)
        })
        .await
    }

    /// As [`Verifier::verify`], for a verification no request waits for: one at a time, on
    /// a thread of its own at the lowest scheduling priority (`SCHED_IDLE` on Linux), and
    /// outside the slots.
    ///
    /// A verification is tens of milliseconds of one core. At normal priority it shares the
    /// cores with the requests, and on two cores a request now and then waited a whole
    /// scheduler slice behind it. At idle priority it runs on time no request wants; kept
    /// out of the slots, it never holds one a login waits for while a busy machine starves
    /// it. The queue is bounded: beyond [`BACKGROUND_QUEUE`] waiting, one is refused as
    /// `Overloaded`.
    pub async fn verify_in_background(&self, password: &str, phc: &str) -> ServiceResult<bool> {
        let Some(jobs) = self.background.get_or_init(start_background_thread) else {
            return self.verify(password, phc).await;
        };
        let (password, phc) = (password.to_owned(), phc.to_owned());
        let (hasher, verifications) = (self.hasher.clone(), self.verifications.clone());
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            verifications.fetch_add(1, Ordering::Relaxed);
            crate::metrics::verifications_running(1.0);
            let _ = answer.send(hasher.verify(&password, &phc));
            crate::metrics::verifications_running(-1.0);
        });
        jobs.try_send(job).map_err(|_| ServiceError::Overloaded)?;
        answered.await.map_err(|_| {
            ServiceError::Unexpected(anyhow::anyhow!("the background verification was lost"))
        })
    }

    /// Password verifications run so far.
    pub fn verifications(&self) -> u64 {
        self.verifications.load(Ordering::Relaxed)
    }

    /// Takes every slot until the returned permit is dropped, as a flood would: for tests
    /// of load shedding, and of requests that must be served without a verification.
    pub async fn occupy_all_slots(&self) -> OwnedSemaphorePermit {
        self.slots
            .clone()
            .acquire_many_owned(self.max_concurrent as u32)
            .await
            .unwrap_or_else(|_| unreachable!("the semaphore is never closed"))
    }

    /// A new hash of `password` at the current policy.
    pub async fn hash(&self, password: &str) -> ServiceResult<String> {
        let password = password.to_owned();
        let hasher = self.hasher.clone();
        self.run(Instant::now() + self.queue_timeout, move || {
            hasher.hash(&password)
        })
        .await?
        .map_err(|e| ServiceError::Unexpected(e.into()))
    }

    async fn run<T: Send + 'static>(
        &self,
        deadline: Instant,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> ServiceResult<T> {
        let queued = Instant::now();
        crate::metrics::verifications_waiting(1.0);
        let permit = tokio::time::timeout_at(deadline, self.slots.clone().acquire_owned()).await;
        crate::metrics::verifications_waiting(-1.0);
        crate::metrics::verification_waited(queued.elapsed());
        let permit = permit
            .map_err(|_| ServiceError::Overloaded)?
            .map_err(|_| ServiceError::Overloaded)?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            crate::metrics::verifications_running(1.0);
            let done = work();
            crate::metrics::verifications_running(-1.0);
            done
        })
        .await
        .map_err(|e| ServiceError::Unexpected(anyhow::anyhow!("password task failed: {e}")))
    }
}

/// The thread of [`Verifier::verify_in_background`]; it ends when its queue's last sender
/// (the last clone of its verifier) is dropped.
fn start_background_thread() -> Option<mpsc::SyncSender<Job>> {
    let (jobs, queue) = mpsc::sync_channel::<Job>(BACKGROUND_QUEUE);
    let started = std::thread::Builder::new()
        .name("lms-verify-idle".to_owned())
        .spawn(move || {
            lowest_priority();
            for job in queue {
                job();
            }
        });
    match started {
        Ok(_) => Some(jobs),
        Err(error) => {
            tracing::warn!(%error, "no thread for background verifications: they run in the slots");
            None
        }
    }
}

/// The calling thread's scheduling at the lowest: `SCHED_IDLE` on Linux, the lowest
/// priority elsewhere. Only ever lowered, which needs no privilege.
fn lowest_priority() {
    use thread_priority::{ThreadPriority, set_current_thread_priority};
    #[cfg(target_os = "linux")]
    let lowered = {
        use thread_priority::{
            NormalThreadSchedulePolicy, ThreadSchedulePolicy, set_thread_priority_and_policy,
            thread_native_id,
        };
        set_thread_priority_and_policy(
            thread_native_id(),
            ThreadPriority::Min,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
        )
        .or_else(|_| set_current_thread_priority(ThreadPriority::Min))
    };
    #[cfg(not(target_os = "linux"))]
    let lowered = set_current_thread_priority(ThreadPriority::Min);
    if let Err(error) = lowered {
        tracing::info!(?error, "background verifications run at normal priority");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;
    use crate::auth::password::PasswordPolicy;

    fn verifier(slots: usize, queue_timeout: Duration) -> Verifier {
        let cheap = PasswordPolicy {
            memory_kib: 64,
            iterations: 1,
            parallelism: 1,
        };
        Verifier::new(PasswordHasher::new(cheap).unwrap(), slots, queue_timeout)
    }

    /// On a single-threaded runtime, other tasks keep running while a verification is
    /// busy: the work happens on a blocking thread, never on the runtime's own.
    #[tokio::test(flavor = "current_thread")]
    async fn work_runs_off_the_async_runtime() {
        let verifier = verifier(1, Duration::from_secs(5));
        let (release, blocked) = mpsc::channel::<()>();
        let (started_tx, started) = tokio::sync::oneshot::channel();
        let busy = {
            let verifier = verifier.clone();
            tokio::spawn(async move {
                verifier
                    .run(Instant::now() + Duration::from_secs(5), move || {
                        let _ = started_tx.send(());
                        blocked.recv().ok() // holds its thread until released
                    })
                    .await
            })
        };
        started.await.unwrap();
        // The runtime's only thread is free: this task runs to completion meanwhile.
        let other = tokio::spawn(async { 40 + 2 }).await.unwrap();
        assert_eq!(other, 42);
        release.send(()).unwrap();
        assert_eq!(busy.await.unwrap().unwrap(), Some(()));
    }

    #[tokio::test]
    async fn a_verification_that_waits_too_long_for_a_slot_is_shed() {
        let verifier = verifier(2, Duration::from_millis(20));
        let phc = verifier.hash("pw").await.unwrap();
        let held = verifier.occupy_all_slots().await;
        assert!(matches!(
            verifier.verify("pw", &phc).await,
            Err(ServiceError::Overloaded)
        ));
        assert_eq!(
            verifier.verifications(),
            0,
            "a shed attempt verified nothing"
        );
        drop(held);
        assert!(verifier.verify("pw", &phc).await.unwrap());
        assert!(!verifier.verify("wrong", &phc).await.unwrap());
        assert_eq!(verifier.verifications(), 2);
    }

    #[tokio::test]
    async fn no_more_verifications_run_at_once_than_there_are_slots() {
        let verifier = verifier(2, Duration::from_secs(10));
        let running = Arc::new(AtomicU64::new(0));
        let most = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (verifier, running, most) = (verifier.clone(), running.clone(), most.clone());
                tokio::spawn(async move {
                    verifier
                        .run(Instant::now() + Duration::from_secs(10), move || {
                            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(5));
                            running.fetch_sub(1, Ordering::SeqCst);
                        })
                        .await
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    /// A renewal needs no slot, even when logins hold them all, and runs on the idle thread.
    #[tokio::test]
    async fn background_verifications_run_outside_the_slots_at_idle_priority() {
        let verifier = verifier(1, Duration::from_millis(20));
        let phc = verifier.hash("pw").await.unwrap();
        let held = verifier.occupy_all_slots().await;
        assert!(verifier.verify_in_background("pw", &phc).await.unwrap());
        assert!(!verifier.verify_in_background("wrong", &phc).await.unwrap());
        assert_eq!(verifier.verifications(), 2);
        drop(held);

        #[cfg(target_os = "linux")]
        {
            let mut idle_threads = 0;
            for task in std::fs::read_dir("/proc/self/task").unwrap() {
                let task = task.unwrap().path();
                let name = std::fs::read_to_string(task.join("comm")).unwrap_or_default();
                if name.trim() != "lms-verify-idle" {
                    continue;
                }
                let sched = std::fs::read_to_string(task.join("sched")).unwrap_or_default();
                let policy = sched
                    .lines()
                    .find(|line| line.starts_with("policy"))
                    .and_then(|line| line.split(':').nth(1))
                    .map(str::trim);
                // SCHED_IDLE is policy 5.
                assert_eq!(policy, Some("5"), "{sched}");
                idle_threads += 1;
            }
            assert!(idle_threads >= 1, "the background thread runs");
        }
    }
}
