//! The one tokio runtime of the process, and how a Python call waits for it:
//! with the GIL released (Python threads, and Python tools, run meanwhile),
//! looking at Python's signals every tenth of a second so Ctrl-C cancels the
//! run cleanly instead of being lost until it ends.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use planexec::CancelToken;
use pyo3::prelude::*;
use tokio::runtime::Runtime;

/// The runtime every run of this process shares (made on first use).
pub fn runtime() -> PyResult<&'static Runtime> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    let made = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("planexec")
            .build()
            .map_err(|e| format!("planexec cannot start its async runtime: {e}"))
    });
    made.as_ref()
        .map_err(|e| PyErr::new::<pyo3::exceptions::PyRuntimeError, _>(e.clone()))
}

/// Run `work` on the runtime and wait for it. On Ctrl-C (or any pending
/// signal whose handler raises), `cancel` is cancelled, the work is waited
/// for (so a cancelled run still records how it ended; a second Ctrl-C stops
/// the waiting), and the exception is raised. Without a token the work is
/// dropped at once.
pub fn wait<F>(py: Python<'_>, cancel: Option<CancelToken>, work: F) -> PyResult<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let runtime = runtime()?;
    let mut handle = runtime.spawn(work);
    loop {
        let finished = py
            .detach(|| runtime.block_on(async { tokio::time::timeout(Duration::from_millis(100), &mut handle).await }));
        if let Ok(joined) = finished {
            return joined.map_err(|e| PyErr::new::<pyo3::exceptions::PyRuntimeError, _>(e.to_string()));
        }
        if let Err(interrupt) = py.check_signals() {
            if let Some(token) = &cancel {
                token.cancel();
                settle(py, runtime, &mut handle);
            }
            handle.abort();
            return Err(interrupt);
        }
    }
}

/// Let cancelled work end (and record how it ended), unless a second Ctrl-C
/// says not to wait: then it is dropped.
fn settle<T: Send + 'static>(py: Python<'_>, runtime: &Runtime, handle: &mut tokio::task::JoinHandle<T>) {
    loop {
        let finished = py.detach(|| {
            runtime.block_on(async { tokio::time::timeout(Duration::from_millis(100), &mut *handle).await })
        });
        if finished.is_ok() || py.check_signals().is_err() {
            return;
        }
    }
}
