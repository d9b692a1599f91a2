//! Cooperative cancellation of a run (Ctrl-C in the CLI, a deadline or a UI
//! button in a library user's program). Cancelling stops new work, drops the
//! steps still running, and ends the run as `interrupted` with everything that
//! already finished kept in the report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    notify: Notify,
    children: std::sync::Mutex<Vec<CancelToken>>,
}

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
        let children = std::mem::take(&mut *self.inner.children.lock().unwrap());
        children.iter().for_each(CancelToken::cancel);
    }

    /// A token cancelled with this one, that can also be cancelled on its own
    /// (the agent stops a run through one when its ledger cannot be written).
    pub fn child(&self) -> CancelToken {
        let child = CancelToken::new();
        self.inner.children.lock().unwrap().push(child.clone());
        if self.is_cancelled() {
            child.cancel();
        }
        child
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves once [`CancelToken::cancel`] has been called.
    pub async fn cancelled(&self) {
        let notified = self.inner.notify.notified();
        tokio::pin!(notified);
        // Register before checking the flag, so a cancel in between is not missed.
        notified.as_mut().enable();
        if self.is_cancelled() {
            return;
        }
        notified.await;
    }

    /// Run `fut` unless cancelled first; `None` means cancelled.
    pub async fn guard<T>(&self, fut: impl std::future::Future<Output = T>) -> Option<T> {
        tokio::select! {
            biased;
            _ = self.cancelled() => None,
            v = fut => Some(v),
        }
    }
}
