//! DAG execution: run every step whose dependencies are done, up to a
//! parallelism limit, in plan order among the ready ones.
//!
//! The scheduler knows nothing of tools or models: it is handed a function that
//! runs one step and returns its [`StepResult`]. A step's result is recorded
//! before any dependent is dispatched. When a step fails, no new step starts; the
//! ones already running finish, and the caller decides (replan or stop).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::future::Future;

use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;

use crate::cancel::CancelToken;
use crate::plan::{Plan, Step};
use crate::result::StepResult;

/// The outputs of the steps a step depends on, in `depends_on` order.
pub type DependencyOutputs = Vec<(String, Value)>;

/// What one pass over a plan produced.
#[derive(Debug, Default)]
pub struct DagOutcome {
    /// Results of the steps that ran, in the order they finished.
    pub results: Vec<StepResult>,
    /// Ids of the steps that failed, in the order they failed.
    pub failed: Vec<String>,
    /// Ids of the steps that were running when the run was cancelled (their work is dropped).
    pub interrupted: Vec<String>,
}

/// Run the steps of `plan` that are not in `done` (outputs of steps completed
/// earlier, e.g. before a replan). `run_step` runs one step given its
/// dependencies' outputs. On `cancel`, running steps are dropped and reported as interrupted.
pub async fn run_dag<F, Fut>(
    plan: &Plan,
    done: &HashMap<String, Value>,
    parallelism: usize,
    cancel: &CancelToken,
    mut run_step: F,
) -> DagOutcome
where
    F: FnMut(Step, DependencyOutputs) -> Fut,
    Fut: Future<Output = StepResult>,
{
    let parallelism = parallelism.max(1);
    let index: HashMap<&str, usize> = plan.steps.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    let mut outputs: HashMap<&str, Value> = done.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let mut waiting_on = vec![0usize; plan.steps.len()];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); plan.steps.len()];
    let mut ready = BinaryHeap::new();
    for (i, step) in plan.steps.iter().enumerate() {
        if done.contains_key(&step.id) {
            continue;
        }
        for dep in &step.depends_on {
            if !done.contains_key(dep) {
                if let Some(&d) = index.get(dep.as_str()) {
                    waiting_on[i] += 1;
                    dependents[d].push(i);
                }
            }
        }
        if waiting_on[i] == 0 {
            ready.push(Reverse(i));
        }
    }

    let mut outcome = DagOutcome::default();
    let mut running = FuturesUnordered::new();
    let mut in_flight: Vec<usize> = Vec::new();
    loop {
        while outcome.failed.is_empty() && running.len() < parallelism && !cancel.is_cancelled() {
            let Some(Reverse(i)) = ready.pop() else { break };
            let step = &plan.steps[i];
            let deps: DependencyOutputs = step
                .depends_on
                .iter()
                .filter_map(|d| outputs.get(d.as_str()).map(|v| (d.clone(), v.clone())))
                .collect();
            let fut = run_step(step.clone(), deps);
            in_flight.push(i);
            running.push(async move { (i, fut.await) });
        }
        let next = match cancel.guard(running.next()).await {
            Some(next) => next,
            None => {
                outcome.interrupted = in_flight.iter().map(|&i| plan.steps[i].id.clone()).collect();
                break;
            }
        };
        let Some((i, result)) = next else { break };
        in_flight.retain(|&r| r != i);
        if result.succeeded() {
            outputs.insert(plan.steps[i].id.as_str(), result.output.clone().unwrap_or(Value::Null));
            for &d in &dependents[i] {
                waiting_on[d] -= 1;
                if waiting_on[d] == 0 {
                    ready.push(Reverse(d));
                }
            }
        } else {
            outcome.failed.push(result.id.clone());
        }
        outcome.results.push(result);
    }
    outcome
}
