//! The background threads that analyse documents.
//!
//! Analyses run here rather than in tokio's blocking pool for two reasons
//! measured with `hpf-bench load` (bench/RESULTS.md): the threads run at a
//! lower scheduling priority, so that under a stream of edits the requests a
//! person waits for (hover, inlay hints, handled on the protocol thread) get
//! the CPU first; and there are only as many of them as cores, so allocator
//! arenas (one per allocating thread) stay few and memory does not creep up
//! as the blocking pool spawns and retires threads.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

/// Nice value of the analysis threads where `SCHED_IDLE` is refused.
const ANALYSIS_NICENESS: i32 = 19;

pub(crate) struct Workers {
    jobs: Sender<Job>,
}

/// The job panicked; the worker thread survives it.
#[derive(Debug)]
pub(crate) struct Panicked;

/// The process-wide analysis pool, started on first use.
pub(crate) fn analysis_pool() -> &'static Workers {
    static POOL: OnceLock<Workers> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |it| it.get());
        Workers::start(threads)
    })
}

impl Workers {
    fn start(threads: usize) -> Workers {
        let (sender, receiver) = channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        for index in 0..threads {
            let receiver = receiver.clone();
            let spawned =
                std::thread::Builder::new().name(format!("hpf-analysis-{index}")).spawn(move || work(&receiver));
            if let Err(error) = spawned {
                tracing::error!("cannot start analysis thread {index}: {error}");
            }
        }
        Workers { jobs: sender }
    }

    /// Runs `job` on a worker and waits (asynchronously) for its result.
    pub(crate) async fn run<T: Send + 'static>(&self, job: impl FnOnce() -> T + Send + 'static) -> Result<T, Panicked> {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        self.spawn(move || {
            let _ = sender.send(catch_unwind(AssertUnwindSafe(job)));
        });
        match receiver.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) | Err(_) => Err(Panicked),
        }
    }

    /// Runs `job` on a worker without waiting for it (freeing a large analysis).
    pub(crate) fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        let job: Job = Box::new(move || {
            // A panic is reported by the hook and by `run`'s caller; the thread lives on.
            let _ = catch_unwind(AssertUnwindSafe(job));
        });
        if self.jobs.send(job).is_err() {
            tracing::error!("no analysis thread is running");
        }
    }
}

fn work(jobs: &Mutex<Receiver<Job>>) {
    lower_priority();
    loop {
        let job = match jobs.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

/// Lowers the calling thread's priority to `SCHED_IDLE`: any other thread
/// that wakes up (the protocol thread with a hover, the client) takes the
/// CPU from it at once. A nice value alone (10, then 19) left a request that
/// arrived while an analysis ran waiting up to a scheduler tick (4 ms at
/// 250 Hz) at p95. On a machine whose every core is busy with other work the
/// analyses still progress, slowly. On Linux both calls apply to the calling
/// thread only, which is what is wanted here.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: sched_setscheduler reads `param`, which outlives the call.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } == 0 {
            return;
        }
        tracing::debug!("cannot make the analysis threads SCHED_IDLE: {}", std::io::Error::last_os_error());
        // SAFETY: setpriority only reads its integer arguments.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, ANALYSIS_NICENESS) } != 0 {
            tracing::debug!("cannot lower the analysis threads' priority: {}", std::io::Error::last_os_error());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_job_is_an_error_and_the_pool_keeps_working() {
        let pool = Workers::start(1);
        assert!(pool.run(|| -> u32 { panic!("analysis bug") }).await.is_err());
        assert_eq!(pool.run(|| 6 * 7).await.unwrap(), 42);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn workers_run_at_idle_priority() {
        // SAFETY: sched_getscheduler only reads its integer argument.
        let policy = analysis_pool().run(|| unsafe { libc::sched_getscheduler(0) }).await.unwrap();
        assert_eq!(policy, libc::SCHED_IDLE, "analysis threads run with scheduling policy {policy}");
    }
}
