//! The engine a run executes on: the port a durable engine (planexec-restate)
//! stands behind. With no engine (the default) a run lives in its process:
//! its steps run here and the ledger is its memory.
//!
//! A run on an engine is driven by the same loop as a local one, but what
//! the loop cannot repeat identically goes through the engine: each model
//! call of the run's own roles (planner, replanner, synthesizer, the check
//! of the work) and each read of the world is [`RunEngine::journaled`], and
//! each pass over the plan's ready steps is handed to [`RunEngine::run_pass`],
//! which may run them on other machines. An engine that keeps what it
//! journaled can replay the run after a crash: the loop runs again, gets the
//! same answers in the same order, and so makes the same decisions without
//! calling a model or running a step a second time.

use std::collections::HashMap;

use async_trait::async_trait;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::plan::Plan;
use crate::schedule::DagOutcome;
use crate::strategy::Strategy;

/// The engine could not do what it was asked (the run was cancelled on it,
/// or it lost its connection): the run stops, as it does when cancelled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EngineError(pub String);

/// One pass over a plan: run the steps of `plan` not in `done` whose
/// dependencies are done, as [`crate::schedule::run_dag`] does: in plan order
/// among the ready ones, at most `parallelism` at once and `max_steps` in all;
/// once one fails, no new step starts.
#[derive(Debug, Clone)]
pub struct Pass {
    pub plan: Plan,
    pub version: u32,
    pub done: HashMap<String, Value>,
    pub parallelism: usize,
    pub max_steps: usize,
}

/// Where a run's work is done and kept.
#[async_trait]
pub trait RunEngine: Send + Sync {
    /// The outcome of `work`, kept by the engine under `name`: the first
    /// time, `work` runs; when the run is replayed, the kept value comes
    /// back and `work` does not run. Calls come one at a time, in an order
    /// that depends only on the values returned before.
    async fn journaled(&self, name: &str, work: BoxFuture<'static, Value>) -> Result<Value, EngineError>;

    /// Run one pass over the plan's ready steps ([`Pass`]). The outcome's
    /// results are in the order they finished, as the engine will replay them.
    async fn run_pass(&self, pass: Pass) -> Result<DagOutcome, EngineError>;

    /// Steering messages people sent the run since it last asked, oldest
    /// first (the engine keeps them, so a replay gets the same ones at the
    /// same point). The default: none.
    async fn steering(&self) -> Result<Vec<String>, EngineError> {
        Ok(Vec::new())
    }
}

/// Why a run with these settings cannot go on an engine, if it cannot: the
/// engine runs passes of a plan, so a strategy without one (react) or one
/// that runs steps while the plan streams in (compiler) stays local.
pub fn unsupported(strategy: Strategy) -> Option<String> {
    let profile = strategy.profile();
    (!profile.makes_plans || profile.streams_plan).then(|| {
        format!(
            "the {} strategy runs in one process; on a durable engine use plan-execute, replan-each-step or rewoo",
            strategy.as_str()
        )
    })
}
