//! The agent's side of the ledger: writes a run's record through a
//! [`RunStore`] (or nowhere, when none is configured) and stops the run at the
//! first write that fails, so that nothing runs that the ledger does not hold.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::cancel::CancelToken;
use crate::llm::{ChatRequest, ChatResponse, LlmError};
use crate::report::{Clarification, PlanVersion};
use crate::result::{now_ms, StepResult};
use crate::store::{ModelExchange, RunEnd, RunHeader, RunStore, StepStart, StoreError};

pub(crate) struct Ledger {
    store: Option<Arc<dyn RunStore>>,
    run_id: String,
    next_step: AtomicU64,
    next_exchange: AtomicU64,
    failure: Mutex<Option<StoreError>>,
    /// Cancelled at the first failed write.
    stop: CancelToken,
}

impl Ledger {
    /// `steps` and `exchanges`: how many the ledger already holds for this run (on resume).
    pub fn new(
        store: Option<Arc<dyn RunStore>>,
        run_id: &str,
        stop: CancelToken,
        steps: u64,
        exchanges: u64,
    ) -> Ledger {
        Ledger {
            store,
            run_id: run_id.to_string(),
            next_step: AtomicU64::new(steps + 1),
            next_exchange: AtomicU64::new(exchanges + 1),
            failure: Mutex::new(None),
            stop,
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.store.is_some()
    }

    /// The store behind it, for what a run keeps beyond its own record (plan templates).
    pub fn store(&self) -> Option<&Arc<dyn RunStore>> {
        self.store.as_ref()
    }

    /// The first write that failed, if any.
    pub fn failure(&self) -> Option<StoreError> {
        self.failure.lock().unwrap().clone()
    }

    /// Run one write; on failure remember it and stop the run. `false` when the
    /// write failed or an earlier one did (later writes are skipped then).
    async fn write<'a, F, Fut>(&'a self, f: F) -> bool
    where
        F: FnOnce(&'a dyn RunStore, &'a str) -> Fut,
        Fut: std::future::Future<Output = Result<(), StoreError>> + 'a,
    {
        let Some(store) = &self.store else { return true };
        if self.failure.lock().unwrap().is_some() {
            return false;
        }
        match f(store.as_ref(), &self.run_id).await {
            Ok(()) => true,
            Err(e) => {
                tracing::error!("ledger write failed: {e}");
                self.failure.lock().unwrap().get_or_insert(e);
                self.stop.cancel();
                false
            }
        }
    }

    pub async fn create(&self, header: &RunHeader) -> bool {
        self.write(|s, _| s.create_run(header)).await
    }

    pub async fn reopen(&self) -> bool {
        self.write(|s, id| s.reopen_run(id)).await
    }

    /// The run waits for nothing now (a pass that pauses again records what
    /// it waits for), so no report shows a stale `waiting`.
    pub async fn clear_waiting(&self) -> bool {
        self.write(|s, id| s.set_waiting(id, None)).await
    }

    pub async fn plan(&self, version: &PlanVersion, replans: u32) -> bool {
        self.write(|s, id| s.add_plan(id, version, replans)).await
    }

    pub async fn waiting(&self, waiting: &crate::store::Waiting) -> bool {
        self.write(|s, id| s.set_waiting(id, Some(waiting))).await
    }

    pub async fn decision(&self, decision: &crate::store::Decision) -> bool {
        self.write(|s, id| async move { s.add_decision(id, decision).await.map(|_| ()) })
            .await
    }

    pub async fn approved(&self, version: u32) -> bool {
        self.write(|s, id| s.approve_plan(id, version)).await
    }

    pub async fn clarifications(&self, clarifications: &[Clarification]) -> bool {
        self.write(|s, id| s.set_clarifications(id, clarifications)).await
    }

    /// A number for a new step execution.
    pub fn next_step_seq(&self) -> u64 {
        self.next_step.fetch_add(1, Ordering::SeqCst)
    }

    pub async fn step_started(&self, start: &StepStart) -> bool {
        self.write(|s, id| s.step_started(id, start)).await
    }

    pub async fn step_finished(&self, seq: u64, plan_version: u32, result: &StepResult) -> bool {
        self.write(|s, id| s.step_finished(id, seq, plan_version, result)).await
    }

    pub async fn exchange(
        &self,
        request: &ChatRequest,
        outcome: &Result<ChatResponse, LlmError>,
        cost: Option<f64>,
        latency_ms: u64,
    ) -> bool {
        if self.store.is_none() {
            return true;
        }
        let (response, error, usage) = match outcome {
            Ok(r) => (serde_json::to_value(r).ok(), None, r.usage),
            Err(e) => (None, Some(e.to_string()), Default::default()),
        };
        let exchange = ModelExchange {
            seq: self.next_exchange.fetch_add(1, Ordering::SeqCst),
            role: request.role,
            step_id: request.step_id.clone(),
            model: request.model.clone(),
            request: serde_json::to_value(request).unwrap_or(Value::Null),
            response,
            error,
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            cost,
            latency_ms,
            at: now_ms(),
        };
        self.write(|s, id| s.record_exchange(id, &exchange)).await
    }

    /// Record the end of the run. Tried even after an earlier failure: the
    /// problem may have passed, and the status is worth having.
    pub async fn finish(&self, end: &RunEnd) -> Result<(), StoreError> {
        match &self.store {
            Some(store) => store.finish_run(&self.run_id, end).await,
            None => Ok(()),
        }
    }
}

/// What the ledger's failure means for the user.
pub(crate) fn failure_message(e: &StoreError, run_id: &str) -> String {
    format!(
        "the run ledger could not be written: {e}. The run stopped so that nothing runs unrecorded; everything recorded before is intact. Fix the problem, then `planexec resume {run_id}`"
    )
}
