//! What the shared DAG loop does differently when its run is on a durable
//! engine ([`crate::engine`]): a pass is the engine's to run, and a read of
//! the world whose answer decides what comes next is kept by the engine, so
//! a replay of the run decides the same.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::engine::{Pass, RunEngine};
use crate::result::StepStatus;
use crate::run::Run;
use crate::schedule::{DagOutcome, Dispatch};

/// Hand the pass over the plan in force to `engine` and record its results
/// in the run's ledger as they come back (the steps ran elsewhere, with no
/// ledger of their own). If the engine fails, the run stops as if cancelled.
pub(super) async fn pass(run: &Run, engine: &Arc<dyn RunEngine>, dispatch: &Dispatch) -> DagOutcome {
    let pass = Pass {
        plan: run.plan().clone(),
        version: run.version,
        done: run.done.clone(),
        parallelism: dispatch.parallelism,
        max_steps: dispatch.max_steps,
    };
    let outcome = match engine.run_pass(pass).await {
        Ok(outcome) => outcome,
        Err(e) => {
            tracing::warn!(error = %e, "the engine could not run the pass; the run stops");
            run.ctx.control.stop.cancel();
            let interrupted = run
                .plan()
                .steps
                .iter()
                .filter(|s| !run.done.contains_key(&s.id))
                .map(|s| s.id.clone())
                .collect();
            return DagOutcome {
                interrupted,
                ..DagOutcome::default()
            };
        }
    };
    // The workers' model calls count toward the run's usage and budget.
    run.ctx.calls.meter.merge(&outcome.usage);
    let ledger = &run.ctx.recording.ledger;
    for result in outcome.results.iter().filter(|r| r.status != StepStatus::Pending) {
        ledger.step_finished(ledger.next_step_seq(), run.version, result).await;
    }
    outcome
}

/// `read`'s value, kept by the run's engine if it is on one: the first time
/// it is the value read; on a replay, the value kept then.
pub(crate) async fn kept(run: &Run, name: &str, read: Value) -> Value {
    let Some(engine) = &run.ctx.setting.engine else {
        return read;
    };
    let work: BoxFuture<'static, Value> = Box::pin(async move { read });
    match engine.journaled(name, work).await {
        Ok(value) => value,
        Err(e) => {
            // Nothing is kept: the run stops rather than decide on a read a
            // replay might not see.
            tracing::warn!(error = %e, "the engine could not keep a read; the run stops");
            run.ctx.control.stop.cancel();
            Value::Null
        }
    }
}
