//! The threads that call into Python. Each attaches to the interpreter once
//! and keeps its thread state for its life (detached while it waits for
//! work), so a call costs a channel hop and taking the GIL, not a Python
//! thread state made and freed per call as attaching a fresh thread would.
//!
//! Every job is sent with a thread reserved for it: an idle one, or a new one
//! when none is idle. So a Python function that blocks for long (a tool
//! waiting on I/O, an approval callback waiting for a person) never holds up
//! another call, and parallel steps run in parallel.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;

type Job = Box<dyn FnOnce(Python<'_>) + Send>;

struct Threads {
    jobs: Mutex<Sender<Job>>,
    queue: Arc<Mutex<Receiver<Job>>>,
    /// Threads waiting for work and not yet reserved for a job.
    idle: Arc<AtomicUsize>,
}

fn threads() -> &'static Threads {
    static THREADS: OnceLock<Threads> = OnceLock::new();
    THREADS.get_or_init(|| {
        let (jobs, queue) = channel();
        Threads {
            jobs: Mutex::new(jobs),
            queue: Arc::new(Mutex::new(queue)),
            idle: Arc::new(AtomicUsize::new(0)),
        }
    })
}

/// Run `work` with the GIL on a Python thread and wait for its value (an
/// error if no thread could be started).
pub async fn call<T: Send + 'static>(work: impl FnOnce(Python<'_>) -> T + Send + 'static) -> Result<T, Unstarted> {
    send(work).await.map_err(|_| Unstarted)
}

/// No thread could be started to call Python.
#[derive(Debug)]
pub struct Unstarted;

impl std::fmt::Display for Unstarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("planexec could not start a thread to call Python")
    }
}

/// Run `work` on a Python thread and do not wait for it (a clean-up that
/// cannot wait: a drop).
pub fn spawn(work: impl FnOnce(Python<'_>) + Send + 'static) {
    drop(send(work));
}

fn send<T: Send + 'static>(work: impl FnOnce(Python<'_>) -> T + Send + 'static) -> tokio::sync::oneshot::Receiver<T> {
    let (done, answer) = tokio::sync::oneshot::channel();
    let threads = threads();
    let reserved = threads
        .idle
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
        .is_ok();
    if !reserved && !threads.start() {
        return answer; // `done` dropped: the caller sees the call fail
    }
    let job: Job = Box::new(move |py| {
        let _ = done.send(work(py));
    });
    if let Ok(jobs) = threads.jobs.lock() {
        let _ = jobs.send(job);
    }
    answer
}

impl Threads {
    /// Start a thread, reserved for the job about to be sent.
    fn start(&self) -> bool {
        let queue = self.queue.clone();
        let idle = self.idle.clone();
        std::thread::Builder::new()
            .name("planexec-python".to_string())
            .spawn(move || {
                Python::attach(|py| {
                    let mut reserved = true;
                    loop {
                        if !reserved {
                            idle.fetch_add(1, Ordering::AcqRel);
                        }
                        reserved = false;
                        let job = py.detach(|| next_job(&queue));
                        match job {
                            Ok(job) => job(py),
                            Err(()) => break,
                        }
                    }
                })
            })
            .is_ok()
    }
}

/// The next job, waiting for it.
///
/// Spinning a little before sleeping halves the cost of a bare call here
/// (about 40 µs instead of 85 on 2 cores) but makes each step of a run
/// dearer (the spinning thread takes the core the executor needs), and in a
/// run a Python step already costs what a built-in's does; so it waits.
fn next_job(queue: &Mutex<Receiver<Job>>) -> Result<Job, ()> {
    queue.lock().map_err(|_| ())?.recv().map_err(|_| ())
}
